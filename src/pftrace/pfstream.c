/* pfstream.c - the Perfetto transcoder's front: the JSON document's text,
 * in pieces of any size, cut into its traceEvents elements for pfevent.c.
 *
 * The text is the program's own output, checked JSON, so this only walks
 * the top level (an object of members) and finds where each element ends
 * (jscan.h, which works across pieces); an element that lies whole in a
 * piece is encoded where it lies, one cut by a piece's end is copied until
 * it is whole.  The other top-level members (traceName, deviceProperties,
 * baseTimeNanoseconds...) have no place in a TrackEvent trace and
 * Perfetto's JSON import shows none of them, so they are skipped.  Memory:
 * the largest element, the interning tables (bounded, pfevent.c) and the
 * tracks. */
#include "config.h"
#include "pftrace/pftrace.h"
#include "pftrace/pfintern.h"
#include "base/diag.h"
#include "json/jscan.h"
#include "json/jval.h"
#include "base/exitcode.h"

#include <stdlib.h>
#include <string.h>

/* Pass the protobuf bytes on once this many are made. */
#define PFT_FLUSH (256u * 1024u)

enum state {
	S_START,      /* before the document's '{' */
	S_KEY,        /* before a member's key, or the '}' (first: FIRST set) */
	S_KEY_TEXT,   /* inside a key */
	S_COLON,      /* after a key */
	S_VALUE,      /* before a member's value */
	S_SKIP,       /* inside a member's value that is skipped */
	S_AFTER,      /* after a member: ',' or '}' */
	S_ELEM,       /* before an element, or the ']' (first: FIRST set) */
	S_ELEM_TEXT,  /* inside an element */
	S_ELEM_AFTER, /* after an element: ',' or ']' */
	S_END,        /* after the document: whitespace only */
};

struct cm_pft {
	cm_pft_sink sink;
	void *ctx;
	char *label;
	enum state st;
	int first, failed;
	int64_t offset;   /* of the piece being read, in the text */
	cm_jscan sc;
	cm_buf key;       /* a key's text, quotes and all */
	cm_buf elem;      /* an element cut by a piece's end */
	int64_t elem_off; /* where the element began */
	int in_events;    /* the member being read is traceEvents */
	int checked_key;  /* in_events is known for it */
	cm_arena *arena;  /* for decoding a key with escapes */
	cm_buf out;       /* protobuf made, not yet passed on */
	cm_pfev *ev;
};

cm_pft *cm_pft_new(cm_pft_sink sink, void *ctx, const char *label)
{
	cm_pft *t = cm_xcalloc(1, sizeof *t);
	t->sink = sink;
	t->ctx = ctx;
	t->label = cm_xstrdup(label);
	t->ev = cm_pfev_new(&t->out, t->label);
	t->arena = cm_arena_new();
	return t;
}

void cm_pft_free(cm_pft *t)
{
	if (!t)
		return;
	cm_pfev_free(t->ev);
	cm_arena_free(t->arena);
	cm_buf_free(&t->key);
	cm_buf_free(&t->elem);
	cm_buf_free(&t->out);
	free(t->label);
	free(t);
}

/* Pass the protobuf made on when there is enough (ALL: whatever there is). */
static int drain(cm_pft *t, int all)
{
	int rc;
	if (!t->out.len || (!all && t->out.len < PFT_FLUSH))
		return 0;
	rc = t->sink(t->ctx, t->out.p, t->out.len);
	t->out.len = 0;
	return rc;
}

/* Not a trace document (only where the JSON writer went wrong): -1. */
static int bad(cm_pft *t, int64_t off, const char *what)
{
	cm_error(CM_EXIT_DATA, t->label, off, "cannot be written as Perfetto protobuf: %s", what);
	t->failed = 1;
	return -1;
}

/* 1 when the key text KEY (with its quotes) is "traceEvents", also when
 * written with escapes (a repaired trace keeps its input's text). */
static int is_events_key(cm_pft *t, const cm_buf *key)
{
	const cm_jval *v;
	if (key->len == 13 && !memcmp(key->p, "\"traceEvents\"", 13))
		return 1;
	if (key->len >= 64 || !memchr(key->p, '\\', key->len))
		return 0;
	cm_arena_reset(t->arena);
	v = cm_jval_parse_py(t->arena, key->p, key->len);
	return cm_jval_streq(v, "traceEvents");
}

