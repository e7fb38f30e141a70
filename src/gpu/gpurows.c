/* gpurows.c - the rows the window opens (metadata events, sorted as the
 * reference sorts them) and the gpu_user_annotation spans. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/metarow.h"
#include "base/diag.h"
#include "base/opool.h"
#include "base/exitcode.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- sorted row tables */

/* Keys of M (KW 64-bit words each, 1 to 3) sorted as tuples; caller frees.  SIGNS
 * (NULL: none): for each word, the signs of its kind of id (base/ids.h), so
 * that it sorts as the ids do. */
static int64_t *sorted_keys(const cm_hmap *m, int kw, const unsigned *signs, size_t *n);

/* Keys of KW words compared as tuples: one comparator a width (qsort
 * passes no context, and a width kept in a static would make the sort
 * depend on state outside it). */
static int cmp_words(const int64_t *a, const int64_t *b, int kw)
{
	for (int i = 0; i < kw; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}
static int cmp_keys1(const void *x, const void *y) { return cmp_words(x, y, 1); }
static int cmp_keys2(const void *x, const void *y) { return cmp_words(x, y, 2); }
static int cmp_keys3(const void *x, const void *y) { return cmp_words(x, y, 3); }

/* The keys' words flipped to and from their ids' order (an involution). */
static void order_keys(int64_t *keys, size_t n, int kw, const unsigned *signs)
{
	for (size_t i = 0; signs && i < n; i++)
		for (int j = 0; j < kw; j++)
			keys[i * (size_t)kw + (size_t)j] = cm_id_order(keys[i * (size_t)kw + (size_t)j], signs[j]);
}

static int64_t *sorted_keys(const cm_hmap *m, int kw, const unsigned *signs, size_t *n)
{
	int64_t *keys = cm_xmalloc((cm_hmap_count(m) + 1) * (size_t)kw * 8);
	size_t k = 0;
	for (size_t i = 0; i < cm_hmap_slots(m); i++) {
		const void *key;
		if (cm_hmap_slot(m, i, &key))
			memcpy(keys + k++ * (size_t)kw, key, (size_t)kw * 8);
	}
	order_keys(keys, k, kw, signs);
	qsort(keys, k, (size_t)kw * 8, kw == 1 ? cmp_keys1 : kw == 2 ? cmp_keys2 : cmp_keys3);
	order_keys(keys, k, kw, signs);
	*n = k;
	return keys;
}

/* One metadata event of a window row: ts from FIRST_NS (0.0 when NULL), the
 * tid exported by the thread-id rule; see cm_evout_meta.  FIRST_NS points
 * into a hash-map value, which is only 8-aligned: the cm_int_a8 type makes
 * the compiler load it as such (a plain cm_int * promises 16, and gcc -O1
 * then uses an aligned 16-byte load that faults). */
static int meta(cm_evout *eo, const char *name, const cm_gpu *g, const cm_int_a8 *first_ns, cm_int pid, cm_int tid,
		const char *arg_key, const char *arg_text, cm_int arg_int)
{
	char ts[48] = "0.0";
	double d;
	if (first_ns)
		ts[cm_jw_us_text(*first_ns - g->base_ns, ts, &d)] = 0;
	return cm_evout_meta(eo, name, ts, pid, cm_tid_export(tid), arg_key, arg_text, arg_int);
}

/* Whether a window of version 2 leaves the metadata event KIND
 * (CM_META_*) of row (PID, TID) out: the CPU trace has one (stock Kineto
 * names every row once; a CPU-only torch trace already names its process,
 * the GPU processes 0 to 15, the threads of its operators and often the
 * streams).  TID as the row's events export it. */
static int cpu_has(const cm_gpu *g, int kind, cm_int pid, cm_int tid)
{
	int64_t key[3];
	if (g->version < 2 || !g->cpu.cmeta || pid < INT64_MIN || pid > INT64_MAX)
		return 0;
	key[0] = kind;
	key[1] = (int64_t)pid;
	key[2] = kind >= CM_META_THREAD_NAME ? (int64_t)cm_tid_export(tid) : 0;
	return cm_hmap_get(g->cpu.cmeta, key) != NULL;
}

/* A process's three events, each unless cpu_has: process_name (the
 * reference's "python"; for a window of version 2 the program's name, as
 * Kineto names every process, when the CPU trace has one), process_labels
 * LABEL and process_sort_index SORT.  0 or -1. */
static int process_rows(cm_evout *eo, const cm_gpu *g, const cm_int_a8 *first_ns, cm_int pid, const char *label,
			cm_int sort)
{
	char ts[48] = "0.0";
	double d;
	if (!cpu_has(g, CM_META_PROCESS_NAME, pid, 0)) {
		if (g->version < 2 || !g->cpu.prog) {
			if (meta(eo, "process_name", g, first_ns, pid, 0, "name", "python", 0))
				return -1;
		} else { /* cm_evout_meta's event, with a name of any bytes */
			cm_buf *b = &eo->buf;
			if (first_ns)
				ts[cm_jw_us_text(*first_ns - g->base_ns, ts, &d)] = 0;
			if (cm_evout_next(eo) < 0)
				return -1;
			cm_buf_lit(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"ts\":");
			cm_buf_puts(b, ts);
			cm_buf_lit(b, ",\"pid\":");
			cm_jw_int(b, pid);
			cm_buf_lit(b, ",\"tid\":0,\"args\":{\"name\":");
			cm_jw_string(b, g->cpu.prog, g->cpu.prog_len);
			cm_buf_lit(b, "}}");
		}
	}
	if (!cpu_has(g, CM_META_PROCESS_LABELS, pid, 0) &&
	    meta(eo, "process_labels", g, first_ns, pid, 0, "labels", label, 0))
		return -1;
	if (!cpu_has(g, CM_META_PROCESS_SORT, pid, 0) &&
	    meta(eo, "process_sort_index", g, first_ns, pid, 0, "sort_index", NULL, sort))
		return -1;
	return 0;
}

/* A thread row's thread_name NAME and thread_sort_index SORT, each unless
 * cpu_has.  0 or -1. */
static int thread_row(cm_evout *eo, const cm_gpu *g, cm_int pid, cm_int tid, const char *name, cm_int sort)
{
	if (!cpu_has(g, CM_META_THREAD_NAME, pid, tid) && meta(eo, "thread_name", g, NULL, pid, tid, "name", name, 0))
		return -1;
	if (!cpu_has(g, CM_META_THREAD_SORT, pid, tid) &&
	    meta(eo, "thread_sort_index", g, NULL, pid, tid, "sort_index", NULL, sort))
		return -1;
	return 0;
}

/* thread_name ("PREFIX<tid>SUFFIX") and thread_sort_index events for the
 * N sorted (pid, tid) rows in KEYS, ids of the kinds SIGNS says (NULL: a
 * CPU thread's int64s), each unless cpu_has.  0 or -1. */
static int thread_rows(cm_evout *eo, const cm_gpu *g, const int64_t *keys, size_t n, const unsigned *signs,
		       const char *prefix, const char *suffix)
{
	char text[96], num[48];
	for (size_t i = 0; i < n; i++) {
		cm_int pid = signs ? cm_id_value(keys[2 * i], signs[0]) : keys[2 * i];
		cm_int tid = signs ? cm_id_value(keys[2 * i + 1], signs[1]) : keys[2 * i + 1];
		num[cm_py_int_format(tid, num)] = 0;
		snprintf(text, sizeof text, "%s%s%s", prefix, num, suffix);
		if (thread_row(eo, g, pid, tid, text, tid))
			return -1;
	}
	return 0;
}

/* The devices Kineto names in every trace of a GPU run (kMaxGpuID in
 * CuptiActivityProfiler's finalizeTrace: 8 CPU sockets and 8 GPUs). */
#define KINETO_MAX_GPU 15

int cm_gpu_write_metadata(const cm_gpu *g, cm_evout *eo)
{
	size_t n;
	int64_t *k;
	char text[96], num[48];
	const unsigned *dev = &g->win.idsigns[CM_IDS_DEV];
	unsigned streams[2] = {g->win.idsigns[CM_IDS_DEV], g->win.idsigns[CM_IDS_STREAM]};
	int rc = 0;

	k = sorted_keys(g->plan.devices, 1, dev, &n);
	/* the devices with work, each at its first event; for a window of
	 * version 2 also Kineto's GPU 0 to KINETO_MAX_GPU, which stock names
	 * whatever the machine has, at the earliest device's time */
	const cm_int_a8 *earliest = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct first_ts *f = cm_hmap_get(g->plan.devices, &k[i]);
		if (!earliest || f->ns < *earliest)
			earliest = &f->ns;
	}
	cm_int unused = g->version >= 2 ? 0 : KINETO_MAX_GPU + 1; /* the next of 0..KINETO_MAX_GPU to name */
	for (size_t i = 0; !rc && (i < n || unused <= KINETO_MAX_GPU);) {
		const cm_int_a8 *first = earliest;
		cm_int did = i < n ? cm_id_value(k[i], *dev) : unused;
		if (i < n && (unused > KINETO_MAX_GPU || did <= unused)) {
			first = &((const struct first_ts *)cm_hmap_get(g->plan.devices, &k[i]))->ns;
			i++;
		} else {
			did = unused;
		}
		if (did == unused)
			unused++;
		num[cm_py_int_format(did, num)] = 0;
		snprintf(text, sizeof text, "GPU %s", num);
		rc = process_rows(eo, g, first, did, text, (cm_int)GPU_SORT_BASE + did);
	}
	free(k);
	k = sorted_keys(g->plan.procs, 1, NULL, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct first_ts *f = cm_hmap_get(g->plan.procs, &k[i]);
		rc = process_rows(eo, g, &f->ns, k[i], "CPU", k[i]);
	}
	free(k);
	/* the API threads: Kineto names none (only the threads of the CPU
	 * trace's operators, which it names itself) */
	if (g->version < 2) {
		k = sorted_keys(g->plan.threads, 2, NULL, &n);
		rc = rc || thread_rows(eo, g, k, n, NULL, "thread ", "");
		free(k);
	}
	k = sorted_keys(g->plan.streams, 2, streams, &n);
	rc = rc || thread_rows(eo, g, k, n, streams, "stream ", " ");
	free(k);
	/* a device's syncs without a stream (window version 2): Kineto's row
	 * for the whole device, tid abs(-1), sorted first */
	k = sorted_keys(g->plan.device_rows, 1, dev, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		cm_int did = cm_id_value(k[i], *dev);
		num[cm_py_int_format(did, num)] = 0;
		snprintf(text, sizeof text, "Device %s", num);
		rc = thread_row(eo, g, did, -1, text, -1);
	}
	free(k);
	/* the overhead rows: Kineto names them not */
	if (g->plan.need_overhead && !rc && g->version < 2)
		rc = meta(eo, "process_name", g, NULL, OVERHEAD_PID, 0, "name", "python", 0) ||
		     meta(eo, "process_labels", g, NULL, OVERHEAD_PID, 0, "labels", "Overhead", 0) ||
		     meta(eo, "process_sort_index", g, NULL, OVERHEAD_PID, 0, "sort_index", NULL,
			  OVERHEAD_SORT_INDEX) ||
		     meta(eo, "thread_name", g, NULL, OVERHEAD_PID, 0, "name", "thread 0", 0) ||
		     meta(eo, "thread_sort_index", g, NULL, OVERHEAD_PID, 0, "sort_index", NULL, 0);
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ spans */

/* One gpu_user_annotation event, put to O (when its name is a string). */
static int write_span(const cm_gpu *g, struct gpu_span_out *o, int64_t ext, int64_t dev, int64_t stream,
		      const struct gpu_ann_span *sp)
{
	double ts, dur;
	size_t len;
	const char *name = gpu_ua_name(g, ext, &len);
	if (!name)
		return 0; /* the annotation's name is not a string */
	gpu_span_times(g, sp, &ts, &dur);
	return gpu_span_put(o, name, len, cm_id_value(dev, g->win.idsigns[CM_IDS_DEV]),
			    cm_id_value(stream, g->win.idsigns[CM_IDS_STREAM]), ts, dur,
			    cm_id_value(ext, g->win.idsigns[CM_IDS_EXT]));
}

/* Writing the spans in order: the annotations in increasing id, each one's
 * spans by (device, stream): the first from its slot, the others from the
 * sorted keys of spans_more, walked alongside.  (A key of spans_more is
 * only made beside a slot of the same id.)  The slots are cut into slices
 * of the table (cm_idmap_each_slice), rendered by the threads of an
 * ordered pool, a slice a block: there were 0.06-0.1 s of them on one
 * thread at the end of the 1 GB pair's run.  A slice's walk of spans_more
 * starts at its first slot's id.  The ids order as the keys do, unless some
 * are at or above 2^63 (base/ids.h): then the table, which walks its keys
 * as signed words, is walked twice, the keys from 0 up (ids below 2^63)
 * first, then the negative ones (the ids from 2^63 up).  After them, the
 * spans of the CPU trace's annotations (gpuanns.c), in slices of their
 * own table, a slice a block too. */
enum { SPANS_ALL, SPANS_LOW, SPANS_HIGH };
struct span_walk {
	const cm_gpu *g;
	struct gpu_span_out *o;
	const int64_t *more; /* sorted (ext, dev, stream) keys */
	size_t nmore, at;
	int started;
	int pass;            /* SPANS_...: the keys this walk takes */
	unsigned signs[3];   /* those of the ids of (ext, dev, stream) */
};

static int span_cmp3(const struct span_walk *w, const int64_t *a, const int64_t *b)
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return cm_id_order(a[i], w->signs[i]) < cm_id_order(b[i], w->signs[i]) ? -1 : 1;
	return 0;
}

