/* gpuplan.c - the plan: once correlations are resolved, the records (not
 * the JSON) read for what the metadata, written before the CPU events, must
 * know: the rows (devices, streams, processes, threads), the time extent and
 * the annotation spans; by worker threads over blocks of records, folded
 * into the tables in window order. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/opool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Remember the first start of a row key (dict.setdefault). */
static void setdefault(cm_hmap *m, int64_t key, cm_int ns)
{
	int created;
	struct first_ts *f = cm_hmap_put(m, &key, &created);
	if (created)
		f->ns = ns;
}

static void add_pair(cm_hmap *m, int64_t a, int64_t b)
{
	int64_t key[2] = {a, b};
	cm_hmap_put(m, key, NULL);
}

/* ts and dur (us) of START/END ns, as the output will hold them. */
static void x_times(const cm_gpu *g, cm_int start, cm_int end, double *ts, double *dur)
{
	*ts = cm_jw_us_double(start - g->base_ns);
	*dur = cm_jw_us_double(end - start);
}

/* Widen [*S, *E] to take in [START, END]. */
static void widen(cm_int_a8 *s, cm_int_a8 *e, cm_int start, cm_int end)
{
	*s = start < *s ? start : *s;
	*e = end > *e ? end : *e;
}

/* Widen the span of user annotation EXT on (DEV, STREAM) to [START, END]. */
static void span_note(cm_gpu *g, int64_t ext, int64_t dev, int64_t stream, cm_int start, cm_int end)
{
	int created;
	struct gpu_ann_span_slot *ss = cm_idmap_put(g->plan.spans, ext, &created);
	struct gpu_ann_span *sp;
	if (created) {
		ss->dev = dev;
		ss->stream = stream;
		ss->start = start;
		ss->end = end;
	} else if (ss->dev == dev && ss->stream == stream) {
		widen(&ss->start, &ss->end, start, end);
	} else {
		int64_t key[3] = {ext, dev, stream};
		sp = cm_hmap_put(g->plan.spans_more, key, &created);
		if (created) {
			sp->start = start;
			sp->end = end;
		} else {
			widen(&sp->start, &sp->end, start, end);
		}
	}
}

/* The plan over many threads.  What the plan learns from the records -
 * the first start of each process and device row, the thread and stream
 * rows, the spans of the user annotations, the extent - is either order-free
 * (minima, maxima, counts) or decided by first appearance.  So a worker
 * reads a block of records into a plan_part: the extent, and a list of
 * notes, one per row key or span new to the block, in the order they first
 * appear (a span's note widened in place as the block goes on).  The notes
 * are applied to the tables when the block's turn comes, so every table
 * sees its keys in window order, as a single reader would have: the same
 * rows, the same first starts, the same first stream of each span.  The
 * lookups the rules make (links, the thread map) only read tables that
 * nothing writes any more. */
enum { NOTE_PROC = 1, NOTE_THREAD, NOTE_DEV, NOTE_STREAM, NOTE_SPAN, NOTE_DEVROW };

struct plan_note {
	int64_t kind, a, b, c;
	cm_int start, end;
};

/* The block's extent and counts: they begin a worker's output. */
struct plan_head {
	double min_ts, max_end_ts;
	uint64_t x_events, x_outside, api_rows, st_x_events;
	int need_overhead;
	double cut_min, cut_max; /* when cutting: the extent of the drawn records before the cut */
};

struct plan_part {
	cm_gpu *g;
	cm_hmap *seen; /* (kind, a, b, c) -> offset of its note in notes */
	cm_buf notes;
	struct plan_head h;
	int64_t last[NOTE_DEVROW + 1][3]; /* the last row key noted of each kind */
	int have_last[NOTE_DEVROW + 1];
};

/* Note a row key or span (KIND, A, B, C) seen in the block: a new key gets
 * a note; a span seen again is widened.  A row key seen again changes
 * nothing, and it is nearly always the last one of its kind (the API calls
 * of one thread, the kernels of one stream come in runs): that one is
 * turned away before the hash map. */
