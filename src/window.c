/* window.c - the trace-window reader: yajl SAX in, one event value at a time out.
 *
 * The window can be larger than the CPU trace (a 1.5 GB window is realistic),
 * so it is never held: each element of "events" is built into an arena that
 * is reset after the element is handed on.  The merge reads the window three
 * times (see merge.c); the maps are only wanted on the first pass. */
#include "config.h"
#include "window.h"
#include "diag.h"
#include "exitcode.h"
#include "saxread.h"

#include <string.h>

/* Where the reader is in the document. */
enum where { W_START, W_TOP, W_SKIP, W_EVENTS, W_EVENT, W_MEMBER };

struct wread {
	cm_sax sax;
	const cm_window_sink *sink;
	enum where where;
	int depth;          /* nesting inside a skipped or built value */
	char key[32];       /* current top-level key (only short ones matter) */
	int key_is_long;
	int seen_events, seen_ua, seen_trm;
	uint64_t index;     /* events seen so far */
	cm_arena *arena;
	cm_jbuild build;
};

static const char *wname(struct wread *w) { return cm_input_name(w->sax.in); }

static int fail_shape(struct wread *w, const char *msg)
{
	cm_error(CM_EXIT_DATA, wname(w), cm_sax_offset(&w->sax), "%s", msg);
	return 0;
}

/* A value begins at the top level (after KEY): decide what to do with it. */
static int top_value(struct wread *w, int type)
{
	int want_member = w->sink->member && !w->key_is_long &&
			  (!strcmp(w->key, "user_annotations") || !strcmp(w->key, "thread_resource_map"));
	if (!w->key_is_long && !strcmp(w->key, "events")) {
		if (type != CM_J_ARR)
			return fail_shape(w, "window: \"events\" is not an array");
		w->where = W_EVENTS;
		return 1;
	}
	if (want_member) {
		cm_arena_reset(w->arena);
		cm_jbuild_begin(&w->build, w->arena);
		w->where = W_MEMBER;
		if (type == CM_J_ARR || type == CM_J_OBJ) {
			cm_jbuild_open(&w->build, type);
			return 1;
		}
		return -1; /* a scalar: caller builds and finishes it */
	}
	if (type == CM_J_ARR || type == CM_J_OBJ) {
		w->where = W_SKIP;
		w->depth = 1;
	}
	return 1;
}

/* A built member value is complete: hand it on. */
static int member_done(struct wread *w)
{
	w->where = W_TOP;
	return w->sink->member(w->sink->ctx, w->key, w->build.root, cm_sax_offset(&w->sax)) == 0;
}

/* An event value is complete: hand it on. */
static int event_done(struct wread *w)
{
	int rc = w->sink->event(w->sink->ctx, w->index, w->build.root, cm_sax_offset(&w->sax));
	w->index++;
	w->where = W_EVENTS;
	return rc == 0;
}

/* A scalar anywhere. */
static int on_scalar(struct wread *w, int type, const char *s, size_t n)
{
	switch (w->where) {
	case W_START:
		return fail_shape(w, "window: the top level is not an object");
	case W_TOP: {
		int r = top_value(w, type);
		if (r <= 0) {
			if (r == 0)
				return 0;
			cm_jbuild_scalar(&w->build, type, s, n);
			return member_done(w);
		}
		return 1;
	}
	case W_SKIP:
		return 1;
	case W_EVENTS:
		cm_error(CM_EXIT_DATA, wname(w), cm_sax_offset(&w->sax),
			 "window: events[%llu] is not an object", (unsigned long long)w->index);
		return 0;
	case W_EVENT:
	case W_MEMBER:
		cm_jbuild_scalar(&w->build, type, s, n);
		return 1;
	}
	return 1;
}

static int cb_null(void *c) { return on_scalar(c, CM_J_NULL, NULL, 0); }
static int cb_bool(void *c, int b) { return on_scalar(c, b ? CM_J_TRUE : CM_J_FALSE, NULL, 0); }
static int cb_number(void *c, const char *s, size_t n) { return on_scalar(c, CM_J_NUM, s, n); }
static int cb_string(void *c, const unsigned char *s, size_t n)
{
	return on_scalar(c, CM_J_STR, (const char *)s, n);
}

static int on_open(struct wread *w, int type)
{
	switch (w->where) {
	case W_START:
		if (type != CM_J_OBJ)
			return fail_shape(w, "window: the top level is not an object");
		w->where = W_TOP;
		return 1;
	case W_TOP:
		return top_value(w, type);
	case W_SKIP:
		w->depth++;
		return 1;
	case W_EVENTS:
		if (type != CM_J_OBJ) {
			cm_error(CM_EXIT_DATA, wname(w), cm_sax_offset(&w->sax),
				 "window: events[%llu] is not an object", (unsigned long long)w->index);
			return 0;
		}
		cm_arena_reset(w->arena);
		cm_jbuild_begin(&w->build, w->arena);
		cm_jbuild_open(&w->build, CM_J_OBJ);
		w->where = W_EVENT;
		return 1;
	case W_EVENT:
	case W_MEMBER:
		if (cm_jbuild_open(&w->build, type) < 0)
			return fail_shape(w, "window: values nested too deeply");
		return 1;
	}
	return 1;
}

static int on_close(struct wread *w)
{
	switch (w->where) {
	case W_SKIP:
		if (--w->depth == 0)
			w->where = W_TOP;
		return 1;
	case W_EVENTS:
		w->where = W_TOP; /* end of the events array */
		return 1;
	case W_EVENT:
		return cm_jbuild_close(&w->build) ? event_done(w) : 1;
	case W_MEMBER:
		return cm_jbuild_close(&w->build) ? member_done(w) : 1;
	default: /* W_TOP: the end of the document */
		w->where = W_START;
		return 1;
	}
}

static int cb_start_map(void *c) { return on_open(c, CM_J_OBJ); }
static int cb_start_array(void *c) { return on_open(c, CM_J_ARR); }
static int cb_end(void *c) { return on_close(c); }

static int cb_map_key(void *c, const unsigned char *s, size_t n)
{
	struct wread *w = c;
	if (w->where == W_EVENT || w->where == W_MEMBER) {
		cm_jbuild_key(&w->build, (const char *)s, n);
		return 1;
	}
	if (w->where != W_TOP)
		return 1;
	w->key_is_long = n >= sizeof w->key;
	if (!w->key_is_long) {
		memcpy(w->key, s, n);
		w->key[n] = 0;
		/* Python's dict would keep the last of a repeated member; refuse the
		 * ambiguity instead of guessing which one a writer meant */
		if ((!strcmp(w->key, "events") && w->seen_events++) ||
		    (!strcmp(w->key, "user_annotations") && w->seen_ua++) ||
		    (!strcmp(w->key, "thread_resource_map") && w->seen_trm++)) {
			cm_error(CM_EXIT_DATA, wname(w), cm_sax_offset(&w->sax),
				 "window: member \"%s\" appears twice", w->key);
			return 0;
		}
	}
	return 1;
}

static const yajl_callbacks window_callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end,
};

int cm_window_read(cm_input *in, const cm_window_sink *sink, const char *pass_label)
{
	struct wread w;
	int rc;
	memset(&w, 0, sizeof w);
	w.sink = sink;
	w.arena = cm_arena_new();
	rc = cm_sax_run(&w.sax, in, &window_callbacks, &w, pass_label);
	cm_arena_free(w.arena);
	if (rc == 0 && !w.seen_events)
		return cm_error(CM_EXIT_DATA, cm_input_name(in), -1,
				"window: no \"events\" member (not a trace window?)"),
		       -1;
	return rc;
}
