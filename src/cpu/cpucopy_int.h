/* cpucopy_int.h - what the two files of the CPU trace's copy share: the
 * copy's state (cpucopy.c: the top level, by the trace's layout) and the
 * walk of traceEvents by the same layout (cpuwalk.c). */
#ifndef CM_CPUCOPY_INT_H
#define CM_CPUCOPY_INT_H

#include <stdint.h>
#include <stdio.h>
#include "cpu/cpucopy.h"
#include "json/doclayout.h"

/* Where the copy is in the top level: the part in hand is [r_at, r_end)
 * of the text (the '{', a key, a value, the '}'), the bytes before it
 * blanks and punctuation, which do not go out. */
enum top {
	T_OPEN,  /* the top-level '{' */
	T_KEY,   /* a member's key */
	T_VALUE, /* its value (the array's: its '[', then T_ARRAY) */
	T_ARRAY, /* in traceEvents, walking the layout (cpuwalk.c) */
	T_CLOSE, /* the top-level '}' */
	T_END    /* after it: blanks */
};

/* The output's top level, decided member by member from the layout's
 * tags, before any byte of the member (cpucopy_top_member): what the
 * trace lacks is added, traceName and deviceProperties replaced. */
struct cpucopy_top {
	int devices_due;  /* the hooks' devices are still to be added as a member */
	int seen_events, seen_name;
};
enum {
	CP_DEVICES_BEFORE = 1, /* the devices member goes in before this one */
	CP_VALUE = 6,          /* what becomes of its value: */
	CP_COPY = 0,           /* ... copied */
	CP_ARRAY = 2,          /* ... the array walked */
	CP_NAME = 4,           /* ... the new traceName in its place */
	CP_DEVICES = 6,        /* ... the hooks' devices in its place */
	/* at the '}' (cpucopy_top_end): members added */
	CP_ADD_DEVICES = 1, CP_ADD_EVENTS = 2, CP_ADD_NAME = 4,
};
/* The member tagged TAG (the layout's) comes next: CP_* for it. */
int cpucopy_top_member(struct cpucopy_top *t, int tag, const cm_cpucopy_hooks *h, int devprops);
/* The '}' comes next: CP_ADD_* for the members to add, in that order. */
int cpucopy_top_end(struct cpucopy_top *t, const cm_cpucopy_hooks *h);

/* The layout is decoded up to LAYOUT_RING elements ahead of the walk, and
 * the walk asks the cache for the first and last bytes of the element
 * LAYOUT_AHEAD places ahead.  Those two bytes are all the walk reads of an
 * element (about 240 bytes apart in a torch trace), just written by the
 * read-ahead thread on another CPU: the two compares that wait for them
 * had 45% of the walk's perf samples (the 1 GB pair).  With the look-ahead
 * and a whole element taken in one step (array_walk), the walk's samples
 * fell by 10-20%; the 16-core machine's copy step went from 0.15-0.20 s to
 * 0.17 s (run AG), which its noise cannot tell apart. */
#define LAYOUT_RING 128
#define LAYOUT_AHEAD 8

struct copy {
	const cm_cpuplan *plan;
	const cm_cpucopy_hooks *hooks;
	cm_evout *eo;
	cm_input *in;
	FILE *layout;     /* cm_cpuplan.layout, being read */
	uint64_t lpos;    /* where the layout's next distance counts from */
	/* the top level */
	enum top st;
	uint64_t r_at, r_end; /* the part in hand */
	uint64_t val_at, val_end; /* the value after the key in hand */
	int tag, act;     /* the member in hand: its tag, CP_* */
	int copying;      /* the bytes of the part in hand go out as they are */
	char first;       /* its first byte */
	int members;      /* top-level members written */
	struct cpucopy_top top;
	/* the array */
	uint64_t elem, next_drop, kept;
	int inserted;
	int by_elem;      /* each kept element to hooks->element */
	int runs;         /* kept elements in runs: to EO, or routed */
	cm_buf elem_text; /* an element cut by a chunk, for hooks->element */
	enum { L_NEXT, L_GAP, L_ELEM, L_CLOSE } lphase;
	uint64_t start, end; /* the text offsets of the element in hand (L_CLOSE: start, the ']') */
	int gap_out, elem_out; /* its separator, itself go out */
	uint64_t gmask, emask; /* with hooks->route: the outputs they go to */
	const char *pend;      /* bytes of the chunk in hand to go out next, */
	size_t pend_len;       /* ... as one piece (flush_pending) */
	/* the places (text offsets) of the elements from c->elem on, decoded
	 * from the layout ahead of the walk: element k's at k % LAYOUT_RING */
	uint64_t lq_start[LAYOUT_RING], lq_end[LAYOUT_RING];
	uint64_t lq_done;      /* elements whose places are decoded */
	int lq_bad;            /* the layout ended, or was bad, at lq_done */
	/* the parts on threads (cpucopypar.c): the layout's marks, the next
	 * one the walk may stop at (par_at: its element, 0 for none), and
	 * the text offset where it stopped (par_stopped) */
	const struct cm_doclayout_mark *marks;
	size_t nmarks, par_next;
	uint64_t par_at;
	int par_stopped, par_threads;
	uint64_t par_off;
};

/* The input changed between the passes: reported; -1. */
int cpucopy_changed(struct copy *c);
/* Element c->elem begins: 1 kept (the GPU metadata written before it when
 * its place has come), 0 dropped or cut, -1 after a report. */
int cpucopy_take_next(struct copy *c);
/* Before kept element c->elem: 1 when the input's separator goes out with
 * it (a comma written here for the array's first after the metadata). */
int cpucopy_separator(struct copy *c);
/* The end of traceEvents: the metadata if not yet placed, the appended
 * events, the ']'.  0 or -1. */
int cpucopy_events_end(struct copy *c);
/* The next varint of the layout into *V: 0, or -1 at its end. */
int cpucopy_varint(struct copy *c, uint64_t *v);
/* The next place of the layout into *AT (c->lpos plus a distance, which
 * becomes c->lpos): 0, or -1 at its end or past 2^64. */
int cpucopy_place(struct copy *c, uint64_t *at);
/* After the array's ']': the next member's record.  0, or -1 after a
 * report. */
int cpucopy_next_member(struct copy *c);
/* T_ARRAY over S[*IP..N), the chunk at text offset BASE (cpuwalk.c).
 * 0, or -1 after a report.  With c->par_at, it stops at L_NEXT of that
 * element when the metadata is in (c->par_stopped, c->par_off; else the
 * next mark becomes c->par_at: cpucopy_par_next). */
int cpucopy_array_feed(struct copy *c, const char *s, size_t n, uint64_t base, size_t *ip);

/* The parts on threads (cpucopypar.c).  cpucopy_par_begin: whether the copy
 * will do them, their marks read and c->par_at set (0, or -1 after a
 * report); cpucopy_par_next: c->par_at passed unready, the next; and
 * cpucopy_par_run: the walk stopped at c->par_at: the elements from there
 * to the array's end written by the threads, the walk left at the array's
 * end as though it had walked them (0, or -1 after a report). */
int cpucopy_par_begin(struct copy *c);
void cpucopy_par_next(struct copy *c);
int cpucopy_par_run(struct copy *c);

#endif
