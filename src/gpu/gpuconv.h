/* gpuconv.h - the GPU side of the merge: trace-window events turned into
 * Chrome-trace events by the reference merge's rules.  The window is read
 * once into records; the plan and the output read the records (see merge.c
 * for the order). */
#ifndef CM_GPUCONV_H
#define CM_GPUCONV_H

#include <stdint.h>
#include "base/hmap.h"
#include "base/extindex.h"
#include "json/jval.h"
#include "json/evout.h"
#include "io/outq.h"
#include "base/pyval.h"

typedef struct cm_gpu cm_gpu;

cm_gpu *cm_gpu_new(const char *window_name);
void cm_gpu_free(cm_gpu *g);

/* ---- the window, read once ---- */
/* Digesting one event: note what resolving needs (external correlations,
 * the end of the last non-overhead activity), check every field the later
 * stages read, and keep the event as a record (gpurec.h).  Digesting runs on
 * worker threads, each with a cm_gpu_digest of its own, over batches of
 * events; the reading thread collects each batch's output, in window order,
 * into G's tables and its records (in memory or, beyond a block, in a
 * temporary file). */
typedef struct cm_gpu_digest cm_gpu_digest;
cm_gpu_digest *cm_gpu_digest_new(cm_gpu *g);
void cm_gpu_digest_free(cm_gpu_digest *d);
/* One event of a batch into OUT (EV NULL: the batch is done).  0, or -1
 * after a report. */
int cm_gpu_digest_batch_event(cm_gpu_digest *d, uint64_t index, const cm_jval *ev, int64_t offset, cm_buf *out);
/* On the reading thread: take the output of one batch.  0, or -1. */
int cm_gpu_digest_collect(cm_gpu *g, cm_buf *out);
/* Digest and collect one event at once (the careful reader).  0, or -1. */
int cm_gpu_digest_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset);
/* Take "user_annotations", "thread_resource_map", "window_version" or
 * "device_properties".  0, or -1 after a report. */
int cm_gpu_scan_member(cm_gpu *g, const char *key, const cm_jval *val, int64_t offset);
/* "user_annotations" given as its text S[0..N) (already validated):
 * taken without building it whole.  0; -1 after a report; 1 when it must
 * go to cm_gpu_scan_member instead (not an object, or an id that repeats). */
int cm_gpu_scan_ua_text(cm_gpu *g, const char *s, size_t n, int64_t offset);
/* The window has been read: write out the last block.  0, or -1. */
int cm_gpu_digest_finish(cm_gpu *g);

/* The External ids the window's external correlations name, as a map
 * ext id -> struct cm_ext_thread for the CPU scan to fill in (last event
 * wins, as in a dict); made at the first call, once the window has been
 * read.  NULL after reporting an error. */
struct cm_idmap *cm_gpu_linked_ext(cm_gpu *g);
/* The times the merge takes (start_ns, end_ns, baseTimeNanoseconds) lie
 * within 2^126 ns of 0 (cuptimerge-window(5), Times): the differences it
 * takes of two of them (start - base, end - start, a span 1 ns wider) then
 * fit in 128 bits (Python's ints are unbounded).  CUPTI's times are
 * uint64, 2^64 at most. */
#define CM_TIME_LIMIT ((cm_int)1 << 126)
static inline int cm_gpu_time_ok(cm_int t) { return t > -CM_TIME_LIMIT && t < CM_TIME_LIMIT; }

/* After the window and the CPU trace have been read: refuse a run whose
 * ids of one kind are both below 0 and at or above 2^63, which the 64-bit
 * tables cannot tell apart (base/ids.h).  CPU_EXT_SIGNS: those of the CPU
 * trace's External ids (cm_cpuplan.ext_signs), one kind with the window's.
 * 0, or -1 after a report. */
int cm_gpu_check_ids(cm_gpu *g, unsigned cpu_ext_signs);

/* After the CPU scan: link correlation ids to CPU threads and to user
 * annotations, and drop the tables only needed for that.  THREADS: the
 * list the index's entries number (cm_cpuplan.ext_threads); FOUND: how
 * many of the index's ids the scan found (cm_cpuplan.indexed), for -v.
 * 0, or -1 after reporting an I/O error. */
