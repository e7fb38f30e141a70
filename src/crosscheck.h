/* crosscheck.h - do the window and the CPU trace belong together?  Checks on
 * what the passes over both inputs learn anyway (see merge.c). */
#ifndef CM_CROSSCHECK_H
#define CM_CROSSCHECK_H

#include "cpu/cpuscan.h"
#include "gpu/gpuconv.h"
#include "options.h"

/* After phase 1 (W and C1): the shape of each document, and GPU
 * rows already in the CPU trace.  WIN_TRACE_EVENTS: the window has a
 * top-level "traceEvents".  CPU and WIN name the inputs in messages.
 * Returns 0 (warnings may have been printed), or CM_EXIT_DATA after a
 * refusal, which --force (OPT->force) turns into a warning. */
int cm_crosscheck_documents(const struct cm_options *opt, const char *cpu, const char *win, const cm_cpuplan *plan,
			    int win_trace_events);

/* After the plan of phase 2 (times in trace microseconds, on the base the merge
 * uses): the window's processes against the trace's pids, and the two
 * time spans.  Returns 0 or CM_EXIT_DATA, as above. */
int cm_crosscheck_match(const struct cm_options *opt, const char *cpu, const char *win, const cm_cpuplan *plan,
			const cm_gpu *g);

#endif
