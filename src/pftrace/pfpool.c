/* pfpool.c - the Perfetto transcoder's pool (pfstream.c hands it the
 * text): the workers' work on each block (a chunk of text walked and
 * encoded, pfchunk.c and pfbatch.c; a batch inserted, its lanes placed),
 * the pool's in-order sink handing each batch to the sequential part
 * (on its own thread from 4 workers: base/handoff.c), the sequential
 * part's step (pfseg.c's cm_pfbatch_apply), and the protobuf it makes
 * passed on to the sink by the passer thread (pfpass.c).  Apart from
 * pfstream.c because that file is the writer's side (the text taken,
 * cut into chunks, the end), this one what runs behind it on other
 * threads. */
#include "config.h"
#include "pftrace/pftrace.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfpass.h"
#include "pftrace/pfstream.h"
#include "base/diag.h"
#include "base/opool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Pass the protobuf bytes on once this many are made. */
#define PFT_FLUSH (256u * 1024u)
/* The threads that write the batches' packets for the passer (pfpass.c):
 * none, the passer writes them itself.  Two from -j 8 on gained nothing on
 * 16 CPUs and cost 0.01-0.04 s of the 1 GB pair's output, plain and gzip,
 * in four calls (BENCHMARKS.md "knobs23").  CUPTIMERGE_PFT_WRITERS (0 to
 * 8), a benchmarking aid, sets them; the bytes do not depend on it. */
#define PFT_WRITERS 0

/* The testing aid CUPTIMERGE_PFT_NICE=N (1-19): the transcoder's workers
 * run at that nice value (this thread's alone, as ocrew.c's crew_nice), so
 * that its sequential part, the passer and the merge's threads win their
 * CPUs back from them (bench/dev-pf12.sh: on 16 CPUs the sequential part
 * ran 0.31 s of CPU in 0.49 s). */
static void worker_nice(struct pfworker *w)
{
	w->niced = 1;
	if (w->t->threads > 3) /* (to 3, the writer's thread runs blocks too) */
		cm_thread_nice_env("CUPTIMERGE_PFT_NICE");
}

/* The passer (made with the first call, from -j 2), or NULL. */
static cm_pfpass *passer(cm_pft *t)
{
	if (!t->pass && !t->no_pass && t->threads >= 2) {
		if (!(t->pass = cm_pfpass_new(t->sink, t->ctx, PFT_WRITERS)))
			t->no_pass = 1;
		else if (t->verbose)
			cm_pfpass_verbose(t->pass, t->probe);
	}
	return t->pass;
}

/* (pfstream.h) */
int cm_pft_drain(cm_pft *t, int all)
{
	int rc;
	if (!t->out.len || (!all && t->out.len < PFT_FLUSH))
		return 0;
	if (passer(t))
		return cm_pfpass_put(t->pass, &t->out, t->sph);
	/* this thread's sink calls, counted as the passer's */
	rc = cm_pfpass_call(t->sink, t->ctx, t->probe, t->out.p, t->out.len, t->verbose ? &t->pph[t->sph] : NULL,
			    &t->ev->passed);
	t->out.len = 0;
	return rc;
}

/* (pfstream.h) */
int cm_pft_emit_batch(void *ctx, struct cm_pfwrite *w)
{
	cm_pft *t = ctx;
	if (!passer(t) || (t->ev->share && cm_pfpass_full(t->pass)))
		return 1;
	return cm_pfpass_put_batch(t->pass, &t->out, w, t->sph) < 0 ? -1 : 0;
}

/* ---- the pool ---- */

/* The pool's work: a batch of elements (-j 1, or inserted), or a chunk
 * of text (from -j 2), encoded into records; or a batch inserted as
 * records, copied and its slices handed to the lanes. */
static int batch_work1(struct pfworker *w, const cm_buf *in, cm_buf *out)
{
	uint64_t tag;
	if (!w->niced)
		worker_nice(w);
	memcpy(&tag, in->p, sizeof tag);
	if (!(tag & BLK_RECS) && w->t->par)
		return cm_pft_chunk_work(w, in, out);
	if (__atomic_load_n(w->ev->dropping, __ATOMIC_ACQUIRE))
		return -2; /* no message: the run's failure was reported */
	if (tag & BLK_RECS) {
		/* (the records' offset stays a multiple of 8: their slices' are) */
		if (tag & BLK_REF) { /* copied from the writer's buffer, here rather than on its thread */
			struct pft_ref r;
			memcpy(&r, in->p + sizeof tag, sizeof r);
			cm_buf_put(out, r.piece->b.p + r.off, (size_t)r.n);
			__atomic_sub_fetch(&r.piece->refs, 1, __ATOMIC_RELEASE);
		} else {
			cm_buf_put(out, in->p + sizeof tag, in->len - sizeof tag);
		}
		cm_pfbatch_put_lanes(w->t->lq, tag & ~(BLK_RECS | BLK_REF), out);
		return 0;
	}
	return cm_pfbatch_encode(w->ev, in, out);
}

