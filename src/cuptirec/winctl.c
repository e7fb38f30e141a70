/* winctl.c - begin and end a window: open the file and set the encoder up;
 * then stop, flush, drain the writer and write the trailer.  Apart from
 * collector.c, which decides when (the C API, the timer, atexit, all under
 * G.ctl): this is what beginning and ending one window does.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "annot.h"
#include "clock.h"
#include "collector.h"
#include "encode.h"
#include "jbuf.h"
#include "pathpat.h"
#include "pool.h"
#include "window.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* ---- windows ------------------------------------------------------------------- */

int crec_begin_locked(const char *pattern)
{
	char err[PATH_MAX + 128];
	crec_path_vars pv;
	uint64_t c, r;
	crec_window *w;

	if (G.disabled || G.exiting)
		return -1;
	if (G.win)
		crec_end_locked();
	if (!pattern)
		pattern = G.o.output;
	if (crec_path_check(pattern)) {
		crec_warn("%s: %s", pattern, crec_path_check(pattern));
		return -1;
	}
	pv.pid = (long)G.pid;
	pv.seq = G.win_seq;
	pv.host = G.host;
	pv.rank = G.rank;
	if (crec_path_expand(pattern, &pv, G.win_path, sizeof G.win_path)) {
		crec_warn("%s: output path too long", pattern);
		return -1;
	}
	w = crec_window_open(G.win_path, G.o.gzip, G.o.fifo_wait, err, sizeof err);
	if (!w) {
		crec_warn("cannot create the window file %s", err);
		return -1;
	}
	if (crec_clock_pair(&c, &r) == 0) {
		crec_clock_init(&G.clock, c, r);
	} else {
		r = crec_real_ns();
		crec_clock_init(&G.clock, r, r);
	}
	if (G.clock.foreign)
		crec_note("CUPTI's clock is not CLOCK_REALTIME (another profiler changed it); "
			  "timestamps are mapped to it");
	memset(&G.enc, 0, sizeof G.enc);
	G.enc.api_name = crec_api_name_cb;
	G.enc.demangle = crec_demangle_cb;
	G.enc.clock = &G.clock;
	G.enc.ctxmap = &G.ctxmap;
	G.write_failed = 0;
	__atomic_store_n(&G.dropped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&G.lost_items, 0, __ATOMIC_RELAXED);
	G.win_misses0 = crec_pool_misses(G.pool);
	crec_annot_window_begin(G.annot);
	crec_tmap_reset(G.tmap);
	__atomic_add_fetch(&G.gen, 1, __ATOMIC_ACQ_REL);
	crec_register_thread();
	G.win_start_ns = crec_real_ns();
	__atomic_store_n(&G.win, w, __ATOMIC_RELEASE);
	crec_callbacks(1);
	if (crec_kinds_on(G.o.activities) != 0) {
		crec_end_locked();
		crec_disable("cannot enable CUPTI activity recording");
		return -1;
	}
	crec_note("recording to %s", G.win_path);
	return 0;
}

/* Append the "cuptirec" member (producer facts, counters) to B. */
static void crec_extra_json(crec_jbuf *b, unsigned long long misses, unsigned long long ann_lost,
			    size_t tmap_skipped)
{
	static const char *const names[CREC_EV_NKINDS] = {
		"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
		"external_correlation", "overhead", "cuda_sync", "cuda_event",
	};
	int i;

	crec_jbuf_lit(b, "\"cuptirec\": {\"version\": \"" PACKAGE_VERSION "\", \"thread_id_type\": ");
	if (G.system_ids)
		crec_jbuf_lit(b, "\"system\"");
	else
		crec_jbuf_lit(b, "\"default\"");
	crec_jbuf_lit(b, ", \"clock\": ");
	if (G.clock.foreign)
		crec_jbuf_lit(b, "\"mapped\"");
	else
		crec_jbuf_lit(b, "\"cupti-realtime\"");
	crec_jbuf_lit(b, ", \"events\": {");
	for (i = 0; i < CREC_EV_NKINDS; i++) {
		if (i)
			crec_jbuf_lit(b, ", ");
		crec_jbuf_lit(b, "\"");
		crec_jbuf_puts(b, names[i]);
		crec_jbuf_lit(b, "\": ");
		crec_jbuf_u64(b, G.enc.count[i]);
	}
	crec_jbuf_lit(b, "}, \"incomplete_records\": ");
	crec_jbuf_u64(b, G.enc.incomplete);
	crec_jbuf_lit(b, ", \"pool_misses\": ");
	crec_jbuf_u64(b, misses);
	crec_jbuf_lit(b, ", \"annotation_names_lost\": ");
	crec_jbuf_u64(b, ann_lost);
	crec_jbuf_lit(b, ", \"thread_map_entries_omitted\": ");
	crec_jbuf_u64(b, tmap_skipped);
	crec_jbuf_lit(b, "}");
}