static void note(struct plan_part *pp, int64_t kind, int64_t a, int64_t b, int64_t c, cm_int start, cm_int end)
{
	int64_t key[4] = {kind, a, b, c};
	int created;
	uint64_t *at;
	if (kind != NOTE_SPAN) {
		int64_t *l = pp->last[kind];
		if (pp->have_last[kind] && l[0] == a && l[1] == b && l[2] == c)
			return;
		l[0] = a, l[1] = b, l[2] = c;
		pp->have_last[kind] = 1;
	}
	at = cm_hmap_put(pp->seen, key, &created);
	if (created) {
		struct plan_note n = {kind, a, b, c, start, end};
		*at = pp->notes.len;
		cm_buf_put(&pp->notes, &n, sizeof n);
	} else if (kind == NOTE_SPAN) {
		struct plan_note n;
		memcpy(&n, pp->notes.p + *at, sizeof n);
		n.start = start < n.start ? start : n.start;
		n.end = end > n.end ? end : n.end;
		memcpy(pp->notes.p + *at, &n, sizeof n);
	}
}

/* gpu_extent, into the block's part. */
static void part_extent(struct plan_part *pp, double ts, double dur)
{
	gpu_extent_into(pp->g, &pp->h.min_ts, &pp->h.max_end_ts, &pp->h.x_events, &pp->h.x_outside, ts, dur);
	pp->h.st_x_events++;
}

/* When cutting, the extent of a record that would be drawn uncut, for the
 * check that the window and the trace overlap in time (crosscheck.c): a
 * window of another run must still be refused, not cut to nothing. */
static void cut_extent(struct plan_part *pp, cm_int start, cm_int end)
{
	double ts, dur;
	if (!pp->g->cut)
		return;
	x_times(pp->g, start, end, &ts, &dur);
	pp->h.cut_min = cm_py_min(pp->h.cut_min, ts);
	pp->h.cut_max = cm_py_max(pp->h.cut_max, ts + cm_py_max(dur, 0.0));
}

/* A drawn sync: its rows (its device; its stream, or, when CUPTI gave none
 * (all ones), Kineto's row "Device N" of the device, tid 1), its extent, and
 * for an event sync where the event it waits on was last recorded. */
static void plan_sync(struct plan_part *pp, const cm_gpurec *r)
{
	cm_gpu *g = pp->g;
	const cm_int *v = r->v;
	int64_t dev = (int64_t)v[CM_RS_DEV];
	double ts, dur;
	uint32_t type = gpu_sync_type(r);
	note(pp, NOTE_DEV, dev, 0, 0, v[CM_RS_START], 0);
	if (cm_tid_int32(v[CM_RS_STREAM]) != -1)
		note(pp, NOTE_STREAM, dev, (int64_t)v[CM_RS_STREAM], 0, 0, 0);
	else
		note(pp, NOTE_DEVROW, dev, 0, 0, 0, 0);
	x_times(g, v[CM_RS_START], v[CM_RS_END], &ts, &dur);
	part_extent(pp, ts, dur);
	if (type == CM_SYNC_EVENT || type == CM_SYNC_STREAM_WAIT_EVENT) {
		int64_t key[2] = {(int64_t)v[CM_RS_CTX], (int64_t)v[CM_RS_EVENT]}, ix = (int64_t)r->index;
		const struct wait_info *w = cm_hmap_get(g->plan.evmap, key);
		if (w) {
			struct wait_info copy = *w;
			*(struct wait_info *)cm_hmap_put(g->plan.waits, &ix, NULL) = copy;
		}
	}
}

/* Kineto's External id of an API call that no CUSTOM0 record names: the
 * operator of the CPU trace it was made in (opindex.h), which its GPU work
 * shares through the correlation id.  The call's own thread is the one its
 * thread id names (through the window's thread_resource_map), not the row
 * a correlation link may give it: a link through a user annotation's id
 * puts a worker's call on the annotation's thread, where an operator of the
 * main thread may span it. */
int gpu_api_operator_find(const cm_gpu *g, const cm_gpurec *r, int check, struct gpu_op_note *n)
{
	cm_int corr = r->v[CM_RA_CORR], pid = r->v[CM_RA_PID];
	int32_t id = cm_tid_int32(r->v[CM_RA_RAWTID]);
	int64_t tid, c;
	double ts, dur;
	if (!(g->cpu.ops || g->ann.cua) || !g->link.cext || !(r->flags & CM_REC_SPAN))
		return 0;
	if (!cm_id_key(corr, &c, NULL) || c < g->win.api_lo || c > g->win.api_hi || pid < INT64_MIN || pid > INT64_MAX)
		return 0;
	if (cm_tidmap_lookup(g->win.tidmap, (int64_t)pid, id, &tid) != CM_TIDMAP_FOUND)
		tid = id;
	x_times(g, r->v[CM_RA_START], r->v[CM_RA_END], &ts, &dur);
	n->corr = c;
	/* and the user annotation it was made in, for Kineto's spans */
	n->has_ann = gpu_anns_find(g, c, (int64_t)pid, tid, ts, ts + dur, &n->ann);
	n->has_ext = g->cpu.ops && !(check && cm_idmap_get(g->link.cext, c)) &&
		     cm_opindex_find(g->cpu.ops, (int64_t)pid, tid, ts, ts + dur, &n->ext);
	return n->has_ann || n->has_ext;
}

