/* pftrack.c - the Perfetto transcoder's tracks: a process track for each
 * pid, a thread track for each (pid, tid), more tracks of a thread for
 * the lanes of pflanes.c, their descriptors, and the "M" events that name,
 * label and order them (pfevent.c's header gives the mapping). */
#include "config.h"
#include "pftrace/pfevent.h"

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

/* The key (*KEY) and the number written (*SHOWN) of a pid or tid V: an
 * integer as Perfetto's JSON import takes it (a pid outside 0..2^32-1 as
 * 0, a tid 0 or outside it as the pid, PID), a string as a number of its
 * own (*STR: its text, which names the process or thread).  0, or -1 when
 * V is neither an integer nor a string. */
int cm_pf_id(cm_pfev *e, const cm_jval *v, int64_t pid, int64_t *key, int64_t *shown, const cm_jval **str)
{
	return id_of(e, v, pid, key, shown, str, 1);
}

/* cm_pf_id's work; MAKE 0: a string not numbered yet is not numbered
 * (-1), so nothing changes. */
static int id_of(cm_pfev *e, const cm_jval *v, int64_t pid, int64_t *key, int64_t *shown, const cm_jval **str,
		 int make)
{
	*str = NULL;
	if (v && (v->type == CM_J_NUM || v->type == CM_PF_J_INT)) {
		cm_int x;
		int64_t x64;
		if (v->type == CM_PF_J_INT) /* parsed on a worker */
			memcpy(&x64, v->s, sizeof x64), x = x64;
		else if (!is_integer_text(v->s, v->len) || cm_py_int_of_number(v->s, v->len, &x) != 0)
			return -1;
		/* Perfetto's JSON import (v55.3) shows a tid 0 as the pid: its
		 * events land on the process's main thread, with those of
		 * tid == pid, and a "thread_name" of tid 0 names that thread.
		 * Odd (the kernel's tid 0 is the idle thread), but what it
		 * shows for the JSON the .pftrace must show, so a tid 0 is
		 * the pid here too; a tid "" (a string, numbered its own
		 * way there) is not.  A pid 0 stays 0. */
		if (x < 0 || x > UINT32_MAX || (x == 0 && pid >= 0))
			x = pid < 0 ? 0 : pid;
		*key = *shown = (int64_t)x;
		return 0;
	}
	if (v && v->type == CM_J_STR && !v->len) {
		/* Perfetto's JSON import numbers a string pid or tid by its
		 * interned string, and "" is string 0 */
		*key = *shown = 0;
		*str = v;
		return 0;
	}
	if (v && v->type == CM_J_STR) {
		uint64_t n = cm_strtab_get(&e->ids, v->s, v->len, make ? e->ids.count + 1 : 0);
		if (!n && !make)
			return -1;
		if (!n)
			n = e->ids.count;
		*key = STRING_ID_BASE + (int64_t)n;
		*shown = STRING_ID_SHOWN + (int64_t)n;
		*str = v;
		return 0;
	}
	return -1;
}

/* The track of (PIDKEY, TIDKEY) (TIDKEY NO_TID: the process), made and its
 * descriptor written when new, named NAME (a string pid's or tid's). */
struct track *cm_pf_track(cm_pfev *e, int64_t pidkey, int64_t pid, int64_t tidkey, int64_t tid,
			      const cm_jval *name)
{
	int64_t k[2] = {pidkey, tidkey};
	int created = 0;
	struct track *t = cm_hmap_put(e->tracks, k, &created);
	if (!created)
		return t;
	memset(e->tcache, 0, sizeof e->tcache); /* the table may have moved them */
	t->uuid = e->next_uuid++;
	t->pid = pid;
	t->tid = tid;
	if (name && name->len) {
		t->name = cm_xstrndup(name->s, name->len);
		t->name_ts = INT64_MIN; /* any "M" event names it instead */
	}
	cm_pf_descriptor(e, t);
	return t;
}

/* The cache entry of an event's PID and TID when both are integers a
 * worker parsed (CM_PF_J_INT), *P and *T their values; else NULL. */
static struct tcache *cached(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t *p, int64_t *t)
{
	if (!pid || !tid || pid->type != CM_PF_J_INT || tid->type != CM_PF_J_INT)
		return NULL;
	memcpy(p, pid->s, sizeof *p);
	memcpy(t, tid->s, sizeof *t);
	return &e->tcache[(((uint64_t)*p * 0x9E3779B97F4A7C15u) ^ (uint64_t)*t) * 0xBF58476D1CE4E5B9u >> 58 & (TCACHE - 1)];
}

