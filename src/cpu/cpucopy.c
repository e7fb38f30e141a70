/* cpucopy.c - phase 3 over the CPU trace: copy the text, splice in the GPU side.
 *
 * Phase 1 (C1, cpuscan.c) parsed and checked the whole trace, and its
 * splitter noted where every part of it lies (cm_cpuplan.layout: each
 * top-level key and value, the array's brackets, each element of
 * traceEvents; json/doclayout.h), whichever scan read it.  So this copy scans
 * nothing: it walks the layout beside the text, chunk by chunk, and copies
 * or skips what each record says.  Kept elements go out as the bytes they
 * were: numbers keep their exact digits, strings their escapes, and no time
 * is spent re-encoding.  The blanks between top-level parts do not go out;
 * between two kept elements the input's own separator does.
 *
 * What becomes of a member is decided from its record's tag before any of
 * its bytes (cpucopy_top_member): traceName replaced, deviceProperties
 * replaced or added before the first member other than schemaVersion,
 * traceEvents and traceName added at the '}' when the trace lacks them.
 * The bytes looked at are the first and last of each part (a key's quotes,
 * a value's brackets, the braces of the document and of each element) and
 * those between the parts (blanks and punctuation); a text that is not
 * where the layout puts it has changed since the first pass, and the run
 * fails (status 3), as it does on a layout that ends early.
 *
 * The array is cpuwalk.c's: kept elements and the bytes between them (one
 * comma and the input's whitespace) as runs, a dropped element skipped
 * with the separator before it, the GPU side in at its place; each kept
 * element to an element hook (the repair) by its range. */
