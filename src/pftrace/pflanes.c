/* pflanes.c - which track of its thread a slice goes on, so that the trace
 * processor pairs each slice's begin with its own end.
 *
 * A slice is a SLICE_BEGIN and a SLICE_END packet; the trace processor
 * sorts packets by time, ties in file order, and an end closes the
 * innermost open slice of its track.  So the slices of one track must
 * nest, and ties must come in an order that keeps them nested.  JSON
 * allows what that cannot take:
 *   - two slices that overlap without nesting (one begins inside the
 *     other and ends after it: a CUDA sync on a stream row over the end
 *     of a memcpy, as CUPTI reports them).  The end of the one that
 *     begins later would close the other.  Perfetto's JSON import drops
 *     the later one (its stat slice_drop_overlapping_complete_event);
 *   - two slices of a thread that begin at the same nanosecond with the
 *     shorter first in the file (the end of the shorter would close the
 *     longer);
 *   - a slice that ends at the nanosecond where one written earlier
 *     begins (the begin would come first and be closed instead).
 *     Merged traces have these ties: a GPU annotation span begins at the
 *     nanosecond of its first kernel and is written after all of them.
 * So each slice of non-zero duration is checked against the slices
 * written before on its thread's track (lane 0); on a clash it goes to
 * lane 1, a second track of the same thread (Perfetto shows it as a
 * thread track of that thread, below the first), or on, to the first lane
 * without a clash.  Nothing is dropped: where the JSON import drops a
 * slice, the .pftrace shows it on a lane of its own thread.  A slice of
 * zero duration never clashes (its begin and end are next to each other
 * in the file).
 *
 * The slices of a lane nest, so the check needs three questions of them
 * (place() says which), each answered by a descent of a treap of the
 * lane's slices ordered by (begin, end descending), every node holding the
 * latest end under it: O(log n) a slice, in whatever order the slices come
 * (a CPU thread's come mostly by their end, inner first).  The slices are
 * remembered while they end within a window of trace time behind the
 * latest begin of their thread's run (ties and overlaps are near in time,
 * however far apart in the file; a long slice still open is kept; a run:
 * the thread's slices since one came more than a window behind the latest
 * begin then, as a merge's runtime calls come from the window after the
 * CPU trace's slices of their thread; pflanewin.c says why the thread's and
 * not the shard's): WINDOW_NS, halved whenever the slices remembered (in
 * nodes or in lists, below) would pass MAX_NODES after forgetting what is
 * older, so memory stays bounded on any trace.  Of what is forgotten, a
 * merge's lanes keep the slices that its runtime calls or GPU spans, which
 * come last, may tie with (pflanetie.c: a filter of theirs): a slice that
 * begins at the nanosecond of a shorter one kept does not go on its lane
 * (the 200M pair's 503 spans, BENCHMARKS.md "lanes27").  One that clashes
 * otherwise only with one forgotten goes where it would without it.  The
 * threads are shared out among
 * CM_PF_SHARDS of these, each with its own window, on the -j threads
 * (pflaneq.c); the count is fixed, so the lanes do not depend on -j.
 *
 * "B" and "E" events take no lane: their slice's end is not known at the
 * begin (the "E" may come batches later, or never), and the trace
 * processor must pair them itself, by name and category, as the JSON
 * import does.  They go on a track of their own under the thread's, apart
 * from these (pftrack.c's cm_pf_event_uuid).
 *
 * This file places the slices: the threads' lanes, the treap and its
 * questions, the lanes whose slices come in order.  The window, what is
 * forgotten and how the nodes are placed again, is pflanewin.c's; what
 * is kept for the ties, pflanetie.c's; pflanes_int.h holds what they
 * share. */
#include "config.h"
#include "pftrace/pflanes_int.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

cm_pflanes *cm_pflanes_new(void)
{
	cm_pflanes *l = cm_xcalloc(1, sizeof *l);
	l->cap = 1024;
	l->n = cm_xcalloc(l->cap, sizeof *l->n);
	l->nn = l->nnode = 1;
	l->n[0].maxe = INT64_MIN;
	l->thrslots = 16;
	l->thr = cm_xcalloc(l->thrslots, sizeof *l->thr);
	l->window = WINDOW_NS;
	l->rng = 0x9E3779B97F4A7C15u;
	return l;
}