void cm_pft_wake(cm_pft *t)
{
	pthread_mutex_lock(&t->gmu);
	pthread_cond_broadcast(&t->gcv);
	pthread_mutex_unlock(&t->gmu);
}

/* No block after this one will reach the sequential part: a thread that
 * waits for them (pfinsert.c's direct path) stops waiting. */
static void pool_stopped(cm_pft *t)
{
	__atomic_store_n(&t->ins_stop, 1, __ATOMIC_SEQ_CST);
	cm_pft_wake(t);
}

/* batch_work1, its failure said to a thread waiting for the blocks. */
static int batch_work(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct pfworker *w = wctx;
	int rc = batch_work1(w, in, out);
	if (rc < 0)
		pool_stopped(w->t);
	return rc;
}

/* The sequential part, batch by batch in order: the records of OUT placed
 * as packets, passed on (on the pool's sink, or on its own thread: the
 * handoff's consumer); AUX, an int, the batch's phase (with -v). */
static int apply(void *sctx, cm_buf *out, void *aux)
{
	cm_pft *t = sctx;
	cm_pfev *e = t->ev;
	double c0 = cm_thread_cpu_s(), t0 = 0, io = 0, lw = 0, wh = 0;
	unsigned long whn = 0;
	struct pft_phase *ph = NULL;
	int rc;
	if (__atomic_load_n(&t->dropping, __ATOMIC_ACQUIRE))
		return -1; /* nothing reported: the run's failure was */
	if (t->verbose && aux) { /* (a clock read or two a batch, with -v only) */
		memcpy(&t->sph, aux, sizeof t->sph);
		ph = &t->ph[t->sph];
		t0 = cm_now_s();
		if (!ph->s_from)
			ph->s_from = t0;
		if (t->s_done && t->seq)
			pft_waits_add(&ph->s_wait, t0 - t->s_done);
		io = e->in_order;
		lw = e->lane_wait;
		wh = e->wrote_here_s;
		whn = e->wrote_here;
	}
	rc = cm_pfbatch_apply(t->ev, out) < 0 ? -1 : cm_pft_drain(t, 0);
	c0 = cm_thread_cpu_s() - c0;
	t->s_cpu += c0;
	if (ph) {
		t->s_done = ph->s_to = cm_now_s();
		ph->s_busy += t->s_done - t0;
		ph->s_cpu += c0;
		ph->in_order += e->in_order - io;
		ph->lane_wait += e->lane_wait - lw;
		ph->wrote_here_s += e->wrote_here_s - wh;
		ph->wrote_here += e->wrote_here - whn;
	}
	if (rc < 0)
		cm_pft_hand_abort(t);
	return rc;
}

/* (pfstream.h) The batch to the sequential part's thread, or worked
 * through here: by the pool's sink, in order, and by pfinsert.c's direct
 * path.
 *
 * The ordered pool (base/opool.c) hands each result to its sink on the
 * worker that finished the oldest block, one at a time.  On 16 CPUs
 * (BENCHMARKS.md, 2026-12-05) the .pftrace's sequential part ran 0.31-0.41
 * s of CPU in 0.49-0.67 s there, the pool's ring full behind it while the
 * workers idled: on a worker it shares the pool's lock with sixteen
 * others, moves from core to core with whichever worker drains (its
 * tables cold in each core's cache), and competes for the CPUs with the
 * render's threads.  On a thread of its own (an ordered handoff,
 * base/handoff.c) it stays on one thread: the pool's sink only swaps the
 * batch's buffer into a short queue (no byte copied) and goes back to
 * work.  The order is the pool's, so the bytes are the same. */
int cm_pft_hand(cm_pft *t, cm_buf *b, int ph)
{
	int rc;
	if (!t->seq) {
		rc = apply(t, b, t->verbose ? &ph : NULL);
	} else if ((rc = cm_handoff_put(t->seq, b, t->verbose ? &ph : NULL)) < 0) {
		__atomic_store_n(&t->dropping, 1, __ATOMIC_RELEASE);
		cm_pft_hand_abort(t);
	}
	return rc;
}

