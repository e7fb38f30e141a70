/* gpuconv.c - trace-window events to Chrome-trace events, by the reference
 * rules: the cm_gpu object, its life, setters and figures.
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
 * CPU events agrees with the events written after them: those rules live in
 * gpurules.c, with the other decisions two stages share; the walks of the
 * records that the plan, the render and the annotation spans make are
 * gpuwalk.c's.
 *
 * Python's semantics are kept where they show in the output: int() of
 * numbers, strings and booleans (pyval.h), str() of names, json.loads of
 * annotation strings and json.dumps of list annotations (jval.h), floats
 * computed with the same operations in the same order (no contraction, see
 * configure.ac), and dict semantics for repeated keys.
 *
 * The files stand in layers, each calling only those below it; the arrows
 * name the calls into the layers between, not those to gpurules.c,
 * gpuwalk.c, gpucut.c and the leaves, which any file above may make.
 * tests/e2e/gpucalls.sh checks from the objects that no call goes back up:
 *
 *   gpuconv.c    the object's life, its setters and figures, the CPU
 *                trace's operators                    -> gpudigest, gpuanns,
 *                                                        gpuscan, gpusplit
 *                                                        (to free)
 *   gpugroups.c  --split: the groups planned side by side,
 *                a view of the object each            -> gpusplitout, gpuplan
 *   gpusplit.c   --split: the step groups' store, made, dealt the
 *                records as runs of the window's own, freed
 *                                                     -> gpusplitdeal,
 *                                                        gpusplitmarks,
 *                                                        gpusplitout, gpuanns
 *   gpusplitdeal.c --split: the deal, each record to the groups
 *                that keep it (and planned as dealt)  -> gpusplitmarks,
 *                                                        gpusplitout, gpuplan
 *   gpusplitmarks.c --split: the groups that keep a span of
 *                time, and the table of those that keep each API call
 *   gpusplitout.c --split: a group's runs and plan made the object's
 *                own; the groups' render in one walk  -> gpurender, gpurows
 *   gpuencgroups.c the render in groups for the .pftrace's
 *                encoder, with the events' members, the
 *                spans' pieces after the window's      -> gpurender,
 *                                                        gpuencspans, gpugroup
 *   gpuencspans.c the spans in groups for the .pftrace's
 *                encoder, with their members          -> gpurows, gpugroup
 *   gpugroup.c   a group of the encoder's in a worker's output, the
 *                pool's sink that hands the groups on
 *   gpurows.c    row metadata, the annotation spans
 *                (their text gpurules.c's)            -> gpuanns, gpuscan
 *   gpurender.c  the render                           -> gpuargs, kineto,
 *                                                        gpumembers
 *   gpuplan.c    the plan and its results (extent)    -> gpuanns, gpuscan
 *   gpudigest.c  the digest, at the window's parse    -> gpujoin, gpufield
 *   gpujoin.c    the external correlations: collected
 *                as read, joined after the CPU scan   -> gpuscan, gpufield
 *   gpuanns.c    the CPU trace's annotations' spans   -> opindex
 *   gpuscan.c    the window's maps (user annotations,
 *                thread_resource_map, version)        -> tidrule
 *   gpufield.c   an event's fields by Python's int()
 *   gpucut.c     what --clip, --steps and --range keep
 *   gpurules.c   the rules two stages share, the walk of the records
 *   leaves       gpurec (records), gpuargs (args), cbid, tidrule, opindex,
 *                kineto, occupancy, window (the window's reader, which
 *                mergeprepare.c hands the events to the digest from) */
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

void cm_gpu_set_tid_remap(cm_gpu *g, cm_gpu_tid_remap fn, void *ctx)
{
	g->remap = fn;
	g->remap_ctx = ctx;
}

void cm_gpu_set_call_note(cm_gpu *g, cm_gpu_call_note fn, void *ctx)
{
	g->call_note = fn;
	g->call_ctx = ctx;
}

uint64_t cm_gpu_api_count(const cm_gpu *g) { return g->win.api_n; }

void cm_gpu_each_named_thread(const cm_gpu *g, void (*fn)(void *ctx, int64_t pid, int64_t tid), void *ctx)
{
	if (g->version >= 2)
		return; /* its metadata names no API thread */
	for (size_t i = 0; i < cm_hmap_slots(g->plan.threads); i++) {
		const int64_t *key;
		if (cm_hmap_slot(g->plan.threads, i, (const void **)&key))
			fn(ctx, key[0], key[1]);
	}
}

cm_gpu *cm_gpu_new(const char *window_name)
{
	cm_gpu *g = cm_xcalloc(1, sizeof *g);
	g->wname = window_name;
	g->win.ext_lo = g->win.corr_lo = INT64_MAX;
	g->win.ext_hi = g->win.corr_hi = INT64_MIN;
	g->win.ua_lo = INT64_MAX;
	g->win.ua_hi = INT64_MIN;
	g->win.tidmap = cm_tidmap_new();
	g->plan.devices = cm_hmap_new(8, sizeof(struct first_ts));
	g->plan.streams = cm_hmap_new(16, 8);
	g->plan.procs = cm_hmap_new(8, sizeof(struct first_ts));
	g->plan.threads = cm_hmap_new(16, 8);
	g->plan.spans_more = cm_hmap_new(24, sizeof(struct gpu_ann_span));
	g->win.act_streams = cm_hmap_new(16, 0);
	g->plan.device_rows = cm_hmap_new(8, 0);
	g->version = 1;
	g->win.api_lo = INT64_MAX;
	g->win.api_hi = INT64_MIN;
	g->plan.min_ts = INFINITY;
	g->plan.max_end_ts = 0.0;
	g->plan.cut_min_ts = INFINITY;
	g->plan.cut_max_end = -INFINITY;
	return g;
}