int cm_pft_write(cm_pft *t, const void *data, size_t n)
{
	const char *s = data;
	size_t i = 0, start;
	if (t->failed)
		return -1;
	while (i < n) {
		char c;
		if (t->st != S_KEY_TEXT && t->st != S_SKIP && t->st != S_ELEM_TEXT) {
			cm_jscan_skip_ws(s, n, &i);
			if (i == n)
				break;
		}
		c = s[i];
		switch (t->st) {
		case S_START:
			if (c != '{')
				return bad(t, t->offset + (int64_t)i, "the text is not a JSON object");
			i++;
			t->st = S_KEY;
			t->first = 1;
			break;
		case S_KEY:
		case S_AFTER:
			if (c == '}') {
				if (t->st == S_KEY && !t->first)
					return bad(t, t->offset + (int64_t)i, "a '}' after a ','");
				i++;
				t->st = S_END;
			} else if (t->st == S_AFTER) {
				if (c != ',')
					return bad(t, t->offset + (int64_t)i, "no ',' between members");
				i++;
				t->st = S_KEY;
				t->first = 0;
			} else {
				if (c != '"')
					return bad(t, t->offset + (int64_t)i, "a member without a string key");
				cm_jscan_begin(&t->sc, c);
				t->key.len = 0;
				t->checked_key = 0;
				t->st = S_KEY_TEXT;
			}
			break;
		case S_KEY_TEXT:
			start = i;
			if (cm_jscan_feed(&t->sc, s, n, &i))
				t->st = S_COLON;
			if (t->key.len < 64) /* only a short key can be traceEvents */
				cm_buf_put(&t->key, s + start, i - start < 64 ? i - start : 64);
			break;
		case S_COLON:
			if (c != ':')
				return bad(t, t->offset + (int64_t)i, "no ':' after a key");
			i++;
			t->st = S_VALUE;
			break;
		case S_VALUE:
			if (!t->checked_key) {
				t->in_events = is_events_key(t, &t->key);
				t->checked_key = 1;
			}
			if (t->in_events && c == '[') {
				i++;
				t->st = S_ELEM;
				t->first = 1;
				break;
			}
			if (t->in_events)
				return bad(t, t->offset + (int64_t)i, "traceEvents is not an array");
			cm_jscan_begin(&t->sc, c);
			t->st = S_SKIP;
			break;
		case S_SKIP:
			if (cm_jscan_feed(&t->sc, s, n, &i))
				t->st = S_AFTER;
			break;
		case S_ELEM:
		case S_ELEM_AFTER:
			if (c == ']') {
				if (t->st == S_ELEM && !t->first)
					return bad(t, t->offset + (int64_t)i, "a ']' after a ','");
				i++;
				t->st = S_AFTER;
			} else if (t->st == S_ELEM_AFTER) {
				if (c != ',')
					return bad(t, t->offset + (int64_t)i, "no ',' between elements");
				i++;
				t->st = S_ELEM;
				t->first = 0;
			} else {
				if (c != '{')
					return bad(t, t->offset + (int64_t)i, "a traceEvents element that is not an object");
				cm_jscan_begin(&t->sc, c);
				t->elem.len = 0;
				t->elem_off = t->offset + (int64_t)i;
				t->st = S_ELEM_TEXT;
			}
			break;
		case S_ELEM_TEXT:
			start = i;
			if (!cm_jscan_feed(&t->sc, s, n, &i)) {
				cm_buf_put(&t->elem, s + start, i - start);
				break;
			}
			t->st = S_ELEM_AFTER;
			if (t->elem.len) {
				cm_buf_put(&t->elem, s + start, i - start);
				if (cm_pfev_element(t->ev, t->elem.p, t->elem.len, t->elem_off) < 0)
					return t->failed = 1, -1;
				t->elem.len = 0;
			} else if (cm_pfev_element(t->ev, s + start, i - start, t->elem_off) < 0) {
				return t->failed = 1, -1;
			}
			if (drain(t, 0) < 0)
				return t->failed = 1, -1;
			break;
		case S_END:
			return bad(t, t->offset + (int64_t)i, "text after the document");
		}
	}
	t->offset += (int64_t)n;
	return 0;
}

int cm_pft_finish(cm_pft *t)
{
	if (t->failed)
		return -1;
	if (t->st != S_END)
		return bad(t, t->offset, "the document is not complete");
	cm_pfev_finish(t->ev);
	if (drain(t, 1) < 0)
		return t->failed = 1, -1;
	return 0;
}
