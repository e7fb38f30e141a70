/* pflanes_int.h - what the lanes' three files share: the placing
 * (pflanes.c, whose top says how the lanes work), the window that
 * forgets (pflanewin.c) and what is kept of the ties it forgets
 * (pflanetie.c). */
#ifndef CM_PFLANES_INT_H
#define CM_PFLANES_INT_H

#include "pftrace/pfintern.h"

#include <stddef.h>
#include <stdint.h>

/* How far behind its thread's latest begin a slice is remembered, at
 * first (trace ns; halved when the slices remembered, nodes and listed,
 * would pass MAX_NODES; struct thr says which latest begin). */
#define WINDOW_NS (10ll * 1000 * 1000 * 1000)
/* 10 MiB of nodes at most over the shards (pflaneq.c), each an eighth of
 * the one table's 5 MiB before them (a thread's window rarely needs it);
 * a slice listed (16 bytes) counts as a node, so that the window does not
 * depend on how the lanes hold their slices */
#define MAX_NODES ((1u << 17) / CM_PF_SHARDS * 2)

struct node {
	int64_t b, e;      /* the slice */
	int64_t maxe;      /* the latest end in the subtree */
	uint32_t l, r;     /* children (0: none; node 0 is unused) */
	uint32_t prio;     /* the treap's heap order */
};

/* A slice of a lane's list, or of its open chain. */
struct ival {
	int64_t b, e;
};

/* A lane: a treap of its slices; while they come in the order of their
 * begins (a CPU thread's, as Kineto writes them), a list of them in that
 * order instead, and what answers clashes() without a descent (see
 * sorted_clashes).  The list holds its slices itself, no node each: only
 * (b, e) of them is read until they go into the treap, where they get
 * their nodes (cm_pflanes_unsort).  The list may also come before a treap:
 * its slices all end before the treap's earliest begin (MINB), as a CPU
 * thread's runtime calls from the window do before the thread's last
 * slices, remembered from the CPU trace (pflanes.c's "lanes whose slices
 * come in order"). */
struct lane {
	uint32_t root;    /* the treap (0: none) */
	int64_t minb;     /* the earliest begin of the treap's slices (INT64_MAX: none) */
	int sorted;       /* the list answers: every query since it began came at a begin no earlier than the
			   * last, and ended before MINB */
	int64_t lastq;    /* sorted: the latest begin asked about */
	int64_t maxb, mine; /* sorted: the latest begin of a slice, the earliest end of those beginning there */
	int64_t maxe;     /* sorted: the latest end */
	int64_t firste;   /* sorted: the earliest end (a rebuild whose horizon is no later forgets none: no scan) */
	struct ival *open; /* sorted: the slices that end after lastq, outermost first (they nest) */
	size_t nopen, capopen;
	struct ival *list; /* sorted: the list's slices in order (not in the treap) */
	size_t nlist, caplist;
};

/* The lanes of a thread. */
struct thr {
	uint64_t thread; /* 0: an empty slot */
	unsigned nlanes;
	struct lane *lane;
	/* LATEST: the latest begin of its run, of its slices since one began
	 * more than the window before the latest begin then (that one began
	 * the run: a CPU thread's runtime calls, from the window, after the
	 * CPU trace's slices); TOP: the latest begin of all its slices.  Its
	 * lanes forget what ends a window behind LATEST, or behind TOP where
	 * it begins after LATEST (pflanewin.c) */
	int64_t latest, top;
	/* the latest horizon its lanes forgot by: nothing forgotten begins at
	 * or after it, so a slice there needs no question of the ties kept
	 * (pflanetie.c; rebuild() in pflanewin.c sets it) */
	int64_t gone;
	/* the kinds of key the filter of ties may have of the thread
	 * (cm_pfties_kinds): its slices are asked about these alone */
	unsigned char tiekinds;
};

/* A slice kept for its ties (pflanetie.c): its thread, begin and lane, and
 * the shortest duration of those kept there. */
struct tie {
	uint64_t thread;
	int64_t b, dur;
	uint32_t lane, used;
};

struct cm_pflanes {
	struct node *n;
	/* NN: the slices remembered, node 0 included, in nodes and in lists
	 * alike: the table is full when NN reaches CAP, so that the window
	 * forgets at the same counts however the lanes hold their slices, and
	 * a list's slices, which take nodes when it goes into a treap, always
	 * find them below CAP.  NNODE: the next node (NNODE <= NN).  CAP: the
	 * nodes allocated. */
	size_t nn, nnode, cap;
	unsigned long appends; /* slices placed by append() (for the tests) */
	unsigned long fronts;  /* slices placed on a list in front of a treap (for the tests) */
	struct thr *thr;
	size_t nthr, thrslots;
	int64_t window; /* of this shard's threads (pflaneq.c), behind each's own latest begins */
	uint64_t rng;
	uint32_t *stack; /* for rebuilding: one lane's treap's nodes in order */
	/* the ties (pflanetie.c): the filter of the slices to keep (NULL:
	 * none), the kinds of its keys kept now (0: none kept), and the table
	 * of those kept, open addressing */
	const cm_pfties *tiefilter;
	unsigned tiekinds; /* (cm_pflanes_ties) */
	struct tie *tie;
	size_t ntie, tiecap;
	unsigned long tielost;
};

/* A pseudo-random priority (xorshift64*: the same file on every run). */
static inline uint32_t prio(cm_pflanes *l)
{
	l->rng ^= l->rng >> 12;
	l->rng ^= l->rng << 25;
	l->rng ^= l->rng >> 27;
	return (uint32_t)((l->rng * 0x2545F4914F6CDD1Du) >> 32);
}

/* ---- pflanes.c */

/* The latest ends of T's subtree worked out again, from the bottom up. */
void cm_pflanes_fix_maxe(struct node *n, uint32_t t);
/* The treap of the K nodes FIRST..FIRST+K-1 of N, in order, their
 * priorities set (a Cartesian tree, in one pass, with the latest ends);
 * its root (0 when K is 0).  PATH: room for K numbers. */
uint32_t cm_pflanes_cartesian(struct node *n, uint32_t first, size_t k, uint32_t *path);
/* The lane LN leaves the in-order mode: its list's slices get nodes (from
 * l->nnode: the table has room, NN counting them) and go into its treap
 * (made from them when it has none), which answers from now on. */
void cm_pflanes_unsort(cm_pflanes *l, struct lane *ln);

/* ---- pflanewin.c */

/* Make room for one more slice in L's full table (NN at CAP): forget what
 * is out of the window, grow, or narrow the window. */
void cm_pflanes_room(cm_pflanes *l);

/* ---- pflanetie.c */

/* The slice [B, E] of THREAD placed on LANE kept in L's table (its
 * shortest duration at (THREAD, B, LANE) kept), unless the table is full. */
void cm_pflanes_tie_keep(cm_pflanes *l, uint64_t thread, int64_t b, int64_t e, unsigned lane);
/* 1 when L's table has a slice of THREAD on LANE that begins at B and is
 * shorter than [B, E] (its table not empty). */
int cm_pflanes_tied(const cm_pflanes *l, uint64_t thread, int64_t b, int64_t e, unsigned lane);

#endif
