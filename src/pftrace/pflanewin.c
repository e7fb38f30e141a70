/* pflanewin.c - the lanes' window (pflanes.c): the slices forgotten once
 * they end a window of trace time behind the latest begin, the nodes left
 * placed again (a lane's treap made again, its list, if it has one, kept),
 * and the node table grown, or the window halved when it would pass
 * MAX_NODES.  Apart from the placing, which calls it only when its table
 * is full (pflanes_int.h: what the two share). */
#include "config.h"
#include "pftrace/pflanes_int.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

/* Append the nodes of T that end at or after HORIZON, in order, to
 * l->stack (from *K), from the old nodes OLD. */
static void collect(cm_pflanes *l, const struct node *old, uint32_t t, int64_t horizon, size_t *k)
{
	if (!t || old[t].maxe < horizon)
		return;
	collect(l, old, old[t].l, horizon, k);
	if (old[t].e >= horizon)
		l->stack[(*k)++] = t;
	collect(l, old, old[t].r, horizon, k);
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

/* Place the treaps' nodes again in CAP slots (CAP at least l->nn), and
 * filter the lists in place, forgetting the slices that end before the
 * window; l->nn counts what is kept, as many slices as before however
 * they are held. */
static void rebuild(cm_pflanes *l, size_t cap)
{
	struct node *old = l->n;
	size_t oldnode = l->nnode, i;
	unsigned j;
	uint32_t *path;
	int64_t horizon = l->latest > INT64_MIN + l->window ? l->latest - l->window : INT64_MIN;
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
	for (i = 0; i < l->thrslots; i++)
		for (j = 0; j < l->thr[i].nlanes; j++) {
			struct lane *ln = &l->thr[i].lane[j];
			size_t k = 0, m;
			/* the treap (with a list before it, or none) */
			collect(l, old, ln->root, horizon, &k);
			ln->minb = k ? old[l->stack[0]].b : INT64_MAX;
			ln->root = build(l, old, l->stack, k, path);
			if (!ln->sorted)
				continue;
			/* the list kept in order, in place, less what ends
			 * before the window (no node to copy) */
			k = 0;
			ln->maxe = INT64_MIN;
			for (m = 0; m < ln->nlist; m++)
				if (ln->list[m].e >= horizon) {
					ln->list[k++] = ln->list[m];
					if (ln->list[m].e > ln->maxe)
						ln->maxe = ln->list[m].e;
				}
			ln->nlist = k;
			l->nn += k;
			/* and the open chain: its innermost end first */
			while (ln->nopen && ln->open[ln->nopen - 1].e < horizon)
				ln->nopen--;
			if (ln->mine < horizon) /* ties at maxb partly forgotten: the treap's to answer */
				cm_pflanes_unsort(l, ln);
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

