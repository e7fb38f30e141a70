/* gpuconv.h - the GPU side of the merge: trace-window events turned into
 * Chrome-trace events by the reference merge's rules, in three passes over
 * the window (see merge.c for why three). */
#ifndef CM_GPUCONV_H
#define CM_GPUCONV_H

#include <stdint.h>
#include "base/hmap.h"
#include "cpu/extindex.h"
#include "json/jval.h"
#include "io/output.h"
#include "base/pyval.h"

typedef struct cm_gpu cm_gpu;

cm_gpu *cm_gpu_new(const char *window_name);
void cm_gpu_free(cm_gpu *g);

/* ---- pass 1 over the window ---- */
/* Collect what the later passes need from one event: external correlations
 * and the end of the last non-overhead activity.  0, or -1 after a report. */
int cm_gpu_scan_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset);
/* Take "user_annotations" or "thread_resource_map".  0, or -1 after a report. */
int cm_gpu_scan_member(cm_gpu *g, const char *key, const cm_jval *val, int64_t offset);

/* The External ids the window's external correlations name, as a map
 * ext id (int64) -> struct cm_ext_thread for the CPU scan to fill in
 * (last event wins, as in a dict). */
cm_hmap *cm_gpu_linked_ext(cm_gpu *g);

/* After the CPU scan: link correlation ids to CPU threads and to user
 * annotations, and drop the tables only needed for that.  0, or -1 after
 * reporting an I/O error. */
int cm_gpu_resolve(cm_gpu *g, cm_int base_ns);

/* ---- pass 2 ---- */
/* Check one event for everything pass 3 will need, and note the rows it
 * opens (devices, streams, processes, threads) and its time extent.
 * 0, or -1 after a report. */
int cm_gpu_plan_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset);
/* Close pass 2: the gpu_user_annotation spans join the extent. */
void cm_gpu_plan_finish(cm_gpu *g);
/* Smallest ts and largest ts+dur of the X events pass 3 will write (min is
 * +inf when there are none), by Python's min()/max() rules. */
void cm_gpu_extent(const cm_gpu *g, double *min_ts, double *max_end);
/* Before pass 2: the CPU trace's span [MIN_TS, MAX_END] (trace us), for
 * cm_gpu_overlap.  Without it pass 2 counts nothing. */
void cm_gpu_set_cpu_span(cm_gpu *g, double min_ts, double max_end);
/* After pass 2: how many X events pass 3 will write, and how many of them
 * lie wholly outside the CPU span. */
void cm_gpu_overlap(const cm_gpu *g, uint64_t *events, uint64_t *outside);
/* After pass 2: the process ids of the API rows (int64 keys; values are
 * internal).  Owned by G. */
const cm_hmap *cm_gpu_processes(const cm_gpu *g);

/* ---- pass 3: output ---- */
/* The metadata events (process/thread names, labels, sort indexes). */
int cm_gpu_write_metadata(cm_gpu *g, cm_evout *eo);
/* The X and flow events of one window event.  0, or -1. */
int cm_gpu_emit_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset, cm_evout *eo);
/* The gpu_user_annotation spans, sorted by (External id, device, stream). */
int cm_gpu_write_spans(cm_gpu *g, cm_evout *eo);

/* Let the thread-repair stage place API records that no rule of the window
 * resolved (their int32 id stayed); see repair.h. */
struct cm_repair;
void cm_gpu_set_repair(cm_gpu *g, struct cm_repair *r);
/* Tell the repair stage which thread rows the GPU metadata names. */
void cm_gpu_mark_named(const cm_gpu *g, struct cm_repair *r);

/* Figures for the summary: window events, kept API records, etc. */
struct cm_gpu_stats {
	uint64_t events, linked_ext, linked_corr, api_rows, x_events;
	uint64_t pairs;       /* external correlations spilled in pass 1 */
	uint64_t index_bytes; /* the External id index at its largest */
	uint64_t table_bytes; /* correlation links, rows, spans, maps after pass 2 */
};
void cm_gpu_stats(const cm_gpu *g, struct cm_gpu_stats *st);

#endif
