/* pfstream.c - the Perfetto transcoder's writer side: the JSON
 * document's text, in pieces of any size, taken from the writer's thread
 * and handed to the pool; the elements' batches encoded by the workers
 * (pfbatch.c), their records placed in order in the pool's sink (pfseg.c)
 * and passed on by a thread of their own (pfpass.c); the end (its -v
 * lines: pfreport.c).
 *
 * A batch is the elements that end in one span of PFT_BATCH bytes of the
 * text (the spans counted from the text's start): so the batches, and the
 * bytes written, depend on the text alone, never on how it arrived or on
 * the number of threads.  At -j 1 the walk (pfcut.c) runs on the writer's
 * thread, which cuts the text into its elements and hands each batch to
 * the pool (seq_emit).  From -j 2 the writer's thread only copies the
 * text into chunks of one span each and queues them: the worker of a
 * chunk walks it itself (pfchunk.c, which says how it knows where the
 * chunk before ended).  Either way an element longer than the records'
 * 32-bit lengths is refused where the walk finds it (cm_pft_elem_refuse).
 * A writer may also hand batches over between two parts of the text
 * (pfinsert.c: the merge's window events), numbered on from the text's.
 * Memory: a few chunks and batches per thread, the largest element, the
 * interning tables (bounded, pfevent.c) and the tracks. */
#include "config.h"
#include "pftrace/pftrace.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfpass.h"
#include "pftrace/pfstream.h"
#include "base/diag.h"
#include "base/opool.h"
#include "json/jscan.h"
#include "base/exitcode.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Pass the protobuf bytes on once this many are made. */
#define PFT_FLUSH (256u * 1024u)
/* A batch for the workers (pfbatch.c): the elements that end in a span of
 * this much text.  Larger batches define their interned strings again less
 * often (BENCHMARKS.md: the size at a few batch sizes); the pool holds a few
 * batches per worker. */
#define PFT_BATCH (1u << 20)
/* The longest element taken: its length is 32 bits in the batches
 * (pfbatch.c), the walks' lists (pfchunk.c) and the parse's nodes. */
#define PFT_ELEM_MAX ((size_t)UINT32_MAX)
/* The threads that write the batches' packets for the passer (pfpass.c):
 * none, the passer writes them itself.  Two from -j 8 on gained nothing on
 * 16 CPUs and cost 0.01-0.04 s of the 1 GB pair's output, plain and gzip,
 * in four calls (BENCHMARKS.md "knobs23").  CUPTIMERGE_PFT_WRITERS (0 to
 * 8), a benchmarking aid, sets them; the bytes do not depend on it. */
#define PFT_WRITERS 0
/* Batches queued for the sequential part's own thread at most: the
 * batches a pool's slots may have handed on before the thread takes them,
 * one more being worked through. */
#define PFT_SEQ_QUEUE 4

/* -v: print where the time went, for each transcoder finished. */
static int pft_verbose;

void cm_pft_set_verbose(int on) { pft_verbose = on; }

void cm_pft_set_probe(cm_pft *t, cm_pft_probe probe) { t->probe = probe; }

_Static_assert(PH_N == CM_PFPASS_PHASES && PH_N <= CM_OPOOL_CLASSES, "a phase is a class of the pool and the passer");

static int emit_batch(void *ctx, struct cm_pfwrite *w);
static int seq_emit(void *ctx, const char *s, size_t n, int64_t off);