void gpu_api_operator_note(cm_gpu *g, const struct gpu_op_note *n)
{
	if (n->has_ann)
		gpu_anns_note(g, n->corr, n->ann);
	/* the first call of a correlation names its operator, as does a
	 * CUSTOM0 record before any */
	if (n->has_ext && !cm_idmap_get(g->link.cext, n->corr))
		*(int64_t *)cm_idmap_put(g->link.cext, n->corr, NULL) = n->ext;
}

/* Both, for the plan's own walk (in window order, on one thread). */
static void api_operator(cm_gpu *g, const cm_gpurec *r)
{
	struct gpu_op_note n;
	if (gpu_api_operator_find(g, r, 1, &n))
		gpu_api_operator_note(g, &n);
}


static int plan_record(struct plan_part *pp, const cm_gpurec *r)
{
	cm_gpu *g = pp->g;
	double ts, dur;
	cm_int tid = 0, start, end;
	int fell = 0, drawn;
	if (r->kind == CM_REC_RUNTIME || r->kind == CM_REC_DRIVER) {
		if (gpu_api_thread(g, r, &tid, &fell) < 0)
			return -1;
		if (g->call_note) /* (the render's row and times: no remap with it) */
			g->call_note(g->call_ctx, r->v[CM_RA_PID], cm_tid_export(tid), r->v[CM_RA_START] - g->base_ns,
				     r->v[CM_RA_END] - r->v[CM_RA_START]);
		if (!g->plan.ops_noted) /* --split notes them as it deals the records */
			api_operator(g, r);
	} else if (r->kind == CM_REC_CUDAEVENT) {
		/* --split looks up the syncs' waits as it deals the records */
		if (g->version >= 2 && !g->plan.ops_noted) {
			/* where the event was last recorded, for the event syncs after it */
			int64_t key[2] = {(int64_t)r->v[CM_RE_CTX], (int64_t)r->v[CM_RE_EVENT]};
			struct wait_info *w = cm_hmap_put(g->plan.evmap, key, NULL);
			w->stream = cm_tid_int32(r->v[CM_RE_STREAM]);
			w->corr = cm_tid_int32(r->v[CM_RE_CORR]);
		}
		return 0;
	}
	/* drawn uncut (the rule --split's deal applies too), then cut */
	if ((drawn = gpu_drawn_span(g, r, &start, &end)) <= 0)
		return drawn;
	cut_extent(pp, start, end);
	if (!gpu_cut_keep(g, r))
		return 0;
	x_times(g, start, end, &ts, &dur);
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER: {
		int64_t pid64 = (int64_t)r->v[CM_RA_PID], moved;
		if (fell && g->remap && g->remap(g->remap_ctx, pid64, (int64_t)tid, cm_py_int_to_double(start), 0, &moved))
			tid = moved;
		note(pp, NOTE_PROC, pid64, 0, 0, start, 0);
		note(pp, NOTE_THREAD, pid64, (int64_t)tid, 0, 0, 0);
		part_extent(pp, ts, dur);
		pp->h.api_rows++;
		return 0;
	}
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET: {
		int64_t d64 = (int64_t)r->v[CM_RG_DEV], s64 = (int64_t)r->v[CM_RG_STREAM], c64;
		note(pp, NOTE_DEV, d64, 0, 0, start, 0);
		note(pp, NOTE_STREAM, d64, s64, 0, 0, 0);
		part_extent(pp, ts, dur);
		if (cm_id_key(r->v[CM_RG_CORR], &c64, NULL)) {
			const int64_t *ext = cm_idmap_get(g->link.uext, c64);
			if (ext)
				note(pp, NOTE_SPAN, *ext, d64, s64, start, end);
		}
		return 0;
	}
	case CM_REC_OVERHEAD:
		pp->h.need_overhead = 1;
		part_extent(pp, ts, dur);
		return 0;
	case CM_REC_SYNC:
		plan_sync(pp, r);
		return 0;
	}
	return 0;
}

