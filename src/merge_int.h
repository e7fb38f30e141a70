/* merge_int.h - the state of one merge, shared by the engine's files.
 * Internal to the engine (src/merge*.c): the callers see merge.h only.
 *
 * The engine (its design essay is at the top of merge.c) is a run and the
 * stages it calls, each in a file of its own, each calling only the ones
 * below it (no file calls back up):
 *
 *   merge.c         the run: the options handed to the stages, the inputs
 *                   and the output opened, the phases in turn, the ends
 *   mergeprepare.c  phases 1 and 2, everything before the first output
 *                   byte: W and C1 side by side, the joins, the plan
 *   mergeout.c      phase 3: the CPU trace copied with the GPU side spliced
 *                   in through the copy's hooks (to a .pftrace through
 *                   mergepft.c, to --split's files through mergesplit.c)
 *   mergereport.c   -v: what the run did and where its time went
 *   mergejobs.c     how many threads each step takes of -j
 *
 * struct merge is as it was when merge.c held it all: the run fills opt,
 * the inputs, map, repair, arena and the cut's mode; the prepare fills the
 * rest but the copy's figures, which the output fills (copy_parts,
 * copy_threads, t_copied, c_copied, t_render, c_render, gz...); the report only
 * reads. */
#ifndef CM_MERGE_INT_H
#define CM_MERGE_INT_H

#include "options.h"
#include "base/diag.h"
#include "base/opool.h"
#include "cpu/cpucut.h"
#include "cpu/cpuscan.h"
#include "gpu/gpuconv.h"
#include "io/input.h"
#include "json/evout.h"
#include "repair/repair.h"
#include "repair/threadmap.h"
#include "mergesplit.h"

#include <stdint.h>

struct merge {
	const struct cm_options *opt;
	cm_input *cpu, *win;
	cm_gpu *gpu;
	cm_cpuplan plan;
	cm_cpucut cut;      /* --steps, --range, --split: the CPU side's cut (cpucut.h) */
	cm_msplit split;    /* --split: the files and each one's GPU side (mergesplit.h) */
	const cm_threadmap *map; /* -t */
	cm_int base_ns;     /* the base time, once known (the split's repair stages take it) */
	double min_ts, max_end;
	cm_repair *repair;  /* -t: the thread-repair stage, or NULL */
	const cm_evout *pft_ties; /* the output whose .pftrace lanes are told the calls (mergepft.c), or NULL */
	cm_arena *arena;    /* repair: the CPU event being looked at */
	int c1_rc;          /* result of the CPU scan */
	int c1_done;        /* ... set (atomic) when it ran on the second thread and ended */
	int win_careful;    /* the window was read again by the careful reader */
	cm_diag_slot c1_diag; /* its error, when it ran on the second thread */
	/* when each step ended, for -v (seconds since the start) */
	double t0, t_window, t_cpu, t_linked, t_indexed, t_joins, t_plan, t_copied, t_render;
	/* and the CPU seconds of all threads by then, from both reads' end on */
	double c_read, c_linked, c_indexed, c_joins, c_plan, c_copied, c_render;
	/* gzip output (not --split's): its writes' waits for the deflate
	 * workers and for their blocks' writing, summed (-v) */
	int gz;
	double gz_wait, gz_emit;
	/* and how the first phase's threads spent it (-v) */
	cm_opool_stats win_stats;
	double win_waited, cpu_waited; /* the cutting threads waited for their reads */
	cm_ocrew *crew;     /* the read workers both readers share (mergejobs_read_crew), or NULL */
	int crew_n;         /* its workers, and the time they waited for a block (-v) */
	double crew_idle;
	uint64_t copy_parts; /* the parts the CPU trace's events were copied in (cpucopypar.c), */
	int copy_threads;    /* ... on how many threads */
	int copy_encoded;    /* ... their events encoded there (a .pftrace's direct parts: mergepftcpu.c) */
	cm_opool_stats copy_stats; /* ... and their pool's figures */
};

/* ---- mergejobs.c: -j as the threads of each step (the measurements that
 * set each are there).  Each takes the run's -j, JOBS, or its options. */

/* -j bounded by the most threads a reader's workers take (16). */
int mergejobs_read_jobs(int jobs);
/* The window's and the CPU trace's read workers (a pool each, or together
 * the crew of mergejobs_read_crew). */
int mergejobs_window_workers(int jobs);
int mergejobs_cpu_workers(int jobs);
/* The workers of the crew both readers share, or 0 for a pool each (the
 * testing aid CUPTIMERGE_READ_WORKERS sets it). */
int mergejobs_read_crew(int jobs);
/* Whether the window's cutting thread parses too when its pool is full. */
int mergejobs_window_caller_helps(int jobs);
/* The threads of the joins, the plan (and each group's under --split). */
int mergejobs_plan_threads(int jobs);
/* The threads of the copy of the CPU trace's events (cpu/cpucopypar.c). */
int mergejobs_copy_threads(int jobs);
/* The threads that render the window's records (fewer beside zlib's deflate). */
int mergejobs_render_threads(const struct cm_options *opt);
/* The slots of each input's read-ahead ring (io/inputahead.c), 0 for none. */
int mergejobs_readahead(const struct cm_options *opt);

/* ---- mergeprepare.c */

/* The window's conversion as this run sets it up: M's window, -j, -t's
 * remap and the cut (made again when the careful reader reads the window
 * from the start).  The caller frees it (cm_gpu_free). */
cm_gpu *mergeprepare_new_gpu(struct merge *m);

/* Everything before the first output byte, phases 1 and 2: both inputs
 * read, the joins, the plan, the checks that they belong together, into M
 * (m->gpu made by mergeprepare_new_gpu, the inputs open).  Returns 0 or an
 * exit status, its error reported. */
int mergeprepare_run(struct merge *m);

/* ---- mergeout.c */

/* Phase 3, once mergeprepare_run has returned 0: the CPU trace copied to
 * EO's output with the GPU side spliced in, and the output closed (with
 * --split, EO's output is the tee of m->split.outs, the files, which this
 * closes too, their names SPLIT_NAMES taken and freed with them).  Returns
 * 0 (a reader that went away included) or an exit status, reported. */
int mergeout_write(struct merge *m, cm_evout *eo, char **split_names);

/* ---- mergereport.c */

/* -v: what the merge M did and where its time went, on stderr (silenced
 * by -q, as warnings are), once its output is closed. */
void mergereport_print(const struct merge *m);

#endif
