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

#include <pthread.h>
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
struct plan_worker {
	const cm_gpu *g;
	struct gpu_split *s;
	size_t *next;
	int *stop;
	size_t failed; /* the group that failed, or s->n */
	int settled;
	cm_diag_slot diag;
};

static void run_groups(struct plan_worker *w)
{
	for (;;) {
		size_t k = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED);
		if (k >= w->s->n || __atomic_load_n(w->stop, __ATOMIC_RELAXED))
			return;
		if (plan_group(w->g, w->s, k) < 0) {
			w->failed = k;
			__atomic_store_n(w->stop, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static void *plan_thread(void *arg)
{
	struct plan_worker *w = arg;
	cm_diag_defer(&w->diag);
	run_groups(w);
	return NULL;
}

int cm_gpu_split_plan(cm_gpu *g, int jobs)
{
	struct gpu_split *s = g->split;
	size_t n = jobs < 1 ? 1 : (size_t)jobs, next = 0;
	struct plan_worker *w;
	pthread_t *th;
	int *started, stop = 0, rc = 0;
	double t0 = cm_now_s(), c0 = cm_process_cpu_s();
	if (n > s->n)
		n = s->n ? s->n : 1;
	w = cm_xcalloc(n, sizeof *w);
	th = cm_xcalloc(n, sizeof *th);
	started = cm_xcalloc(n, sizeof *started);
	cm_gpu_split_select(g, -1);
	for (size_t t = 0; t < n; t++) {
		w[t] = (struct plan_worker){g, s, &next, &stop, s->n, 0, {0}};
		/* the first worker is this thread */
		started[t] = t > 0 && pthread_create(&th[t], NULL, plan_thread, &w[t]) == 0;
	}
	for (size_t t = 0; t < n; t++) {
		if (!started[t]) { /* this thread, its errors held as the workers' are */
			cm_diag_slot *was = cm_diag_defer_swap(&w[t].diag);
			run_groups(&w[t]);
			cm_diag_defer_swap(was);
		}
	}
	for (size_t t = 0; t < n; t++)
		if (started[t])
			pthread_join(th[t], NULL);
	/* the slots by the groups that failed: the lowest group's first */
	for (size_t done = 0; done < n; done++) {
		size_t at = n;
		for (size_t t = 0; t < n; t++)
			if (!w[t].settled && (at == n || w[t].failed < w[at].failed))
				at = t;
		w[at].settled = 1;
		if (cm_diag_settle(&w[at].diag) || w[at].failed < s->n)
			rc = -1;
	}
	s->st.groups = cm_now_s() - t0;
	s->st.groups_cpu = cm_process_cpu_s() - c0;
	for (size_t k = 0; k < s->n; k++) {
		g->st.x_events += s->grp[k].st_x_events;
		g->st.api_rows += s->grp[k].st_api_rows;
	}
	free(w);
	free(th);
	free(started);
	return rc;
}

