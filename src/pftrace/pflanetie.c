/* pflanetie.c - what the lanes (pflanes.c) keep of the slices their
 * window forgets (pflanewin.c), so that a merge's runtime call tied with a
 * shorter CPU operator of its thread, placed long before, takes another
 * lane: a filter of the calls' (thread, begin), and each shard's table of
 * the slices that passed it.
 *
 * Why.  A merge's runtime calls of a CPU thread reach the lanes from the
 * window after the CPU trace's slices of all threads, its operators long
 * forgotten by any bounded window.  A call that begins at the nanosecond
 * of a shorter operator of its thread went on the operator's lane: the
 * operator's begin first in the file, the call's after it, and the trace
 * processor closed the call with the operator's end (the JSON shows the
 * call around the operator).  The 200M pair has 503 such calls, on two
 * threads, 20,649 to 117,871 slices of their shard after their operator
 * (BENCHMARKS.md "lanes26").  lanes26 kept every slice placed in a lossy
 * table of 3 MiB a shard: +35 % of the lanes' instructions, a cache miss a
 * slice (bench/exp/lanes-gone.diff, not landed).
 *
 * How.  The merge knows every runtime call's thread and begin before the
 * CPU trace's slices are placed: its plan reads the window's records
 * first (src/mergepft.c's cm_mergepft_ties notes each API call there,
 * with the thread and begin the encoder will give the lanes).  So the
 * calls' (thread, begin) go into a filter (struct cm_pfties: a Bloom
 * filter of one 64-bit word a key, 4 bits of it set, 16 to 32 bits a
 * call), and the lanes, while they place the slices before the window's
 * (cm_pflanes_ties: the CPU trace's), keep only those that pass it, in a
 * small exact table of the shard, (thread, begin, lane) to the shortest
 * duration (struct tie).  A slice placed behind the horizon its thread's
 * lanes forgot by (struct thr's GONE: nothing forgotten begins at or after
 * it) skips a lane where the table has a slice of its thread that began at
 * its nanosecond and was shorter (cm_pflanes_tied; lanes26's rule).  The
 * filter has no false negative (every call is found: tests/unit/
 * check_pflanetie.c); its false positives (about 1 % of the CPU slices
 * asked, at 16 bits a call) only cost the table an entry each.  Asked once
 * a slice placed before the window's: a hash and one word, the same line
 * for the few bits; the table is asked only behind the horizon.
 *
 * Bounds.  The filter takes 16 to 32 bits a call, at most FILTER_MAX
 * bytes (past 4 M calls fewer bits a call: more false positives).  A
 * shard's table holds at most TIE_MAX entries: a slice that passes the
 * filter once it is full is not kept, and a call tied with it goes where
 * the window alone puts it, as before.  Without a filter (a JSON trace
 * converted alone, a merge with a repair) nothing is kept: the lanes are
 * as before. */
#include "config.h"
#include "pftrace/pflanes_int.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

/* The filter's words: at least 64 (512 bytes), at most FILTER_MAX bytes
 * (8 MiB: 16 bits a call up to 4 M calls, a 1 GB window's order). */
#define FILTER_MIN_WORDS 64
#define FILTER_MAX ((size_t)8 << 20)
/* A shard's table: at most this many entries (32 bytes each, 2 MiB; the
 * 200M pair needs a few hundred). */
#define TIE_MAX ((size_t)1 << 16)

cm_pfties *cm_pfties_new(uint64_t n)
{
	cm_pfties *f = cm_xcalloc(1, sizeof *f);
	size_t words = FILTER_MIN_WORDS;
	/* 16 bits a call or more: one word a key, 4 of its 64 bits set, so a
	 * word holds 4 calls on average; about 0.5-1 % false positives */
	while (words < n / 4 && words * sizeof *f->w < FILTER_MAX)
		words *= 2;
	f->w = cm_xcalloc(words, sizeof *f->w);
	f->mask = words - 1;
	return f;
}

void cm_pfties_free(cm_pfties *f)
{
	if (!f)
		return;
	free(f->w);
	free(f);
}

