/* gpurender.c - the render: the records to Chrome-trace event text at the
 * end of the output, by worker threads over blocks of records, written in
 * window order.  It reads the tables the plan filled and changes none.
 *
 * For an encoder of the events that is not text (the .pftrace's:
 * cm_gpu_write_groups), the same render goes on in groups: the records
 * whose window index falls in one span of CM_GPU_GROUP form a group, which
 * the worker that renders it hands to the encoder at once, while its text
 * is in the cache, where the whole group is the worker's (neither its
 * first nor its last in the piece: those may go on in the pieces next to
 * it, so their text goes on to the sink, which joins a group's parts).
 * The groups depend on the records alone: not on the pieces, which the
 * window's read cut, nor on the thread count. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/cbid.h"
#include "gpu/gpuargs.h"
#include "base/diag.h"
#include "base/opool.h"

#include <stdlib.h>
#include <string.h>

/* The records of a group for cm_gpu_write_groups: those of a span of this
 * many window indexes (about two elements a record: a group's text is
 * about a batch of the .pftrace's text, 1 MiB).  CUPTIMERGE_PFT_GROUP sets
 * it, a testing aid. */
#define CM_GPU_GROUP 2048u
/* The records' blocks of a piece for cm_gpu_write_groups: a group's
 * first and last parts go to the sink as text, so a piece holds several
 * groups (about six: an eighth of the batches go as text); each piece in
 * flight holds its groups' records and the text of its parts, so not more
 * (8 blocks: the 1 GB pair's peak at -j 16 134 to 224 MB; 4: 179 MB on
 * the 200M pair's 143 at 8).  CUPTIMERGE_PFT_PIECE sets it, a testing aid
 * (the bytes do not depend on it). */
#define CM_GPU_GROUP_BLOCKS 4

/* ,"ts":TS,"dur":DUR for START/END ns; the ts text is handed back
 * (TSTEXT: CM_US_TEXT_MAX bytes) for a flow event. */
static void x_times_text(const cm_gpu *g, cm_buf *b, cm_int start, cm_int end, char *tstext, size_t *tslen)
{
	double d;
	*tslen = cm_jw_us_text(start - g->base_ns, tstext, &d);
	cm_buf_lit(b, ",\"ts\":");
	cm_buf_put_short(b, tstext, *tslen);
	cm_buf_lit(b, ",\"dur\":");
	cm_jw_us_of_ns(b, end - start);
}

/* The ,"pid":P,"tid":T of the X event just written: where it starts in
 * the buffer (the X event ends the buffer), for its flow, which has the
 * same row: copied, not written from the numbers again. */
static inline size_t row_mark(const cm_buf *b) { return b->len; }

/* An element's separating comma, where it begins noted in MK (when not
 * NULL: cm_gpu_write_groups). */
static inline void el_begin(cm_buf *mk, cm_buf *b)
{
	if (mk)
		cm_buf_put(mk, &b->len, sizeof b->len);
	cm_buf_putc(b, ',');
}

/* An ac2g flow event: ph "s" (from an API row) or "f" (into a GPU row), on
 * the row whose ,"pid":P,"tid":T text is B's bytes [ROW, ROW + ROWLEN). */
