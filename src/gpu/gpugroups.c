/* gpugroups.c - the groups of --split in a merge planned side by side:
 * each group's plan (cm_gpu_plan over the runs gpusplit.c dealt it, or,
 * when the deal planned them as it went, what is left of it) in a view of
 * cm_gpu of its own, the groups shared among the -j threads.  A group's
 * plan reads what nothing writes any more (the links, the maps, the CPU
 * side) and writes only its own tables, so the groups need no lock and
 * come out the same in any order: the files are the same bytes with -j 1,
 * 2 or 8. */
#include "config.h"
#include "gpu/gpusplit_int.h"
#include "gpu/gpusplitout_int.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

/* Group K's plan, in a view of G: a copy of cm_gpu with the group's runs
 * and plan tables swapped in, cut off (every record of the runs is kept),
 * its figures its own.  What the plan writes is the view's (the group's
 * tables); what it reads of G's (the links, the maps, the CPU side) nothing
 * writes while the groups are planned, so groups plan side by side.  The
 * operators and annotations of the calls are in place already (the deal's
 * notes).  0, or -1 after a report. */
static int plan_group(const cm_gpu *g, struct gpu_split *s, size_t k)
{
	struct gpu_group *gr = &s->grp[k];
	cm_gpu v = *g;
	int rc = 0;
	v.split = NULL;
	v.cut = CM_CUT_NONE;
	memset(&v.st, 0, sizeof v.st);
	gpu_split_swap(&v, gr);
	/* the window's annotations' spans: a table a group, over the ids its
	 * GPU work names (the plan would make one over all of them: 60 tables
	 * over the whole range, each walked for its extent and its spans, were
	 * a fifth of a split's time in 60 files; an array when the group's
	 * ids are dense, else a hash map: both are walked in id order.  The
	 * ids of annotations are about one in twelve, which cm_idmap_new
	 * would still take as dense: an array of 56-byte entries over their
	 * range, each page touched, was 10,000 page faults of a split in 60
	 * files, where the plain merge packs its entries by their keys) */
	if (!(v.plan.spans = !gr->ua_n || (uint64_t)gr->ua_hi - (uint64_t)gr->ua_lo < 2 * gr->ua_n
				     ? cm_idmap_new(sizeof(struct gpu_ann_span_slot), gr->ua_n ? gr->ua_lo : 0,
						    gr->ua_n ? gr->ua_hi : 0, gr->ua_n)
				     : cm_idmap_new(sizeof(struct gpu_ann_span_slot), 1, 0, 0)))
		rc = -1;
	/* the CPU trace's annotations' spans: sized for a group's share of
	 * the annotations, a hash map of those it spans when there are many
	 * groups (an array over all of them, a group, walked whole for its
	 * extent, held 0.7 MB a file of the 200,000-op pair's split) */
	if (rc == 0 && v.ann.cua) {
		uint64_t share = g->ann.nanns / s->n ? g->ann.nanns / s->n : 1;
		if (!(v.ann.cspans = cm_idmap_new(sizeof(struct gpu_ann_span_slot), 0, (int64_t)g->ann.nanns - 1, share)))
			rc = -1;
		else
			v.ann.cspans_more = cm_hmap_new(24, sizeof(struct gpu_ann_span));
	}
	if (rc == 0 && s->plan_view) { /* planned as dealt but for its spans */
		gpu_plan_fold_spans(&v, &gr->span_notes);
		cm_buf_free(&gr->span_notes);
		if (gpu_plan_end(&v) < 0)
			rc = -1;
	} else if (rc == 0 && cm_gpu_plan(&v, 1) < 0) {
		rc = -1;
	}
	gr->st_x_events = v.st.x_events;
	gr->st_api_rows = v.st.api_rows;
	gpu_split_swap(&v, gr); /* the group's tables back to it; the view's are G's */
	return rc;
}

/* The workers of cm_gpu_split_plan: each takes the next group not taken,
 * and stops at its first failure, which waits in its slot with the group's
 * number (the lowest group's is the run's error, as one after another). */
/* gpu_split_each_group's step for the plans: group K's (plan_group). */
static int plan_each(void *ctx, size_t k)
{
	const cm_gpu *g = ctx;
	return plan_group(g, g->split, k);
}

int cm_gpu_split_plan(cm_gpu *g, int jobs)
{
	struct gpu_split *s = g->split;
	double t0 = cm_now_s(), c0 = cm_process_cpu_s();
	int rc = gpu_split_each_group(g, jobs, 0, plan_each, g);
	s->st.groups = cm_now_s() - t0;
	s->st.groups_cpu = cm_process_cpu_s() - c0;
	for (size_t k = 0; k < s->n; k++) {
		g->st.x_events += s->grp[k].st_x_events;
		g->st.api_rows += s->grp[k].st_api_rows;
	}
	return rc;
}

