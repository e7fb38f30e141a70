/* gpusplitout.c - --split in a merge, its last stage: the groups that
 * gpusplit.c dealt the records to and gpugroups.c planned, each made
 * cm_gpu's own in turn, and their events written to their files.
 *
 * Selecting group K swaps its runs and its plan tables (rows, spans,
 * extent) into cm_gpu, and takes the cut off, since every record of the
 * runs is kept: cm_gpu_extent, cm_gpu_write_metadata and the others then
 * do for group K what they do for --steps of its steps.  The render of
 * every file's events is one walk, over the groups' runs one group after
 * the other, each piece to its group's file (but with -t, whose repair
 * stages are a file's own: the caller renders a group at a time).  Then
 * each group's spans and the end of its file, the groups side by side,
 * each in a view of cm_gpu of its own (as gpugroups.c plans them); the
 * groups shared among the -j threads by gpu_split_each_group, which the
 * plans use too. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/gpusplit_int.h"
#include "gpu/gpusplitout_int.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SWAP(T, a, b)        \
	do {                 \
		T t_ = (a);  \
		(a) = (b);   \
		(b) = t_;    \
	} while (0)

/* Exchange group GR's runs and plan with cm_gpu's. */
void gpu_split_swap(cm_gpu *g, struct gpu_group *gr)
{
	SWAP(const struct gpu_runs *, g->win.runs, gr->runs);
	SWAP(cm_hmap *, g->plan.devices, gr->devices);
	SWAP(cm_hmap *, g->plan.streams, gr->streams);
	SWAP(cm_hmap *, g->plan.procs, gr->procs);
	SWAP(cm_hmap *, g->plan.threads, gr->threads);
	SWAP(cm_hmap *, g->plan.device_rows, gr->device_rows);
	SWAP(cm_hmap *, g->plan.spans_more, gr->spans_more);
	SWAP(cm_hmap *, g->ann.cspans_more, gr->cspans_more);
	SWAP(cm_idmap *, g->plan.spans, gr->spans);
	SWAP(cm_idmap *, g->ann.cspans, gr->cspans);
	SWAP(int, g->plan.need_overhead, gr->need_overhead);
	SWAP(double, g->plan.min_ts, gr->min_ts);
	SWAP(double, g->plan.max_end_ts, gr->max_end_ts);
	SWAP(uint64_t, g->plan.x_events, gr->x_events);
	SWAP(uint64_t, g->plan.x_outside, gr->x_outside);
	SWAP(void *, g->remap_ctx, gr->remap_ctx);
}

int cm_gpu_split_select(cm_gpu *g, int k)
{
	struct gpu_split *s = g->split;
	if (s->cur >= 0) {
		gpu_split_swap(g, &s->grp[s->cur]);
		g->cut = s->cut;
	}
	s->cur = k;
	if (k < 0)
		return 0;
	s->cut = g->cut;
	g->cut = CM_CUT_NONE; /* every record of its runs is kept */
	gpu_split_swap(g, &s->grp[k]);
	return 0;
}

/* The sink of the groups' render in one walk: each piece's elements to
 * its group's writer (or through Q's threads), OWNER[I] the group of the
 * I-th piece of the walk. */
struct split_sink {
	cm_evout *eos;
	cm_outq *q;
	size_t *owner;
	size_t n, i;
};

/* cm_evout_elements through Q: the piece OUT (its elements each with a
 * comma in front, the first's dropped when EO has none yet) to output K,
 * after what EO holds. */
static int queue_elements(cm_outq *q, size_t k, cm_evout *eo, cm_buf *out)
{
	size_t off = 0;
	if (!out->len)
		return 0;
	if (eo->first) {
		off = 1;
		eo->first = 0;
	}
	if (eo->buf.len) {
		int rc = cm_outq_write(q, k, eo->buf.p, eo->buf.len);
		eo->buf.len = 0;
		if (rc < 0)
			return -1;
	}
	return cm_outq_give(q, k, out, off);
}

static int split_sink(void *sctx, cm_buf *out)
{
	struct split_sink *ss = sctx;
	size_t k;
	if (ss->i == ss->n) /* cannot happen: as many pieces as counted */
		return cm_fail(CM_EXIT_IO, NULL, -1, "the render of --split's groups lost its place");
	k = ss->owner[ss->i++];
	if (ss->q)
		return queue_elements(ss->q, k, &ss->eos[k], out);
	return cm_evout_elements(&ss->eos[k], out->p, out->len);
}

