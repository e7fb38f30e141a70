/* gpuconv_int.h - what the files of the GPU stage share: the state of the
 * window's three phases, the field readers with Python's int() rules, and
 * the rules the plan and the render both apply.  Internal to gpuconv.c,
 * gpudigest.c, gpuplan.c, gpurender.c, gpuscan.c, gpuargs.c and gpurows.c. */
#ifndef CM_GPUCONV_INT_H
#define CM_GPUCONV_INT_H

#include <stdio.h>

#include "gpu/gpuconv.h"
#include "base/idmap.h"
#include "base/ids.h"
#include "gpu/gpuargs.h"
#include "repair/repair.h"
#include "gpu/tidrule.h"
#include "gpu/gpurec.h"
#include "gpu/kineto.h"
#include "gpu/opindex.h"

struct pair {
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

/* A correlation's CPU thread, as an index into cm_gpu.cpu_threads: a run has
 * millions of linked correlations but few threads. */
struct linked { uint32_t thread; }; /* index + 1 (0: none) */
/* Values kept in hash maps, whose slots are 8-aligned: 128-bit fields with
 * 8-byte alignment (GCC lets a typedef lower alignment). */
typedef cm_int cm_int_a8 __attribute__((aligned(8)));
struct first_ts { cm_int_a8 ns; };
struct span { cm_int_a8 start, end; };
/* Where the CUDA event an event sync waits on was last recorded: the stream
 * and the correlation id of the cudaEventRecord (as Kineto's int32s). */
struct wait_info { int32_t stream, corr; };
/* The spans of one user annotation: the first device and stream its
 * activity ran on here, any others in cm_gpu.spans_more. */
struct span_slot {
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

struct cm_gpu {
	const char *wname;
	cm_int base_ns;
	/* phase 1 (W) */
	FILE *pairs;     /* (correlation, ext id, user) records, spilled to $TMPDIR */
	uint64_t npairs;
	cm_int max_end;  /* end of the last non-overhead activity */
	cm_idmap *ext;   /* ext id -> struct cm_ext_thread (made after the window) */
	int64_t ext_lo, ext_hi, corr_lo, corr_hi; /* the ranges of the pairs' ids */
	size_t budget;   /* memory for each id table (idmap.h) */
	int join_threads; /* threads for the walks of the pairs (gpuscan.c) */
	int ua_dict;     /* user_annotations is an object */
	FILE *ua_file;   /* user_annotations as read: (ext, len, name bytes) records */
	uint64_t ua_count;
	cm_idkeys *ua_keys; /* their ids (ua and spans are tables over them) */
	int64_t ua_lo, ua_hi;
	cm_idmap *ua;    /* ext id -> struct ua_ref (made when resolving) */
	const char *ua_map; /* ua_file mapped, once whole (the names are read there) */
	size_t ua_map_size;
	cm_pages *ua_pages; /* its pages, watched against the budget */
	cm_tidmap *tidmap;
	int version;            /* "window_version" (1 when absent) */
	cm_kin_devices wprops;  /* the window's "device_properties" */
	cm_buf wprops_text;     /* ... as JSON text, when it is an array */
	const cm_kin_devices *cprops; /* the CPU trace's "deviceProperties" (or NULL) */
	const cm_hmap *cmeta;   /* the CPU trace's metadata rows (cm_gpu_set_cpu_meta), or NULL */
	const char *prog;       /* its program's name, or NULL */
	size_t prog_len;
	cm_hmap *act_streams;   /* (device, stream) of every kernel, copy and set: the digest's */
	int64_t api_lo, api_hi; /* the range of the API records' correlation ids */
	uint64_t api_n;         /* ... and their number */
	cm_opindex *ops;        /* version >= 2: the CPU trace's operators, for External ids */
	/* version >= 2: the CPU trace's user annotations, for Kineto's spans
	 * of them (gpuanns.c): the index of their numbers, their table
	 * (struct ann_rec) and names, in temporary files and then mapped */
	cm_opindex *anns;
	FILE *ann_tab, *ann_text;
	uint64_t nanns, ann_text_len;
	const struct ann_rec *ann_map;
	const char *ann_text_map;
	cm_pages *ann_map_pages, *ann_text_pages;
	cm_idmap *cua;          /* correlation -> number + 1 of the annotation its call was made in */
	cm_idmap *cspans;       /* annotation number -> struct span_slot */
	cm_hmap *cspans_more;   /* (number, device, stream) -> struct span, beyond the first */
	unsigned idsigns[CM_IDS_N]; /* the signs of the window's ids of each kind (base/ids.h) */
	/* resolved */
	cm_idmap *linked; /* correlation -> struct linked */
	cm_ext_threads cpu_threads; /* the distinct linked threads */
	const struct cm_ext_pt *ext_threads; /* those ext's entries number (cm_gpu_resolve) */
	cm_idmap *uext;  /* correlation -> user annotation ext id */
	cm_idmap *cext;  /* version >= 2: correlation -> the External id of its CPU op (0: none) */
	/* phase 2 (the plan) */
	cm_hmap *devices, *streams, *procs, *threads;
	cm_hmap *device_rows; /* devices with a sync on no stream: Kineto's row "Device N" (tid 1) */
	cm_idmap *spans;      /* ext id -> struct span_slot */
	cm_hmap *spans_more;  /* (ext id, device, stream) -> struct span, beyond the first */
	cm_hmap *evmap;       /* version >= 2, while planning: (context, CUDA event) -> struct wait_info */
	cm_hmap *waits;       /* version >= 2: record index of an event sync -> struct wait_info */
	int need_overhead;
	double min_ts, max_end_ts;
	int have_cpu_span;             /* cm_gpu_set_cpu_span was called */
	double cpu_min_ts, cpu_max_end;
	uint64_t x_events, x_outside;  /* X events, and those outside the CPU span */
	struct cm_gpu_stats st;
	cm_repair *repair; /* or NULL */
	cm_gpu_digest *dg; /* digesting on the reading thread (the careful reader) */
	cm_buf dgout;      /* its output, collected after each event */
	/* the records of the window's events (gpurec.h) */
	/* cutting (gpucut.c) */
	int cut;           /* enum cm_gpu_cut */
	FILE *cut_apis;    /* the API calls' (correlation, start, end) as read, 24 bytes each */
	uint64_t cut_napis;
	cm_idmap *cut_keep; /* correlation of an API call -> 1: kept, 2: cut */
	double cut_lo, cut_hi; /* the span, trace us */
	double cut_min_ts, cut_max_end; /* the extent of the drawn records before the cut */
	struct gpu_split *split; /* --split: the groups' records and plans (gpusplit.c), or NULL */
	cm_buf block;      /* the block being filled (all of them, when small) */
	FILE *recs;        /* the full blocks, in an unlinked temporary file */
	uint64_t nrecs;
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
};

/* Where the event being handled is, for messages. */
struct at {
	cm_gpu *g;
	struct cm_gpu_digest *d;
	uint64_t index;
	int64_t offset;
	const cm_jval *ev;
	const cm_jval *const *f; /* its fields: d->f */
};

/* The pass-1 part of digesting one event: external correlations, the end of
 * the last activity (gpuscan.c).  0, or -1 after a report. */
int gpu_scan_event(struct cm_gpu_digest *d, const struct at *a);
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
 * us): the annotation it was made in, unless a CUSTOM1 record names one
 * of the window's. */
void gpu_anns_call(cm_gpu *g, int64_t corr, int64_t pid, int64_t tid, double ts, double end);
/* After the plan: the spans of the GPU work of those correlations, and
 * their extent.  0, or -1. */
int gpu_anns_spans(cm_gpu *g);
/* Write them, with a comma in front of each.  0, or -1. */
int gpu_anns_write(cm_gpu *g, cm_evout *eo);
/* Free all of it (cm_gpu_free). */
void gpu_anns_free(cm_gpu *g);

/* Put the External id of every pair into g->ext (made by the caller), on
 * g->join_threads threads when it is an array.  0, or -1 after a report. */
int gpu_link_ext(cm_gpu *g);

/* The name of user annotation EXT: its bytes (in the mapped ua_file, valid
 * until gpu_ua_unmap; safe from several threads) and *LEN, or NULL when it
 * has none (not in the map, or not a string). */
const char *gpu_ua_name(cm_gpu *g, int64_t ext, size_t *len);

/* Unmap ua_file (cm_gpu_free does). */
void gpu_ua_unmap(cm_gpu *g);

/* Report a problem with events[INDEX] (OFFSET: just past the event); -1. */
int gpu_ev_error(cm_gpu *g, uint64_t index, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Python's _as_int(V) (V NULL: a missing key read with .get(key, 0)). */
int gpu_as_int(const struct at *a, const char *key, const cm_jval *v, cm_int *out);
/* The name of field F (WF_...). */
extern const char *const cm_wf_name[WF_N];
/* _as_int(event[F]) when REQUIRED (missing: an error), else .get(F, 0). */
int gpu_int_field(const struct at *a, int f, int required, cm_int *out);
static inline int gpu_time_ok(cm_int t) { return cm_gpu_time_ok(t); }
/* Narrow V to 64 bits for a table key; -1 after a report. */
int gpu_to_i64(const struct at *a, const char *key, cm_int v, int64_t *out);
/* The table key of id V of kind KIND (CM_IDS_..., base/ids.h), its signs
 * noted in the digest's; -1 after a report (V needs more than 64 bits). */
int gpu_to_id(const struct at *a, const char *key, int kind, cm_int v, int64_t *out);
/* The event's field F, which must exist (NULL after a report). */
const cm_jval *gpu_need(const struct at *a, int f);
/* Note an X event's extent, by Python's min()/max(). */
void gpu_extent(cm_gpu *g, double ts, double dur);
/* Begin an X event: {"ph":"X","cat":CAT,"name":NAME,"pid":PID,"tid":TID */
void gpu_x_head(cm_buf *b, const char *cat, const char *name, size_t nlen, cm_int pid, cm_int tid);

/* What the plan and the render decide alike, so that the metadata written
 * before the CPU events agrees with the events written after them, and what
 * the digest shares with the render (gpuconv.c). */
/* The thread row of an API record (tidrule.h): the CPU thread its
 * correlation links to, else the window's map, else the int32 id itself
 * (*FELL set).  0, or -1 after a report (the render's lookup cannot fail:
 * the plan made the same one). */
int gpu_api_thread(cm_gpu *g, const cm_gpurec *r, cm_int *tid, int *fell);
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
/* Whether a record stays in the output when cutting (gpucut.c): 1 keep
 * (always when not cutting), 0 cut.  The plan and the render ask alike. */
int gpu_cut_keep(const cm_gpu *g, const cm_gpurec *r);
/* The digest's note of an API call for cutting (its correlation and span,
 * when they fit in 64 bits), into the batch's list. */
void gpu_cut_note_api(struct cm_gpu_digest *d, const cm_gpurec *r);
/* Add N bytes of those notes to G's file.  0, or -1 after a report. */
int gpu_cut_collect(cm_gpu *g, const char *p, size_t n);
/* Free the groups of --split (cm_gpu_free does). */
void gpu_split_free(cm_gpu *g);
/* Hand each block of records to POOL (opool.h), in window order: the input
 * of the plan and of the render.  0, or -1 (after a report, or as
 * cm_opool_put). */
struct cm_opool;
int gpu_feed_pool(cm_gpu *g, struct cm_opool *pool);
/* A pool's sink (SCTX: the cm_evout): rendered elements, each with a
 * comma in front, to the output in order. */
int gpu_write_rendered(void *sctx, cm_buf *out);

#endif