int cm_gpu_resolve(cm_gpu *g, cm_int base_ns, const struct cm_ext_pt *threads, uint64_t found);
/* The user annotations' table, which cm_gpu_resolve makes first when it
 * has not been made: made ahead, once cm_gpu_linked_ext has been, on a
 * thread beside the CPU trace's index (cm_cpuindex_apply) when that makes
 * no table (a window of version 1).  0, or -1 after a report. */
int cm_gpu_ua_table(cm_gpu *g);

/* How many threads the joins (cm_gpu_linked_ext, cm_gpu_resolve) may use
 * (default 1). */
void cm_gpu_set_join_threads(cm_gpu *g, int n);

/* The window's format version ("window_version"; 1 without it): from 2 on
 * the merge adds Kineto's External ids, bandwidths and sync events. */
int cm_gpu_version(const cm_gpu *g);
/* Version 2: one operator of the CPU trace, a cm_cpuindex_op_fn (CTX is
 * the cm_gpu), for the External ids of the API calls made in it (opindex.h);
 * then cm_gpu_cpu_ops_done once all have been added, before cm_gpu_plan.
 * 0, or -1 after a report. */
int cm_gpu_add_cpu_op(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext);
/* Version 2: one user annotation of the CPU trace, a cm_cpuindex_ann_fn
 * (NAME NULL: not a string), in trace order, for the gpu_user_annotation
 * spans Kineto draws of them (gpuanns.c).  0, or -1 after a report. */
int cm_gpu_add_cpu_ann(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext, const char *name,
		       size_t len);
int cm_gpu_cpu_ops_done(cm_gpu *g);
/* The CPU trace's "deviceProperties", for the devices the window's
 * "device_properties" does not list (D must outlive the output). */
struct cm_kin_devices;
void cm_gpu_set_cpu_devices(cm_gpu *g, const struct cm_kin_devices *d);
/* The text of the window's "device_properties" for a top-level
 * "deviceProperties" the CPU trace lacks: *N bytes, or NULL when the
 * window is of version 1 or has no such (non-empty) array. */
const char *cm_gpu_devices_text(const cm_gpu *g, size_t *n);

/* ---- cutting (--clip, --steps, --range): gpucut.c ---- */
/* How the window's events are cut to a span of the CPU trace: not at all
 * (the default, the reference's output), API calls that start in it
 * (--clip), or API calls that overlap it (--steps, --range).  GPU work and
 * syncs go with the API call of their correlation; those whose call the
 * window lacks, and overhead records, are kept when they overlap it. */
enum cm_gpu_cut { CM_CUT_NONE, CM_CUT_START, CM_CUT_OVERLAP };
/* Before the window is read: cut by MODE (the digest then keeps each API
 * call's correlation and times aside, in a temporary file). */
void cm_gpu_set_cut(cm_gpu *g, enum cm_gpu_cut mode);
/* After cm_gpu_resolve (the base time is known), before the plan: the span
 * [LO, HI] (trace us) to cut to; decides which correlations are kept.  0,
 * or -1 after a report. */
int cm_gpu_cut_span(cm_gpu *g, double lo, double hi);
/* After the plan: the extent of the window's drawn events before the cut
 * (cm_gpu_extent's when not cutting), for the check that the inputs
 * overlap in time. */
void cm_gpu_extent_uncut(const cm_gpu *g, double *min_ts, double *max_end);

/* ---- --split in a merge: gpusplit.c (the deal), gpugroups.c (the plans),
 * gpusplitout.c (a group selected, the render) ---- */
/* Instead of cm_gpu_cut_span, with cm_gpu_set_cut(CM_CUT_OVERLAP) before
 * the window was read: deal the records to N (at most 64) groups, group K
 * keeping what --steps would with the range [LO[K], HI[K]) (trace us,
 * sorted by LO; the arrays must outlive G), on JOBS threads.  Also notes the extent of the
 * records drawn uncut (cm_gpu_extent_uncut) and reports the errors the
 * plan finds in records whatever the cut.  0, or -1 after a report. */
int cm_gpu_split(cm_gpu *g, const double *lo, const double *hi, size_t n, int jobs);
/* Plan every group, what cm_gpu_plan does for a cut to its range, on JOBS
 * threads (the groups side by side, each over its own records into its
 * own tables).  0, or -1 after a report (the lowest failing group's). */
