/* cpucopy.c - phase 3 over the CPU trace: copy the text, splice in the GPU side.
 *
 * Phase 1 (C1, cpuscan.c) parsed and checked the whole trace, so this
 * copy only needs to find the boundaries of top-level members and of the
 * elements of traceEvents.  It does that with a small scanner that tracks
 * strings, escapes and bracket depth, and copies each kept element as the
 * bytes it was: numbers keep their exact digits, strings their escapes, and
 * no time is spent re-encoding.  Whitespace between elements is replaced by
 * single commas; whitespace inside an element stays.  If the file changed
 * between the passes the counts disagree and the run fails.
 *
 * After the parallel scan, traceEvents is not scanned at all: the scan's
 * splitter noted where every element lies (cm_cpuplan.layout), so the copy
 * walks that list instead of the bytes.  Kept elements and the bytes between
 * them (one comma and the input's whitespace) go out as they are, runs of
 * them as one piece; a dropped element is skipped with the separator before
 * it; the GPU side goes in at its place.  The work per element is two
 * varints and two comparisons, and the array is copied at the speed of
 * memory.  The only bytes looked at are each element's first and last (a
 * '{' and a '}', else the file has changed) and those after the last one. */
#include "config.h"
#include "cpu/cpucopy.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "json/jscan.h"
#include "json/jval.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum state {
	ST_START,  /* before the top-level '{' */
	ST_TOP,    /* in the top object, between members */
	ST_KEY,    /* in a top-level key */
	ST_COLON,  /* after a key */
	ST_VALUE,  /* before a top-level value */
	ST_RAW,    /* in a top-level value being copied (or skipped) */
	ST_EVENTS, /* in traceEvents, between elements */
	ST_ELEM,   /* in an element */
	ST_ARRAY,  /* in traceEvents, walking cm_cpuplan.layout */
	ST_END     /* after the top-level '}' */
};

enum key_kind { K_OTHER, K_EVENTS, K_NAME, K_SCHEMA, K_DEVICES };

/* The layout is decoded up to LAYOUT_RING elements ahead of the walk, and
 * the walk asks the cache for the first and last bytes of the element
 * LAYOUT_AHEAD places ahead.  Those two bytes are all the walk reads of an
 * element (about 240 bytes apart in a torch trace), just written by the
 * read-ahead thread on another CPU: the two compares that wait for them
 * had 45% of the walk's perf samples (the 1 GB pair).  With the look-ahead
 * and a whole element taken in one step (array_walk), the walk's samples
 * fell by 10-20%; the 16-core machine's copy step went from 0.15-0.20 s to
 * 0.17 s (run AG), which its noise cannot tell apart. */
#define LAYOUT_RING 128
#define LAYOUT_AHEAD 8

struct copy {
	const cm_cpuplan *plan;
	const cm_cpucopy_hooks *hooks;
	cm_evout *eo;
	cm_input *in;
	enum state st;
	cm_jscan sc;                    /* the value / element scanner */
	int esc;                        /* in a key: after a backslash */
	int copying;                    /* bytes of the current value go out */
	cm_buf key;                     /* the raw key, quotes included */
	int key_esc, key_kind;
	int members;                    /* top-level members written */
	int seen_events, seen_name;
	uint64_t elem, next_drop, kept;
	int inserted;
	int devices_due; /* hooks->devices is to be added as a new member */
	cm_buf elem_text; /* the element, when hooks->element wants it */
	cm_buf gap;       /* the bytes since the end of the last element */
	/* ST_ARRAY */
	FILE *layout;     /* cm_cpuplan.layout, being read, or NULL */
	enum { L_NEXT, L_GAP, L_ELEM, L_CLOSE } lphase;
	uint64_t start, end; /* the text offsets of the element in hand */
	int gap_out, elem_out; /* its separator, itself go out */
	uint64_t gmask, emask; /* with hooks->route: the outputs they go to */
	const char *pend;      /* bytes of the chunk in hand to go out next, */
	size_t pend_len;       /* ... as one piece (flush_pending) */
	/* the places (text offsets) of the elements from c->elem on, decoded
	 * from the layout ahead of the walk: element k's at k % LAYOUT_RING */
	uint64_t lq_start[LAYOUT_RING], lq_end[LAYOUT_RING];
	uint64_t lq_done;      /* elements whose places are decoded */
	int lq_bad;            /* the layout ended, or was bad, at lq_done */
};

