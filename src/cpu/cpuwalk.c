/* cpuwalk.c - the copy of traceEvents by the trace's layout (see the top
 * of cpucopy.c): the places of the elements decoded ahead of the walk, the
 * kept ones and the bytes between them out as runs, --split's routing of
 * them to its files (cpuroute.c), or each to an element hook. */
#include "config.h"
#include "cpu/cpucopy_int.h"
#include "base/diag.h"
#include "json/jscan.h"

#include <string.h>

/* The next varint of c->layout into *V: 0, or -1 at its end. */
static inline int next_varint(struct copy *c, uint64_t *v)
{
	int ch;
	*v = 0;
	for (unsigned shift = 0; shift < 64 && (ch = getc_unlocked(c->layout)) != EOF; shift += 7) {
		*v |= (uint64_t)(ch & 0x7f) << shift;
		if (!(ch & 0x80))
			return 0;
	}
	return -1;
}

int cpucopy_varint(struct copy *c, uint64_t *v) { return next_varint(c, v); }

/* Decode the layout's places ahead, up to LAYOUT_RING elements past the
 * walk's (not past the array's end); at a bad or missing varint, stop
 * there for good (the walk reports it when it gets there). */
static void layout_ahead(struct copy *c)
{
	uint64_t limit = c->plan->events < c->elem + LAYOUT_RING ? c->plan->events : c->elem + LAYOUT_RING;
	while (!c->lq_bad && c->lq_done < limit) {
		uint64_t gap, len, k = c->lq_done, a, b;
		/* a record is GAP+1 and LEN (json/doclayout.h): 0 ends the array */
		if (next_varint(c, &gap) < 0 || !gap || next_varint(c, &len) < 0 || !len ||
		    (a = c->lpos + gap - 1) < c->lpos || (b = a + len) < a) {
			c->lq_bad = 1;
			return;
		}
		c->lq_start[k % LAYOUT_RING] = a;
		c->lq_end[k % LAYOUT_RING] = c->lpos = b;
		c->lq_done++;
	}
}

/* Ask the cache for the first and last bytes of element K, if decoded and
 * in the chunk S[0..N) at text offset BASE. */
static void layout_prefetch(const struct copy *c, uint64_t k, const char *s, size_t n, uint64_t base)
{
	uint64_t a, b;
	if (k >= c->lq_done)
		return;
	a = c->lq_start[k % LAYOUT_RING];
	b = c->lq_end[k % LAYOUT_RING] - 1;
	if (a >= base && a - base < n)
		__builtin_prefetch(s + (a - base));
	if (b >= base && b - base < n)
		__builtin_prefetch(s + (b - base));
}
/* The pending piece goes out: a large one straight from the chunk (after
 * what the event buffer holds), a small one through that buffer.  Copying
 * every kept element into the buffer was a memcpy of the whole CPU trace
 * on the one thread that writes.  0, or -1 after a report. */
static int flush_pending(struct copy *c)
{
	int rc = 0;
	if (c->hooks->route && cm_cpuroute_flush(c->hooks->route) < 0)
		return -1;
	if (!c->pend_len)
		return 0;
	if (c->pend_len >= (64u << 10))
		rc = cm_evout_flush(c->eo) < 0 || cm_output_write(c->eo->out, c->pend, c->pend_len) < 0 ? -1 : 0;
	else
		cm_buf_put(&c->eo->buf, c->pend, c->pend_len);
	c->pend_len = 0;
	return rc;
}

/* P[0..N) of the chunk in hand goes out after the pending piece: joined to
 * it when it follows it in the chunk.  0, or -1 after a report. */
static int out_span(struct copy *c, const char *p, size_t n)
{
	if (!n)
		return 0;
	if (c->pend_len && c->pend + c->pend_len == p) {
		c->pend_len += n;
		return 0;
	}
	if (flush_pending(c) < 0)
		return -1;
	c->pend = p;
	c->pend_len = n;
	return 0;
}

