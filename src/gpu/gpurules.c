/* gpurules.c - the rules more than one stage of the window applies.  The
 * plan and the render make the same thread lookup (gpu_api_thread) and the
 * same drop decision (gpu_dropped), so that the metadata written before the
 * CPU events agrees with the events written after them (the walk of the
 * records they share is gpuwalk.c's); a gpu_user_annotation span's text,
 * the window's or the CPU trace's annotation's, for the JSON or an
 * encoder (gpu_span_put).  Nothing here calls into a stage: every stage
 * may call here. */
#include "config.h"
#include "gpu/gpurender_int.h"
#include "gpu/cbid.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Report a problem with events[INDEX] (OFFSET: just past the event). */
int gpu_ev_error(const cm_gpu *g, uint64_t index, int64_t offset, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cm_error(CM_EXIT_DATA, g->wname, offset, "window: events[%llu]: %s", (unsigned long long)index, msg);
	return -1;
}

/* The thread row of an API record (tidrule.h): the CPU thread its
 * correlation links to, else the window's map, else the int32 id itself
 * (*fell set).  0, or -1 after a report (only when REPORT; without it the
 * caller knows the plan has checked the same lookup). */
int gpu_api_thread(const cm_gpu *g, const cm_gpurec *r, cm_int *tid, int *fell)
{
	cm_int pid = r->v[CM_RA_PID], corr = r->v[CM_RA_CORR];
	int32_t id = cm_tid_int32(r->v[CM_RA_RAWTID]);
	int64_t t, c;
	int rc;
	*fell = 0;
	if (cm_id_key(corr, &c, NULL)) {
		const struct gpu_corr_thread *l = cm_idmap_get(g->link.linked, c);
		if (l && l->thread && (cm_int)g->link.cpu_threads.v[l->thread - 1].pid == pid) {
			*tid = g->link.cpu_threads.v[l->thread - 1].tid;
			return 0;
		}
	}
	rc = pid < INT64_MIN || pid > INT64_MAX ? CM_TIDMAP_ABSENT
						: cm_tidmap_lookup(g->win.tidmap, (int64_t)pid, id, &t);
	switch (rc) {
	case CM_TIDMAP_FOUND: *tid = t; return 0;
	case CM_TIDMAP_ABSENT: *tid = id; *fell = 1; return 0;
	case CM_TIDMAP_BAD_MAP:
		return gpu_ev_error(g, r->index, r->offset,
				"thread_resource_map (or its entry for this process_id) is not an object");
	default:
		return gpu_ev_error(g, r->index, r->offset,
				"thread_resource_map entry for thread_id %d is not an integer of at most 64 bits",
				(int)id);
	}
}

/* The name of an API record's callback id (NAME: 64 bytes for "cbid_N"). */
const char *gpu_api_name(int driver, cm_int cbid, char *fallback)
{
	const char *name = cbid >= INT64_MIN && cbid <= INT64_MAX ? cm_cbid_name(driver, (int64_t)cbid) : NULL;
	if (name)
		return name;
	memcpy(fallback, "cbid_", 5);
	cm_py_int_format(cbid, fallback + 5);
	return fallback;
}

/* An overhead record that the rule drops. */
int gpu_dropped(const cm_gpu *g, const cm_gpurec *r)
{
	return (r->flags & CM_REC_ABR) && g->win.max_end > 0 && r->v[CM_RO_START] > g->win.max_end;
}

/* Kineto's sync type of a sync record: CUPTI's uint32 field. */
uint32_t gpu_sync_type(const cm_gpurec *r) { return (uint32_t)(unsigned __int128)r->v[CM_RS_TYPE]; }

/* Whether a sync record (without a deferred error) is drawn: in a window of
 * version 2, every one but a "Stream Wait Event" on a stream where no
 * kernel, copy or set ran: Kineto holds those back until the end and then
 * drops them as noise. */
int gpu_sync_drawn(const cm_gpu *g, const cm_gpurec *r)
{
	int64_t key[2];
	if (g->version < 2)
		return 0;
	if (gpu_sync_type(r) != CM_SYNC_STREAM_WAIT_EVENT)
		return 1;
	key[0] = (int64_t)r->v[CM_RS_DEV];
	key[1] = (int64_t)r->v[CM_RS_STREAM];
	return cm_hmap_get(g->win.act_streams, key) != NULL;
}

/* Whether record R is drawn when nothing is cut, and over which times:
 * the rule the plan applies before the cut, which --split's deal applies
 * to every record for the extent of the window uncut (crosscheck.c).  An
 * API call when its name is one the merge keeps; GPU work always; an
 * overhead record unless the rule drops it; a sync in a window of version
 * 2 when gpu_sync_drawn.  A deferred error (an overhead or sync record the
 * digest found wrong) is reported here, status 1, as the plan reports it.
 * The thread lookup of an API call is the caller's (gpu_api_thread).  1
 * with *START and *END (ns), 0 when not drawn, -1 after a report. */
