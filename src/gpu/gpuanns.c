/* gpuanns.c - the CPU trace's user annotations and the gpu_user_annotation
 * spans Kineto draws of them (a window of version 2).
 *
 * Kineto's rule (libkineto GenericActivityProfiler.cpp, handleGpuActivity
 * and GpuUserEventMap): torch pushes the id of every user-scope
 * record_function (a "user_annotation" of the CPU trace) to CUPTI as an
 * external correlation of kind CUSTOM1, so a CUDA call is tied to the
 * innermost user annotation open on its thread; each kernel, copy and set
 * of the call's correlation id widens one span per (annotation, device,
 * stream), from the first one's start to the last one's end, named after
 * the annotation, on the device's process and the stream's row, with the
 * args {"External id": the annotation's id}, no flow, and drawn 1 ns
 * earlier and 2 ns longer.  Under a separate collector torch pushes
 * nothing, so the annotation is found here as the operators are for the
 * External ids (opindex.h): the innermost user_annotation of the CPU trace
 * on the call's thread whose span encloses the call's.
 *
 * The annotations are numbered in trace order; the index holds their
 * numbers, a table in a temporary file their ids and names (the names in a
 * second one), both mapped once all are in, their pages watched with the
 * id tables'.  A correlation's annotation (cua) is found when the plan
 * meets its API call; the spans are noted in a walk of the records after
 * the plan's, since a kernel may come before its call in the window. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "base/opool.h"
#include "base/exitcode.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* An annotation of the table: its External id, and its name's bytes in
 * the names file (LEN -1: the name is not a string, so it draws no span). */
struct ann_rec {
	int64_t ext, off, len;
};

/* Report a failed write of a temporary file; -1. */
static int write_error(void)
{
	return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
}

int cm_gpu_add_cpu_ann(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext, const char *name,
		       size_t len)
{
	cm_gpu *g = ctx;
	struct ann_rec rec = {ext, (int64_t)g->ann.ann_text_len, name ? (int64_t)len : -1};
	if (!g->ann.anns) {
		g->ann.anns = cm_opindex_new(cm_pages_budget_bytes() / 4); /* fewer than the operators */
		if (!(g->ann.ann_tab = cm_temp_file("annotations")) || !(g->ann.ann_text = cm_temp_file("annotations")))
			return -1;
	}
	if (cm_opindex_add(g->ann.anns, pid, tid, ts, end, (int64_t)g->ann.nanns) < 0)
		return -1;
	if (fwrite(&rec, sizeof rec, 1, g->ann.ann_tab) != 1 || (name && len && fwrite(name, 1, len, g->ann.ann_text) != len))
		return write_error();
	g->ann.nanns++;
	if (name)
		g->ann.ann_text_len += len;
	return 0;
}

/* Map F's first SIZE bytes read-only, watched against the budget.  0, or
 * -1 after a report. */
static int map_file(FILE *f, size_t size, const void **map, cm_pages **pages)
{
	void *p;
	if (!size)
		return 0;
	if (fflush(f) != 0)
		return write_error();
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fileno(f), 0);
	if (p == MAP_FAILED)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot map a temporary file: %s", strerror(errno));
	*map = p;
	*pages = cm_pages_watch(p, size);
	return 0;
}

int gpu_anns_build(cm_gpu *g)
{
	if (!g->ann.anns)
		return 0;
	if (cm_opindex_build(g->ann.anns) < 0 ||
	    map_file(g->ann.ann_tab, g->ann.nanns * sizeof(struct ann_rec), (const void **)&g->ann.ann_map,
		     &g->ann.ann_map_pages) < 0 ||
	    map_file(g->ann.ann_text, g->ann.ann_text_len, (const void **)&g->ann.ann_text_map, &g->ann.ann_text_pages) < 0)
		return -1;
	return 0;
}

void gpu_anns_free(cm_gpu *g)
{
	cm_pages_unwatch(g->ann.ann_map_pages);
	cm_pages_unwatch(g->ann.ann_text_pages);
	if (g->ann.ann_map)
		munmap((void *)g->ann.ann_map, g->ann.nanns * sizeof(struct ann_rec));
	if (g->ann.ann_text_map)
		munmap((void *)g->ann.ann_text_map, g->ann.ann_text_len);
	if (g->ann.ann_tab)
		fclose(g->ann.ann_tab);
	if (g->ann.ann_text)
		fclose(g->ann.ann_text);
	cm_opindex_free(g->ann.anns);
	cm_idmap_free(g->ann.cua);
	cm_idmap_free(g->ann.cspans);
	cm_hmap_free(g->ann.cspans_more);
}

/* Annotation K's record, its page touched. */
static const struct ann_rec *ann_at(const cm_gpu *g, int64_t k)
{
	const struct ann_rec *a = &g->ann.ann_map[k];
	cm_pages_touch(g->ann.ann_map_pages, a);
	return a;
}

