/* batchscan.h - what cuptimerge-batch needs to know of a file before pairing:
 * is it a torch trace, a trace window or a thread map, and whose (pid, rank,
 * host) and when. */
#ifndef CM_BATCHSCAN_H
#define CM_BATCHSCAN_H

#include <stddef.h>
#include <stdint.h>

enum cm_bkind {
	CM_BK_OTHER = 0, /* valid JSON that is none of the others */
	CM_BK_TRACE,     /* a Chrome trace: top-level "traceEvents" */
	CM_BK_WINDOW,    /* a trace window: top-level "events" (cuptimerge-window(5)) */
	CM_BK_MAP,       /* a thread map that names its processes: "processes", or
			    "threads" with "meta.pid" (cuptimerge-threadmap(5)) */
	CM_BK_BAD,       /* unreadable, not JSON, truncated before we knew */
};

/* Facts about one file; -1 (or NULL) where the file does not say. */
typedef struct cm_bfacts {
	enum cm_bkind kind;
	int64_t pid;       /* trace: pid of its first CPU "X" event; window: source.pid,
			      else process_id of its first API record; map: source.pid */
	int64_t rank;      /* trace: distributedInfo.rank; window, map: source.rank */
	char *host;        /* window, map: source.host; trace: from the file name
			      {host}_{pid}.{ms}.pt.trace.json[.gz] (a weaker signal) */
	int64_t start_ns;  /* trace: base + ts of its first CPU "X" event; window: source
			      start_ns, else the top-level start_ns; map: source.start_ns */
	int64_t end_ns;    /* window, map: source.end_ns */
	int64_t gpu_events; /* window: kernels, memcpys and memsets (-1: not counted) */
	char *why;         /* CM_BK_BAD: what went wrong; CM_BK_OTHER: set for a thread
			      map that cannot be paired (one line); CM_BK_WINDOW with
			      damaged: what is wrong with it */
	int damaged;       /* a window (its text starts as one, or a file named
			      cuptirec_*) that cannot be read to its end: truncated,
			      as a killed process leaves it, or corrupt (issue 28 P2);
			      kind CM_BK_WINDOW when its pid is known, else CM_BK_BAD */
	/* CM_BK_MAP: one entry per process the map holds (kind CM_BK_MAP, no
	 * procs of its own): its pid; for source.pid the source's rank, host and
	 * span, for the others the span of their thread entries (the earliest
	 * start_ns, the latest end_ns; -1 when an entry lacks it) */
	struct cm_bfacts *procs;
	size_t nprocs;
} cm_bfacts;

/* Look at PATH (gzip or plain) and fill *F; the caller frees with
 * cm_bfacts_free.  A trace is read only up to its first CPU event (the
 * top-level members Kineto writes before "traceEvents" come with it); a
 * window is read to its end in one streaming pass (its "source" comes last),
 * counting GPU events, in constant memory; a thread map to its end, in memory
 * for one entry per process.  A value longer than cuptimerge reads (its
 * bounds, json/docsplit.h) ends the read at the value's first byte, the
 * file then damaged or bad, F->why in the merge's words.  Never prints. */
void cm_bscan_full(const char *path, cm_bfacts *f);

/* As cm_bscan_full, but a plain window that ends with its "source" (as
 * cuptirec writes it) is read only at its head and its last 64 KiB: its GPU
 * events are not counted (gpu_events -1), and damage before its tail is
 * not seen (issue 28 P7: planning is what pairing needs). */
void cm_bscan_head(const char *path, cm_bfacts *f);

/* cm_bscan_head, then cm_bscan_full for a window whose GPU events it did
 * not count. */
void cm_bscan(const char *path, cm_bfacts *f);
void cm_bfacts_free(cm_bfacts *f);

/* For cuptimerge's check that a window and a trace are one rank's
 * (crosscheck.c, issue 28 P4), each reading little: */
/* the distributedInfo.rank of trace PATH, read up to where "traceEvents"
 * begins (Kineto writes it before); -1 when it has none */
int64_t cm_bscan_rank(const char *path);
/* the facts of plain window PATH from its head and tail alone, as
 * cm_bscan_head; -1 (nothing read in full) when that cannot be done */
int cm_bscan_tail(const char *path, cm_bfacts *f);
/* the host of a trace named {host}_{PID}.{ms}.pt.trace.json[.gz], or NULL
 * (malloc'd) */
char *cm_bscan_name_host(const char *path, int64_t pid);

#endif
