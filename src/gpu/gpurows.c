/* gpurows.c - the rows the window opens (metadata events, sorted as the
 * reference sorts them) and the gpu_user_annotation spans. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "exitcode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- sorted row tables */

/* Keys of M (KW 64-bit words each) sorted as tuples; caller frees. */
static int64_t *sorted_keys(const cm_hmap *m, int kw, size_t *n);

static int kw_cmp;
static int cmp_keys(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;
	for (int i = 0; i < kw_cmp; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int64_t *sorted_keys(const cm_hmap *m, int kw, size_t *n)
{
	int64_t *keys = cm_xmalloc((cm_hmap_count(m) + 1) * (size_t)kw * 8);
	size_t k = 0;
	for (size_t i = 0; i < cm_hmap_slots(m); i++) {
		const void *key;
		if (cm_hmap_slot(m, i, &key))
			memcpy(keys + k++ * (size_t)kw, key, (size_t)kw * 8);
	}
	kw_cmp = kw;
	qsort(keys, k, (size_t)kw * 8, cmp_keys);
	*n = k;
	return keys;
}

/* One metadata event of a window row: ts from FIRST_NS (0.0 when NULL), the
 * tid exported by the thread-id rule; see cm_evout_meta.  FIRST_NS points
 * into a hash-map value, which is only 8-aligned: the cm_int_a8 type makes
 * the compiler load it as such (a plain cm_int * promises 16, and gcc -O1
 * then uses an aligned 16-byte load that faults). */
static int meta(cm_evout *eo, const char *name, cm_gpu *g, const cm_int_a8 *first_ns, cm_int pid, cm_int tid,
		const char *arg_key, const char *arg_text, cm_int arg_int)
{
	char ts[48] = "0.0";
	double d;
	if (first_ns)
		ts[cm_us_text(*first_ns - g->base_ns, ts, &d)] = 0;
	return cm_evout_meta(eo, name, ts, pid, cm_tid_export(tid), arg_key, arg_text, arg_int);
}

/* thread_name ("FMT" of the tid) and thread_sort_index events for the N
 * sorted (pid, tid) rows in KEYS.  0 or -1. */
static int thread_rows(cm_evout *eo, cm_gpu *g, const int64_t *keys, size_t n, const char *fmt)
{
	char text[96];
	for (size_t i = 0; i < n; i++) {
		int64_t pid = keys[2 * i], tid = keys[2 * i + 1];
		snprintf(text, sizeof text, fmt, (long long)tid);
		if (meta(eo, "thread_name", g, NULL, pid, tid, "name", text, 0) ||
		    meta(eo, "thread_sort_index", g, NULL, pid, tid, "sort_index", NULL, tid))
			return -1;
	}
	return 0;
}

int cm_gpu_write_metadata(cm_gpu *g, cm_evout *eo)
{
	size_t n;
	int64_t *k;
	char text[96];
	int rc = 0;

	k = sorted_keys(g->devices, 1, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct first_ts *f = cm_hmap_get(g->devices, &k[i]);
		snprintf(text, sizeof text, "GPU %lld", (long long)k[i]);
		rc = meta(eo, "process_name", g, &f->ns, k[i], 0, "name", "python", 0) ||
		     meta(eo, "process_labels", g, &f->ns, k[i], 0, "labels", text, 0) ||
		     meta(eo, "process_sort_index", g, &f->ns, k[i], 0, "sort_index", NULL,
			  (cm_int)GPU_SORT_BASE + k[i]);
	}
	free(k);
	k = sorted_keys(g->procs, 1, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct first_ts *f = cm_hmap_get(g->procs, &k[i]);
		rc = meta(eo, "process_name", g, &f->ns, k[i], 0, "name", "python", 0) ||
		     meta(eo, "process_labels", g, &f->ns, k[i], 0, "labels", "CPU", 0) ||
		     meta(eo, "process_sort_index", g, &f->ns, k[i], 0, "sort_index", NULL, k[i]);
	}
	free(k);
	k = sorted_keys(g->threads, 2, &n);
	rc = rc || thread_rows(eo, g, k, n, "thread %lld");
	free(k);
	k = sorted_keys(g->streams, 2, &n);
	rc = rc || thread_rows(eo, g, k, n, "stream %lld ");
	free(k);
	if (g->need_overhead && !rc)
		rc = meta(eo, "process_name", g, NULL, OVERHEAD_PID, 0, "name", "python", 0) ||
		     meta(eo, "process_labels", g, NULL, OVERHEAD_PID, 0, "labels", "Overhead", 0) ||
		     meta(eo, "process_sort_index", g, NULL, OVERHEAD_PID, 0, "sort_index", NULL,
			  OVERHEAD_SORT_INDEX) ||
		     meta(eo, "thread_name", g, NULL, OVERHEAD_PID, 0, "name", "thread 0", 0) ||
		     meta(eo, "thread_sort_index", g, NULL, OVERHEAD_PID, 0, "sort_index", NULL, 0);
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ spans */

/* The ts and dur of a span: 1 ns wider on each side, as Kineto draws them. */
static void span_times(const cm_gpu *g, const struct span *sp, double *ts, double *dur)
{
	*ts = cm_py_max(cm_int_to_double(sp->start - g->base_ns) / 1000.0 - 0.001, 0.0);
	*dur = cm_py_max(cm_int_to_double(sp->end - sp->start) / 1000.0 + 0.002, 0.0);
}

void cm_gpu_plan_finish(cm_gpu *g)
{
	for (size_t i = 0; i < cm_hmap_slots(g->spans); i++) {
		const int64_t *key;
		const struct span *sp = cm_hmap_slot(g->spans, i, (const void **)&key);
		const struct ua_ent *u;
		double ts, dur;
		if (!sp || !(u = cm_hmap_get(g->ua, &key[0])) || !u->name)
			continue;
		span_times(g, sp, &ts, &dur);
		gpu_extent(g, ts, dur);
	}
}

void cm_gpu_extent(const cm_gpu *g, double *min_ts, double *max_end)
{
	*min_ts = g->min_ts;
	*max_end = g->max_end_ts;
}

void cm_gpu_set_cpu_span(cm_gpu *g, double min_ts, double max_end)
{
	g->have_cpu_span = 1;
	g->cpu_min_ts = min_ts;
	g->cpu_max_end = max_end;
}

void cm_gpu_overlap(const cm_gpu *g, uint64_t *events, uint64_t *outside)
{
	*events = g->x_events;
	*outside = g->x_outside;
}

const cm_hmap *cm_gpu_processes(const cm_gpu *g) { return g->procs; }

int cm_gpu_write_spans(cm_gpu *g, cm_evout *eo)
{
	size_t n;
	int64_t *k = sorted_keys(g->spans, 3, &n);
	for (size_t i = 0; i < n; i++) {
		const struct span *sp = cm_hmap_get(g->spans, &k[3 * i]);
		const struct ua_ent *u = cm_hmap_get(g->ua, &k[3 * i]);
		double ts, dur;
		if (!u || !u->name)
			continue; /* the annotation's name is not a string */
		span_times(g, sp, &ts, &dur);
		if (cm_evout_next(eo) < 0) {
			free(k);
			return -1;
		}
		gpu_x_head(&eo->buf, "gpu_user_annotation", u->name, u->len, k[3 * i + 1], k[3 * i + 2]);
		cm_buf_lit(&eo->buf, ",\"ts\":");
		cm_jw_double(&eo->buf, ts);
		cm_buf_lit(&eo->buf, ",\"dur\":");
		cm_jw_double(&eo->buf, dur);
		cm_buf_lit(&eo->buf, ",\"args\":{\"External id\":");
		cm_jw_int(&eo->buf, k[3 * i]);
		cm_buf_lit(&eo->buf, "}}");
	}
	free(k);
	return 0;
}

