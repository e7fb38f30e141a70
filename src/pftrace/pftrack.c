/* pftrack.c - the Perfetto transcoder's tracks: a process track for each
 * pid, a thread track for each (pid, tid), more tracks of a thread for
 * the lanes of pflanes.c, their descriptors, and the "M" events that name,
 * label and order them (pfevent.c's header gives the mapping). */
#include "config.h"
#include "pftrace/pftrack.h"
#include "pftrace/pfrecord.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- tracks ---- */

/* Write the descriptor packet of track T (a process when its tid is NO_TID). */
void cm_pf_descriptor(cm_pfev *e, const struct track *t)
{
	cm_buf *b = e->out;
	size_t pk = cm_pb_open(b, TRACE_PACKET), td, d;
	cm_pb_uint(b, TP_SEQ_ID, DESC_SEQ_ID);
	td = cm_pb_open(b, TP_TRACK_DESCRIPTOR);
	cm_pb_uint(b, TD_UUID, t->uuid);
	if (t->tid == NO_TID) {
		d = cm_pb_open(b, TD_PROCESS);
		cm_pb_int(b, PD_PID, t->pid);
		if (t->has_sort)
			cm_pb_int(b, PD_SORT, t->sort);
		if (t->name)
			cm_pb_bytes(b, PD_NAME, t->name, strlen(t->name));
		if (t->labels) { /* Perfetto's JSON import splits them at commas */
			const char *p = t->labels, *c;
			for (; (c = strchr(p, ',')); p = c + 1)
				cm_pb_bytes(b, PD_LABELS, p, (size_t)(c - p));
			cm_pb_bytes(b, PD_LABELS, p, strlen(p));
		}
	} else {
		d = cm_pb_open(b, TD_THREAD);
		cm_pb_int(b, THD_PID, t->pid);
		cm_pb_int(b, THD_TID, t->tid);
		if (t->has_sort)
			cm_pb_int(b, THD_SORT, t->sort);
		if (t->name)
			cm_pb_bytes(b, THD_NAME, t->name, strlen(t->name));
	}
	cm_pb_close(b, d);
	cm_pb_close(b, td);
	cm_pb_close(b, pk);
}

static int id_of(cm_pfev *e, const cm_jval *v, int64_t pid, int64_t *key, int64_t *shown, const cm_jval **str,
		 int make);

/* (pftrack.h) */
int cm_pf_num_id(const char *s, size_t n, int64_t *x)
{
	cm_int big;
	if (is_integer_text(s, n)) {
		/* one beyond __int128 is outside all the same */
		if (cm_py_int_of_number(s, n, &big))
			big = -1;
	} else {
		/* a fraction or an exponent: Perfetto's JSON import reads a
		 * double and casts it to int64, cutting it to its integer part
		 * (3.5 is 3, -0.5 is 0); one beyond int64 is outside */
		char buf[64], *t = n < sizeof buf ? buf : cm_xmalloc(n + 1);
		double d;
		memcpy(t, s, n);
		t[n] = 0;
		d = strtod(t, NULL);
		if (t != buf)
			free(t);
		if (d != d || d == HUGE_VAL || d == -HUGE_VAL)
			return -1; /* 1e400: Perfetto refuses the whole JSON */
		big = d > -9223372036854775808.0 && d < 9223372036854775808.0 ? (cm_int)(int64_t)d : -1;
	}
	*x = big < 0 || big > UINT32_MAX ? 0 : (int64_t)big;
	return 0;
}

/* (pftrack.h) */
int cm_pf_id_given(const cm_jval *v)
{
	return v && (v->type == CM_J_NUM || v->type == CM_PF_J_INT || v->type == CM_J_STR);
}

/* The key (*KEY) and the number written (*SHOWN) of a pid or tid V as
 * Perfetto's JSON import (v55.3) takes it: a number as an integer
 * (cm_pf_num_id), an integer outside 1..2^32-1 as 0, and then a tid 0 as
 * the pid, PID (the pid's main thread, with tid == pid); a missing one, a
 * bool, null, an object or an array as 0 too; a string, "" too, as a
 * number of its own (*STR: its text, which names the process or thread at
 * each of its events).  0, or -1 when V is beyond a double's range. */
