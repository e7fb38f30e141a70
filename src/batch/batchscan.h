/* batchscan.h - what cuptimerge-batch needs to know of a file before pairing:
 * is it a torch trace or a trace window, and whose (pid, rank, host) and when. */
#ifndef CM_BATCHSCAN_H
#define CM_BATCHSCAN_H

#include <stdint.h>

enum cm_bkind {
	CM_BK_OTHER = 0, /* valid JSON with neither "traceEvents" nor "events" (a thread map...) */
	CM_BK_TRACE,     /* a Chrome trace: top-level "traceEvents" */
	CM_BK_WINDOW,    /* a trace window: top-level "events" (cuptimerge-window(5)) */
	CM_BK_BAD,       /* unreadable, not JSON, truncated before we knew */
};

/* Facts about one file; -1 (or NULL) where the file does not say. */
typedef struct cm_bfacts {
	enum cm_bkind kind;
	int64_t pid;       /* trace: pid of its first CPU "X" event; window: source.pid,
			      else process_id of its first API record */
	int64_t rank;      /* trace: distributedInfo.rank; window: source.rank */
	char *host;        /* window: source.host; trace: from the file name {host}_{pid}.* */
	int64_t start_ns;  /* trace: base + ts of its first CPU "X" event; window: source
			      start_ns, else the top-level start_ns */
	int64_t end_ns;    /* window: source.end_ns */
	int64_t gpu_events; /* window: kernels, memcpys and memsets (-1: not counted) */
	char *why;         /* CM_BK_BAD: what went wrong (one line) */
} cm_bfacts;

/* Look at PATH (gzip or plain) and fill *F; the caller frees with
 * cm_bfacts_free.  A trace is read only up to its first CPU event (the
 * top-level members Kineto writes before "traceEvents" come with it); a
 * window is read to its end in one streaming pass (its "source" comes last),
 * counting GPU events, in constant memory.  Never prints. */
void cm_bscan(const char *path, cm_bfacts *f);
void cm_bfacts_free(cm_bfacts *f);

#endif
