/* pfpass.h - the Perfetto transcoder's passer thread (pfpass.c): the
 * protobuf made, buffer by buffer, passed on to the output's sink in
 * order, off the thread that makes it; and the packets of a batch
 * (pfseg.c's step 3) written there first. */
#ifndef CM_PFPASS_H
#define CM_PFPASS_H

#include "json/jwrite.h"
#include "pftrace/pftrace.h"

struct cm_pfwrite;

typedef struct cm_pfpass cm_pfpass;

/* -v: the phases a passer's buffers are counted in (pfstream.c's: the
 * text before the inserted batches, those, the text after), and what it
 * did in each: on its thread, seconds writing the batches' packets
 * (WROTE) and passing the bytes on (PASSED: the sink's calls; PASSED_CPU
 * of its CPU), of those the sink's own waits for its workers and its
 * writing on (SINK_WAIT, SINK_EMIT: the probe's deltas), and when it last
 * finished a buffer of the phase (LAST, cm_now_s; 0: none), its context
 * switches in the sink's calls (VSW its waits, ISW its CPU taken); on the
 * producer's, PUT_WAIT, its puts' waits for room. */
#define CM_PFPASS_PHASES 4
struct cm_pfpass_phase {
	double wrote, passed, passed_cpu, sink_wait, sink_emit, last, put_wait;
	unsigned long bufs;
	unsigned long vsw, isw; /* context switches in the sink's calls: waits, CPU lost */
};

/* A passer calling SINK(CTX, bytes, length) for each buffer, on a thread
 * of its own, the batches' packets written by WRITERS threads more (0:
 * on the passer's; CUPTIMERGE_PFT_WRITERS, 0 to 8, overrides it); NULL
 * when no thread can be made.  SINK returns 0 or -1, and reports its own
 * errors (held on the passer's thread, printed by cm_pfpass_stop); the
 * buffers after a failure are dropped unseen. */
cm_pfpass *cm_pfpass_new(int (*sink)(void *ctx, const void *p, size_t n), void *ctx, int writers);

/* SINK(CTX, P, N), on the calling thread (the passer's, or the
 * transcoder's own without one): its result, its seconds added to
 * *PASSED and, PH not NULL (-v), its figures to PH (PROBE, NULL: none,
 * asked of CTX before and after). */
int cm_pfpass_call(int (*sink)(void *ctx, const void *p, size_t n), void *ctx, cm_pft_probe probe, const void *p,
		   size_t n, struct cm_pfpass_phase *ph, double *passed);

/* -v: count per phase (cm_pfpass_stop's PH), asking PROBE (NULL: none)
 * of the sink's CTX after each call of the sink.  Before the first put. */
void cm_pfpass_verbose(cm_pfpass *p, cm_pft_probe probe);

/* Queue B's bytes (B gets back an empty buffer, one passed already), of
 * phase PH (0 to CM_PFPASS_PHASES - 1); may wait for room (4 buffers at
 * most).  0, or -1 (B not taken) once the sink has failed. */
int cm_pfpass_put(cm_pfpass *p, cm_buf *b, int ph);

/* 1 when a put would wait now (the queue is full). */
int cm_pfpass_full(cm_pfpass *p);

/* Queue B's bytes, then the packets of the batch W (cm_pfseg_write, on
 * the passer's thread), in one buffer: B and W's buffers are swapped for
 * ones passed already (empty), as cm_pfpass_put's.  0 or -1 as it (-1:
 * neither taken). */
int cm_pfpass_put_batch(cm_pfpass *p, cm_buf *b, struct cm_pfwrite *w, int ph);

/* Pass on what is queued, stop the thread and free P (NULL: nothing);
 * its error settled (printed when it is the run's first).  Adds to *PASSED
 * the seconds the sink took, to *WROTE those the batches' packets took to
 * write and, WAITED not NULL, to *WAITED those put waited; PH not NULL
 * (an array of CM_PFPASS_PHASES), with cm_pfpass_verbose, the phases'
 * figures to PH's (LAST: the later kept).  0, or -1 when the sink
 * failed. */
int cm_pfpass_stop(cm_pfpass *p, double *passed, double *wrote, double *waited, struct cm_pfpass_phase *ph);

#endif
