/* repair.c - the thread-repair stage (see threadmap.h for the id rules).
 *
 * The stage sees each event once, in document order.  It rewrites the "tid"
 * of events on opaque rows and remembers, in tables bounded by the number of
 * threads, which rows gained events and which rows are already named, so the
 * names can be added after the last event. */
#include "config.h"
#include "repair/repair.h"
#include "base/diag.h"
#include "base/hmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct move {
	uint64_t events;
	const char *name; /* from the map */
};

struct cm_repair {
	const cm_threadmap *map;
	int have_base;
	cm_int base_ns;
	cm_hmap *moves;  /* (pid, from, to) -> struct move */
	cm_hmap *named;  /* (pid, tid) rows with a thread_name */
	cm_hmap *warned; /* (pid, tid) ambiguities reported */
	uint64_t moved;
};

cm_repair *cm_repair_new(const cm_threadmap *map)
{
	cm_repair *r = cm_xcalloc(1, sizeof *r);
	r->map = map;
	r->moves = cm_hmap_new(24, sizeof(struct move));
	r->named = cm_hmap_new(16, 1);
	r->warned = cm_hmap_new(16, 1);
	return r;
}

void cm_repair_free(cm_repair *r)
{
	if (!r)
		return;
	cm_hmap_free(r->moves);
	cm_hmap_free(r->named);
	cm_hmap_free(r->warned);
	free(r);
}

void cm_repair_set_base(cm_repair *r, cm_int base_ns)
{
	r->have_base = 1;
	r->base_ns = base_ns;
}

uint64_t cm_repair_moved(const cm_repair *r) { return r->moved; }

void cm_repair_named(cm_repair *r, int64_t pid, int64_t tid)
{
	int64_t key[2] = {pid, tid};
	cm_hmap_put(r->named, key, NULL);
}

int cm_repair_tid(cm_repair *r, int64_t pid, int64_t tid, int have_ns, double abs_ns, int count, int64_t *out)
{
	const char *name = NULL;
	int rc = cm_threadmap_resolve(r->map, pid, tid, have_ns, abs_ns, out, &name);
	if (rc == CM_TM_MOVE) {
		if (count) {
			int64_t key[3] = {pid, tid, *out};
			struct move *mv = cm_hmap_put(r->moves, key, NULL);
			mv->events++;
			mv->name = name;
			r->moved++;
		}
		return 1;
	}
	if (rc != CM_TM_NONE) {
		int64_t key[2] = {pid, tid};
		int created;
		cm_hmap_put(r->warned, key, &created);
		if (created)
			cm_warn(NULL, -1,
				rc == CM_TM_AMBIG_REAL
					? "thread repair: pid %lld tid %lld is an opaque id and also a mapped thread's kernel tid: left alone"
					: "thread repair: pid %lld tid %lld was the id of several threads and their lifetimes do not tell which: left alone",
				(long long)pid, (long long)tid);
	}
	return 0;
}

/* An integer member of EV that fits 64 bits. */
static int int_member(const cm_jval *ev, const char *key, int64_t *out)
{
	const cm_jval *v = cm_jval_get(ev, key);
	cm_int x;
	if (!v || v->type != CM_J_NUM || !cm_py_number_is_int(v->s, v->len) ||
	    cm_py_int_of_number(v->s, v->len, &x) != CM_PY_OK || x < INT64_MIN || x > INT64_MAX)
		return -1;
	*out = (int64_t)x;
	return 0;
}

/* Decide for EV: 1 and *tid when it moves. */
static int decide(cm_repair *r, const cm_jval *ev, int64_t *tid)
{
	int64_t pid, old;
	const cm_jval *ts = cm_jval_get(ev, "ts");
	double abs_ns = 0;
	int have_ns = 0, moved;
	if (int_member(ev, "pid", &pid) < 0 || int_member(ev, "tid", &old) < 0)
		return 0;
	if (r->have_base && ts && ts->type == CM_J_NUM) {
		double us;
		cm_py_float_of_number(ts->s, ts->len, &us);
		abs_ns = cm_py_int_to_double(r->base_ns) + us * 1000.0;
		have_ns = 1;
	}
	moved = cm_repair_tid(r, pid, old, have_ns, abs_ns, 1, tid);
	if (cm_jval_streq(cm_jval_get(ev, "ph"), "M") && cm_jval_streq(cm_jval_get(ev, "name"), "thread_name"))
		cm_repair_named(r, pid, moved ? *tid : old);
	return moved;
}

