/* gpuencgroups.c - the render in groups, for an encoder of the events
 * that is not text (the .pftrace's: cm_gpu_write_groups).
 *
 * The records whose window index falls in one span of CM_GPU_GROUP form a
 * group: one batch of the encoder's.  A worker renders a piece of records
 * (a few blocks) group by group.  A group whole in the piece (neither its
 * first nor its last: those may go on in the pieces next to it) goes to
 * the encoder element by element as the worker renders it, while its text
 * is in the cache, and with its members as the render wrote them
 * (gpumembers.h), so that the encoder does not parse the text it was just
 * given; the text of a record's elements is then dropped, and only the
 * encoded records stay.  The first and last groups of the piece go on to
 * the sink as text, which joins a group's parts.  To know which group is
 * the piece's last before rendering it, the worker reads the piece's
 * records' indexes first (a cheap pass: no render).
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
/* The records' blocks of a piece: a group's first and last parts go to
 * the sink as text, so a piece holds several groups (about six: an eighth
 * of the batches go as text); each piece in flight holds its groups'
 * records and the text of its parts, so not more (8 blocks: the 1 GB
 * pair's peak at -j 16 134 to 224 MB; 4: 179 MB on the 200M pair's 143 at
 * 8).  CUPTIMERGE_PFT_PIECE sets it, a testing aid (the bytes do not
 * depend on it). */
#define CM_GPU_GROUP_BLOCKS 4

/* A part of a piece's output (struct grworker's): a group's elements as
 * text (KIND 0: NMARKS marks, a size_t each, then LEN bytes of text) or
 * the records the encoder made of a whole group (KIND 1: LEN bytes); each
 * part's bytes padded to a multiple of 8. */
struct grpart {
	uint64_t q, kind, nmarks, len;
};

/* A worker of cm_gpu_write_groups: its render, its encoder's context. */
struct grworker {
	struct render R;
	const cm_gpu_groups *gr;
	void *ectx;
	cm_buf text, marks; /* a text group so far; an encoded group's record */
	struct gpu_members *m; /* an encoded group's record's members (with gr->members) */
};

/* OUT padded with zeros to a multiple of 8. */
static void pad8(cm_buf *out)
{
	static const char zero[8];
	if (out->len & 7)
		cm_buf_put(out, zero, 8 - (out->len & 7));
}

/* The text group Q rendered in W (W->text, W->marks) as a part of OUT;
 * nothing for a group without an element. */
static void text_part(struct grworker *W, uint64_t q, cm_buf *out)
{
	struct grpart h;
	size_t nm = W->marks.len / sizeof(size_t);
	if (nm) {
		h.q = q;
		h.kind = 0;
		h.nmarks = nm;
		h.len = W->text.len;
		cm_buf_put(out, &h, sizeof h);
		cm_buf_put(out, W->marks.p, W->marks.len);
		cm_buf_put(out, W->text.p, W->text.len);
		pad8(out);
	}
	W->text.len = W->marks.len = 0;
}

/* The record R of an encoded group rendered and handed to the encoder,
 * element by element, into OUT; *NEL counts the group's elements.  0, or
 * the encoder's failure. */
