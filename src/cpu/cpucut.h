/* cpucut.h - cutting the CPU trace's events to a range of time (--steps,
 * --range): what the first pass notes of each event, the range it finds,
 * and the decision the copy asks for each event. */
#ifndef CM_CPUCUT_H
#define CM_CPUCUT_H

#include <stdint.h>
#include <stdio.h>
#include "base/buf.h"
#include "base/idmap.h"

/* What the first pass notes of each element of traceEvents, in order, when
 * cutting: CM_CPUCUT_REC bytes, the kind (a byte, CM_CUTK_* | CM_CUTK_X),
 * ts and end (doubles, trace us) and a key (int64: the correlation of a
 * call or of GPU work, the id of a flow). */
#define CM_CPUCUT_REC 25
enum {
	CM_CUTK_ALWAYS, /* metadata ("M"), begin/end pairs (B, E, b, e, n), an event without a number
			 * for ts, a dropped one: kept */
	CM_CUTK_SPAN,   /* any other event: kept when it overlaps the range */
	CM_CUTK_CALL,   /* a cuda_runtime or cuda_driver X event with an integer correlation: as SPAN */
	CM_CUTK_WORK,   /* a kernel, gpu_memcpy, gpu_memset or cuda_sync X event with one: with its call */
	CM_CUTK_AC2G,   /* an ac2g flow event (s, f, t) with an integer id: with the call of that correlation */
	CM_CUTK_FLOW,   /* another flow event with an integer id: kept when every event of its id is in the range */
};
#define CM_CUTK_X 0x80    /* an X event that counts for the extent (not of category "Trace") */
#define CM_CUTK_STEP 0x40 /* a ProfilerStep#N X event (a SPAN): the key is N */

/* The most files --split writes at once (a file is a stream and its
 * buffers, a deflate stream with -z). */
#define CM_CPUCUT_MAX_FILES 64

/* How the range is given. */
enum cm_cpucut_mode { CM_CPUCUT_NONE, CM_CPUCUT_STEPS, CM_CPUCUT_RANGE, CM_CPUCUT_SPLIT };

/* A range the events are cut to: --steps' or --range's one, or one a file
 * of --split (its steps A-B, the label in its file name). */
struct cm_cpucut_group {
	double lo, hi;
	char label[48];
};

typedef struct cm_cpucut {
	enum cm_cpucut_mode mode;
	uint64_t step_a, step_b; /* --steps=A-B */
	uint64_t split_n;        /* --split=steps:N */
	double lo, hi;           /* --range, or what the steps span: [lo, hi) in trace us */
	/* found by the first pass (cpuscan.c) */
	uint64_t steps_any;      /* ProfilerStep#N X events, any N */
	uint64_t steps_found;    /* ... with A <= N <= B */
	double step_lo, step_hi; /* their extent */
	int64_t call_lo, call_hi, flow_lo, flow_hi; /* the keys' ranges */
	uint64_t calls, flows, works;
	FILE *notes;             /* the records, an element each, in order */
	uint64_t nnotes;
	/* made by cm_cpucut_resolve: the ranges (one but with --split), by time */
	struct cm_cpucut_group *groups;
	size_t ngroups;
	double *max_hi;          /* the largest hi of groups 0 to g (groups_of) */
	double *inner;           /* group g's own part: [inner[2g], inner[2g + 1]), where no other reaches */
	int hint;                /* the group of the last event that went to one alone */
	int ga, gb;              /* the groups the last element asked for goes to (ga > gb: none) */
	struct cm_cpucut_step *steps; /* --split, while resolving: the steps found */
	size_t nsteps, cap_steps;
	cm_idmap *call_keep;     /* correlation of a call -> 1 kept, 2 cut */
	cm_idmap *flow_span;     /* flow id -> struct { double lo, hi } of its events */
	double kept_min, kept_max; /* the extent of the kept X events (min +inf when none) */
	double *group_min, *group_max; /* --split: the same for each group's file */
	uint64_t kept, cut;      /* events kept and cut (-v) */
	/* the copy's walk of the notes */
	uint64_t next;           /* the index of the next record to read */
	char *buf;
	size_t buf_len, buf_pos;
	int notes_bad;           /* cm_cpucut_seek failed: the next read reports it */
} cm_cpucut;

/* Whether an event [TS, END] (trace us) lies in [LO, HI): one with a
 * duration when it overlaps it, an instant when it falls in it. */
static inline int cm_cpucut_in(double lo, double hi, double ts, double end)
{
	return end > ts ? ts < hi && end > lo : ts >= lo && ts < hi;
}

/* Reset what the first pass finds (before it runs, and before the careful
 * pass runs again). */
void cm_cpucut_reset(cm_cpucut *k);
/* Fold a worker's findings (of one batch) into K, in order: the notes go
 * to K's file.  0, or -1 after a report. */
int cm_cpucut_fold(cm_cpucut *k, const cm_cpucut *part, const char *notes, size_t n);
/* Once the first pass is done: the range (from the steps when
 * CM_CPUCUT_STEPS; FILE names the trace for a message), the tables of the
 * calls and the flows (within the budget, idmap.h), and the extent of what
 * is kept.  0, or -1 after a report (no ProfilerStep events: status 1). */
int cm_cpucut_resolve(cm_cpucut *k, const char *file);
/* The copy's question for element INDEX (asked in increasing order): 1
 * keep (in the groups K->ga to K->gb), 0 cut, -1 after a report. */
int cm_cpucut_keep(cm_cpucut *k, uint64_t index);
/* The copy's walk goes on at element INDEX (the elements between were
 * decided by parts: cm_cpucut_part_keep). */
void cm_cpucut_seek(cm_cpucut *k, uint64_t index);

/* The decisions of the copy in parts on threads (cpu/cpucopypar.c): the
 * elements [from, to) of a part decided apart from the walk, from any
 * thread, in any order, while the walk and nothing else changes the cut;
 * what cm_cpucut_keep counts and finds of the kept events held here
 * until the part's turn (cm_cpucut_part_fold).  Zero it, then give
 * group_min and group_max ngroups doubles each. */
typedef struct cm_cpucut_part {
	int hint;                     /* as cm_cpucut's, the part's own */
	uint64_t from, to;
	cm_buf notes;                 /* the records of [from, to) */
	uint64_t kept, cut;
	double kept_min, kept_max;
	double *group_min, *group_max;
} cm_cpucut_part;
/* Whether K's decisions can be made by parts for a trace of EVENTS
 * elements: a note for each of them, groups a bit each. */
int cm_cpucut_parts_ok(const cm_cpucut *k, uint64_t events);
/* P gets the records of elements [FROM, TO), its counts and extents
 * emptied.  0, or -1 after a report. */
int cm_cpucut_part_read(const cm_cpucut *k, cm_cpucut_part *p, uint64_t from, uint64_t to);
/* cm_cpucut_keep's answer for element INDEX of P's (the groups in *GA,
 * *GB), noted in P, not K.  1 keep, 0 cut. */
int cm_cpucut_part_keep(const cm_cpucut *k, cm_cpucut_part *p, uint64_t index, int *ga, int *gb);
/* P's counts and extents into K, the parts in the order of their
 * elements. */
void cm_cpucut_part_fold(cm_cpucut *k, const cm_cpucut_part *p);

void cm_cpucut_free(cm_cpucut *k);

#endif
