/* gpurender.c - the render: the records to Chrome-trace event text at the
 * end of the output, by worker threads over blocks of records, written in
 * window order.  It reads the tables the plan filled and changes none.
 *
 * For an encoder of the events that is not text (the .pftrace's,
 * gpuencgroups.c), the same render notes where each element begins and,
 * for an element the encoder takes as a tree, its members as it writes
 * them (struct gpu_emit, gpumembers.h): the render's functions take it as
 * ES, NULL for the JSON's render (render_block), where the common kinds
 * are inlined with that constant, so that the JSON's render tests
 * nothing of it.
 *
 * This file holds the common kinds' render (API calls, kernels, copies,
 * sets, overhead) and the walk on threads; the flow events and a drawn
 * sync's are gpurendersync.c's, below it, and the pieces of an event's
 * text both use are in gpurender_int.h. */
#include "config.h"
#include "gpu/gpurender_int.h"
#include "gpu/cbid.h"
#include "gpu/gpuargs.h"
#include "base/diag.h"
#include "base/opool.h"

#include <stdlib.h>
#include <string.h>

/* Where the name's text (its quotes too) begins in an API call's head,
 * {"ph":"X","cat":"CAT","name":NAME (gpu_head_members' offset). */
static inline size_t api_name_at(int driver) { return 26 + (driver ? 11 : 12); }

/* The name of an API call's cbid and whether the call starts a flow: from
 * R's cache when the table names the cbid (a few dozen kinds of call; the
 * table's search and the lists' string compares for each were 2% of a
 * merge's instructions), else as gpu_api_name and cm_cbid_requires_flow
 * give them (FALLBACK: 64 bytes).  With the cache's *HEAD, *PLAIN says
 * whether its name's text is its bytes (left alone without). */
static inline __attribute__((always_inline)) const char *api_name(struct render *R, int driver, cm_int cbid, char *fallback, size_t *len, int *flow,
			    const cm_buf **head, int *plain)
{
	const char *name;
	int64_t c = (int64_t)cbid;
	__typeof__(R->api[0]) *k = &R->api[((uint64_t)c * 0x9E3779B97F4A7C15u >> 58) ^ (unsigned)driver];
	*head = NULL;
	if (cbid >= INT64_MIN && cbid <= INT64_MAX && k->name && k->driver == driver && k->cbid == c) {
		*len = k->len;
		*flow = k->flow;
		*head = &k->head;
		*plain = k->plain;
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
		/* (every escape begins with a backslash; the name's text ends HEAD) */
		k->plain = !memchr(k->head.p + api_name_at(driver), '\\', k->head.len - api_name_at(driver));
		*plain = k->plain;
	}
	return name;
}

