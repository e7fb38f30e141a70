/* cpucopy_int.h - what the two files of the CPU trace's copy share: the
 * copy's state (cpucopy.c: the top level, the elements one at a time) and
 * the walk of traceEvents by the trace's layout (cpuwalk.c). */
#ifndef CM_CPUCOPY_INT_H
#define CM_CPUCOPY_INT_H

#include <stdint.h>
#include <stdio.h>
#include "cpu/cpucopy.h"
#include "json/jscan.h"

enum state {
	ST_START,  /* before the top-level '{' */
	ST_TOP,    /* in the top object, between members */
	ST_KEY,    /* in a top-level key */
	ST_COLON,  /* after a key */
	ST_VALUE,  /* before a top-level value */
	ST_RAW,    /* in a top-level value being copied (or skipped) */
	ST_EVENTS, /* in traceEvents, between elements */
	ST_ELEM,   /* in an element */
	ST_ARRAY,  /* in traceEvents, walking cm_cpuplan.layout */
	ST_END     /* after the top-level '}' */
};

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
	enum state st;
	cm_jscan sc;                    /* the value / element scanner */
	int esc;                        /* in a key: after a backslash */
	int copying;                    /* bytes of the current value go out */
	cm_buf key;                     /* the raw key, quotes included */
	int key_esc, key_kind;
	int members;                    /* top-level members written */
	int seen_events, seen_name;
	uint64_t elem, next_drop, kept;
	int inserted;
	int devices_due; /* hooks->devices is to be added as a new member */
	cm_buf elem_text; /* the element, when hooks->element wants it */
	cm_buf gap;       /* the bytes since the end of the last element */
	/* ST_ARRAY */
	FILE *layout;     /* cm_cpuplan.layout, being read, or NULL */
	enum { L_NEXT, L_GAP, L_ELEM, L_CLOSE } lphase;
	uint64_t start, end; /* the text offsets of the element in hand */
	int gap_out, elem_out; /* its separator, itself go out */
	uint64_t gmask, emask; /* with hooks->route: the outputs they go to */
	const char *pend;      /* bytes of the chunk in hand to go out next, */
	size_t pend_len;       /* ... as one piece (flush_pending) */
	/* the places (text offsets) of the elements from c->elem on, decoded
	 * from the layout ahead of the walk: element k's at k % LAYOUT_RING */
	uint64_t lq_start[LAYOUT_RING], lq_end[LAYOUT_RING];
	uint64_t lq_done;      /* elements whose places are decoded */
	int lq_bad;            /* the layout ended, or was bad, at lq_done */
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
/* ST_ARRAY over S[*IP..N), the chunk at text offset BASE (cpuwalk.c).
 * 0, or -1 after a report. */
int cpucopy_array_feed(struct copy *c, const char *s, size_t n, uint64_t base, size_t *ip);

#endif