static int encode_record(struct grworker *W, const cm_gpurec *r, cm_buf *out, size_t *nel)
{
	struct gpu_emit es = {&W->marks, W->m};
	const size_t *mk;
	size_t nm;
	W->text.len = W->marks.len = 0;
	if (W->m)
		gpu_members_reset(W->m);
	gpu_render_record(&W->R, r, &W->text, &es);
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

/* The window index of the last record of the piece IN. */
static uint64_t last_index(const cm_buf *in)
{
	const char *p = in->p, *end = in->p + in->len;
	uint64_t ix = 0, x;
	while (p < end && cm_gpurec_skip(&p, end, &x) == 0)
		ix = x;
	return ix;
}

/* The pool's work: a piece of records rendered group by group, each
 * group whole in the piece encoded as it is rendered. */
static int groups_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct grworker *W = wctx;
	const cm_gpu_groups *gr = W->gr;
	const char *p = in->p, *end = in->p + in->len;
	uint64_t q = 0, span = gr->span, lastq = last_index(in) / span;
	struct gpu_emit es = {&W->marks, NULL};
	int have = 0, enc = 0, rc;
	size_t at = 0, nel = 0;
	cm_gpurec r;
	W->text.len = W->marks.len = 0;
	while (p < end) {
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return -1; /* cannot happen: plan read the same bytes */
		if (!have || r.index / span != q) {
			if (enc) { /* the encoded group ends: its part's length */
				struct grpart h = {q, 1, 0, 0};
				if ((rc = gr->close(W->ectx, out)) < 0)
					return rc;
				h.len = out->len - at - sizeof h;
				memcpy(out->p + at, &h, sizeof h);
				if (!nel)
					out->len = at; /* no element: not seen */
				pad8(out);
				W->text.len = W->marks.len = 0;
			} else if (have) {
				text_part(W, q, out);
			}
			/* the piece's first group may have begun in the piece
			 * before, its last go on in the next: text */
			q = r.index / span;
			enc = have && q != lastq;
			have = 1;
			if (enc) {
				struct grpart h = {q, 1, 0, 0};
				at = out->len;
				nel = 0;
				cm_buf_put(out, &h, sizeof h);
				if ((rc = gr->open(W->ectx, out)) < 0)
					return rc;
			}
		}
		if (enc) {
			if ((rc = encode_record(W, &r, out, &nel)) < 0)
				return rc;
		} else {
			gpu_render_record(&W->R, &r, &W->text, &es);
		}
	}
	/* (the last group is never encoded: it may go on in the next piece) */
	if (have)
		text_part(W, q, out);
	return 0;
}

/* The pool's sink: the parts handed on in order. */
static int groups_sink(void *sctx, cm_buf *out)
{
	const cm_gpu_groups *gr = sctx;
	size_t at = 0;
	while (at < out->len) {
		struct grpart h;
		int rc;
		memcpy(&h, out->p + at, sizeof h);
		at += sizeof h;
		if (h.kind) {
			rc = gr->encoded(gr->sctx, out->p + at, (size_t)h.len);
			at += (size_t)h.len;
		} else {
			const char *text = out->p + at + h.nmarks * sizeof(size_t);
			rc = gr->text(gr->sctx, h.q, text, (size_t)h.len, (const size_t *)(const void *)(out->p + at),
				      (size_t)h.nmarks);
			at += (size_t)(h.nmarks * sizeof(size_t) + h.len);
		}
		if (rc < 0)
			return -1;
		at = (at + 7) & ~(size_t)7;
	}
	return 0;
}

int cm_gpu_write_groups(const cm_gpu *g, int jobs, const cm_gpu_groups *gr)
{
	/* (a remap counts what it moves: one thread, in order, as
	 * gpu_render_walk) */
	int n = g->remap ? 1 : jobs < 1 ? 1 : jobs, rc;
	struct grworker *W = cm_xcalloc((size_t)n, sizeof *W);
	void **ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	cm_gpu_groups local = *gr;
	const char *env = getenv("CUPTIMERGE_PFT_GROUP");
	if (!local.span)
		local.span = env && *env && strtoull(env, NULL, 10) ? strtoull(env, NULL, 10) : CM_GPU_GROUP;
	for (int i = 0; i < n; i++) {
		gpu_render_init(&W[i].R, g);
		W[i].gr = &local;
		W[i].ectx = gr->ectx[i];
		W[i].m = gr->members ? cm_xmalloc(sizeof *W[i].m) : NULL;
		ctx[i] = &W[i];
	}
	env = getenv("CUPTIMERGE_PFT_PIECE");
	rc = gpu_walk_pieces(g, n, env && *env ? atoi(env) : CM_GPU_GROUP_BLOCKS, groups_block, ctx, groups_sink, &local);
	for (int i = 0; i < n; i++) {
		gpu_render_free(&W[i].R);
		cm_buf_free(&W[i].text);
		cm_buf_free(&W[i].marks);
		free(W[i].m);
	}
	free(W);
	free(ctx);
	return rc;
}
