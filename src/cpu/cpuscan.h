/* cpuscan.h - C1, phase 1 over the CPU trace: check it, index it, measure it. */
#ifndef CM_CPUSCAN_H
#define CM_CPUSCAN_H

#include <stdint.h>
#include <stdio.h>
#include "base/hmap.h"
#include "base/idmap.h"
#include "base/opool.h"
#include "io/input.h"
#include "base/pyval.h"
#include "json/devprops.h"
#include "base/extindex.h"
#include "base/metarow.h" /* CM_META_*, the kinds of cm_cpuplan.meta */

/* What the output pass needs to know about the CPU trace. */
typedef struct cm_cpuplan {
	int has_base;          /* baseTimeNanoseconds present */
	cm_int base_ns;        /* its int() value */
	int has_events;        /* a traceEvents member */
	int has_trace_name;    /* a traceName member */
	uint64_t events;       /* elements of traceEvents */
	uint64_t leading_m;    /* kept "M" events before the first other kept event */
	uint64_t *dropped;     /* indexes of the profiler span events (re-made at the end) */
	uint64_t ndropped, cap_dropped;
	uint64_t indexed;      /* External ids found for the window */
	unsigned ext_signs;    /* CM_ID_NEG, CM_ID_HIGH: the signs of the candidates' External ids (base/ids.h) */
	double min_ts, max_end; /* extent of the kept X events (min +inf when none) */
	double prof_min_ts, prof_max_end; /* ... of the trace's own profiler span events
					   * ("PyTorch Profiler (0)", dropped), for crosscheck.h */
	FILE *ext_spill;       /* index candidates, when scanned without EXT */
	uint64_t n_ext_spill;
	/* the threads the index entries name (struct cm_ext_thread) */
	cm_ext_threads ext_threads;
	/* for the checks that the window belongs with this trace (crosscheck.h) */
	int has_window_events; /* a top-level "events" member, as a trace window has */
	uint64_t gpu_events;   /* X events of the categories kernel, gpu_memcpy, gpu_memset */
	uint64_t api_events;   /* X events of the categories cuda_runtime, cuda_driver */
	uint64_t merge_rows;   /* M thread_name "thread N" at ts 0.0: rows a merge wrote */
	cm_hmap *pids;         /* the integer pids (int64 keys) of the kept X events */
	int pids_overflow;     /* more distinct pids than CM_CPUSCAN_MAX_PIDS: pids incomplete */
	int careful;           /* the parallel scan gave the trace to the careful one */
	/* Where every top-level member and every element of traceEvents
	 * lies, in a temporary file (json/doclayout.h; the keys
	 * cm_cpuscan_keys tagged), so that the copy need not look again.
	 * The splitter noted it, in the parallel scan or fed by the careful
	 * one; NULL only when the scan failed. */
	FILE *layout;
	cm_opool_stats read_stats; /* the parallel scan's pool: where its time went (-v) */
	/* the top-level "deviceProperties" (Kineto's; the last one counts) */
	int devprops;          /* CM_DEVPROPS_* */
	cm_kin_devices devices; /* its devices, when a non-empty array */
	/* The names of the user_annotation candidates (with the candidates,
	 * when scanned without EXT), in their order among the candidates: a
	 * 4-byte length (CM_ANN_NOT_STR: the name is not a string) and the
	 * bytes.  A window of version 2 draws their GPU spans (opindex.h). */
	FILE *ann_names;
	/* The metadata rows the trace already has, for a window of version 2
	 * (cm_gpu_write_metadata): (CM_META_*, pid, tid) as three int64 keys
	 * of M events with an integer pid (and for a thread's, tid; a
	 * process's key has tid 0).  meta_overflow: more than
	 * CM_CPUSCAN_MAX_META, the set is incomplete. */
	cm_hmap *meta;
	int meta_overflow;
	/* args.name of the first process_name of an integer pid, when it is
	 * a string: the program's name, as Kineto names every process */
	int has_prog;
	cm_buf prog_name;
	/* When cutting (--steps, --range; cm_cpuscan_run_cut): each event's
	 * note, the steps found (cpucut.h).  The caller owns it. */
	struct cm_cpucut *cut;
} cm_cpuplan;

/* The top-level keys the layout tags (CM_DOCLAYOUT_NAME + CM_CPUKEY_*),
 * NULL-ended: the members the copy may replace or place by. */
enum { CM_CPUKEY_NAME, CM_CPUKEY_SCHEMA, CM_CPUKEY_DEVICES };
extern const char *const cm_cpuscan_keys[];

/* cm_cpuplan.ann_names: the length of a name that is not a string. */
#define CM_ANN_NOT_STR UINT32_MAX

#define CM_CPUSCAN_MAX_META 65536

/* cm_cpuplan.devprops: the trace has no "deviceProperties", has one that
 * lists no device (not an array, or an empty one), or has devices. */
enum { CM_DEVPROPS_ABSENT, CM_DEVPROPS_EMPTY, CM_DEVPROPS_LISTED };

/* The pid set stops growing here (a trace has a few processes; this bounds
 * the memory a pathological trace can claim). */
#define CM_CPUSCAN_MAX_PIDS 4096

/* Read all of IN, checking that it is a Chrome trace the merge can take
 * (a top-level object; traceEvents, when present, an array of objects; names
 * hashable; numbers within range), and fill PLAN.  EXT maps each External id
 * the window links (int64) to a struct cm_ext_thread, which this fills from
 * the cpu_op and user_annotation X events that carry the id (the last one
 * wins).  EXT may be NULL when the window's ids are not known yet: the
 * candidates are then kept on disk for cm_cpuindex_apply (cpuindex.h).  Returns 0,
 * or -1 after reporting. */
int cm_cpuscan_run(cm_input *in, cm_hmap *ext, cm_cpuplan *plan);

/* cm_cpuscan_run (without EXT) by JOBS worker threads over batches of
 * events; a trace it cannot take is read again by cm_cpuscan_run, which
 * names the fault.  IN must be rewindable.  Returns 0, or -1 after
 * reporting. */
int cm_cpuscan_run_parallel(cm_input *in, cm_cpuplan *plan, int jobs);

/* cm_cpuscan_run_parallel (JOBS 0: cm_cpuscan_run without EXT), noting
 * each event for cutting into CUT (cpucut.h: its mode and steps set; the
 * rest is reset), or not when CUT is NULL.  Returns 0, or -1 after
 * reporting. */
struct cm_cpucut;
int cm_cpuscan_run_cut(cm_input *in, cm_cpuplan *plan, int jobs, struct cm_cpucut *cut);

/* cm_cpuscan_run_cut with the workers of the crew CREW (opool.h), which
 * may serve another reader at the same time. */
int cm_cpuscan_run_crew(cm_input *in, cm_cpuplan *plan, cm_ocrew *crew, struct cm_cpucut *cut);

void cm_cpuplan_free(cm_cpuplan *plan);

/* The reference's trace base when baseTimeNanoseconds is missing: NOW
 * seconds rounded down to Kineto's 7889238-second period, in ns. */
cm_int cm_cpuscan_default_base(double now);

#endif
