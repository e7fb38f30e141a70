/* window.c - the trace-window reader: docread over "events", plus the window's rules.
 *
 * The window can be larger than the CPU trace (a 1.5 GB window is realistic),
 * so it is never held: each element of "events" is handed on alone.  Two
 * readers: the careful one (docread, yajl), which names every fault with
 * its place, and the parallel one (docsplit, jvalid), which reads valid
 * windows several times faster and hands faulty ones to the careful one. */
#include "config.h"
#include "gpu/window.h"
#include "base/diag.h"
#include "json/docread.h"
#include "json/docsplit.h"
#include "base/exitcode.h"
#include "json/jvalid.h"
#include "base/opool.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of window text per batch of the parallel reader. */
#define CM_WINDOW_BATCH (256u << 10)

/* The reader's state: the sink, and whether the document looks like a
 * Chrome trace rather than a window. */
struct wread {
	const cm_window_sink *sink;
	int trace_events; /* a top-level "traceEvents" member */
};

/* 1 when KEY[0..KLEN) is a member that may repeat, the last one counting as
 * in Python's json: those of format version 2, which the reference ignores
 * (so a window it merges is never refused for them). */
static int repeatable(const char *key, size_t klen)
{
	return (klen == 14 && !memcmp(key, "window_version", 14)) ||
	       (klen == 17 && !memcmp(key, "device_properties", 17));
}

/* Only these members matter to the merge (1: at most once, 2: may repeat);
 * "traceEvents" is noted. */
static int wants(void *ctx, const char *key, size_t klen)
{
	struct wread *w = ctx;
	if (klen == 11 && !memcmp(key, "traceEvents", 11))
		w->trace_events = 1;
	if (!w->sink->member)
		return 0;
	if (repeatable(key, klen))
		return 2;
	return (klen == 16 && !memcmp(key, "user_annotations", 16)) ||
	       (klen == 19 && !memcmp(key, "thread_resource_map", 19));
}

static int member(void *ctx, const char *key, size_t klen, const cm_jval *val, int64_t offset)
{
	struct wread *w = ctx;
	return w->sink->member(w->sink->ctx, key, val, offset);
}

static int element(void *ctx, uint64_t index, const cm_jval *el, int64_t offset)
{
	struct wread *w = ctx;
	return w->sink->event(w->sink->ctx, index, el, offset);
}

int cm_window_read(cm_input *in, const cm_window_sink *sink, const char *pass_label, int *trace_events)
{
	struct wread w = {sink, 0};
	cm_docread_sink ds = {
		.member = member, .wants_member = wants, .element = sink->event ? element : NULL, .ctx = &w,
	};
	int seen = 0;
	if (cm_docread_run(in, "events", "window", &ds, pass_label, &seen) < 0)
		return -1;
	if (!seen && w.trace_events)
		return cm_fail(CM_EXIT_DATA, cm_input_name(in), -1,
				"window: no \"events\" member: this is a Chrome trace (\"traceEvents\"), not a trace "
				"window: are the window and the CPU trace swapped?");
	if (!seen)
		return cm_fail(CM_EXIT_DATA, cm_input_name(in), -1,
				"window: no \"events\" member (not a trace window?)");
	if (trace_events)
		*trace_events = w.trace_events;
	return 0;
}

/* ----------------------------------------------------- the parallel reader */

/* One worker's own state: where its events are parsed. */
struct pworker {
	const cm_window_psink *sink;
	void *wctx;
	cm_arena *arena;
	cm_jbuild build; /* the event's tree, built as it is checked */
};

/* The reading thread's state. */
struct pread {
	const cm_window_psink *sink;
	cm_opool *pool;
	int trace_events, seen_ua, seen_trm, bad; /* bad: a fault the careful reader must name */
	cm_arena *arena;
	const char *name;
};

/* A worker: check each element of the batch, parse it, hand it on. */
static int pwork(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct pworker *w = wctx;
	cm_docsplit_elem e;
	for (size_t at = 0; cm_docsplit_next(in, &at, &e);) {
		cm_jval *v;
		cm_arena_reset(w->arena);
		/* checked and built in one pass; the batch holds the text
		 * while the event is digested, so the tree may point into it */
		cm_jbuild_begin(&w->build, w->arena);
		w->build.borrow = 1;
		if (!cm_jvalid_build(e.text, e.len, 2, &w->build))
			return -2;
		v = w->build.root;
		if (!v || v->type != CM_J_OBJ)
			return -2; /* not an object: the careful reader names it */
		if (w->sink->event(w->wctx, e.index, v, e.end_offset, out) < 0)
			return -1;
	}
	return w->sink->event(w->wctx, 0, NULL, 0, out);
}

