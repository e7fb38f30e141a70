/* merge.h - the engine: merge a trace window into a CPU trace. */
#ifndef CM_MERGE_H
#define CM_MERGE_H

#include "options.h"

/* Run the merge.  Returns an exit status (exitcode.h); errors are reported. */
int cm_merge_run(const struct cm_options *opt);

#endif
