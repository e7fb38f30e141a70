/* opindex.h - the CPU trace's operators by thread and time: which one a CUDA
 * API call was made in.
 *
 * Kineto gives a CUDA call, and the GPU work of its correlation id, the
 * "External id" of the operator on top of the calling thread's stack: it
 * pushes that id to CUPTI (an external correlation of kind CUSTOM0) when it
 * traces CUDA itself.  Under a separate collector it traces the CPU only and
 * pushes nothing, so a window has no such records; the same operator is
 * found in the CPU trace instead: the innermost "cpu_op" event of the
 * call's process and thread whose span encloses the call's.  (A
 * user_annotation pushes a kind CUSTOM1 id, which Kineto does not write:
 * those spans are not operators here.) */
#ifndef CM_OPINDEX_H
#define CM_OPINDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct cm_opindex cm_opindex;

/* A new index that keeps about BUDGET bytes of operators in memory. */
cm_opindex *cm_opindex_new(size_t budget);
void cm_opindex_free(cm_opindex *x);

/* Add the operator EXT of thread (PID, TID) spanning [TS, END] (trace
 * microseconds), in the trace's order.  0, or -1 after reporting (a
 * temporary file). */
int cm_opindex_add(cm_opindex *x, int64_t pid, int64_t tid, double ts, double end, int64_t ext);

/* All operators added: sort them (beyond the budget, in sorted runs in a
 * temporary file, merged into another, which is mapped) and link each to
 * the innermost one that encloses it; the lookups keep about the budget of
 * it resident.  0, or -1 after reporting. */
int cm_opindex_build(cm_opindex *x);

/* The External id of the innermost operator of (PID, TID) whose span
 * encloses [TS, END]: 1 and *EXT, or 0 when none does. */
int cm_opindex_find(cm_opindex *x, int64_t pid, int64_t tid, double ts, double end, int64_t *ext);

/* Operators indexed. */
uint64_t cm_opindex_count(const cm_opindex *x);

#endif
