/* pfstream.c - the Perfetto transcoder's front: the JSON document's text,
 * in pieces of any size, cut into its traceEvents elements for pfevent.c.
 *
 * The text is the program's own output, checked JSON, so this only walks
 * the top level (an object of members) and finds where each element ends
 * (jscan.h, which works across pieces); an element that lies whole in a
 * piece is encoded where it lies, one cut by a piece's end is copied until
 * it is whole.  The other top-level members (traceName, deviceProperties,
 * baseTimeNanoseconds...) have no place in a TrackEvent trace and
 * Perfetto's JSON import shows none of them, so they are skipped.  The
 * elements are gathered in batches of about PFT_BATCH bytes of text,
 * encoded on the -j threads (pfbatch.c), placed in order (pfseg.c) and
 * passed on by a thread of their own (pfpass.c).  With more than one
 * thread, this walk runs on a thread of its own too (pffront.c).
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
#include "json/jval.h"
#include "base/exitcode.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Pass the protobuf bytes on once this many are made. */
#define PFT_FLUSH (256u * 1024u)
/* A batch for the workers (pfbatch.c): the elements of about this much
 * text.  Larger batches define their interned strings again less often
 * (BENCHMARKS.md: the size at a few batch sizes); the pool holds a few
 * batches per worker. */
#define PFT_BATCH (1u << 20)

/* -v: print where the time went, for each transcoder finished. */
static int pft_verbose;

void cm_pft_set_verbose(int on) { pft_verbose = on; }

static int emit_batch(void *ctx, struct cm_pfwrite *w);

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
	t->arena = cm_arena_new();
	t->threads = 1;
	t->batch_max = PFT_BATCH;
	/* a testing aid: batches of this many bytes of text */
	if ((env = getenv("CUPTIMERGE_PFT_BATCH")) && *env)
		t->batch_max = (size_t)strtoull(env, NULL, 10);
	t->chunk = PFT_CHUNK;
	/* a testing aid: the front thread's chunks of this many bytes */
	if ((env = getenv("CUPTIMERGE_PFT_CHUNK")) && *env && strtoull(env, NULL, 10) > 0)
		t->chunk = (size_t)strtoull(env, NULL, 10);
	return t;
}

void cm_pft_threads(cm_pft *t, int n)
{
	t->threads = n < 1 ? 1 : n;
}


int cm_pft_quiesce(cm_pft *t)
{
	if (t->front_on) { /* the chunks left are dropped */
		__atomic_store_n(&t->dropping, 1, __ATOMIC_RELEASE);
		cm_pft_front_stop(t);
	}
	if (t->pool) { /* what is queued is dropped, unseen */
		__atomic_store_n(&t->dropping, 1, __ATOMIC_RELEASE);
		cm_opool_finish(t->pool);
		t->pool = NULL;
	}
	cm_pfpass_stop(t->pass, &t->ev->passed, &t->p_wrote, NULL);
	t->pass = NULL;
	return -1;
}

void cm_pft_free(cm_pft *t)
{
	int i;
	if (!t)
		return;
	cm_pft_quiesce(t);
	for (i = 0; i < PFT_QUEUE; i++)
		cm_buf_free(&t->q[i]);
	cm_buf_free(&t->fill);
	for (i = 0; t->workers && i < t->threads; i++)
		cm_pfev_free(t->workers[i]);
	free(t->workers);
	cm_pflaneq_free(t->lq);
	cm_buf_free(&t->batch);
	cm_pfev_free(t->ev);
	cm_arena_free(t->arena);
	cm_buf_free(&t->key);
	cm_buf_free(&t->elem);
	cm_buf_free(&t->out);
	free(t->label);
	free(t);
}

/* The passer (made with the first call, from -j 2), or NULL. */
static cm_pfpass *passer(cm_pft *t)
{
	if (!t->pass && !t->no_pass && t->threads >= 2 && !(t->pass = cm_pfpass_new(t->sink, t->ctx)))
		t->no_pass = 1;
	return t->pass;
}

/* Pass the protobuf made on when there is enough (ALL: whatever there is):
 * to the passer (made with the first, from -j 2), or to the sink on this
 * thread. */
