/* cpuroute.c - --split's routing of the copied events (see cpuroute.h).
 *
 * The copy (cpucopy.c) walks the layout of traceEvents and hands each kept
 * element's bytes here with the outputs it goes to.  An output keeps one
 * pending piece, a pointer into the chunk in hand: an element that follows
 * the last one it got, in the input, joins that piece together with the
 * separator between them, so a run of consecutive elements to an output is
 * one write, as the plain copy makes it.  An element after others that
 * went elsewhere takes the input's separator before it, as the plain copy
 * of --steps does, so that a file of --split has --steps' bytes; but the
 * array's first, which has none, gets a comma when the output has an
 * element (the GPU metadata of a merge) already.  Handing each element over one by one (a write a file
 * an element) made a split 2.8 times the plain merge.  With r->writers the
 * pieces are copied to writer threads (io/outq.c), which write the files
 * at once, each in order; the shared text (written by the caller to every
 * file, through a tee) goes out only once they are idle. */
#include "config.h"
#include "cpu/cpuroute.h"

cm_outq *cm_cpuroute_queue(cm_cpuroute *r)
{
	if (!r->q && r->writers > 0 && !(r->q = cm_outq_new(r->outs, r->nouts, r->writers)))
		r->writers = 0; /* no thread could be made: written here */
	return r->q;
}

int cm_cpuroute_shared(cm_cpuroute *r)
{
	if (!r->shared->buf.len)
		return 0;
	if (r->q && cm_outq_sync(r->q) < 0)
		return -1;
	return cm_evout_flush(r->shared);
}

/* N bytes at P to output G, after what it got before. */
static int out(cm_cpuroute *r, unsigned g, const char *p, size_t n)
{
	cm_outq *q = cm_cpuroute_queue(r);
	return q ? cm_outq_write(q, g, p, n) : cm_output_write(r->outs[g], p, n);
}

/* Output G's pending piece goes out, after the shared text.  0 or -1. */
static int flush_one(cm_cpuroute *r, unsigned g)
{
	size_t n = r->pend_len[g];
	if (!n)
		return 0;
	if (cm_cpuroute_shared(r) < 0)
		return -1;
	r->pend_len[g] = 0;
	return out(r, g, r->pend[g], n);
}

int cm_cpuroute_elem(cm_cpuroute *r, uint64_t index, uint64_t *gmask, uint64_t *emask)
{
	*gmask = *emask = 0;
	for (int g = r->ga; g <= r->gb; g++) {
		uint64_t bit = (uint64_t)1 << g;
		*emask |= bit;
		if (r->next[g] && index) {
			*gmask |= bit;
		} else if (r->next[g]) {
			if (flush_one(r, (unsigned)g) < 0 || cm_cpuroute_shared(r) < 0 || out(r, (unsigned)g, ",", 1) < 0)
				return -1;
		}
		r->next[g] = index + 1;
	}
	return 0;
}

int cm_cpuroute_span(cm_cpuroute *r, uint64_t mask, const char *p, size_t n)
{
	if (!n)
		return 0;
	while (mask) {
		unsigned g = (unsigned)__builtin_ctzll(mask);
		mask &= mask - 1;
		if (r->pend_len[g] && r->pend[g] + r->pend_len[g] == p) {
			r->pend_len[g] += n;
			continue;
		}
		if (flush_one(r, g) < 0)
			return -1;
		r->pend[g] = p;
		r->pend_len[g] = n;
	}
	return 0;
}

int cm_cpuroute_write(cm_cpuroute *r, unsigned g, const char *p, size_t n)
{
	return n ? out(r, g, p, n) : 0;
}

int cm_cpuroute_flush(cm_cpuroute *r)
{
	for (size_t g = 0; g < r->nouts; g++)
		if (flush_one(r, (unsigned)g) < 0)
			return -1;
	return 0;
}