static int pcollect(void *sctx, cm_buf *out)
{
	struct pread *r = sctx;
	return r->sink->collect(r->sink->ctx, out);
}

static int pbatch(void *ctx, cm_buf *b)
{
	return cm_opool_put(((struct pread *)ctx)->pool, b) < 0 ? -1 : 0;
}

/* The sink's member callback, with the pool's sink held off: the workers
 * hand the digest's results to the same tables (opool.c drains on them). */
static int sink_member(struct pread *r, const char *name, const cm_jval *v, int64_t end_offset)
{
	int rc;
	cm_opool_lock(r->pool);
	rc = r->sink->member(r->sink->ctx, name, v, end_offset);
	cm_opool_unlock(r->pool);
	return rc;
}

/* A top-level member: noted, or checked, parsed and handed on. */
static int pmember(void *ctx, const char *key, size_t klen, const char *val, size_t vlen, int64_t end_offset)
{
	struct pread *r = ctx;
	const cm_jval *k, *v;
	const char *name = NULL;
	int *seen = NULL, rc;
	cm_arena_reset(r->arena);
	if (!(k = cm_docsplit_member_key(r->arena, key, klen, val, vlen))) {
		r->bad = 1;
		return -1;
	}
	if (k->len == 11 && !memcmp(k->s, "traceEvents", 11))
		r->trace_events = 1;
	if (k->len == 16 && !memcmp(k->s, "user_annotations", 16)) {
		seen = &r->seen_ua;
		name = "user_annotations";
	} else if (k->len == 19 && !memcmp(k->s, "thread_resource_map", 19)) {
		seen = &r->seen_trm;
		name = "thread_resource_map";
	} else if (repeatable(k->s, k->len) && r->sink->member) {
		if (!(v = cm_jval_parse_py(r->arena, val, vlen))) {
			r->bad = 1;
			return -1;
		}
		return sink_member(r, k->len == 14 ? "window_version" : "device_properties", v, end_offset);
	}
	if (!seen || !r->sink->member)
		return 0;
	if (*seen) { /* named twice: the careful reader refuses it */
		r->bad = 1;
		return -1;
	}
	*seen = 1;
	if (r->sink->member_text) {
		cm_opool_lock(r->pool); /* as in sink_member */
		rc = r->sink->member_text(r->sink->ctx, name, val, vlen, end_offset);
		cm_opool_unlock(r->pool);
		if (rc <= 0)
			return rc;
	}
	if (!(v = cm_jval_parse_py(r->arena, val, vlen))) {
		r->bad = 1;
		return -1;
	}
	return sink_member(r, name, v, end_offset);
}

int cm_window_read_parallel(cm_input *in, const cm_window_psink *sink, const char *label, int *trace_events)
{
	struct pread r;
	struct pworker *w = cm_xcalloc((size_t)sink->workers, sizeof *w);
	void **wctx = cm_xcalloc((size_t)sink->workers, sizeof *wctx);
	cm_docsplit_sink ds = {pmember, pbatch, &r, NULL, NULL, sink->stats ? &sink->stats->cut : NULL,
			       sink->stats ? &sink->stats->cut_bytes : NULL,
			       sink->stats ? &sink->stats->cut_ran : NULL,
			       sink->stats ? &sink->stats->cut_preempted : NULL};
	int seen = 0, rc, prc;
	memset(&r, 0, sizeof r);
	r.sink = sink;
	r.arena = cm_arena_new();
	for (int i = 0; i < sink->workers; i++) {
		w[i].sink = sink;
		w[i].wctx = sink->wctx[i];
		w[i].arena = cm_arena_new();
		wctx[i] = &w[i];
	}
	r.pool = sink->crew ? cm_opool_new_crew(sink->crew, pwork, wctx, pcollect, &r)
			    : cm_opool_new(sink->workers, sink->caller_helps, pwork, wctx, pcollect, &r);
	cm_opool_set_stats(r.pool, sink->stats);
	cm_opool_set_done(r.pool, cm_docsplit_done);
	rc = cm_docsplit_run(in, "events", CM_WINDOW_BATCH, &ds, label, &seen);
	prc = cm_opool_finish(r.pool);
	for (int i = 0; i < sink->workers; i++)
		cm_arena_free(w[i].arena);
	free(w);
	free(wctx);
	cm_arena_free(r.arena);
	if (rc == CM_DOCSPLIT_IOERR)
		return -1;
	if (rc == CM_DOCSPLIT_INVALID || r.bad || prc <= -2)
		return 1;
	if (rc != CM_DOCSPLIT_OK || prc < 0)
		return -1;
	if (!seen) /* the careful reader says which way the window is wrong */
		return 1;
	if (trace_events)
		*trace_events = r.trace_events;
	return 0;
}
