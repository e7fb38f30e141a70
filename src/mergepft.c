/* mergepft.c - the merge's window events handed to the .pftrace
 * transcoder as batches, not as text (issue 25).
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
 * text is still written, for the elements that are parsed, the numbers
 * the encoder reads from their text and the groups that go as text), and
 * the pieces' first and last groups (which go on in the pieces next to
 * them) are joined here, in order, and encoded by the transcoder's
 * workers from their text; every group is one batch of the .pftrace,
 * inserted between the text before (the CPU trace's events) and after
 * (the spans, the profiler spans, the document's end).  gpu/ and pftrace/
 * do not know each other (tests/e2e/layers.sh): the glue is this file's.
 * CUPTIMERGE_PFT_REPARSE=1, a testing aid, hands no members: each
 * element parsed from its text, which must give the same bytes.
 *
 * The batches are the groups, which depend on the window's records alone:
 * the bytes are the same at any -j and any read size, but not those of the
 * same JSON converted alone (there the batches are spans of the text); what
 * Perfetto shows is the same (tests/e2e/pftmerge.sh).  Not for a merge
 * with a repair (its remap renders on one thread: the text's workers
 * encode faster) nor --split's files. */
#include "config.h"
#include "mergepft.h"
#include "pftrace/pftrace.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

/* The transcoder's side of the render's groups. */
struct ins {
	cm_pft *t;
	cm_buf batch; /* the group whose parts are being joined */
	uint64_t q;   /* its number */
	int have;     /* it has an element */
};

int cm_mergepft_applies(const cm_evout *eo)
{
	const char *env = getenv("CUPTIMERGE_PFT_TEXT"); /* a testing aid: the window's events as text */
	return eo->out && cm_output_codec_state(eo->out) && !(env && *env && strcmp(env, "0"));
}

/* cm_gpu_groups' open, element and close: a whole group encoded on the
 * render's worker. */
static int enc_open(void *ectx, cm_buf *out) { return cm_pft_enc_open(ectx, out); }
static int enc_elem(void *ectx, const cm_jval *v, const char *s, size_t n, cm_buf *out)
{
	return cm_pft_enc_elem(ectx, v, s, n, out);
}
static int enc_close(void *ectx, cm_buf *out) { return cm_pft_enc_close(ectx, out); }

/* The group being joined, if any, to the transcoder.  0 or -1. */
static int flush(struct ins *s)
{
	int rc = s->have ? cm_pft_insert_elems(s->t, &s->batch) : 0;
	s->have = 0;
	s->batch.len = 0;
	return rc;
}

/* cm_gpu_groups' text: a part of group Q, joined to the parts before it. */
static int text(void *sctx, uint64_t q, const char *p, size_t n, const size_t *marks, size_t nmarks)
{
	struct ins *s = sctx;
	if (s->have && s->q != q && flush(s) < 0)
		return -1;
	for (size_t i = 0; i < nmarks; i++) {
		size_t end = i + 1 < nmarks ? marks[i + 1] : n;
		cm_pft_elems_add(&s->batch, p + marks[i] + 1, end - marks[i] - 1);
	}
	s->q = q;
	s->have = 1;
	return 0;
}

/* cm_gpu_groups' encoded: a group's records, after the group joined
 * before it. */
static int encoded(void *sctx, const void *p, size_t n)
{
	struct ins *s = sctx;
	if (flush(s) < 0)
		return -1;
	return cm_pft_insert_records(s->t, p, n);
}

int cm_mergepft_events(const cm_gpu *g, cm_evout *eo, int jobs)
{
	struct ins s;
	cm_gpu_groups gr;
	int n = jobs < 1 ? 1 : jobs, rc;
	void **ectx;
	const char *env = getenv("CUPTIMERGE_PFT_REPARSE");
	memset(&s, 0, sizeof s);
	s.t = cm_output_codec_state(eo->out);
	/* the text so far to the transcoder, which then takes the batches */
	if (cm_evout_flush(eo) < 0 || cm_pft_insert_begin(s.t) < 0)
		return -1;
	ectx = cm_xcalloc((size_t)n, sizeof *ectx);
	for (int i = 0; i < n; i++)
		ectx[i] = cm_pft_enc_new(s.t);
	memset(&gr, 0, sizeof gr);
	gr.members = !(env && *env && strcmp(env, "0"));
	gr.open = enc_open;
	gr.element = enc_elem;
	gr.close = enc_close;
	gr.ectx = ectx;
	gr.text = text;
	gr.encoded = encoded;
	gr.sctx = &s;
	rc = cm_gpu_write_groups(g, n, &gr);
	if (!rc)
		rc = flush(&s);
	if (!rc)
		rc = cm_pft_insert_end(s.t);
	for (int i = 0; i < n; i++)
		cm_pft_enc_free(ectx[i]);
	free(ectx);
	cm_buf_free(&s.batch);
	return rc < 0 ? -1 : 0;
}
