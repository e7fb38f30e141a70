/* gpudigest.c - the digest: each window event, at its one parse, turned
 * into a typed record (gpurec.h) with every field the rules read converted
 * by Python's int() and str() and checked, so that the plan and the render
 * read records, never JSON.  It runs on the window's worker threads, a batch
 * of events each; the reading thread collects the batches in window order
 * into the tables and the blocks of records. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/cbid.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/tmpfile.h"
#include "base/word.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------ the fields
 *
 * An event's members are matched to the fields once (field_table), by a
 * hash of the key's length and three of its bytes into 128 places, which
 * the fields fill one each (checked when the places are made: a field added
 * that shares a place stops the program at its first event, and every test
 * with one); then the key is compared.  A key that repeats leaves its last
 * member, as Python's json keeps. */

static signed char wf_place[128]; /* the field at each place, or -1 */
static uint8_t wf_len[WF_N];
static pthread_once_t wf_once = PTHREAD_ONCE_INIT;

static inline unsigned wf_hash(const char *k, size_t n)
{
	const unsigned char *u = (const unsigned char *)k;
	return (unsigned)(n + u[0] + 4u * u[n - 1] + 3u * u[n / 2]) & 127;
}

static void wf_init(void)
{
	memset(wf_place, -1, sizeof wf_place);
	for (int i = 0; i < WF_N; i++) {
		unsigned h;
		wf_len[i] = (uint8_t)strlen(cm_wf_name[i]);
		h = wf_hash(cm_wf_name[i], wf_len[i]);
		if (wf_place[h] >= 0) {
			fprintf(stderr, "cuptimerge: internal error: fields \"%s\" and \"%s\" share a place\n",
				cm_wf_name[wf_place[h]], cm_wf_name[i]);
			abort();
		}
		wf_place[h] = (signed char)i;
	}
}

/* Whether A[0..N) and B[0..N) are the same bytes, for a key's few bytes
 * (a field name is at most 21): words compared, the last one overlapping,
 * where a call to memcmp a member was 2.7% of a merge's time. */
