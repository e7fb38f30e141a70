/* pfcut.c - the walk of the JSON document's text that finds its
 * traceEvents elements, in pieces of any size (the Perfetto transcoder's
 * front: pfstream.c runs it on the writer's thread at -j 1, and on the
 * workers, a chunk each, from -j 2).
 *
 * The text is the program's own output, checked JSON, so this only walks
 * the top level (an object of members) and finds where each element ends
 * (jscan.h, which works across pieces); an element that lies whole in a
 * piece is handed on where it lies, one cut by a piece's end is copied
 * until it is whole.  The other top-level members (traceName,
 * deviceProperties, baseTimeNanoseconds...) have no place in a TrackEvent
 * trace and Perfetto's JSON import shows none of them, so they are
 * skipped.  The walk's state is all in struct cm_pfcut, so that a worker
 * can take it over where the chunk before its own ended (pfstream.c). */
#include "config.h"
#include "pftrace/pfstream.h"
#include "base/diag.h"
#include "json/jscan.h"
#include "json/jval.h"
#include "base/exitcode.h"

#include <stdlib.h>
#include <string.h>

void cm_pfcut_init(struct cm_pfcut *t, const char *label)
{
	memset(t, 0, sizeof *t);
	t->label = label;
}

void cm_pfcut_free(struct cm_pfcut *t)
{
	cm_buf_free(&t->key);
	cm_buf_free(&t->elem);
	cm_arena_free(t->arena);
	memset(t, 0, sizeof *t);
}

void cm_pfcut_swap(struct cm_pfcut *a, struct cm_pfcut *b)
{
	struct cm_pfcut x = *a;
	*a = *b;
	*b = x;
}

/* Not a trace document (only where the JSON writer went wrong): -1. */
static int bad(struct cm_pfcut *t, int64_t off, const char *what)
{
	if (!t->quiet)
		cm_error(CM_EXIT_DATA, t->label, off, "cannot be written as Perfetto protobuf: %s", what);
	t->failed = 1;
	return -1;
}

/* 1 when the key text KEY (with its quotes) is "traceEvents", also when
 * written with escapes (a repaired trace keeps its input's text). */
static int is_events_key(struct cm_pfcut *t, const cm_buf *key)
{
	const cm_jval *v;
	if (key->len == 13 && !memcmp(key->p, "\"traceEvents\"", 13))
		return 1;
	if (key->len >= 64 || !memchr(key->p, '\\', key->len))
		return 0;
	if (!t->arena)
		t->arena = cm_arena_new();
	cm_arena_reset(t->arena);
	v = cm_jval_parse_py(t->arena, key->p, key->len);
	return cm_jval_streq(v, "traceEvents");
}

/* In an element that began at S[t->elem_at] (its brace taken), at S[*I]:
 * that element and those after it in the usual way (", {"), many at a
 * time (cm_jscan_elements), handed on (emit), up to the end of the piece or of
 * that run; an element cut by the piece's end is copied (t->elem), to go
 * on with the next piece.  0 or -1. */
static int elements(struct cm_pfcut *t, const char *s, size_t n, size_t *i)
{
	uint32_t spans[2 * 256], start = (uint32_t)t->elem_at;
	int after;
	size_t k, got = cm_jscan_elements(&t->sc, s, n, i, &start, spans, 256, n, &after);
	for (k = 0; k < got; k++) {
		if (t->emit(t->ctx, s + spans[2 * k], spans[2 * k + 1] - spans[2 * k], t->offset + (int64_t)spans[2 * k]) < 0)
			return -1;
	}
	if (after) { /* the gap after the last is the walk's (S_ELEM_AFTER) */
		t->st = S_ELEM_AFTER;
		return 0;
	}
	/* the piece ran out inside the one that began at START */
	t->elem_off = t->offset + (int64_t)start;
	cm_buf_put(&t->elem, s + start, n - start);
	return 0;
}

/* Read the text S[0..N), the next piece of the document: the top level
 * walked, the elements handed on (emit).  0, or -1 after reporting (not
 * reported when QUIET: only FAILED set). */
int cm_pfcut_scan(struct cm_pfcut *t, const char *s, size_t n)
{
	size_t i = 0, start;
	int rc;
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
				t->sc.depth = 1; /* its brace taken: cm_jscan_elements goes on inside it */
				t->elem.len = 0;
				t->elem_off = t->offset + (int64_t)i;
				t->elem_at = i++;
				t->st = S_ELEM_TEXT;
				if (elements(t, s, n, &i) < 0)
					return t->failed = 1, -1;
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
				rc = t->emit(t->ctx, t->elem.p, t->elem.len, t->elem_off);
				t->elem.len = 0;
			} else {
				rc = t->emit(t->ctx, s + start, i - start, t->elem_off);
			}
			if (rc < 0)
				return t->failed = 1, -1;
			break;
		case S_END:
			return bad(t, t->offset + (int64_t)i, "text after the document");
		}
	}
	t->offset += (int64_t)n;
	return 0;
}

