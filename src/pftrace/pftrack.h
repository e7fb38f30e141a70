/* pftrack.h - the process and thread tracks (pftrack.c; a thread's lanes,
 * pflanes.c's cm_pf_lane): a pid's or tid's key, struct track, and the
 * calls that find, make, describe and name them.  The encoder (pfevent.c),
 * the workers (pfbatch.c), the sequential part (pfseg.c) and the lanes'
 * queue (pflaneq.c) call them; on the encoder's state (pfevent.h), which
 * holds the tracks.  Private to src/pftrace. */
#ifndef CM_PFTRACK_H
#define CM_PFTRACK_H

#include "pftrace/pfevent.h"

#include <stdint.h>

/* A pid or tid as a key: an integer, or a string given a number of its own. */
#define STRING_ID_BASE ((int64_t)1 << 62)
/* The number written for the Nth string pid or tid: above every real one. */
#define STRING_ID_SHOWN 0x7fff0000
/* The uuid of the track of the global instants; the others count from it. */
#define GLOBAL_UUID 1
/* The tid of a process track's key. */
#define NO_TID INT64_MIN

struct track {
	uint64_t uuid;
	int64_t pid, tid; /* as written (tid NO_TID: a process) */
	char *name, *labels;
	int64_t sort;
	int has_sort;
	int64_t name_ts, labels_ts, sort_ts; /* of the "M" event that set each */
	/* a string pid's or tid's text (NULL: an integer), which names the
	 * track at each of its events as in Perfetto's JSON import, and the
	 * rank (cm_pf_rank) of the event that set the name, after name_ts */
	char *str;
	int64_t name_rank;
	unsigned lanes;     /* lanes past the first described (pflanes.c) */
	uint64_t *lane_uuid; /* theirs */
	uint64_t be_uuid;   /* the track of its "B" and "E" events (cm_pf_event_uuid); 0: none yet */
	int64_t *be_open;   /* the begins of its "B" slices open, in the file's order */
	size_t nbe_open, capbe_open;
};

/* Write the descriptor packet of track T (a process when its tid is NO_TID). */
void cm_pf_descriptor(cm_pfev *e, const struct track *t);

/* The key and the number shown of a pid or tid (pftrack.c says how); 0, or
 * -1 when V is a number beyond a double's range. */
int cm_pf_id(cm_pfev *e, const cm_jval *v, int64_t pid, int64_t *key, int64_t *shown, const cm_jval **str);
/* The number text S[0..N) as a pid or tid of Perfetto's JSON import: in
 * *X, its integer part when in 1..2^32-1, else 0; -1 when it is beyond a
 * double's range (1e400), which Perfetto refuses. */
int cm_pf_num_id(const char *s, size_t n, int64_t *x);
/* 1 when V, a pid or tid, is given as Perfetto's JSON import sees it (a
 * number or a string): an instant of a thread needs its tid given, one of
 * a process its pid, or the JSON import drops it. */
int cm_pf_id_given(const cm_jval *v);
/* Where an event of phase PH (and duration DUR, for "X") comes among the
 * events of its time in Perfetto's JSON import: "E" first, then "X", the
 * longest first, then the others in the order of the file. */
static inline int64_t cm_pf_rank(int ph, int64_t dur)
{
	return ph == 'E' ? INT64_MIN : ph == 'X' ? INT64_MAX - dur : INT64_MAX;
}

/* The track of (PIDKEY, TIDKEY) (TIDKEY NO_TID: the process), made and its
 * descriptor written when new, named NAME. */
struct track *cm_pf_track(cm_pfev *e, int64_t pidkey, int64_t pid, int64_t tidkey, int64_t tid, const cm_jval *name);

/* The thread track of an event's PID and TID (its process made first);
 * NULL after reporting when either is not an id. */
struct track *cm_pf_thread(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t off, int64_t *pidkey);
/* cm_pf_thread for an event at TS of rank RANK (cm_pf_rank): a string pid
 * or tid names its process or thread again (pftrack.c says why). */
struct track *cm_pf_thread_at(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t off, int64_t ts,
			      int64_t rank);
/* The cache's slot of the integer pid and tid PID, TID (pftrack.c fills it). */
static inline struct tcache *cm_pf_tcache_slot(cm_pfev *e, int64_t pid, int64_t tid)
{
	return &e->tcache[(((uint64_t)pid * 0x9E3779B97F4A7C15u) ^ (uint64_t)tid) * 0xBF58476D1CE4E5B9u >> 58 &
			  (TCACHE - 1)];
}

/* The thread track of the integer pid and tid PID, TID (as a worker parsed
 * them, CM_PF_J_INT) when the cache holds it, else NULL: cm_pf_thread's
 * fast path, with nothing to parse.  Inline: the sequential part
 * (pfseg.c's place_all) asks it once a record, and the call was about half
 * of its 17 instructions (4 M of the 50,000-op pair, BENCHMARKS.md
 * "pfcpu11"). */
static inline struct track *cm_pf_thread_cached(cm_pfev *e, int64_t pid, int64_t tid)
{
	const struct tcache *c = cm_pf_tcache_slot(e, pid, tid);
	return c->t && c->pid == pid && c->tid == tid ? c->t : NULL;
}

/* Write the track UUID of a track event into B, unless it is the default. */
static inline void cm_pf_put_track(const cm_pfev *e, cm_buf *b, uint64_t uuid)
{
	if (uuid != e->def_uuid)
		cm_pb_uint(b, TE_TRACK_UUID, uuid);
}

/* The uuid of lane LANE of thread T (pflanes.c), described when new. */
uint64_t cm_pf_lane(cm_pfev *e, struct track *t, unsigned lane);
/* An "X" event as a flow after it binds to it: its thread's track, its
 * begin and end. */
struct lastx {
	uint64_t thread;
	int64_t b, e;
};
/* The track of an event of phase PH at TS of the thread T that takes no
 * lane (a "B", an "E", or a flow while T has a "B" open; any other is on
 * T's own), in the order of the file (pfseg.c's step 1): for a "B" or an
 * "E" a track of their own under T's (pftrack.c says why), described when
 * new, and for a flow in a "B" that one's, or T's own when it lies in an
 * "X" begun in the "B" (the last one before it: X, the batch's, or with
 * NULL e->last_*). */
uint64_t cm_pf_event_uuid(cm_pfev *e, struct track *t, int ph, int64_t ts, const struct lastx *x);

/* An event at TS of RANK that makes no track of its thread ("M", "C")
 * with a string PID or TID: it names their process or thread again, as
 * cm_pf_thread_at does.  0, or -1 (reported) when either is a number
 * beyond a double's range. */
int cm_pf_str_event(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t off, int64_t ts, int64_t rank);

/* An "M" event: name, label or order a process or thread.  0 or -1. */
int cm_pf_metadata(cm_pfev *e, const struct ev *ev, int64_t off);

#endif
