/* gpuconv.c - trace-window events to Chrome-trace events, by the reference rules.
 *
 * The rules of the reference merge (PyTorch's _cupti_monitor_trace.py) are
 * split in three by when their inputs are known:
 *   digest  while the window is read (its only parse): every field an
 *           event's rule reads, converted by Python's int() and str() and
 *           checked, kept as a record (gpurec.h);
 *   plan    once the CPU trace has been scanned and correlations resolved:
 *           the thread of each API record, the rows (devices, streams,
 *           processes, threads), the time extent, the annotation spans;
 *   render  at the end of the output: the text of each event, by worker
 *           threads over blocks of records, in window order.
 * The plan and the render make the same thread lookup (api_thread) and the
 * same drop decision (dropped), so the metadata written before the CPU
 * events agrees with the events written after them.
 *
 * Python's semantics are kept where they show in the output: int() of
 * numbers, strings and booleans (pyval.h), str() of names, json.loads of
 * annotation strings and json.dumps of list annotations (jval.h), floats
 * computed with the same operations in the same order (no contraction, see
 * configure.ac), and dict semantics for repeated keys.
 *
 * The stage is four files: this one (state, field readers, the per-event
 * rules), gpuscan.c (external correlations, maps, resolve), gpuargs.c (args
 * and annotations) and gpurows.c (row metadata and annotation spans). */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/cbid.h"
#include "base/diag.h"
#include "exitcode.h"
#include "gpu/gpuargs.h"
#include "base/opool.h"
#include "io/tmpfile.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
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
	g->ext_lo = g->corr_lo = INT64_MAX;
	g->ext_hi = g->corr_hi = INT64_MIN;
	g->budget = 16u << 20;
	g->ua_lo = INT64_MAX;
	g->ua_hi = INT64_MIN;
	g->tidmap = cm_tidmap_new();
	g->devices = cm_hmap_new(8, sizeof(struct first_ts));
	g->streams = cm_hmap_new(16, 8);
	g->procs = cm_hmap_new(8, sizeof(struct first_ts));
	g->threads = cm_hmap_new(16, 8);
	g->spans_more = cm_hmap_new(24, sizeof(struct span));
	g->act_streams = cm_hmap_new(16, 0);
	g->device_rows = cm_hmap_new(8, 0);
	g->version = 1;
	g->api_lo = INT64_MAX;
	g->api_hi = INT64_MIN;
	g->min_ts = INFINITY;
	g->max_end_ts = 0.0;
	return g;
}

void cm_gpu_free(cm_gpu *g)
{
	if (!g)
		return;
	cm_idmap_free(g->ua);
	if (g->ua_file)
		fclose(g->ua_file);
	cm_buf_free(&g->ua_name);
	cm_idmap_free(g->ext);
	cm_idmap_free(g->linked);
	cm_idmap_free(g->uext);
	cm_hmap_free(g->devices);
	cm_hmap_free(g->streams);
	cm_hmap_free(g->procs);
	cm_hmap_free(g->threads);
	cm_idmap_free(g->spans);
	cm_hmap_free(g->spans_more);
	cm_hmap_free(g->act_streams);
	cm_hmap_free(g->device_rows);
	cm_opindex_free(g->ops);
	cm_hmap_free(g->evmap);
	cm_hmap_free(g->waits);
	cm_idmap_free(g->cext);
	cm_kin_devices_free(&g->wprops);
	cm_buf_free(&g->wprops_text);
	cm_tidmap_free(g->tidmap);
	if (g->pairs)
		fclose(g->pairs);
	free(g->cpu_threads);
	cm_gpu_digest_free(g->dg);
	cm_buf_free(&g->dgout);
	cm_buf_free(&g->block);
	if (g->recs)
		fclose(g->recs);
	free(g);
}

void cm_gpu_set_budget(cm_gpu *g, size_t bytes) { g->budget = bytes; }

int cm_gpu_version(const cm_gpu *g) { return g->version; }

int cm_gpu_add_cpu_op(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext)
{
	cm_gpu *g = ctx;
	if (!g->ops)
		g->ops = cm_opindex_new(g->budget / 2); /* half: the id tables take the rest */
	return cm_opindex_add(g->ops, pid, tid, ts, end, ext);
}

int cm_gpu_cpu_ops_done(cm_gpu *g) { return g->ops ? cm_opindex_build(g->ops) : 0; }

void cm_gpu_set_cpu_devices(cm_gpu *g, const cm_kin_devices *d) { g->cprops = d; }

const char *cm_gpu_devices_text(const cm_gpu *g, size_t *n)
{
	if (g->version < 2 || !g->wprops_text.len)
		return NULL;
	*n = g->wprops_text.len;
	return g->wprops_text.p;
}

cm_idmap *cm_gpu_linked_ext(cm_gpu *g)
{
	if (g->ext)
		return g->ext;
	if (!(g->ext = cm_idmap_new(sizeof(struct cm_ext_thread), g->ext_lo, g->ext_hi, g->npairs, g->budget)) ||
	    gpu_link_ext(g) < 0)
		return NULL;
	return g->ext;
}