/* The first of the N sorted keys MORE whose id is EXT or more. */
static size_t more_from(const struct span_walk *w, const int64_t *more, size_t n, int64_t ext)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cm_id_order(more[3 * mid], w->signs[0]) < cm_id_order(ext, w->signs[0]))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int write_slot(void *ctx, int64_t ext, void *val)
{
	struct span_walk *w = ctx;
	const struct gpu_ann_span_slot *ss = val;
	int64_t first[3] = {ext, ss->dev, ss->stream};
	struct gpu_ann_span sp = {ss->start, ss->end};
	int first_done = 0, rc;
	if ((w->pass == SPANS_LOW && ext < 0) || (w->pass == SPANS_HIGH && ext >= 0))
		return 0;
	if (!w->started) {
		w->at = more_from(w, w->more, w->nmore, ext);
		w->started = 1;
	}
	while (w->at < w->nmore && cm_id_order(w->more[3 * w->at], w->signs[0]) <= cm_id_order(ext, w->signs[0])) {
		const int64_t *k = &w->more[3 * w->at];
		if (k[0] == ext && !first_done && span_cmp3(w, first, k) < 0) {
			if ((rc = write_span(w->g, w->o, ext, ss->dev, ss->stream, &sp)) < 0)
				return rc;
			first_done = 1;
		}
		if ((rc = write_span(w->g, w->o, k[0], k[1], k[2], cm_hmap_get(w->g->plan.spans_more, k))) < 0)
			return rc;
		w->at++;
	}
	if (!first_done && (rc = write_span(w->g, w->o, ext, ss->dev, ss->stream, &sp)) < 0)
		return rc;
	return 0;
}

