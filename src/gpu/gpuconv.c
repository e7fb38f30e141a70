/* gpuconv.c - trace-window events to Chrome-trace events, by the reference
 * rules: the cm_gpu object, and what more than one of its stages uses.
 *
 * The rules of the reference merge (PyTorch's _cupti_monitor_trace.py) are
 * split in three by when their inputs are known, a file each:
 *   digest  while the window is read (its only parse): every field an
 *           event's rule reads, converted by Python's int() and str() and
 *           checked, kept as a record (gpurec.h) - gpudigest.c;
 *   plan    once the CPU trace has been scanned and correlations resolved:
 *           the thread of each API record, the rows (devices, streams,
 *           processes, threads), the time extent, the annotation spans -
 *           gpuplan.c;
 *   render  at the end of the output: the text of each event, by worker
 *           threads over blocks of records, in window order - gpurender.c.
 * The plan and the render make the same thread lookup (gpu_api_thread) and
 * the same drop decision (gpu_dropped), so the metadata written before the
 * CPU events agrees with the events written after them: those rules live
 * here, with the other decisions two stages share and the reading back of
 * the records that both walk (gpu_feed_pool).
 *
 * Python's semantics are kept where they show in the output: int() of
 * numbers, strings and booleans (pyval.h), str() of names, json.loads of
 * annotation strings and json.dumps of list annotations (jval.h), floats
 * computed with the same operations in the same order (no contraction, see
 * configure.ac), and dict semantics for repeated keys.
 *
 * Beside the three stage files and this one (the object's life, its
 * setters and figures, the External-id index, error reports, the shared
 * rules): gpuscan.c (external correlations, maps, resolve), gpuargs.c (args
 * and annotations) and gpurows.c (row metadata and annotation spans). */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/cbid.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/opool.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cm_gpu_set_repair(cm_gpu *g, cm_repair *r) { g->repair = r; }

void cm_gpu_mark_named(const cm_gpu *g, cm_repair *r)
{
	if (g->version >= 2)
		return; /* its metadata names no API thread */
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
	g->budget = CM_MEMORY_DEFAULT;
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
	g->cut_min_ts = INFINITY;
	g->cut_max_end = -INFINITY;
	return g;
}

