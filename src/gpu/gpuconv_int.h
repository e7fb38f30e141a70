/* gpuconv_int.h - what the files of the GPU stage share: the state of the
 * window's three phases (struct cm_gpu, in the parts each phase owns), the
 * field readers with Python's int() rules (gpufield.c), and the rules the
 * plan and the render both apply (gpurules.c).  Internal to src/gpu/gpu*.c;
 * gpuconv.c draws how those files call each other. */
#ifndef CM_GPUCONV_INT_H
#define CM_GPUCONV_INT_H

#include <stdio.h>

#include "gpu/gpuconv.h"
#include "base/idmap.h"
#include "base/ids.h"
#include "gpu/gpuargs.h"
#include "gpu/tidrule.h"
#include "gpu/gpurec.h"
#include "gpu/gpunames.h"
#include "gpu/kineto.h"
#include "gpu/opindex.h"
#include "base/opool.h"

/* An external correlation of the window: correlation id CORR tied to
 * External id EXT (a CPU operator's, or a user annotation's).  Spilled as
 * 17-byte records, the kind byte below last (gpujoin.c). */
struct gpu_ext_corr {
	int64_t corr, ext;
	int user; /* external_kind == CUSTOM1 (4): a user annotation */
};
/* The kind byte of a spilled pair record. */
#define PAIR_USER 1    /* external_kind CUSTOM1 (4): a user annotation */
#define PAIR_CUSTOM0 2 /* external_kind CUSTOM0 (3): a CPU operator's External id */

/* A user annotation's name: LEN bytes at OFF in cm_gpu.ua_file (LEN -1:
 * the value is not a string, so the annotation has no span). */
struct ua_ref {
	int64_t off;
	int32_t len;
};

/* A correlation's CPU thread, as an index into cm_gpu.cpu_threads (the CPU
 * scan's list of threads, which the External-id index numbers): a run has
 * millions of linked correlations but few threads. */
struct gpu_corr_thread { uint32_t thread; }; /* index + 1 (0: none) */
/* Values kept in hash maps, whose slots are 8-aligned: 128-bit fields with
 * 8-byte alignment (GCC lets a typedef lower alignment). */
typedef cm_int cm_int_a8 __attribute__((aligned(8)));
struct first_ts { cm_int_a8 ns; };
struct gpu_ann_span { cm_int_a8 start, end; };
/* Where the CUDA event an event sync waits on was last recorded: the stream
 * and the correlation id of the cudaEventRecord (as Kineto's int32s). */
struct wait_info { int32_t stream, corr; };
/* The spans of one user annotation: the first device and stream its
 * activity ran on here, any others in cm_gpu.spans_more. */
struct gpu_ann_span_slot {
	int64_t dev, stream;
	cm_int_a8 start, end;
};

/* CUpti_ExternalCorrelationKind CUSTOM1: the monitor's user annotations;
 * CUSTOM0: PyTorch's operators (Kineto's "External id"). */
#define USER_EXTERNAL_KIND 4
#define CPU_EXTERNAL_KIND 3
/* Overhead rows live in a process of their own, sorted after the others. */
#define OVERHEAD_PID (-1)
#define OVERHEAD_SORT_INDEX 0x1000000
/* GPU processes sort after CPU ones: Kineto's 5000000 + device. */
#define GPU_SORT_BASE 5000000

/* The state of the window's conversion, in the parts each phase owns.  A
 * part is written by its owner, in its phase, and only read after it; the
 * files that come later see the object as const (the render, the rows, the
 * rules), so the plan and the links are read-only once made.  The owners:
 * win gpudigest.c, gpuscan.c, gpujoin.c; cpu gpuconv.c (the setters); ann
 * gpuanns.c; link gpujoin.c, gpuscan.c, gpuplan.c (cext); plan gpuplan.c,
 * gpurules.c (gpu_extent); gpuconv.c makes and frees them all
 * (tests/e2e/gpucalls.sh checks it). */