/* The next varint of c->layout into *V: 0, or -1 at its end. */
static int next_varint(struct copy *c, uint64_t *v)
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

/* Decode the layout's places ahead, up to LAYOUT_RING elements past the
 * walk's (not past the array's end); at a bad or missing varint, stop
 * there for good (the walk reports it when it gets there). */
static void layout_ahead(struct copy *c)
{
	uint64_t limit = c->plan->events < c->elem + LAYOUT_RING ? c->plan->events : c->elem + LAYOUT_RING;
	while (!c->lq_bad && c->lq_done < limit) {
		uint64_t gap, len, k = c->lq_done;
		if (next_varint(c, &gap) < 0 || next_varint(c, &len) < 0 || !len) {
			c->lq_bad = 1;
			return;
		}
		c->lq_start[k % LAYOUT_RING] = k ? c->lq_end[(k - 1) % LAYOUT_RING] + gap : gap;
		c->lq_end[k % LAYOUT_RING] = c->lq_start[k % LAYOUT_RING] + len;
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

/* Where the bytes of the current value or element go. */
static cm_buf *sink_buf(struct copy *c)
{
	return c->st == ST_ELEM && c->hooks->element ? &c->elem_text : &c->eo->buf;
}

/* An element's text is complete: hand it to the element hook. */
static int elem_hand_over(struct copy *c)
{
	int rc = c->hooks->element(c->hooks->ctx, c->elem_text.p, c->elem_text.len, c->eo);
	c->elem_text.len = 0;
	return rc;
}


static int changed(struct copy *c)
{
	return cm_fail(CM_EXIT_IO, cm_input_name(c->in), (int64_t)cm_input_offset(c->in),
			"the input changed between the two passes");
}

/* Which top-level key the raw key text (with quotes) is. */
static int key_kind_of(struct copy *c)
{
	const char *s = c->key.p + 1;
	size_t n = c->key.len - 2;
	if (c->key_esc) { /* rare: decode the escapes to compare */
		cm_arena *a = cm_arena_new();
		const cm_jval *v = cm_jval_parse_py(a, c->key.p, c->key.len);
		int k = cm_jval_streq(v, "traceEvents")        ? K_EVENTS
			: cm_jval_streq(v, "traceName")        ? K_NAME
			: cm_jval_streq(v, "schemaVersion")    ? K_SCHEMA
			: cm_jval_streq(v, "deviceProperties") ? K_DEVICES
							       : K_OTHER;
		cm_arena_free(a);
		return k;
	}
	if (n == 11 && !memcmp(s, "traceEvents", 11))
		return K_EVENTS;
	if (n == 9 && !memcmp(s, "traceName", 9))
		return K_NAME;
	if (n == 13 && !memcmp(s, "schemaVersion", 13))
		return K_SCHEMA;
	if (n == 16 && !memcmp(s, "deviceProperties", 16))
		return K_DEVICES;
	return K_OTHER;
}

/* Write a top-level member's separator and key: `,KEY:`. */
static void member_head(struct copy *c, const char *key, size_t n)
{
	if (c->members++)
		cm_buf_putc(&c->eo->buf, ',');
	cm_buf_put(&c->eo->buf, key, n);
	cm_buf_putc(&c->eo->buf, ':');
}

/* The new "deviceProperties" member, when it is due. */
static void devices_member(struct copy *c)
{
	if (!c->devices_due)
		return;
	c->devices_due = 0;
	member_head(c, "\"deviceProperties\"", 18);
	cm_buf_put(&c->eo->buf, c->hooks->devices, c->hooks->devices_len);
}

/* The GPU metadata, once, at the insertion point. */
static int insert(struct copy *c)
{
	c->inserted = 1;
	return c->hooks->insert(c->hooks->ctx, c->eo);
}

/* The end of traceEvents (or of the events the input lacked): metadata if
 * not yet placed, then the appended events and the ']'. */
static int events_end(struct copy *c)
{
	if (!c->inserted && insert(c) < 0)
		return -1;
	if (c->hooks->append(c->hooks->ctx, c->eo) < 0)
		return -1;
	cm_buf_putc(&c->eo->buf, ']');
	return 0;
}

/* Element c->elem begins: is it kept?  A dropped one (a profiler span
 * event, made again at the end) is passed over; before a kept one the GPU
 * metadata goes in when its place has come.  1 kept, 0 dropped, -1 after a
 * report. */
static int take_next(struct copy *c)
{
	const cm_cpuplan *p = c->plan;
	int rc;
	if (c->next_drop < p->ndropped && p->dropped[c->next_drop] == c->elem) {
		c->next_drop++;
		return 0;
	}
	if (c->hooks->keep && (rc = c->hooks->keep(c->hooks->ctx, c->elem)) <= 0)
		return rc; /* cut (--steps, --range), like a dropped one */
	if (!c->inserted && c->kept == p->leading_m && insert(c) < 0)
		return -1;
	c->kept++;
	return 1;
}

/* The separator before kept element c->elem, the same in both copies: none
 * for the first in the array, the input's own (a comma and its blanks) for
 * any other that has one, and a comma, written here, for the input's first
 * element when the metadata went in before it.  1 when the caller is to
 * write the input's separator. */
static int separator(struct copy *c)
{
	int own = !c->eo->first && c->elem;
	if (!c->eo->first && !c->elem)
		cm_buf_putc(&c->eo->buf, ',');
	c->eo->first = 0;
	return own;
}

/* Start element number c->elem at the '{'.  Returns 0 or -1. */
static int elem_begin(struct copy *c)
{
	int rc;
	if (c->elem >= c->plan->events)
		return changed(c);
	if ((rc = take_next(c)) <= 0) { /* a dropped element takes its separator along */
		c->copying = 0;
		c->gap.len = 0;
		return rc;
	}
	if (!c->hooks->element && separator(c))
		cm_buf_put(&c->eo->buf, c->gap.p, c->gap.len);
	c->gap.len = 0;
	c->copying = 1;
	return 0;
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
		return changed(c);
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

/* ST_ARRAY over S[*I..N), the chunk at text offset BASE: the elements as
 * the layout places them (see the top of the file), until the chunk ends or
 * the ']' has been taken (then ST_TOP).  0, or -1 after a report. */
static int array_feed(struct copy *c, const char *s, size_t n, uint64_t base, size_t *ip)
{
	int rc = array_walk(c, s, n, base, ip);
	/* the chunk goes away with the next read: its piece goes out now */
	return flush_pending(c) < 0 ? -1 : rc;
}

/* array_feed's walk: the kept bytes go to out_span, in order; what else
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
			if (c->elem == p->events) {
				c->lphase = L_CLOSE;
				break;
			}
			if (c->lq_done <= c->elem + LAYOUT_AHEAD)
				layout_ahead(c);
			if (c->elem >= c->lq_done) /* the layout is bad here */
				return changed(c);
			c->start = c->lq_start[c->elem % LAYOUT_RING];
			c->end = c->lq_end[c->elem % LAYOUT_RING];
			if (c->start < pos)
				return changed(c);
			layout_prefetch(c, c->elem + LAYOUT_AHEAD, s, n, base);
			/* take_next and separator may write (the metadata before
			 * the first kept element past the leading "M" ones, a
			 * comma before element 0): the piece pending goes first
			 * then, and only then, so that the kept elements of a
			 * chunk stay one piece (flushed at every element, each
			 * went through the event buffer: a memcpy of the trace) */
			if ((!c->elem || (!c->inserted && c->kept == p->leading_m)) && flush_pending(c) < 0)
				return -1;
			if ((kept = take_next(c)) < 0)
				return -1;
			if (c->hooks->route) {
				if (route_next(c, kept, s, n, base, &i) < 0)
					return -1;
				break;
			}
			c->elem_out = kept;
			c->gap_out = kept && separator(c);
			c->lphase = L_GAP;
			if (c->gap_out && c->end - base <= n) {
				/* the usual case: a kept element whole in the
				 * chunk, after its own separator: both join the
				 * piece at once */
				if (s[c->start - base] != '{' || s[c->end - base - 1] != '}')
					return changed(c);
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
					return changed(c);
				c->lphase = L_ELEM;
			}
			break;
		case L_ELEM:
			take = c->end - pos < n - i ? (size_t)(c->end - pos) : n - i;
			if ((c->elem_out && out_span(c, s + i, take) < 0) ||
			    (c->emask && cm_cpuroute_span(c->hooks->route, c->emask, s + i, take) < 0))
				return -1;
			i += take;
			if (base + i == c->end) {
				if (s[i - 1] != '}')
					return changed(c);
				c->elem++;
				c->lphase = L_NEXT;
			}
			break;
		case L_CLOSE: /* after the last element: blanks, then ']' */
			if (s[i] == ']') {
				if (flush_pending(c) < 0 || events_end(c) < 0)
					return -1;
				c->st = ST_TOP;
				*ip = i + 1;
				return 0;
			}
			if (!cm_jscan_ws(s[i]))
				return changed(c);
			i++;
			break;
		}
	}
	*ip = i;
	return 0;
}

