/* gpuconv.c - trace-window events to Chrome-trace events, by the reference rules.
 *
 * One function, do_event(), holds the per-event rules of the reference merge
 * (PyTorch's _cupti_monitor_trace.py) and runs twice: in pass 2 without an
 * output, to check every field pass 3 will read and to note the rows and the
 * time extent; in pass 3 with one, to write the events.  Keeping a single
 * copy of the rules is what keeps the metadata of pass 2 and the events of
 * pass 3 in agreement.
 *
 * Python's semantics are kept where they show in the output: int() of
 * numbers, strings and booleans (pyval.h), str() of names, json.loads of
 * annotation strings and json.dumps of list annotations (jval.h), floats
 * computed with the same operations in the same order (no contraction, see
 * configure.ac), and dict semantics for repeated keys.
 *
 * The stage is four files: this one (state, field readers, the per-event
 * rules), gpuscan.c (pass 1), gpuargs.c (args and annotations) and
 * gpurows.c (row metadata and annotation spans). */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/cbid.h"
#include "base/diag.h"
#include "exitcode.h"
#include "gpu/gpuargs.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void cm_gpu_set_repair(cm_gpu *g, cm_repair *r) { g->repair = r; }

void cm_gpu_mark_named(const cm_gpu *g, cm_repair *r)
{
	for (size_t i = 0; i < cm_hmap_slots(g->threads); i++) {
		const int64_t *key;
		if (cm_hmap_slot(g->threads, i, (const void **)&key))
			cm_repair_named(r, key[0], key[1]);
	}
}

cm_gpu *cm_gpu_new(const char *window_name)
{
	cm_gpu *g = cm_xcalloc(1, sizeof *g);
	g->wname = window_name;
	g->scratch = cm_arena_new();
	g->ext = cm_hmap_new(8, sizeof(struct cm_ext_thread));
	g->ua = cm_hmap_new(8, sizeof(struct ua_ent));
	g->tidmap = cm_tidmap_new();
	g->devices = cm_hmap_new(8, sizeof(struct first_ts));
	g->streams = cm_hmap_new(16, 8);
	g->procs = cm_hmap_new(8, sizeof(struct first_ts));
	g->threads = cm_hmap_new(16, 8);
	g->spans = cm_hmap_new(24, sizeof(struct span));
	g->min_ts = INFINITY;
	g->max_end_ts = 0.0;
	return g;
}

void cm_gpu_free(cm_gpu *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < cm_hmap_slots(g->ua); i++) {
		struct ua_ent *u = cm_hmap_slot(g->ua, i, NULL);
		if (u)
			free(u->name);
	}
	cm_hmap_free(g->ua);
	cm_hmap_free(g->ext);
	cm_hmap_free(g->linked);
	cm_hmap_free(g->uext);
	cm_hmap_free(g->devices);
	cm_hmap_free(g->streams);
	cm_hmap_free(g->procs);
	cm_hmap_free(g->threads);
	cm_hmap_free(g->spans);
	cm_tidmap_free(g->tidmap);
	cm_arena_free(g->scratch);
	cm_buf_free(&g->text);
	if (g->pairs)
		fclose(g->pairs);
	free(g->cpu_threads);
	free(g->args.v);
	cm_buf_free(&g->dumps);
	free(g);
}

cm_hmap *cm_gpu_linked_ext(cm_gpu *g) { return g->ext; }

void cm_gpu_stats(const cm_gpu *g, struct cm_gpu_stats *st)
{
	*st = g->st;
	st->table_bytes = cm_hmap_bytes(g->linked) + cm_hmap_bytes(g->uext) + cm_hmap_bytes(g->ua) +
			  cm_hmap_bytes(g->devices) + cm_hmap_bytes(g->streams) + cm_hmap_bytes(g->procs) +
			  cm_hmap_bytes(g->threads) + cm_hmap_bytes(g->spans);
}

/* ------------------------------------------------------------ field access */

/* Report a problem with events[INDEX] (OFFSET: just past the event). */
int gpu_ev_error(cm_gpu *g, uint64_t index, int64_t offset, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cm_error(CM_EXIT_DATA, g->wname, offset, "window: events[%llu]: %s", (unsigned long long)index, msg);
	return -1;
}


/* Python's _as_int(V) (V NULL: a missing key read with .get(key, 0)):
 * int() of a number or string, 0 when int() raises ValueError/TypeError;
 * an infinite number raises OverflowError in Python: an error here too. */
