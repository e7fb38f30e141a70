/* outq.h - the files of --split written on threads of their own: each
 * file's bytes in order, different files at once. */
#ifndef CM_OUTQ_H
#define CM_OUTQ_H

#include <stddef.h>
#include "base/buf.h"
#include "io/output.h"

typedef struct cm_outq cm_outq;

/* The writer threads for N outputs by the -j JOBS of a run: 0 for none
 * (then the caller writes as it did), else how many: JOBS / 4, at most 8
 * and N (CUPTIMERGE_SPLIT_WRITERS, a benchmarking aid, says otherwise). */
int cm_outq_threads(int jobs, size_t n);
/* A queue over OUTS[0..N) with THREADS writer threads (at least 1), or
 * NULL when none could be made (the caller then writes itself).  Output
 * K goes to thread K * T / N of its T threads (cm_outq_threads_of): a
 * stripe of outputs a thread. */
cm_outq *cm_outq_new(cm_output *const *outs, size_t n, int threads);
int cm_outq_threads_of(const cm_outq *q);
/* Output K's next LEN bytes at P: copied (P may go at once), written in
 * order with K's others.  May wait for a writer.  0, or -1 after a report
 * (a writer's: the run has failed). */
int cm_outq_write(cm_outq *q, size_t k, const void *p, size_t len);
/* Output K's next bytes: B's from OFF on (copied, as cm_outq_write).
 * 0, or -1 as cm_outq_write. */
int cm_outq_give(cm_outq *q, size_t k, cm_buf *b, size_t off);
/* Every byte given so far written (after it, the caller may write to the
 * outputs itself until it queues more).  0, or -1 after a report. */
int cm_outq_sync(cm_outq *q);
/* Stop the threads and free Q (NULL: nothing).  With OK, what is queued
 * is written first; without, dropped.  0, or -1 after a report (a
 * writer's error not reported yet). */
int cm_outq_free(cm_outq *q, int ok);

#endif