/* (inlined: in render_block, as before cm_gpu_write_groups called it too) */
static inline __attribute__((always_inline)) void render_api(struct render *R, const cm_gpurec *r, cm_buf *b,
							     struct gpu_emit *es)
{
	struct gpu_members *m = gpu_es_members(es);
	const cm_gpu *g = R->g;
	int driver = r->kind == CM_REC_DRIVER, fell;
	char fallback[64], tstext[CM_US_TEXT_MAX];
	const char *name;
	const cm_buf *head;
	cm_int tid = 0, corr = r->v[CM_RA_CORR], pid = r->v[CM_RA_PID];
	cm_int ext;
	size_t ts_len, name_len, row, row_end, at;
	int starts_flow, plain = 0;
	if (!(r->flags & CM_REC_REGISTERED) || !gpu_cut_keep(g, r))
		return;
	gpu_api_thread(g, r, &tid, &fell); /* cannot fail: the plan made the same lookup */
	if (fell && g->remap) {
		int64_t moved;
		if (g->remap(g->remap_ctx, (int64_t)pid, (int64_t)tid, cm_py_int_to_double(r->v[CM_RA_START]), 1, &moved))
			tid = moved;
	}
	name = api_name(R, driver, r->v[CM_RA_CBID], fallback, &name_len, &starts_flow, &head, &plain);
	if (m && m->lean && head && plain) { /* the lean mode: every member at once, when it can be */
		static const char *const keys[3] = {"cbid", "correlation", "External id"};
		static const unsigned char klens[3] = {4, 11, 11};
		size_t nat = api_name_at(driver) + 1;
		cm_int ts_ns = r->v[CM_RA_START] - g->base_ns;
		cm_int vals[3] = {r->v[CM_RA_CBID], corr, gpu_cpu_ext(g, corr)};
		if (gpu_members_x(m, driver ? "cuda_driver" : "cuda_runtime", driver ? 11 : 12, head->p + nat,
				  head->len - nat - 1, pid, cm_tid_export(tid), ts_ns, r->v[CM_RA_END] - r->v[CM_RA_START],
				  keys, klens, vals, vals[2] ? 3 : 2)) {
			gpu_el_mark(es, b);
			if (corr != 0 && starts_flow) /* (its row and time noted, no text: TS unread) */
				gpu_render_flow(es, b, 's', corr, b->len, 0, "", 0, ts_ns);
			return;
		}
	}
	gpu_el_begin(es, b);
	at = b->len;
	if (m && m->lean && head && plain) {
		/* the lean mode: no text, the name's node in the cache's head
		 * (unchanged until the worker's next API call: the record's
		 * elements are encoded before) */
		size_t nat = api_name_at(driver) + 1;
		gpu_members_lit(m, "ph", 2, "X", 1);
		gpu_members_lit(m, "cat", 3, driver ? "cuda_driver" : "cuda_runtime", driver ? 11 : 12);
		gpu_members_lit(m, "name", 4, head->p + nat, head->len - nat - 1);
	} else {
		/* gpu_x_head's bytes, the part before the pid made once when it can be */
		if (head)
			cm_buf_put(b, head->p, head->len);
		else
			gpu_x_head_start(b, driver ? "cuda_driver" : "cuda_runtime", name, name_len);
		if (m)
			gpu_head_members(m, b, at, driver ? "cuda_driver" : "cuda_runtime", driver ? 11 : 12);
	}
	row = gpu_row_mark(b);
	gpu_row_text(b, pid, tid, m);
	row_end = b->len;
	gpu_times_text(g, b, r->v[CM_RA_START], r->v[CM_RA_END], tstext, &ts_len, m);
	if (m)
		gpu_members_open(m, "args", 4, CM_J_OBJ);
	GPU_INT_TEXT(b, m, ",\"args\":{\"cbid\":", "cbid", r->v[CM_RA_CBID]);
	/* (written out, not GPU_INT_TEXT: tests/mutants/corr.sed's line) */
	if (!gpu_members_lean_int(m, "correlation", 11, corr)) {
		cm_buf_lit(b, ",\"correlation\":");
		at = b->len;
		cm_jw_int(b, corr);
		if (m)
			gpu_members_int(m, "correlation", 11, b, at, corr);
	}
	if ((ext = gpu_cpu_ext(g, corr)) != 0)
		GPU_INT_TEXT(b, m, ",\"External id\":", "External id", ext);
	cm_buf_lit(b, "}}");
	if (m)
		gpu_members_close(m);
	if (corr != 0 && starts_flow)
		gpu_render_flow(es, b, 's', corr, row, row_end - row, tstext, ts_len, r->v[CM_RA_START] - g->base_ns);
}

/* args[KEY] = the JSON text in R->text (a number, or a string that needs
 * no escape: cm_kin_write_float's, cm_kin_write_bandwidth's), kept in the
 * event's scratch arena. */
