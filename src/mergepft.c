/* mergepft.c - the merge's window events and spans handed to the .pftrace
 * transcoder as batches, not as text (issue 25), straight to its
 * sequential part.
 *
 * With -o FILE.pftrace the merge's JSON text goes through the transcoder
 * (pftrace/), which walks it, cuts it into batches of elements and encodes
 * them on its workers.  The window's events, most of a merge's elements,
 * need none of that: the render (gpu/gpurender.c) knows where each one
 * begins, what its members are and which group of records it belongs to.
 * So here they skip the text: the render's workers render a group of
 * records and encode it as they go, element by element, each handed to
 * the encoder with its members as the render wrote them (gpu/gpumembers.h:
 * the tree the parser would make of its text, so it is not parsed; the
 * text is still written, for the elements that are parsed and the numbers
 * the encoder reads from their text); every group is one batch of the
 * .pftrace, inserted between the text before (the CPU trace's events) and
 * after (the profiler spans, the document's end).  The groups are encoded
 * into the transcoder's buffers and their lanes put there, a worker's
 * piece of groups at a time (cm_gpu_groups' begin and end); the render's
 * in-order sink only hands each buffer on to the transcoder's sequential
 * part (pftrace/pfinsert.c's direct path: through the transcoder's pool
 * each batch cost three queues' wake-ups, about 0.2 ms a batch on 16
 * CPUs, BENCHMARKS.md).
 *
 * The gpu_user_annotation spans after them (the window's annotations',
 * then those Kineto draws of the CPU trace's: cm_mergepft_spans) go the
 * same way, in groups of their own (gpu/gpuencspans.c: a slice of the
 * spans' tables, about 4096 annotations, a piece and a batch), their
 * pieces numbered on from the window's: in the window's pool, after its
 * pieces, where the window's records are read back from their file
 * (spans_along), else in a pool of their own after it
 * (cm_pft_insert_next between).  They were
 * the text after: on 16 CPUs the 1 GB pair's 33 MB of them, walked, cut
 * into 33 batches and parsed again by the transcoder, a batch a worker,
 * took the output 0.06-0.07 s past the render's end where the JSON took
 * 0.01-0.02 s (issue 25; BENCHMARKS.md "pfspans21").  Both tables' spans
 * go, the CPU trace's annotations' too: one walk in slices serves both
 * (gpu/gpurows.c's gpu_spans_block, which the JSON's render now takes
 * too, on its pool's threads, where the CPU trace's were written on one),
 * and left as text they would be the text after again.
 *
 * CUPTIMERGE_PFT_DIRECT=0, a testing aid, sends each group through the
 * transcoder's pool as before (copied there, its lanes put there: the same
 * bytes; with CUPTIMERGE_PFT_ADOPT below).  gpu/ and pftrace/ do not know
 * each other (tests/e2e/layers.sh): the glue is this file's.
 * CUPTIMERGE_PFT_REPARSE=1, a testing aid, hands no members: each
 * element parsed from its text, which must give the same bytes.
 *
 * The CPU trace's events past its metadata go as batches too, each part
 * of its copy encoded on the copy's thread that read it
 * (mergepftcpu.c), their pieces numbered before the window's.
 *
 * The batches are the groups, which depend on the window's records and the
 * spans' tables alone: the bytes are the same at any -j and any read size,
 * but not those of the same JSON converted alone (there the batches are
 * spans of the text); what Perfetto shows is the same
 * (tests/e2e/pftmerge.sh, pfspans.sh).  Not for a merge with a repair (its
 * remap renders on one thread: the text's workers encode faster) nor
 * --split's files.
 *
 * The ties (cm_mergepft_ties): before the plan the transcoder gets a filter
 * of the window's API calls, each noted as the plan reads it (its row and
 * begin as the render will write them, as the encoder will read them), and
 * of the spans once planned, so that the lanes keep the slices before them
 * that one ties with (pftrace/pflanetie.c): with any .pftrace output (the
 * window's events as text too), not with a repair's remap. */
#include "config.h"
#include "mergepft.h"
#include "pftrace/pftrace.h"
#include "base/diag.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cm_mergepft_applies(const cm_evout *eo)
{
	const char *env = getenv("CUPTIMERGE_PFT_TEXT"); /* a testing aid: the window's events as text */
	return eo->out && cm_output_codec_state(eo->out) && !(env && *env && strcmp(env, "0"));
}