/* What reading the window gathers: the digest's (gpudigest.c) and the
 * scan's (gpuscan.c: the maps; gpujoin.c: the pairs).  Read-only from
 * cm_gpu_digest_finish on, but for the pairs, which the joins consume. */
/* The ranges of the ids in one chunk of the pairs file (GPU_PAIR_CHUNK
 * pairs): a walk by ranges of a key reads only the chunks that hold its
 * keys (gpujoin.c). */
#define GPU_PAIR_CHUNK 8192
struct gpu_pair_chunk {
	int64_t ext_lo, ext_hi, corr_lo, corr_hi;
};

struct gpu_window {
	FILE *pairs;     /* (correlation, ext id, kind) records, spilled to $TMPDIR */
	uint64_t npairs;
	int64_t ext_lo, ext_hi, corr_lo, corr_hi; /* the ranges of the pairs' ids */
	struct gpu_pair_chunk *chunks; /* ... and of each chunk's (gpujoin.c) */
	size_t nchunks, chunks_cap;
	cm_int max_end;  /* end of the last non-overhead activity */
	int ua_dict;     /* user_annotations is an object */
	FILE *ua_file;   /* user_annotations as read: (ext, len, name bytes) records */
	uint64_t ua_count;
	cm_idkeys *ua_keys; /* their ids (the annotation and span tables are over them) */
	int64_t ua_lo, ua_hi;
	cm_tidmap *tidmap;      /* "thread_resource_map" */
	cm_kin_devices wprops;  /* the window's "device_properties" */
	cm_buf wprops_text;     /* ... as JSON text, when it is an array */
	cm_hmap *act_streams;   /* (device, stream) of every kernel, copy and set */
	int64_t api_lo, api_hi; /* the range of the API records' correlation ids */
	uint64_t api_n;         /* ... and their number */
	unsigned idsigns[CM_IDS_N]; /* the signs of the window's ids of each kind (base/ids.h) */
	cm_gpu_digest *dg; /* digesting on the reading thread (the careful reader) */
	cm_buf dgout;      /* its output, collected after each event */
	/* the records of the window's events (gpurec.h) */
	cm_buf block;      /* the block being filled (all of them, when small) */
	FILE *recs;        /* the full blocks, in an unlinked temporary file */
	uint64_t block_last1; /* 1 + the window index of block's last record, 0 none */
	cm_buf lasts;      /* ... of each block of recs, in its order (uint64s): the walk in
			    * groups knows the groups its pieces end in without reading them */
	uint64_t nrecs;
	/* --split: the records of the group selected, as runs of these
	 * (gpusplit.c), which the walks read instead of all; or NULL */
	const struct gpu_runs *runs;
	cm_gpunames *names; /* the records' names, each once (gpunames.h) */
	uint64_t block_names; /* the bytes of the block's records' names kept there */
};

/* --split: a group's records, runs of the window's own in window order:
 * LEN bytes of whole records at OFF in the records' file (or in its one
 * block, when the window was small). */
struct gpu_run {
	int64_t off;
	uint32_t len;
	uint32_t last; /* the last of a group's: the walk's piece ends after it */
};
struct gpu_runs {
	struct gpu_run *v;
	size_t n, cap;
	size_t piece; /* the records' bytes of a walk's piece (0: CM_GPU_BLOCK; gpusplit.c's deal) */
};

/* What the CPU trace tells the window's conversion (mergeprepare.c's setters),
 * before the plan. */
struct gpu_cpu_side {
	cm_opindex *ops;        /* version >= 2: the operators, for External ids */
	const cm_kin_devices *cprops; /* "deviceProperties" (or NULL) */
	const cm_hmap *cmeta;   /* the metadata rows (cm_gpu_set_cpu_meta), or NULL */
	const char *prog;       /* its program's name, or NULL */
	size_t prog_len;
	int have_cpu_span;      /* cm_gpu_set_cpu_span was called */
	double cpu_min_ts, cpu_max_end;
};

/* Version >= 2: the CPU trace's user annotations, for Kineto's spans of
 * them (gpuanns.c's): the index of their numbers, their table (struct
 * ann_rec) and names, in temporary files and then mapped; the plan fills
 * cua and the spans. */