static void flow(cm_buf *mk, cm_buf *b, char ph, cm_int id, size_t row, size_t rowlen, const char *ts, size_t tslen)
{
	el_begin(mk, b);
	cm_buf_lit(b, "{\"ph\":\"");
	cm_buf_putc(b, ph);
	cm_buf_lit(b, "\",\"id\":");
	cm_jw_int(b, id);
	if (b->cap - b->len < rowlen)
		cm_buf_grow(b, rowlen); /* before the source is taken: the grow may move it */
	memcpy(b->p + b->len, b->p + row, rowlen);
	b->len += rowlen;
	cm_buf_lit(b, ",\"ts\":");
	cm_buf_put_short(b, ts, tslen);
	if (ph == 'f')
		cm_buf_lit(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
	else
		cm_buf_lit(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
}

/* gpu_x_head's text before the pid: {"ph":"X","cat":CAT,"name":NAME */
static void x_head_start(cm_buf *b, const char *cat, const char *name, size_t nlen)
{
	cm_buf_lit(b, "{\"ph\":\"X\",\"cat\":");
	cm_jw_string(b, cat, strlen(cat));
	cm_buf_lit(b, ",\"name\":");
	cm_jw_string(b, name, nlen);
}

/* ,"pid":PID,"tid":TID (exported): the rest of gpu_x_head's text */
static void row_text(cm_buf *b, cm_int pid, cm_int tid)
{
	cm_buf_lit(b, ",\"pid\":");
	cm_jw_int(b, pid);
	cm_buf_lit(b, ",\"tid\":");
	cm_jw_int(b, cm_tid_export(tid));
}

/* The External id Kineto writes on the GPU-side event of correlation CORR:
 * that of the CPU operator linked to it, 0 when none (version 2 only). */
static cm_int cpu_ext(const cm_gpu *g, cm_int corr)
{
	const int64_t *e;
	int64_t c;
	if (!g->link.cext || !cm_id_key(corr, &c, NULL))
		return 0;
	e = cm_idmap_get(g->link.cext, c);
	return e ? cm_id_value(*e, g->win.idsigns[CM_IDS_EXT]) : 0;
}

/* What one worker needs to write events: its own scratch space; the tables
 * of cm_gpu are only read. */
struct render {
	const cm_gpu *g;
	struct args args;
	cm_arena *scratch;
	cm_buf text, dumps;
	struct { /* an API cbid's name in the table (not NULL) and whether it starts a flow */
		int64_t cbid;
		const char *name;
		size_t len;
		int driver, flow;
		cm_buf head; /* {"ph":"X","cat":...,"name":... of its X event, as gpu_x_head writes it */
	} api[64];
};

/* The name of an API call's cbid and whether the call starts a flow: from
 * R's cache when the table names the cbid (a few dozen kinds of call; the
 * table's search and the lists' string compares for each were 2% of a
 * merge's instructions), else as gpu_api_name and cm_cbid_requires_flow
 * give them (FALLBACK: 64 bytes). */
static inline __attribute__((always_inline)) const char *api_name(struct render *R, int driver, cm_int cbid, char *fallback, size_t *len, int *flow,
			    const cm_buf **head)
{
	const char *name;
	int64_t c = (int64_t)cbid;
	__typeof__(R->api[0]) *k = &R->api[((uint64_t)c * 0x9E3779B97F4A7C15u >> 58) ^ (unsigned)driver];
	*head = NULL;
	if (cbid >= INT64_MIN && cbid <= INT64_MAX && k->name && k->driver == driver && k->cbid == c) {
		*len = k->len;
		*flow = k->flow;
		*head = &k->head;
		return k->name;
	}
	name = gpu_api_name(driver, cbid, fallback);
	*len = strlen(name);
	*flow = cm_cbid_requires_flow(driver, name);
	if (cbid >= INT64_MIN && cbid <= INT64_MAX && name != fallback) {
		k->cbid = c;
		k->name = name;
		k->len = *len;
		k->driver = driver;
		k->flow = *flow;
		/* the X event's text up to its pid, made once (gpu_x_head's
		 * category and name, each through cm_jw_string, were an API
		 * event's costliest part) */
		k->head.len = 0;
		cm_buf_lit(&k->head, "{\"ph\":\"X\",\"cat\":");
		cm_jw_string(&k->head, driver ? "cuda_driver" : "cuda_runtime", driver ? 11 : 12);
		cm_buf_lit(&k->head, ",\"name\":");
		cm_jw_string(&k->head, name, *len);
		*head = &k->head;
	}
	return name;
}

/* (inlined: in render_block, as before cm_gpu_write_groups called it too) */
static inline __attribute__((always_inline)) void render_api(struct render *R, const cm_gpurec *r, cm_buf *b, cm_buf *mk)
{
	const cm_gpu *g = R->g;
	int driver = r->kind == CM_REC_DRIVER, fell;
	char fallback[64], tstext[CM_US_TEXT_MAX];
	const char *name;
	const cm_buf *head;
	cm_int tid = 0, corr = r->v[CM_RA_CORR], pid = r->v[CM_RA_PID];
	cm_int ext;
	size_t ts_len, name_len, row, row_end;
	int starts_flow;
	if (!(r->flags & CM_REC_REGISTERED) || !gpu_cut_keep(g, r))
		return;
	gpu_api_thread(g, r, &tid, &fell); /* cannot fail: the plan made the same lookup */
	if (fell && g->remap) {
		int64_t moved;
		if (g->remap(g->remap_ctx, (int64_t)pid, (int64_t)tid, cm_py_int_to_double(r->v[CM_RA_START]), 1, &moved))
			tid = moved;
	}
	name = api_name(R, driver, r->v[CM_RA_CBID], fallback, &name_len, &starts_flow, &head);
	el_begin(mk, b);
	/* gpu_x_head's bytes, the part before the pid made once when it can be */
	if (head)
		cm_buf_put(b, head->p, head->len);
	else
		x_head_start(b, driver ? "cuda_driver" : "cuda_runtime", name, name_len);
	row = row_mark(b);
	row_text(b, pid, tid);
	row_end = b->len;
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
	if (corr != 0 && starts_flow)
		flow(mk, b, 's', corr, row, row_end - row, tstext, ts_len);
}

/* args[KEY] = the JSON text in R->text, kept in the event's scratch arena. */
static void arg_text(struct render *R, const char *key)
{
	char *s;
	if (R->args.direct) { /* written at once: no copy to keep */
		gpu_arg_raw(&R->args, key, R->text.p, R->text.len);
		R->text.len = 0;
		return;
	}
	s = cm_arena_alloc(R->scratch, R->text.len);
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
static inline __attribute__((always_inline)) void kineto_args(struct render *R, const cm_gpurec *r)
{
	const cm_gpu *g = R->g;
	const cm_int *v = r->v;
	struct args *A = &R->args;
	cm_int ext = g->version >= 2 ? cpu_ext(g, v[CM_RG_CORR]) : 0;
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
			p = cm_kin_devices_find(&g->win.wprops, (int64_t)v[CM_RG_DEV]);
			if (!p && g->cpu.cprops)
				p = cm_kin_devices_find(g->cpu.cprops, (int64_t)v[CM_RG_DEV]);
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

/* gpu_x_head for a record's own name: one kept in the window's name table
 * goes out as the JSON text made once there (the bytes gpu_x_head's
 * cm_jw_string would write), without another look at each of its bytes.
 * CAT is one of the render's own categories, which need no escape.
 * Returns where its ,"pid":..,"tid":.. starts in B (it ends B). */
static size_t x_head_named(const cm_gpu *g, cm_buf *b, const char *cat, const cm_gpurec *r, cm_int pid, cm_int tid)
{
	size_t len, row;
	const char *json;
	if (!(r->flags & CM_REC_NAMEREF)) {
		x_head_start(b, cat, r->name, r->nlen);
	} else {
		json = cm_gpunames_json(g->win.names, r->name_id, &len);
		cm_buf_lit(b, "{\"ph\":\"X\",\"cat\":\"");
		cm_buf_puts(b, cat);
		cm_buf_lit(b, "\",\"name\":");
		cm_buf_put(b, json, len);
	}
	row = row_mark(b);
	row_text(b, pid, tid);
	return row;
}

static const char *const activity_cat[] = {[CM_REC_KERNEL] = "kernel", [CM_REC_MEMCPY] = "gpu_memcpy",
					   [CM_REC_MEMSET] = "gpu_memset"};

/* (inlined: in render_block, as before cm_gpu_write_groups called it too) */
static inline __attribute__((always_inline)) void render_activity(struct render *R, const cm_gpurec *r, cm_buf *b, cm_buf *mk)
{
	struct args *A = &R->args;
	const cm_int *v = r->v;
	size_t ts_len, row, row_end;
	char tstext[CM_US_TEXT_MAX];
	cm_arena_reset(R->scratch);
	el_begin(mk, b);
	row = x_head_named(R->g, b, activity_cat[r->kind], r, v[CM_RG_DEV], v[CM_RG_STREAM]);
	row_end = b->len;
	x_times_text(R->g, b, v[CM_RG_START], v[CM_RG_END], tstext, &ts_len);
	/* without an annotation no key comes twice and every key is one of
	 * the literals below: the args go straight out */
	gpu_args_begin(A, r->flags & CM_REC_ANN ? NULL : b);
	gpu_arg_int(A, "device", v[CM_RG_DEV]);
	gpu_arg_int(A, "context", v[CM_RG_CTX]);
	gpu_arg_int(A, "stream", v[CM_RG_STREAM]);
	gpu_arg_int(A, "correlation", v[CM_RG_CORR]);
	if (v[CM_RG_GRAPH])
		gpu_arg_int(A, "graph id", v[CM_RG_GRAPH]);
	if (v[CM_RG_NODE])
		gpu_arg_int(A, "graph node id", v[CM_RG_NODE]);
	if (r->flags & CM_REC_ANN)
		gpu_annotation_args(R->scratch, A, cm_gpurec_unpack_jval(R->scratch, r->extra, r->xlen), &R->dumps);
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
		flow(mk, b, 'f', v[CM_RG_CORR], row, row_end - row, tstext, ts_len);
}

static void render_overhead(struct render *R, const cm_gpurec *r, cm_buf *b, cm_buf *mk)
{
	if (gpu_dropped(R->g, r) || !gpu_cut_keep(R->g, r))
		return;
	el_begin(mk, b);
	x_head_named(R->g, b, "overhead", r, OVERHEAD_PID, 0);
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
static void render_sync(struct render *R, const cm_gpurec *r, cm_buf *b, cm_buf *mk)
{
	const cm_gpu *g = R->g;
	const cm_int *v = r->v;
	uint32_t type = gpu_sync_type(r);
	int32_t stream = cm_tid_int32(v[CM_RS_STREAM]);
	cm_int row = stream == INT32_MIN ? 0 : stream < 0 ? -(cm_int)stream : stream;
	const char *name = cm_kin_sync_name(v[CM_RS_TYPE]);
	cm_int ext;
	size_t ts_len, at, at_end;
	char tstext[CM_US_TEXT_MAX];
	if (!gpu_sync_drawn(g, r) || !gpu_cut_keep(g, r))
		return;
	el_begin(mk, b);
	x_head_start(b, "cuda_sync", name, strlen(name));
	at = row_mark(b);
	row_text(b, v[CM_RS_DEV], row);
	at_end = b->len;
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
		const struct wait_info *w = cm_hmap_get(g->plan.waits, &ix);
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
		flow(mk, b, 'f', v[CM_RS_CORR], at, at_end - at, tstext, ts_len);
}

/* The events of the record R, each with a comma in front, into OUT;
 * where each begins into MK when not NULL (cm_gpu_write_groups).  Inlined
 * with the common kinds' render, so that render_block's constant NULL
 * leaves no test of MK in the JSON's render. */
static inline __attribute__((always_inline)) void render_one(struct render *R, const cm_gpurec *r, cm_buf *out,
							     cm_buf *mk)
{
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER: render_api(R, r, out, mk); break;
	case CM_REC_OVERHEAD: render_overhead(R, r, out, mk); break;
	case CM_REC_SYNC: render_sync(R, r, out, mk); break;
	case CM_REC_CUDAEVENT: break;
	default:
		if (gpu_cut_keep(R->g, r))
			render_activity(R, r, out, mk);
		break;
	}
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
		render_one(R, &r, out, NULL);
	}
	return 0;
}

int cm_gpu_write_events(const cm_gpu *g, cm_evout *eo, int jobs)
{
	return gpu_render_walk(g, jobs, gpu_write_rendered, eo);
}

/* A worker's render (not R itself) freed. */
static void render_free(struct render *R)
{
	cm_arena_free(R->scratch);
	cm_buf_free(&R->text);
	cm_buf_free(&R->dumps);
	free(R->args.v);
	for (size_t k = 0; k < sizeof R->api / sizeof R->api[0]; k++)
		cm_buf_free(&R->api[k].head);
}

int gpu_render_walk(const cm_gpu *g, int jobs, cm_opool_sink sink, void *sctx)
{
	int n = g->remap ? 1 : jobs < 1 ? 1 : jobs, rc;
	struct render *R = cm_xcalloc((size_t)n, sizeof *R);
	void **ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	for (int i = 0; i < n; i++) {
		R[i].g = g;
		R[i].scratch = cm_arena_new();
		ctx[i] = &R[i];
	}
	rc = gpu_walk_records(g, n, render_block, ctx, sink, sctx);
	for (int i = 0; i < n; i++)
		render_free(&R[i]);
	free(R);
	free(ctx);
	return rc;
}

/* ---- cm_gpu_write_groups ---- */

/* A part of a piece's output (struct grworker's): a group's elements as
 * text (KIND 0: NMARKS marks, a size_t each, then LEN bytes of text) or
 * the records the encoder made of a whole group (KIND 1: LEN bytes); each
 * part's bytes padded to a multiple of 8. */
struct grpart {
	uint64_t q, kind, nmarks, len;
};

/* A worker of cm_gpu_write_groups: its render, its encoder's context. */
struct grworker {
	struct render R;
	const cm_gpu_groups *gr;
	void *ectx;
	cm_buf text, marks; /* the group being rendered */
};

/* OUT padded with zeros to a multiple of 8. */
static void pad8(cm_buf *out)
{
	static const char zero[8];
	if (out->len & 7)
		cm_buf_put(out, zero, 8 - (out->len & 7));
}

/* The group Q rendered in W (W->text, W->marks) as a part of OUT: as text
 * when TEXT, else encoded; nothing for a group without an element.  0, or
 * the encoder's failure. */
static int group_part(struct grworker *W, uint64_t q, int text, cm_buf *out)
{
	struct grpart h;
	size_t at, nm = W->marks.len / sizeof(size_t);
	int rc = 0;
	if (!nm)
		return 0;
	h.q = q;
	h.kind = !text;
	h.nmarks = text ? nm : 0;
	at = out->len;
	cm_buf_put(out, &h, sizeof h);
	if (text) {
		cm_buf_put(out, W->marks.p, W->marks.len);
		cm_buf_put(out, W->text.p, W->text.len);
	} else {
		rc = W->gr->encode(W->ectx, W->text.p, W->text.len, (const size_t *)(const void *)W->marks.p, nm, out);
	}
	h.len = out->len - at - sizeof h - (text ? W->marks.len : 0);
	memcpy(out->p + at, &h, sizeof h);
	pad8(out);
	W->text.len = W->marks.len = 0;
	return rc;
}

/* The pool's work: a piece of records rendered group by group, each
 * group whole in the piece encoded at once. */
static int groups_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct grworker *W = wctx;
	const char *p = in->p, *end = in->p + in->len;
	uint64_t q = 0, span = W->gr->span;
	int have = 0, first = 1, rc;
	cm_gpurec r;
	W->text.len = W->marks.len = 0;
	while (p < end) {
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return -1; /* cannot happen: plan read the same bytes */
		if (have && r.index / span != q) {
			/* the piece's first group may have begun in the piece before */
			if ((rc = group_part(W, q, first, out)) < 0)
				return rc;
			first = 0;
		}
		q = r.index / span;
		have = 1;
		render_one(&W->R, &r, &W->text, &W->marks);
	}
	/* the last may go on in the next piece */
	return have ? group_part(W, q, 1, out) : 0;
}

/* The pool's sink: the parts handed on in order. */
static int groups_sink(void *sctx, cm_buf *out)
{
	const cm_gpu_groups *gr = sctx;
	size_t at = 0;
	while (at < out->len) {
		struct grpart h;
		int rc;
		memcpy(&h, out->p + at, sizeof h);
		at += sizeof h;
		if (h.kind) {
			rc = gr->encoded(gr->sctx, out->p + at, (size_t)h.len);
			at += (size_t)h.len;
		} else {
			const char *text = out->p + at + h.nmarks * sizeof(size_t);
			rc = gr->text(gr->sctx, h.q, text, (size_t)h.len, (const size_t *)(const void *)(out->p + at),
				      (size_t)h.nmarks);
			at += (size_t)(h.nmarks * sizeof(size_t) + h.len);
		}
		if (rc < 0)
			return -1;
		at = (at + 7) & ~(size_t)7;
	}
	return 0;
}

int cm_gpu_write_groups(const cm_gpu *g, int jobs, const cm_gpu_groups *gr)
{
	/* (a remap counts what it moves: one thread, in order, as
	 * gpu_render_walk) */
	int n = g->remap ? 1 : jobs < 1 ? 1 : jobs, rc;
	struct grworker *W = cm_xcalloc((size_t)n, sizeof *W);
	void **ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	cm_gpu_groups local = *gr;
	const char *env = getenv("CUPTIMERGE_PFT_GROUP");
	if (!local.span)
		local.span = env && *env && strtoull(env, NULL, 10) ? strtoull(env, NULL, 10) : CM_GPU_GROUP;
	for (int i = 0; i < n; i++) {
		W[i].R.g = g;
		W[i].R.scratch = cm_arena_new();
		W[i].gr = &local;
		W[i].ectx = gr->ectx[i];
		ctx[i] = &W[i];
	}
	env = getenv("CUPTIMERGE_PFT_PIECE");
	rc = gpu_walk_pieces(g, n, env && *env ? atoi(env) : CM_GPU_GROUP_BLOCKS, groups_block, ctx, groups_sink, &local);
	for (int i = 0; i < n; i++) {
		render_free(&W[i].R);
		cm_buf_free(&W[i].text);
		cm_buf_free(&W[i].marks);
	}
	free(W);
	free(ctx);
	return rc;
}