void cm_gpu_free(cm_gpu *g)
{
	if (!g)
		return;
	cm_idmap_free(g->ua);
	gpu_ua_unmap(g);
	if (g->ua_file)
		fclose(g->ua_file);
	cm_idmap_free(g->ext);
	cm_idmap_free(g->linked);
	cm_idmap_free(g->uext);
	cm_hmap_free(g->devices);
	cm_hmap_free(g->streams);
	cm_hmap_free(g->procs);
	cm_hmap_free(g->threads);
	cm_idmap_free(g->spans);
	cm_idkeys_free(g->ua_keys); /* after the tables over it */
	cm_hmap_free(g->spans_more);
	cm_hmap_free(g->act_streams);
	cm_hmap_free(g->device_rows);
	cm_opindex_free(g->ops);
	gpu_anns_free(g);
	cm_hmap_free(g->evmap);
	cm_hmap_free(g->waits);
	cm_idmap_free(g->cext);
	cm_kin_devices_free(&g->wprops);
	cm_buf_free(&g->wprops_text);
	cm_tidmap_free(g->tidmap);
	if (g->pairs)
		fclose(g->pairs);
	if (g->cut_apis)
		fclose(g->cut_apis);
	cm_idmap_free(g->cut_keep);
	cm_ext_threads_free(&g->cpu_threads);
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

int cm_gpu_cpu_ops_done(cm_gpu *g)
{
	return (g->ops ? cm_opindex_build(g->ops) : 0) < 0 || gpu_anns_build(g) < 0 ? -1 : 0;
}

void cm_gpu_set_cpu_devices(cm_gpu *g, const cm_kin_devices *d) { g->cprops = d; }

void cm_gpu_set_cpu_meta(cm_gpu *g, const cm_hmap *meta, const char *prog, size_t len)
{
	g->cmeta = meta;
	g->prog = prog;
	g->prog_len = len;
}

const char *cm_gpu_devices_text(const cm_gpu *g, size_t *n)
{
	if (g->version < 2 || !g->wprops_text.len)
		return NULL;
	*n = g->wprops_text.len;
	return g->wprops_text.p;
}

/* About what the id tables of the joins and the plan will take (an array
 * each, though a sparse one becomes a hash map): the External ids', the
 * correlations' three, the annotations' (packed over their set) and the
 * spans'; idmap.c holds them in memory when that fits in the budget. */
static uint64_t tables_expected(const cm_gpu *g)
{
	int64_t clo = g->corr_lo < g->api_lo ? g->corr_lo : g->api_lo;
	int64_t chi = g->corr_hi > g->api_hi ? g->corr_hi : g->api_hi;
	uint64_t n = cm_idmap_array_bytes(sizeof(struct cm_ext_thread), g->ext_lo, g->ext_hi) +
		     cm_idmap_array_bytes(sizeof(struct linked), g->corr_lo, g->corr_hi) +
		     cm_idmap_array_bytes(8, g->corr_lo, g->corr_hi) +
		     (g->version >= 2 ? cm_idmap_array_bytes(8, clo, chi) : 0);
	if (g->ua_count) /* the key set (16 bytes a block of 64), then an entry a key in two tables */
		n += cm_idmap_array_bytes(0, g->ua_lo, g->ua_hi) / 32 +
		     g->ua_count * (cm_idmap_array_bytes(sizeof(struct ua_ref), 0, 0) +
				    cm_idmap_array_bytes(sizeof(struct span_slot), 0, 0));
	return n;
}

cm_idmap *cm_gpu_linked_ext(cm_gpu *g)
{
	if (g->ext)
		return g->ext;
	cm_idmap_expect(tables_expected(g));
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

/* ----------------------------------------------------------------- reports */

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

int cm_gpu_check_ids(cm_gpu *g, unsigned cpu_ext_signs)
{
	static const char *const what[CM_IDS_N] = {
		[CM_IDS_EXT] = ("External ids (the window's \"external_id\" and user_annotations keys, the CPU "
				"trace's \"External id\")"),
		[CM_IDS_CORR] = "\"correlation_id\" values",
		[CM_IDS_DEV] = "\"device_id\" values",
		[CM_IDS_STREAM] = "\"stream_id\" values"};
	g->idsigns[CM_IDS_EXT] |= cpu_ext_signs;
	for (int k = 0; k < CM_IDS_N; k++)
		if ((g->idsigns[k] & (CM_ID_NEG | CM_ID_HIGH)) == (CM_ID_NEG | CM_ID_HIGH))
			return cm_fail(CM_EXIT_DATA, g->wname, -1,
					"window: %s both below 0 and at or above 2^63: ids are kept in 64 bits, "
					"where two such ids can coincide",
					what[k]);
	return 0;
}

/* ---------------------------------------------- the rules the stages share */

/* The thread row of an API record (tidrule.h): the CPU thread its
 * correlation links to, else the window's map, else the int32 id itself
 * (*fell set).  0, or -1 after a report (only when REPORT; without it the
 * caller knows the plan has checked the same lookup). */
int gpu_api_thread(cm_gpu *g, const cm_gpurec *r, cm_int *tid, int *fell)
{
	cm_int pid = r->v[CM_RA_PID], corr = r->v[CM_RA_CORR];
	int32_t id = cm_tid_int32(r->v[CM_RA_RAWTID]);
	int64_t t, c;
	int rc;
	*fell = 0;
	if (cm_id_key(corr, &c, NULL)) {
		const struct linked *l = cm_idmap_get(g->linked, c);
		if (l && l->thread && (cm_int)g->cpu_threads.v[l->thread - 1].pid == pid) {
			*tid = g->cpu_threads.v[l->thread - 1].tid;
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
	cm_int_format(cbid, fallback + 5);
	return fallback;
}

/* Hand each block of records to POOL, in window order: the one still in
 * memory when the window was small (as a copy: the pool takes the bytes it
 * is given, and the plan and the output both read the blocks), else each
 * block of the temporary file in turn.  0, or -1 (after a report, or as
 * cm_opool_put). */
int gpu_feed_pool(cm_gpu *g, cm_opool *pool)
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
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	while ((rc = cm_gpurec_block_read(g->recs, &b)) == 1)
		if (cm_opool_put(pool, &b) < 0) {
			rc = -1;
			break;
		}
	cm_buf_free(&b);
	return rc;
}

/* An overhead record that the rule drops. */
int gpu_dropped(const cm_gpu *g, const cm_gpurec *r)
{
	return (r->flags & CM_REC_ABR) && g->max_end > 0 && r->v[CM_RO_START] > g->max_end;
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
	return cm_hmap_get(g->act_streams, key) != NULL;
}
