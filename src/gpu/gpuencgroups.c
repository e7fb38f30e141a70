/* gpuencgroups.c - the render in groups, for an encoder of the events
 * that is not text (the .pftrace's: cm_gpu_write_groups).
 *
 * The records whose window index falls in one span of CM_GPU_GROUP form a
 * group: one batch of the encoder's.  A worker renders a piece of whole
 * groups (gpu_walk_groups: a few blocks of records, less the head of a
 * group begun in the block before them, with the rest of the group they
 * end in) and hands each group to the encoder element by element as it
 * renders it, while its text is in the cache, and with its members as the
 * render wrote them (gpumembers.h), so that the encoder does not parse the
 * text it was just given; the text of a record's elements is then dropped,
 * and only the encoded records stay.  No group goes on from one piece to
 * the next, so no group waits for a worker of the encoder's own to parse
 * it: a group cut by the pieces used to go to the sink as text, in parts,
 * and the one that parsed it held back the groups after it (an eighth of
 * the 1 GB pair's groups).
 *
 * An encoder may be told of each piece (cm_gpu_groups' begin and end, with
 * the piece's number: the .pftrace's puts a piece's lanes at once, under
 * that number, src/mergepft.c).
 *
 * The groups depend on the records alone: not on the pieces, which the
 * window's read cut, nor on the thread count; nor does what the encoder
 * makes of an element depend on whether it had the members or parsed the
 * text (CUPTIMERGE_PFT_REPARSE, src/mergepft.c, the test's switch). */
#include "config.h"
#include "gpu/gpurender_int.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

/* The records of a group: those of a span of this many window indexes
 * (about two elements a record: a group's text is about a batch of the
 * .pftrace's text, 1 MiB).  CUPTIMERGE_PFT_GROUP sets it, a testing aid. */
#define CM_GPU_GROUP 2048u
/* The records' blocks of a piece (about six groups: each piece in flight
 * holds its groups' records and their encoded bytes, so not more; 8
 * blocks: the 1 GB pair's peak at -j 16 134 to 224 MB; 4: 179 MB on the
 * 200M pair's 143 at 8).  CUPTIMERGE_PFT_PIECE sets it, a testing aid (the
 * bytes do not depend on it). */
#define CM_GPU_GROUP_BLOCKS 4

/* A worker of cm_gpu_write_groups: its render, its encoder's context. */
struct grworker {
	struct render R;
	const cm_gpu_groups *gr;
	void *ectx;
	cm_buf text, marks; /* a record's elements */
	struct gpu_members *m; /* their members (with gr->members) */
	int lean;              /* their members in the lean mode (gr->lean, no remap) */
	struct gpu_span_job *spans; /* the spans' pieces after the window's, or NULL */
};

/* The record R rendered into W's text and marks, its members noted in the
 * lean mode when LEAN. */
static void render_record(struct grworker *W, const cm_gpurec *r, int lean)
{
	struct gpu_emit es = {&W->marks, W->m};
	W->text.len = W->marks.len = 0;
	if (W->m) {
		gpu_members_reset(W->m, &W->text);
		W->m->lean = lean;
	}
	gpu_render_record(&W->R, r, &W->text, &es);
}

/* The record R rendered and handed to the encoder, element by element,
 * into OUT; *NEL counts the group's elements.  0, or the encoder's
 * failure.  In the lean mode (gpumembers.h) a record with an element to
 * be parsed is rendered again with its whole text; one with an annotation
 * always has one (render_activity), so it is rendered whole at once. */
static int encode_record(struct grworker *W, const cm_gpurec *r, cm_buf *out, size_t *nel)
{
	const size_t *mk;
	size_t nm;
	int lean = W->lean && !(r->flags & CM_REC_ANN);
	render_record(W, r, lean);
	if (lean && !gpu_members_whole(W->m))
		render_record(W, r, 0);
	if (!(nm = W->marks.len / sizeof(size_t)))
		return 0;
	if (W->m)
		gpu_members_fix(W->m, &W->text);
	mk = (const size_t *)(const void *)W->marks.p;
	for (size_t i = 0; i < nm; i++) {
		size_t end = i + 1 < nm ? mk[i + 1] : W->text.len;
		const cm_jval *v = W->m ? gpu_members_tree(W->m, (unsigned)i) : NULL;
		int rc = W->gr->element(W->ectx, v, W->text.p + mk[i] + 1, end - mk[i] - 1, out);
		if (rc < 0)
			return rc;
	}
	*nel += nm;
	return 0;
}