void cm_pflanes_free(cm_pflanes *l)
{
	size_t i;
	if (!l)
		return;
	for (i = 0; i < l->thrslots; i++) {
		unsigned j;
		for (j = 0; j < l->thr[i].nlanes; j++) {
			free(l->thr[i].lane[j].open);
			free(l->thr[i].lane[j].list);
		}
		free(l->thr[i].lane);
	}
	free(l->thr);
	free(l->n);
	free(l->stack);
	free(l->tie);
	free(l);
}

/* The lanes of THREAD, made when new. */
static struct thr *thread_of(cm_pflanes *l, uint64_t thread)
{
	size_t j, i;
	for (j = thread & (l->thrslots - 1); l->thr[j].thread; j = (j + 1) & (l->thrslots - 1))
		if (l->thr[j].thread == thread)
			return &l->thr[j];
	if ((l->nthr + 1) * 2 > l->thrslots) {
		struct thr *old = l->thr;
		size_t n = l->thrslots;
		l->thrslots *= 2;
		l->thr = cm_xcalloc(l->thrslots, sizeof *l->thr);
		for (i = 0; i < n; i++) {
			if (!old[i].thread)
				continue;
			for (j = old[i].thread & (l->thrslots - 1); l->thr[j].thread; j = (j + 1) & (l->thrslots - 1))
				;
			l->thr[j] = old[i];
		}
		free(old);
		for (j = thread & (l->thrslots - 1); l->thr[j].thread; j = (j + 1) & (l->thrslots - 1))
			;
	}
	l->thr[j].thread = thread;
	l->thr[j].latest = l->thr[j].top = l->thr[j].gone = INT64_MIN;
	l->thr[j].tiekinds = l->tiefilter ? (unsigned char)cm_pfties_kinds(l->tiefilter, thread) : 0;
	l->nthr++;
	return &l->thr[j];
}

/* ---- the treap ---- */

static void update(struct node *n, uint32_t t)
{
	int64_t m = n[t].e;
	if (n[n[t].l].maxe > m)
		m = n[n[t].l].maxe;
	if (n[n[t].r].maxe > m)
		m = n[n[t].r].maxe;
	n[t].maxe = m;
}

void cm_pflanes_fix_maxe(struct node *n, uint32_t t)
{
	if (!t)
		return;
	cm_pflanes_fix_maxe(n, n[t].l);
	cm_pflanes_fix_maxe(n, n[t].r);
	update(n, t);
}

/* 1 when node X comes before node T: by begin, then the longer first. */
static int before(const struct node *n, uint32_t x, uint32_t t)
{
	return n[x].b < n[t].b || (n[x].b == n[t].b && n[x].e > n[t].e);
}

/* Insert node X in the treap T; returns the new root.  No recursion: down
 * to where X's priority puts it (below every node of a priority at least
 * its own, as rotations after a leaf's insertion would put it), raising
 * the latest ends on the way; there the subtree is split in two by X's
 * order, as X's children, and the split's nodes get their latest ends
 * again from the bottom up (a treap is shallow: past SPLIT_MAX of them, the
 * whole subtree's are worked out again). */
#define SPLIT_MAX 128

/* The latest ends of the DEPTH nodes of PATH (each below the one before)
 * worked out again from the bottom up; past SPLIT_MAX of them (PATH holds
 * the first SPLIT_MAX), those of the whole subtree TOP. */
static void update_path(struct node *n, const uint32_t *path, size_t depth, uint32_t top)
{
	if (depth > SPLIT_MAX) {
		cm_pflanes_fix_maxe(n, top);
		return;
	}
	while (depth-- > 0)
		update(n, path[depth]);
}

