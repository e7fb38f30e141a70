/* batchargs.h - the merge options given after cuptimerge-batch's "--",
 * read as cuptimerge's getopt reads them, and checked against the batch's
 * own options and the plan's outputs before any rank runs (batchargs.c). */
#ifndef CM_BATCHARGS_H
#define CM_BATCHARGS_H

#include "batch/batchplan.h"

/* A usage error (reported; CM_EXIT_USAGE) when the N merge options EXTRA
 * hold what every merge would refuse or what would merge nothing, said
 * once instead of as each rank's failure: an option the batch gives each
 * merge itself (-o, -w, -t, an operand), --split, --help or --version, or a
 * cut that contradicts another (the batch's --clip, CLIP, or its --steps or
 * --range, CUT, as typed; or NULL) or one in EXTRA; or, without a manifest
 * (MANIFEST 0), --format=perfetto, which the outputs' names
 * (KEY.merged.json.gz) contradict.  0 when none. */
int cm_bargs_check(char *const *extra, int n, const char *clip, const char *cut, int manifest);

/* A usage error (reported; CM_EXIT_USAGE) when --format or -z among the N
 * merge options EXTRA contradicts the name of a rank's output in plan P,
 * which gives the output its format.  0 when none does. */
int cm_bargs_outputs(const cm_bplan *p, char *const *extra, int n);

/* 1 when the option of the long name NAME ("clip", "force"), as
 * cuptimerge takes it (abbreviated or not), is among the N merge options
 * EXTRA, else 0. */
int cm_bargs_has(char *const *extra, int n, const char *name);

/* Take the option of the long name NAME, one that has no value ("clip"),
 * out of the N merge options EXTRA, where cuptimerge would take it; the
 * number of words left returned. */
int cm_bargs_drop(char **extra, int n, const char *name);

#endif