static int array_walk(struct copy *c, const char *s, size_t n, uint64_t base, size_t *ip);

/* --split (hooks->route): element c->elem, KEPT or not, whose place in
 * S[0..N) (at text offset BASE) the walk at *IP has reached, goes to the
 * outputs the keep hook chose; one whole in the chunk at once, as the plain
 * walk's usual case, another through L_GAP and L_ELEM.  0, or -1. */
static int route_next(struct copy *c, int kept, const char *s, size_t n, uint64_t base, size_t *ip)
{
	uint64_t pos = base + *ip, gap_only;
	c->elem_out = c->gap_out = 0;
	c->gmask = c->emask = 0;
	c->lphase = L_GAP;
	if (!kept)
		return 0;
	if (cm_cpuroute_elem(c->hooks->route, c->elem, &c->gmask, &c->emask) < 0)
		return -1;
	if (c->end - base > n)
		return 0;
	if (s[c->start - base] != '{' || s[c->end - base - 1] != '}')
		return cpucopy_changed(c);
	/* those that got the element before: with the separator between */
	if (cm_cpuroute_span(c->hooks->route, c->gmask, s + *ip, (size_t)(c->end - pos)) < 0)
		return -1;
	gap_only = c->emask & ~c->gmask;
	if (cm_cpuroute_span(c->hooks->route, gap_only, s + (c->start - base), (size_t)(c->end - c->start)) < 0)
		return -1;
	*ip = (size_t)(c->end - base);
	c->elem++;
	c->gmask = c->emask = 0;
	c->lphase = L_NEXT;
	return 0;
}

/* Kept element c->elem, TEXT[0..LEN), to the element hook.  0, or -1. */
static int hand_over(struct copy *c, const char *text, size_t len)
{
	/* what went before it goes first: the hook writes to the event buffer */
	if (flush_pending(c) < 0)
		return -1;
	return c->hooks->element(c->hooks->ctx, text, len, c->eo);
}

/* T_ARRAY over S[*I..N), the chunk at text offset BASE: the elements as
 * the layout places them (see the top of the file), until the chunk ends or
 * the ']' has been taken (then the next member).  0, or -1 after a report. */
int cpucopy_array_feed(struct copy *c, const char *s, size_t n, uint64_t base, size_t *ip)
{
	int rc = array_walk(c, s, n, base, ip);
	/* the chunk goes away with the next read: its piece goes out now */
	return flush_pending(c) < 0 ? -1 : rc;
}

/* cpucopy_array_feed's walk: the kept bytes go to out_span, in order; what else
 * goes out (the metadata, a comma, the end) after flush_pending. */