int cm_gpu_split_plan(cm_gpu *g, int jobs);
/* Make group K's records and plan G's own (K -1: G's again), once
 * planned: cm_gpu_extent, cm_gpu_write_metadata, cm_gpu_write_events and
 * cm_gpu_write_spans then do for group K what they do for a cut to its
 * range.  0, or -1 after a report. */
int cm_gpu_split_select(cm_gpu *g, int k);
/* Group K's context for the thread-id remap (cm_gpu_set_tid_remap's FN;
 * -t: each file has its own repair stage, with its own rows to name). */
void cm_gpu_split_set_remap_ctx(cm_gpu *g, int k, void *ctx);
/* Once every group is planned: G's figures for crosscheck.c (the API
 * processes of all groups, the X events and those outside the CPU span);
 * selects none. */
void cm_gpu_split_totals(cm_gpu *g);
/* Once planned, without a thread-id remap: cm_gpu_write_events of every
 * group, group K's to EOS[K], in one walk over all their records (on JOBS
 * threads: a walk a group started and drained the threads 60 times); with
 * Q, through its writer threads (io/outq.h: output K is EOS[K]'s).
 * Selects none.  0, or -1 after a report. */
int cm_gpu_split_write_events(cm_gpu *g, cm_evout *eos, cm_outq *q, int jobs);
/* Once planned, without a thread-id remap, after the window's events:
 * cm_gpu_write_spans of every group, group K's to EOS[K], then TAIL(CTX,
 * K, &EOS[K]) (the rest of its file: 0, or -1 after a report), the groups
 * side by side on JOBS threads, each group on one (one after another, on
 * one thread, 60 groups' spans were 0.06-0.09 s of the 200 MB pair's
 * split on 2 CPUs; the plain merge's spans are on -j threads).  TAIL runs
 * on those threads, for different K at once.  Selects none.  0, or -1
 * after a report (the lowest failing group's). */
int cm_gpu_split_write_spans(cm_gpu *g, cm_evout *eos, int jobs, int (*tail)(void *ctx, size_t k, cm_evout *eo),
			     void *ctx);
/* Where the split's plan went (-v): wall seconds and CPU seconds of the
 * process (all threads) of the API calls' groups (the table made before
 * the deal), of the deal, and of the groups' plans; and the wall seconds
 * the deal's fold (the one thread that takes the blocks in order) ran. */
struct cm_gpu_split_stats {
	double marks, marks_cpu, deal, deal_cpu, fold, groups, groups_cpu;
};
void cm_gpu_split_stats(const cm_gpu *g, struct cm_gpu_split_stats *st);

/* ---- plan: over the records ---- */
/* Read the records: check what needs the resolved tables (thread lookups
 * in the window's map; the deferred error of an overhead record), note the
 * rows they open (devices, streams, processes, threads), the time extent
 * and the annotation spans, on JOBS threads (one with a repair stage).
 * 0, or -1 after a report. */
int cm_gpu_plan(cm_gpu *g, int jobs);
/* Close the plan: the gpu_user_annotation spans join the extent (called by
 * cm_gpu_plan). */
void cm_gpu_plan_finish(cm_gpu *g);
/* Smallest ts and largest ts+dur of the X events the output will hold (min
 * is +inf when there are none), by Python's min()/max() rules. */
void cm_gpu_extent(const cm_gpu *g, double *min_ts, double *max_end);
/* Before the plan: the CPU trace's span [MIN_TS, MAX_END] (trace us), for
 * cm_gpu_overlap.  Without it the plan counts nothing. */
void cm_gpu_set_cpu_span(cm_gpu *g, double min_ts, double max_end);
/* After the plan: how many X events the output will hold, and how many of
 * them lie wholly outside the CPU span. */
void cm_gpu_overlap(const cm_gpu *g, uint64_t *events, uint64_t *outside);
/* After the plan: the process ids of the API rows (int64 keys; values are
 * internal).  Owned by G. */
const cm_hmap *cm_gpu_processes(const cm_gpu *g);

