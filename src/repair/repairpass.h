/* repairpass.h - thread repair of one trace, without a window: one pass. */
#ifndef CM_REPAIRPASS_H
#define CM_REPAIRPASS_H

#include "options.h"
#include "io/output.h"
#include "repair/threadmap.h"

/* Copy the trace OPT->cpu_path to OUT with the events of opaque thread rows
 * moved (repair.h).  One streaming pass: works on a pipe, memory bounded by
 * the largest event.  Closes OUT (which the caller opened before reading
 * anything, so that a bad -o is found first).  Returns an exit status. */
int cm_repairpass_run(const struct cm_options *opt, const cm_threadmap *map, cm_output *out);

#endif
