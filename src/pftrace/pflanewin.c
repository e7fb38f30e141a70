/* pflanewin.c - the lanes' window (pflanes.c): the slices forgotten once
 * they end a window of trace time behind their thread's latest begin, the
 * treaps' nodes left placed again (a lane's treap made again) and the
 * lists' slices kept in place, and the node table grown, or the window
 * halved when the slices remembered would pass MAX_NODES.  Apart from the
 * placing, which calls it only when its table is full, listed slices
 * counted (pflanes_int.h: what the two share).
 *
 * Each thread's own latest begin, not the shard's: a CPU thread's runtime
 * calls come from the window after the CPU trace's slices of all threads,
 * seconds or minutes of trace time behind the shard's latest begin, and a
 * window that followed the shard's (before lanes25) forgot each call at
 * the next rebuild, before the calls after it that overlap it were placed:
 * two slices that overlap on one track, one's begin paired with the
 * other's end (check_pflanewin.c's lanes_behind, tests/e2e/pflanes.sh).
 * The calls begin a new run of their thread (struct thr's LATEST: a slice
 * more than a window behind the latest begin begins one), and its lanes
 * forget what ends a window behind the run's latest begin.  What an
 * earlier run left ahead of the run (the CPU trace's last slices of the
 * thread, which its calls reach at the end) is forgotten as before, a
 * window behind the thread's latest begin of all (TOP): kept until the
 * table is full of it and then all forgotten at once, it cost the 200M
 * pair 23 calls that tie with a CPU operator there (BENCHMARKS.md
 * "lanes25").  As the window narrows, what is kept comes down to what is
 * open at the two begins, so memory stays bounded however a thread's
 * slices go back and forth (lanes_bound).  A thread that stops keeps its
 * last window until the window narrows: nothing tells it from one whose
 * runtime calls are still to come.  What a merge's calls and spans, which
 * come last, may tie with is kept apart (pflanetie.c), asked about a slice
 * that begins before the horizon its thread forgot by (struct thr's GONE,
 * which rebuild() sets). */
#include "config.h"
#include "pftrace/pflanes_int.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

/* What a thread's lanes forget: the slices that end before the horizon of
 * their begins, BEHIND for those that begin at or before RUN (its run's
 * latest begin), AHEAD (no earlier than BEHIND) for those after it. */
struct horizon {
	int64_t run, behind, ahead;
};

/* The horizons of thread T's slices, a window of L's behind its run's
 * latest begin and behind its latest of all (INT64_MIN: none forgotten). */
static struct horizon horizon_of(const cm_pflanes *l, const struct thr *t)
{
	struct horizon h;
	h.run = t->latest;
	h.behind = t->latest > INT64_MIN + l->window ? t->latest - l->window : INT64_MIN;
	h.ahead = t->top > INT64_MIN + l->window ? t->top - l->window : INT64_MIN;
	return h;
}

/* 1 when the slice [B, E] is kept (its end not before its horizon). */
static inline int kept(const struct horizon *h, int64_t b, int64_t e)
{
	return e >= (b > h->run ? h->ahead : h->behind);
}

/* Append the nodes of T that H keeps, in order, to l->stack (from *K),
 * from the old nodes OLD. */
static void collect(cm_pflanes *l, const struct node *old, uint32_t t, const struct horizon *h, size_t *k)
{
	if (!t || old[t].maxe < h->behind)
		return;
	collect(l, old, old[t].l, h, k);
	if (kept(h, old[t].b, old[t].e))
		l->stack[(*k)++] = t;
	collect(l, old, old[t].r, h, k);
}

/* Copy the nodes of a lane's treap (old numbers IDX[0..K), in order) into
 * l->n from l->nnode, counted in l->nn, and make a treap of them (a
 * Cartesian tree, built in one pass); returns its root.  PATH: room for K
 * numbers. */
static uint32_t build(cm_pflanes *l, const struct node *old, const uint32_t *idx, size_t k, uint32_t *path)
{
	uint32_t first = (uint32_t)l->nnode;
	size_t i;
	for (i = 0; i < k; i++) {
		uint32_t x = (uint32_t)l->nnode++;
		l->n[x] = old[idx[i]];
		l->n[x].prio = prio(l);
	}
	l->nn += k;
	return cm_pflanes_cartesian(l->n, first, k, path);
}