void cm_gpu_stats(const cm_gpu *g, struct cm_gpu_stats *st)
{
	*st = g->st;
	st->dense_tables = g->linked && cm_idmap_is_dense(g->linked);
	st->table_bytes = cm_idmap_bytes(g->linked) + cm_idmap_bytes(g->uext) + (g->ua ? cm_idmap_bytes(g->ua) : 0) +
			  cm_hmap_bytes(g->devices) + cm_hmap_bytes(g->streams) + cm_hmap_bytes(g->procs) +
			  cm_hmap_bytes(g->threads) + (g->spans ? cm_idmap_bytes(g->spans) : 0) +
			  cm_hmap_bytes(g->spans_more) + (g->cext ? cm_idmap_bytes(g->cext) : 0);
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

/* The thread row of an API record (tidrule.h): the CPU thread its
 * correlation links to, else the window's map, else the int32 id itself
 * (*fell set).  0, or -1 after a report (only when REPORT; without it the
 * caller knows the plan has checked the same lookup). */
static int api_thread(cm_gpu *g, const cm_gpurec *r, cm_int *tid, int *fell)
{
	cm_int pid = r->v[CM_RA_PID], corr = r->v[CM_RA_CORR];
	int32_t id = cm_tid_int32(r->v[CM_RA_RAWTID]);
	int64_t t;
	int rc;
	*fell = 0;
	if (corr >= INT64_MIN && corr <= INT64_MAX) {
		int64_t c = (int64_t)corr;
		const struct linked *l = cm_idmap_get(g->linked, c);
		if (l && l->thread && (cm_int)g->cpu_threads[l->thread - 1].pid == pid) {
			*tid = g->cpu_threads[l->thread - 1].tid;
			return 0;
		}
	}
	rc = pid < INT64_MIN || pid > INT64_MAX ? CM_TIDMAP_ABSENT
						: cm_tidmap_lookup(g->tidmap, (int64_t)pid, id, &t);
	switch (rc) {
	case CM_TIDMAP_FOUND: *tid = t; return 0;
	case CM_TIDMAP_ABSENT: *tid = id; *fell = 1; return 0;
	case CM_TIDMAP_BAD_MAP:
		return gpu_ev_error(g, r->index, r->offset,
				"thread_resource_map (or its entry for this process_id) is not an object");
	default:
		return gpu_ev_error(g, r->index, r->offset,
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

/* Begin an X event: {"ph":"X","cat":CAT,"name":NAME,"pid":PID,"tid":TID */
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

/* ts and dur (us) of START/END ns, as the output will hold them. */
static void x_times(const cm_gpu *g, cm_int start, cm_int end, double *ts, double *dur)
{
	*ts = cm_us_of_ns(start - g->base_ns);
	*dur = cm_us_of_ns(end - start);
}

/* ,"ts":TS,"dur":DUR for START/END ns; the ts text is handed back
 * (TSTEXT: 48 bytes) for a flow event. */
static void x_times_text(const cm_gpu *g, cm_buf *b, cm_int start, cm_int end, char *tstext, size_t *tslen)
{
	double d;
	*tslen = cm_us_text(start - g->base_ns, tstext, &d);
	cm_buf_lit(b, ",\"ts\":");
	cm_buf_put(b, tstext, *tslen);
	cm_buf_lit(b, ",\"dur\":");
	cm_jw_us_of_ns(b, end - start);
}

/* An ac2g flow event: ph "s" (from an API row) or "f" (into a GPU row). */
static void flow(cm_buf *b, char ph, cm_int id, cm_int pid, cm_int tid, const char *ts, size_t tslen)
{
	cm_buf_lit(b, ",{\"ph\":\"");
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
}

/* ------------------------------------------- digest: the one window parse */

/* _as_int(event.get(KEY, 0)) for what only windows of version 2 use, whose
 * version is known only once the whole window has been read (sync records,
 * the spans of API calls the reference drops): nothing is reported here;
 * the first problem is kept in d->dumps (a missing field only when
 * REQUIRED), to be reported if the record is drawn.  64BIT: the value must
 * fit in 64 bits (a table key). */
static void quiet_int(const struct at *a, const char *key, int required, int bit64, cm_int *out)
{
	const cm_jval *v = cm_jval_get(a->ev, key);
	cm_buf *err = &a->d->dumps;
	char msg[120];
	int rc = CM_PY_OK, n = 0;
	*out = 0;
	if (!v) {
		if (required && !err->len)
			n = snprintf(msg, sizeof msg, "missing field \"%s\"", key);
	} else {
		switch (v->type) {
		case CM_J_NUM: rc = cm_py_int_of_number(v->s, v->len, out); break;
		case CM_J_STR: rc = cm_py_int_of_str(v->s, v->len, out); break;
		case CM_J_TRUE: *out = 1; break;
		default: break;
		}
		if (rc == CM_PY_VALUE) {
			*out = 0;
			rc = CM_PY_OK;
		}
		if (rc != CM_PY_OK && !err->len)
			n = snprintf(msg, sizeof msg, "\"%s\": %.*s is infinite or beyond 128 bits", key,
				     (int)(v->len > 40 ? 40 : v->len), v->s);
		else if (rc == CM_PY_OK && bit64 && (*out < INT64_MIN || *out > INT64_MAX) && !err->len)
			n = snprintf(msg, sizeof msg, "\"%s\" does not fit in 64 bits", key);
	}
	if (n > 0)
		cm_buf_put(err, msg, (size_t)n);
}

/* The name of an API record's callback id (NAME: 64 bytes for "cbid_N"). */
static const char *api_name(int driver, cm_int cbid, char *fallback)
{
	const char *name = cbid >= INT64_MIN && cbid <= INT64_MAX ? cm_cbid_name(driver, (int64_t)cbid) : NULL;
	if (name)
		return name;
	memcpy(fallback, "cbid_", 5);
	cm_int_format(cbid, fallback + 5);
	return fallback;
}

/* A runtime or driver API record: every field the rules read, checked. */
static int digest_api(const struct at *a, int driver, cm_gpurec *r)
{
	char fallback[64];
	cm_int *v = r->v;
	int64_t pid64;
	r->kind = driver ? CM_REC_DRIVER : CM_REC_RUNTIME;
	r->nv = CM_RA_N;
	if (gpu_int_field(a, "cbid", 1, &v[CM_RA_CBID]) < 0 || gpu_int_field(a, "process_id", 1, &v[CM_RA_PID]) < 0 ||
	    gpu_int_field(a, "correlation_id", 1, &v[CM_RA_CORR]) < 0 ||
	    gpu_int_field(a, "thread_id", 1, &v[CM_RA_RAWTID]) < 0)
		return -1;
	if (v[CM_RA_CORR] >= INT64_MIN && v[CM_RA_CORR] <= INT64_MAX) { /* for the External id table */
		int64_t c = (int64_t)v[CM_RA_CORR];
		a->d->api_lo = c < a->d->api_lo ? c : a->d->api_lo;
		a->d->api_hi = c > a->d->api_hi ? c : a->d->api_hi;
		a->d->api_n++;
	}
	if (!cm_cbid_is_registered(driver, api_name(driver, v[CM_RA_CBID], fallback))) {
		/* kept for its thread lookup, which can fail, and its span, which
		 * finds its operator (version 2): read without a word */
		a->d->dumps.len = 0;
		quiet_int(a, "start_ns", 1, 0, &v[CM_RA_START]);
		quiet_int(a, "end_ns", 1, 0, &v[CM_RA_END]);
		if (!a->d->dumps.len)
			r->flags |= CM_REC_SPAN;
		a->d->dumps.len = 0;
		return 0;
	}
	r->flags |= CM_REC_REGISTERED | CM_REC_SPAN;
	if (gpu_int_field(a, "start_ns", 1, &v[CM_RA_START]) < 0 || gpu_int_field(a, "end_ns", 1, &v[CM_RA_END]) < 0 ||
	    gpu_to_i64(a, "process_id", v[CM_RA_PID], &pid64) < 0)
		return -1;
	return 0;
}

/* kernel, gpu_memcpy, gpu_memset. */
static int digest_activity(const struct at *a, int kind, cm_gpurec *r)
{
	struct cm_gpu_digest *d = a->d;
	cm_int *v = r->v;
	const cm_jval *namev, *ann;
	int64_t d64, s64;
	r->kind = (uint8_t)kind;
	r->nv = CM_RG_N;
	if (gpu_int_field(a, "device_id", 1, &v[CM_RG_DEV]) < 0 || gpu_int_field(a, "stream_id", 1, &v[CM_RG_STREAM]) < 0 ||
	    gpu_int_field(a, "start_ns", 1, &v[CM_RG_START]) < 0 || gpu_int_field(a, "context_id", 1, &v[CM_RG_CTX]) < 0 ||
	    gpu_int_field(a, "correlation_id", 1, &v[CM_RG_CORR]) < 0 || gpu_int_field(a, "end_ns", 1, &v[CM_RG_END]) < 0 ||
	    !(namev = gpu_need(a, "name")) || gpu_int_field(a, "graph_id", 0, &v[CM_RG_GRAPH]) < 0 ||
	    gpu_int_field(a, "graph_node_id", 0, &v[CM_RG_NODE]) < 0)
		return -1;
	if (kind == CM_REC_MEMCPY &&
	    (gpu_int_field(a, "bytes", 1, &v[CM_RG_BYTES]) < 0 || gpu_int_field(a, "copy_kind", 1, &v[CM_RG_K1]) < 0 ||
	     gpu_int_field(a, "src_kind", 1, &v[CM_RG_K2]) < 0 || gpu_int_field(a, "dst_kind", 1, &v[CM_RG_K3]) < 0 ||
	     gpu_int_field(a, "flags", 1, &v[CM_RG_FLAGS]) < 0))
		return -1;
	if (kind == CM_REC_MEMSET &&
	    (gpu_int_field(a, "bytes", 1, &v[CM_RG_BYTES]) < 0 || gpu_int_field(a, "value", 1, &v[CM_RG_K1]) < 0 ||
	     gpu_int_field(a, "memory_kind", 1, &v[CM_RG_K2]) < 0 || gpu_int_field(a, "flags", 1, &v[CM_RG_FLAGS]) < 0))
		return -1;
	if (gpu_to_i64(a, "device_id", v[CM_RG_DEV], &d64) < 0 || gpu_to_i64(a, "stream_id", v[CM_RG_STREAM], &s64) < 0)
		return -1;
	/* a kernel with "grid_x" carries its launch members (window format 2) */
	if (kind == CM_REC_KERNEL && cm_jval_get(a->ev, "grid_x")) {
		static const char *const launch[] = {
			"grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers_per_thread",
			"static_shared_memory", "dynamic_shared_memory", "queued_ns"};
		for (int i = 0; i < CM_RK_N - CM_RG_N; i++)
			if (gpu_int_field(a, launch[i], 0, &v[CM_RG_N + i]) < 0)
				return -1;
		r->flags |= CM_REC_LAUNCH;
		r->nv = CM_RK_N;
	}
	/* the streams that have GPU work, for the rule of "Stream Wait Event"
	 * syncs (render_sync); runs of one stream are noted once */
	if (!d->have_last_as || d->last_as[0] != d64 || d->last_as[1] != s64) {
		d->last_as[0] = d64;
		d->last_as[1] = s64;
		d->have_last_as = 1;
		cm_buf_put(&d->astreams, d->last_as, 16);
	}
	d->text.len = 0;
	cm_jval_str_py(&d->text, namev);
	ann = cm_jval_get(a->ev, "annotation");
	if (ann && ann->type != CM_J_NULL) {
		r->flags |= CM_REC_ANN;
		d->dumps.len = 0;
		cm_jval_pack(&d->dumps, ann);
	}
	return 0;
}

/* An overhead record.  The trailing "Activity Buffer Request" is dropped
 * when it starts after the last activity, which is known only when the
 * whole window has been read: the error its end_ns would raise is kept
 * until then. */
static int digest_overhead(const struct at *a, cm_gpurec *r)
{
	struct cm_gpu_digest *d = a->d;
	const cm_jval *namev = cm_jval_get(a->ev, "name"), *endv;
	r->kind = CM_REC_OVERHEAD;
	r->nv = CM_RO_N;
	if (!(namev = gpu_need(a, "name")) || gpu_int_field(a, "start_ns", 1, &r->v[CM_RO_START]) < 0)
		return -1;
	d->dumps.len = 0;
	if (cm_jval_streq(namev, "Activity Buffer Request")) {
		r->flags |= CM_REC_ABR;
		endv = cm_jval_get(a->ev, "end_ns");
		if (!endv) {
			cm_buf_lit(&d->dumps, "missing field \"end_ns\"");
		} else if (endv->type == CM_J_NUM || endv->type == CM_J_STR) {
			cm_int x;
			int rc = endv->type == CM_J_NUM ? cm_py_int_of_number(endv->s, endv->len, &x)
							: cm_py_int_of_str(endv->s, endv->len, &x);
			if (rc == CM_PY_OVERFLOW) {
				char msg[120];
				int n = snprintf(msg, sizeof msg, "\"end_ns\": %.*s is infinite or beyond 128 bits",
						 (int)(endv->len > 40 ? 40 : endv->len), endv->s);
				cm_buf_put(&d->dumps, msg, (size_t)n);
			}
		}
		if (d->dumps.len) {
			r->flags |= CM_REC_DEFERRED;
			r->v[CM_RO_END] = 0;
		} else if (gpu_as_int(a, "end_ns", endv, &r->v[CM_RO_END]) < 0) {
			return -1;
		}
	} else if (gpu_int_field(a, "end_ns", 1, &r->v[CM_RO_END]) < 0) {
		return -1;
	}
	d->text.len = 0;
	cm_jval_str_py(&d->text, namev);
	return 0;
}

/* A cuda_sync record (cuptimerge-window(5), version 2); the device is 0,
 * as in Kineto, when the window does not say.  0 (it is always kept). */
static int digest_sync(const struct at *a, cm_gpurec *r)
{
	cm_int *v = r->v;
	r->kind = CM_REC_SYNC;
	r->nv = CM_RS_N;
	quiet_int(a, "sync_type", 0, 0, &v[CM_RS_TYPE]);
	quiet_int(a, "start_ns", 1, 0, &v[CM_RS_START]);
	quiet_int(a, "end_ns", 1, 0, &v[CM_RS_END]);
	quiet_int(a, "correlation_id", 0, 0, &v[CM_RS_CORR]);
	quiet_int(a, "context_id", 0, 1, &v[CM_RS_CTX]);
	quiet_int(a, "stream_id", 0, 1, &v[CM_RS_STREAM]);
	quiet_int(a, "cuda_event_id", 0, 1, &v[CM_RS_EVENT]);
	quiet_int(a, "device_id", 0, 1, &v[CM_RS_DEV]);
	if (a->d->dumps.len)
		r->flags |= CM_REC_DEFERRED;
	return 0;
}

/* A cuda_event record: where an event was recorded, for the event syncs
 * after it.  0, or 1 when it is unusable (then it is left out). */
static int digest_cuda_event(const struct at *a, cm_gpurec *r)
{
	cm_int *v = r->v;
	r->kind = CM_REC_CUDAEVENT;
	r->nv = CM_RE_N;
	quiet_int(a, "context_id", 0, 1, &v[CM_RE_CTX]);
	quiet_int(a, "event_id", 0, 1, &v[CM_RE_EVENT]);
	quiet_int(a, "stream_id", 0, 0, &v[CM_RE_STREAM]);
	quiet_int(a, "correlation_id", 0, 0, &v[CM_RE_CORR]);
	if (!a->d->dumps.len)
		return 0;
	a->d->dumps.len = 0;
	return 1;
}

cm_gpu_digest *cm_gpu_digest_new(cm_gpu *g)
{
	cm_gpu_digest *d = cm_xcalloc(1, sizeof *d);
	d->g = g;
	d->api_lo = INT64_MAX;
	d->api_hi = INT64_MIN;
	return d;
}

void cm_gpu_digest_free(cm_gpu_digest *d)
{
	if (!d)
		return;
	cm_buf_free(&d->text);
	cm_buf_free(&d->dumps);
	cm_buf_free(&d->pairs);
	cm_buf_free(&d->astreams);
	free(d);
}

/* A batch's output: a 4-byte length of its records, the records, then its
 * pairs, its activity streams, then a struct batch_tail. */
struct batch_tail {
	cm_int max_end;
	uint64_t events, pair_bytes, astream_bytes;
	int64_t api_lo, api_hi;
	uint64_t api_n;
};

int cm_gpu_digest_batch_event(cm_gpu_digest *d, uint64_t index, const cm_jval *ev, int64_t offset, cm_buf *out)
{
	cm_gpu *g = d->g;
	struct at a = {g, d, index, offset, ev};
	const cm_jval *kind;
	cm_gpurec r;
	int rc;
	if (!out->len)
		cm_buf_put(out, "\0\0\0\0", 4);
	if (!ev) { /* the batch is done */
		struct batch_tail t = {d->max_end, d->events, d->pairs.len, d->astreams.len, d->api_lo, d->api_hi, d->api_n};
		uint32_t rec_len = (uint32_t)(out->len - 4);
		memcpy(out->p, &rec_len, 4);
		cm_buf_put(out, d->pairs.p, d->pairs.len);
		cm_buf_put(out, d->astreams.p, d->astreams.len);
		cm_buf_put(out, &t, sizeof t);
		d->pairs.len = 0;
		d->astreams.len = 0;
		d->have_last_as = 0;
		d->api_lo = INT64_MAX;
		d->api_hi = INT64_MIN;
		d->api_n = 0;
		d->events = 0;
		d->max_end = 0;
		return 0;
	}
	if (gpu_scan_event(d, &a) < 0)
		return -1;
	kind = cm_jval_get(ev, "kind");
	if (!kind)
		return gpu_ev_error(g, index, offset, "missing field \"kind\"");
	if (kind->type == CM_J_ARR || kind->type == CM_J_OBJ)
		return gpu_ev_error(g, index, offset, "\"kind\" is not a string");
	if (kind->type != CM_J_STR)
		return 0;
	memset(&r, 0, offsetof(cm_gpurec, v));
	r.index = index;
	r.offset = offset;
	d->text.len = 0;
	d->dumps.len = 0;
	if (cm_jval_streq(kind, "kernel"))
		rc = digest_activity(&a, CM_REC_KERNEL, &r);
	else if (cm_jval_streq(kind, "gpu_memcpy"))
		rc = digest_activity(&a, CM_REC_MEMCPY, &r);
	else if (cm_jval_streq(kind, "gpu_memset"))
		rc = digest_activity(&a, CM_REC_MEMSET, &r);
	else if (cm_jval_streq(kind, "cuda_runtime"))
		rc = digest_api(&a, 0, &r);
	else if (cm_jval_streq(kind, "cuda_driver"))
		rc = digest_api(&a, 1, &r);
	else if (cm_jval_streq(kind, "overhead"))
		rc = digest_overhead(&a, &r);
	else if (cm_jval_streq(kind, "cuda_sync"))
		rc = digest_sync(&a, &r);
	else if (cm_jval_streq(kind, "cuda_event"))
		rc = digest_cuda_event(&a, &r);
	else
		return 0;
	if (rc > 0) /* not kept */
		return 0;
	if (rc < 0)
		return -1;
	r.name = d->text.p;
	r.nlen = (uint32_t)d->text.len;
	r.extra = d->dumps.p;
	r.xlen = (uint32_t)d->dumps.len;
	cm_gpurec_pack(out, &r);
	return 0;
}

int cm_gpu_digest_collect(cm_gpu *g, cm_buf *out)
{
	struct batch_tail t;
	uint32_t rec_len;
	if (out->len < 4 + sizeof t)
		return 0;
	memcpy(&rec_len, out->p, 4);
	memcpy(&t, out->p + out->len - sizeof t, sizeof t);
	g->max_end = t.max_end > g->max_end ? t.max_end : g->max_end;
	g->st.events += t.events;
	g->api_lo = t.api_lo < g->api_lo ? t.api_lo : g->api_lo;
	g->api_hi = t.api_hi > g->api_hi ? t.api_hi : g->api_hi;
	g->api_n += t.api_n;
	if (gpu_collect_pairs(g, out->p + 4 + rec_len, (size_t)t.pair_bytes) < 0)
		return -1;
	for (uint64_t i = 0; i < t.astream_bytes; i += 16)
		cm_hmap_put(g->act_streams, out->p + 4 + rec_len + t.pair_bytes + i, NULL);
	cm_buf_put(&g->block, out->p + 4, rec_len);
	out->len = 0;
	if (g->block.len >= CM_GPU_BLOCK) {
		if (!g->recs && !(g->recs = cm_temp_file("records")))
			return -1;
		return cm_gpurec_block_write(g->recs, &g->block);
	}
	return 0;
}

int cm_gpu_digest_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset)
{
	if (!g->dg)
		g->dg = cm_gpu_digest_new(g);
	g->dgout.len = 0;
	if (cm_gpu_digest_batch_event(g->dg, index, ev, offset, &g->dgout) < 0 ||
	    cm_gpu_digest_batch_event(g->dg, 0, NULL, 0, &g->dgout) < 0)
		return -1;
	return cm_gpu_digest_collect(g, &g->dgout);
}

int cm_gpu_digest_finish(cm_gpu *g)
{
	if (g->recs && (cm_gpurec_block_write(g->recs, &g->block) < 0 || fflush(g->recs) != 0))
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno)), -1;
	return 0;
}

/* Hand each block of records to POOL, in window order: the one still in
 * memory when the window was small (as a copy: the pool takes the bytes it
 * is given, and the plan and the output both read the blocks), else each
 * block of the temporary file in turn.  0, or -1 (after a report, or as
 * cm_opool_put). */
static int feed_pool(cm_gpu *g, cm_opool *pool)
{
	cm_buf b = {0};
	int rc;
	if (!g->recs) {
		cm_buf_put(&b, g->block.p, g->block.len);
		rc = b.len ? cm_opool_put(pool, &b) : 0;
		cm_buf_free(&b);
		return rc;
	}
	if (fseek(g->recs, 0, SEEK_SET) != 0)
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno)), -1;
	while ((rc = cm_gpurec_block_read(g->recs, &b)) == 1)
		if (cm_opool_put(pool, &b) < 0) {
			rc = -1;
			break;
		}
	cm_buf_free(&b);
	return rc;
}

