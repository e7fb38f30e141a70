/* gpuencspans.c - the gpu_user_annotation spans in groups, for an encoder
 * of the events that is not text (the .pftrace's:
 * cm_gpu_write_span_groups), as gpuencgroups.c hands it the window's
 * events.
 *
 * The spans came after the window's events as JSON text, which the
 * .pftrace's transcoder walked, cut into batches and parsed again: on 16
 * CPUs the 1 GB pair's 33 MB of them were 33 batches, each parsed and
 * encoded by one worker, and the output's end waited for the last
 * (issue 25, BENCHMARKS.md "pfspans21").  Here the spans' blocks
 * (gpu_spans_block: slices of the tables of the window's annotations,
 * then of the CPU trace's) are rendered by the threads of an ordered pool,
 * a block a piece of the encoder's (cm_gpu_groups' begin and end, numbered
 * from 0 in order), each span handed to the encoder as it is rendered,
 * with its members (gpumembers.h, the text whole: its ts and dur are read
 * from their text, which is a double's repr) or, without MEMBERS, its text
 * alone, to be parsed.  A piece's spans are one group (one batch of the
 * .pftrace) unless they are many (a hash map's table is one slice): a
 * group is closed after twice a slice's annotations.
 *
 * The groups depend on the tables alone (their slices, gpurows.c), not on
 * the thread count nor on how the inputs were read. */
#include "config.h"
#include "gpu/gpurender_int.h"
#include "base/diag.h"
#include "base/opool.h"

#include <stdlib.h>
#include <string.h>

/* Annotations a slice of the spans' tables, about, and so a piece's (its
 * spans' text about 0.6 MB: a group of the window's events is about a
 * batch of the .pftrace's text, 1 MiB, and some pieces more than workers
 * keep them all busy to the end).  CUPTIMERGE_PFT_SPAN_GROUP sets it, a
 * testing aid. */
#define CM_GPU_SPAN_GROUP 4096u

/* A worker: its encoder's context, the piece it is on. */
struct gpu_span_enc {
	const cm_gpu *g;
	const cm_gpu_groups *gr;
	const struct gpu_spans_blocks *b;
	void *ectx;
	cm_buf text;           /* a span's element */
	struct gpu_members *m; /* its members (with gr->members) */
	cm_buf *out;           /* the piece's output */
	size_t at, nel;        /* the open group's header in OUT, its elements */
	int have;              /* a group is open */
	uint64_t most;         /* the elements of a group, at most */
};

/* gpu_span_job_new's: the blocks, a worker's context each. */
struct gpu_span_job {
	struct gpu_spans_blocks b;
	struct gpu_span_enc *W;
	int n;
};

/* gpu_span_out's ENC (WCTX: the worker): the span rendered into the
 * worker's text, with its members, handed to the encoder in the piece's
 * open group (one opened first when none is); the group closed once it
 * has its most.  0, or the encoder's failure. */
static int span_encode(void *wctx, const char *name, size_t len, cm_int pid, cm_int tid, double ts, double dur,
		       cm_int ext)
{
	struct gpu_span_enc *W = wctx;
	const cm_jval *v = NULL;
	int rc;
	if (!W->have) {
		if ((rc = gpu_group_open(W->gr, W->ectx, W->out, &W->at)) < 0)
			return rc;
		W->have = 1;
		W->nel = 0;
	}
	W->text.len = 0;
	if (W->m) {
		gpu_members_reset(W->m, &W->text);
		W->m->lean = 0;
	}
	gpu_span_text(&W->text, W->m, name, len, pid, tid, ts, dur, ext);
	if (W->m) {
		gpu_members_fix(W->m, &W->text);
		v = gpu_members_tree(W->m, 0); /* (NULL: a name with an escape, parsed) */
	}
	if ((rc = W->gr->element(W->ectx, v, W->text.p + 1, W->text.len - 1, W->out)) < 0)
		return rc;
	if (++W->nel >= W->most) {
		W->have = 0;
		return gpu_group_close(W->gr, W->ectx, W->at, W->nel, W->out);
	}
	return 0;
}