/* Annotation K's name (*LEN bytes), or NULL when it is not a string. */
static const char *ann_name(const cm_gpu *g, int64_t k, size_t *len)
{
	const struct ann_rec *a = ann_at(g, k);
	const char *name;
	if (a->len < 0)
		return NULL;
	*len = (size_t)a->len;
	if (!a->len)
		return "";
	name = g->ann.ann_text_map + a->off;
	cm_pages_touch(g->ann.ann_text_pages, name);
	cm_pages_touch(g->ann.ann_text_pages, name + a->len - 1);
	return name;
}

int gpu_anns_tables(cm_gpu *g, int64_t lo, int64_t hi, uint64_t count)
{
	if (!g->ann.anns || !cm_opindex_count(g->ann.anns) || g->ann.cua || !count || hi < lo)
		return 0;
	if (!(g->ann.cua = cm_idmap_new(8, lo, hi, count)) ||
	    !(g->ann.cspans = cm_idmap_new(sizeof(struct gpu_ann_span_slot), 0, (int64_t)g->ann.nanns - 1, g->ann.nanns)))
		return -1;
	g->ann.cspans_more = cm_hmap_new(24, sizeof(struct gpu_ann_span));
	return 0;
}

int gpu_anns_find(const cm_gpu *g, int64_t corr, int64_t pid, int64_t tid, double ts, double end, int64_t *k)
{
	if (!g->ann.cua || cm_idmap_get(g->link.uext, corr)) /* the window's own annotation stands */
		return 0;
	return cm_opindex_find(g->ann.anns, pid, tid, ts, end, k);
}

void gpu_anns_note(cm_gpu *g, int64_t corr, int64_t k) { *(int64_t *)cm_idmap_put(g->ann.cua, corr, NULL) = k + 1; }

/* Widen the span of annotation K on (DEV, STREAM) to [START, END]. */
static void cspan_note(cm_gpu *g, int64_t k, int64_t dev, int64_t stream, cm_int start, cm_int end)
{
	int created;
	struct gpu_ann_span_slot *ss = cm_idmap_put(g->ann.cspans, k, &created);
	if (created || (ss->dev == dev && ss->stream == stream)) {
		if (created) {
			ss->dev = dev;
			ss->stream = stream;
			ss->start = start;
			ss->end = end;
		}
		ss->start = start < ss->start ? start : ss->start;
		ss->end = end > ss->end ? end : ss->end;
	} else {
		int64_t key[3] = {k, dev, stream};
		struct gpu_ann_span *sp = cm_hmap_put(g->ann.cspans_more, key, &created);
		if (created || start < sp->start)
			sp->start = start;
		if (created || end > sp->end)
			sp->end = end;
	}
}

/* The pool's work: the spans of a block of records (one worker: the
 * tables are written in place). */
static int spans_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	cm_gpu *g = wctx;
	const char *p = in->p, *end = in->p + in->len;
	cm_gpurec r;
	(void)out;
	while (p < end) {
		const int64_t *k;
		int64_t corr;
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "a temporary file was corrupted");
		if (r.kind != CM_REC_KERNEL && r.kind != CM_REC_MEMCPY && r.kind != CM_REC_MEMSET)
			continue;
		if (!gpu_cut_keep(g, &r)) /* --clip, --steps, --range: only the work drawn */
			continue;
		if (!cm_id_key(r.v[CM_RG_CORR], &corr, NULL) || !(k = cm_idmap_get(g->ann.cua, corr)))
			continue;
		cspan_note(g, *k - 1, (int64_t)r.v[CM_RG_DEV], (int64_t)r.v[CM_RG_STREAM], r.v[CM_RG_START],
			   r.v[CM_RG_END]);
	}
	return 0;
}

/* The pool's sink: nothing to fold (the worker wrote the tables). */
static int spans_fold(void *sctx, cm_buf *out)
{
	(void)sctx;
	(void)out;
	return 0;
}

/* Kineto's ts and dur of a span, in us: its start 1 ns earlier, its
 * length 2 ns longer (output_json.cpp), each converted once, as the
 * window's own times are. */
static void cspan_times(const cm_gpu *g, const struct gpu_ann_span *sp, double *ts, double *dur)
{
	*ts = cm_py_max(cm_jw_us_double(sp->start - 1 - g->base_ns), 0.0);
	*dur = cm_jw_us_double((sp->end > sp->start ? sp->end - sp->start : 0) + 2);
}

/* The extent of one span of annotation K, when its name is a string
 * (else it is not drawn). */
static void cspan_extent(cm_gpu *g, int64_t k, const struct gpu_ann_span *sp)
{
	double ts, dur;
	size_t len;
	if (!ann_name(g, k, &len))
		return;
	cspan_times(g, sp, &ts, &dur);
	gpu_extent(g, ts, dur);
}

/* cspan_extent of an annotation's first span (a cm_idmap_each callback). */
static void cslot_extent(void *ctx, int64_t k, void *val)
{
	const struct gpu_ann_span_slot *ss = val;
	struct gpu_ann_span sp = {ss->start, ss->end};
	cspan_extent(ctx, k, &sp);
}