/* An id as the lanes' key of an integer takes it: one outside
 * 0..2^32-1 as any other (-1; pftrace/pflaneq.c's id_key). */
static int64_t key_id(cm_int v) { return v < 0 || v > INT64_MAX ? -1 : (int64_t)v; }

/* cm_gpu_call_note: a call (its row and times as the render writes them)
 * added to the transcoder CTX's filter, by the key and begin the lanes
 * will get from the encoder (pftrace/pflaneq.c's key of an integer pid and
 * tid; the "ts" read back: pftrace/pfevent.h's cm_pf_time).  A call of no
 * duration takes no lane; one before the trace's zero is refused. */
static void call_note(void *ctx, cm_int pid, cm_int tid, cm_int ns, cm_int dur)
{
	char text[CM_US_TEXT_MAX];
	double d;
	if (dur <= 0 || ns < 0)
		return;
	if (ns < CM_PY_MILLI_MAX) /* (its text reads back as NS: gpumembers.h) */
		cm_pft_tie(ctx, 0, key_id(pid), key_id(tid), (int64_t)ns);
	else
		cm_pft_tie_text(ctx, 0, key_id(pid), key_id(tid), text, cm_jw_us_text(ns, text, &d));
}

/* cm_gpu_span_note: a span, as call_note; its "ts" as gpu/gpurules.c's
 * span_time gives it: the nanoseconds whose thousandth it is, else its
 * repr read back. */
static void span_note(void *ctx, cm_int pid, cm_int tid, double ts, double dur)
{
	cm_buf text = {0};
	if (!(dur > 0) || !(ts >= 0))
		return;
	if (!signbit(ts) && ts < (double)(CM_PY_MILLI_MAX / 1000)) {
		int64_t k = (int64_t)nearbyint(ts * 1000.0);
		if (k >= 0 && k < CM_PY_MILLI_MAX && (double)k / 1000.0 == ts) {
			cm_pft_tie(ctx, 1, key_id(pid), key_id(tid), k);
			return;
		}
	}
	cm_jw_double(&text, ts);
	cm_pft_tie_text(ctx, 1, key_id(pid), key_id(tid), text.p, text.len);
	cm_buf_free(&text);
}

void cm_mergepft_ties(cm_gpu *g, const cm_evout *eo)
{
	cm_pft *t = eo->out ? cm_output_codec_state(eo->out) : NULL;
	if (!t)
		return;
	/* (the spans, not known yet, are fewer: one an annotation and stream,
	 * a tenth of the calls on the pairs; and the filter's size is rounded
	 * up to a power of 2) */
	cm_pft_ties(t, cm_gpu_api_count(g) + cm_gpu_api_count(g) / 8);
	cm_gpu_set_call_note(g, call_note, t);
}

int cm_mergepft_ties_spans(const cm_gpu *g, const cm_evout *eo, int threads)
{
	cm_pft *t = eo->out ? cm_output_codec_state(eo->out) : NULL;
	return t ? cm_gpu_each_span(g, span_note, t, threads) : 0;
}

/* cm_gpu_groups' open, element and close: a whole group encoded on the
 * render's worker. */
static int enc_open(void *ectx, cm_buf *out) { return cm_pft_enc_open(ectx, out); }
static int enc_elem(void *ectx, const cm_jval *v, const char *s, size_t n, cm_buf *out)
{
	return cm_pft_enc_elem(ectx, v, s, n, out);
}
static int enc_close(void *ectx, cm_buf *out) { return cm_pft_enc_close(ectx, out); }

/* cm_gpu_groups' encoded: a group's records to the transcoder (SCTX). */
static int encoded(void *sctx, const void *p, size_t n) { return cm_pft_insert_records(sctx, p, n); }
/* cm_gpu_groups' adopt: the worker's output taken whole (no group copied
 * on the sink's thread, one at a time: the transcoder's workers copy
 * them).  CUPTIMERGE_PFT_ADOPT=0, a testing aid (bench/dev-adopt15.sh),
 * copies each as before; the bytes are the same.  Only with
 * CUPTIMERGE_PFT_DIRECT=0. */
static void adopt(void *sctx, cm_buf *out, size_t ngroups) { cm_pft_insert_adopt(sctx, out, ngroups); }
/* cm_gpu_groups' begin and end: a worker's piece (the direct path). */
static void piece_begin(void *ectx, uint64_t piece) { cm_pft_enc_begin(ectx, piece); }
/* cm_gpu_groups' spans: where the spans' pieces begin (the lanes keep no
 * slice for its ties from there on). */