int cm_pf_id(cm_pfev *e, const cm_jval *v, int64_t pid, int64_t *key, int64_t *shown, const cm_jval **str)
{
	return id_of(e, v, pid, key, shown, str, 1);
}

/* cm_pf_id's work; MAKE 0: a string not numbered yet is not numbered
 * (-1), so nothing changes. */
static int id_of(cm_pfev *e, const cm_jval *v, int64_t pid, int64_t *key, int64_t *shown, const cm_jval **str,
		 int make)
{
	int64_t x = 0;
	*str = NULL;
	if (v && v->type == CM_PF_J_INT) { /* parsed on a worker */
		memcpy(&x, v->s, sizeof x);
		if (x < 0 || x > UINT32_MAX)
			x = 0;
	} else if (v && v->type == CM_J_NUM) {
		if (cm_pf_num_id(v->s, v->len, &x) < 0)
			return -1;
	} else if (v && v->type == CM_J_STR) {
		/* Perfetto's JSON import numbers a string pid or tid by its
		 * interned string, "" as any other */
		uint64_t n = cm_strtab_get(&e->ids, v->s, v->len, make ? e->ids.count + 1 : 0);
		if (!n && !make)
			return -1;
		if (!n)
			n = e->ids.count;
		*key = STRING_ID_BASE + (int64_t)n;
		*shown = STRING_ID_SHOWN + (int64_t)n;
		if (*shown == pid) /* a tid of the pid's string: its main thread */
			*key = pid;
		*str = v;
		return 0;
	}
	/* Perfetto's JSON import shows a tid 0 as the pid: its events land
	 * on the process's main thread, with those of tid == pid, and a
	 * "thread_name" of tid 0 names that thread.  Odd (the kernel's tid 0
	 * is the idle thread), but what it shows for the JSON the .pftrace
	 * must show, so a tid 0 is the pid here too.  A pid 0 stays 0. */
	if (x == 0 && pid >= 0)
		x = pid;
	*key = *shown = x;
	return 0;
}

/* The track of (PIDKEY, TIDKEY) (TIDKEY NO_TID: the process), made and its
 * descriptor written when new, named NAME (a string pid's or tid's). */
struct track *cm_pf_track(cm_pfev *e, int64_t pidkey, int64_t pid, int64_t tidkey, int64_t tid,
			      const cm_jval *name)
{
	int64_t k[2] = {pidkey, tidkey};
	int created = 0;
	size_t slots = cm_hmap_slots(e->tracks);
	struct track *t = cm_hmap_put(e->tracks, k, &created);
	/* the table grew (on a lookup too): the cache's pointers are stale */
	if (cm_hmap_slots(e->tracks) != slots)
		memset(e->tcache, 0, sizeof e->tcache);
	if (!created) {
		if (name && !t->str) {
			/* the main thread of a string pid, met first by its
			 * tid 0: its events of the string name it too */
			t->str = cm_xstrndup(name->s, name->len);
			if (!t->name)
				t->name_ts = t->name_rank = INT64_MIN;
		}
		return t;
	}
	memset(e->tcache, 0, sizeof e->tcache); /* the table may have moved them */
	t->uuid = e->next_uuid++;
	t->pid = pid;
	t->tid = tid;
	if (name) { /* "" too: Perfetto's JSON import names it "" */
		t->name = cm_xstrndup(name->s, name->len);
		t->str = cm_xstrndup(name->s, name->len);
		t->name_ts = t->name_rank = INT64_MIN; /* its events name it again */
	}
	cm_pf_descriptor(e, t);
	return t;
}

/* 1 when (TS, RANK) comes before (TS2, RANK2) in the order Perfetto's JSON
 * import sorts events in (cm_pf_rank; at the same time and rank, the
 * order of the file: the later one wins). */
static int before(int64_t ts, int64_t rank, int64_t ts2, int64_t rank2)
{
	return ts < ts2 || (ts == ts2 && rank < rank2);
}