struct gpu_cpu_anns {
	cm_opindex *anns;
	FILE *ann_tab, *ann_text;
	uint64_t nanns, ann_text_len;
	const struct ann_rec *ann_map;
	const char *ann_text_map;
	cm_pages *ann_map_pages, *ann_text_pages;
	cm_idmap *cua;          /* correlation -> number + 1 of the annotation its call was made in */
	cm_idmap *cspans;       /* annotation number -> struct gpu_ann_span_slot */
	cm_hmap *cspans_more;   /* (number, device, stream) -> struct gpu_ann_span, beyond the first */
};

/* What the joins build (gpujoin.c, cm_gpu_resolve) from the window's pairs
 * and the CPU trace's index: what a correlation links to.  Read-only after
 * cm_gpu_resolve, but for cext, where the plan of a window of version 2
 * adds the operators of the calls no CUSTOM0 record names. */
struct gpu_links {
	cm_idmap *ext;    /* ext id -> struct cm_ext_thread (until resolved) */
	const struct cm_ext_pt *ext_threads; /* the threads those entries number */
	cm_idmap *linked; /* correlation -> struct gpu_corr_thread */
	cm_ext_threads cpu_threads; /* the distinct linked threads */
	cm_idmap *uext;   /* correlation -> user annotation ext id */
	cm_idmap *cext;   /* version >= 2: correlation -> the External id of its CPU op (0: none) */
	cm_idmap *ua;     /* user annotation ext id -> struct ua_ref */
	const char *ua_map; /* the window's ua_file mapped (the names are read there) */
	size_t ua_map_size;
	cm_pages *ua_pages; /* its pages, watched against the budget */
};

/* What the plan learns from the records (gpuplan.c's): the rows, the
 * spans, the extent.  Read-only once planned: the metadata, the render
 * and the spans' output read it through a const cm_gpu. */
struct gpu_plan {
	cm_hmap *devices, *streams, *procs, *threads;
	cm_hmap *device_rows; /* devices with a sync on no stream: Kineto's row "Device N" (tid 1) */
	cm_idmap *spans;      /* ext id -> struct gpu_ann_span_slot */
	cm_hmap *spans_more;  /* (ext id, device, stream) -> struct gpu_ann_span, beyond the first */
	cm_hmap *evmap;       /* version >= 2, while planning: (context, CUDA event) -> struct wait_info */
	cm_hmap *waits;       /* version >= 2: record index of an event sync -> struct wait_info */
	int need_overhead;
	double min_ts, max_end_ts;
	uint64_t x_events, x_outside;  /* X events, and those outside the CPU span */
	double cut_min_ts, cut_max_end; /* the extent of the drawn records before the cut */
	int ops_noted; /* --split: the API calls' operators and annotations were noted as the
			* records were dealt (gpusplit.c); the groups' plans leave them */
};

struct cm_gpu {
	/* the settings, and what every phase reads */
	const char *wname;
	int join_threads; /* threads for the walks of the pairs (gpujoin.c) */
	cm_gpu_tid_remap remap; /* the repair stage's (-t), or NULL */
	void *remap_ctx;
	cm_gpu_call_note call_note; /* cm_gpu_set_call_note's, or NULL */
	void *call_ctx;
	int version;     /* "window_version" (1 when absent): the scan's */
	cm_int base_ns;  /* the CPU trace's base time: known at cm_gpu_resolve */
	struct gpu_window win;
	struct gpu_cpu_side cpu;
	struct gpu_cpu_anns ann;
	struct gpu_links link;
	struct gpu_plan plan;
	/* cutting (gpucut.c's) */
	int cut;           /* enum cm_gpu_cut */
	FILE *cut_apis;    /* the API calls' (correlation, start, end) as read, 24 bytes each */
	uint64_t cut_napis;
	cm_idmap *cut_keep; /* correlation of an API call -> 1: kept, 2: cut */
	double cut_lo, cut_hi; /* the span, trace us */
	struct gpu_split *split; /* --split: the groups' records and plans (gpusplit.c), or NULL */
	struct cm_gpu_stats st; /* figures, each phase adding its own */
};