static void spans_from(void *sctx, uint64_t piece) { cm_pft_ties_spans_from(sctx, piece); }
static int piece_end(void *ectx, cm_buf *out) { return cm_pft_enc_end(ectx, out); }

/* (mergepft.h) */
int cm_mergepft_direct(void)
{
	const char *env = getenv("CUPTIMERGE_PFT_DIRECT");
	return !(env && *env && !strcmp(env, "0"));
}

/* Whether the spans' pieces go in the window's pool, after its pieces
 * (cm_gpu_write_groups' SPANS_DONE): made while the window's last pieces
 * are, they no longer wait for the window's pool to end, then start a
 * pool of their own (on 16 CPUs that tail was 0.06-0.08 s of the 1 GB
 * pair's .pftrace, its spans' pieces run about 4 at a time;
 * BENCHMARKS.md "pfspans22").  CUPTIMERGE_PFT_SPANS_ALONG=0, a testing
 * aid, writes them after the window's pool has ended, in a pool of their
 * own; the bytes are the same. */
static int spans_along(void)
{
	const char *env = getenv("CUPTIMERGE_PFT_SPANS_ALONG");
	return !(env && *env && !strcmp(env, "0"));
}

/* GR set for T's encoders, N of them (made here: cm_pft_enc_free each of
 * GR's ECTX, then free the array), the testing aids' settings read. */
static void groups_for(cm_pft *t, int n, cm_gpu_groups *gr)
{
	const char *env = getenv("CUPTIMERGE_PFT_REPARSE");
	void **ectx = cm_xcalloc((size_t)n, sizeof *ectx);
	for (int i = 0; i < n; i++)
		ectx[i] = cm_pft_enc_new(t);
	memset(gr, 0, sizeof *gr);
	gr->members = !(env && *env && strcmp(env, "0"));
	/* the members' numbers not written as text where nothing reads it */
	gr->lean = gr->members && !cm_pft_enc_reads_text(ectx[0]);
	gr->open = enc_open;
	gr->element = enc_elem;
	gr->close = enc_close;
	gr->ectx = ectx;
	gr->encoded = encoded;
	env = getenv("CUPTIMERGE_PFT_ADOPT");
	gr->adopt = cm_mergepft_direct() || (env && *env && !strcmp(env, "0")) ? NULL : adopt;
	if (cm_mergepft_direct()) {
		gr->begin = piece_begin;
		gr->end = piece_end;
		gr->spans = spans_from;
	}
	gr->sctx = t;
}

/* GR's encoders, N of them, freed. */
static void groups_free(cm_gpu_groups *gr, int n)
{
	for (int i = 0; i < n; i++)
		cm_pft_enc_free(gr->ectx[i]);
	free(gr->ectx);
}

int cm_mergepft_events(const cm_gpu *g, cm_evout *eo, int jobs)
{
	cm_pft *t = cm_output_codec_state(eo->out);
	cm_gpu_groups gr;
	int n = jobs < 1 ? 1 : jobs, rc, direct = cm_mergepft_direct(), along = 0;
	/* the text so far to the transcoder, which then takes the batches */
	cm_pft_insert_direct(t, direct);
	if (cm_evout_flush(eo) < 0 || cm_pft_insert_begin(t) < 0)
		return -1;
	groups_for(t, n, &gr);
	rc = cm_gpu_write_groups(g, n, &gr, direct && spans_along() ? &along : NULL);
	if (rc && direct) /* (the transcoder's failure, if it was one, reported now) */
		cm_pft_insert_abort(t);
	groups_free(&gr, n);
	return rc < 0 ? -1 : along;
}

/* (mergepft.h) */
int cm_mergepft_spans(const cm_gpu *g, cm_evout *eo, int jobs, int along)
{
	cm_pft *t = cm_output_codec_state(eo->out);
	cm_gpu_groups gr;
	int n = jobs < 1 ? 1 : jobs, rc;
	/* (the window's pieces all ended: the spans' numbered on from them) */
	cm_pft_insert_next(t);
	if (along) /* (they went along with the window's) */
		return cm_pft_insert_end(t) < 0 ? -1 : 0;
	groups_for(t, n, &gr);
	rc = cm_gpu_write_span_groups(g, n, &gr);
	if (!rc)
		rc = cm_pft_insert_end(t);
	else if (cm_mergepft_direct())
		cm_pft_insert_abort(t);
	groups_free(&gr, n);
	return rc < 0 ? -1 : 0;
}