/* An event at TS of rank RANK of the string pid or tid of track T: it
 * names T by its string again.  Perfetto's JSON import names a string
 * pid's process and a string tid's thread by the string at each of their
 * events ("M" ones too, any name), and a process_name or thread_name names
 * it after, so the last of these in its order of the events wins: a
 * thread_name of a string tid only shows when no other event of that tid
 * comes after it in that order.  The descriptor is written again when the
 * name changes (the last one written is the one shown). */
static void named_by_str(cm_pfev *e, struct track *t, int64_t ts, int64_t rank)
{
	if (!t->str || before(ts, rank, t->name_ts, t->name_rank))
		return;
	t->name_ts = ts;
	t->name_rank = rank;
	if (t->name && !strcmp(t->name, t->str))
		return;
	free(t->name);
	t->name = cm_xstrdup(t->str);
	cm_pf_descriptor(e, t);
}

/* 1 when V, a pid or tid, is a string with a lone surrogate: it names its
 * track (cm_pf_lone_surrogate). */
static int lone_id(const cm_jval *v)
{
	return v && v->type == CM_J_STR && cm_pf_lone_surrogate(v->s, v->len);
}

/* The cache entry of an event's PID and TID when both are integers a
 * worker parsed (CM_PF_J_INT), *P and *T their values; else NULL. */
static struct tcache *cached(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t *p, int64_t *t)
{
	if (!pid || !tid || pid->type != CM_PF_J_INT || tid->type != CM_PF_J_INT)
		return NULL;
	memcpy(p, pid->s, sizeof *p);
	memcpy(t, tid->s, sizeof *t);
	return cm_pf_tcache_slot(e, *p, *t);
}

/* The thread track of event (PID, TID), its process made first; NULL when
 * either is not an id (reported).  (A thread's track is made after its
 * process's, so a cached one has its process.)  NAMING: an event at TS of
 * RANK, whose string pid or tid names its track again (named_by_str). */
static struct track *thread_of(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t off, int64_t *pidkey,
			       int naming, int64_t ts, int64_t rank)
{
	int64_t pk, ps, tk, tsh, cp = 0, ct = 0;
	const cm_jval *pname, *tname;
	struct tcache *c = pidkey ? NULL : cached(e, pid, tid, &cp, &ct);
	struct track *t;
	if (c && c->t && c->pid == cp && c->tid == ct)
		return c->t;
	if (lone_id(pid) || lone_id(tid)) {
		REFUSE(e, off, CM_PF_SURROGATE_MSG);
		return NULL;
	}
	if (cm_pf_id(e, pid, -1, &pk, &ps, &pname) < 0) {
		REFUSE(e, off, "an event whose pid is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)");
		return NULL;
	}
	if (cm_pf_id(e, tid, ps, &tk, &tsh, &tname) < 0) {
		REFUSE(e, off, "an event whose tid is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)");
		return NULL;
	}
	t = cm_pf_track(e, pk, ps, NO_TID, NO_TID, pname);
	if (naming)
		named_by_str(e, t, ts, rank);
	if (pidkey)
		*pidkey = pk;
	t = cm_pf_track(e, pk, ps, tk, tsh, tname);
	if (naming)
		named_by_str(e, t, ts, rank);
	if (c)
		c->pid = cp, c->tid = ct, c->t = t;
	return t;
}

struct track *cm_pf_thread(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t off, int64_t *pidkey)
{
	return thread_of(e, pid, tid, off, pidkey, 0, 0, 0);
}

struct track *cm_pf_thread_at(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t off, int64_t ts,
			      int64_t rank)
{
	return thread_of(e, pid, tid, off, NULL, 1, ts, rank);
}

/* A track under the thread's track T, described: its uuid.  Perfetto
 * shows it as another track of that thread; it is never merged with its
 * siblings, so that its slices nest apart from theirs (a lane of
 * pflanes.c, or the thread's "B" and "E"). */
static uint64_t child_track(cm_pfev *e, const struct track *t)
{
	cm_buf *b = e->out;
	size_t pk = cm_pb_open(b, TRACE_PACKET), td;
	uint64_t uuid = e->next_uuid++;
	cm_pb_uint(b, TP_SEQ_ID, DESC_SEQ_ID);
	td = cm_pb_open(b, TP_TRACK_DESCRIPTOR);
	cm_pb_uint(b, TD_UUID, uuid);
	cm_pb_uint(b, TD_PARENT, t->uuid);
	cm_pb_uint(b, TD_SIBLING_MERGE, SIBLING_MERGE_NONE);
	cm_pb_close(b, td);
	cm_pb_close(b, pk);
	return uuid;
}

