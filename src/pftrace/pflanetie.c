/* pflanetie.c - what the lanes (pflanes.c) keep of the slices their
 * window forgets (pflanewin.c) for the ties of a merge's slices written
 * last: a filter of those slices' (thread, begin), and each shard's table
 * of the slices placed before them that passed it.
 *
 * Why.  A merge writes, after the CPU trace's slices, the window's events,
 * and after those the gpu_user_annotation spans; each comes long after the
 * slices of its thread (or stream) it may tie with, forgotten by then by
 * any bounded window.  A slice that begins at the nanosecond of a shorter
 * one forgotten went on that one's lane: that one's begin first in the
 * file, the later one's after it, and the trace processor closed the later
 * one with that one's end (the JSON shows them the other way round).  Two
 * such ties: a runtime call at the nanosecond of a shorter CPU operator of
 * its thread (tests/e2e/pflanes.sh; none on the pairs), and a span drawn
 * from 1 ns before its first kernel as a double of microseconds
 * (gpu/gpurules.c's gpu_span_times), which far from the trace's zero is
 * the kernel's nanosecond: the 200M pair's 503, on two streams, 20,649 to
 * 117,871 slices of their shard after their kernel (BENCHMARKS.md
 * "lanes26", "lanes27").  lanes26 kept every slice placed in a lossy
 * table of 3 MiB a shard: +35 % of the lanes' instructions, a cache miss a
 * slice (bench/exp/lanes-gone.diff, not landed).
 *
 * How.  The merge knows both kinds of late slice before the CPU trace's
 * slices are placed: its plan reads the window's records first and makes
 * the spans (src/mergepft.c's cm_mergepft_ties notes each API call as the
 * plan reads it, and each span after it, with the thread and begin the
 * encoder will give the lanes).  They go into a filter (struct cm_pfties:
 * a Bloom filter of one 64-bit word a key, 4 bits of it set, a call's and
 * a span's apart, 16 to 32 bits a key; and a bit a thread of each kind).
 * The lanes keep (cm_pflanes_tie_keep) the slices that pass it: of the
 * text before the window's events (the CPU trace's), those a call or a
 * span may tie with; of the window's events, those a span may tie with;
 * of the spans and after, none (pflaneq.c says which batch is which:
 * cm_pflanes_ties).  A thread without a key of the kinds asked (most GPU
 * rows, the CPU threads once the window's events come) is not asked.  The
 * table is a small exact one of the shard, (thread, begin, lane) to the
 * shortest duration kept there (struct tie).  A slice placed behind the
 * horizon its thread's lanes forgot by (struct thr's GONE: nothing
 * forgotten begins at or after it) skips a lane where the table has a
 * slice of its thread that began at its nanosecond and was shorter
 * (cm_pflanes_tied; lanes26's rule).  The filter has no false negative
 * (every key added is found: tests/unit/check_pflanewin.c's ties_filter);
 * a false positive only costs an entry of the table (the 200M pair keeps
 * 5,389 slices).  A slice kept that is not forgotten changes nothing: the
 * window's own search finds the same clash.
 *
 * Bounds.  The filter takes 16 to 32 bits a call, at most FILTER_MAX
 * bytes (past 4 M keys fewer bits a key: more false positives).  A
 * shard's table holds at most TIE_MAX entries: a slice that passes the
 * filter once it is full is not kept, and a slice tied with it goes where
 * the window alone puts it, as before.  Without a filter (a JSON trace
 * converted alone, a merge with a repair, --split's files) nothing is
 * kept: the lanes are as before. */
#include "config.h"
#include "pftrace/pflanes_int.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

/* The filter's words: at least 64 (512 bytes), at most FILTER_MAX bytes
 * (8 MiB: 16 bits a call up to 4 M calls, a 1 GB window's order). */
#define FILTER_MIN_WORDS 64
#define FILTER_MAX ((size_t)8 << 20)
/* A shard's table: at most this many entries (32 bytes each, at most 4
 * MiB of slots at half full; the 200M pair keeps 5,389 over its shards). */
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
	uint64_t h = cm_pfties_hash(thread, b), m = cm_pfties_bits(h), bit = (uint64_t)1 << (thread & 63);
	uint64_t *tw = &f->thr[kind == CM_PFTIES_SPAN];
	/* (any thread, any order: an OR of bits is the same in every order) */
	__atomic_fetch_or(&f->w[h & f->mask], kind == CM_PFTIES_SPAN ? cm_pfties_span_bits(m) : m, __ATOMIC_RELAXED);
	/* a thread's bit: set once (read as an atomic too: other threads OR
	 * into the word meanwhile; cm_pfties_kinds reads it after the join) */
	if (!(__atomic_load_n(tw, __ATOMIC_RELAXED) & bit))
		__atomic_fetch_or(tw, bit, __ATOMIC_RELAXED);
}

/* ---- each shard's table of the slices that passed the filter ---- */

/* The slot of (THREAD, B, LANE) in a table of MASK + 1 slots. */
static size_t tie_slot(uint64_t thread, int64_t b, unsigned lane, size_t mask)
{
	return (size_t)(cm_pfties_hash(thread ^ (uint64_t)lane << 48, b) >> 7) & mask;
}

/* The slot of L's table that holds (THREAD, B, LANE), or the empty one
 * where it would go (the table is never full: kept at most half full). */
static size_t tie_find(const cm_pflanes *l, uint64_t thread, int64_t b, unsigned lane)
{
	size_t j = tie_slot(thread, b, lane, l->tiecap - 1);
	while (l->tie[j].used && !(l->tie[j].thread == thread && l->tie[j].b == b && l->tie[j].lane == lane))
		j = (j + 1) & (l->tiecap - 1);
	return j;
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
	j = tie_find(l, thread, b, lane);
	if (l->tie[j].used) {
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
	size_t j = tie_find(l, thread, b, lane);
	return l->tie[j].used && l->tie[j].dur < e - b;
}

void cm_pflanes_ties(cm_pflanes *l, const cm_pfties *f, unsigned kinds)
{
	size_t i;
	if (f != l->tiefilter) /* (each thread's kinds, as thread_of gives a new one) */
		for (i = 0; i < l->thrslots; i++)
			l->thr[i].tiekinds = f && l->thr[i].thread ? (unsigned char)cm_pfties_kinds(f, l->thr[i].thread) : 0;
	l->tiefilter = f;
	l->tiekinds = f ? kinds : 0;
}

unsigned long cm_pflanes_kept(const cm_pflanes *l, unsigned long *lost)
{
	if (lost)
		*lost = l->tielost;
	return l->ntie;
}