void gpu_plan_part_reset(struct plan_part *pp)
{
	cm_hmap_free(pp->seen);
	pp->seen = cm_hmap_new(32, 8);
	pp->notes.len = 0;
	memset(pp->have_last, 0, sizeof pp->have_last);
	memset(&pp->h, 0, sizeof pp->h);
	pp->h.min_ts = INFINITY;
	pp->h.max_end_ts = -INFINITY;
	pp->h.cut_min = INFINITY;
	pp->h.cut_max = -INFINITY;
}

struct plan_part *gpu_plan_part_new(const cm_gpu *g)
{
	struct plan_part *pp = cm_xcalloc(1, sizeof *pp);
	pp->g = (cm_gpu *)g; /* read only: what the plan writes is in the notes (but under version 2) */
	return pp;
}

int gpu_plan_part_record(struct plan_part *pp, const cm_gpurec *r) { return plan_record(pp, r); }

void gpu_plan_part_emit(const struct plan_part *pp, cm_buf *out)
{
	cm_buf_put(out, &pp->h, sizeof pp->h);
	cm_buf_put(out, pp->notes.p, pp->notes.len);
}

void gpu_plan_part_extent(const struct plan_part *pp, double *min_ts, double *max_end)
{
	*min_ts = pp->h.min_ts;
	*max_end = pp->h.max_end_ts;
}

void gpu_plan_part_free(struct plan_part *pp)
{
	if (!pp)
		return;
	cm_hmap_free(pp->seen);
	cm_buf_free(&pp->notes);
	free(pp);
}

/* The pool's work: one block of records into a part, written to OUT as a
 * plan_head and the notes. */
static int plan_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct plan_part *pp = wctx;
	const char *p = in->p, *end = in->p + in->len;
	cm_gpurec r;
	gpu_plan_part_reset(pp);
	while (p < end) {
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "a temporary file was corrupted");
		if (plan_record(pp, &r) < 0)
			return -1;
	}
	gpu_plan_part_emit(pp, out);
	return 0;
}

void gpu_plan_fold_part(cm_gpu *g, const char *at, size_t len, cm_buf *spans)
{
	struct plan_head h;
	const char *p = at + sizeof h, *end = at + len;
	memcpy(&h, at, sizeof h);
	g->plan.min_ts = cm_py_min(g->plan.min_ts, h.min_ts);
	g->plan.max_end_ts = cm_py_max(g->plan.max_end_ts, h.max_end_ts);
	g->plan.x_events += h.x_events;
	g->plan.x_outside += h.x_outside;
	g->st.x_events += h.st_x_events;
	g->st.api_rows += h.api_rows;
	g->plan.need_overhead |= h.need_overhead;
	g->plan.cut_min_ts = cm_py_min(g->plan.cut_min_ts, h.cut_min);
	g->plan.cut_max_end = cm_py_max(g->plan.cut_max_end, h.cut_max);
	for (; p < end; p += sizeof(struct plan_note)) {
		struct plan_note n;
		memcpy(&n, p, sizeof n);
		switch (n.kind) {
		case NOTE_PROC: setdefault(g->plan.procs, n.a, n.start); break;
		case NOTE_THREAD: add_pair(g->plan.threads, n.a, n.b); break;
		case NOTE_DEV: setdefault(g->plan.devices, n.a, n.start); break;
		case NOTE_STREAM: add_pair(g->plan.streams, n.a, n.b); break;
		case NOTE_SPAN:
			if (spans)
				cm_buf_put(spans, &n, sizeof n);
			else
				span_note(g, n.a, n.b, n.c, n.start, n.end);
			break;
		case NOTE_DEVROW: cm_hmap_put(g->plan.device_rows, &n.a, NULL); break;
		}
	}
}

void gpu_plan_fold_spans(cm_gpu *g, const cm_buf *spans)
{
	for (size_t i = 0; i + sizeof(struct plan_note) <= spans->len; i += sizeof(struct plan_note)) {
		struct plan_note n;
		memcpy(&n, spans->p + i, sizeof n);
		span_note(g, n.a, n.b, n.c, n.start, n.end);
	}
}