/* Bytes of records per block: the unit of work of the output stage. */
#define CM_GPU_BLOCK (256u << 10)

/* The members of a window event that the digest reads, each looked up
 * once an event (gpudigest.c, field_table): a dozen lookups an event, each
 * a walk of the members, were a third of the digest's instructions. */
#define CM_WINDOW_FIELDS(X)                                                                                     \
	X(KIND, "kind") X(CBID, "cbid") X(PROCESS_ID, "process_id") X(CORRELATION_ID, "correlation_id")         \
	X(THREAD_ID, "thread_id") X(START_NS, "start_ns") X(END_NS, "end_ns") X(DEVICE_ID, "device_id")         \
	X(STREAM_ID, "stream_id") X(CONTEXT_ID, "context_id") X(NAME, "name") X(GRAPH_ID, "graph_id")           \
	X(GRAPH_NODE_ID, "graph_node_id") X(BYTES, "bytes") X(COPY_KIND, "copy_kind") X(SRC_KIND, "src_kind")   \
	X(DST_KIND, "dst_kind") X(FLAGS, "flags") X(VALUE, "value") X(MEMORY_KIND, "memory_kind")               \
	X(ANNOTATION, "annotation") X(GRID_X, "grid_x") X(GRID_Y, "grid_y") X(GRID_Z, "grid_z")                 \
	X(BLOCK_X, "block_x") X(BLOCK_Y, "block_y") X(BLOCK_Z, "block_z")                                       \
	X(REGISTERS, "registers_per_thread") X(STATIC_SMEM, "static_shared_memory")                             \
	X(DYNAMIC_SMEM, "dynamic_shared_memory") X(QUEUED_NS, "queued_ns") X(EXTERNAL_ID, "external_id")        \
	X(EXTERNAL_KIND, "external_kind") X(SYNC_TYPE, "sync_type") X(CUDA_EVENT_ID, "cuda_event_id")           \
	X(EVENT_ID, "event_id")
#define CM_WF_ENUM(id, name) WF_##id,
enum { CM_WINDOW_FIELDS(CM_WF_ENUM) WF_N };
#undef CM_WF_ENUM

/* Digesting events (on a worker thread, or the reading thread): its own
 * scratch space and outputs; of cm_gpu only the name is read. */
struct cm_gpu_digest {
	cm_gpu *g;
	const cm_jval *f[WF_N]; /* the event's members that are fields (the last of a key), or NULL */
	cm_buf text, dumps;  /* a name's text; a packed annotation or deferred error */
	const char *name;    /* the record's name when it is a string of the event's (else text) */
	size_t nlen;
	cm_buf pairs;        /* the batch's external correlations, 17 bytes each */
	cm_buf astreams;     /* the batch's activity (device, stream) pairs, 16 bytes each */
	cm_buf apis;         /* when cutting: the batch's API calls (gpucut.c), 24 bytes each */
	int64_t last_as[2];  /* the last pair put there */
	int have_last_as;
	cm_int max_end;      /* end of the batch's last non-overhead activity */
	uint64_t events;
	int64_t api_lo, api_hi; /* the batch's API correlation ids: range, count */
	uint64_t api_n;
	unsigned idsigns[CM_IDS_N]; /* the signs of the batch's ids (base/ids.h) */
	cm_gpunames_cache *ncache; /* this thread's entries of g->win.names */
	uint64_t name_bytes;       /* the batch's names kept in the table: their bytes */
	uint64_t last1;            /* 1 + the window index of the batch's last record, 0 none */
	struct {                   /* whether an API cbid is kept, by (cbid, driver) */
		int64_t cbid;
		signed char driver, registered; /* driver -1: empty */
	} api_kept[64];
};