struct track *cm_pf_thread_cached(cm_pfev *e, int64_t pid, int64_t tid)
{
	const struct tcache *c =
		&e->tcache[(((uint64_t)pid * 0x9E3779B97F4A7C15u) ^ (uint64_t)tid) * 0xBF58476D1CE4E5B9u >> 58 & (TCACHE - 1)];
	return c->t && c->pid == pid && c->tid == tid ? c->t : NULL;
}

/* The thread track of event (PID, TID), its process made first; NULL when
 * either is not an id (reported).  (A thread's track is made after its
 * process's, so a cached one has its process.) */
struct track *cm_pf_thread(cm_pfev *e, const cm_jval *pid, const cm_jval *tid, int64_t off, int64_t *pidkey)
{
	int64_t pk, ps, tk, ts, cp = 0, ct = 0;
	const cm_jval *pname, *tname;
	struct tcache *c = pidkey ? NULL : cached(e, pid, tid, &cp, &ct);
	struct track *t;
	if (c && c->t && c->pid == cp && c->tid == ct)
		return c->t;
	if (cm_pf_id(e, pid, -1, &pk, &ps, &pname) < 0) {
		REFUSE(e, off, "an event whose pid is not a string or an integer cannot be written as Perfetto protobuf");
		return NULL;
	}
	if (cm_pf_id(e, tid, ps, &tk, &ts, &tname) < 0) {
		REFUSE(e, off, "an event whose tid is not a string or an integer cannot be written as Perfetto protobuf");
		return NULL;
	}
	cm_pf_track(e, pk, ps, NO_TID, NO_TID, pname);
	if (pidkey)
		*pidkey = pk;
	t = cm_pf_track(e, pk, ps, tk, ts, tname);
	if (c)
		c->pid = cp, c->tid = ct, c->t = t;
	return t;
}

/* The track of lane LANE of thread T (pflanes.c), described when new: a
 * child of the thread's track, which Perfetto shows as another track of
 * that thread; never merged with its siblings, so that its slices nest
 * apart from theirs. */
uint64_t cm_pf_lane(cm_pfev *e, struct track *t, unsigned lane)
{
	if (!lane)
		return t->uuid;
	if (lane > t->lanes)
		t->lane_uuid = cm_xrealloc(t->lane_uuid, lane * sizeof *t->lane_uuid);
	for (; t->lanes < lane; t->lanes++) {
		cm_buf *b = e->out;
		size_t pk = cm_pb_open(b, TRACE_PACKET), td;
		t->lane_uuid[t->lanes] = e->next_uuid++;
		cm_pb_uint(b, TP_SEQ_ID, DESC_SEQ_ID);
		td = cm_pb_open(b, TP_TRACK_DESCRIPTOR);
		cm_pb_uint(b, TD_UUID, t->lane_uuid[t->lanes]);
		cm_pb_uint(b, TD_PARENT, t->uuid);
		cm_pb_uint(b, TD_SIBLING_MERGE, SIBLING_MERGE_NONE);
		cm_pb_close(b, td);
		cm_pb_close(b, pk);
	}
	return t->lane_uuid[lane - 1];
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
		return REFUSE(e, off, "a \"M\" event whose pid or tid is not a string or an integer cannot be written as Perfetto protobuf");
	t = cm_pf_track(e, pk, ps, NO_TID, NO_TID, pname);
	if (i >= 3)
		t = cm_pf_track(e, pk, ps, tk, ts, tname);
	/* Perfetto's JSON import takes these in the order of their ts (it
	 * sorts them with the events), the last one winning */
	if (!ev->ts || ev->ts->type != CM_J_NUM || cm_pf_us_to_ns(ev->ts->s, ev->ts->len, &mts) < 0)
		mts = 0;
	if (argkey[i][0] == 's') {
		cm_int x;
		/* the schema's sort index is an int32: one outside it, or not
		 * an integer, is left out (a hint for the order of the rows) */
		if (v->type != CM_J_NUM || !is_integer_text(v->s, v->len) || cm_py_int_of_number(v->s, v->len, &x) ||
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
		if (*slot && mts < *slot_ts)
			return 0;
		free(*slot);
		*slot = cm_xstrndup(v->s, v->len);
		*slot_ts = mts;
	}
	cm_pf_descriptor(e, t);
	return 0;
}