int gpu_as_int(const struct at *a, const char *key, const cm_jval *v, cm_int *out)
{
	int rc;
	*out = 0;
	if (!v)
		return 0;
	switch (v->type) {
	case CM_J_NUM:
		rc = cm_py_int_of_number(v->s, v->len, out);
		break;
	case CM_J_STR:
		rc = cm_py_int_of_str(v->s, v->len, out);
		if (rc == CM_PY_VALUE) {
			*out = 0;
			rc = CM_PY_OK;
		}
		break;
	case CM_J_TRUE:
		*out = 1;
		return 0;
	default:
		return 0;
	}
	if (rc != CM_PY_OK)
		return gpu_ev_error(a->g, a->index, a->offset, "\"%s\": %.*s is infinite or beyond 128 bits", key,
				(int)(v->len > 40 ? 40 : v->len), v->s);
	return 0;
}

/* _as_int(event[KEY]) (REQUIRED: a missing key is an error, as the KeyError
 * of event[KEY]) or _as_int(event.get(KEY, 0)). */
int gpu_int_field(const struct at *a, const char *key, int required, cm_int *out)
{
	const cm_jval *v = cm_jval_get(a->ev, key);
	if (!v && required)
		return gpu_ev_error(a->g, a->index, a->offset, "missing field \"%s\"", key);
	return gpu_as_int(a, key, v, out);
}

/* Narrow V to 64 bits for a table key. */
int gpu_to_i64(const struct at *a, const char *key, cm_int v, int64_t *out)
{
	if (v < INT64_MIN || v > INT64_MAX)
		return gpu_ev_error(a->g, a->index, a->offset, "\"%s\" does not fit in 64 bits", key);
	*out = (int64_t)v;
	return 0;
}

/* The event's field KEY, which must exist. */
const cm_jval *gpu_need(const struct at *a, const char *key)
{
	const cm_jval *v = cm_jval_get(a->ev, key);
	if (!v)
		gpu_ev_error(a->g, a->index, a->offset, "missing field \"%s\"", key);
	return v;
}

/* ------------------------------------------------------------ the rules */

/* The thread row of an API record (tidrule.h).  0, or -1 after a report;
 * *fell is set when no rule applied and the int32 id itself was taken. */
static int api_thread(const struct at *a, cm_int pid, cm_int corr, cm_int raw, cm_int *tid, int *fell)
{
	cm_gpu *g = a->g;
	int32_t id = cm_tid_int32(raw);
	int64_t t;
	int rc;
	if (corr >= INT64_MIN && corr <= INT64_MAX) {
		int64_t c = (int64_t)corr;
		const struct linked *l = cm_hmap_get(g->linked, &c);
		if (l && (cm_int)g->cpu_threads[l->thread].pid == pid) {
			*tid = g->cpu_threads[l->thread].tid;
			return 0;
		}
	}
	rc = pid < INT64_MIN || pid > INT64_MAX ? CM_TIDMAP_ABSENT
						: cm_tidmap_lookup(g->tidmap, (int64_t)pid, id, &t);
	switch (rc) {
	case CM_TIDMAP_FOUND: *tid = t; return 0;
	case CM_TIDMAP_ABSENT: *tid = id; *fell = 1; return 0;
	case CM_TIDMAP_BAD_MAP:
		return gpu_ev_error(g, a->index, a->offset,
				"thread_resource_map (or its entry for this process_id) is not an object");
	default:
		return gpu_ev_error(g, a->index, a->offset,
				"thread_resource_map entry for thread_id %d is not an integer", (int)id);
	}
}

/* Note an X event's extent (Python: min(min_ts, ts), max(max_end, ts + max(dur, 0))),
 * and whether it overlaps the CPU trace's span. */
void gpu_extent(cm_gpu *g, double ts, double dur)
{
	g->min_ts = cm_py_min(g->min_ts, ts);
	g->max_end_ts = cm_py_max(g->max_end_ts, ts + cm_py_max(dur, 0.0));
	if (g->have_cpu_span) {
		g->x_events++;
		g->x_outside += ts + cm_py_max(dur, 0.0) < g->cpu_min_ts || ts > g->cpu_max_end;
	}
	g->st.x_events++;
}

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