static int drain(cm_pft *t, int all)
{
	int rc;
	double t0;
	if (!t->out.len || (!all && t->out.len < PFT_FLUSH))
		return 0;
	if (passer(t))
		return cm_pfpass_put(t->pass, &t->out);
	t0 = cm_now_s();
	rc = t->sink(t->ctx, t->out.p, t->out.len);
	t->ev->passed += cm_now_s() - t0;
	t->out.len = 0;
	return rc;
}

/* pfseg.c's batches of packets to write (cm_pfev's emit): what t->out
 * holds, then W's packets, written and passed on by the passer; the
 * buffers swapped, none copied.  1 when there is no passer. */
static int emit_batch(void *ctx, struct cm_pfwrite *w)
{
	cm_pft *t = ctx;
	if (!passer(t))
		return 1;
	return cm_pfpass_put_batch(t->pass, &t->out, w) < 0 ? -1 : 0;
}

/* The pool's work: a batch of elements encoded into records. */
static int batch_work(void *wctx, const cm_buf *in, cm_buf *out)
{
	cm_pfev *w = wctx;
	if (__atomic_load_n(w->dropping, __ATOMIC_ACQUIRE))
		return -2; /* no message: the run's failure was reported */
	return cm_pfbatch_encode(w, in, out);
}


/* The pool's sink, in order: the records placed as packets, passed on. */
static int batch_sink(void *sctx, cm_buf *out)
{
	cm_pft *t = sctx;
	double c0 = cm_thread_cpu_s();
	int rc;
	if (__atomic_load_n(&t->dropping, __ATOMIC_ACQUIRE))
		return -1; /* nothing reported: the run's failure was */
	rc = cm_pfbatch_apply(t->ev, out) < 0 ? -1 : drain(t, 0);
	t->s_cpu += cm_thread_cpu_s() - c0;
	return rc;
}

/* Hand the batch made so far to the pool (made with the first).  0 or -1. */
static int put_batch(cm_pft *t)
{
	int i, rc;
	double c0;
	if (!t->batch.len)
		return 0;
	if (!t->pool) {
		/* the lanes: room for every batch the pool holds (its slots:
		 * the workers and 4 more) */
		t->lq = cm_pflaneq_new(2 * (size_t)t->threads + 8);
		t->ev->lq = t->lq;
		t->workers = cm_xcalloc((size_t)t->threads, sizeof *t->workers);
		for (i = 0; i < t->threads; i++) {
			t->workers[i] = cm_pfev_new(NULL, t->label);
			t->workers[i]->dropping = &t->dropping;
			t->workers[i]->lq = t->lq;
		}
		/* the front thread encodes batches too only on few cores: with
		 * more, a batch it took on held the text back for its length */
		t->pool = cm_opool_new(t->threads, t->threads <= 3, batch_work, (void **)t->workers, batch_sink, t);
		cm_opool_set_stats(t->pool, &t->pst);
	}
	c0 = t->front_on ? cm_thread_cpu_s() : 0;
	rc = cm_opool_put(t->pool, &t->batch);
	if (t->front_on)
		t->f_put += cm_thread_cpu_s() - c0;
	return rc;
}

/* 1 when the batch holds its share of text (its number aside). */
static int batch_full(const cm_pft *t)
{
	return t->batch.len >= t->batch_max + sizeof t->batch_seq;
}

/* Not a trace document (only where the JSON writer went wrong): -1. */
static int bad(cm_pft *t, int64_t off, const char *what)
{
	cm_error(CM_EXIT_DATA, t->label, off, "cannot be written as Perfetto protobuf: %s", what);
	t->failed = 1;
	return -1;
}

/* 1 when the key text KEY (with its quotes) is "traceEvents", also when
 * written with escapes (a repaired trace keeps its input's text). */
static int is_events_key(cm_pft *t, const cm_buf *key)
{
	const cm_jval *v;
	if (key->len == 13 && !memcmp(key->p, "\"traceEvents\"", 13))
		return 1;
	if (key->len >= 64 || !memchr(key->p, '\\', key->len))
		return 0;
	cm_arena_reset(t->arena);
	v = cm_jval_parse_py(t->arena, key->p, key->len);
	return cm_jval_streq(v, "traceEvents");
}