uint64_t cm_pf_lane(cm_pfev *e, struct track *t, unsigned lane)
{
	if (!lane)
		return t->uuid;
	if (lane > t->lanes)
		t->lane_uuid = cm_xrealloc(t->lane_uuid, lane * sizeof *t->lane_uuid);
	for (; t->lanes < lane; t->lanes++)
		t->lane_uuid[t->lanes] = child_track(e, t);
	return t->lane_uuid[lane - 1];
}

/* "B" and "E" go on a track of their own under their thread's, where the
 * trace processor pairs them as the JSON import pairs them: an "E" ends
 * the innermost slice still open whose name and category it matches (a
 * missing one matches any), and one that matches none is dropped.  On the
 * thread's track, with the "X" slices (a SLICE_BEGIN and a SLICE_END
 * there), an "E" would end the innermost "X" open at its time, and the end
 * of an "X" the innermost "B" open in it, where the JSON import's "X"
 * slices carry their own duration; so an "E" with no "B" before an "X"
 * cut the "X" short, and a "B" never ended within an "X" took the end of
 * the "X", the "X" left open.  The lanes of the "X" slices (pflanes.c) are
 * the same whether a thread has "B" and "E" or not. */
uint64_t cm_pf_event_uuid(cm_pfev *e, struct track *t, int ph, int64_t ts, const struct lastx *x)
{
	uint64_t xt = x ? x->thread : e->last_thread;
	int64_t xb = x ? x->b : e->last_b, xe = x ? x->e : e->last_e;
	if (ph == 'B') {
		if (t->nbe_open == t->capbe_open)
			t->be_open = cm_xrealloc(t->be_open, (t->capbe_open = t->capbe_open * 2 + 8) * sizeof *t->be_open);
		t->be_open[t->nbe_open++] = ts;
	} else if (ph == 'E') {
		if (t->nbe_open) /* (the innermost, as most "E" events end) */
			t->nbe_open--;
	} else if (t->nbe_open && (ph == 's' || ph == 't' || ph == 'f')) {
		/* a flow binds to the slice open on its thread at its time, the
		 * innermost: a "B" still open, but for an "X" begun in it that
		 * holds the flow (pfseg.c binds it to that one's lane) */
		if (xt == t->uuid && ts >= xb && ts <= xe && xb >= t->be_open[t->nbe_open - 1])
			return t->uuid;
		return t->be_uuid;
	} else {
		return t->uuid;
	}
	if (!t->be_uuid)
		t->be_uuid = child_track(e, t);
	return t->be_uuid;
}

/* 1 when V, a pid or tid, is a number beyond a double's range. */
static int beyond(const cm_jval *v)
{
	int64_t x;
	return v && v->type == CM_J_NUM && !is_integer_text(v->s, v->len) && cm_pf_num_id(v->s, v->len, &x) < 0;
}

/* The number text V with a fraction or an exponent cut to its integer
 * part in *X (2.5 is 2, -2.5 is -2); -1 when that is beyond int32. */
static int sort_of_double(const cm_jval *v, cm_int *x)
{
	char buf[64], *t = v->len < sizeof buf ? buf : cm_xmalloc(v->len + 1);
	double d;
	memcpy(t, v->s, v->len);
	t[v->len] = 0;
	d = strtod(t, NULL);
	if (t != buf)
		free(t);
	if (!(d > INT32_MIN - 1.0 && d < INT32_MAX + 1.0))
		return -1;
	*x = (cm_int)(int64_t)d;
	return 0;
}