static void arg_text(struct render *R, const char *key)
{
	char *s;
	if (R->args.direct) { /* written at once: no copy to keep */
		cm_buf *b = R->args.direct;
		size_t at;
		gpu_arg_direct_key(&R->args, key, strlen(key));
		at = b->len;
		cm_buf_put(b, R->text.p, R->text.len);
		if (R->args.m && R->text.p[0] == '"')
			gpu_members_str(R->args.m, key, strlen(key), b, at);
		else if (R->args.m)
			gpu_members_num(R->args.m, key, strlen(key), b, at);
		R->text.len = 0;
		return;
	}
	s = cm_arena_alloc(R->scratch, R->text.len);
	memcpy(s, R->text.p, R->text.len);
	gpu_arg_raw(&R->args, key, s, R->text.len);
	R->text.len = 0;
}

/* args[KEY] = [X, Y, Z]. */
static void triple(struct render *R, const char *key, const int32_t *x)
{
	struct args *A = &R->args;
	cm_buf *b = A->direct ? A->direct : &R->text;
	if (A->direct) /* written at once, its members noted */
		gpu_arg_direct_key(A, key, strlen(key));
	if (A->m)
		gpu_members_open(A->m, key, strlen(key), CM_J_ARR);
	cm_buf_putc(b, '[');
	for (int i = 0; i < 3; i++) {
		size_t at;
		if (gpu_members_lean_int(A->m, NULL, 0, x[i]))
			continue; /* (the lean mode: no text) */
		if (i)
			cm_buf_putc(b, ',');
		at = b->len;
		cm_jw_int(b, x[i]);
		if (A->m)
			gpu_members_int(A->m, NULL, 0, b, at, x[i]);
	}
	cm_buf_putc(b, ']');
	if (A->m)
		gpu_members_close(A->m);
	if (!A->direct)
		arg_text(R, key);
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
	cm_int ext = g->version >= 2 ? gpu_cpu_ext(g, v[CM_RG_CORR]) : 0;
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
		triple(R, "grid", k.grid);
		triple(R, "block", k.block);
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
 * Returns where its ,"pid":..,"tid":.. starts in B (it ends B).  In M's
 * lean mode a name of the table whose text is its bytes is not written:
 * its node points into the table (read-only while the render runs). */
static size_t x_head_named(const cm_gpu *g, cm_buf *b, const char *cat, const cm_gpurec *r, cm_int pid, cm_int tid,
			   struct gpu_members *m)
{
	size_t len, row, at = b->len;
	const char *json = NULL;
	int bare = 0; /* the lean mode's head: no text */
	if (m && m->lean && (r->flags & CM_REC_NAMEREF)) {
		json = cm_gpunames_json(g->win.names, r->name_id, &len);
		bare = !memchr(json + 1, '\\', len - 2); /* (every escape begins with one) */
	}
	if (bare && gpu_members_head(m, cat, strlen(cat), json + 1, len - 2, pid, cm_tid_export(tid)))
		return gpu_row_mark(b); /* (the row's text none: gpu_row_text's in the lean mode) */
	if (bare) {
		gpu_members_lit(m, "ph", 2, "X", 1);
		gpu_members_lit(m, "cat", 3, cat, strlen(cat));
		gpu_members_lit(m, "name", 4, json + 1, len - 2);
	} else if (!(r->flags & CM_REC_NAMEREF)) {
		gpu_x_head_start(b, cat, r->name, r->nlen);
	} else {
		if (!json)
			json = cm_gpunames_json(g->win.names, r->name_id, &len);
		cm_buf_lit(b, "{\"ph\":\"X\",\"cat\":\"");
		cm_buf_puts(b, cat);
		cm_buf_lit(b, "\",\"name\":");
		cm_buf_put(b, json, len);
	}
	if (m && !bare)
		gpu_head_members(m, b, at, cat, strlen(cat));
	row = gpu_row_mark(b);
	gpu_row_text(b, pid, tid, m);
	return row;
}

static const char *const activity_cat[] = {[CM_REC_KERNEL] = "kernel", [CM_REC_MEMCPY] = "gpu_memcpy",
					   [CM_REC_MEMSET] = "gpu_memset"};

/* (inlined: in render_block, as before cm_gpu_write_groups called it too) */
static inline __attribute__((always_inline)) void render_activity(struct render *R, const cm_gpurec *r, cm_buf *b,
								  struct gpu_emit *es)
{
	struct gpu_members *m = gpu_es_members(es);
	struct args *A = &R->args;
	int direct = !(r->flags & CM_REC_ANN);
	const cm_int *v = r->v;
	size_t ts_len, row, row_end;
	char tstext[CM_US_TEXT_MAX];
	cm_arena_reset(R->scratch);
	gpu_el_begin(es, b);
	row = x_head_named(R->g, b, activity_cat[r->kind], r, v[CM_RG_DEV], v[CM_RG_STREAM], m);
	row_end = b->len;
	gpu_times_text(R->g, b, v[CM_RG_START], v[CM_RG_END], tstext, &ts_len, m);
	/* without an annotation no key comes twice and every key is one of
	 * the literals below: the args go straight out, their members noted
	 * (with one, written from the dict they make: the element parsed) */
	gpu_args_begin(A, direct ? b : NULL);
	A->m = direct ? m : NULL;
	if (m && direct)
		gpu_members_open(m, "args", 4, CM_J_OBJ);
	else if (m)
		gpu_members_bad(m);
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
	if (A->m)
		gpu_members_close(m);
	if (v[CM_RG_CORR] != 0)
		gpu_render_flow(es, b, 'f', v[CM_RG_CORR], row, row_end - row, tstext, ts_len, v[CM_RG_START] - R->g->base_ns);
}

static void render_overhead(struct render *R, const cm_gpurec *r, cm_buf *b, struct gpu_emit *es)
{
	struct gpu_members *m = gpu_es_members(es);
	char tstext[CM_US_TEXT_MAX];
	size_t ts_len;
	if (gpu_dropped(R->g, r) || !gpu_cut_keep(R->g, r))
		return;
	gpu_el_begin(es, b);
	x_head_named(R->g, b, "overhead", r, OVERHEAD_PID, 0, m);
	gpu_times_text(R->g, b, r->v[CM_RO_START], r->v[CM_RO_END], tstext, &ts_len, m);
	cm_buf_lit(b, ",\"args\":{}}");
	if (m) {
		gpu_members_open(m, "args", 4, CM_J_OBJ);
		gpu_members_close(m);
	}
}

/* The events of the record R, each with a comma in front, into OUT;
 * noted in ES when not NULL (cm_gpu_write_groups).  Inlined with the
 * common kinds' render, so that render_block's constant NULL leaves no
 * test of ES in the JSON's render. */
static inline __attribute__((always_inline)) void render_one(struct render *R, const cm_gpurec *r, cm_buf *out,
							     struct gpu_emit *es)
{
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER: render_api(R, r, out, es); break;
	case CM_REC_OVERHEAD: render_overhead(R, r, out, es); break;
	case CM_REC_SYNC: gpu_render_sync(R, r, out, es); break;
	case CM_REC_CUDAEVENT: break;
	default:
		if (gpu_cut_keep(R->g, r))
			render_activity(R, r, out, es);
		break;
	}
}

void gpu_render_record(struct render *R, const cm_gpurec *rec, cm_buf *out, struct gpu_emit *es)
{
	render_one(R, rec, out, es);
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

void gpu_render_init(struct render *R, const cm_gpu *g)
{
	R->g = g;
	R->scratch = cm_arena_new();
}

void gpu_render_free(struct render *R)
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
		gpu_render_init(&R[i], g);
		ctx[i] = &R[i];
	}
	rc = gpu_walk_records(g, n, render_block, ctx, sink, sctx);
	for (int i = 0; i < n; i++)
		gpu_render_free(&R[i]);
	free(R);
	free(ctx);
	return rc;
}

