/* pathpat.h - output path patterns: %p (pid), %n (window number), %% (a percent). */
#ifndef CREC_PATHPAT_H
#define CREC_PATHPAT_H

#include <stddef.h>

/* Expand PATTERN into OUT[0..outsz).  %p becomes PID, %n becomes SEQ (the
 * window's number in this process, 0 for the first), %% a single '%'.  When
 * SEQ > 0 and the pattern has no %n, ".SEQ" is inserted before a trailing
 * ".json" / ".json.gz" (or appended), so a second window never overwrites the
 * first.  Returns 0, or -1 when the result does not fit or the pattern holds
 * another %-sequence (checked by crec_path_check too). */
int crec_path_expand(const char *pattern, long pid, unsigned seq, char *out, size_t outsz);

/* Returns NULL when PATTERN is acceptable, else a static message saying why. */
const char *crec_path_check(const char *pattern);

#endif