/* Where the event being handled is, for messages. */
struct gpu_event_at {
	cm_gpu *g;
	struct cm_gpu_digest *d;
	uint64_t index;
	int64_t offset;
	const cm_jval *ev;
	const cm_jval *const *f; /* its fields: d->f */
};

/* The pass-1 part of digesting one event: external correlations, the end of
 * the last activity (gpujoin.c).  0, or -1 after a report. */
int gpu_scan_event(struct cm_gpu_digest *d, const struct gpu_event_at *a);
/* Add N bytes of pair records (gpu_scan_event's) to G's pairs and to the
 * External ids the CPU scan looks for.  0, or -1 after a report. */
int gpu_collect_pairs(cm_gpu *g, const char *p, size_t n);
/* The CPU trace's user annotations (gpuanns.c).  Once all are added:
 * index them and map their table.  0, or -1 after a report. */
int gpu_anns_build(cm_gpu *g);
/* Before the plan, when there are annotations: the correlation table, over
 * the ids [LO, HI] (COUNT of them), and the spans'.  0, or -1. */
int gpu_anns_tables(cm_gpu *g, int64_t lo, int64_t hi, uint64_t count);
/* An API call of correlation CORR made on (PID, TID) over [TS, END] (trace
 * us): 1 and *K, the number of the annotation it was made in, unless a
 * CUSTOM1 record names one of the window's; else 0.  Reads only (several
 * threads may ask at once); gpu_anns_note then records it. */
int gpu_anns_find(const cm_gpu *g, int64_t corr, int64_t pid, int64_t tid, double ts, double end, int64_t *k);
void gpu_anns_note(cm_gpu *g, int64_t corr, int64_t k);
/* After the plan: the spans of the GPU work of those correlations, and
 * their extent.  0, or -1. */
int gpu_anns_spans(cm_gpu *g);
/* Their spans' walk (gpu_spans_block's blocks after the window's own):
 * the sorted keys of cspans_more (*N; the caller frees them; NULL when no
 * span) and *SLICES, the slices of the table of about PER annotations
 * (0: no span); the spans of slice SLICE put to O, each as
 * gpu_span_put does.  0, or gpu_span_put's failure. */
int64_t *gpu_anns_more(const cm_gpu *g, size_t *n, int *slices, uint64_t per);
struct gpu_span_out;
int gpu_anns_slice(const cm_gpu *g, const int64_t *more, size_t n, int slice, int slices, struct gpu_span_out *o);
/* Free all of it (cm_gpu_free). */
void gpu_anns_free(cm_gpu *g);

/* The name of user annotation EXT: its bytes (in the mapped ua_file, valid
 * until gpu_ua_unmap; safe from several threads) and *LEN, or NULL when it
 * has none (not in the map, or not a string). */
const char *gpu_ua_name(const cm_gpu *g, int64_t ext, size_t *len);

/* Unmap ua_file (cm_gpu_free does). */
void gpu_ua_unmap(cm_gpu *g);
/* When resolving: the user annotations into an id table (g->link.ua), each
 * entry pointing at its name's bytes in the mapped file (gpuscan.c).  0, or
 * -1 after a report. */
int gpu_ua_build(cm_gpu *g);