/* A piece of the walk: group K's runs [A, B). */
struct split_piece { size_t k, a, b; };

/* The walk's order of the pieces PC[0..N) (group by group, FIRST[K] the
 * first of group K's): with STRIPES > 1, the groups in that many stripes
 * (as io/outq.c gives files to its threads: group K to stripe
 * K * STRIPES / NG), a piece of each stripe in turn, each stripe's groups
 * one after the other.  A split's files are its groups, written in the
 * order the walk makes their pieces; group after group, the writer
 * threads would take them one at a time.  Into ORDER[0..N). */
static void piece_order(const size_t *first, size_t ng, size_t stripes, size_t *order)
{
	size_t *at = cm_xcalloc(stripes, sizeof *at), *end = cm_xcalloc(stripes, sizeof *end), done = 0, n = first[ng];
	for (size_t t = 0; t < stripes; t++) {
		at[t] = first[t * ng / stripes];
		end[t] = first[(t + 1) * ng / stripes];
	}
	while (done < n)
		for (size_t t = 0; t < stripes; t++)
			if (at[t] < end[t])
				order[done++] = at[t]++;
	free(at);
	free(end);
}

int cm_gpu_split_write_events(cm_gpu *g, cm_evout *eos, cm_outq *q, int jobs)
{
	struct gpu_split *s = g->split;
	struct gpu_runs all = {.piece = SIZE_MAX}; /* the pieces marked, run by run */
	size_t nruns = 0, np = 0, *first = cm_xcalloc(s->n + 1, sizeof *first), *order;
	size_t stripes = q ? (size_t)cm_outq_threads_of(q) : 1;
	struct split_piece *pc;
	struct split_sink ss = {eos, q, NULL, 0, 0};
	int cut, rc;
	cm_gpu_split_select(g, -1);
	for (size_t k = 0; k < s->n; k++)
		nruns += s->grp[k].rs.n;
	pc = cm_xmalloc((nruns ? nruns : 1) * sizeof *pc);
	/* the pieces of each group: runs up to a window's block on average
	 * (s->piece; a run longer alone), the last of a group ending one.
	 * (Up to a run past it, pieces of up to two blocks' records were
	 * rendered to up to 2 MB of text each, -j + 4 in flight: the render's
	 * text was 40 MB of the 200 MB pair's split at -j 16, heaptrack.) */
	for (size_t k = 0; k < s->n; k++) {
		const struct gpu_runs *rs = &s->grp[k].rs;
		size_t len = 0, a = 0;
		first[k] = np;
		for (size_t i = 0; i < rs->n; i++) {
			if (len && len + rs->v[i].len > s->piece) {
				pc[np++] = (struct split_piece){k, a, i};
				a = i;
				len = 0;
			}
			len += rs->v[i].len;
			if (rs->v[i].last || i + 1 == rs->n) {
				pc[np++] = (struct split_piece){k, a, i + 1};
				a = i + 1;
				len = 0;
			}
		}
	}
	first[s->n] = np;
	order = cm_xmalloc((np ? np : 1) * sizeof *order);
	piece_order(first, s->n, stripes > s->n ? (s->n ? s->n : 1) : stripes, order);
	all.v = cm_xmalloc((nruns ? nruns : 1) * sizeof *all.v);
	ss.owner = cm_xmalloc((np ? np : 1) * sizeof *ss.owner);
	ss.n = np;
	for (size_t i = 0; i < np; i++) {
		const struct split_piece *p = &pc[order[i]];
		const struct gpu_run *v = s->grp[p->k].rs.v;
		for (size_t r = p->a; r < p->b; r++) {
			all.v[all.n] = v[r];
			all.v[all.n++].last = r + 1 == p->b; /* the walk's piece ends here */
		}
		ss.owner[i] = p->k;
	}
	/* the render reads of the plan only the syncs' waits, which are all
	 * the groups' (the deal's); every record of the runs is kept */
	cut = g->cut;
	g->cut = CM_CUT_NONE;
	g->win.runs = &all;
	rc = gpu_render_walk(g, jobs, split_sink, &ss);
	g->win.runs = NULL;
	g->cut = cut;
	free(all.v);
	free(ss.owner);
	free(order);
	free(pc);
	free(first);
	return rc;
}

void cm_gpu_split_stats(const cm_gpu *g, struct cm_gpu_split_stats *st) { *st = g->split->st; }