/* An overhead record that the rule drops. */
static int dropped(const cm_gpu *g, const cm_gpurec *r)
{
	return (r->flags & CM_REC_ABR) && g->max_end > 0 && r->v[CM_RO_START] > g->max_end;
}

/* Kineto's sync type of a sync record: CUPTI's uint32 field. */
static uint32_t sync_type(const cm_gpurec *r) { return (uint32_t)(unsigned __int128)r->v[CM_RS_TYPE]; }

/* Whether a sync record (without a deferred error) is drawn: in a window of
 * version 2, every one but a "Stream Wait Event" on a stream where no
 * kernel, copy or set ran: Kineto holds those back until the end and then
 * drops them as noise. */
static int sync_drawn(const cm_gpu *g, const cm_gpurec *r)
{
	int64_t key[2];
	if (g->version < 2)
		return 0;
	if (sync_type(r) != CM_SYNC_STREAM_WAIT_EVENT)
		return 1;
	key[0] = (int64_t)r->v[CM_RS_DEV];
	key[1] = (int64_t)r->v[CM_RS_STREAM];
	return cm_hmap_get(g->act_streams, key) != NULL;
}

/* The External id Kineto writes on the GPU-side event of correlation CORR:
 * that of the CPU operator linked to it, 0 when none (version 2 only). */
