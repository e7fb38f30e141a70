/* gpusplit.c - --split in a merge, its first stage: the window's records
 * dealt to the files of the groups of steps (gpugroups.c then plans each
 * group over its own, gpusplitout.c writes them).
 *
 * A file of --split=steps must be what --steps gives for its steps: the
 * GPU rows its metadata names, its gpu_user_annotation spans and its
 * profiler span come from the records that --steps of its steps keeps,
 * not from all of them.  So, once the groups are known, the records are
 * read once and each is dealt to every group that keeps it, by gpucut.c's
 * rule with a group's range for the span (an API call by its own times;
 * GPU work and syncs with their call, through a table correlation -> the
 * groups that keep the call, made from the notes the digest kept; those
 * without a call, and overhead, by their own times).  A group's records are
 * not copied: they are runs of the window's own record store (a group's
 * steps are nearly contiguous in window order, so a run is most of a block),
 * and the walks of the plan and the render read those runs where the
 * window's records lie (gpurules.c).  Each record is planned and rendered
 * once a file it goes to, as in a run of --steps for each: the whole split
 * costs about what one plain merge does.  (Copying the records to a store
 * a group, in blocks and temporary files, wrote 84 MB of temporary files
 * where the plain merge writes 36 MB: BENCHMARKS.md.)
 *
 * A cuda_event record is drawn by no one; in a window of version 2 a sync
 * looks up where its event was last recorded, before it in window order.
 * The deal makes those lookups once, in window order, into cm_gpu's table
 * of the syncs' waits, which every group's render reads; a group's plan
 * leaves them (plan.ops_noted), so a cuda_event record may lie inside a
 * group's run without changing what the group writes, and one that follows
 * a group's record joins its run instead of cutting it in two.
 *
 * The walk also takes what the plain plan notes of every record whatever
 * the cut, for the check that the window and the trace belong together
 * (crosscheck.c): the extent of the records drawn when uncut, and the
 * deferred errors of overhead and sync records (status 1, as the plan
 * reports them).
 *
 * The groups' store (struct gpu_split) is made here and freed here, with
 * the tables their plans made; in between, cm_gpu_split runs the deal's
 * two passes, each in a file of its own: the table of the groups that
 * keep each API call, made from the digest's notes (gpusplitmarks.c, which
 * also holds the rule of the groups of a span that both passes use), then
 * the deal itself over the records (gpusplitdeal.c). */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/gpusplit_int.h"