/* In an element that began at S[t->elem_at] (its brace taken), at S[*I]:
 * that element and those after it in the usual way (", {"), many at a
 * time (cm_jscan_elements), batched, up to the end of the piece or of
 * that run; an element cut by the piece's end is copied (t->elem), to go
 * on with the next piece.  The batches are cut where pfbatch_add's would
 * be, element by element, so the same whatever the pieces.  0 or -1. */
static int elements(cm_pft *t, const char *s, size_t n, size_t *i)
{
	uint32_t spans[2 * 256], start = (uint32_t)t->elem_at;
	int after;
	size_t k, got = cm_jscan_elements(&t->sc, s, n, i, &start, spans, 256, n, &after);
	for (k = 0; k < got; k++) {
		cm_pfbatch_add(&t->batch, &t->batch_seq, s + spans[2 * k], spans[2 * k + 1] - spans[2 * k],
			       t->offset + (int64_t)spans[2 * k]);
		if (batch_full(t) && put_batch(t) < 0)
			return -1;
	}
	if (after) { /* the gap after the last is the walk's (S_ELEM_AFTER) */
		t->st = S_ELEM_AFTER;
		return 0;
	}
	/* the piece ran out inside the one that began at START */
	t->elem_off = t->offset + (int64_t)start;
	cm_buf_put(&t->elem, s + start, n - start);
	return 0;
}

/* Read the text S[0..N), the next piece of the document: the top level
 * walked, the elements batched.  0, or -1 after reporting. */
int cm_pft_scan(cm_pft *t, const char *s, size_t n)
{
	size_t i = 0, start;
	if (t->failed)
		return -1;
	while (i < n) {
		char c;
		if (t->st != S_KEY_TEXT && t->st != S_SKIP && t->st != S_ELEM_TEXT) {
			cm_jscan_skip_ws(s, n, &i);
			if (i == n)
				break;
		}
		c = s[i];
		switch (t->st) {
		case S_START:
			if (c != '{')
				return bad(t, t->offset + (int64_t)i, "the text is not a JSON object");
			i++;
			t->st = S_KEY;
			t->first = 1;
			break;
		case S_KEY:
		case S_AFTER:
			if (c == '}') {
				if (t->st == S_KEY && !t->first)
					return bad(t, t->offset + (int64_t)i, "a '}' after a ','");
				i++;
				t->st = S_END;
			} else if (t->st == S_AFTER) {
				if (c != ',')
					return bad(t, t->offset + (int64_t)i, "no ',' between members");
				i++;
				t->st = S_KEY;
				t->first = 0;
			} else {
				if (c != '"')
					return bad(t, t->offset + (int64_t)i, "a member without a string key");
				cm_jscan_begin(&t->sc, c);
				t->key.len = 0;
				t->checked_key = 0;
				t->st = S_KEY_TEXT;
			}
			break;
		case S_KEY_TEXT:
			start = i;
			if (cm_jscan_feed(&t->sc, s, n, &i))
				t->st = S_COLON;
			if (t->key.len < 64) /* only a short key can be traceEvents */
				cm_buf_put(&t->key, s + start, i - start < 64 ? i - start : 64);
			break;
		case S_COLON:
			if (c != ':')
				return bad(t, t->offset + (int64_t)i, "no ':' after a key");
			i++;
			t->st = S_VALUE;
			break;
		case S_VALUE:
			if (!t->checked_key) {
				t->in_events = is_events_key(t, &t->key);
				t->checked_key = 1;
			}
			if (t->in_events && c == '[') {
				i++;
				t->st = S_ELEM;
				t->first = 1;
				break;
			}
			if (t->in_events)
				return bad(t, t->offset + (int64_t)i, "traceEvents is not an array");
			cm_jscan_begin(&t->sc, c);
			t->st = S_SKIP;
			break;
		case S_SKIP:
			if (cm_jscan_feed(&t->sc, s, n, &i))
				t->st = S_AFTER;
			break;
		case S_ELEM:
		case S_ELEM_AFTER:
			if (c == ']') {
				if (t->st == S_ELEM && !t->first)
					return bad(t, t->offset + (int64_t)i, "a ']' after a ','");
				i++;
				t->st = S_AFTER;
			} else if (t->st == S_ELEM_AFTER) {
				if (c != ',')
					return bad(t, t->offset + (int64_t)i, "no ',' between elements");
				i++;
				t->st = S_ELEM;
				t->first = 0;
			} else {
				if (c != '{')
					return bad(t, t->offset + (int64_t)i, "a traceEvents element that is not an object");
				cm_jscan_begin(&t->sc, c);
				t->sc.depth = 1; /* its brace taken: cm_jscan_elements goes on inside it */
				t->elem.len = 0;
				t->elem_off = t->offset + (int64_t)i;
				t->elem_at = i++;
				t->st = S_ELEM_TEXT;
				if (elements(t, s, n, &i) < 0)
					return t->failed = 1, -1;
			}
			break;
		case S_ELEM_TEXT:
			start = i;
			if (!cm_jscan_feed(&t->sc, s, n, &i)) {
				cm_buf_put(&t->elem, s + start, i - start);
				break;
			}
			t->st = S_ELEM_AFTER;
			if (t->elem.len) {
				cm_buf_put(&t->elem, s + start, i - start);
				cm_pfbatch_add(&t->batch, &t->batch_seq, t->elem.p, t->elem.len, t->elem_off);
				t->elem.len = 0;
			} else {
				cm_pfbatch_add(&t->batch, &t->batch_seq, s + start, i - start, t->elem_off);
			}
			if (batch_full(t) && put_batch(t) < 0)
				return t->failed = 1, -1;
			break;
		case S_END:
			return bad(t, t->offset + (int64_t)i, "text after the document");
		}
	}
	t->offset += (int64_t)n;
	return 0;
}