/* The pool's sink: its batch handed on (cm_pft_hand), and counted, for
 * the direct path's wait for the text's batches (pfinsert.c). */
static int batch_sink(void *sctx, cm_buf *out)
{
	cm_pft *t = sctx;
	if (cm_pft_hand(t, out, t->verbose ? cm_opool_sink_class(t->pool) : 0) < 0) {
		pool_stopped(t);
		return -1;
	}
	/* (one more handed: a thread may wait for it, pfinsert.c) */
	__atomic_add_fetch(&t->handed, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&t->drain_waiting, __ATOMIC_SEQ_CST))
		cm_pft_wake(t);
	return 0;
}

/* Whether the sequential part gets a thread of its own: from 4 workers
 * (below that the writer's thread helps the pool, and a core's share is
 * worth more than the move); CUPTIMERGE_PFT_SEQ_THREAD=0 or 1, a testing
 * aid, says (the bytes do not depend on it). */
static int seq_thread_wanted(const cm_pft *t)
{
	const char *env = getenv("CUPTIMERGE_PFT_SEQ_THREAD");
	if (env && *env)
		return strcmp(env, "0") != 0 && t->threads >= 2;
	return t->threads >= 4;
}

/* (pfstream.h) */
void cm_pft_start(cm_pft *t)
{
	int i;
	if (!t->pool) {
		/* the lanes: room for every batch the pool holds (its slots:
		 * the workers and 4 more, or up to twice the workers and 8)
		 * and those handed to the sequential part's thread; and for
		 * the pieces of the writer's threads (pfinsert.c's direct
		 * path: its pool's slots, each piece's lanes put before it is
		 * handed on), the text's before them not yet placed */
		size_t w = (size_t)(t->jobs > t->threads ? t->jobs : t->threads);
		t->lq = cm_pflaneq_new(2 * (size_t)t->threads + 8 + 2 * w + 8 + 2 * t->seq_queue + 2);
		cm_pflaneq_set_stop(t->lq, &t->dropping);
		if (t->ties) { /* (the merge's calls' filter: cm_pft_ties) */
			cm_pflaneq_set_ties(t->lq, t->ties);
			cm_pflaneq_ties_until(t->lq, t->ties_until);
			cm_pflaneq_ties_spans(t->lq, t->ties_spans);
		}
		t->ev->lq = t->lq;
		t->workers = cm_xcalloc((size_t)t->threads, sizeof *t->workers);
		t->wctx = cm_xcalloc((size_t)t->threads, sizeof *t->wctx);
		for (i = 0; i < t->threads; i++) {
			cm_pft_worker_init(&t->workers[i], t);
			t->wctx[i] = &t->workers[i];
		}
		if (t->par) { /* the first chunk's walk: the document's start */
			pthread_mutex_init(&t->hmu, NULL);
			for (i = 0; i < PFT_HAND_CVS; i++)
				pthread_cond_init(&t->hcv[i], NULL);
			t->hand_on = 1;
			cm_pfcut_init(&t->hand, t->label);
			t->hand_seq1 = 1;
		}
		/* the writer's thread runs blocks too only on few cores */
		if (seq_thread_wanted(t)) /* (each slot with its batch's phase, for -v) */
			t->seq = cm_handoff_new(t->seq_queue, apply, t, sizeof(int), NULL);
		t->pool = cm_opool_new(t->threads, t->threads <= 3, batch_work, t->wctx, batch_sink, t);
		cm_opool_set_stats(t->pool, &t->pst);
		cm_opool_set_class_stats(t->pool, t->pcst);
		cm_opool_set_class(t->pool, t->wph);
	}
}

/* (pfstream.h) */
int cm_pft_put_block(cm_pft *t, cm_buf *in)
{
	int rc;
	double t0;
	cm_pft_start(t);
	t0 = cm_now_s();
	rc = cm_opool_put(t->pool, in);
	if (rc >= 0)
		t->put_blocks++;
	cm_pft_note_writer(t, t->wph, 0, cm_now_s() - t0); /* (its time: the caller's) */
	return rc;
}

/* (pfstream.h) */
void cm_pft_phase(cm_pft *t, int ph)
{
	double now = cm_now_s();
	t->ph[t->wph].w_to = now;
	t->wph = ph;
	if (!t->ph[ph].w_from)
		t->ph[ph].w_from = now;
	if (t->pool)
		cm_opool_set_class(t->pool, ph);
}