/* The slices of a table of N spans, PER a slice about (one for a hash
 * map, which a slice 0 walks whole). */
static int slices_of(const cm_idmap *m, uint64_t n, uint64_t per)
{
	if (!m || !cm_idmap_is_dense(m) || n <= per)
		return 1;
	return (int)(n / per < 65536 ? n / per : 65536);
}

/* (gpuconv_int.h) */
void gpu_spans_blocks(const cm_gpu *g, uint64_t per, struct gpu_spans_blocks *b)
{
	unsigned signs[3] = {g->win.idsigns[CM_IDS_EXT], g->win.idsigns[CM_IDS_DEV], g->win.idsigns[CM_IDS_STREAM]};
	memset(b, 0, sizeof *b);
	per = per ? per : 1;
	b->more = sorted_keys(g->plan.spans_more, 3, signs, &b->nmore);
	b->passes = (g->win.idsigns[CM_IDS_EXT] & CM_ID_HIGH) != 0 ? 2 : 1;
	b->slices = slices_of(g->plan.spans, cm_idmap_count(g->plan.spans), per);
	b->cmore = gpu_anns_more(g, &b->ncmore, &b->cslices, per);
	b->n = b->passes * b->slices + b->cslices;
}

/* (gpuconv_int.h) */
void gpu_spans_blocks_free(struct gpu_spans_blocks *b)
{
	free(b->more);
	free(b->cmore);
}

