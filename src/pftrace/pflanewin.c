/* pflanewin.c - the lanes' window (pflanes.c): the slices forgotten once
 * they end a window of trace time behind the latest begin, the treaps'
 * nodes left placed again (a lane's treap made again) and the lists' slices
 * kept in place, and the node table grown, or the window halved when the
 * slices remembered would pass MAX_NODES.  Apart from the placing, which
 * calls it only when its table is full, listed slices counted
 * (pflanes_int.h: what the two share). */
#include "config.h"
#include "pftrace/pflanes_int.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

/* Append the nodes of T that end at or after HORIZON and begin at or
 * before FRONT, in order, to l->stack (from *K), from the old nodes OLD. */
static void collect(cm_pflanes *l, const struct node *old, uint32_t t, int64_t horizon, int64_t front, size_t *k)
{
	if (!t || old[t].maxe < horizon)
		return;
	collect(l, old, old[t].l, horizon, front, k);
	if (old[t].b > front) /* (and all on its right) */
		return;
	if (old[t].e >= horizon)
		l->stack[(*k)++] = t;
	collect(l, old, old[t].r, horizon, front, k);
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

/* Keep the slices of the in-order lane LN's list that end at or after
 * HORIZON, in order, in place (no node to copy); returns how many.  The
 * list's latest end stays (the slice that ends then is kept) unless none
 * is kept; its earliest end is worked out again, so that the next rebuild
 * skips a list that the window has not reached (most lists, most times:
 * a rebuild comes every few thousand slices, the window is seconds). */
static size_t keep_listed(struct lane *ln, int64_t horizon)
{
	struct ival *v = ln->list;
	size_t m = 0, k, n = ln->nlist;
	int64_t first = INT64_MAX;
	if (ln->firste >= horizon) /* none forgotten */
		return n;
	if (ln->maxe < horizon) { /* (a lane gone quiet) */
		ln->maxe = INT64_MIN;
		ln->firste = INT64_MAX;
		return ln->nlist = 0;
	}
	while (m < n && v[m].e >= horizon) { /* nothing to move before the first forgotten */
		first = v[m].e < first ? v[m].e : first;
		m++;
	}
	for (k = m; m < n; m++)
		if (v[m].e >= horizon) {
			first = v[m].e < first ? v[m].e : first;
			v[k++] = v[m];
		}
	ln->firste = first;
	return ln->nlist = k;
}

/* Place the treaps' nodes again in CAP slots (CAP at least l->nn), and
 * filter the lists in place, forgetting the slices that end a window
 * behind their thread's latest begin (struct thr's) and, with AHEAD, those
 * that begin after it (an earlier run's); l->nn counts what is kept, as
 * many slices as before however they are held. */
static void rebuild(cm_pflanes *l, size_t cap, int ahead)
{
	struct node *old;
	size_t oldnode, i;
	unsigned j;
	uint32_t *path;
	if (ahead) /* a list with such slices goes into its treap, in the old table (NN counts it) */
		for (i = 0; i < l->thrslots; i++)
			for (j = 0; j < l->thr[i].nlanes; j++)
				if (l->thr[i].lane[j].sorted && l->thr[i].lane[j].nlist &&
				    l->thr[i].lane[j].maxb > l->thr[i].latest)
					cm_pflanes_unsort(l, &l->thr[i].lane[j]);
	old = l->n;
	oldnode = l->nnode;
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
		int64_t latest = l->thr[i].latest, front = ahead ? latest : INT64_MAX;
		int64_t horizon = latest > INT64_MIN + l->window ? latest - l->window : INT64_MIN;
		for (j = 0; j < l->thr[i].nlanes; j++) {
			struct lane *ln = &l->thr[i].lane[j];
			size_t k = 0;
			/* the treap (with a list before it, or none) */
			collect(l, old, ln->root, horizon, front, &k);
			ln->minb = k ? old[l->stack[0]].b : INT64_MAX;
			ln->root = build(l, old, l->stack, k, path);
			if (!ln->sorted)
				continue;
			l->nn += keep_listed(ln, horizon);
			/* and the open chain: its innermost end first */
			while (ln->nopen && ln->open[ln->nopen - 1].e < horizon)
				ln->nopen--;
			if (ln->mine < horizon) /* ties at maxb partly forgotten: the treap's to answer */
				cm_pflanes_unsort(l, ln);
		}
	}
	free(path);
	free(old);
}

/* (pflanes_int.h) The window first; a table still over half full grows up
 * to MAX_NODES, and past that forgets what is ahead of each thread's run,
 * then the window narrows. */
void cm_pflanes_room(cm_pflanes *l)
{
	int ahead = 0;
	rebuild(l, l->cap, 0);
	while (l->nn * 2 > l->cap) {
		if (l->cap < MAX_NODES)
			rebuild(l, l->cap * 2, ahead);
		else if (!ahead)
			rebuild(l, l->cap, ahead = 1);
		else if (l->window > 1)
			l->window /= 2, rebuild(l, l->cap, ahead);
		else
			break; /* cannot be: the lanes hold what is open now */
	}
	if (l->nn == l->cap) /* only when that could not be */
		l->n = cm_xrealloc(l->n, (l->cap *= 2) * sizeof *l->n);
}