int gpu_anns_spans(cm_gpu *g)
{
	void *ctx[1] = {g};
	int rc;
	if (!g->ann.cua || !cm_idmap_count(g->ann.cua))
		return 0;
	rc = gpu_walk_records(g, 1, spans_block, ctx, spans_fold, g);
	if (rc < 0)
		return -1;
	cm_idmap_each(g->ann.cspans, cslot_extent, g);
	for (size_t i = 0; i < cm_hmap_slots(g->ann.cspans_more); i++) {
		const int64_t *key;
		const struct gpu_ann_span *sp = cm_hmap_slot(g->ann.cspans_more, i, (const void **)&key);
		if (sp)
			cspan_extent(g, key[0], sp);
	}
	return 0;
}

/* ------------------------------------------------------------- output */

/* Writing the spans: annotations in increasing number, each one's spans by
 * (device, stream), the sorted keys of cspans_more walked alongside (a
 * key only made beside a slot of the same number: a slice's walk starts
 * at its first slot's number), in slices of the table (gpu_spans_block's
 * blocks, after the window's own spans). */
struct cspan_walk {
	const cm_gpu *g;
	struct gpu_span_out *o;
	const int64_t *more; /* the sorted (number, dev, stream) keys of cspans_more */
	size_t nmore, at;
	int started;
};

/* (number, device, stream) keys in increasing order (qsort). */
static int key_cmp(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* One span, put to the walk's output (when its name is a string). */
static int write_cspan(struct cspan_walk *w, int64_t k, int64_t dev, int64_t stream, const struct gpu_ann_span *sp)
{
	double ts, dur;
	size_t len;
	const char *name = ann_name(w->g, k, &len);
	if (!name)
		return 0;
	cspan_times(w->g, sp, &ts, &dur);
	return gpu_span_put(w->o, name, len, cm_id_value(dev, w->g->win.idsigns[CM_IDS_DEV]),
			    cm_id_value(stream, w->g->win.idsigns[CM_IDS_STREAM]), ts, dur,
			    cm_id_value(ann_at(w->g, k)->ext, w->g->win.idsigns[CM_IDS_EXT]));
}

/* The first of the N sorted keys MORE whose number is K or more. */
static size_t more_from(const int64_t *more, size_t n, int64_t k)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (more[3 * mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* An annotation's spans by (device, stream): its slot's and those of
 * cspans_more, merged. */
static int write_cslot(void *ctx, int64_t k, void *val)
{
	struct cspan_walk *w = ctx;
	const struct gpu_ann_span_slot *ss = val;
	int64_t first[3] = {k, ss->dev, ss->stream};
	struct gpu_ann_span sp = {ss->start, ss->end};
	int first_done = 0, rc;
	if (!w->started) {
		w->at = more_from(w->more, w->nmore, k);
		w->started = 1;
	}
	while (w->at < w->nmore && w->more[3 * w->at] <= k) {
		const int64_t *key = &w->more[3 * w->at];
		if (key[0] == k && !first_done && key_cmp(first, key) < 0) {
			if ((rc = write_cspan(w, k, ss->dev, ss->stream, &sp)) < 0)
				return rc;
			first_done = 1;
		}
		if ((rc = write_cspan(w, key[0], key[1], key[2], cm_hmap_get(w->g->ann.cspans_more, key))) < 0)
			return rc;
		w->at++;
	}
	if (!first_done && (rc = write_cspan(w, k, ss->dev, ss->stream, &sp)) < 0)
		return rc;
	return 0;
}

/* (gpuconv_int.h) */
int64_t *gpu_anns_more(const cm_gpu *g, size_t *n, int *slices, uint64_t per)
{
	int64_t *keys;
	uint64_t count;
	*n = 0;
	*slices = 0;
	if (!g->ann.cspans || !(count = cm_idmap_count(g->ann.cspans)))
		return NULL;
	keys = cm_xmalloc((cm_hmap_count(g->ann.cspans_more) + 1) * 24);
	for (size_t i = 0; i < cm_hmap_slots(g->ann.cspans_more); i++) {
		const void *key;
		if (cm_hmap_slot(g->ann.cspans_more, i, &key))
			memcpy(keys + 3 * (*n)++, key, 24);
	}
	qsort(keys, *n, 24, key_cmp);
	/* (a hash map is walked whole by slice 0) */
	*slices = !cm_idmap_is_dense(g->ann.cspans) || count <= per ? 1 : count / per < 65536 ? (int)(count / per) : 65536;
	return keys;
}

/* (gpuconv_int.h) */
int gpu_anns_slice(const cm_gpu *g, const int64_t *more, size_t n, int slice, int slices, struct gpu_span_out *o)
{
	struct cspan_walk w = {g, o, more, n, 0, 0};
	return cm_idmap_each_slice(g->ann.cspans, slice, slices, write_cslot, &w);
}
