/* cpuroute.h - --split's routing of the copied events: each kept element
 * of traceEvents to the outputs of its groups, runs of elements that go to
 * the same output as one piece. */
#ifndef CM_CPUROUTE_H
#define CM_CPUROUTE_H

#include <stdint.h>
#include "io/output.h"
#include "io/outq.h"
#include "json/evout.h"

/* The most outputs (a bit each in a 64-bit mask). */
#define CM_CPUROUTE_MAX 64

typedef struct cm_cpuroute {
	cm_output **outs;      /* the outputs, not owned */
	size_t nouts;
	cm_evout *shared;      /* the text all of them share (through a tee),
				* written before an output's own bytes */
	char *const *names;    /* when set, each output's traceName (a merge's
				* split: each file has its own name) */
	int whole;             /* the elements go to the copy's element hook
				* one at a time (a repair), not in runs */
	int ga, gb;            /* the outputs of the element in hand (set by
				* the keep hook: ga > gb, none) */
	const char *pend[CM_CPUROUTE_MAX]; /* an output's bytes to go out, */
	size_t pend_len[CM_CPUROUTE_MAX];  /* ... as one piece */
	uint64_t next[CM_CPUROUTE_MAX];    /* 1 + the index of the last element
					    * it got, 0 none yet */
	int writers;           /* the outputs written by this many threads of
				* their own (io/outq.h), made at the first
				* write; 0: by the caller's */
	cm_outq *q;            /* ... once made */
} cm_cpuroute;

/* Element INDEX goes to outputs R->ga to R->gb: *EMASK gets a bit for each,
 * *GMASK one for each that has an element already (the input's separator
 * before INDEX goes there too: joined to the last piece when that was
 * element INDEX - 1); for INDEX 0, which has no separator, those get a
 * comma here instead.  0, or -1 after a report. */
int cm_cpuroute_elem(cm_cpuroute *r, uint64_t index, uint64_t *gmask, uint64_t *emask);
/* P[0..N) goes to each output of MASK, after its bytes so far: joined to
 * its pending piece when it follows it.  P must stay until
 * cm_cpuroute_flush.  0, or -1 after a report. */
int cm_cpuroute_span(cm_cpuroute *r, uint64_t mask, const char *p, size_t n);
/* P[0..N) to output G now, after its bytes so far (none pending: after
 * cm_cpuroute_flush), through the writer threads when there are any.  The
 * copy's parts on threads (cpucopypar.c) hand over their pieces here.
 * 0, or -1 after a report. */
int cm_cpuroute_write(cm_cpuroute *r, unsigned g, const char *p, size_t n);
/* Every pending piece goes out (before the bytes they lie in go away, and
 * before more shared text).  0, or -1 after a report. */
int cm_cpuroute_flush(cm_cpuroute *r);
/* The writer threads of the outputs (made now when R->writers asks for
 * them and they are not yet), or NULL: the caller writes to them itself.
 * What goes to an output goes through them, but after cm_outq_sync. */
cm_outq *cm_cpuroute_queue(cm_cpuroute *r);
/* The shared text out to every output, after what the writer threads
 * hold.  0, or -1 after a report. */
int cm_cpuroute_shared(cm_cpuroute *r);

#endif
