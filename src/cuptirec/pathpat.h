/* pathpat.h - output path patterns: %p (pid), %n (window number), %h (host),
 * %r (rank), %% (a percent), and the host and rank they stand for. */
#ifndef CREC_PATHPAT_H
#define CREC_PATHPAT_H

#include <stddef.h>

/* What a pattern's sequences stand for: the facts of one process. */
typedef struct crec_path_vars {
	long pid;         /* %p */
	unsigned seq;     /* %n: the window's number in this process, 0 for the first */
	const char *host; /* %h: crec_path_host's name; NULL gives "nohost" */
	long rank;        /* %r: crec_path_rank's rank; -1 (none) gives "norank" */
} crec_path_vars;

/* Expand PATTERN into OUT[0..outsz) with the facts in V: %p, %n, %h, %r as
 * above, %% a single '%'.  When V->seq > 0 and the pattern has no %n, ".SEQ"
 * is inserted before a trailing ".json" / ".json.gz" (or appended), so a
 * second window never overwrites the first.  Returns 0, or -1 when the result
 * does not fit or the pattern holds another %-sequence (checked by
 * crec_path_check too). */
int crec_path_expand(const char *pattern, const crec_path_vars *v, char *out, size_t outsz);

/* Returns NULL when PATTERN is acceptable, else a static message saying why. */
const char *crec_path_check(const char *pattern);

/* The host name for %h and for the window's "source": gethostname(2)'s, with
 * every '/' replaced by '_' so that it is one path component.  Writes it
 * NUL-terminated into OUT and returns 0, or -1 (OUT unchanged) when there is
 * no name or it does not fit. */
int crec_path_host(char *out, size_t outsz);

/* The rank of this process in its job, from the environment: the first of
 * RANK (torchrun, torch.distributed), SLURM_PROCID (srun) and
 * OMPI_COMM_WORLD_RANK (Open MPI's mpirun) that holds a decimal integer from 0
 * to 999999999; a variable holding anything else is passed over.  Returns the
 * rank and sets *FROM (when FROM is not NULL) to the variable's name, or
 * returns -1 and sets *FROM to NULL when none has one.  Uses getenv: call it
 * before the program's threads may change the environment. */
long crec_path_rank(const char **from);

/* Does PATH end in ".gz"?  Such a window is written with gzip whether or not
 * gzip was asked for (issue 28), the rule cuptimerge -o follows: a file's
 * name must not lie about its contents.  Case-sensitive, as there. */
int crec_path_is_gz(const char *path);

#endif
