/* docbatch.h - the splitter's batches (docbatch.c): their format, and the
 * filling of one.  Internal to src/json: the stages of docsplit_int.h. */
#ifndef CM_DOCBATCH_H
#define CM_DOCBATCH_H

#include "json/docsplit_int.h"

#include <stdint.h>

/* A batch, in its buffer: this header, two numbers an element (its start
 * and its end in the chunk; for an element begun in an earlier chunk,
 * CARRIED and where its copy lies among the copies), then the copies, each
 * a struct crec and the element's bytes, padded to 8.  A batch whose
 * elements are all copies stays open across chunks (with tiny reads every
 * element is one: a batch a chunk would be a batch an element). */
struct bhead {
	const char *chunk; /* the chunk the elements lie in */
	void *hold;        /* its hold (cm_input_hold), or NULL */
	int64_t base;      /* the text offset of chunk[0] */
	uint64_t first;    /* the first element's index */
	uint32_t n;        /* elements */
	uint32_t pad;
};

/* A copied element's record, before its bytes. */
struct crec {
	int64_t end_offset;
	uint32_t len, pad;
};

/* A span's start for an element that began in an earlier chunk. */
#define CARRIED UINT32_MAX

/* Room for MAX more elements in the batch; where their spans go.  (Inline:
 * the byte loop asks for room at every run of elements it scans.) */
static inline uint32_t *docbatch_spans_room(struct split *sp, size_t max)
{
	if (sp->batch.cap - sp->batch.len < 8 * max)
		cm_buf_grow(&sp->batch, 8 * max);
	return (uint32_t *)(void *)(sp->batch.p + sp->batch.len);
}

/* The batch, empty, starts on the chunk S at text offset BASE. */
void docbatch_open(struct split *sp, const char *s, uint64_t base);

/* Hand the batch on, when it has elements (with the chunk held when any
 * lies in it, and the copies), and start the next on the same chunk.  0,
 * or -1 when the sink said stop. */
int docbatch_send(struct split *sp);

/* GOT elements that ended in S, at text offset BASE, have their spans in
 * place (docbatch_spans_room): counted in; the first may be the one carried
 * from an earlier chunk, its last bytes taken and the whole copied.  When
 * the batch is full it goes.  0, or -1 when the sink said stop. */
int docbatch_spans_done(struct split *sp, const char *s, uint64_t base, size_t got);

#endif
