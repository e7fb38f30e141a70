/* pfstream.c - the Perfetto transcoder's writer side: the JSON
 * document's text, in pieces of any size, taken from the writer's thread
 * and handed to the pool (pfpool.c: the elements' batches encoded by the
 * workers, their records placed in order by the sequential part, passed
 * on by a thread of their own); the end (its -v lines: pfreport.c).
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

/* A batch for the workers (pfbatch.c): the elements that end in a span of
 * this much text.  Larger batches define their interned strings again less
 * often (BENCHMARKS.md: the size at a few batch sizes); the pool holds a few
 * batches per worker. */
#define PFT_BATCH (1u << 20)
/* The longest element taken: its length is 32 bits in the batches
 * (pfbatch.c), the walks' lists (pfchunk.c) and the parse's nodes. */
#define PFT_ELEM_MAX ((size_t)UINT32_MAX)
/* Batches queued for the sequential part's own thread at most: the
 * batches a pool's slots may have handed on before the thread takes them,
 * one more being worked through. */
#define PFT_SEQ_QUEUE 4

/* -v: print where the time went, for each transcoder finished. */
static int pft_verbose;

void cm_pft_set_verbose(int on) { pft_verbose = on; }

void cm_pft_set_probe(cm_pft *t, cm_pft_probe probe) { t->probe = probe; }

_Static_assert(PH_N == CM_PFPASS_PHASES && PH_N <= CM_OPOOL_CLASSES, "a phase is a class of the pool and the passer");

static int seq_emit(void *ctx, const char *s, size_t n, int64_t off);

cm_pft *cm_pft_new(cm_pft_sink sink, void *ctx, const char *label)
{
	cm_pft *t = cm_xcalloc(1, sizeof *t);
	const char *env;
	t->sink = sink;
	t->ctx = ctx;
	t->label = cm_xstrdup(label);
	t->verbose = pft_verbose;
	t->ev = cm_pfev_new(&t->out, t->label);
	t->ev->emit = cm_pft_emit_batch;
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
	cm_pfties_free(t->ties);
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
			struct chunk_head h = {t->chunk_seq, t->walk_seq, t->text_off, t->wph};
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
	rc = cm_pft_drain(t, 1);
	prc = cm_pfpass_stop(t->pass, &t->ev->passed, &t->p_wrote, &t->p_wait, t->pph);
	t->pass = NULL;
	if (prc < 0 || rc < 0)
		return t->failed = 1, -1;
	if (pft_verbose)
		cm_pft_report(t);
	return 0;
}