/* Run the state machine over one chunk, at text offset BASE.  Returns 0 or
 * -1. */
static int feed(struct copy *c, const char *s, size_t n, uint64_t base)
{
	size_t i = 0, run = 0; /* s[run..i) is pending output when copying */
	while (i < n) {
		char ch = s[i];
		switch (c->st) {
		case ST_START:
			if (ch == '{') {
				cm_buf_putc(&c->eo->buf, '{');
				c->st = ST_TOP;
			} else if (!cm_jscan_ws(ch)) {
				return changed(c);
			}
			i++;
			break;
		case ST_TOP:
			if (ch == '"') {
				c->key.len = 0;
				c->key_esc = 0;
				cm_buf_putc(&c->key, '"');
				c->st = ST_KEY;
				c->esc = 0;
			} else if (ch == '}') {
				devices_member(c);
				if (!c->seen_events) {
					member_head(c, "\"traceEvents\"", 13);
					cm_buf_putc(&c->eo->buf, '[');
					c->eo->first = 1;
					if (events_end(c) < 0)
						return -1;
				}
				if (!c->seen_name && c->hooks->trace_name) {
					member_head(c, "\"traceName\"", 11);
					cm_jw_string(&c->eo->buf, c->hooks->trace_name, strlen(c->hooks->trace_name));
				}
				cm_buf_putc(&c->eo->buf, '}');
				c->st = ST_END;
			} else if (ch != ',' && !cm_jscan_ws(ch)) {
				return changed(c);
			}
			i++;
			break;
		case ST_KEY:
			cm_buf_putc(&c->key, ch);
			i++;
			if (c->esc) {
				c->esc = 0;
			} else if (ch == '\\') {
				c->esc = c->key_esc = 1;
			} else if (ch == '"') {
				c->key_kind = key_kind_of(c);
				c->st = ST_COLON;
			}
			break;
		case ST_COLON:
			if (ch == ':')
				c->st = ST_VALUE;
			else if (!cm_jscan_ws(ch))
				return changed(c);
			i++;
			break;
		case ST_VALUE:
			if (cm_jscan_ws(ch)) {
				i++;
				break;
			}
			if (c->key_kind != K_SCHEMA)
				devices_member(c);
			member_head(c, c->key.p, c->key.len);
			if (c->key_kind == K_EVENTS) {
				if (ch != '[')
					return changed(c);
				c->seen_events = 1;
				cm_buf_putc(&c->eo->buf, '[');
				c->eo->first = 1;
				c->st = c->layout ? ST_ARRAY : ST_EVENTS;
				c->lphase = L_NEXT;
				c->end = base + i + 1;
				i++;
				break;
			}
			c->copying = 1;
			if (c->key_kind == K_NAME) {
				c->seen_name = 1;
				if (c->hooks->trace_name) {
					cm_jw_string(&c->eo->buf, c->hooks->trace_name, strlen(c->hooks->trace_name));
					c->copying = 0;
				}
			} else if (c->key_kind == K_DEVICES && c->hooks->devices &&
				   c->plan->devprops == CM_DEVPROPS_EMPTY) {
				cm_buf_put(&c->eo->buf, c->hooks->devices, c->hooks->devices_len);
				c->copying = 0;
			}
			cm_jscan_begin(&c->sc, ch);
			run = i;
			c->st = ST_RAW;
			break;
		case ST_RAW:
			if (cm_jscan_feed(&c->sc, s, n, &i)) {
				if (c->copying)
					cm_buf_put(&c->eo->buf, s + run, i - run);
				c->copying = 0;
				c->st = ST_TOP;
			}
			break;
		case ST_EVENTS:
			if (ch == '{') {
				if (elem_begin(c) < 0)
					return -1;
				run = i;
				cm_jscan_begin(&c->sc, ch);
				c->st = ST_ELEM;
			} else if (ch == ']') {
				if (c->elem != c->plan->events)
					return changed(c);
				if (events_end(c) < 0)
					return -1;
				i++;
				c->st = ST_TOP;
			} else if (ch == ',' || cm_jscan_ws(ch)) {
				if (c->elem) /* the bytes between two elements */
					cm_buf_putc(&c->gap, ch);
				i++;
			} else {
				return changed(c);
			}
			break;
		case ST_ELEM:
			if (cm_jscan_feed(&c->sc, s, n, &i)) {
				if (c->copying) {
					cm_buf_put(sink_buf(c), s + run, i - run);
					if (c->hooks->element && elem_hand_over(c) < 0)
						return -1;
				}
				c->copying = 0;
				c->elem++;
				c->st = ST_EVENTS;
			}
			break;
		case ST_ARRAY:
			if (array_feed(c, s, n, base, &i) < 0)
				return -1;
			break;
		case ST_END:
			if (!cm_jscan_ws(ch))
				return changed(c);
			i++;
			break;
		}
	}
	/* the chunk ended inside a value: pass on what we have of it */
	if ((c->st == ST_RAW || c->st == ST_ELEM) && c->copying)
		cm_buf_put(sink_buf(c), s + run, n - run);
	return 0;
}