/* Begin an X event: {"ph":"X","cat":CAT,"name":NAME,"pid":PID,"tid":TID, */
void gpu_x_head(cm_buf *b, const char *cat, const char *name, size_t nlen, cm_int pid, cm_int tid)
{
	cm_buf_lit(b, "{\"ph\":\"X\",\"cat\":");
	cm_jw_string(b, cat, strlen(cat));
	cm_buf_lit(b, ",\"name\":");
	cm_jw_string(b, name, nlen);
	cm_buf_lit(b, ",\"pid\":");
	cm_jw_int(b, pid);
	cm_buf_lit(b, ",\"tid\":");
	cm_jw_int(b, cm_tid_export(tid));
}

/* "ts":TS,"dur":DUR for START/END ns; returns the two doubles. */
static void x_times_text(cm_gpu *g, cm_buf *b, cm_int start, cm_int end, double *ts, double *dur, char *tstext,
			 size_t *tslen);
static void x_times(cm_gpu *g, cm_buf *b, cm_int start, cm_int end, double *ts, double *dur)
{
	x_times_text(g, b, start, end, ts, dur, NULL, NULL);
}

/* x_times that also hands back the ts text (TSTEXT: 48 bytes) for a flow. */
static void x_times_text(cm_gpu *g, cm_buf *b, cm_int start, cm_int end, double *ts, double *dur, char *tstext,
			 size_t *tslen)
{
	if (b) {
		char tmp[48], *t = tstext ? tstext : tmp;
		size_t n = cm_us_text(start - g->base_ns, t, ts);
		if (tslen)
			*tslen = n;
		cm_buf_lit(b, ",\"ts\":");
		cm_buf_put(b, t, n);
		cm_buf_lit(b, ",\"dur\":");
		*dur = cm_jw_us_of_ns(b, end - start);
	} else {
		*ts = cm_us_of_ns(start - g->base_ns);
		*dur = cm_us_of_ns(end - start);
	}
}