size_t cm_pfties_bytes(const cm_pfties *f) { return f ? (f->mask + 1) * sizeof *f->w : 0; }

void cm_pfties_add(cm_pfties *f, uint64_t thread, int64_t b, unsigned kind)
{
	uint64_t h = cm_pfties_hash(thread, b), m = cm_pfties_bits(h);
	/* (any thread, any order: an OR of bits is the same in every order) */
	__atomic_fetch_or(&f->w[h & f->mask], kind == CM_PFTIES_SPAN ? cm_pfties_span_bits(m) : m, __ATOMIC_RELAXED);
	if (!(cm_pfties_kinds(f, thread) & kind)) /* (a thread's bit: set once) */
		__atomic_fetch_or(&f->thr[kind == CM_PFTIES_SPAN], (uint64_t)1 << (thread & 63), __ATOMIC_RELAXED);
}

/* ---- each shard's table of the slices that passed the filter ---- */

/* The slot of (THREAD, B, LANE) in a table of MASK + 1 slots. */
static size_t tie_slot(uint64_t thread, int64_t b, unsigned lane, size_t mask)
{
	return (size_t)(cm_pfties_hash(thread ^ (uint64_t)lane << 48, b) >> 7) & mask;
}

/* L's table doubled (or made: 64 slots). */
static void tie_grow(cm_pflanes *l)
{
	size_t n = l->tiecap ? l->tiecap * 2 : 64, i, j;
	struct tie *t = cm_xcalloc(n, sizeof *t);
	for (i = 0; i < l->tiecap; i++) {
		const struct tie *o = &l->tie[i];
		if (!o->used)
			continue;
		for (j = tie_slot(o->thread, o->b, o->lane, n - 1); t[j].used; j = (j + 1) & (n - 1))
			;
		t[j] = *o;
	}
	free(l->tie);
	l->tie = t;
	l->tiecap = n;
}

void cm_pflanes_tie_keep(cm_pflanes *l, uint64_t thread, int64_t b, int64_t e, unsigned lane)
{
	size_t j;
	if ((l->ntie + 1) * 2 > l->tiecap) {
		if (l->ntie >= TIE_MAX) { /* full: not kept (cm_pflanes_tied then misses it) */
			l->tielost++;
			return;
		}
		tie_grow(l);
	}
	for (j = tie_slot(thread, b, lane, l->tiecap - 1); l->tie[j].used; j = (j + 1) & (l->tiecap - 1))
		if (l->tie[j].thread == thread && l->tie[j].b == b && l->tie[j].lane == lane) {
			if (e - b < l->tie[j].dur) /* (the shortest decides) */
				l->tie[j].dur = e - b;
			return;
		}
	l->tie[j].used = 1;
	l->tie[j].thread = thread;
	l->tie[j].b = b;
	l->tie[j].dur = e - b;
	l->tie[j].lane = lane;
	l->ntie++;
}

int cm_pflanes_tied(const cm_pflanes *l, uint64_t thread, int64_t b, int64_t e, unsigned lane)
{
	size_t j;
	for (j = tie_slot(thread, b, lane, l->tiecap - 1); l->tie[j].used; j = (j + 1) & (l->tiecap - 1))
		if (l->tie[j].thread == thread && l->tie[j].b == b && l->tie[j].lane == lane)
			return l->tie[j].dur < e - b;
	return 0;
}

void cm_pflanes_ties(cm_pflanes *l, const cm_pfties *f, unsigned kinds)
{
	size_t i;
	if (f != l->tiefilter) /* (each thread's kinds, as thread_of gives a new one) */
		for (i = 0; i < l->thrslots; i++)
			l->thr[i].tiekinds = f && l->thr[i].thread ? (unsigned char)cm_pfties_kinds(f, l->thr[i].thread) : 0;
	l->tiefilter = f;
	l->ties = kinds ? f : NULL;
	l->tiekinds = f ? kinds : 0;
}

unsigned long cm_pflanes_kept(const cm_pflanes *l, unsigned long *lost)
{
	if (lost)
		*lost = l->tielost;
	return l->ntie;
}