static uint32_t insert(struct node *n, uint32_t t, uint32_t x)
{
	uint32_t root = t, *link = &root, *left, *right, path[SPLIT_MAX];
	size_t depth = 0;
	while ((t = *link) && n[t].prio >= n[x].prio) {
		if (n[x].e > n[t].maxe)
			n[t].maxe = n[x].e;
		link = before(n, x, t) ? &n[t].l : &n[t].r;
	}
	*link = x;
	left = &n[x].l, right = &n[x].r;
	while (t) {
		if (depth < SPLIT_MAX)
			path[depth] = t;
		depth++;
		if (before(n, x, t)) { /* T and its right after X */
			*right = t;
			right = &n[t].l;
			t = n[t].l;
		} else {
			*left = t;
			left = &n[t].r;
			t = n[t].r;
		}
	}
	*left = *right = 0;
	update_path(n, path, depth, x);
	update(n, x); /* (again after fix_maxe: the same value) */
	return root;
}

/* Insert node X in the treap T when it begins at or after the end of every
 * node of T (T not empty): X comes last in order, so it goes down T's right
 * spine to where its priority puts it, with T's rest there as its left, no
 * rotation; and its end is the latest of every node above it.  A stream
 * row's kernels, one after another, mostly come so.  Returns the new root. */
static uint32_t append(struct node *n, uint32_t t, uint32_t x)
{
	uint32_t root = t, parent = 0;
	while (t && n[t].prio >= n[x].prio) {
		n[t].maxe = n[x].e;
		parent = t;
		t = n[t].r;
	}
	n[x].l = t; /* (its maxe: its own end, later than any there) */
	if (!parent)
		return x;
	n[parent].r = x;
	return root;
}

/* The treap of the nodes of A and of B (neither empty), all of A's before
 * all of B's in order: down A's right spine and B's left one, the higher
 * priority on top at each step, then the latest ends worked out again on
 * the way back (as insert's split does). */
static uint32_t join(struct node *n, uint32_t a, uint32_t b)
{
	uint32_t root = 0, *link = &root, path[SPLIT_MAX], t;
	size_t depth = 0;
	while (a && b) {
		if (n[a].prio >= n[b].prio) {
			t = *link = a;
			link = &n[a].r;
			a = n[a].r;
		} else {
			t = *link = b;
			link = &n[b].l;
			b = n[b].l;
		}
		if (depth < SPLIT_MAX)
			path[depth] = t;
		depth++;
	}
	*link = a ? a : b;
	update_path(n, path, depth, root);
	return root;
}

/* 1 when a slice of T begins at B and ends before E. */
static int shorter_at(const struct node *n, uint32_t t, int64_t b, int64_t e)
{
	while (t) {
		if (n[t].b == b && n[t].e < e)
			return 1;
		t = n[t].b < b || (n[t].b == b && n[t].e >= e) ? n[t].r : n[t].l;
	}
	return 0;
}

/* The latest end of the slices of T that begin in (LO, HI]. */
static int64_t latest_end(const struct node *n, uint32_t t, int64_t lo, int64_t hi)
{
	int64_t m = INT64_MIN;
	uint32_t s;
	while (t && !(n[t].b > lo && n[t].b <= hi)) /* down to the first node in range */
		t = n[t].b <= lo ? n[t].r : n[t].l;
	if (!t)
		return m;
	m = n[t].e;
	for (s = n[t].l; s;) /* its left: all begin at or before HI */
		if (n[s].b > lo) {
			m = n[s].e > m ? n[s].e : m;
			m = n[n[s].r].maxe > m ? n[n[s].r].maxe : m;
			s = n[s].l;
		} else {
			s = n[s].r;
		}
	for (s = n[t].r; s;) /* its right: all begin after LO */
		if (n[s].b <= hi) {
			m = n[s].e > m ? n[s].e : m;
			m = n[n[s].l].maxe > m ? n[n[s].l].maxe : m;
			s = n[s].r;
		} else {
			s = n[s].l;
		}
	return m;
}

/* The end of the innermost slice of T that begins before B and ends after
 * it (the slices of a lane nest, so those around B are a chain, and the
 * innermost is the last of them in the treap's order), or INT64_MAX when
 * there is none. */