/* (gpuconv_int.h) */
int gpu_spans_block(const cm_gpu *g, const struct gpu_spans_blocks *b, int i, struct gpu_span_out *o)
{
	struct span_walk w = {g, o, b->more, b->nmore, 0, 0, 0,
			      {g->win.idsigns[CM_IDS_EXT], g->win.idsigns[CM_IDS_DEV], g->win.idsigns[CM_IDS_STREAM]}};
	if (i >= b->passes * b->slices)
		return gpu_anns_slice(g, b->cmore, b->ncmore, i - b->passes * b->slices, b->cslices, o);
	w.pass = b->passes == 1 ? SPANS_ALL : i < b->slices ? SPANS_LOW : SPANS_HIGH;
	return cm_idmap_each_slice(g->plan.spans, i % b->slices, b->slices, write_slot, &w);
}

/* cm_gpu_each_span's: each span to its function, no text. */
struct each_span {
	cm_gpu_span_note fn;
	void *ctx;
};
static int each_span(void *ectx, const char *name, size_t len, cm_int pid, cm_int tid, double ts, double dur,
		     cm_int ext)
{
	const struct each_span *e = ectx;
	(void)name, (void)len, (void)ext;
	e->fn(e->ctx, pid, cm_tid_export(tid), ts, dur);
	return 0;
}