/* The pool's work: whole groups of records (IN, the piece PIECE), each
 * encoded as it is rendered. */
static int groups_block(void *wctx, uint64_t piece, const cm_buf *in, cm_buf *out)
{
	struct grworker *W = wctx;
	const cm_gpu_groups *gr = W->gr;
	const char *p = in->p, *end = in->p + in->len;
	uint64_t q = 0;
	int have = 0, rc;
	size_t at = 0, nel = 0;
	cm_gpurec r;
	if (gr->begin)
		gr->begin(W->ectx, piece);
	while (p < end) {
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return -1; /* cannot happen: plan read the same bytes */
		if (!have || r.index / gr->span != q) {
			if (have && (rc = gpu_group_close(gr, W->ectx, at, nel, out)) < 0)
				return rc;
			q = r.index / gr->span;
			have = 1;
			nel = 0;
			if ((rc = gpu_group_open(gr, W->ectx, out, &at)) < 0)
				return rc;
		}
		if ((rc = encode_record(W, &r, out, &nel)) < 0)
			return rc;
	}
	if (have && (rc = gpu_group_close(gr, W->ectx, at, nel, out)) < 0)
		return rc;
	return gr->end ? gr->end(W->ectx, out) : 0;
}

/* gpu_walk_groups' extra pieces: the spans' block K as piece PIECE, on
 * WORKER. */
static int groups_spans(void *wctx, int worker, uint64_t piece, int k, cm_buf *out)
{
	struct grworker *W = wctx;
	return gpu_span_job_piece(W->spans, worker, piece, k, out);
}

int cm_gpu_write_groups(const cm_gpu *g, int jobs, const cm_gpu_groups *gr, int *spans_done)
{
	/* (a remap counts what it moves: one thread, in order, as
	 * gpu_render_walk) */
	int n = g->remap ? 1 : jobs < 1 ? 1 : jobs, rc;
	struct grworker *W = cm_xcalloc((size_t)n, sizeof *W);
	void **ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	cm_gpu_groups local = *gr;
	struct gpu_span_job *sj = NULL;
	struct gpu_extra x = {0, groups_spans, spans_done, gr->spans, gr->sctx};
	const char *env = getenv("CUPTIMERGE_PFT_GROUP");
	if (!local.span)
		local.span = env && *env && strtoull(env, NULL, 10) ? strtoull(env, NULL, 10) : CM_GPU_GROUP;
	if (spans_done) { /* (the spans' encoders: the window's, a worker's own on its thread) */
		sj = gpu_span_job_new(g, n, &local);
		x.n = gpu_span_job_blocks(sj);
	}
	for (int i = 0; i < n; i++) {
		W[i].spans = sj;
		gpu_render_init(&W[i].R, g);
		W[i].gr = &local;
		W[i].ectx = gr->ectx[i];
		W[i].m = gr->members ? cm_xmalloc(sizeof *W[i].m) : NULL;
		if (W[i].m)
			gpu_members_init(W[i].m);
		/* (a record rendered again must not count a remap's move twice) */
		W[i].lean = gr->members && gr->lean && !g->remap;
		ctx[i] = &W[i];
	}
	env = getenv("CUPTIMERGE_PFT_PIECE");
	rc = gpu_walk_groups(g, n, env && *env ? atoi(env) : CM_GPU_GROUP_BLOCKS, local.span, groups_block,
			     sj ? &x : NULL, ctx, gpu_groups_sink, &local);
	for (int i = 0; i < n; i++) {
		gpu_render_free(&W[i].R);
		cm_buf_free(&W[i].text);
		cm_buf_free(&W[i].marks);
		free(W[i].m);
	}
	gpu_span_job_free(sj);
	free(W);
	free(ctx);
	return rc;
}