static int64_t around_deep(const struct node *n, uint32_t t, int64_t b);
static int64_t around(const struct node *n, uint32_t t, int64_t b)
{
	/* around_deep's search, its way back on a stack: a node that begins
	 * before B waits there while its right is searched (later in order),
	 * then answers, or its left is searched */
	uint32_t stack[SPLIT_MAX];
	size_t depth = 0;
	for (;;) {
		while (t && n[t].maxe > b) {
			if (n[t].b < b) {
				if (depth == SPLIT_MAX) { /* (never at a treap's depths) */
					int64_t x = around_deep(n, t, b);
					if (x != INT64_MAX)
						return x;
					break; /* T's subtree searched: on with the stack */
				}
				stack[depth++] = t;
				t = n[t].r;
			} else {
				t = n[t].l;
			}
		}
		if (!depth)
			return INT64_MAX;
		t = stack[--depth];
		if (n[t].e > b)
			return n[t].e;
		t = n[t].l;
	}
}

/* around() by recursion, for a treap deeper than its stack. */
static int64_t around_deep(const struct node *n, uint32_t t, int64_t b)
{
	int64_t x;
	if (!t || n[t].maxe <= b)
		return INT64_MAX;
	if (n[t].b < b) {
		if ((x = around_deep(n, n[t].r, b)) != INT64_MAX)
			return x;
		if (n[t].e > b)
			return n[t].e;
	}
	return around_deep(n, n[t].l, b);
}

/* 1 when the slice [B, E] (E > B) cannot go on the lane T:
 *   - a slice of the lane begins at B and is shorter (a tie of begins,
 *     the shorter first in the file);
 *   - one begins after B, at E at the latest, and ends after E (it
 *     overlaps the end of this one, or begins where this one ends);
 *   - the innermost one around B ends before E (this one overlaps its end). */
static int clashes(const struct node *n, uint32_t t, int64_t b, int64_t e)
{
	if (n[t].maxe <= b) /* all end by B (a stream's kernels, one after another) */
		return 0;
	return shorter_at(n, t, b, e) || latest_end(n, t, b, e) > e || around(n, t, b) < e;
}

/* ---- lanes whose slices come in order ----
 * While a lane is asked about slices in the order of their begins, the
 * three questions of clashes() have answers kept at hand: no slice of the
 * lane begins after B (so none in (B, E]); those beginning at B are the
 * latest begins (MAXB), the shortest ending at MINE; and the innermost
 * slice around B is the innermost of the open chain that begins before B,
 * once the chain has dropped what ends by B (B only grows, so they never
 * come back).  A new slice then comes last in the treap's order, so the
 * lane's slices are only listed, in order, with no treap: the list holds
 * their begins and ends itself (16 bytes a slice), no node each (40, a
 * priority drawn, and copied at every rebuild: 14% of the lanes'
 * instructions on the 50,000-op pair, BENCHMARKS.md "lanes24"); the lane
 * makes its treap from the list when a slice comes out of order, nodes
 * then (a Cartesian tree, in one pass).  The window forgets the same
 * slices either way (a listed slice counts toward the table's fullness as
 * a node does; pflanewin.c filters the list in place), so the answers,
 * and the lanes, are the treap's.
 *
 * The list may also begin in front of a treap: a slice [B, E] that ends
 * before the treap's earliest begin (MINB) clashes with none of the
 * treap's (none begins at B, in (B, E] or before B), so while the slices
 * asked about come in order and end before MINB, the list alone answers.
 * A CPU thread's runtime calls come so: the window's, in order, after the
 * CPU trace's slices, of which the thread's lane remembers only the last
 * (the window of trace time behind the thread's latest begin of all, which
 * they reach at the end); in the treap each
 * cost about 940 instructions, a quarter of the 50,000-op pair's slices
 * and half of the lanes' instructions, on the busiest shards (BENCHMARKS.md
 * "lanes23").  A slice out of order, or one that reaches MINB, puts the
 * list's slices into the treap (all come before all of the treap's: a
 * treap of them, joined with it), the treap they would have made without
 * the list: never more work than the treap's alone. */