static int64_t cpu_ext(const cm_gpu *g, cm_int corr)
{
	const int64_t *e;
	if (!g->cext || corr < INT64_MIN || corr > INT64_MAX)
		return 0;
	e = cm_idmap_get(g->cext, (int64_t)corr);
	return e ? *e : 0;
}

/* --------------------------------------------------- plan: rows and extent */

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
	struct span_slot *ss = cm_idmap_put(g->spans, ext, &created);
	struct span *sp;
	if (created) {
		ss->dev = dev;
		ss->stream = stream;
		ss->start = start;
		ss->end = end;
	} else if (ss->dev == dev && ss->stream == stream) {
		widen(&ss->start, &ss->end, start, end);
	} else {
		int64_t key[3] = {ext, dev, stream};
		sp = cm_hmap_put(g->spans_more, key, &created);
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
};

struct plan_part {
	cm_gpu *g;
	cm_hmap *seen; /* (kind, a, b, c) -> offset of its note in notes */
	cm_buf notes;
	struct plan_head h;
};

/* Note a row key or span (KIND, A, B, C) seen in the block: a new key gets
 * a note; a span seen again is widened. */
static void note(struct plan_part *pp, int64_t kind, int64_t a, int64_t b, int64_t c, cm_int start, cm_int end)
{
	int64_t key[4] = {kind, a, b, c};
	int created;
	uint64_t *at = cm_hmap_put(pp->seen, key, &created);
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
	const cm_gpu *g = pp->g;
	pp->h.min_ts = cm_py_min(pp->h.min_ts, ts);
	pp->h.max_end_ts = cm_py_max(pp->h.max_end_ts, ts + cm_py_max(dur, 0.0));
	if (g->have_cpu_span) {
		pp->h.x_events++;
		pp->h.x_outside += ts + cm_py_max(dur, 0.0) < g->cpu_min_ts || ts > g->cpu_max_end;
	}
	pp->h.st_x_events++;
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
	uint32_t type = sync_type(r);
	note(pp, NOTE_DEV, dev, 0, 0, v[CM_RS_START], 0);
	if (cm_tid_int32(v[CM_RS_STREAM]) != -1)
		note(pp, NOTE_STREAM, dev, (int64_t)v[CM_RS_STREAM], 0, 0, 0);
	else
		note(pp, NOTE_DEVROW, dev, 0, 0, 0, 0);
	x_times(g, v[CM_RS_START], v[CM_RS_END], &ts, &dur);
	part_extent(pp, ts, dur);
	if (type == CM_SYNC_EVENT || type == CM_SYNC_STREAM_WAIT_EVENT) {
		int64_t key[2] = {(int64_t)v[CM_RS_CTX], (int64_t)v[CM_RS_EVENT]}, ix = (int64_t)r->index;
		const struct wait_info *w = cm_hmap_get(g->evmap, key);
		if (w) {
			struct wait_info copy = *w;
			*(struct wait_info *)cm_hmap_put(g->waits, &ix, NULL) = copy;
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
static void api_operator(cm_gpu *g, const cm_gpurec *r)
{
	cm_int corr = r->v[CM_RA_CORR], pid = r->v[CM_RA_PID];
	int32_t id = cm_tid_int32(r->v[CM_RA_RAWTID]);
	int64_t tid, ext;
	double ts, dur;
	if (corr < g->api_lo || corr > g->api_hi || pid < INT64_MIN || pid > INT64_MAX ||
	    cm_idmap_get(g->cext, (int64_t)corr))
		return;
	if (cm_tidmap_lookup(g->tidmap, (int64_t)pid, id, &tid) != CM_TIDMAP_FOUND)
		tid = id;
	x_times(g, r->v[CM_RA_START], r->v[CM_RA_END], &ts, &dur);
	if (cm_opindex_find(g->ops, (int64_t)pid, tid, ts, ts + dur, &ext))
		*(int64_t *)cm_idmap_put(g->cext, (int64_t)corr, NULL) = ext;
}


static int plan_record(struct plan_part *pp, const cm_gpurec *r)
{
	cm_gpu *g = pp->g;
	double ts, dur;
	cm_int tid = 0;
	int fell;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER: {
		int64_t pid64 = (int64_t)r->v[CM_RA_PID], moved;
		if (api_thread(g, r, &tid, &fell) < 0)
			return -1;
		if (g->ops && g->cext && (r->flags & CM_REC_SPAN))
			api_operator(g, r);
		if (!(r->flags & CM_REC_REGISTERED))
			return 0;
		if (fell && g->repair &&
		    cm_repair_tid(g->repair, pid64, (int64_t)tid, 1, cm_int_to_double(r->v[CM_RA_START]), 0, &moved))
			tid = moved;
		note(pp, NOTE_PROC, pid64, 0, 0, r->v[CM_RA_START], 0);
		note(pp, NOTE_THREAD, pid64, (int64_t)tid, 0, 0, 0);
		x_times(g, r->v[CM_RA_START], r->v[CM_RA_END], &ts, &dur);
		part_extent(pp, ts, dur);
		pp->h.api_rows++;
		return 0;
	}
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET: {
		int64_t d64 = (int64_t)r->v[CM_RG_DEV], s64 = (int64_t)r->v[CM_RG_STREAM];
		cm_int corr = r->v[CM_RG_CORR], start = r->v[CM_RG_START], end = r->v[CM_RG_END];
		note(pp, NOTE_DEV, d64, 0, 0, start, 0);
		note(pp, NOTE_STREAM, d64, s64, 0, 0, 0);
		x_times(g, start, end, &ts, &dur);
		part_extent(pp, ts, dur);
		if (corr >= INT64_MIN && corr <= INT64_MAX) {
			int64_t c64 = (int64_t)corr;
			const int64_t *ext = cm_idmap_get(g->uext, c64);
			if (ext)
				note(pp, NOTE_SPAN, *ext, d64, s64, start, end);
		}
		return 0;
	}
	case CM_REC_OVERHEAD:
		if (dropped(g, r))
			return 0;
		if (r->flags & CM_REC_DEFERRED)
			return gpu_ev_error(g, r->index, r->offset, "%.*s", (int)r->xlen, r->extra);
		pp->h.need_overhead = 1;
		x_times(g, r->v[CM_RO_START], r->v[CM_RO_END], &ts, &dur);
		part_extent(pp, ts, dur);
		return 0;
	case CM_REC_SYNC:
		if (g->version < 2)
			return 0;
		if (r->flags & CM_REC_DEFERRED)
			return gpu_ev_error(g, r->index, r->offset, "%.*s", (int)r->xlen, r->extra);
		if (sync_drawn(g, r))
			plan_sync(pp, r);
		return 0;
	case CM_REC_CUDAEVENT:
		if (g->version >= 2) {
			/* where the event was last recorded, for the event syncs after it */
			int64_t key[2] = {(int64_t)r->v[CM_RE_CTX], (int64_t)r->v[CM_RE_EVENT]};
			struct wait_info *w = cm_hmap_put(g->evmap, key, NULL);
			w->stream = cm_tid_int32(r->v[CM_RE_STREAM]);
			w->corr = cm_tid_int32(r->v[CM_RE_CORR]);
		}
		return 0;
	}
	return 0;
}

/* The pool's work: one block of records into a part, written to OUT as a
 * plan_head and the notes. */
static int plan_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct plan_part *pp = wctx;
	const char *p = in->p, *end = in->p + in->len;
	cm_gpurec r;
	cm_hmap_free(pp->seen);
	pp->seen = cm_hmap_new(32, 8);
	pp->notes.len = 0;
	memset(&pp->h, 0, sizeof pp->h);
	pp->h.min_ts = INFINITY;
	pp->h.max_end_ts = -INFINITY;
	while (p < end) {
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return cm_error(CM_EXIT_IO, NULL, -1, "a temporary file was corrupted"), -1;
		if (plan_record(pp, &r) < 0)
			return -1;
	}
	cm_buf_put(out, &pp->h, sizeof pp->h);
	cm_buf_put(out, pp->notes.p, pp->notes.len);
	return 0;
}

/* The pool's sink: a block's part into the tables, in window order. */
static int plan_fold(void *sctx, cm_buf *out)
{
	cm_gpu *g = sctx;
	struct plan_head h;
	const char *p = out->p + sizeof h, *end = out->p + out->len;
	memcpy(&h, out->p, sizeof h);
	g->min_ts = cm_py_min(g->min_ts, h.min_ts);
	g->max_end_ts = cm_py_max(g->max_end_ts, h.max_end_ts);
	g->x_events += h.x_events;
	g->x_outside += h.x_outside;
	g->st.x_events += h.st_x_events;
	g->st.api_rows += h.api_rows;
	g->need_overhead |= h.need_overhead;
	for (; p < end; p += sizeof(struct plan_note)) {
		struct plan_note n;
		memcpy(&n, p, sizeof n);
		switch (n.kind) {
		case NOTE_PROC: setdefault(g->procs, n.a, n.start); break;
		case NOTE_THREAD: add_pair(g->threads, n.a, n.b); break;
		case NOTE_DEV: setdefault(g->devices, n.a, n.start); break;
		case NOTE_STREAM: add_pair(g->streams, n.a, n.b); break;
		case NOTE_SPAN: span_note(g, n.a, n.b, n.c, n.start, n.end); break;
		case NOTE_DEVROW: cm_hmap_put(g->device_rows, &n.a, NULL); break;
		}
	}
	return 0;
}

int cm_gpu_plan(cm_gpu *g, int jobs)
{
	/* one thread with the repair stage, which counts what it moves, and
	 * for a window of version 2, whose syncs look up where an event was
	 * last recorded (and the API calls note their operators): in window
	 * order, as they come */
	int n = g->repair || g->version >= 2 ? 1 : jobs < 1 ? 1 : jobs, rc;
	struct plan_part *pp = cm_xcalloc((size_t)n, sizeof *pp);
	void **ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	cm_opool *pool;
	if (!g->spans && !(g->spans = cm_idmap_new(sizeof(struct span_slot), g->ua_lo, g->ua_hi, g->ua_count,
						    g->budget))) {
		free(pp);
		free(ctx);
		return -1;
	}
	if (g->version >= 2) {
		if (!g->evmap)
			g->evmap = cm_hmap_new(16, sizeof(struct wait_info));
		if (!g->waits)
			g->waits = cm_hmap_new(8, sizeof(struct wait_info));
	}
	for (int i = 0; i < n; i++) {
		pp[i].g = g;
		ctx[i] = &pp[i];
	}
	pool = cm_opool_new(n, plan_block, ctx, plan_fold, g);
	rc = feed_pool(g, pool);
	rc = cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	for (int i = 0; i < n; i++) {
		cm_hmap_free(pp[i].seen);
		cm_buf_free(&pp[i].notes);
	}
	free(pp);
	free(ctx);
	if (rc < 0)
		return -1;
	cm_hmap_free(g->evmap); /* the syncs have taken what they need */
	g->evmap = NULL;
	cm_gpu_plan_finish(g);
	return 0;
}

/* ---------------------------------------------------- render: the output */

/* What one worker needs to write events: its own scratch space; the tables
 * of cm_gpu are only read. */
struct render {
	cm_gpu *g;
	struct args args;
	cm_arena *scratch;
	cm_buf text, dumps;
};

static void render_api(struct render *R, const cm_gpurec *r, cm_buf *b)
{
	cm_gpu *g = R->g;
	int driver = r->kind == CM_REC_DRIVER, fell;
	char fallback[64], tstext[48];
	const char *name;
	cm_int tid = 0, corr = r->v[CM_RA_CORR], pid = r->v[CM_RA_PID];
	int64_t ext;
	size_t ts_len;
	if (!(r->flags & CM_REC_REGISTERED))
		return;
	api_thread(g, r, &tid, &fell); /* cannot fail: the plan made the same lookup */
	if (fell && g->repair) {
		int64_t moved;
		if (cm_repair_tid(g->repair, (int64_t)pid, (int64_t)tid, 1, cm_int_to_double(r->v[CM_RA_START]), 1,
				  &moved))
			tid = moved;
	}
	name = api_name(driver, r->v[CM_RA_CBID], fallback);
	cm_buf_putc(b, ',');
	gpu_x_head(b, driver ? "cuda_driver" : "cuda_runtime", name, strlen(name), pid, tid);
	x_times_text(g, b, r->v[CM_RA_START], r->v[CM_RA_END], tstext, &ts_len);
	cm_buf_lit(b, ",\"args\":{\"cbid\":");
	cm_jw_int(b, r->v[CM_RA_CBID]);
	cm_buf_lit(b, ",\"correlation\":");
	cm_jw_int(b, corr);
	if ((ext = cpu_ext(g, corr)) != 0) {
		cm_buf_lit(b, ",\"External id\":");
		cm_jw_int(b, ext);
	}
	cm_buf_lit(b, "}}");
	if (corr != 0 && cm_cbid_requires_flow(driver, name))
		flow(b, 's', corr, pid, tid, tstext, ts_len);
}

/* args[KEY] = the JSON text in R->text, kept in the event's scratch arena. */
static void arg_text(struct render *R, const char *key)
{
	char *s = cm_arena_alloc(R->scratch, R->text.len);
	memcpy(s, R->text.p, R->text.len);
	gpu_arg_raw(&R->args, key, s, R->text.len);
	R->text.len = 0;
}

/* [X, Y, Z] into R->text. */
static void triple(struct render *R, const int32_t *x)
{
	cm_buf_putc(&R->text, '[');
	for (int i = 0; i < 3; i++) {
		if (i)
			cm_buf_putc(&R->text, ',');
		cm_jw_int(&R->text, x[i]);
	}
	cm_buf_putc(&R->text, ']');
}

/* The args Kineto writes that the reference does not, after the
 * reference's (kineto.h): a kernel's launch configuration and occupancy
 * when the window has them; in a window of version 2, the operator's
 * External id and a copy's or set's bandwidth. */
static void kineto_args(struct render *R, const cm_gpurec *r)
{
	const cm_gpu *g = R->g;
	const cm_int *v = r->v;
	struct args *A = &R->args;
	int64_t ext = g->version >= 2 ? cpu_ext(g, v[CM_RG_CORR]) : 0;
	if (ext)
		gpu_arg_int(A, "External id", ext);
	if (r->flags & CM_REC_LAUNCH) {
		cm_kin_launch k;
		const cm_kin_props *p = NULL;
		int sms;
		for (int i = 0; i < 3; i++) {
			k.grid[i] = cm_tid_int32(v[CM_RK_GX + i]);
			k.block[i] = cm_tid_int32(v[CM_RK_BX + i]);
		}
		k.regs = (uint16_t)(unsigned __int128)v[CM_RK_REGS];
		k.static_smem = cm_tid_int32(v[CM_RK_SSMEM]);
		k.dynamic_smem = cm_tid_int32(v[CM_RK_DSMEM]);
		/* the window's properties of the device first, else the CPU trace's */
		if (v[CM_RG_DEV] >= INT64_MIN && v[CM_RG_DEV] <= INT64_MAX) {
			p = cm_kin_devices_find(&g->wprops, (int64_t)v[CM_RG_DEV]);
			if (!p && g->cprops)
				p = cm_kin_devices_find(g->cprops, (int64_t)v[CM_RG_DEV]);
		}
		sms = p ? p->occ.numSms : 0;
		gpu_arg_int(A, "queued", v[CM_RK_QUEUED]);
		gpu_arg_int(A, "registers per thread", k.regs);
		gpu_arg_int(A, "shared memory", (int32_t)((uint32_t)k.static_smem + (uint32_t)k.dynamic_smem));
		cm_kin_write_float(&R->text, cm_kin_blocks_per_sm(&k, sms));
		arg_text(R, "blocks per SM");
		cm_kin_write_float(&R->text, cm_kin_warps_per_sm(&k, sms));
		arg_text(R, "warps per SM");
		triple(R, k.grid);
		arg_text(R, "grid");
		triple(R, k.block);
		arg_text(R, "block");
		gpu_arg_int(A, "est. achieved occupancy %", cm_kin_occupancy_pct(cm_kin_occupancy(&k, p)));
	}
	if (g->version >= 2 && (r->kind == CM_REC_MEMCPY || r->kind == CM_REC_MEMSET)) {
		cm_kin_write_bandwidth(&R->text, v[CM_RG_BYTES], v[CM_RG_START], v[CM_RG_END]);
		arg_text(R, "memory bandwidth (GB/s)");
	}
}

static const char *const activity_cat[] = {[CM_REC_KERNEL] = "kernel", [CM_REC_MEMCPY] = "gpu_memcpy",
					   [CM_REC_MEMSET] = "gpu_memset"};

static void render_activity(struct render *R, const cm_gpurec *r, cm_buf *b)
{
	struct args *A = &R->args;
	const cm_int *v = r->v;
	size_t ts_len;
	char tstext[48];
	cm_arena_reset(R->scratch);
	A->n = 0;
	cm_buf_putc(b, ',');
	gpu_x_head(b, activity_cat[r->kind], r->name, r->nlen, v[CM_RG_DEV], v[CM_RG_STREAM]);
	x_times_text(R->g, b, v[CM_RG_START], v[CM_RG_END], tstext, &ts_len);
	gpu_arg_int(A, "device", v[CM_RG_DEV]);
	gpu_arg_int(A, "context", v[CM_RG_CTX]);
	gpu_arg_int(A, "stream", v[CM_RG_STREAM]);
	gpu_arg_int(A, "correlation", v[CM_RG_CORR]);
	if (v[CM_RG_GRAPH])
		gpu_arg_int(A, "graph id", v[CM_RG_GRAPH]);
	if (v[CM_RG_NODE])
		gpu_arg_int(A, "graph node id", v[CM_RG_NODE]);
	if (r->flags & CM_REC_ANN)
		gpu_annotation_args(R->scratch, A, cm_jval_unpack(R->scratch, r->extra, r->xlen), &R->dumps);
	if (r->kind == CM_REC_MEMCPY) {
		gpu_arg_int(A, "bytes", v[CM_RG_BYTES]);
		gpu_arg_copy_kind(A, "copy kind", v[CM_RG_K1]);
		gpu_arg_memory_kind(A, "src kind", v[CM_RG_K2]);
		gpu_arg_memory_kind(A, "dst kind", v[CM_RG_K3]);
		gpu_arg_int(A, "flags", v[CM_RG_FLAGS]);
	} else if (r->kind == CM_REC_MEMSET) {
		gpu_arg_int(A, "bytes", v[CM_RG_BYTES]);
		gpu_arg_int(A, "value", v[CM_RG_K1]);
		gpu_arg_int(A, "memory kind", v[CM_RG_K2]);
		gpu_arg_int(A, "flags", v[CM_RG_FLAGS]);
	}
	kineto_args(R, r);
	gpu_write_args(b, A);
	if (v[CM_RG_CORR] != 0)
		flow(b, 'f', v[CM_RG_CORR], v[CM_RG_DEV], v[CM_RG_STREAM], tstext, ts_len);
}

static void render_overhead(struct render *R, const cm_gpurec *r, cm_buf *b)
{
	if (dropped(R->g, r))
		return;
	cm_buf_putc(b, ',');
	gpu_x_head(b, "overhead", r->name, r->nlen, OVERHEAD_PID, 0);
	cm_buf_lit(b, ",\"ts\":");
	cm_jw_us_of_ns(b, r->v[CM_RO_START] - R->g->base_ns);
	cm_buf_lit(b, ",\"dur\":");
	cm_jw_us_of_ns(b, r->v[CM_RO_END] - r->v[CM_RO_START]);
	cm_buf_lit(b, ",\"args\":{}}");
}

/* A drawn sync record, as Kineto writes a CUDA_SYNC activity: on the row of
 * its device and stream (Kineto's sanitizeTid of the stream as an int32:
 * an absent stream, all ones, is row 1), "External id" first (its operator
 * or, as Kineto does for syncs, its own correlation id), and an "f" flow
 * into it from the API call of the same correlation. */
static void render_sync(struct render *R, const cm_gpurec *r, cm_buf *b)
{
	const cm_gpu *g = R->g;
	const cm_int *v = r->v;
	uint32_t type = sync_type(r);
	int32_t stream = cm_tid_int32(v[CM_RS_STREAM]);
	cm_int row = stream == INT32_MIN ? 0 : stream < 0 ? -(cm_int)stream : stream;
	const char *name = cm_kin_sync_name(v[CM_RS_TYPE]);
	int64_t ext;
	size_t ts_len;
	char tstext[48];
	if (!sync_drawn(g, r))
		return;
	cm_buf_putc(b, ',');
	gpu_x_head(b, "cuda_sync", name, strlen(name), v[CM_RS_DEV], row);
	x_times_text(g, b, v[CM_RS_START], v[CM_RS_END], tstext, &ts_len);
	cm_buf_lit(b, ",\"args\":{");
	ext = cpu_ext(g, v[CM_RS_CORR]);
	if (ext || v[CM_RS_CORR]) {
		cm_buf_lit(b, "\"External id\":");
		if (ext)
			cm_jw_int(b, ext);
		else
			cm_jw_int(b, v[CM_RS_CORR]);
		cm_buf_putc(b, ',');
	}
	cm_buf_lit(b, "\"cuda_sync_kind\":");
	cm_jw_string(b, name, strlen(name));
	if (type == CM_SYNC_EVENT || type == CM_SYNC_STREAM_WAIT_EVENT) {
		int64_t ix = (int64_t)r->index;
		const struct wait_info *w = cm_hmap_get(g->waits, &ix);
		cm_buf_lit(b, ",\"wait_on_stream\":");
		cm_jw_int(b, w ? w->stream : -1);
		cm_buf_lit(b, ",\"wait_on_cuda_event_record_corr_id\":");
		cm_jw_int(b, w ? w->corr : -1);
		cm_buf_lit(b, ",\"wait_on_cuda_event_id\":");
		cm_jw_int(b, v[CM_RS_EVENT]);
	}
	cm_buf_lit(b, ",\"stream\":");
	cm_jw_int(b, stream);
	cm_buf_lit(b, ",\"correlation\":");
	cm_jw_int(b, v[CM_RS_CORR]);
	cm_buf_lit(b, ",\"device\":");
	cm_jw_int(b, v[CM_RS_DEV]);
	cm_buf_lit(b, ",\"context\":");
	cm_jw_int(b, v[CM_RS_CTX]);
	cm_buf_lit(b, "}}");
	if (v[CM_RS_CORR] > 0)
		flow(b, 'f', v[CM_RS_CORR], v[CM_RS_DEV], row, tstext, ts_len);
}

/* The pool's work: the events of one block of records, each with a comma
 * in front. */
static int render_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct render *R = wctx;
	const char *p = in->p, *end = in->p + in->len;
	cm_gpurec r;
	while (p < end) {
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return -1; /* cannot happen: plan read the same bytes */
		switch (r.kind) {
		case CM_REC_RUNTIME:
		case CM_REC_DRIVER: render_api(R, &r, out); break;
		case CM_REC_OVERHEAD: render_overhead(R, &r, out); break;
		case CM_REC_SYNC: render_sync(R, &r, out); break;
		case CM_REC_CUDAEVENT: break;
		default: render_activity(R, &r, out); break;
		}
	}
	return 0;
}