int crec_end_locked(void)
{
	crec_jbuf ann = { 0 }, tmap = { 0 }, extra = { 0 }, props = { 0 };
	struct timespec dl;
	crec_trailer t;
	crec_source src;
	crec_window *w = G.win;
	char err[PATH_MAX + 128];
	unsigned long long misses, ann_lost, dropped, lost;
	size_t d = 0, skipped;
	crec_item mk = { .kind = CREC_ITEM_MARK };
	CUptiResult r;
	int rc;

	if (!w)
		return -1;
	crec_callbacks(0);
	crec_kinds_off();
	/* the end of the span recorded: GPU work launched before may end later */
	src.end_ns = crec_real_ns();
	r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS)
		crec_warn("flushing CUPTI's buffers failed: %s; the window may lack records", crec_cupti_str(r));
	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &d) == CUPTI_SUCCESS && d)
		__atomic_add_fetch(&G.dropped, d, __ATOMIC_RELAXED);
	mk.mark = ++G.mark;
	crec_deadline(&dl, G.o.exit_timeout);
	if (crec_queue_push(G.q, &mk) != 0 || crec_queue_wait_mark(G.q, mk.mark, &dl) != 0) {
		/* the writer still owns W: leave it (and the file incomplete) */
		crec_warn("the writer did not finish within %g s; %s is left incomplete "
			  "(raise CUPTIREC_EXIT_TIMEOUT)", G.o.exit_timeout, G.win_path);
		__atomic_store_n(&G.disabled, 1, __ATOMIC_RELEASE);
		return -1;
	}
	__atomic_store_n(&G.win, NULL, __ATOMIC_RELEASE);
	misses = crec_pool_misses(G.pool) - G.win_misses0;
	dropped = __atomic_load_n(&G.dropped, __ATOMIC_RELAXED);
	lost = __atomic_load_n(&G.lost_items, __ATOMIC_RELAXED);
	ann_lost = crec_annot_window_end(G.annot, &ann);
	skipped = crec_tmap_write_json(G.tmap, (long)G.pid, G.system_ids, G.pid_max, &tmap);
	crec_extra_json(&extra, misses, ann_lost, skipped);
	/* the kinds are off since crec_kinds_off above */
	if (crec_device_properties(&G.enc, &props))
		crec_jbuf_put(&props, "", 1);
	crec_jbuf_put(&ann, "", 1);  /* NUL-terminate the texts */
	crec_jbuf_put(&tmap, "", 1);
	crec_jbuf_put(&extra, "", 1);
	t.user_annotations = ann.failed ? NULL : ann.p;
	t.thread_resource_map = tmap.failed ? NULL : tmap.p;
	t.extra = extra.failed ? NULL : extra.p;
	t.start_ns = G.win_start_ns;
	t.dropped_records = dropped;
	/* the launch members, Kineto's copy and set names, cuda_sync device ids
	 * and device_properties (cuptimerge-window(5)) */
	t.window_version = 2;
	t.device_properties = props.len && !props.failed ? props.p : NULL;
	src.host = G.host;
	src.pid = (long)G.pid;
	src.rank = G.rank;
	src.rank_from = G.rank_from;
	src.start_ns = G.win_start_ns;
	t.source = &src;
	{
		unsigned long long nev = crec_window_events(w);
		rc = crec_window_close(w, &t, err, sizeof err);
		if (rc != 0)
			crec_warn("the window file is incomplete: %s", err);
		else
			crec_note("%s: %llu events (%llu kernels, %llu runtime, %llu driver), %llu dropped",
				  G.win_path, nev, G.enc.count[CREC_EV_KERNEL], G.enc.count[CREC_EV_RUNTIME],
				  G.enc.count[CREC_EV_DRIVER], dropped);
	}
	if (dropped || lost)
		crec_warn("%llu activity records dropped (buffer pool empty %llu times); "
			  "raise CUPTIREC_BUFFERS or CUPTIREC_BUFFER_SIZE", dropped + lost, misses);
	if (ann_lost)
		crec_warn("%llu annotation names not kept (limits reached)", ann_lost);
	crec_jbuf_free(&ann);
	crec_jbuf_free(&tmap);
	crec_jbuf_free(&extra);
	crec_jbuf_free(&props);
	G.win_seq++;
	return rc;
}
