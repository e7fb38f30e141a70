/* cpuindex.h - the External-id index applied: the CPU scan's candidates
 * (the cpu_op and user_annotation X events that carry an External id) into
 * the table of the ids the window links, once the window has named them.
 *
 * The scan runs beside the window's read and cannot know yet which ids
 * matter, so it writes every candidate to a temporary file, a record each
 * (below); cm_cpuindex_apply reads them back. */
#ifndef CM_CPUINDEX_H
#define CM_CPUINDEX_H

#include <stdint.h>
#include "base/idmap.h"
#include "cpu/cpuscan.h"
#include "io/input.h"

/* A candidate's record, in event order: its id, pid, tid, index in
 * traceEvents, ts and ts + dur (the span an operator gives its CUDA calls,
 * opindex.h), 8 bytes each in the machine's order, and a byte of flags. */
#define CM_CAND_REC 49
#define CM_CAND_BAD 1    /* pid or tid beyond 64 bits */
#define CM_CAND_CPU_OP 2 /* a "cpu_op" (else a "user_annotation") */

/* Fill EXT from the candidates a scan without EXT kept, as that scan would
 * have: each id the table has gets the thread of its last candidate, in
 * PLAN's list, numbered in the order of first use; PLAN->indexed counts
 * the ids found.  A candidate of an id in the table whose pid or tid does
 * not fit in 64 bits is an error (the first such, in event order, is
 * reported; IN names the trace).  With OP, also hand it every "cpu_op"
 * candidate whose pid and tid fit, in trace order (OP returns 0, or -1
 * after a report), and with ANN (only with OP) every "user_annotation"
 * one, with its name (PLAN->ann_names: NAME NULL when it is not a string),
 * in the same order.  Up to JOBS threads (one with OP).  0, or -1 after a
 * report. */
typedef int (*cm_cpuindex_op_fn)(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext);
typedef int (*cm_cpuindex_ann_fn)(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext,
				  const char *name, size_t len);
int cm_cpuindex_apply(cm_input *in, cm_cpuplan *plan, cm_idmap *ext, cm_cpuindex_op_fn op, cm_cpuindex_ann_fn ann,
		      void *op_ctx, int jobs);

#endif