/* The CPU trace's metadata rows (cm_cpuplan.meta: (CM_META_*, pid, tid)
 * keys; OVERFLOW: the set is incomplete) and its program's name (PROG,
 * LEN bytes; NULL: none), for a window of version 2, whose metadata
 * follows stock Kineto's (cm_gpu_write_metadata).  They must outlive the
 * output. */
void cm_gpu_set_cpu_meta(cm_gpu *g, const cm_hmap *meta, const char *prog, size_t len);

/* ---- output ---- */
/* The metadata events (process/thread names, labels, sort indexes): the
 * reference's for a window of version 1; for version 2 as stock Kineto
 * writes them: no row the CPU trace already names (one process_name a
 * pid), processes named after the program, no names for API threads (the
 * CPU trace names the threads of its operators) nor for the overhead
 * rows. */
int cm_gpu_write_metadata(const cm_gpu *g, cm_evout *eo);
/* The window's events, from the records, in window order: written by JOBS
 * worker threads (one with a repair stage, which counts what it moves).
 * 0, or -1 after a report. */
int cm_gpu_write_events(const cm_gpu *g, cm_evout *eo, int jobs);
/* cm_gpu_write_events for an encoder of the events other than text (the
 * .pftrace's, from src/): the records whose window index / SPAN (0: a
 * default) is the same form a group, and each group's events (their text
 * as cm_gpu_write_events writes it) go to the encoder in one batch.  The
 * worker that renders a group hands it to the encoder as it renders it,
 * with its own ECTX[i] (one for each of JOBS): OPEN, then ELEMENT for
 * each element, its text TEXT[0..N) (no comma in front) and, with
 * MEMBERS set, its value V as cm_jval_parse_py would make it of the text
 * (V NULL: the encoder parses the text; valid until the call returns,
 * numbers' has_iv as pftrace/pfevent.h's CM_PF_IV_* say; with LEAN too,
 * an element given with V has no whole text: what V holds whole, the
 * numbers it keeps the value of, its literals, a name from the render's
 * tables (V's string then pointing there), is left out of it,
 * gpu/gpumembers.h's lean mode), then CLOSE,
 * each appending to OUT (its length a multiple of 8 at OPEN); ENCODED(SCTX)
 * takes each group's bytes, in order.  A group without events is not
 * seen.  The groups do not depend on JOBS, nor on how the window was
 * read.  0, or -1 after a report (or a callback's failure). */
typedef struct cm_gpu_groups {
	uint64_t span;
	int members, lean;
	int (*open)(void *ectx, cm_buf *out);
	int (*element)(void *ectx, const cm_jval *v, const char *text, size_t n, cm_buf *out);
	int (*close)(void *ectx, cm_buf *out);
	void **ectx;
	int (*encoded)(void *sctx, const void *p, size_t n);
	/* optional: before the ENCODED calls of a worker's output OUT, which
	 * holds the next NGROUPS groups, ADOPT(SCTX) may take OUT's bytes
	 * (swapping a buffer of its own in): ENCODED's pointers are then into
	 * them, and the taker frees them */
	void (*adopt)(void *sctx, cm_buf *out, size_t ngroups);
	/* optional: a worker's groups come in pieces (a few blocks of
	 * records), numbered 0, 1, ... in window order; BEGIN(ECTX[i], PIECE)
	 * before a piece's groups and END(ECTX[i], OUT) after them (with OUT
	 * as CLOSE left it), for every piece, one with no group too.  A
	 * failure of END stops the run as CLOSE's. */
	void (*begin)(void *ectx, uint64_t piece);
	int (*end)(void *ectx, cm_buf *out);
	void *sctx;
	/* optional: with SPANS_DONE (below), SPANS(SCTX, PIECE) once the
	 * spans' first piece's number is known, before any of it is rendered
	 * (the .pftrace's lanes keep no slice from there on: mergepft.c) */
	void (*spans)(void *sctx, uint64_t piece);
} cm_gpu_groups;
/* With SPANS_DONE (not NULL), cm_gpu_write_span_groups's pieces too, after
 * the window's in the same pool, numbered on from them, so that they are
 * made while the window's last are (*SPANS_DONE 1), or not at all when
 * the window's records are one block in memory (0: the caller writes them,
 * cm_gpu_write_span_groups). */
