/* winfast.c - passes 2 and 3 over the window: split with jscan, parse each event alone.
 *
 * yajl is the validating reader of pass 1; afterwards the window is known to
 * be well-formed JSON with the expected shape, so the later passes only need
 * the event boundaries (a byte scan) and each event's values (a small
 * recursive-descent parse of a few hundred bytes into an arena). */
#include "config.h"
#include "gpu/winfast.h"
#include "base/diag.h"
#include "exitcode.h"
#include "json/jscan.h"
#include "json/jval.h"

#include <string.h>

enum state { ST_START, ST_TOP, ST_KEY, ST_COLON, ST_VALUE, ST_SKIP, ST_EVENTS, ST_ELEM, ST_END };

struct fast {
	cm_input *in;
	const cm_window_sink *sink;
	enum state st;
	cm_jscan sc;
	cm_buf key, elem;
	int key_esc, key_is_events;
	uint64_t index;
	cm_arena *arena;
};

static int changed(struct fast *f, uint64_t off)
{
	return cm_error(CM_EXIT_IO, cm_input_name(f->in), (int64_t)off,
			"the window changed between the passes (it no longer reads as it did)"),
	       -1;
}

/* Decide whether the key just read (raw, with quotes) is "events". */
static int key_is_events(struct fast *f)
{
	int yes;
	if (!f->key_esc)
		return f->key.len == 8 && !memcmp(f->key.p, "\"events\"", 8);
	cm_arena_reset(f->arena);
	yes = cm_jval_streq(cm_jval_parse_py(f->arena, f->key.p, f->key.len), "events");
	return yes;
}

/* An element's text is complete: parse it and hand it over. */
static int element_done(struct fast *f, uint64_t end_off)
{
	cm_jval *v;
	int rc;
	cm_arena_reset(f->arena);
	v = cm_jval_parse_py(f->arena, f->elem.p, f->elem.len);
	if (!v || v->type != CM_J_OBJ)
		return changed(f, end_off);
	rc = f->sink->event(f->sink->ctx, f->index++, v, (int64_t)end_off);
	f->elem.len = 0;
	return rc;
}

static int feed(struct fast *f, const char *s, size_t n)
{
	uint64_t base = cm_input_offset(f->in);
	size_t i = 0, run = 0;
	while (i < n) {
		char ch = s[i];
		switch (f->st) {
		case ST_START:
			if (ch == '{')
				f->st = ST_TOP;
			else if (!cm_jscan_ws(ch))
				return changed(f, base + i);
			i++;
			break;
		case ST_TOP:
			if (ch == '"') {
				f->key.len = 0;
				f->key_esc = 0;
				cm_buf_putc(&f->key, '"');
				f->sc.esc = 0;
				f->st = ST_KEY;
			} else if (ch == '}') {
				f->st = ST_END;
			} else if (ch != ',' && !cm_jscan_ws(ch)) {
				return changed(f, base + i);
			}
			i++;
			break;
		case ST_KEY:
			cm_buf_putc(&f->key, ch);
			i++;
			if (f->sc.esc)
				f->sc.esc = 0;
			else if (ch == '\\')
				f->sc.esc = f->key_esc = 1;
			else if (ch == '"') {
				f->key_is_events = key_is_events(f);
				f->st = ST_COLON;
			}
			break;
		case ST_COLON:
			if (ch == ':')
				f->st = ST_VALUE;
			else if (!cm_jscan_ws(ch))
				return changed(f, base + i);
			i++;
			break;
		case ST_VALUE:
			if (cm_jscan_ws(ch)) {
				i++;
			} else if (f->key_is_events) {
				if (ch != '[')
					return changed(f, base + i);
				f->st = ST_EVENTS;
				i++;
			} else {
				cm_jscan_begin(&f->sc, ch);
				f->st = ST_SKIP;
			}
			break;
		case ST_SKIP:
			if (cm_jscan_feed(&f->sc, s, n, &i))
				f->st = ST_TOP;
			break;
		case ST_EVENTS:
			if (ch == '{') {
				/* most elements lie whole in the chunk: parse them in place */
				size_t used;
				cm_jval *v;
				cm_arena_reset(f->arena);
				v = cm_jval_parse_prefix(f->arena, s + i, n - i, &used);
				if (v) {
					i += used;
					if (f->sink->event(f->sink->ctx, f->index++, v, (int64_t)(base + i)) < 0)
						return -1;
					break;
				}
				cm_jscan_begin(&f->sc, ch);
				run = i;
				f->st = ST_ELEM;
			} else if (ch == ']') {
				f->st = ST_TOP;
				i++;
			} else if (ch == ',' || cm_jscan_ws(ch)) {
				i++;
			} else {
				return changed(f, base + i);
			}
			break;
		case ST_ELEM:
			if (cm_jscan_feed(&f->sc, s, n, &i)) {
				cm_buf_put(&f->elem, s + run, i - run);
				f->st = ST_EVENTS;
				if (element_done(f, base + i) < 0)
					return -1;
			}
			break;
		case ST_END:
			if (!cm_jscan_ws(ch))
				return changed(f, base + i);
			i++;
			break;
		}
	}
	if (f->st == ST_ELEM)
		cm_buf_put(&f->elem, s + run, n - run); /* the rest comes with the next chunk */
	return 0;
}

int cm_window_fast_read(cm_input *in, const cm_window_sink *sink, const char *label)
{
	struct fast f;
	const char *chunk;
	size_t len;
	int rc;
	memset(&f, 0, sizeof f);
	f.in = in;
	f.sink = sink;
	f.arena = cm_arena_new();
	cm_progress_begin(label, cm_input_raw_size(in));
	while ((rc = cm_input_next(in, &chunk, &len)) == 1) {
		if (feed(&f, chunk, len) < 0) {
			rc = -1;
			break;
		}
		cm_progress_update(cm_input_raw_done(in));
	}
	if (rc == 0 && f.st != ST_END)
		rc = changed(&f, cm_input_offset(in));
	cm_buf_free(&f.key);
	cm_buf_free(&f.elem);
	cm_arena_free(f.arena);
	return rc < 0 ? -1 : 0;
}