/* Spans a slice, about: a block's text, about 100 kB, is held until
 * its turn comes. */
static uint64_t spans_a_slice = 512;

void cm_gpu_set_span_slice(uint64_t n) { spans_a_slice = n ? n : 1; }

/* cm_gpu_each_span's walk on several threads: each takes the next of
 * the blocks (RUN->next) until none is left or one failed. */
struct each_run {
	const struct gpu_spans_blocks *b;
	struct gpu_span_out *o; /* (read only: its enc and ectx) */
	int next, failed;
};
static void *each_walk(void *arg)
{
	struct each_run *r = arg;
	int i;
	while (!__atomic_load_n(&r->failed, __ATOMIC_RELAXED) &&
	       (i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED)) < r->b->n)
		if (gpu_spans_block(r->b->g, r->b, i, r->o) < 0)
			__atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* (gpuconv.h) The spans' walk of the render, its blocks shared by THREADS
 * threads (this one among them).  It was one slice on this thread: after
 * the plan and before the copy, on the 16-core machine's critical path
 * (a .pftrace's ties, mergepft.c); the render's own walk is in blocks on
 * its pool.  A thread that cannot be made leaves its share to the
 * others. */
int cm_gpu_each_span(const cm_gpu *g, cm_gpu_span_note fn, void *ctx, int threads)
{
	struct gpu_spans_blocks b;
	struct each_span e = {fn, ctx};
	struct gpu_span_out o = {NULL, each_span, &e};
	struct each_run r = {&b, &o, 0, 0};
	pthread_t *th;
	int made = 0;
	gpu_spans_blocks(g, spans_a_slice, &b);
	b.g = g;
	if (threads > b.n)
		threads = b.n;
	th = cm_xcalloc(threads > 1 ? (size_t)threads - 1 : 1, sizeof *th);
	while (made + 1 < threads && pthread_create(&th[made], NULL, each_walk, &r) == 0)
		made++;
	each_walk(&r);
	for (int i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	free(th);
	gpu_spans_blocks_free(&b);
	return r.failed ? -1 : 0;
}

/* The pool's work: the block holds its number (gpu_spans_block's). */
static int span_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	const struct gpu_spans_blocks *b = wctx;
	struct gpu_span_out o = {out, NULL, NULL};
	int i;
	memcpy(&i, in->p, sizeof i);
	return gpu_spans_block(b->g, b, i, &o);
}

int cm_gpu_write_spans(const cm_gpu *g, cm_evout *eo, int jobs)
{
	struct gpu_spans_blocks b;
	int workers = jobs < 1 ? 1 : jobs, rc = 0;
	void **ctx = cm_xcalloc((size_t)workers, sizeof *ctx);
	cm_opool *pool;
	cm_buf in = {0};
	gpu_spans_blocks(g, spans_a_slice, &b);
	b.g = g;
	for (int i = 0; i < workers; i++)
		ctx[i] = &b;
	pool = cm_opool_new(b.n < workers ? b.n : workers, 0, span_block, ctx, gpu_write_rendered, eo);
	for (int i = 0; i < b.n && rc == 0; i++) {
		cm_buf_put(&in, &i, sizeof i);
		rc = cm_opool_put(pool, &in);
	}
	rc = cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	cm_buf_free(&in);
	free(ctx);
	gpu_spans_blocks_free(&b);
	return rc;
}