uint32_t cm_pflanes_cartesian(struct node *n, uint32_t first, size_t k, uint32_t *path)
{
	size_t i, depth = 0;
	/* A node leaves the path once every node of its subtree is placed:
	 * its left was set when it came (nodes that had left the path), its
	 * right is the node above it on the path, which left just before it.
	 * So its latest end is worked out as it leaves, once, bottom up: no
	 * second pass by recursion over the tree (cm_pflanes_fix_maxe's after
	 * it: 1.6 M of the 1,981 M instructions of the 50k pair's .pftrace
	 * merge, BENCHMARKS.md "pfcpu16"). */
	for (i = 0; i < k; i++) {
		uint32_t x = first + (uint32_t)i, last = 0;
		n[x].l = n[x].r = 0;
		while (depth && n[path[depth - 1]].prio < n[x].prio) {
			last = path[--depth];
			update(n, last);
		}
		n[x].l = last;
		if (depth)
			n[path[depth - 1]].r = x;
		path[depth++] = x;
	}
	while (depth > 1)
		update(n, path[--depth]);
	if (!depth)
		return 0;
	update(n, path[0]);
	return path[0];
}

/* The lane LN's list begun, empty: it answers from now on (a new lane's;
 * or one whose next slice ends before its treap's earliest begin). */
static void list_begin(struct lane *ln)
{
	ln->sorted = 1;
	ln->nlist = ln->nopen = 0;
	ln->lastq = ln->maxb = ln->maxe = INT64_MIN;
	ln->mine = ln->firste = INT64_MAX;
}

void cm_pflanes_unsort(cm_pflanes *l, struct lane *ln)
{
	uint32_t first = (uint32_t)l->nnode;
	size_t k;
	/* (NN counts the listed slices already: their nodes fit below CAP) */
	for (k = 0; k < ln->nlist; k++) {
		struct node *x = &l->n[l->nnode++];
		x->b = ln->list[k].b;
		x->e = x->maxe = ln->list[k].e;
		x->l = x->r = 0;
		x->prio = prio(l);
	}
	if (ln->nlist) {
		/* a treap of them, then joined with the lane's (all of them
		 * before all of its: the treap that inserting them one by one
		 * would have made, a treap being its nodes' order and
		 * priorities, in O(k) and a descent; inserted one by one, the
		 * calls a thread's list holds within the window, which go into
		 * the treap when they reach the CPU trace's last slices, were
		 * 6.5 M of the 50,000-op pair's instructions, BENCHMARKS.md
		 * "lanes25") */
		uint32_t *path = cm_xmalloc(ln->nlist * sizeof *path);
		uint32_t list = cm_pflanes_cartesian(l->n, first, ln->nlist, path);
		free(path);
		ln->root = ln->root ? join(l->n, list, ln->root) : list;
	}
	if (ln->nlist)
		ln->minb = ln->list[0].b;
	ln->sorted = 0;
	free(ln->list);
	ln->list = NULL;
	ln->nlist = ln->caplist = 0;
}

/* clashes() for a lane in the in-order mode, B at least its lastq. */
static int sorted_clashes(struct lane *ln, int64_t b, int64_t e)
{
	size_t k;
	ln->lastq = b;
	if (ln->maxe <= b)
		return 0;
	if (b == ln->maxb && ln->mine < e)
		return 1;
	while (ln->nopen && ln->open[ln->nopen - 1].e <= b)
		ln->nopen--;
	for (k = ln->nopen; k-- > 0;)
		if (ln->open[k].b < b)
			return ln->open[k].e < e;
	return 0;
}

/* 1 when [B, E] cannot go on lane LN (clashes()): its list answers while
 * B comes in order and E before the treap's earliest begin; else its
 * treap, the list's slices put in it first. */
static int lane_clashes(cm_pflanes *l, struct lane *ln, int64_t b, int64_t e)
{
	if (ln->sorted && (b < ln->lastq || e >= ln->minb))
		cm_pflanes_unsort(l, ln);
	if (!ln->sorted && e < ln->minb)
		list_begin(ln);
	return ln->sorted ? sorted_clashes(ln, b, e) : clashes(l->n, ln->root, b, e);
}

