/* gpurendersync.c - the render's flow events and drawn syncs: the ac2g
 * flow from an API call into its GPU work (written after each), and the
 * event Kineto writes of a CUDA_SYNC activity, its args and the flow into
 * it.  Below the common kinds' render (gpurender.c), which calls both and
 * shares with them the pieces of an event's text (gpurender_int.h); the
 * flow is here, not there, so that the two files call one way only
 * (tests/e2e/gpucalls.sh).  Which syncs are drawn is the plan's
 * (gpurules.c). */
#include "config.h"
#include "gpu/gpurender_int.h"
#include "gpu/kineto.h"

#include <string.h>

/* (gpurender_int.h) An ac2g flow event, on a row copied from B.  In the
 * lean mode (gpumembers.h) with no text for the row and the time (kept
 * whole), the rest of the text is literals: none of it written (BARE),
 * the members only noted (the flow's text was half its cost there). */
void gpu_render_flow(struct gpu_emit *es, cm_buf *b, char ph, cm_int id, size_t row, size_t rowlen, const char *ts,
		     size_t tslen, cm_int ts_ns)
{
	struct gpu_members *m = gpu_es_members(es);
	int bare = m && m->lean && !rowlen && !tslen;
	size_t at;
	if (bare && gpu_members_flow(m, ph, id, ts_ns)) {
		gpu_el_mark(es, b);
		return;
	}
	gpu_el_begin(es, b);
	if (!bare) {
		cm_buf_lit(b, "{\"ph\":\"");
		cm_buf_putc(b, ph);
		cm_buf_lit(b, "\",\"id\":");
	}
	if (m)
		gpu_members_lit(m, "ph", 2, ph == 'f' ? "f" : "s", 1);
	if (!gpu_members_lean_int(m, "id", 2, id)) {
		at = b->len;
		cm_jw_int(b, id);
		if (m)
			gpu_members_int(m, "id", 2, b, at, id);
	}
	if (m)
		gpu_members_row_copy(m, b, row, b->len);
	if (!bare) {
		if (b->cap - b->len < rowlen)
			cm_buf_grow(b, rowlen); /* before the source is taken: the grow may move it */
		memcpy(b->p + b->len, b->p + row, rowlen);
		b->len += rowlen;
	}
	/* (the lean mode: TS is "" when kept whole, gpu_times_text) */
	if (!gpu_members_lean_time(m, "ts", 2, ts_ns)) {
		cm_buf_lit(b, ",\"ts\":");
		at = b->len;
		cm_buf_put_short(b, ts, tslen);
		if (m)
			gpu_members_time(m, "ts", 2, b, at, ts_ns);
	}
	if (bare)
		;
	else if (ph == 'f')
		cm_buf_lit(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
	else
		cm_buf_lit(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
	if (m) {
		gpu_members_lit(m, "cat", 3, "ac2g", 4);
		gpu_members_lit(m, "name", 4, "ac2g", 4);
		if (ph == 'f')
			gpu_members_lit(m, "bp", 2, "e", 1);
	}
}

/* The integer X of the member KEY (a literal) into B, noted in M (not
 * NULL). */
static void sync_int(struct gpu_members *m, cm_buf *b, const char *key, cm_int x)
{
	size_t at = b->len;
	if (gpu_members_lean_int(m, key, strlen(key), x))
		return; /* (the lean mode: no text) */
	cm_jw_int(b, x);
	if (m)
		gpu_members_int(m, key, strlen(key), b, at, x);
}

/* A drawn sync record, as Kineto writes a CUDA_SYNC activity: on the row of
 * its device and stream (Kineto's sanitizeTid of the stream as an int32:
 * an absent stream, all ones, is row 1), "External id" first (its operator
 * or, as Kineto does for syncs, its own correlation id), and an "f" flow
 * into it from the API call of the same correlation. */
void gpu_render_sync(struct render *R, const cm_gpurec *r, cm_buf *b, struct gpu_emit *es)
{
	struct gpu_members *m = gpu_es_members(es);
	const cm_gpu *g = R->g;
	const cm_int *v = r->v;
	uint32_t type = gpu_sync_type(r);
	int32_t stream = cm_tid_int32(v[CM_RS_STREAM]);
	cm_int row = stream == INT32_MIN ? 0 : stream < 0 ? -(cm_int)stream : stream;
	const char *name = cm_kin_sync_name(v[CM_RS_TYPE]);
	cm_int ext;
	size_t ts_len, at, at_end, a;
	char tstext[CM_US_TEXT_MAX];
	if (!gpu_sync_drawn(g, r) || !gpu_cut_keep(g, r))
		return;
	gpu_el_begin(es, b);
	at = b->len;
	gpu_x_head_start(b, "cuda_sync", name, strlen(name));
	if (m)
		gpu_head_members(m, b, at, "cuda_sync", 9);
	at = gpu_row_mark(b);
	gpu_row_text(b, v[CM_RS_DEV], row, m);
	at_end = b->len;
	gpu_times_text(g, b, v[CM_RS_START], v[CM_RS_END], tstext, &ts_len, m);
	cm_buf_lit(b, ",\"args\":{");
	if (m)
		gpu_members_open(m, "args", 4, CM_J_OBJ);
	ext = gpu_cpu_ext(g, v[CM_RS_CORR]);
	if (ext || v[CM_RS_CORR]) {
		cm_buf_lit(b, "\"External id\":");
		sync_int(m, b, "External id", ext ? ext : v[CM_RS_CORR]);
		cm_buf_putc(b, ',');
	}
	cm_buf_lit(b, "\"cuda_sync_kind\":");
	a = b->len;
	cm_jw_string(b, name, strlen(name));
	if (m)
		gpu_members_str(m, "cuda_sync_kind", 14, b, a);
	if (type == CM_SYNC_EVENT || type == CM_SYNC_STREAM_WAIT_EVENT) {
		int64_t ix = (int64_t)r->index;
		const struct wait_info *w = cm_hmap_get(g->plan.waits, &ix);
		cm_buf_lit(b, ",\"wait_on_stream\":");
		sync_int(m, b, "wait_on_stream", w ? w->stream : -1);
		cm_buf_lit(b, ",\"wait_on_cuda_event_record_corr_id\":");
		sync_int(m, b, "wait_on_cuda_event_record_corr_id", w ? w->corr : -1);
		cm_buf_lit(b, ",\"wait_on_cuda_event_id\":");
		sync_int(m, b, "wait_on_cuda_event_id", v[CM_RS_EVENT]);
	}
	cm_buf_lit(b, ",\"stream\":");
	sync_int(m, b, "stream", stream);
	cm_buf_lit(b, ",\"correlation\":");
	sync_int(m, b, "correlation", v[CM_RS_CORR]);
	cm_buf_lit(b, ",\"device\":");
	sync_int(m, b, "device", v[CM_RS_DEV]);
	cm_buf_lit(b, ",\"context\":");
	sync_int(m, b, "context", v[CM_RS_CTX]);
	cm_buf_lit(b, "}}");
	if (m)
		gpu_members_close(m);
	if (v[CM_RS_CORR] > 0)
		gpu_render_flow(es, b, 'f', v[CM_RS_CORR], at, at_end - at, tstext, ts_len, v[CM_RS_START] - g->base_ns);
}