void cm_gpu_split_set_remap_ctx(cm_gpu *g, int k, void *ctx) { g->split->grp[k].remap_ctx = ctx; }

void cm_gpu_split_totals(cm_gpu *g)
{
	struct gpu_split *s = g->split;
	cm_gpu_split_select(g, -1);
	g->plan.x_events = g->plan.x_outside = 0;
	for (size_t k = 0; k < s->n; k++) {
		const struct gpu_group *gr = &s->grp[k];
		g->plan.x_events += gr->x_events;
		g->plan.x_outside += gr->x_outside;
		for (size_t i = 0; i < cm_hmap_slots(gr->procs); i++) {
			const int64_t *key;
			const struct first_ts *f = cm_hmap_slot(gr->procs, i, (const void **)&key);
			int created;
			struct first_ts *to;
			if (!f)
				continue;
			to = cm_hmap_put(g->plan.procs, key, &created);
			if (created || f->ns < to->ns)
				to->ns = f->ns;
		}
	}
}

/* One of gpu_split_each_group's threads: its share of the groups, taken
 * in turn from *next, and where it stopped. */
struct group_worker {
	int (*each)(void *ctx, size_t k);
	void *ctx;
	size_t n;      /* the groups */
	size_t *next;
	int *stop;
	int quiet;     /* a worker thread: no progress line from it */
	size_t failed; /* the group that failed, or n */
	int settled;
	cm_diag_slot diag;
};

static void run_groups(struct group_worker *w)
{
	for (;;) {
		size_t k = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED);
		if (k >= w->n || __atomic_load_n(w->stop, __ATOMIC_RELAXED))
			return;
		if (w->each(w->ctx, k) < 0) {
			w->failed = k;
			__atomic_store_n(w->stop, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static void *group_thread(void *arg)
{
	struct group_worker *w = arg;
	cm_diag_defer(&w->diag);
	if (w->quiet)
		cm_progress_thread_off();
	run_groups(w);
	return NULL;
}

int gpu_split_each_group(cm_gpu *g, int jobs, int quiet, int (*each)(void *ctx, size_t k), void *ctx)
{
	size_t groups = g->split->n, n = jobs < 1 ? 1 : (size_t)jobs, next = 0;
	struct group_worker *w;
	pthread_t *th;
	int *started, stop = 0, rc = 0;
	if (n > groups)
		n = groups ? groups : 1;
	w = cm_xcalloc(n, sizeof *w);
	th = cm_xcalloc(n, sizeof *th);
	started = cm_xcalloc(n, sizeof *started);
	cm_gpu_split_select(g, -1);
	for (size_t t = 0; t < n; t++) {
		w[t] = (struct group_worker){each, ctx, groups, &next, &stop, quiet, groups, 0, {0}};
		/* the first worker is this thread */
		started[t] = t > 0 && pthread_create(&th[t], NULL, group_thread, &w[t]) == 0;
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
		if (cm_diag_settle(&w[at].diag) || w[at].failed < groups)
			rc = -1;
	}
	free(w);
	free(th);
	free(started);
	return rc;
}

/* What cm_gpu_split_write_spans's steps share (gpu_split_each_group's
 * CTX). */
struct spans_job {
	const cm_gpu *g;
	cm_evout *eos;
	int (*tail)(void *ctx, size_t k, cm_evout *eo);
	void *ctx;
};

/* Group K's spans into its writer, in a view of G with the group's tables
 * swapped in (what cm_gpu_split_select makes G, without touching G: the
 * spans' render reads only), then the worker's tail.  0, or -1 after a
 * report. */
static int spans_group(void *job, size_t k)
{
	struct spans_job *w = job;
	struct gpu_group *gr = &w->g->split->grp[k];
	cm_gpu v = *w->g;
	int rc;
	v.split = NULL;
	v.cut = CM_CUT_NONE; /* every record of its runs is kept */
	gpu_split_swap(&v, gr);
	rc = cm_gpu_write_spans(&v, &w->eos[k], 1);
	gpu_split_swap(&v, gr);
	return rc < 0 ? -1 : w->tail(w->ctx, k, &w->eos[k]);
}

int cm_gpu_split_write_spans(cm_gpu *g, cm_evout *eos, int jobs, int (*tail)(void *ctx, size_t k, cm_evout *eo),
			     void *ctx)
{
	struct spans_job job = {g, eos, tail, ctx};
	return gpu_split_each_group(g, jobs, 1, spans_group, &job);
}