int cm_cpucopy_run(cm_input *in, const cm_cpuplan *plan, const cm_cpucopy_hooks *hooks, cm_evout *eo)
{
	struct copy c;
	const char *chunk;
	size_t len;
	int rc;
	memset(&c, 0, sizeof c);
	c.plan = plan;
	c.hooks = hooks;
	c.eo = eo;
	c.in = in;
	c.devices_due = hooks->devices && plan->devprops == CM_DEVPROPS_ABSENT;
	/* the layout, after the parallel scan; not with an element hook, which
	 * takes the elements one by one (but for --split's, routed in runs) */
	if (plan->layout && !plan->careful && (!hooks->element || hooks->route)) {
		if (fflush(plan->layout) != 0 || fseek(plan->layout, 0, SEEK_SET) != 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
		c.layout = plan->layout;
	}
	cm_progress_begin("writing the merged trace", cm_input_raw_size(in));
	while ((rc = cm_input_next(in, &chunk, &len)) == 1) {
		if (feed(&c, chunk, len, cm_input_offset(in)) < 0 || (eo->buf.len >= (1u << 20) && cm_evout_flush(eo) < 0)) {
			cm_buf_free(&c.key);
			cm_buf_free(&c.elem_text);
			cm_buf_free(&c.gap);
			return -1;
		}
		cm_progress_update(cm_input_raw_done(in));
	}
	cm_buf_free(&c.key);
	cm_buf_free(&c.elem_text);
	cm_buf_free(&c.gap);
	if (rc < 0)
		return -1;
	if (c.st != ST_END)
		return changed(&c);
	return 0;
}