/* The pool's sink: rendered text to the output, in order. */
static int write_rendered(void *sctx, cm_buf *out)
{
	cm_evout *eo = sctx;
	const char *p = out->p;
	size_t n = out->len;
	if (!n)
		return 0;
	if (eo->first) { /* the leading comma goes only between elements */
		p++;
		n--;
		eo->first = 0;
	}
	if (eo->buf.len && cm_evout_flush(eo) < 0)
		return -1;
	return cm_output_write(eo->out, p, n);
}

int cm_gpu_write_events(cm_gpu *g, cm_evout *eo, int jobs)
{
	int n = g->repair ? 1 : jobs < 1 ? 1 : jobs, rc;
	struct render *R = cm_xcalloc((size_t)n, sizeof *R);
	void **ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	cm_opool *pool;
	for (int i = 0; i < n; i++) {
		R[i].g = g;
		R[i].scratch = cm_arena_new();
		ctx[i] = &R[i];
	}
	pool = cm_opool_new(n, render_block, ctx, write_rendered, eo);
	rc = feed_pool(g, pool);
	rc = cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	for (int i = 0; i < n; i++) {
		cm_arena_free(R[i].scratch);
		cm_buf_free(&R[i].text);
		cm_buf_free(&R[i].dumps);
		free(R[i].args.v);
	}
	free(R);
	free(ctx);
	return rc;
}