/* -v: where the transcoder's time went (seconds, wall, summed over the
 * threads of each part; the front thread's in its own CPU time).  The
 * serial parts are the writer's thread, the front thread and the pool's
 * sink (one worker at a time): on many cores the busiest of them bounds
 * the output's wall time. */
static void report(cm_pft *t)
{
	const cm_pfev *e = t->ev;
	double lanes = t->lq ? cm_pflaneq_busy(t->lq) : 0;
	cm_warn(t->label, -1,
		"perfetto: %.2f s from the first text: the writer's thread copied for %.2f s and waited %.2f s for "
		"the front thread; the front thread read the text in %.2f s of its CPU (and ran batches for %.2f s), waited %.2f s for text and "
		"%.2f s for a slot; %d workers: %llu batches, busy %.2f s and idle %.2f s, lanes placed in %.2f s (by them, and by the "
		"sequential part when they had not); the sequential part %.2f s, %.2f s of its CPU (waiting %.2f s for the passer): "
		"%.2f s of CPU in order, %.2f s waiting for lanes; the passer wrote the packets in %.2f s, bytes passed on "
		"(written) in %.2f s",
		cm_now_s() - t->t_first, t->w_time - t->w_wait, t->w_wait, t->f_scan - t->f_put, t->f_put, t->f_wait, t->pst.waited,
		t->threads, (unsigned long long)t->pst.blocks, t->pst.busy, t->pst.idle, lanes, t->pst.sink, t->s_cpu, t->p_wait,
		e->in_order, e->lane_wait, t->p_wrote, e->passed);
}

int cm_pft_finish(cm_pft *t)
{
	int rc, prc;
	if (t->wfailed)
		return cm_pft_quiesce(t);
	if (t->front_on && ((t->fill.len && cm_pft_front_push(t) < 0) || cm_pft_front_stop(t) < 0))
		return t->wfailed = 1, cm_pft_quiesce(t);
	if (t->failed)
		return cm_pft_quiesce(t);
	if (t->st != S_END)
		return bad(t, t->offset, "the document is not complete"), cm_pft_quiesce(t);
	rc = put_batch(t);
	if (t->pool) {
		int frc = cm_opool_finish(t->pool);
		t->pool = NULL;
		rc = rc < 0 ? rc : frc;
	}
	if (rc < 0)
		return t->failed = 1, cm_pft_quiesce(t);
	cm_pfev_finish(t->ev);
	rc = drain(t, 1);
	prc = cm_pfpass_stop(t->pass, &t->ev->passed, &t->p_wrote, &t->p_wait);
	t->pass = NULL;
	if (prc < 0 || rc < 0)
		return t->failed = 1, -1;
	if (pft_verbose)
		report(t);
	return 0;
}
