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
 * '{' and a '}', else the file has changed) and those after the last one.
 * That walk is cpuwalk.c's; this file has the top level and the elements
 * taken one at a time (the careful reader's trace, an element hook). */
#include "config.h"
#include "cpu/cpucopy.h"
#include "cpu/cpucopy_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "json/jscan.h"
#include "json/jval.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum key_kind { K_OTHER, K_EVENTS, K_NAME, K_SCHEMA, K_DEVICES };


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


int cpucopy_changed(struct copy *c)
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

/* The new traceName's value: the hooks', or with a route that names each
 * output, each output's own (after what they share so far).  0 or -1. */
static int name_value(struct copy *c)
{
	const cm_cpuroute *r = c->hooks->route;
	cm_buf b = {0};
	int rc = 0;
	if (!r || !r->names) {
		cm_jw_string(&c->eo->buf, c->hooks->trace_name, strlen(c->hooks->trace_name));
		return 0;
	}
	if (cm_evout_flush(c->eo) < 0)
		return -1;
	for (size_t g = 0; rc == 0 && g < r->nouts; g++) {
		b.len = 0;
		cm_jw_string(&b, r->names[g], strlen(r->names[g]));
		rc = cm_output_write(r->outs[g], b.p, b.len);
	}
	cm_buf_free(&b);
	return rc;
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
int cpucopy_events_end(struct copy *c)
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
int cpucopy_take_next(struct copy *c)
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
int cpucopy_separator(struct copy *c)
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
		return cpucopy_changed(c);
	if ((rc = cpucopy_take_next(c)) <= 0) { /* a dropped element takes its separator along */
		c->copying = 0;
		c->gap.len = 0;
		return rc;
	}
	if (!c->hooks->element && cpucopy_separator(c))
		cm_buf_put(&c->eo->buf, c->gap.p, c->gap.len);
	c->gap.len = 0;
	c->copying = 1;
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
				return cpucopy_changed(c);
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
					if (cpucopy_events_end(c) < 0)
						return -1;
				}
				if (!c->seen_name && c->hooks->trace_name) {
					member_head(c, "\"traceName\"", 11);
					if (name_value(c) < 0)
						return -1;
				}
				cm_buf_putc(&c->eo->buf, '}');
				c->st = ST_END;
			} else if (ch != ',' && !cm_jscan_ws(ch)) {
				return cpucopy_changed(c);
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
				return cpucopy_changed(c);
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
					return cpucopy_changed(c);
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
					if (name_value(c) < 0)
						return -1;
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
					return cpucopy_changed(c);
				if (cpucopy_events_end(c) < 0)
					return -1;
				i++;
				c->st = ST_TOP;
			} else if (ch == ',' || cm_jscan_ws(ch)) {
				if (c->elem) /* the bytes between two elements */
					cm_buf_putc(&c->gap, ch);
				i++;
			} else {
				return cpucopy_changed(c);
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
			if (cpucopy_array_feed(c, s, n, base, &i) < 0)
				return -1;
			break;
		case ST_END:
			if (!cm_jscan_ws(ch))
				return cpucopy_changed(c);
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
	if (plan->layout && !plan->careful && (!hooks->element || (hooks->route && !hooks->route->whole))) {
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
		return cpucopy_changed(&c);
	return 0;
}