cm_pft *cm_pft_new(cm_pft_sink sink, void *ctx, const char *label)
{
	cm_pft *t = cm_xcalloc(1, sizeof *t);
	const char *env;
	t->sink = sink;
	t->ctx = ctx;
	t->label = cm_xstrdup(label);
	t->ev = cm_pfev_new(&t->out, t->label);
	t->ev->emit = emit_batch;
	t->ev->emit_ctx = t;
	t->threads = 1;
	t->batch_max = PFT_BATCH;
	/* a testing aid: batches of this many bytes of text */
	if ((env = getenv("CUPTIMERGE_PFT_BATCH")) && *env)
		t->batch_max = (size_t)strtoull(env, NULL, 10);
	if (t->batch_max < 1)
		t->batch_max = 1;
	t->elem_max = PFT_ELEM_MAX;
	/* a testing aid: a shorter longest element (tests/e2e/pfflat.sh) */
	if ((env = getenv("CUPTIMERGE_PFT_ELEM_MAX")) && *env && strtoull(env, NULL, 10) < PFT_ELEM_MAX)
		t->elem_max = (size_t)strtoull(env, NULL, 10);
	t->seq_queue = PFT_SEQ_QUEUE;
	/* a testing aid (bench/dev-direct16.sh): a longer queue to the
	 * sequential part's thread, which pfinsert.c's direct path fills
	 * straight from the render's in-order thread (1-1024; the bytes do
	 * not depend on it) */
	if ((env = getenv("CUPTIMERGE_PFT_SEQ_QUEUE")) && *env && atoi(env) >= 1 && atoi(env) <= 1024)
		t->seq_queue = (size_t)atoi(env);
	cm_pfcut_init(&t->cut, t->label);
	t->cut.emit = seq_emit;
	t->cut.ctx = t;
	pthread_mutex_init(&t->gmu, NULL);
	pthread_cond_init(&t->gcv, NULL);
	return t;
}

void cm_pft_threads(cm_pft *t, int n)
{
	/* a testing aid (bench/dev-pf12.sh): the transcoder's workers apart
	 * from the merge's -j, which also sizes the render's crew */
	const char *env = getenv("CUPTIMERGE_PFT_THREADS");
	t->jobs = n < 1 ? 1 : n;
	if (env && *env && atoi(env) >= 1)
		n = atoi(env);
	t->threads = n < 1 ? 1 : n;
}

/* The testing aid CUPTIMERGE_PFT_NICE=N (1-19): the transcoder's workers
 * run at that nice value (this thread's alone, as opool.c's crew_nice), so
 * that its sequential part, the passer and the merge's threads win their
 * CPUs back from them (bench/dev-pf12.sh: on 16 CPUs the sequential part
 * ran 0.31 s of CPU in 0.49 s). */
static void worker_nice(struct pfworker *w)
{
	w->niced = 1;
	if (w->t->threads > 3) /* (to 3, the writer's thread runs blocks too) */
		cm_thread_nice_env("CUPTIMERGE_PFT_NICE");
}

int cm_pft_quiesce(cm_pft *t)
{
	if (t->pool) { /* what is queued is dropped, unseen */
		__atomic_store_n(&t->dropping, 1, __ATOMIC_RELEASE);
		cm_pft_hand_abort(t);
		cm_opool_finish(t->pool);
		t->pool = NULL;
	}
	__atomic_store_n(&t->dropping, 1, __ATOMIC_RELEASE);
	cm_pft_wake(t);
	cm_handoff_abort(t->seq); /* (its batches dropped unseen) */
	cm_handoff_finish(t->seq, &t->qst);
	t->seq = NULL;
	cm_pfpass_stop(t->pass, &t->ev->passed, &t->p_wrote, NULL, NULL);
	t->pass = NULL;
	return -1;
}

void cm_pft_free(cm_pft *t)
{
	int i;
	if (!t)
		return;
	cm_pft_quiesce(t);
	for (i = 0; t->workers && i < t->threads; i++) {
		cm_pft_worker_free(&t->workers[i]);
	}
	free(t->workers);
	free(t->wctx);
	for (i = 0; t->hand_on && i < PFT_HAND_CVS; i++)
		pthread_cond_destroy(&t->hcv[i]);
	if (t->hand_on)
		pthread_mutex_destroy(&t->hmu);
	cm_pfcut_free(&t->hand);
	cm_pfcut_free(&t->cut);
	cm_pflaneq_free(t->lq);
	cm_buf_free(&t->batch);
	cm_buf_free(&t->fill);
	cm_buf_free(&t->ins);
	for (size_t k = 0; k < t->npieces; k++) { /* (the pool has finished) */
		cm_buf_free(&t->pieces[k]->b);
		free(t->pieces[k]);
	}
	free(t->pieces);
	while (t->gall) { /* (the writer's threads have finished) */
		struct pft_gbuf *g = t->gall;
		t->gall = g->all;
		cm_buf_free(&g->b);
		free(g);
	}
	pthread_mutex_destroy(&t->gmu);
	pthread_cond_destroy(&t->gcv);
	cm_pfev_free(t->ev);
	cm_buf_free(&t->out);
	free(t->label);
	free(t);
}

