/* repairpass.h - thread repair of one trace, without a window: one pass. */
#ifndef CM_REPAIRPASS_H
#define CM_REPAIRPASS_H

#include <stddef.h>

#include "io/output.h"
#include "repair/threadmap.h"

/* Copy the trace CPU_PATH ("-" for stdin, read in BUFSIZE chunks) to OUT
 * with the events of opaque thread rows moved (repair.h), and its traceName
 * set to TRACE_NAME unless that is NULL or empty.  One streaming pass: works
 * on a pipe, memory bounded by the largest event.  Closes OUT (which the
 * caller opened before reading anything, so that a bad -o is found first).
 * Returns an exit status.  It takes the three settings, not struct
 * cm_options, so that repair/ stays below the command line (options.h). */
int cm_repairpass_run(const char *cpu_path, size_t bufsize, const char *trace_name,
		      const cm_threadmap *map, cm_output *out);

#endif
