/* docbatch.c - the splitter's batches: a run of elements in one read chunk,
 * held (io/input.h) until the batch is done.
 *
 * The cutter copies no element, it only finds where each ends
 * (cm_jscan_elements, many from one 64-byte block's masks) and writes two
 * numbers an element here.  Only an element that began in an earlier chunk
 * is copied (one a chunk, with the chunk's first batch; with tiny reads,
 * every element, and a batch of copies alone goes on across chunks up to
 * its size).  The format is docbatch.h's; the sink walks a batch with
 * cm_docsplit_next and lets it go with cm_docsplit_done, on any thread. */
#include "config.h"
#include "json/docbatch.h"
#include "base/diag.h"

#include <stdint.h>
#include <string.h>

int cm_docsplit_next(const cm_buf *b, size_t *at, cm_docsplit_elem *e)
{
	const struct bhead *h = (const struct bhead *)(const void *)b->p;
	const uint32_t *span;
	if (b->len < sizeof *h || *at >= h->n)
		return 0;
	span = (const uint32_t *)(h + 1) + 2 * *at;
	if (span[0] == CARRIED) {
		const char *rec = (const char *)((const uint32_t *)(h + 1) + 2 * h->n) + span[1];
		struct crec c;
		memcpy(&c, rec, sizeof c);
		e->text = rec + sizeof c;
		e->len = c.len;
		e->end_offset = c.end_offset;
	} else {
		e->text = h->chunk + span[0];
		e->len = span[1] - span[0];
		e->end_offset = h->base + span[1];
	}
	e->index = h->first + *at;
	(*at)++;
	return 1;
}

void cm_docsplit_done(cm_buf *b)
{
	struct bhead *h = (struct bhead *)(void *)b->p;
	if (b->len >= sizeof *h && h->hold) {
		cm_input_release(h->hold);
		h->hold = NULL;
	}
}

void docbatch_open(struct split *sp, const char *s, uint64_t base)
{
	struct bhead *h;
	sp->batch.len = 0;
	cm_buf_grow(&sp->batch, sizeof *h);
	h = (struct bhead *)(void *)sp->batch.p;
	h->chunk = s;
	h->hold = NULL;
	h->base = (int64_t)base;
	h->first = sp->index;
	h->n = 0;
	h->pad = 0;
	sp->batch.len = sizeof *h;
	sp->bytes = 0;
	sp->inplace = 0;
	sp->copy.len = 0;
}

int docbatch_send(struct split *sp)
{
	struct bhead *h = (struct bhead *)(void *)sp->batch.p;
	const char *s = h->chunk;
	uint64_t base = (uint64_t)h->base;
	uint32_t n = (uint32_t)((sp->batch.len - sizeof *h) / 8);
	int rc;
	if (!n)
		return 0;
	h->n = n;
	if (sp->inplace && sp->in) /* the recorder (no input) hands nothing on */
		h->hold = cm_input_hold(sp->in);
	/* the buffer may move: h is not used after this */
	cm_buf_put(&sp->batch, sp->copy.p, sp->copy.len);
	sp->index += n;
	if (sp->sink->cut_cpu) { /* the sink may parse (a caller that helps, opool.h): not cutting */
		double t = cm_thread_cpu_s();
		rc = sp->sink->batch(sp->sink->ctx, &sp->batch);
		sp->in_sink += cm_thread_cpu_s() - t;
	} else {
		rc = sp->sink->batch(sp->sink->ctx, &sp->batch);
	}
	/* the buffer back from the sink (its own, or the pool's, done with)
	 * holds no chunk; one the sink did not take does */
	cm_docsplit_done(&sp->batch);
	docbatch_open(sp, s, base);
	return rc < 0 ? -1 : 0;
}

int docbatch_spans_done(struct split *sp, const char *s, uint64_t base, size_t got)
{
	uint32_t *span = (uint32_t *)(void *)(sp->batch.p + sp->batch.len);
	for (size_t j = 0; j < got; j++) {
		if (span[2 * j] == CARRIED && sp->record_only) {
			/* the recorder keeps no bytes (docsplit.c): the
			 * element began at elem_at, and nothing walks it */
			uint64_t end = base + span[2 * j + 1];
			if (sp->lay_on)
				cm_doclayout_elem(&sp->lay, sp->elem_at, end);
			sp->bytes += end - sp->elem_at;
		} else if (span[2 * j] == CARRIED) {
			static const char zeros[8];
			struct crec c = {(int64_t)(base + span[2 * j + 1]), 0, 0};
			cm_buf_put(&sp->carry, s, span[2 * j + 1]);
			c.len = (uint32_t)sp->carry.len;
			if (sp->lay_on)
				cm_doclayout_elem(&sp->lay, (uint64_t)c.end_offset - c.len, (uint64_t)c.end_offset);
			span[2 * j + 1] = (uint32_t)sp->copy.len;
			cm_buf_put(&sp->copy, &c, sizeof c);
			cm_buf_put(&sp->copy, sp->carry.p, sp->carry.len);
			cm_buf_put(&sp->copy, zeros, (8 - sp->carry.len % 8) % 8);
			sp->bytes += sp->carry.len;
			sp->carry.len = 0;
		} else {
			if (sp->lay_on)
				cm_doclayout_elem(&sp->lay, base + span[2 * j], base + span[2 * j + 1]);
			sp->bytes += span[2 * j + 1] - span[2 * j];
			sp->inplace++;
		}
	}
	sp->batch.len += 8 * got;
	return sp->bytes >= sp->batch_size ? docbatch_send(sp) : 0;
}