void cm_gpu_free(cm_gpu *g)
{
	if (!g)
		return;
	gpu_split_free(g); /* its tables back in place first */
	cm_idmap_free(g->link.ua);
	gpu_ua_unmap(g);
	if (g->win.ua_file)
		fclose(g->win.ua_file);
	cm_idmap_free(g->link.ext);
	cm_idmap_free(g->link.linked);
	cm_idmap_free(g->link.uext);
	cm_hmap_free(g->plan.devices);
	cm_hmap_free(g->plan.streams);
	cm_hmap_free(g->plan.procs);
	cm_hmap_free(g->plan.threads);
	cm_idmap_free(g->plan.spans);
	cm_idkeys_free(g->win.ua_keys); /* after the tables over it */
	cm_hmap_free(g->plan.spans_more);
	cm_hmap_free(g->win.act_streams);
	cm_hmap_free(g->plan.device_rows);
	cm_opindex_free(g->cpu.ops);
	gpu_anns_free(g);
	cm_hmap_free(g->plan.evmap);
	cm_hmap_free(g->plan.waits);
	cm_idmap_free(g->link.cext);
	cm_kin_devices_free(&g->win.wprops);
	cm_buf_free(&g->win.wprops_text);
	cm_tidmap_free(g->win.tidmap);
	cm_gpunames_free(g->win.names);
	if (g->win.pairs)
		fclose(g->win.pairs);
	free(g->win.chunks);
	if (g->cut_apis)
		fclose(g->cut_apis);
	cm_idmap_free(g->cut_keep);
	cm_ext_threads_free(&g->link.cpu_threads);
	cm_gpu_digest_free(g->win.dg);
	cm_buf_free(&g->win.dgout);
	cm_buf_free(&g->win.block);
	cm_buf_free(&g->win.lasts);
	if (g->win.recs)
		fclose(g->win.recs);
	free(g);
}

int cm_gpu_version(const cm_gpu *g) { return g->version; }

int cm_gpu_add_cpu_op(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext)
{
	cm_gpu *g = ctx;
	if (!g->cpu.ops)
		g->cpu.ops = cm_opindex_new(cm_pages_budget_bytes() / 2); /* half: the id tables take the rest */
	return cm_opindex_add(g->cpu.ops, pid, tid, ts, end, ext);
}

int cm_gpu_cpu_ops_done(cm_gpu *g)
{
	return (g->cpu.ops ? cm_opindex_build(g->cpu.ops) : 0) < 0 || gpu_anns_build(g) < 0 ? -1 : 0;
}

void cm_gpu_set_cpu_devices(cm_gpu *g, const cm_kin_devices *d) { g->cpu.cprops = d; }

void cm_gpu_set_cpu_span(cm_gpu *g, double min_ts, double max_end)
{
	g->cpu.have_cpu_span = 1;
	g->cpu.cpu_min_ts = min_ts;
	g->cpu.cpu_max_end = max_end;
}

void cm_gpu_set_cpu_meta(cm_gpu *g, const cm_hmap *meta, const char *prog, size_t len)
{
	g->cpu.cmeta = meta;
	g->cpu.prog = prog;
	g->cpu.prog_len = len;
}

const char *cm_gpu_devices_text(const cm_gpu *g, size_t *n)
{
	if (g->version < 2 || !g->win.wprops_text.len)
		return NULL;
	*n = g->win.wprops_text.len;
	return g->win.wprops_text.p;
}

void cm_gpu_stats(const cm_gpu *g, struct cm_gpu_stats *st)
{
	*st = g->st;
	st->dense_tables = g->link.linked && cm_idmap_is_dense(g->link.linked);
	st->table_bytes = cm_idmap_bytes(g->link.linked) + cm_idmap_bytes(g->link.uext) +
			  (g->link.ua ? cm_idmap_bytes(g->link.ua) : 0) +
			  cm_hmap_bytes(g->plan.devices) + cm_hmap_bytes(g->plan.streams) + cm_hmap_bytes(g->plan.procs) +
			  cm_hmap_bytes(g->plan.threads) + (g->plan.spans ? cm_idmap_bytes(g->plan.spans) : 0) +
			  cm_hmap_bytes(g->plan.spans_more) + (g->link.cext ? cm_idmap_bytes(g->link.cext) : 0);
}

/* ----------------------------------------------------------------- reports */

int cm_gpu_check_ids(cm_gpu *g, unsigned cpu_ext_signs)
{
	static const char *const what[CM_IDS_N] = {
		[CM_IDS_EXT] = ("External ids (the window's \"external_id\" and user_annotations keys, the CPU "
				"trace's \"External id\")"),
		[CM_IDS_CORR] = "\"correlation_id\" values",
		[CM_IDS_DEV] = "\"device_id\" values",
		[CM_IDS_STREAM] = "\"stream_id\" values"};
	g->win.idsigns[CM_IDS_EXT] |= cpu_ext_signs;
	for (int k = 0; k < CM_IDS_N; k++)
		if ((g->win.idsigns[k] & (CM_ID_NEG | CM_ID_HIGH)) == (CM_ID_NEG | CM_ID_HIGH))
			return cm_fail(CM_EXIT_DATA, g->wname, -1,
					"window: %s both below 0 and at or above 2^63: ids are kept in 64 bits, "
					"where two such ids can coincide",
					what[k]);
	return 0;
}