/* The passer (made with the first call, from -j 2), or NULL. */
static cm_pfpass *passer(cm_pft *t)
{
	if (!t->pass && !t->no_pass && t->threads >= 2) {
		if (!(t->pass = cm_pfpass_new(t->sink, t->ctx, PFT_WRITERS)))
			t->no_pass = 1;
		else if (pft_verbose)
			cm_pfpass_verbose(t->pass, t->probe);
	}
	return t->pass;
}

/* Pass the protobuf made on when there is enough (ALL: whatever there is):
 * to the passer (made with the first, from -j 2), or to the sink on this
 * thread. */
static int drain(cm_pft *t, int all)
{
	int rc;
	if (!t->out.len || (!all && t->out.len < PFT_FLUSH))
		return 0;
	if (passer(t))
		return cm_pfpass_put(t->pass, &t->out, t->sph);
	/* this thread's sink calls, counted as the passer's */
	rc = cm_pfpass_call(t->sink, t->ctx, t->probe, t->out.p, t->out.len, pft_verbose ? &t->pph[t->sph] : NULL,
			    &t->ev->passed);
	t->out.len = 0;
	return rc;
}

/* pfseg.c's batches of packets to write (cm_pfev's emit): what t->out
 * holds, then W's packets, written and passed on by the passer; the
 * buffers swapped, none copied.  1 when there is no passer, or when its
 * queue is full (pfseg.c then writes them on this thread, rather than
 * wait). */