/* (pftrack.h) */
int cm_pf_str_event(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t off, int64_t ts, int64_t rank)
{
	int64_t pk, ps, tk, tsh;
	const cm_jval *pname, *tname;
	struct track *t;
	if (beyond(pid) || beyond(tid))
		return REFUSE(e, off, "an event whose pid or tid is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)");
	if (!(pid && pid->type == CM_J_STR) && !(tid && tid->type == CM_J_STR))
		return 0;
	if (lone_id(pid) || lone_id(tid))
		return REFUSE(e, off, CM_PF_SURROGATE_MSG);
	if (cm_pf_id(e, pid, -1, &pk, &ps, &pname) < 0 || cm_pf_id(e, tid, ps, &tk, &tsh, &tname) < 0)
		return REFUSE(e, off, "an event whose pid or tid is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)");
	t = cm_pf_track(e, pk, ps, NO_TID, NO_TID, pname);
	named_by_str(e, t, ts, rank);
	if (tname) /* (a thread of an integer tid is left unmade: it has no event here) */
		named_by_str(e, cm_pf_track(e, pk, ps, tk, tsh, tname), ts, rank);
	return 0;
}

/* "M": name, label or order a process or thread (others are left out, as
 * Perfetto's JSON import leaves them). */
int cm_pf_metadata(cm_pfev *e, const struct ev *ev, int64_t off)
{
	static const char *const known[] = {"process_name", "process_labels", "process_sort_index",
					    "thread_name", "thread_sort_index"};
	static const char *const argkey[] = {"name", "labels", "sort_index", "name", "sort_index"};
	const cm_jval *v;
	struct track *t;
	int64_t pk, ps, tk, ts, mts;
	const cm_jval *pname, *tname;
	size_t i;
	/* Perfetto's JSON import takes these in the order of their ts (it
	 * sorts them with the events), the last one winning */
	if (!ev->ts || ev->ts->type != CM_J_NUM || cm_pf_us_to_ns(ev->ts->s, ev->ts->len, &mts) < 0)
		mts = 0;
	/* any "M" event names a string pid's process and tid's thread */
	if (cm_pf_str_event(e, ev->pid, ev->tid, off, mts, INT64_MAX) < 0)
		return -1;
	for (i = 0; i < 5; i++)
		if (cm_jval_streq(ev->name, known[i]))
			break;
	if (i == 5)
		return 0;
	v = ev->args && ev->args->type == CM_J_OBJ ? cm_jval_get(ev->args, argkey[i]) : NULL;
	if (!v) /* Perfetto's JSON import ignores these too */
		return 0;
	if (cm_pf_id(e, ev->pid, -1, &pk, &ps, &pname) < 0 ||
	    (i >= 3 && cm_pf_id(e, ev->tid, ps, &tk, &ts, &tname) < 0))
		return REFUSE(e, off, "a \"M\" event whose pid or tid is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)");
	t = cm_pf_track(e, pk, ps, NO_TID, NO_TID, pname);
	if (i >= 3)
		t = cm_pf_track(e, pk, ps, tk, ts, tname);
	if (argkey[i][0] == 's') {
		cm_int x;
		/* the schema's sort index is an int32: one outside it, or not
		 * a number, is left out (a hint for the order of the rows); a
		 * fraction is cut, as the JSON import casts a double to int64 */
		if (v->type != CM_J_NUM || (is_integer_text(v->s, v->len) ? cm_py_int_of_number(v->s, v->len, &x) != 0
									   : sort_of_double(v, &x) < 0) ||
		    x < INT32_MIN || x > INT32_MAX)
			return 0;
		if (t->has_sort && mts < t->sort_ts)
			return 0;
		t->sort = (int64_t)x;
		t->has_sort = 1;
		t->sort_ts = mts;
	} else {
		char **slot = argkey[i][0] == 'l' ? &t->labels : &t->name;
		int64_t *slot_ts = argkey[i][0] == 'l' ? &t->labels_ts : &t->name_ts;
		if (v->type != CM_J_STR || !v->len)
			return 0; /* Perfetto's JSON import takes strings only */
		if (cm_pf_lone_surrogate(v->s, v->len))
			return REFUSE(e, off, CM_PF_SURROGATE_MSG);
		if (*slot && (slot == &t->name ? before(mts, INT64_MAX, t->name_ts, t->name_rank) : mts < *slot_ts))
			return 0;
		free(*slot);
		*slot = cm_xstrndup(v->s, v->len);
		*slot_ts = mts;
		if (slot == &t->name)
			t->name_rank = INT64_MAX;
	}
	cm_pf_descriptor(e, t);
	return 0;
}