/* Write EV with "tid" replaced by TID. */
static void write_moved(cm_buf *b, const cm_jval *ev, int64_t tid)
{
	int first = 1;
	cm_buf_putc(b, '{');
	for (const cm_jval *k = ev->kids; k; k = k->next) {
		if (!first)
			cm_buf_putc(b, ',');
		first = 0;
		cm_jw_string(b, k->key, k->klen);
		cm_buf_putc(b, ':');
		if (k->klen == 3 && !memcmp(k->key, "tid", 3))
			cm_jw_int(b, tid);
		else
			cm_jval_write(b, k);
	}
	cm_buf_putc(b, '}');
}

int cm_repair_write_event(cm_repair *r, const cm_jval *ev, cm_evout *eo, int *moved)
{
	int64_t tid;
	*moved = decide(r, ev, &tid);
	if (cm_evout_next(eo) < 0)
		return -1;
	if (*moved)
		write_moved(&eo->buf, ev, tid);
	else
		cm_jval_write(&eo->buf, ev);
	return 0;
}

int cm_repair_event_text(cm_repair *r, cm_arena *arena, const char *text, size_t len, const cm_jval **ev)
{
	int64_t tid;
	cm_jval *v = cm_jval_parse_py(arena, text, len);
	if (!v || v->type != CM_J_OBJ || !decide(r, v, &tid))
		return 0;
	/* hand back a copy whose tid is the new one */
	{
		char *num = cm_arena_alloc(arena, 24);
		int n = snprintf(num, 24, "%lld", (long long)tid);
		for (cm_jval *k = v->kids; k; k = k->next)
			if (k->klen == 3 && !memcmp(k->key, "tid", 3)) {
				k->type = CM_J_NUM;
				k->s = num;
				k->len = (uint32_t)n;
			}
	}
	*ev = v;
	return 1;
}

int cm_repair_write_text(cm_repair *r, cm_arena *arena, const char *text, size_t len, cm_evout *eo)
{
	const cm_jval *ev;
	if (cm_evout_next(eo) < 0)
		return -1;
	if (r) {
		cm_arena_reset(arena);
		if (cm_repair_event_text(r, arena, text, len, &ev)) {
			cm_jval_write(&eo->buf, ev);
			return 0;
		}
	}
	cm_buf_put(&eo->buf, text, len);
	return 0;
}

/* The (pid, to) rows that gained events, sorted, one name each. */
struct row {
	int64_t pid, tid;
	const char *name;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int cm_repair_write_metadata(cm_repair *r, cm_evout *eo)
{
	size_t n = 0;
	struct row *rows = cm_xmalloc((cm_hmap_count(r->moves) + 1) * sizeof *rows);
	int rc = 0;
	for (size_t i = 0; i < cm_hmap_slots(r->moves); i++) {
		const int64_t *key;
		const struct move *mv = cm_hmap_slot(r->moves, i, (const void **)&key);
		int64_t row[2];
		if (!mv)
			continue;
		row[0] = key[0];
		row[1] = key[2];
		if (cm_hmap_get(r->named, row))
			continue;
		cm_hmap_put(r->named, row, NULL); /* once per row */
		rows[n].pid = key[0];
		rows[n].tid = key[2];
		rows[n].name = mv->name;
		n++;
	}
	qsort(rows, n, sizeof *rows, cmp_row);
	for (size_t i = 0; i < n && !rc; i++) {
		char text[300];
		if (rows[i].name)
			snprintf(text, sizeof text, "thread %lld (%s)", (long long)rows[i].tid, rows[i].name);
		else
			snprintf(text, sizeof text, "thread %lld", (long long)rows[i].tid);
		rc = cm_evout_meta(eo, "thread_name", "0", rows[i].pid, rows[i].tid, "name", text, 0) ||
		     cm_evout_meta(eo, "thread_sort_index", "0", rows[i].pid, rows[i].tid, "sort_index", NULL,
				   rows[i].tid);
	}
	free(rows);
	return rc ? -1 : 0;
}

void cm_repair_report(const cm_repair *r)
{
	char detail[400];
	size_t k = 0, threads = 0;
	detail[0] = 0;
	for (size_t i = 0; i < cm_hmap_slots(r->moves); i++) {
		const int64_t *key;
		const struct move *mv = cm_hmap_slot(r->moves, i, (const void **)&key);
		if (!mv)
			continue;
		threads++;
		if (k < sizeof detail - 80)
			k += (size_t)snprintf(detail + k, sizeof detail - k, "%s%lld:%lld->%lld x%llu", k ? ", " : "",
					      (long long)key[0], (long long)key[1], (long long)key[2],
					      (unsigned long long)mv->events);
	}
	cm_warn(NULL, -1, "thread repair: moved %llu events of %zu thread%s%s%s%s", (unsigned long long)r->moved,
		threads, threads == 1 ? "" : "s", threads ? " (pid:from->to xevents: " : "", detail,
		threads ? ")" : "");
}