/* Keep the slices of the in-order lane LN's list that H keeps, in order,
 * in place (no node to copy); returns how many.  Its earliest and latest
 * ends are worked out again (the latest only where some are forgotten), so
 * that the next rebuild skips a list that the window has not reached (most
 * lists, most times: a rebuild comes every few thousand slices, the window
 * is seconds). */
static size_t keep_listed(struct lane *ln, const struct horizon *h)
{
	struct ival *v = ln->list;
	size_t m = 0, k, n = ln->nlist;
	int64_t first = INT64_MAX, last = INT64_MIN;
	/* none forgotten (a list of the run: its slices all begin at or
	 * before its latest begin) */
	if (ln->firste >= h->ahead || (ln->maxb <= h->run && ln->firste >= h->behind))
		return n;
	if (ln->maxe < h->behind) { /* (a lane gone quiet) */
		ln->maxe = INT64_MIN;
		ln->firste = INT64_MAX;
		return ln->nlist = 0;
	}
	while (m < n && kept(h, v[m].b, v[m].e)) { /* nothing to move before the first forgotten */
		first = v[m].e < first ? v[m].e : first;
		last = v[m].e > last ? v[m].e : last;
		m++;
	}
	for (k = m; m < n; m++)
		if (kept(h, v[m].b, v[m].e)) {
			first = v[m].e < first ? v[m].e : first;
			last = v[m].e > last ? v[m].e : last;
			v[k++] = v[m];
		}
	ln->firste = first;
	ln->maxe = last;
	return ln->nlist = k;
}

/* Place the treaps' nodes again in CAP slots (CAP at least l->nn), and
 * filter the lists in place, forgetting the slices that end behind their
 * thread's horizons (struct horizon); l->nn counts what is kept, as many
 * slices as before however they are held. */
static void rebuild(cm_pflanes *l, size_t cap)
{
	struct node *old = l->n;
	size_t oldnode = l->nnode, i;
	unsigned j;
	uint32_t *path;
	l->stack = cm_xrealloc(l->stack, oldnode * sizeof *l->stack);
	path = cm_xmalloc(oldnode * sizeof *path); /* (build's) */
	/* not zeroed: every node is written whole before it is read (node 0,
	 * the children's "none", here; zeroing 640 KB a rebuild cost more
	 * than the rebuild) */
	l->n = cm_xmalloc(cap * sizeof *l->n);
	l->cap = cap;
	l->nn = l->nnode = 1;
	memset(&l->n[0], 0, sizeof l->n[0]);
	l->n[0].maxe = INT64_MIN;
	for (i = 0; i < l->thrslots; i++) {
		struct horizon h = horizon_of(l, &l->thr[i]);
		if (h.ahead > l->thr[i].gone) /* (ahead: no earlier than behind) */
			l->thr[i].gone = h.ahead;
		for (j = 0; j < l->thr[i].nlanes; j++) {
			struct lane *ln = &l->thr[i].lane[j];
			size_t k = 0;
			/* the treap (with a list before it, or none) */
			collect(l, old, ln->root, &h, &k);
			ln->minb = k ? old[l->stack[0]].b : INT64_MAX;
			ln->root = build(l, old, l->stack, k, path);
			if (!ln->sorted)
				continue;
			l->nn += keep_listed(ln, &h);
			/* and the open chain: its innermost end first (one kept,
			 * all kept: those around it end no earlier, and begin
			 * no later) */
			while (ln->nopen && !kept(&h, ln->open[ln->nopen - 1].b, ln->open[ln->nopen - 1].e))
				ln->nopen--;
			if (!kept(&h, ln->maxb, ln->mine)) /* ties at maxb partly forgotten: the treap's to answer */
				cm_pflanes_unsort(l, ln);
		}
	}
	free(path);
	free(old);
}

/* (pflanes_int.h) The window first; a table still over half full grows up
 * to MAX_NODES, and past that the window narrows. */
void cm_pflanes_room(cm_pflanes *l)
{
	rebuild(l, l->cap);
	while (l->nn * 2 > l->cap) {
		if (l->cap < MAX_NODES)
			rebuild(l, l->cap * 2);
		else if (l->window > 1)
			l->window /= 2, rebuild(l, l->cap);
		else
			break; /* cannot be: the lanes hold what is open now */
	}
	if (l->nn == l->cap) /* only when that could not be */
		l->n = cm_xrealloc(l->n, (l->cap *= 2) * sizeof *l->n);
}