int gpu_drawn_span(const cm_gpu *g, const cm_gpurec *r, cm_int *start, cm_int *end)
{
	int s, e;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER:
		if (!(r->flags & CM_REC_REGISTERED))
			return 0;
		s = CM_RA_START, e = CM_RA_END;
		break;
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET:
		s = CM_RG_START, e = CM_RG_END;
		break;
	case CM_REC_OVERHEAD:
		if (gpu_dropped(g, r))
			return 0;
		if (r->flags & CM_REC_DEFERRED)
			return gpu_ev_error(g, r->index, r->offset, "%.*s", (int)r->xlen, r->extra);
		s = CM_RO_START, e = CM_RO_END;
		break;
	case CM_REC_SYNC:
		if (g->version < 2)
			return 0;
		if (r->flags & CM_REC_DEFERRED)
			return gpu_ev_error(g, r->index, r->offset, "%.*s", (int)r->xlen, r->extra);
		if (!gpu_sync_drawn(g, r))
			return 0;
		s = CM_RS_START, e = CM_RS_END;
		break;
	default: /* a cuda_event record */
		return 0;
	}
	*start = r->v[s];
	*end = r->v[e];
	return 1;
}


int gpu_write_rendered(void *sctx, cm_buf *out) { return cm_evout_elements(sctx, out->p, out->len); }

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

/* Note an X event's extent (Python: min(min_ts, ts), max(max_end, ts + max(dur, 0))),
 * and whether it overlaps the CPU trace's span. */
void gpu_extent(cm_gpu *g, double ts, double dur)
{
	gpu_extent_into(g, &g->plan.min_ts, &g->plan.max_end_ts, &g->plan.x_events, &g->plan.x_outside, ts, dur);
	g->st.x_events++;
}

/* The ts and dur of a span: 1 ns wider on each side, as Kineto draws them. */
void gpu_span_times(const cm_gpu *g, const struct gpu_ann_span *sp, double *ts, double *dur)
{
	*ts = cm_py_max(cm_py_int_to_double(sp->start - g->base_ns) / 1000.0 - 0.001, 0.0);
	*dur = cm_py_max(cm_py_int_to_double(sp->end - sp->start) / 1000.0 + 0.002, 0.0);
}

/* A span's time D (us) after its key's text, into B: where D is the
 * double of a whole number of nanoseconds K, K / 1000.0 below
 * CM_PY_MILLI_MAX, its repr is the decimal K / 1000 (cm_jw_us_text's
 * premise, which every time of the window's events rests on), written so
 * and noted with K (CM_PF_IV_NS) in M (not NULL): every span of the CPU
 * trace's annotations and most of the window's (theirs is a difference of
 * doubles, K / 1000.0 - 0.001), whose two reprs were 40% of a span's text
 * (BENCHMARKS.md "pfspans21"); else its repr, the text read. */
static void span_time(cm_buf *b, struct gpu_members *m, const char *key, size_t klen, double d)
{
	size_t at = b->len;
	if (d >= 0 && !signbit(d) && d < (double)(CM_PY_MILLI_MAX / 1000)) {
		int64_t k = (int64_t)nearbyint(d * 1000.0); /* (K or next to it; checked) */
		if (k >= 0 && k < CM_PY_MILLI_MAX && (double)k / 1000.0 == d) {
			cm_jw_us_of_ns(b, k);
			if (m)
				gpu_members_time(m, key, klen, b, at, k);
			return;
		}
	}
	cm_jw_double(b, d);
	if (m)
		gpu_members_num(m, key, klen, b, at);
}

/* (gpurender_int.h) */
void gpu_span_text(cm_buf *b, struct gpu_members *m, const char *name, size_t len, cm_int pid, cm_int tid, double ts,
		   double dur, cm_int ext)
{
	size_t at;
	if (m)
		gpu_members_element(m);
	cm_buf_putc(b, ',');
	at = b->len;
	gpu_x_head_start(b, "gpu_user_annotation", name, len);
	if (m)
		gpu_head_members(m, b, at, "gpu_user_annotation", 19);
	gpu_row_text(b, pid, tid, m);
	cm_buf_lit(b, ",\"ts\":");
	span_time(b, m, "ts", 2, ts);
	cm_buf_lit(b, ",\"dur\":");
	span_time(b, m, "dur", 3, dur);
	if (m)
		gpu_members_open(m, "args", 4, CM_J_OBJ);
	GPU_INT_TEXT(b, m, ",\"args\":{\"External id\":", "External id", ext);
	if (m)
		gpu_members_close(m);
	cm_buf_lit(b, "}}");
}

/* (gpuconv_int.h) */
int gpu_span_put(struct gpu_span_out *o, const char *name, size_t len, cm_int pid, cm_int tid, double ts, double dur,
		 cm_int ext)
{
	if (o->enc) /* (through a pointer: gpuencspans.c stands above the walks that call this) */
		return o->enc(o->ectx, name, len, pid, tid, ts, dur, ext);
	gpu_span_text(o->text, NULL, name, len, pid, tid, ts, dur, ext);
	return 0;
}