/* Worker W's piece PIECE (the encoder's number) of the spans' block K,
 * its spans encoded as they are rendered, into OUT. */
static int span_piece_of(struct gpu_span_enc *W, uint64_t piece, int k, cm_buf *out)
{
	struct gpu_span_out o = {NULL, span_encode, W};
	int rc;
	W->out = out;
	W->have = 0;
	if (W->gr->begin)
		W->gr->begin(W->ectx, piece);
	rc = gpu_spans_block(W->g, W->b, k, &o);
	if (!rc && W->have)
		rc = gpu_group_close(W->gr, W->ectx, W->at, W->nel, out);
	W->have = 0;
	if (rc < 0)
		return rc;
	return W->gr->end ? W->gr->end(W->ectx, out) : 0;
}

/* The pool's work: the block whose number IN holds, a piece of the same
 * number. */
static int span_piece(void *wctx, const cm_buf *in, cm_buf *out)
{
	int k;
	memcpy(&k, in->p, sizeof k);
	return span_piece_of(wctx, (uint64_t)k, k, out);
}

/* (gpurender_int.h) */
struct gpu_span_job *gpu_span_job_new(const cm_gpu *g, int n, const cm_gpu_groups *gr)
{
	const char *env = getenv("CUPTIMERGE_PFT_SPAN_GROUP");
	uint64_t per = env && *env && strtoull(env, NULL, 10) ? strtoull(env, NULL, 10) : CM_GPU_SPAN_GROUP;
	struct gpu_span_job *j = cm_xcalloc(1, sizeof *j);
	j->n = n < 1 ? 1 : n;
	gpu_spans_blocks(g, per, &j->b);
	j->W = cm_xcalloc((size_t)j->n, sizeof *j->W);
	for (int i = 0; i < j->n; i++) {
		struct gpu_span_enc *W = &j->W[i];
		W->g = g;
		W->gr = gr;
		W->b = &j->b;
		W->ectx = gr->ectx[i];
		W->most = 2 * per;
		if (gr->members) {
			W->m = cm_xmalloc(sizeof *W->m);
			gpu_members_init(W->m);
		}
	}
	return j;
}

/* (gpurender_int.h) */
int gpu_span_job_blocks(const struct gpu_span_job *j) { return j->b.n; }

/* (gpurender_int.h) */
int gpu_span_job_piece(struct gpu_span_job *j, int worker, uint64_t piece, int k, cm_buf *out)
{
	return span_piece_of(&j->W[worker], piece, k, out);
}

/* (gpurender_int.h) */
void gpu_span_job_free(struct gpu_span_job *j)
{
	if (!j)
		return;
	for (int i = 0; i < j->n; i++) {
		cm_buf_free(&j->W[i].text);
		free(j->W[i].m);
	}
	free(j->W);
	gpu_spans_blocks_free(&j->b);
	free(j);
}

/* (gpuconv.h) */
int cm_gpu_write_span_groups(const cm_gpu *g, int jobs, const cm_gpu_groups *gr)
{
	int n = jobs < 1 ? 1 : jobs, rc = 0;
	struct gpu_span_job *j = gpu_span_job_new(g, n, gr);
	void **ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	cm_opool *pool;
	cm_buf in = {0};
	for (int i = 0; i < n; i++)
		ctx[i] = &j->W[i];
	pool = cm_opool_new(j->b.n < n ? j->b.n : n, 0, span_piece, ctx, gpu_groups_sink, (void *)gr);
	for (int i = 0; i < j->b.n && rc == 0; i++) {
		cm_buf_put(&in, &i, sizeof i);
		rc = cm_opool_put(pool, &in);
	}
	rc = cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	cm_buf_free(&in);
	free(ctx);
	gpu_span_job_free(j);
	return rc;
}