static inline int key_eq(const char *a, const char *b, size_t n)
{
	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8)
			if (cm_load_le64(a + i) != cm_load_le64(b + i))
				return 0;
		return cm_load_le64(a + n - 8) == cm_load_le64(b + n - 8);
	}
	if (n >= 4) {
		uint32_t x, y, z, w;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		memcpy(&z, a + n - 4, 4);
		memcpy(&w, b + n - 4, 4);
		return x == y && z == w;
	}
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* N zero bytes at P, for the digest's few hundred bytes an event: in
 * 16-byte stores, where the compiler made each such memset a rep stos,
 * whose start-up cost more than the stores (the two of an event were a
 * third of the digest's own time in a -j 2 profile of the 1 GB pair). */
static inline void zero_small(void *p, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	__m128i z = _mm_setzero_si128();
	for (; i + 16 <= n; i += 16) {
		_mm_storeu_si128((__m128i *)(void *)((char *)p + i), z);
		__asm__("" ::: "memory"); /* stores, not a memset made of them */
	}
#endif
	if (i < n)
		memset((char *)p + i, 0, n - i);
}

/* D->f: the fields of object EV. */
static void field_table(struct cm_gpu_digest *d, const cm_jval *ev)
{
	zero_small(d->f, sizeof d->f);
	for (const cm_jval *k = ev->kids; k; k = k->next) {
		int f;
		if (!k->klen)
			continue;
		f = wf_place[wf_hash(k->key, k->klen)];
		if (f >= 0 && wf_len[f] == k->klen && key_eq(k->key, cm_wf_name[f], k->klen))
			d->f[f] = k;
	}
}

/* ------------------------------------------- digest: the one window parse */

/* _as_int(event.get(KEY, 0)) for what only windows of version 2 use, whose
 * version is known only once the whole window has been read (sync records,
 * the spans of API calls the reference drops): nothing is reported here;
 * the first problem is kept in d->dumps (a missing field only when
 * REQUIRED), to be reported if the record is drawn.  KEY: the value is a
 * table key, which must fit in 64 bits: QUIET_I64 as an int64, or an id of
 * the kind QUIET_ID + CM_IDS_... (base/ids.h), whose sign is noted. */
#define QUIET_I64 1
#define QUIET_ID 2
static void quiet_int(const struct gpu_event_at *a, int f, int required, int key64, cm_int *out)
{
	const char *key = cm_wf_name[f];
	const cm_jval *v = a->f[f];
	cm_buf *err = &a->d->dumps;
	char msg[120];
	int rc = CM_PY_OK, n = 0;
	*out = 0;
	if (!v) {
		if (required && !err->len)
			n = snprintf(msg, sizeof msg, "missing field \"%s\"", key);
	} else {
		switch (v->type) {
		case CM_J_NUM: rc = v->has_iv ? (*out = v->iv, CM_PY_OK) : cm_py_int_of_number(v->s, v->len, out); break;
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
		else if (rc == CM_PY_OK && gpu_is_time(f) && !gpu_time_ok(*out) && !err->len)
			n = snprintf(msg, sizeof msg, GPU_TIME_RANGE_MSG, key);
		else if (rc == CM_PY_OK && key64 == QUIET_I64 && (*out < INT64_MIN || *out > INT64_MAX) && !err->len)
			n = snprintf(msg, sizeof msg, "\"%s\" does not fit in 64 bits", key);
		else if (rc == CM_PY_OK && key64 >= QUIET_ID) {
			int64_t k;
			if (!cm_id_key(*out, &k, &a->d->idsigns[key64 - QUIET_ID]) && !err->len)
				n = snprintf(msg, sizeof msg, "\"%s\" does not fit in 64 bits (as a uint64 or an int64)",
					     key);
		}
	}
	if (n > 0)
		cm_buf_put(err, msg, (size_t)n);
}

/* The record's name: Python's str() of NAMEV.  A string is its own str(),
 * taken where it lies (in the event's parse, alive until the record is
 * packed): a copy of a name of 200 MB was one more of four such copies at
 * the peak (issue 27 F29); other values are written into d->text. */
static void digest_name(struct cm_gpu_digest *d, const cm_jval *namev)
{
	d->text.len = 0;
	d->name = NULL;
	if (namev->type == CM_J_STR) {
		d->name = namev->s;
		d->nlen = namev->len;
		return;
	}
	cm_jval_str_py(&d->text, namev);
}

/* cm_cbid_is_registered of the API call's name, remembered by cbid: a
 * window's calls are of a few dozen kinds, and the name's lookup and the
 * list's string compares were 2% of a merge's instructions. */
static int api_registered(struct cm_gpu_digest *d, int driver, cm_int cbid, char *fallback)
{
	int64_t c = (int64_t)cbid;
	__typeof__(d->api_kept[0]) *k = &d->api_kept[((uint64_t)c * 0x9E3779B97F4A7C15u >> 58) ^ (unsigned)driver];
	if (cbid < INT64_MIN || cbid > INT64_MAX)
		return cm_cbid_is_registered(driver, gpu_api_name(driver, cbid, fallback));
	if (k->driver != driver || k->cbid != c) {
		k->driver = (signed char)driver;
		k->cbid = c;
		k->registered = (signed char)cm_cbid_is_registered(driver, gpu_api_name(driver, cbid, fallback));
	}
	return k->registered;
}

/* A runtime or driver API record: every field the rules read, checked. */
static int digest_api(const struct gpu_event_at *a, int driver, cm_gpurec *r)
{
	char fallback[64];
	cm_int *v = r->v;
	int64_t pid64, c;
	r->kind = driver ? CM_REC_DRIVER : CM_REC_RUNTIME;
	r->nv = CM_RA_N;
	if (gpu_int_field(a, WF_CBID, 1, &v[CM_RA_CBID]) < 0 || gpu_int_field(a, WF_PROCESS_ID, 1, &v[CM_RA_PID]) < 0 ||
	    gpu_int_field(a, WF_CORRELATION_ID, 1, &v[CM_RA_CORR]) < 0 ||
	    gpu_int_field(a, WF_THREAD_ID, 1, &v[CM_RA_RAWTID]) < 0)
		return -1;
	if (cm_id_key(v[CM_RA_CORR], &c, &a->d->idsigns[CM_IDS_CORR])) { /* for the External id table */
		a->d->api_lo = c < a->d->api_lo ? c : a->d->api_lo;
		a->d->api_hi = c > a->d->api_hi ? c : a->d->api_hi;
		a->d->api_n++;
	}
	if (!api_registered(a->d, driver, v[CM_RA_CBID], fallback)) {
		/* kept for its thread lookup, which can fail, and its span, which
		 * finds its operator (version 2): read without a word */
		a->d->dumps.len = 0;
		quiet_int(a, WF_START_NS, 1, 0, &v[CM_RA_START]);
		quiet_int(a, WF_END_NS, 1, 0, &v[CM_RA_END]);
		if (!a->d->dumps.len)
			r->flags |= CM_REC_SPAN;
		a->d->dumps.len = 0;
		return 0;
	}
	r->flags |= CM_REC_REGISTERED | CM_REC_SPAN;
	if (gpu_int_field(a, WF_START_NS, 1, &v[CM_RA_START]) < 0 || gpu_int_field(a, WF_END_NS, 1, &v[CM_RA_END]) < 0 ||
	    gpu_to_i64(a, "process_id", v[CM_RA_PID], &pid64) < 0)
		return -1;
	return 0;
}

/* kernel, gpu_memcpy, gpu_memset. */
static int digest_activity(const struct gpu_event_at *a, int kind, cm_gpurec *r)
{
	struct cm_gpu_digest *d = a->d;
	cm_int *v = r->v;
	const cm_jval *namev, *ann;
	int64_t d64, s64, c64;
	r->kind = (uint8_t)kind;
	r->nv = CM_RG_N;
	if (gpu_int_field(a, WF_DEVICE_ID, 1, &v[CM_RG_DEV]) < 0 || gpu_int_field(a, WF_STREAM_ID, 1, &v[CM_RG_STREAM]) < 0 ||
	    gpu_int_field(a, WF_START_NS, 1, &v[CM_RG_START]) < 0 || gpu_int_field(a, WF_CONTEXT_ID, 1, &v[CM_RG_CTX]) < 0 ||
	    gpu_int_field(a, WF_CORRELATION_ID, 1, &v[CM_RG_CORR]) < 0 || gpu_int_field(a, WF_END_NS, 1, &v[CM_RG_END]) < 0 ||
	    !(namev = gpu_need(a, WF_NAME)) || gpu_int_field(a, WF_GRAPH_ID, 0, &v[CM_RG_GRAPH]) < 0 ||
	    gpu_int_field(a, WF_GRAPH_NODE_ID, 0, &v[CM_RG_NODE]) < 0)
		return -1;
	if (kind == CM_REC_MEMCPY &&
	    (gpu_int_field(a, WF_BYTES, 1, &v[CM_RG_BYTES]) < 0 || gpu_int_field(a, WF_COPY_KIND, 1, &v[CM_RG_K1]) < 0 ||
	     gpu_int_field(a, WF_SRC_KIND, 1, &v[CM_RG_K2]) < 0 || gpu_int_field(a, WF_DST_KIND, 1, &v[CM_RG_K3]) < 0 ||
	     gpu_int_field(a, WF_FLAGS, 1, &v[CM_RG_FLAGS]) < 0))
		return -1;
	if (kind == CM_REC_MEMSET &&
	    (gpu_int_field(a, WF_BYTES, 1, &v[CM_RG_BYTES]) < 0 || gpu_int_field(a, WF_VALUE, 1, &v[CM_RG_K1]) < 0 ||
	     gpu_int_field(a, WF_MEMORY_KIND, 1, &v[CM_RG_K2]) < 0 || gpu_int_field(a, WF_FLAGS, 1, &v[CM_RG_FLAGS]) < 0))
		return -1;
	if (gpu_to_id(a, "device_id", CM_IDS_DEV, v[CM_RG_DEV], &d64) < 0 ||
	    gpu_to_id(a, "stream_id", CM_IDS_STREAM, v[CM_RG_STREAM], &s64) < 0)
		return -1;
	cm_id_key(v[CM_RG_CORR], &c64, &d->idsigns[CM_IDS_CORR]); /* a key when it fits (else it links nothing) */
	/* a kernel with "grid_x" carries its launch members (window format 2) */
	if (kind == CM_REC_KERNEL && a->f[WF_GRID_X]) {
		static const int launch[] = {WF_GRID_X,   WF_GRID_Y,       WF_GRID_Z,        WF_BLOCK_X,
					     WF_BLOCK_Y,  WF_BLOCK_Z,      WF_REGISTERS,     WF_STATIC_SMEM,
					     WF_DYNAMIC_SMEM, WF_QUEUED_NS};
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
	digest_name(d, namev);
	ann = a->f[WF_ANNOTATION];
	if (ann && ann->type != CM_J_NULL) {
		r->flags |= CM_REC_ANN;
		d->dumps.len = 0;
		cm_gpurec_pack_jval(&d->dumps, ann);
	}
	return 0;
}

/* An overhead record.  The trailing "Activity Buffer Request" is dropped
 * when it starts after the last activity, which is known only when the
 * whole window has been read: the error its end_ns would raise is kept
 * until then. */
static int digest_overhead(const struct gpu_event_at *a, cm_gpurec *r)
{
	struct cm_gpu_digest *d = a->d;
	const cm_jval *namev, *endv;
	r->kind = CM_REC_OVERHEAD;
	r->nv = CM_RO_N;
	if (!(namev = gpu_need(a, WF_NAME)) || gpu_int_field(a, WF_START_NS, 1, &r->v[CM_RO_START]) < 0)
		return -1;
	d->dumps.len = 0;
	if (cm_jval_streq(namev, "Activity Buffer Request")) {
		r->flags |= CM_REC_ABR;
		endv = a->f[WF_END_NS];
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
		} else if (!gpu_time_ok(r->v[CM_RO_END])) {
			return gpu_ev_error(a->g, a->index, a->offset, GPU_TIME_RANGE_MSG, "end_ns");
		}
	} else if (gpu_int_field(a, WF_END_NS, 1, &r->v[CM_RO_END]) < 0) {
		return -1;
	}
	digest_name(d, namev);
	return 0;
}

/* A cuda_sync record (cuptimerge-window(5), version 2); the device is 0,
 * as in Kineto, when the window does not say.  0 (it is always kept). */
static int digest_sync(const struct gpu_event_at *a, cm_gpurec *r)
{
	cm_int *v = r->v;
	r->kind = CM_REC_SYNC;
	r->nv = CM_RS_N;
	quiet_int(a, WF_SYNC_TYPE, 0, 0, &v[CM_RS_TYPE]);
	quiet_int(a, WF_START_NS, 1, 0, &v[CM_RS_START]);
	quiet_int(a, WF_END_NS, 1, 0, &v[CM_RS_END]);
	quiet_int(a, WF_CORRELATION_ID, 0, 0, &v[CM_RS_CORR]);
	quiet_int(a, WF_CONTEXT_ID, 0, QUIET_I64, &v[CM_RS_CTX]);
	quiet_int(a, WF_STREAM_ID, 0, QUIET_ID + CM_IDS_STREAM, &v[CM_RS_STREAM]);
	quiet_int(a, WF_CUDA_EVENT_ID, 0, QUIET_I64, &v[CM_RS_EVENT]);
	quiet_int(a, WF_DEVICE_ID, 0, QUIET_ID + CM_IDS_DEV, &v[CM_RS_DEV]);
	if (a->d->dumps.len)
		r->flags |= CM_REC_DEFERRED;
	return 0;
}

/* A cuda_event record: where an event was recorded, for the event syncs
 * after it.  0, or 1 when it is unusable (then it is left out). */
static int digest_cuda_event(const struct gpu_event_at *a, cm_gpurec *r)
{
	cm_int *v = r->v;
	r->kind = CM_REC_CUDAEVENT;
	r->nv = CM_RE_N;
	quiet_int(a, WF_CONTEXT_ID, 0, QUIET_I64, &v[CM_RE_CTX]);
	quiet_int(a, WF_EVENT_ID, 0, QUIET_I64, &v[CM_RE_EVENT]);
	quiet_int(a, WF_STREAM_ID, 0, 0, &v[CM_RE_STREAM]);
	quiet_int(a, WF_CORRELATION_ID, 0, 0, &v[CM_RE_CORR]);
	if (!a->d->dumps.len)
		return 0;
	a->d->dumps.len = 0;
	return 1;
}

cm_gpu_digest *cm_gpu_digest_new(cm_gpu *g)
{
	cm_gpu_digest *d = cm_xcalloc(1, sizeof *d);
	pthread_once(&wf_once, wf_init);
	d->g = g;
	/* made by the first digest, before any worker runs (mergeprepare.c makes the
	 * workers' digests on its own thread; the careful reader its own) */
	if (!g->win.names)
		g->win.names = cm_gpunames_new();
	d->ncache = cm_gpunames_cache_new();
	for (size_t i = 0; i < sizeof d->api_kept / sizeof d->api_kept[0]; i++)
		d->api_kept[i].driver = -1;
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
	cm_buf_free(&d->apis);
	cm_gpunames_cache_free(d->ncache);
	free(d);
}

/* A batch's output: a 4-byte length of its records, the records, then its
 * pairs, its activity streams, its API calls' notes for cutting, then a
 * struct batch_tail. */
struct batch_tail {
	cm_int max_end;
	uint64_t events, pair_bytes, astream_bytes, api_bytes, name_bytes;
	int64_t api_lo, api_hi;
	uint64_t api_n;
	unsigned idsigns[CM_IDS_N];
	uint64_t last1; /* 1 + the window index of its last record, 0 none */
};

int cm_gpu_digest_batch_event(cm_gpu_digest *d, uint64_t index, const cm_jval *ev, int64_t offset, cm_buf *out)
{
	cm_gpu *g = d->g;
	struct gpu_event_at a = {g, d, index, offset, ev, d->f};
	const cm_jval *kind;
	cm_gpurec r;
	int rc;
	if (!out->len)
		cm_buf_put(out, "\0\0\0\0", 4);
	if (!ev) { /* the batch is done */
		struct batch_tail t = {d->max_end, d->events, d->pairs.len, d->astreams.len, d->apis.len,
				       d->name_bytes, d->api_lo, d->api_hi, d->api_n, {0}, d->last1};
		memcpy(t.idsigns, d->idsigns, sizeof t.idsigns);
		memset(d->idsigns, 0, sizeof d->idsigns);
		uint32_t rec_len = (uint32_t)(out->len - 4);
		memcpy(out->p, &rec_len, 4);
		cm_buf_put(out, d->pairs.p, d->pairs.len);
		cm_buf_put(out, d->astreams.p, d->astreams.len);
		cm_buf_put(out, d->apis.p, d->apis.len);
		cm_buf_put(out, &t, sizeof t);
		d->pairs.len = 0;
		d->astreams.len = 0;
		d->apis.len = 0;
		d->have_last_as = 0;
		d->api_lo = INT64_MAX;
		d->api_hi = INT64_MIN;
		d->api_n = 0;
		d->events = 0;
		d->max_end = 0;
		d->name_bytes = 0;
		d->last1 = 0;
		return 0;
	}
	field_table(d, ev);
	if (gpu_scan_event(d, &a) < 0)
		return -1;
	kind = d->f[WF_KIND];
	if (!kind)
		return gpu_ev_error(g, index, offset, "missing field \"kind\"");
	if (kind->type == CM_J_ARR || kind->type == CM_J_OBJ)
		return gpu_ev_error(g, index, offset, "\"kind\" is not a string");
	if (kind->type != CM_J_STR)
		return 0;
	/* the slots too: a record is packed from v[0..nv), and a kind need not
	 * set every one (a kernel has no "bytes", a memset no third kind); one
	 * left unset went to the temporary file as whatever the stack held */
	zero_small(&r, offsetof(cm_gpurec, v) + sizeof r.v);
	r.index = index;
	r.offset = offset;
	d->text.len = 0;
	d->name = NULL;
	d->dumps.len = 0;
	if (cm_jval_streq(kind, "kernel"))
		rc = digest_activity(&a, CM_REC_KERNEL, &r);
	else if (cm_jval_streq(kind, "gpu_memcpy"))
		rc = digest_activity(&a, CM_REC_MEMCPY, &r);
	else if (cm_jval_streq(kind, "gpu_memset"))
		rc = digest_activity(&a, CM_REC_MEMSET, &r);
	else if (cm_jval_streq(kind, "cuda_runtime") || cm_jval_streq(kind, "cuda_driver")) {
		if ((rc = digest_api(&a, cm_jval_streq(kind, "cuda_driver"), &r)) == 0)
			gpu_cut_note_api(d, &r);
	}
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
	r.name = d->name ? d->name : d->text.p;
	r.nlen = (uint32_t)(d->name ? d->nlen : d->text.len);
	if (r.nlen && cm_gpunames_intern(g->win.names, d->ncache, r.name, r.nlen, &r.name_id)) {
		r.flags |= CM_REC_NAMEREF;
		d->name_bytes += r.nlen;
	}
	r.extra = d->dumps.p;
	r.xlen = (uint32_t)d->dumps.len;
	cm_gpurec_pack(out, &r);
	d->last1 = index + 1;
	return 0;
}

/* Block B of records, LAST1 1 + the window index of its last record, to
 * the records' file (none when empty), its LAST1 noted in win.lasts.  0,
 * or -1 after a report. */
static int write_block(cm_gpu *g, cm_buf *b, uint64_t last1)
{
	if (b->len)
		cm_buf_put(&g->win.lasts, &last1, sizeof last1);
	return cm_gpurec_block_write(g->win.recs, b);
}

int cm_gpu_digest_collect(cm_gpu *g, cm_buf *out)
{
	struct batch_tail t;
	uint32_t rec_len;
	if (out->len < 4 + sizeof t)
		return 0;
	memcpy(&rec_len, out->p, 4);
	memcpy(&t, out->p + out->len - sizeof t, sizeof t);
	g->win.max_end = t.max_end > g->win.max_end ? t.max_end : g->win.max_end;
	g->st.events += t.events;
	g->win.api_lo = t.api_lo < g->win.api_lo ? t.api_lo : g->win.api_lo;
	g->win.api_hi = t.api_hi > g->win.api_hi ? t.api_hi : g->win.api_hi;
	g->win.api_n += t.api_n;
	for (int k = 0; k < CM_IDS_N; k++)
		g->win.idsigns[k] |= t.idsigns[k];
	if (gpu_collect_pairs(g, out->p + 4 + rec_len, (size_t)t.pair_bytes) < 0)
		return -1;
	for (uint64_t i = 0; i < t.astream_bytes; i += 16)
		cm_hmap_put(g->win.act_streams, out->p + 4 + rec_len + t.pair_bytes + i, NULL);
	if (gpu_cut_collect(g, out->p + 4 + rec_len + t.pair_bytes + t.astream_bytes, (size_t)t.api_bytes) < 0)
		return -1;
	/* a block is as much work as it was with the names in it: with them in
	 * the table a block of CM_GPU_BLOCK bytes held 2.4 times the events of
	 * gen_trace's windows, and each worker's rendered text grew as much
	 * (the 200M pair's peak by 7 MB at -j 2) */
	if (rec_len + t.name_bytes >= CM_GPU_BLOCK) {
		/* a block's worth already (a batch of big records, or one huge
		 * name): written as it lies, after the block before it, not
		 * copied into the block first (issue 27 F29: that copy of a
		 * 200 MB name was one of four at the peak) */
		cm_buf whole = {out->p + 4, rec_len, rec_len};
		if ((!g->win.recs && !(g->win.recs = cm_temp_file("records"))) ||
		    write_block(g, &g->win.block, g->win.block_last1) < 0 || write_block(g, &whole, t.last1) < 0)
			return -1;
		g->win.block_names = 0;
		g->win.block_last1 = 0;
		out->len = 0;
		return 0;
	}
	cm_buf_put(&g->win.block, out->p + 4, rec_len);
	if (t.last1)
		g->win.block_last1 = t.last1;
	out->len = 0;
	g->win.block_names += t.name_bytes;
	if (g->win.block.len + g->win.block_names >= CM_GPU_BLOCK) {
		if (!g->win.recs && !(g->win.recs = cm_temp_file("records")))
			return -1;
		g->win.block_names = 0;
		return write_block(g, &g->win.block, g->win.block_last1);
	}
	return 0;
}

int cm_gpu_digest_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset)
{
	if (!g->win.dg)
		g->win.dg = cm_gpu_digest_new(g);
	g->win.dgout.len = 0;
	if (cm_gpu_digest_batch_event(g->win.dg, index, ev, offset, &g->win.dgout) < 0 ||
	    cm_gpu_digest_batch_event(g->win.dg, 0, NULL, 0, &g->win.dgout) < 0)
		return -1;
	return cm_gpu_digest_collect(g, &g->win.dgout);
}

int cm_gpu_digest_finish(cm_gpu *g)
{
	if (g->win.recs && (write_block(g, &g->win.block, g->win.block_last1) < 0 || fflush(g->win.recs) != 0))
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	return 0;
}
