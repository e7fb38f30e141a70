/* batchscan_int.h - what batchscan.c (the scan's callbacks), batchread.c
 * (the streaming read through them) and batchtail.c (a plain window's head
 * and tail) share: the scan's state and callbacks. */
#ifndef CM_BATCHSCAN_INT_H
#define CM_BATCHSCAN_INT_H

#include "batch/batchscan.h"

#include <stdint.h>
#include <yajl/yajl_parse.h>

/* 64 KiB reads: a trace's head (deviceProperties, distributedInfo) fits in
 * one or two, so pairing reads a few blocks of a trace of any size. */
#define SCAN_CHUNK (64u << 10)
/* ...and the reads after them double up to 4 MiB (batchread.c, which
 * hands yajl whole tokens, so a long one is lexed once whatever the read
 * size) */
#define SCAN_CHUNK_MAX (4u << 20)
#define MAXDEPTH 5 /* keys deeper than processes.PID[i].member are not looked at */

/* A process of a thread map, while its entries are read. */
struct mproc {
	int64_t pid;
	int64_t start, end;   /* earliest start_ns, latest end_ns of its entries */
	int start_open, end_open; /* an entry lacks start_ns / end_ns */
	size_t entries;
};

struct scan {
	cm_bfacts *f;
	int depth;              /* containers open */
	char key[MAXDEPTH][24]; /* the last key seen at each depth (1 = top level) */
	int done;               /* the trace's facts are complete: stop reading */
	int head_only;          /* stop where "traceEvents" begins (cm_bscan_rank) */
	/* the event being read (depth 3 of traceEvents / events) */
	char ph[4], cat[24], kind[24];
	int64_t ev_pid, ev_proc;
	double ev_ts;
	int have_ts;
	int64_t base;           /* trace: baseTimeNanoseconds, -1 when absent */
	int64_t top_start;      /* window: top-level start_ns */
	int64_t src_start;
	int64_t api_pid;        /* window: first API record's process_id */
	/* thread maps (cuptimerge-threadmap(5)) */
	int processes, threads; /* top-level "processes" / "threads" objects seen */
	int64_t meta_pid;       /* meta.pid, -1 when absent */
	struct mproc *mp;       /* processes.PID, in file order */
	size_t nmp, capmp;
	long cur;               /* index in mp of the PID whose array is open, or -1 */
	int64_t e_start, e_end; /* the entry being read; -1 when absent */
};

/* The callbacks, their context a struct scan: they fill its cm_bfacts. */
extern const yajl_callbacks bscan_callbacks;

/* F knows nothing yet: every fact -1 (or NULL), kind CM_BK_OTHER. */
void bscan_facts_begin(cm_bfacts *f);

/* S at the start of a document, filling F. */
void bscan_begin(struct scan *s, cm_bfacts *f);

/* After a whole document was read through the callbacks into S, a file F
 * that is neither trace nor window: made a thread map (CM_BK_MAP, its
 * processes in F->procs) when S saw one that names its processes, else
 * left as it was, F->why set when it is a map that nothing can pair. */
void bscan_map_facts(struct scan *s, cm_bfacts *f);

#endif