#include "config.h"
#include "cpu/cpucopy.h"
#include "cpu/cpucopy_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "json/jscan.h"
#include "json/doclayout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cpucopy_changed(struct copy *c)
{
	return cm_fail(CM_EXIT_IO, cm_input_name(c->in), (int64_t)cm_input_offset(c->in),
			"the input changed between the two passes");
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

/* The new "deviceProperties" member. */
static void devices_member(struct copy *c)
{
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

/* The plan of the top level, a member at a time (cpucopy_int.h): a
 * function of the tags alone, so that check_cpucopy tests it without text. */
int cpucopy_top_member(struct cpucopy_top *t, int tag, const cm_cpucopy_hooks *h, int devprops)
{
	int act = CP_COPY;
	if (t->devices_due && tag != CM_DOCLAYOUT_NAME + CM_CPUKEY_SCHEMA) {
		t->devices_due = 0;
		act |= CP_DEVICES_BEFORE;
	}
	if (tag == CM_DOCLAYOUT_ARRAY) {
		t->seen_events = 1;
		act |= CP_ARRAY;
	} else if (tag == CM_DOCLAYOUT_NAME + CM_CPUKEY_NAME) {
		t->seen_name = 1;
		if (h->trace_name)
			act |= CP_NAME;
	} else if (tag == CM_DOCLAYOUT_NAME + CM_CPUKEY_DEVICES && h->devices && devprops == CM_DEVPROPS_EMPTY) {
		act |= CP_DEVICES;
	}
	return act;
}

/* ... and at the '}' (cpucopy_int.h). */
int cpucopy_top_end(struct cpucopy_top *t, const cm_cpucopy_hooks *h)
{
	int add = 0;
	if (t->devices_due)
		add |= CP_ADD_DEVICES;
	if (!t->seen_events)
		add |= CP_ADD_EVENTS;
	if (!t->seen_name && h->trace_name)
		add |= CP_ADD_NAME;
	t->devices_due = 0;
	return add;
}

/* The layout's next place (cpucopy_int.h). */
int cpucopy_place(struct copy *c, uint64_t *at)
{
	uint64_t d;
	if (cpucopy_varint(c, &d) < 0 || c->lpos + d < c->lpos)
		return -1;
	*at = c->lpos += d;
	return 0;
}

/* The next member's record, or the '}''s (cpucopy_int.h): the key's range
 * becomes the part in hand, the value's waits in val_at, val_end. */
int cpucopy_next_member(struct copy *c)
{
	uint64_t tag, at;
	if (cpucopy_varint(c, &tag) < 0)
		return cpucopy_changed(c);
	if (!tag) { /* the '}' */
		if (cpucopy_place(c, &c->r_at) < 0)
			return cpucopy_changed(c);
		c->r_end = c->lpos = c->r_at + 1;
		c->st = T_CLOSE;
		return 0;
	}
	if (tag > CM_DOCLAYOUT_NAME + CM_CPUKEY_DEVICES || cpucopy_place(c, &c->r_at) < 0 ||
	    cpucopy_place(c, &c->r_end) < 0 || c->r_end == c->r_at || cpucopy_place(c, &c->val_at) < 0)
		return cpucopy_changed(c);
	if (tag == CM_DOCLAYOUT_ARRAY) {
		c->val_end = c->lpos = c->val_at + 1;
	} else {
		if (cpucopy_place(c, &at) < 0 || at == c->val_at)
			return cpucopy_changed(c);
		c->val_end = at;
	}
	c->tag = (int)tag;
	c->st = T_KEY;
	return 0;
}

/* The part in hand begins with the byte CH: write what goes before its
 * bytes (or in their place), and say whether they go out.  0, or -1. */
static int part_begin(struct copy *c, char ch)
{
	c->copying = 0;
	switch (c->st) {
	case T_OPEN:
		if (ch != '{')
			return cpucopy_changed(c);
		cm_buf_putc(&c->eo->buf, '{');
		return 0;
	case T_KEY:
		if (ch != '"')
			return cpucopy_changed(c);
		c->act = cpucopy_top_member(&c->top, c->tag, c->hooks, c->plan->devprops);
		if (c->act & CP_DEVICES_BEFORE)
			devices_member(c);
		if (c->members++)
			cm_buf_putc(&c->eo->buf, ',');
		c->copying = 1;
		return 0;
	case T_VALUE:
		if ((c->act & CP_VALUE) == CP_ARRAY) {
			if (ch != '[')
				return cpucopy_changed(c);
			cm_buf_putc(&c->eo->buf, '[');
			c->eo->first = 1;
			c->st = T_ARRAY;
			c->lphase = L_NEXT;
			return 0;
		}
		if (cm_jscan_ws(ch) || ch == ',' || ch == ':' || ch == ']' || ch == '}')
			return cpucopy_changed(c);
		if ((c->act & CP_VALUE) == CP_NAME)
			return name_value(c);
		if ((c->act & CP_VALUE) == CP_DEVICES)
			cm_buf_put(&c->eo->buf, c->hooks->devices, c->hooks->devices_len);
		else
			c->copying = 1;
		return 0;
	default: { /* T_CLOSE */
		int add;
		if (ch != '}')
			return cpucopy_changed(c);
		add = cpucopy_top_end(&c->top, c->hooks);
		if (add & CP_ADD_DEVICES)
			devices_member(c);
		if (add & CP_ADD_EVENTS) {
			member_head(c, "\"traceEvents\"", 13);
			cm_buf_putc(&c->eo->buf, '[');
			c->eo->first = 1;
			if (cpucopy_events_end(c) < 0)
				return -1;
		}
		if (add & CP_ADD_NAME) {
			member_head(c, "\"traceName\"", 11);
			if (name_value(c) < 0)
				return -1;
		}
		cm_buf_putc(&c->eo->buf, '}');
		c->st = T_END;
		return 0;
	}
	}
}

/* The part in hand ended with the byte LAST (its FIRST began it): the next
 * part.  0, or -1. */
static int part_end(struct copy *c, char first, char last)
{
	switch (c->st) {
	case T_OPEN:
		return cpucopy_next_member(c);
	case T_KEY:
		if (last != '"' || c->r_end - c->r_at < 2)
			return cpucopy_changed(c);
		cm_buf_putc(&c->eo->buf, ':');
		c->st = T_VALUE;
		c->r_at = c->val_at;
		c->r_end = c->val_end;
		return 0;
	case T_VALUE:
		if ((first == '"' || first == '{' || first == '[') &&
		    (last != (first == '{' ? '}' : first == '[' ? ']' : '"') || c->r_end - c->r_at < 2))
			return cpucopy_changed(c);
		return cpucopy_next_member(c);
	default:
		return 0;
	}
}

/* Walk the layout over one chunk S[0..N), at text offset BASE: the bytes
 * before the part in hand are checked and let go, its own go out or not
 * (c->copying).  0 or -1. */
static int feed(struct copy *c, const char *s, size_t n, uint64_t base)
{
	size_t i = 0, take;
	while (i < n) {
		uint64_t pos = base + i;
		if (c->st == T_ARRAY) {
			if (cpucopy_array_feed(c, s, n, base, &i) < 0)
				return -1;
			if (c->par_stopped) /* the rest of the array on threads */
				return 0;
			continue;
		}
		if (c->st == T_END || pos < c->r_at) { /* blanks, and between parts punctuation */
			take = c->st == T_END || c->r_at - pos > n - i ? n - i : (size_t)(c->r_at - pos);
			for (size_t k = i; k < i + take; k++)
				if (!cm_jscan_ws(s[k]) && (c->st == T_END || (s[k] != ',' && s[k] != ':')))
					return cpucopy_changed(c);
			i += take;
			continue;
		}
		if (pos == c->r_at) {
			c->first = s[i];
			if (part_begin(c, s[i]) < 0)
				return -1;
			if (c->st == T_ARRAY || c->st == T_END) { /* the '[' or '}' taken */
				i++;
				c->lpos = base + i;
				continue;
			}
		}
		take = c->r_end - pos > n - i ? n - i : (size_t)(c->r_end - pos);
		if (c->copying)
			cm_buf_put(&c->eo->buf, s + i, take);
		i += take;
		if (base + i == c->r_end && part_end(c, c->first, s[i - 1]) < 0)
			return -1;
	}
	return 0;
}
/* The walk stopped at a mark (cpucopypar.c): the rest of the array on
 * threads, then the text after it, read at offsets, walked as before, and
 * the check a pass makes at its end.  0, or -1 after a report. */
static int copy_rest(struct copy *c)
{
	cm_buf b = {0};
	uint64_t at, size = cm_input_text_size(c->in);
	int rc = 0;
	cm_buf_grow(&b, 1u << 20);
	/* the parts, and after them the walk, which may stop again at a
	 * mark past a part too long to run (cpucopypar.c) */
	while (rc == 0 && c->par_stopped) {
		if (cpucopy_par_run(c) < 0) {
			rc = -1;
			break;
		}
		for (at = c->lpos; at < size && rc == 0 && !c->par_stopped; at += b.len) {
			b.len = size - at < (1u << 20) ? (size_t)(size - at) : (1u << 20);
			rc = cm_input_pread(c->in, b.p, b.len, at) < 0 || feed(c, b.p, b.len, at) < 0 ? -1 : 0;
		}
	}
	cm_buf_free(&b);
	return rc < 0 ? -1 : cm_input_pass_check(c->in);
}

int cm_cpucopy_run(cm_input *in, const cm_cpuplan *plan, const cm_cpucopy_hooks *hooks, cm_evout *eo)
{
	struct copy c;
	const char *chunk;
	size_t len;
	int rc = 0;
	uint64_t open_at;
	memset(&c, 0, sizeof c);
	c.plan = plan;
	c.hooks = hooks;
	c.eo = eo;
	c.in = in;
	c.top.devices_due = hooks->devices && plan->devprops == CM_DEVPROPS_ABSENT;
	/* kept elements in runs, to EO or routed (--split), but with an
	 * element hook that takes them one by one, and after the careful scan
	 * (its --split writes each event by the hook, as it always has); but
	 * encoded parts (hooks->enc) run after it too: the output's bytes
	 * depend on the parts, which must not depend on the scan */
	c.runs = (!plan->careful || (hooks->enc && !hooks->element && !hooks->route)) &&
		 (!hooks->element || (hooks->route && !hooks->route->whole));
	c.by_elem = !c.runs && hooks->element;
	if (!plan->layout) /* no scan noted it: the scan failed, or the text it read is not this */
		return cpucopy_changed(&c);
	if (fflush(plan->layout) != 0 || fseek(plan->layout, 0, SEEK_SET) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
	c.layout = plan->layout;
	if (cpucopy_varint(&c, &open_at) < 0)
		return cpucopy_changed(&c);
	c.st = T_OPEN;
	c.r_at = open_at;
	c.r_end = c.lpos = open_at + 1;
	if (cpucopy_par_begin(&c) < 0)
		return -1;
	cm_progress_begin("writing the merged trace", cm_input_raw_size(in));
	while ((rc = cm_input_next(in, &chunk, &len)) == 1) {
		if (c.par_at && !cm_input_can_pread(in))
			c.par_at = 0; /* a gzip text, a pipe's first pass: one thread */
		if (feed(&c, chunk, len, cm_input_offset(in)) < 0 || (eo->buf.len >= (1u << 20) && cm_evout_flush(eo) < 0)) {
			rc = -1;
			break;
		}
		if (c.par_stopped)
			break;
		cm_progress_update(cm_input_raw_done(in));
	}
	if (rc == 1 && c.par_stopped)
		rc = copy_rest(&c);
	cm_buf_free(&c.elem_text);
	free((void *)c.marks);
	if (rc < 0)
		return -1;
	if (c.st != T_END)
		return cpucopy_changed(&c);
	return 0;
}