int cm_gpu_write_groups(const cm_gpu *g, int jobs, const cm_gpu_groups *gr, int *spans_done);
/* The gpu_user_annotation spans, sorted by (External id, device, stream),
 * then those of the CPU trace's annotations (a window of version 2),
 * written by JOBS worker threads.  0, or -1 after a report. */
int cm_gpu_write_spans(const cm_gpu *g, cm_evout *eo, int jobs);
/* cm_gpu_write_spans for an encoder of the events other than text, as
 * cm_gpu_write_groups (GR's SPAN, LEAN and ADOPT aside, all alike): the
 * spans in groups of their own, each a slice of the spans' tables (or
 * part of one), rendered and handed to the encoder by JOBS threads; with
 * BEGIN and END, the slices are pieces numbered from 0 again.  The
 * groups depend on the tables alone.  0, or -1 after a report (or a
 * callback's failure). */
int cm_gpu_write_span_groups(const cm_gpu *g, int jobs, const cm_gpu_groups *gr);
/* A block of that work is the spans of about N annotations (default 512,
 * at least 1); for the tests, which cut small ones into many blocks. */
void cm_gpu_set_span_slice(uint64_t n);

/* A thread-id remap (the repair stage's, -t): the row that an API record on
 * (PID, TID), which no rule of the window resolved (its int32 id stayed),
 * moves to at ABS_NS: 1 and *OUT, or 0 when it stays.  COUNT: count it as
 * moved (the render's call; the plan asks about the same record first).
 * The GPU stage takes it as a callback, not the stage itself, which stands
 * above it (repair/repair.h). */
typedef int (*cm_gpu_tid_remap)(void *ctx, int64_t pid, int64_t tid, double abs_ns, int count, int64_t *out);
/* Before the plan: remap with FN(CTX, ...); the plan and the render then
 * run on one thread, in window order, as FN counts what it moves. */
void cm_gpu_set_tid_remap(cm_gpu *g, cm_gpu_tid_remap fn, void *ctx);
/* A note of each API call (the merge's .pftrace lanes: src/mergepft.c):
 * PID and TID as the render writes them (the thread after the rules, as
 * exported), its begin and duration in ns from the trace's zero (start
 * less the base time; the render's "ts" and "dur").  Called by the plan's
 * threads, several at once, for every API record with a thread (a record
 * the render leaves out too), not with a remap. */
typedef void (*cm_gpu_call_note)(void *ctx, cm_int pid, cm_int tid, cm_int ts_ns, cm_int dur_ns);
/* Before the plan: FN(CTX, ...) for each API call as it is planned. */
void cm_gpu_set_call_note(cm_gpu *g, cm_gpu_call_note fn, void *ctx);
/* The window's API records (after phase 1: a size for what notes them). */
uint64_t cm_gpu_api_count(const cm_gpu *g);
/* A note of a gpu_user_annotation span: PID and TID as the render
 * writes them (the device, the stream exported), its "ts" and "dur" as
 * the doubles the render writes (gpurules.c's gpu_span_text). */
typedef void (*cm_gpu_span_note)(void *ctx, cm_int pid, cm_int tid, double ts, double dur);
/* After the plan: FN(CTX, ...) for each span cm_gpu_write_spans (or the
 * groups' render) will write, on THREADS threads at once (this one among
 * them), in no order: FN must take calls from several threads.  0, or -1
 * after a report. */
int cm_gpu_each_span(const cm_gpu *g, cm_gpu_span_note fn, void *ctx, int threads);
/* After the plan: FN(CTX, pid, tid) for each thread row that the GPU
 * metadata names (none for a window of version 2, whose metadata names no
 * API thread). */
void cm_gpu_each_named_thread(const cm_gpu *g, void (*fn)(void *ctx, int64_t pid, int64_t tid), void *ctx);

/* Figures for the summary: window events, kept API records, etc. */
struct cm_gpu_stats {
	uint64_t events, linked_ext, linked_corr, api_rows, x_events;
	uint64_t pairs;       /* external correlations spilled in phase 1 */
	uint64_t index_bytes; /* the External id index at its largest */
	uint64_t table_bytes; /* correlation links, rows, spans, maps after phase 2 */
	int dense_tables;     /* the correlation links are an array (idmap.h) */
};
void cm_gpu_stats(const cm_gpu *g, struct cm_gpu_stats *st);

#endif
