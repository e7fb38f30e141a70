/* docmember.h - a top-level member's value as the splitter reads it
 * (docmember.c).  Internal to src/json: the stages of docsplit_int.h. */
#ifndef CM_DOCMEMBER_H
#define CM_DOCMEMBER_H

#include "json/docsplit_int.h"

#include <stddef.h>
#include <stdint.h>

/* Append S[0..N) to the member value being read: in memory, or past the
 * spill size in the temporary file.  0, or -1 after a report. */
int docmember_put(struct split *sp, const char *s, size_t n);

/* The member value is complete: hand it to the sink, from memory or as a
 * mapping of its file.  0, 1 when the sink said stop, or CM_DOCSPLIT_IOERR
 * (reported). */
int docmember_done(struct split *sp, int64_t end_offset);

#endif