/* The pool's sink: a block's part into the tables, in window order. */
static int plan_fold(void *sctx, cm_buf *out)
{
	gpu_plan_fold_part(sctx, out->p, out->len, NULL);
	return 0;
}

int cm_gpu_plan(cm_gpu *g, int jobs)
{
	/* one thread with the repair stage, which counts what it moves, and
	 * for a window of version 2, whose syncs look up where an event was
	 * last recorded (and the API calls note their operators): in window
	 * order, as they come */
	int n = g->remap || g->version >= 2 ? 1 : jobs < 1 ? 1 : jobs, rc;
	struct plan_part *pp = cm_xcalloc((size_t)n, sizeof *pp);
	void **ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	/* the spans are keyed by the annotations' ids (uext takes no other) */
	if (!g->plan.spans &&
	    !(g->plan.spans = g->win.ua_keys ? cm_idmap_new_keyed(sizeof(struct gpu_ann_span_slot), g->win.ua_keys)
					     : cm_idmap_new(sizeof(struct gpu_ann_span_slot), g->win.ua_lo,
							    g->win.ua_hi, g->win.ua_count))) {
		free(pp);
		free(ctx);
		return -1;
	}
	if (g->version >= 2) {
		if (!g->plan.evmap)
			g->plan.evmap = cm_hmap_new(16, sizeof(struct wait_info));
		if (!g->plan.waits)
			g->plan.waits = cm_hmap_new(8, sizeof(struct wait_info));
		if (gpu_anns_tables(g, g->win.api_lo, g->win.api_hi, g->win.api_n) < 0) {
			free(pp);
			free(ctx);
			return -1;
		}
	}
	for (int i = 0; i < n; i++) {
		pp[i].g = g;
		ctx[i] = &pp[i];
	}
	rc = gpu_walk_records(g, n, plan_block, ctx, plan_fold, g);
	for (int i = 0; i < n; i++) {
		cm_hmap_free(pp[i].seen);
		cm_buf_free(&pp[i].notes);
	}
	free(pp);
	free(ctx);
	return rc < 0 ? -1 : gpu_plan_end(g);
}

int gpu_plan_end(cm_gpu *g)
{
	cm_hmap_free(g->plan.evmap); /* the syncs have taken what they need */
	g->plan.evmap = NULL;
	if (gpu_anns_spans(g) < 0)
		return -1;
	cm_gpu_plan_finish(g);
	return 0;
}

/* ------------------------------------------------- the plan's results */

/* The extent of one span whose annotation has a name. */
static void span_extent(cm_gpu *g, int64_t ext, const struct gpu_ann_span *sp)
{
	double ts, dur;
	size_t len;
	if (!gpu_ua_name(g, ext, &len))
		return;
	gpu_span_times(g, sp, &ts, &dur);
	gpu_extent(g, ts, dur);
}

static void slot_extent(void *ctx, int64_t ext, void *val)
{
	const struct gpu_ann_span_slot *ss = val;
	struct gpu_ann_span sp = {ss->start, ss->end};
	span_extent(ctx, ext, &sp);
}

void cm_gpu_plan_finish(cm_gpu *g)
{
	cm_idmap_each(g->plan.spans, slot_extent, g);
	for (size_t i = 0; i < cm_hmap_slots(g->plan.spans_more); i++) {
		const int64_t *key;
		const struct gpu_ann_span *sp = cm_hmap_slot(g->plan.spans_more, i, (const void **)&key);
		if (sp)
			span_extent(g, key[0], sp);
	}
}

void cm_gpu_extent(const cm_gpu *g, double *min_ts, double *max_end)
{
	*min_ts = g->plan.min_ts;
	*max_end = g->plan.max_end_ts;
}

void cm_gpu_overlap(const cm_gpu *g, uint64_t *events, uint64_t *outside)
{
	*events = g->plan.x_events;
	*outside = g->plan.x_outside;
}

const cm_hmap *cm_gpu_processes(const cm_gpu *g) { return g->plan.procs; }

void cm_gpu_extent_uncut(const cm_gpu *g, double *min_ts, double *max_end)
{
	if (!g->cut) {
		cm_gpu_extent(g, min_ts, max_end);
		return;
	}
	*min_ts = g->plan.cut_min_ts;
	*max_end = g->plan.cut_max_end;
}

/* The kept-or-cut mark of the API call of correlation CORR, or 0 when the
 * window has none. */