#include "base/diag.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cm_gpu_split(cm_gpu *g, const double *lo, const double *hi, size_t n, int jobs)
{
	struct gpu_split *s = cm_xcalloc(1, sizeof *s);
	int workers = jobs < 1 ? 1 : jobs, rc;
	g->split = s;
	s->n = n;
	s->lo = lo;
	s->hi = hi;
	s->cur = -1;
	s->ucut_min = INFINITY;
	s->ucut_max = -INFINITY;
	s->grp = cm_xcalloc(n, sizeof *s->grp);
	s->max_hi = cm_xmalloc(n * sizeof *s->max_hi);
	s->inner = cm_xmalloc(2 * n * sizeof *s->inner);
	for (size_t k = 0; k < n; k++)
		s->max_hi[k] = k && s->max_hi[k - 1] > hi[k] ? s->max_hi[k - 1] : hi[k];
	for (size_t k = 0; k < n; k++) { /* a group's own part (gpu_splitmarks_span) */
		s->inner[2 * k] = k && s->max_hi[k - 1] > lo[k] ? s->max_hi[k - 1] : lo[k];
		s->inner[2 * k + 1] = k + 1 < n && lo[k + 1] < hi[k] ? lo[k + 1] : hi[k];
	}
	for (size_t k = 0; k < n; k++) {
		struct gpu_group *gr = &s->grp[k];
		gr->devices = cm_hmap_new(8, sizeof(struct first_ts));
		gr->streams = cm_hmap_new(16, 8);
		gr->procs = cm_hmap_new(8, sizeof(struct first_ts));
		gr->threads = cm_hmap_new(16, 8);
		gr->spans_more = cm_hmap_new(24, sizeof(struct gpu_ann_span));
		gr->device_rows = cm_hmap_new(8, 0);
		gr->min_ts = INFINITY;
		gr->max_end_ts = 0.0;
		gr->runs = &gr->rs;
	}
	s->st.marks = cm_now_s();
	s->st.marks_cpu = cm_process_cpu_s();
	if (gpu_splitmarks_make(g, s, workers) < 0)
		return -1;
	s->st.deal = cm_now_s();
	s->st.deal_cpu = cm_process_cpu_s();
	s->st.marks = s->st.deal - s->st.marks;
	s->st.marks_cpu = s->st.deal_cpu - s->st.marks_cpu;
	/* the correlations' annotations, noted as the records are dealt; the
	 * table of their spans that comes with it is a group's (plan_group) */
	if (g->version >= 2 && gpu_anns_tables(g, g->win.api_lo, g->win.api_hi, g->win.api_n) < 0)
		return -1;
	cm_idmap_free(g->ann.cspans);
	cm_hmap_free(g->ann.cspans_more);
	g->ann.cspans = NULL;
	g->ann.cspans_more = NULL;
	g->plan.ops_noted = 1;
	if (g->version >= 2) { /* the syncs' waits, made as dealt, read by every group's render */
		s->evmap = cm_hmap_new(16, sizeof(struct wait_info));
		if (!g->plan.waits)
			g->plan.waits = cm_hmap_new(8, sizeof(struct wait_info));
	}
	if (g->version < 2 && !g->remap) {
		/* the plans as the records are dealt: what else the parts would
		 * write (a version-2 sync's wait, a remap's counts) is not there */
		s->plan_view = cm_xmalloc(sizeof *s->plan_view);
		*s->plan_view = *g;
		s->plan_view->cut = CM_CUT_NONE;
		s->plan_view->split = NULL;
		s->fold_view = cm_xmalloc(sizeof *s->fold_view);
		*s->fold_view = *s->plan_view;
		memset(&s->fold_view->st, 0, sizeof s->fold_view->st);
	}
	rc = gpu_splitdeal_run(g, workers);
	if (s->fold_view) {
		g->st.x_events += s->fold_view->st.x_events;
		g->st.api_rows += s->fold_view->st.api_rows;
	}
	cm_hmap_free(s->evmap); /* the syncs have taken what they need */
	s->evmap = NULL;
	/* a walk's piece of runs: as many records as a block of the window
	 * holds on average.  A block is CM_GPU_BLOCK bytes of records and
	 * their names (gpudigest.c: as much work as before the names went
	 * to a table), so of records alone it is less, 2.4 times less in
	 * gen_trace's windows; pieces of CM_GPU_BLOCK bytes of records held
	 * 2.4 times a block's events, and each was rendered to as much more
	 * text, -j + 4 of them in flight: the 200 MB pair's split at -j 16
	 * peaked at 112 MB against the plain merge's 47 (heaptrack: 37 MB of
	 * rendered text, 11 MB of pieces read) */
	s->piece = s->blocks ? (size_t)(s->block_bytes / s->blocks) : CM_GPU_BLOCK;
	s->piece = s->piece < 4096 ? 4096 : s->piece > CM_GPU_BLOCK ? CM_GPU_BLOCK : s->piece;
	for (size_t k = 0; k < n; k++) {
		s->grp[k].rs.piece = s->piece;
		if (s->grp[k].rs.n)
			s->grp[k].rs.v[s->grp[k].rs.n - 1].last = 1;
	}
	g->plan.cut_min_ts = s->ucut_min;
	g->plan.cut_max_end = s->ucut_max;
	return rc;
}

void gpu_split_free(cm_gpu *g)
{
	struct gpu_split *s = g->split;
	if (!s)
		return;
	cm_gpu_split_select(g, -1);
	for (size_t k = 0; k < s->n; k++) {
		struct gpu_group *gr = &s->grp[k];
		free(gr->rs.v);
		cm_hmap_free(gr->devices);
		cm_hmap_free(gr->streams);
		cm_hmap_free(gr->procs);
		cm_hmap_free(gr->threads);
		cm_hmap_free(gr->device_rows);
		cm_hmap_free(gr->spans_more);
		cm_hmap_free(gr->cspans_more);
		cm_idmap_free(gr->spans);
		cm_idmap_free(gr->cspans);
	}
	for (size_t k = 0; k < s->n; k++)
		cm_buf_free(&s->grp[k].span_notes);
	free(s->grp);
	free(s->max_hi);
	free(s->inner);
	free(s->plan_view);
	free(s->fold_view);
	cm_idmap_free(s->marks);
	cm_hmap_free(s->evmap);
	free(s);
	g->split = NULL;
}