static int array_walk(struct copy *c, const char *s, size_t n, uint64_t base, size_t *ip)
{
	const cm_cpuplan *p = c->plan;
	size_t i = *ip;
	while (i < n) {
		uint64_t pos = base + i;
		size_t take;
		int kept;
		switch (c->lphase) {
		case L_NEXT: /* the next element's place, and what becomes of it */
			if (c->par_at && c->elem == c->par_at) {
				/* (--split: each output's first is the route's) */
				if (c->inserted && (c->hooks->route || !c->eo->first)) { /* the rest on threads */
					c->par_stopped = 1;
					c->par_off = pos;
					*ip = i;
					return 0;
				}
				cpucopy_par_next(c);
			}
			if (c->elem == p->events) { /* the array's end: the ']' (a 0, its distance) */
				uint64_t zero;
				if (c->lq_done < c->elem)
					layout_ahead(c);
				if (c->lq_done != c->elem || next_varint(c, &zero) < 0 || zero ||
				    cpucopy_place(c, &c->start) < 0 || c->start < pos)
					return cpucopy_changed(c);
				c->lphase = L_CLOSE;
				break;
			}
			if (c->lq_done <= c->elem + LAYOUT_AHEAD)
				layout_ahead(c);
			if (c->elem >= c->lq_done) /* the layout is bad here */
				return cpucopy_changed(c);
			c->start = c->lq_start[c->elem % LAYOUT_RING];
			c->end = c->lq_end[c->elem % LAYOUT_RING];
			if (c->start < pos)
				return cpucopy_changed(c);
			layout_prefetch(c, c->elem + LAYOUT_AHEAD, s, n, base);
			/* cpucopy_take_next and cpucopy_separator may write
			 * (the metadata before the first kept element past the
			 * leading "M" ones, a comma before element 0): the
			 * piece pending goes first then, and only then, so that
			 * the kept elements of a chunk stay one piece (flushed
			 * at every element, each went through the event
			 * buffer: a memcpy of the trace) */
			if ((!c->elem || (!c->inserted && c->kept == p->leading_m)) && flush_pending(c) < 0)
				return -1;
			if ((kept = cpucopy_take_next(c)) < 0)
				return -1;
			if (c->runs && c->hooks->route) {
				if (route_next(c, kept, s, n, base, &i) < 0)
					return -1;
				break;
			}
			c->elem_out = kept;
			c->gap_out = kept && !c->by_elem && cpucopy_separator(c);
			c->lphase = L_GAP;
			if (c->by_elem && kept && c->end - base <= n) {
				/* the usual case: a kept element whole in the chunk
				 * goes to the hook from there */
				if (s[c->start - base] != '{' || s[c->end - base - 1] != '}')
					return cpucopy_changed(c);
				if (hand_over(c, s + (c->start - base), (size_t)(c->end - c->start)) < 0)
					return -1;
				i = (size_t)(c->end - base);
				c->elem++;
				c->lphase = L_NEXT;
			} else if (c->gap_out && c->end - base <= n) {
				/* the usual case: a kept element whole in the
				 * chunk, after its own separator: both join the
				 * piece at once */
				if (s[c->start - base] != '{' || s[c->end - base - 1] != '}')
					return cpucopy_changed(c);
				if (out_span(c, s + i, (size_t)(c->end - pos)) < 0)
					return -1;
				i = (size_t)(c->end - base);
				c->elem++;
				c->lphase = L_NEXT;
			}
			break;
		case L_GAP:
			take = c->start - pos < n - i ? (size_t)(c->start - pos) : n - i;
			if ((c->gap_out && out_span(c, s + i, take) < 0) ||
			    (c->gmask && cm_cpuroute_span(c->hooks->route, c->gmask, s + i, take) < 0))
				return -1;
			i += take;
			if (i < n) {
				if (s[i] != '{')
					return cpucopy_changed(c);
				c->lphase = L_ELEM;
			}
			break;
		case L_ELEM:
			take = c->end - pos < n - i ? (size_t)(c->end - pos) : n - i;
			if (c->by_elem && c->elem_out)
				cm_buf_put(&c->elem_text, s + i, take);
			else if ((c->elem_out && out_span(c, s + i, take) < 0) ||
			    (c->emask && cm_cpuroute_span(c->hooks->route, c->emask, s + i, take) < 0))
				return -1;
			i += take;
			if (base + i == c->end) {
				if (s[i - 1] != '}')
					return cpucopy_changed(c);
				if (c->by_elem && c->elem_out) {
					if (hand_over(c, c->elem_text.p, c->elem_text.len) < 0)
						return -1;
					c->elem_text.len = 0;
				}
				c->elem++;
				c->lphase = L_NEXT;
			}
			break;
		case L_CLOSE: /* after the last element: blanks, then the ']' at c->start */
			if (pos == c->start) {
				if (s[i] != ']')
					return cpucopy_changed(c);
				if (flush_pending(c) < 0 || cpucopy_events_end(c) < 0)
					return -1;
				c->lpos = pos + 1;
				*ip = i + 1;
				return cpucopy_next_member(c);
			}
			if (!cm_jscan_ws(s[i]))
				return cpucopy_changed(c);
			i++;
			break;
		}
	}
	*ip = i;
	return 0;
}
