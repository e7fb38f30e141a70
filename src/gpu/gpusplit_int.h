/* gpusplit_int.h - the groups of --split in a merge, as gpusplit.c deals
 * the window's records to them and gpugroups.c plans them.  Internal to
 * src/gpu/gpusplit.c and gpugroups.c. */
#ifndef CM_GPUSPLIT_INT_H
#define CM_GPUSPLIT_INT_H

#include "gpu/gpuconv_int.h"

/* A group's records and plan.  The plan's fields are those of cm_gpu of
 * the same names, swapped with them while the group is selected. */
struct gpu_group {
	cm_buf block;
	FILE *recs;
	uint64_t nrecs;
	cm_hmap *devices, *streams, *procs, *threads, *device_rows, *spans_more, *waits, *cspans_more;
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
	int cur;               /* the group selected, -1 none */
	int cut;               /* cm_gpu.cut while one is */
	cm_idmap *marks;       /* correlation of an API call -> uint64_t: the groups that keep it */
	double ucut_min, ucut_max; /* the extent of the records drawn when uncut */
	/* planning the groups as the records are dealt (a window of version 1,
	 * no remap: cm_gpu_plan's parts, made by the deal's workers): views of
	 * cm_gpu, not cutting; the workers' (read only) and the fold's (a
	 * group's tables swapped in to fold its notes) */
	cm_gpu *plan_view, *fold_view;
};

/* Exchange group GR's store and plan with those of G (a cm_gpu or a view
 * of it): twice puts all back. */
void gpu_split_swap(cm_gpu *g, struct gpu_group *gr);

#endif
