/* gpusplit_int.h - the groups of --split in a merge, as gpusplit.c makes
 * their store and deals them the window's records (runs of its own: the
 * table of which groups keep each API call in gpusplitmarks.c, the deal in
 * gpusplitdeal.c), gpugroups.c plans them and gpusplitout.c writes them.
 * Internal to those files. */
#ifndef CM_GPUSPLIT_INT_H
#define CM_GPUSPLIT_INT_H

#include "gpu/gpuconv_int.h"

/* A group's records (runs of the window's own) and plan.  The plan's
 * fields are those of cm_gpu of the same names, swapped with them while
 * the group is selected (runs with win.runs, pointing at rs). */
struct gpu_group {
	struct gpu_runs rs;
	const struct gpu_runs *runs;
	cm_hmap *devices, *streams, *procs, *threads, *device_rows, *spans_more, *cspans_more;
	cm_idmap *spans, *cspans;
	int need_overhead;
	double min_ts, max_end_ts;
	uint64_t x_events, x_outside;
	void *remap_ctx; /* its repair stage's, as cm_gpu_set_tid_remap's (-t) */
	int64_t ua_lo, ua_hi; /* the user annotations its GPU work is in (span_note's ids) */
	uint64_t ua_n;
	uint64_t st_x_events, st_api_rows; /* its plan's figures (cm_gpu.st), added up once all are planned */
	cm_buf span_notes; /* planned as dealt: its span notes, for its spans' table once sized */
};

struct gpu_split {
	struct gpu_group *grp;
	size_t n;
	const double *lo, *hi; /* the groups' ranges (trace us), the caller's, sorted by lo */
	double *max_hi;        /* the largest hi of groups 0 to k */
	double *inner;         /* group k's own part: [inner[2k], inner[2k + 1]), where no other reaches */
	int cur;               /* the group selected, -1 none */
	int cut;               /* cm_gpu.cut while one is */
	cm_idmap *marks;       /* correlation of an API call -> uint64_t: the groups that keep it */
	double ucut_min, ucut_max; /* the extent of the records drawn when uncut */
	int64_t next_block;    /* the deal: where the next block's length lies in the records' file */
	uint64_t blocks, block_bytes; /* ... the blocks dealt and their records' bytes */
	size_t piece;          /* the records' bytes of a walk's piece (gpu_runs.piece) */
	cm_hmap *evmap;        /* version 2: (context, CUDA event) -> struct wait_info, as dealt */
	/* planning the groups as the records are dealt (a window of version 1,
	 * no remap: cm_gpu_plan's parts, made by the deal's workers): views of
	 * cm_gpu, not cutting; the workers' (read only) and the fold's (a
	 * group's tables swapped in to fold its notes) */
	cm_gpu *plan_view, *fold_view;
	struct cm_gpu_split_stats st; /* -v */
};

/* Run EACH(CTX, K) for every group K of G's split on up to JOBS threads,
 * this one among them (gpusplitout.c), after cm_gpu_split_select(G, -1): the
 * groups taken in turn, the first failure stopping the rest.  Each
 * thread's reports are held (cm_diag_defer) and given in the order of the
 * groups that failed, the lowest first, as one thread would have.  QUIET:
 * the worker threads draw no progress line.  0, or -1 when a group
 * failed. */
int gpu_split_each_group(cm_gpu *g, int jobs, int quiet, int (*each)(void *ctx, size_t k), void *ctx);

/* ---- gpusplitmarks.c: which groups keep a span of time, an API call */

/* The groups (a bit each) of G's split S whose ranges take [START, END]
 * ns, as gpucut.c's in_span does under --steps (overlapping; an instant:
 * in it).  *HINT is the caller's to keep between calls (0 at first): the
 * group of the last span that went to one alone. */
uint64_t gpu_splitmarks_span(const cm_gpu *g, const struct gpu_split *s, cm_int start, cm_int end, size_t *hint);

/* S->marks, correlation of an API call -> the groups that keep it, made
 * on up to JOBS threads from the notes of G's cut (g->cut_apis, closed
 * once read); none when the window has no API call.  0, or -1 after a
 * report. */
int gpu_splitmarks_make(cm_gpu *g, struct gpu_split *s, int jobs);

/* ---- gpusplitdeal.c */

/* The deal: G's records read once on WORKERS threads and each dealt to
 * the runs of the groups of g->split that keep it (and, with
 * s->plan_view, noted in their plans), the notes that are no group's
 * applied in window order; s->st.deal and deal_cpu taken, from their
 * start to the walk's end.  0, or -1 after a report. */
int gpu_splitdeal_run(cm_gpu *g, int workers);

#endif