/* Report a problem with events[INDEX] (OFFSET: just past the event); -1. */
int gpu_ev_error(const cm_gpu *g, uint64_t index, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Python's _as_int(V) (V NULL: a missing key read with .get(key, 0)). */
int gpu_as_int(const struct gpu_event_at *a, const char *key, const cm_jval *v, cm_int *out);
/* The name of field F (WF_...). */
extern const char *const cm_wf_name[WF_N];
/* _as_int(event[F]) when REQUIRED (missing: an error), else .get(F, 0):
 * gpu_int_field, whose common case is inline: a number the builder read
 * (cm_jval.iv, an int64, within every time's range), a call a field
 * otherwise.  0, or -1 after a report. */
int gpu_int_field_any(const struct gpu_event_at *a, int f, int required, cm_int *out);
static inline int gpu_int_field(const struct gpu_event_at *a, int f, int required, cm_int *out)
{
	const cm_jval *v = a->f[f];
	if (v && v->type == CM_J_NUM && v->has_iv) {
		*out = v->iv;
		return 0;
	}
	return gpu_int_field_any(a, f, required, out);
}
static inline int gpu_time_ok(cm_int t) { return cm_gpu_time_ok(t); }
/* Whether field F is a time the merge subtracts from another. */
static inline int gpu_is_time(int f) { return f == WF_START_NS || f == WF_END_NS; }
/* The message for a time beyond the range (CM_TIME_LIMIT). */
#define GPU_TIME_RANGE_MSG "\"%s\" lies 2^126 ns or more from 0, beyond the times cuptimerge takes"
/* Narrow V to 64 bits for a table key; -1 after a report. */
int gpu_to_i64(const struct gpu_event_at *a, const char *key, cm_int v, int64_t *out);
/* The table key of id V of kind KIND (CM_IDS_..., base/ids.h), its signs
 * noted in the digest's; -1 after a report (V needs more than 64 bits). */
int gpu_to_id(const struct gpu_event_at *a, const char *key, int kind, cm_int v, int64_t *out);
/* The event's field F, which must exist (NULL after a report). */
const cm_jval *gpu_need(const struct gpu_event_at *a, int f);
/* Note an X event's extent, by Python's min()/max(), into the plan. */
void gpu_extent(cm_gpu *g, double ts, double dur);
/* The rule of gpu_extent, into the fields given: the plan's, or a plan
 * block's (gpuplan.c), which are folded into the plan's in window order.
 * *MIN_TS, *MAX_END take Python's min(min_ts, ts) and max(max_end, ts +
 * max(dur, 0)); when the CPU trace's span is known, *X_EVENTS counts the X
 * event and *X_OUTSIDE whether it lies outside that span.  Inline: the plan
 * notes every record it draws. */
static inline void gpu_extent_into(const cm_gpu *g, double *min_ts, double *max_end, uint64_t *x_events,
				   uint64_t *x_outside, double ts, double dur)
{
	*min_ts = cm_py_min(*min_ts, ts);
	*max_end = cm_py_max(*max_end, ts + cm_py_max(dur, 0.0));
	if (g->cpu.have_cpu_span) {
		(*x_events)++;
		*x_outside += ts + cm_py_max(dur, 0.0) < g->cpu.cpu_min_ts || ts > g->cpu.cpu_max_end;
	}
}
/* The ts and dur of a gpu_user_annotation span: 1 ns wider on each side,
 * as Kineto draws them. */
void gpu_span_times(const cm_gpu *g, const struct gpu_ann_span *sp, double *ts, double *dur);

/* ---- the gpu_user_annotation spans' output (gpurows.c): the window's
 * own, then the CPU trace's annotations' (gpuanns.c), in blocks: the
 * JSON's text (cm_gpu_write_spans) or an encoder's batches
 * (gpuencspans.c, cm_gpu_write_span_groups). */
/* Where a walk of the spans puts each: with ENC NULL, its text, a comma
 * in front, appended to TEXT; else ENC(ECTX, ...) takes it, with
 * gpu_span_put's arguments (gpuencspans.c's worker: 0, or its failure). */
struct gpu_span_out {
	cm_buf *text;
	int (*enc)(void *ectx, const char *name, size_t len, cm_int pid, cm_int tid, double ts, double dur, cm_int ext);
	void *ectx;
};
/* One span, {"ph":"X","cat":"gpu_user_annotation","name":NAME,"pid":PID,
 * "tid":TID (exported there),"ts":TS,"dur":DUR,"args":{"External id":EXT}},
 * NAME[0..LEN) its bytes, put to O (gpurules.c).  0, or ENC's failure. */
int gpu_span_put(struct gpu_span_out *o, const char *name, size_t len, cm_int pid, cm_int tid, double ts, double dur,
		 cm_int ext);
/* The spans' blocks, in order: the window's spans in SLICES slices of its
 * table (PASSES times: twice, the ids below 2^63 first, when some are at
 * or above), then the CPU trace's annotations' in CSLICES; N in all.  The
 * blocks depend on the tables alone (not on the thread count). */
struct gpu_spans_blocks {
	const cm_gpu *g;        /* (the caller's, for a pool's work) */
	int64_t *more, *cmore;  /* the sorted keys of spans_more and cspans_more */
	size_t nmore, ncmore;
	int passes, slices, cslices, n;
};
/* B for G, its slices of about PER annotations each. */
void gpu_spans_blocks(const cm_gpu *g, uint64_t per, struct gpu_spans_blocks *b);
/* Block I of B (0 <= I < B->n): its spans put to O, in order.  0, or
 * gpu_span_put's failure. */
int gpu_spans_block(const cm_gpu *g, const struct gpu_spans_blocks *b, int i, struct gpu_span_out *o);
void gpu_spans_blocks_free(struct gpu_spans_blocks *b);
/* Begin an X event: {"ph":"X","cat":CAT,"name":NAME,"pid":PID,"tid":TID */
void gpu_x_head(cm_buf *b, const char *cat, const char *name, size_t nlen, cm_int pid, cm_int tid);

/* What the plan and the render decide alike, so that the metadata written
 * before the CPU events agrees with the events written after them, and what
 * the digest shares with the render (gpuconv.c). */
/* The thread row of an API record (tidrule.h): the CPU thread its
 * correlation links to, else the window's map, else the int32 id itself
 * (*FELL set).  0, or -1 after a report (the render's lookup cannot fail:
 * the plan made the same one). */
int gpu_api_thread(const cm_gpu *g, const cm_gpurec *r, cm_int *tid, int *fell);
/* The name of an API record's callback id (FALLBACK: 64 bytes for "cbid_N"). */
const char *gpu_api_name(int driver, cm_int cbid, char *fallback);
/* An overhead record that the rule drops. */
int gpu_dropped(const cm_gpu *g, const cm_gpurec *r);
/* Kineto's sync type of a sync record: CUPTI's uint32 field. */
uint32_t gpu_sync_type(const cm_gpurec *r);
/* Whether a sync record (without a deferred error) is drawn: in a window of
 * version 2, every one but a "Stream Wait Event" on a stream where no
 * kernel, copy or set ran. */
int gpu_sync_drawn(const cm_gpu *g, const cm_gpurec *r);
/* Whether record R is drawn when nothing is cut: 1 with its times *START
 * and *END (ns), 0 not, -1 after reporting its deferred error (the thread
 * lookup of an API call is the caller's).  The plan's rule before the cut,
 * which --split's deal applies to every record. */
int gpu_drawn_span(const cm_gpu *g, const cm_gpurec *r, cm_int *start, cm_int *end);
/* Whether a record stays in the output when cutting (gpucut.c): 1 keep
 * (always when not cutting), 0 cut.  The plan and the render ask alike. */
int gpu_cut_keep(const cm_gpu *g, const cm_gpurec *r);
/* The digest's note of an API call for cutting (its correlation and span,
 * when they fit in 64 bits), into the batch's list. */
void gpu_cut_note_api(struct cm_gpu_digest *d, const cm_gpurec *r);
/* Add N bytes of those notes to G's file.  0, or -1 after a report. */
int gpu_cut_collect(cm_gpu *g, const char *p, size_t n);
/* Run FN over each block of records, in window order (the input of the
 * plan, the render and the annotation spans), on N workers of an ordered
 * pool (opool.h; WCTX: a context each), SINK(SCTX, output) taking their
 * outputs in that order.  0, or -1 (after a report). */
int gpu_walk_records(const cm_gpu *g, int n, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx);
/* The same in whole groups (cm_gpu_write_groups): FN is handed the
 * records of whole groups of SPAN window indexes, of the records' blocks
 * about PER at a time (a group that a piece of PER blocks ends in is
 * finished by that piece's worker, which reads on into the blocks after
 * it; the piece after it begins where that group ends), with the piece's
 * number PIECE (0, 1, ... in window order: every piece is handed over,
 * those without a group of their own too); the whole window at once, piece
 * 0, when it is one block in memory.  Not for --split's runs.  With X
 * (not NULL), X's N pieces more after the window's, in the same pool (so
 * that they are made while the window's last are, not after them): each
 * X's FN(WCTX, the worker's number, the walk's piece, K 0 to N - 1, OUT),
 * numbered on from the window's; *X's DONE 1 when they were, 0 when the
 * walk took none (the window in memory: the caller makes them). 0, or -1
 * (after a report). */
typedef int (*gpu_piece_fn)(void *wctx, uint64_t piece, const cm_buf *in, cm_buf *out);
typedef int (*gpu_extra_fn)(void *wctx, int worker, uint64_t piece, int k, cm_buf *out);
struct gpu_extra {
	int n;
	gpu_extra_fn fn;
	int *done;
	/* (optional) told the first extra piece's number, before it is fed */
	void (*start)(void *ctx, uint64_t piece);
	void *ctx;
};
int gpu_walk_groups(const cm_gpu *g, int n, int per, uint64_t span, gpu_piece_fn fn, const struct gpu_extra *x,
		    void **wctx, cm_opool_sink sink, void *sctx);
/* What a window of version 2 learns of an API call besides its row: the
 * operator it was made in (Kineto's External id, for a call no CUSTOM0
 * record names) and the CPU trace's annotation it was made in. */
struct gpu_op_note {
	int64_t corr, ext, ann;
	int has_ext, has_ann;
};
/* Of API record R: 1 and *N when it names an operator or an annotation
 * (gpuplan.c).  Reads only, so workers may ask at once; with CHECK, not
 * for a correlation whose operator is known already (which reads the
 * table gpu_api_operator_note writes).  Then the note into the tables
 * (link.cext, ann.cua), in window order: the first operator of a
 * correlation stands, its last annotation. */
int gpu_api_operator_find(const cm_gpu *g, const cm_gpurec *r, int check, struct gpu_op_note *n);
void gpu_api_operator_note(cm_gpu *g, const struct gpu_op_note *n);
/* The plan in pieces (gpuplan.c), for --split, which plans the groups as
 * it deals the records: a part notes what a run of records (in window
 * order) teaches the plan of G, a view of cm_gpu that is only read
 * (not cutting; a window of version 1, no remap: the notes are all that
 * is written); emitted, it is folded into the tables of a view in window
 * order, as cm_gpu_plan's workers' parts are; the span notes into SPANS
 * when not NULL, for gpu_plan_fold_spans once the spans' table is made;
 * gpu_plan_end then does what the plan does after its walk.  0, or -1
 * after a report. */
struct plan_part;
struct plan_part *gpu_plan_part_new(const cm_gpu *g);
void gpu_plan_part_reset(struct plan_part *pp);
int gpu_plan_part_record(struct plan_part *pp, const cm_gpurec *r);
void gpu_plan_part_emit(const struct plan_part *pp, cm_buf *out);
/* The extent of the drawn records a part has taken since its reset
 * (gpu_extent's: INFINITY, -INFINITY for none). */
void gpu_plan_part_extent(const struct plan_part *pp, double *min_ts, double *max_end);
void gpu_plan_part_free(struct plan_part *pp);
void gpu_plan_fold_part(cm_gpu *g, const char *at, size_t len, cm_buf *spans);
void gpu_plan_fold_spans(cm_gpu *g, const cm_buf *spans);
int gpu_plan_end(cm_gpu *g);
/* Free the groups of --split (cm_gpu_free does). */
void gpu_split_free(cm_gpu *g);
/* A pool's sink (SCTX: the cm_evout): rendered elements, each with a
 * comma in front, to the output in order. */
int gpu_write_rendered(void *sctx, cm_buf *out);
/* cm_gpu_write_events with SINK(SCTX) taking each piece's rendered
 * elements in window order (gpurender.c): --split's, which knows whose
 * file each piece goes to. */
int gpu_render_walk(const cm_gpu *g, int jobs, cm_opool_sink sink, void *sctx);

#endif