/* Append the slice [B, E], the last in order, to the in-order lane LN's
 * list (no node: that is made if the list goes into the treap). */
static void sorted_append(struct lane *ln, int64_t b, int64_t e)
{
	if (ln->nlist == ln->caplist)
		ln->list = cm_xrealloc(ln->list, (ln->caplist = ln->caplist * 2 + 16) * sizeof *ln->list);
	ln->list[ln->nlist].b = b;
	ln->list[ln->nlist++].e = e;
	if (b > ln->maxb || ln->maxe == INT64_MIN)
		ln->maxb = b, ln->mine = e;
	else if (e < ln->mine)
		ln->mine = e;
	if (e > ln->maxe)
		ln->maxe = e;
	if (e < ln->firste)
		ln->firste = e;
	while (ln->nopen && ln->open[ln->nopen - 1].e <= b)
		ln->nopen--;
	if (ln->nopen == ln->capopen)
		ln->open = cm_xrealloc(ln->open, (ln->capopen = ln->capopen * 2 + 16) * sizeof *ln->open);
	ln->open[ln->nopen].b = b;
	ln->open[ln->nopen++].e = e;
	if (b > ln->lastq)
		ln->lastq = b;
}

unsigned cm_pflanes_place(cm_pflanes *l, uint64_t thread, int64_t b, int64_t e)
{
	struct thr *t;
	struct lane *ln;
	unsigned lane;
	uint32_t x;
	if (e <= b)
		return 0;
	t = thread_of(l, thread);
	/* its run's latest begin, or a new run's first (a window behind) */
	if (b > t->latest || (uint64_t)t->latest - (uint64_t)b > (uint64_t)l->window)
		t->latest = b;
	if (b > t->top)
		t->top = b;
	if (l->nn == l->cap) /* full: forget, grow or narrow (pflanewin.c) */
		cm_pflanes_room(l);
	/* the first lane without a clash and, behind what the lanes forgot,
	 * where no slice kept for its ties begins at B and is shorter; the
	 * slice kept where a call or span to come may tie with it
	 * (pflanetie.c) */
	for (lane = 0;; lane++) {
		for (; lane < t->nlanes && lane_clashes(l, &t->lane[lane], b, e); lane++)
			;
		if (lane == t->nlanes || !l->ntie || b >= t->gone || !cm_pflanes_tied(l, thread, b, e, lane))
			break;
	}
	if ((t->tiekinds & l->tiekinds) && cm_pfties_has(l->tiefilter, thread, b, t->tiekinds & l->tiekinds))
		cm_pflanes_tie_keep(l, thread, b, e, lane);
	if (lane == t->nlanes) {
		t->lane = cm_xrealloc(t->lane, (lane + 1) * sizeof *t->lane);
		memset(&t->lane[lane], 0, sizeof *t->lane);
		t->lane[lane].minb = INT64_MAX;
		list_begin(&t->lane[lane]);
		t->nlanes++;
	}
	ln = &t->lane[lane];
	l->nn++; /* (a node or a slice listed: the window counts both) */
	if (ln->sorted) {
		sorted_append(ln, b, e);
		l->fronts += ln->root != 0;
		return lane;
	}
	x = (uint32_t)l->nnode++;
	l->n[x].b = b;
	l->n[x].e = e;
	l->n[x].maxe = e;
	l->n[x].l = l->n[x].r = 0;
	l->n[x].prio = prio(l);
	if (ln->root && l->n[ln->root].maxe <= b) {
		ln->root = append(l->n, ln->root, x);
		l->appends++;
	} else {
		ln->root = insert(l->n, ln->root, x);
		if (b < ln->minb)
			ln->minb = b;
	}
	return lane;
}

unsigned long cm_pflanes_appends(const cm_pflanes *l)
{
	return l->appends;
}

unsigned long cm_pflanes_fronts(const cm_pflanes *l)
{
	return l->fronts;
}