static int emit_batch(void *ctx, struct cm_pfwrite *w)
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
	if (pft_verbose && aux) { /* (a clock read or two a batch, with -v only) */
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
	rc = cm_pfbatch_apply(t->ev, out) < 0 ? -1 : drain(t, 0);
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
		rc = apply(t, b, pft_verbose ? &ph : NULL);
	} else if ((rc = cm_handoff_put(t->seq, b, pft_verbose ? &ph : NULL)) < 0) {
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
	if (cm_pft_hand(t, out, pft_verbose ? cm_opool_sink_class(t->pool) : 0) < 0) {
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

/* ---- -j 1: the walk on the writer's thread ---- */

/* The batch being made handed to the pool (only its number when it has no
 * element), the next begun.  0 or -1. */
static int put_batch(cm_pft *t)
{
	if (!t->batch.len)
		cm_buf_put(&t->batch, &t->batch_seq, sizeof t->batch_seq);
	t->batch_seq++;
	return cm_pft_put_block(t, &t->batch);
}

/* (pfstream.h) */
int cm_pft_put_spans(cm_pft *t)
{
	uint64_t last;
	int rc = 0;
	if (t->text_off <= t->span_base)
		return 0;
	last = t->seq_base + (uint64_t)(t->text_off - 1 - t->span_base) / t->batch_max;
	while (!rc && t->batch_seq <= last)
		rc = put_batch(t);
	return rc;
}

/* (pfstream.h) */
int cm_pft_elem_refuse(const cm_pft *t, size_t n, int64_t off)
{
	cm_error(CM_EXIT_DATA, t->label, off,
		 "a traceEvents element of %zu bytes cannot be written as Perfetto protobuf (at most %zu bytes)", n,
		 t->elem_max);
	return -1;
}

/* The walk's element (pfcut.c's emit): into the batch of the span where it
 * ends, those before it handed on.  0 or -1. */
static int seq_emit(void *ctx, const char *s, size_t n, int64_t off)
{
	cm_pft *t = ctx;
	uint64_t k;
	if (n > t->elem_max)
		return cm_pft_elem_refuse(t, n, off);
	k = t->seq_base + (uint64_t)(off + (int64_t)n - 1 - t->span_base) / t->batch_max;
	while (t->batch_seq < k)
		if (put_batch(t) < 0)
			return -1;
	cm_pfbatch_add(&t->batch, t->batch_seq, s, n, off);
	return 0;
}

/* ---- the writer's side ---- */

/* cm_pft_write's work. */
static int write_text(cm_pft *t, const char *s, size_t n)
{
	size_t full = sizeof(struct chunk_head) + t->batch_max;
	if (t->failed)
		return -1;
	if (!t->pool && !t->par && t->text_off == 0 && t->threads >= 2)
		t->par = 1;
	if (!t->par) {
		t->text_off += (int64_t)n;
		if (cm_pfcut_scan(&t->cut, s, n) < 0)
			return t->failed = 1, -1;
		return 0;
	}
	while (n) {
		size_t k;
		if (!t->fill.len) {
			struct chunk_head h = {t->chunk_seq, t->walk_seq, t->text_off};
			cm_buf_grow(&t->fill, full);
			cm_buf_put(&t->fill, &h, sizeof h);
		}
		k = full - t->fill.len < n ? full - t->fill.len : n;
		memcpy(t->fill.p + t->fill.len, s, k);
		t->fill.len += k;
		t->text_off += (int64_t)k;
		s += k;
		n -= k;
		if (t->fill.len == full) {
			t->chunk_seq++;
			t->walk_seq++;
			if (cm_pft_put_block(t, &t->fill) < 0)
				return t->failed = 1, -1;
		}
	}
	return 0;
}

int cm_pft_write(cm_pft *t, const void *data, size_t n)
{
	double t0 = cm_now_s(), t1;
	int rc;
	if (!t->t_first)
		t->t_first = t->ph[PH_BEFORE].w_from = t0;
	rc = write_text(t, data, n);
	t1 = cm_now_s();
	cm_pft_note_writer(t, t->wph, t1 - t0, 0);
	t->ph[t->wph].w_to = t1;
	return rc < 0 ? cm_pft_quiesce(t) : rc;
}

/* Not a whole document (only where the JSON writer went wrong): -1. */
static int incomplete(cm_pft *t, int64_t off)
{
	cm_error(CM_EXIT_DATA, t->label, off, "cannot be written as Perfetto protobuf: the document is not complete");
	t->failed = 1;
	return -1;
}

int cm_pft_finish(cm_pft *t)
{
	int rc = 0, prc;
	struct cm_pfcut *end = &t->cut;
	if (t->failed)
		return cm_pft_quiesce(t);
	t->ph[t->wph].w_to = cm_now_s(); /* (the last chunk's put counted in W_PUT, not W_TIME) */
	if (t->par) {
		if (t->fill.len) { /* the last chunk */
			t->chunk_seq++;
			t->walk_seq++;
			rc = cm_pft_put_block(t, &t->fill);
		}
	} else if (t->cut.st == S_END) { /* the batches up to the text's last span */
		rc = cm_pft_put_spans(t);
	}
	if (t->pool) {
		int frc = cm_opool_finish(t->pool);
		t->pool = NULL;
		rc = rc < 0 ? rc : frc;
	}
	if (t->seq && cm_handoff_finish(t->seq, &t->qst) < 0)
		rc = -1;
	t->seq = NULL;
	if (rc < 0)
		return t->failed = 1, cm_pft_quiesce(t);
	if (t->par) { /* the walk after the last chunk */
		if (!t->hand_on || t->hand_seq1 != t->walk_seq + 1)
			end = NULL;
		else
			end = &t->hand;
	}
	if (!end || end->failed)
		return end ? (t->failed = 1, cm_pft_quiesce(t)) : (incomplete(t, 0), cm_pft_quiesce(t));
	if (end->st != S_END)
		return incomplete(t, end->offset), cm_pft_quiesce(t);
	cm_pfev_finish(t->ev);
	rc = drain(t, 1);
	prc = cm_pfpass_stop(t->pass, &t->ev->passed, &t->p_wrote, &t->p_wait, t->pph);
	t->pass = NULL;
	if (prc < 0 || rc < 0)
		return t->failed = 1, -1;
	if (pft_verbose)
		cm_pft_report(t);
	return 0;
}