/* An ac2g flow event: ph "s" (from an API row) or "f" (into a GPU row). */
static int flow(cm_evout *eo, char ph, cm_int id, cm_int pid, cm_int tid, const char *ts, size_t tslen)
{
	cm_buf *b = &eo->buf;
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"");
	cm_buf_putc(b, ph);
	cm_buf_lit(b, "\",\"id\":");
	cm_jw_int(b, id);
	cm_buf_lit(b, ",\"pid\":");
	cm_jw_int(b, pid);
	cm_buf_lit(b, ",\"tid\":");
	cm_jw_int(b, cm_tid_export(tid));
	cm_buf_lit(b, ",\"ts\":");
	cm_buf_put(b, ts, tslen);
	if (ph == 'f')
		cm_buf_lit(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
	else
		cm_buf_lit(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
	return 0;
}

/* A runtime or driver API record (pass 2 when EO is NULL, else pass 3). */
static int api_event(const struct at *a, int driver, cm_evout *eo)
{
	cm_gpu *g = a->g;
	cm_int cbid, pid, corr, raw, tid = 0, start, end;
	const char *name;
	char fallback[64];
	int registered, fell = 0;
	double ts, dur;
	if (gpu_int_field(a, "cbid", 1, &cbid) < 0)
		return -1;
	name = cbid >= INT64_MIN && cbid <= INT64_MAX ? cm_cbid_name(driver, (int64_t)cbid) : NULL;
	if (!name) {
		memcpy(fallback, "cbid_", 5);
		cm_int_format(cbid, fallback + 5);
		name = fallback;
	}
	registered = cm_cbid_is_registered(driver, name);
	if (gpu_int_field(a, "process_id", 1, &pid) < 0 || gpu_int_field(a, "correlation_id", 1, &corr) < 0 ||
	    gpu_int_field(a, "thread_id", 1, &raw) < 0 || api_thread(a, pid, corr, raw, &tid, &fell) < 0)
		return -1;
	if (!registered)
		return 0;
	if (gpu_int_field(a, "start_ns", 1, &start) < 0 || gpu_int_field(a, "end_ns", 1, &end) < 0)
		return -1;
	if (fell && g->repair && pid >= INT64_MIN && pid <= INT64_MAX) {
		/* the thread map knows what the window did not */
		int64_t moved;
		if (cm_repair_tid(g->repair, (int64_t)pid, (int64_t)tid, 1, cm_int_to_double(start), eo != NULL,
				  &moved))
			tid = moved;
	}
	if (!eo) {
		int64_t pid64 = 0, tid64 = 0;
		if (gpu_to_i64(a, "process_id", pid, &pid64) < 0 || gpu_to_i64(a, "thread_id", tid, &tid64) < 0)
			return -1;
		setdefault(g->procs, pid64, start);
		add_pair(g->threads, pid64, tid64);
		x_times(g, NULL, start, end, &ts, &dur);
		gpu_extent(g, ts, dur);
		g->st.api_rows++;
		return 0;
	}
	if (cm_evout_next(eo) < 0)
		return -1;
	gpu_x_head(&eo->buf, driver ? "cuda_driver" : "cuda_runtime", name, strlen(name), pid, tid);
	{
		size_t ts_len;
		char tstext[48];
		x_times_text(g, &eo->buf, start, end, &ts, &dur, tstext, &ts_len);
		cm_buf_lit(&eo->buf, ",\"args\":{\"cbid\":");
		cm_jw_int(&eo->buf, cbid);
		cm_buf_lit(&eo->buf, ",\"correlation\":");
		cm_jw_int(&eo->buf, corr);
		cm_buf_lit(&eo->buf, "}}");
		if (corr != 0 && cm_cbid_requires_flow(driver, name) &&
		    flow(eo, 's', corr, pid, tid, tstext, ts_len) < 0)
			return -1;
	}
	return 0;
}

/* kernel, gpu_memcpy, gpu_memset (pass 2 when EO is NULL, else pass 3). */
static int activity_event(const struct at *a, const char *kind, cm_evout *eo)
{
	cm_gpu *g = a->g;
	cm_int dev, ctx, stream, corr, start, end, graph, node;
	cm_int bytes, k1, k2, k3, flags;
	int is_memcpy = !strcmp(kind, "gpu_memcpy"), is_memset = !strcmp(kind, "gpu_memset");
	const cm_jval *namev;
	double ts, dur;
	if (gpu_int_field(a, "device_id", 1, &dev) < 0 || gpu_int_field(a, "stream_id", 1, &stream) < 0 ||
	    gpu_int_field(a, "start_ns", 1, &start) < 0 || gpu_int_field(a, "context_id", 1, &ctx) < 0 ||
	    gpu_int_field(a, "correlation_id", 1, &corr) < 0 || gpu_int_field(a, "end_ns", 1, &end) < 0 ||
	    !(namev = gpu_need(a, "name")) || gpu_int_field(a, "graph_id", 0, &graph) < 0 ||
	    gpu_int_field(a, "graph_node_id", 0, &node) < 0)
		return -1;
	if (is_memcpy && (gpu_int_field(a, "bytes", 1, &bytes) < 0 || gpu_int_field(a, "copy_kind", 1, &k1) < 0 ||
			  gpu_int_field(a, "src_kind", 1, &k2) < 0 || gpu_int_field(a, "dst_kind", 1, &k3) < 0 ||
			  gpu_int_field(a, "flags", 1, &flags) < 0))
		return -1;
	if (is_memset && (gpu_int_field(a, "bytes", 1, &bytes) < 0 || gpu_int_field(a, "value", 1, &k1) < 0 ||
			  gpu_int_field(a, "memory_kind", 1, &k2) < 0 || gpu_int_field(a, "flags", 1, &flags) < 0))
		return -1;
	if (!eo) {
		int64_t d64 = 0, s64 = 0, c64;
		if (gpu_to_i64(a, "device_id", dev, &d64) < 0 || gpu_to_i64(a, "stream_id", stream, &s64) < 0)
			return -1;
		setdefault(g->devices, d64, start);
		add_pair(g->streams, d64, s64);
		x_times(g, NULL, start, end, &ts, &dur);
		gpu_extent(g, ts, dur);
		if (corr >= INT64_MIN && corr <= INT64_MAX) {
			const int64_t *ext;
			c64 = (int64_t)corr;
			if ((ext = cm_hmap_get(g->uext, &c64))) {
				int64_t key[3] = {*ext, d64, s64};
				int created;
				struct span *sp = cm_hmap_put(g->spans, key, &created);
				if (created) {
					sp->start = start;
					sp->end = end;
				} else {
					sp->start = start < sp->start ? start : sp->start;
					sp->end = end > sp->end ? end : sp->end;
				}
			}
		}
		return 0;
	}
	{
		struct args *A = &g->args;
		size_t ts_len;
		char tstext[48];
		cm_arena_reset(g->scratch);
		A->n = 0;
		g->text.len = 0;
		cm_jval_str_py(&g->text, namev);
		if (cm_evout_next(eo) < 0)
			return -1;
		gpu_x_head(&eo->buf, kind, g->text.p, g->text.len, dev, stream);
		x_times_text(g, &eo->buf, start, end, &ts, &dur, tstext, &ts_len);
		gpu_arg_int(A, "device", dev);
		gpu_arg_int(A, "context", ctx);
		gpu_arg_int(A, "stream", stream);
		gpu_arg_int(A, "correlation", corr);
		if (graph)
			gpu_arg_int(A, "graph id", graph);
		if (node)
			gpu_arg_int(A, "graph node id", node);
		gpu_annotation_args(g->scratch, A, cm_jval_get(a->ev, "annotation"), &g->dumps);
		if (is_memcpy) {
			gpu_arg_int(A, "bytes", bytes);
			gpu_arg_copy_kind(A, "copy kind", k1);
			gpu_arg_memory_kind(A, "src kind", k2);
			gpu_arg_memory_kind(A, "dst kind", k3);
			gpu_arg_int(A, "flags", flags);
		} else if (is_memset) {
			gpu_arg_int(A, "bytes", bytes);
			gpu_arg_int(A, "value", k1);
			gpu_arg_int(A, "memory kind", k2);
			gpu_arg_int(A, "flags", flags);
		}
		gpu_write_args(&eo->buf, A);
		if (corr != 0 && flow(eo, 'f', corr, dev, stream, tstext, ts_len) < 0)
			return -1;
	}
	return 0;
}

/* An overhead record; the trailing "Activity Buffer Request" is dropped. */
static int overhead_event(const struct at *a, cm_evout *eo)
{
	cm_gpu *g = a->g;
	const cm_jval *namev = cm_jval_get(a->ev, "name");
	cm_int start, end;
	double ts, dur;
	if (cm_jval_streq(namev, "Activity Buffer Request") && g->max_end > 0) {
		if (gpu_int_field(a, "start_ns", 0, &start) < 0)
			return -1;
		if (start > g->max_end)
			return 0;
	}
	if (!(namev = gpu_need(a, "name")) || gpu_int_field(a, "start_ns", 1, &start) < 0 ||
	    gpu_int_field(a, "end_ns", 1, &end) < 0)
		return -1;
	if (!eo) {
		g->need_overhead = 1;
		x_times(g, NULL, start, end, &ts, &dur);
		gpu_extent(g, ts, dur);
		return 0;
	}
	g->text.len = 0;
	cm_jval_str_py(&g->text, namev);
	if (cm_evout_next(eo) < 0)
		return -1;
	gpu_x_head(&eo->buf, "overhead", g->text.p, g->text.len, OVERHEAD_PID, 0);
	x_times(g, &eo->buf, start, end, &ts, &dur);
	cm_buf_lit(&eo->buf, ",\"args\":{}}");
	return 0;
}

/* The rules for one event: pass 2 (EO NULL) or pass 3. */
static int do_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset, cm_evout *eo)
{
	struct at a = {g, index, offset, ev};
	const cm_jval *kind = cm_jval_get(ev, "kind");
	if (!kind)
		return gpu_ev_error(g, index, offset, "missing field \"kind\"");
	if (kind->type == CM_J_ARR || kind->type == CM_J_OBJ)
		return gpu_ev_error(g, index, offset, "\"kind\" is not a string");
	if (kind->type != CM_J_STR)
		return 0;
	if (cm_jval_streq(kind, "kernel") || cm_jval_streq(kind, "gpu_memcpy") ||
	    cm_jval_streq(kind, "gpu_memset"))
		return activity_event(&a, cm_jval_streq(kind, "kernel") ? "kernel"
					  : cm_jval_streq(kind, "gpu_memcpy") ? "gpu_memcpy" : "gpu_memset", eo);
	if (cm_jval_streq(kind, "cuda_runtime"))
		return api_event(&a, 0, eo);
	if (cm_jval_streq(kind, "cuda_driver"))
		return api_event(&a, 1, eo);
	if (cm_jval_streq(kind, "overhead"))
		return overhead_event(&a, eo);
	return 0;
}

int cm_gpu_plan_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset)
{
	return do_event(g, index, ev, offset, NULL);
}

int cm_gpu_emit_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset, cm_evout *eo)
{
	return do_event(g, index, ev, offset, eo);
}

