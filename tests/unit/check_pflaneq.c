/* check_pflaneq.c - which lane of its thread a slice goes on: pflanes.c's
 * placement (against a search of every slice placed before, and the trace
 * processor's pairing), the threads' keys, and pflaneq.c's queue, which
 * places batches put from several threads as in batch order.  (The tracks
 * that take no lane are check_pflanes.c's; what the lanes forget,
 * pflanewin.c's window, check_pflanewin.c's.)  One program for the two
 * files, because the queue's test checks against pflanes.c's placement. */
#include "config.h"
#include "check_common.h"
#include "pftrace/pfintern.h"
#include "pftrace/pflaneq.h"
#include "check_lanesearch.h"

#include <pthread.h>
#include <time.h>

/* Lanes: a slice goes to a second lane only when the first would pair a
 * begin or end of it with another slice's. */
START_TEST(lanes)
{
	cm_pflanes *l = cm_pflanes_new();
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 100, 200), 0);
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 100, 150), 0); /* shorter after longer: fine */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 100, 300), 1); /* longer after shorter: clash */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 100, 400), 2); /* clashes on 0 and 1 */
	ck_assert_uint_eq(cm_pflanes_place(l, 8, 100, 300), 0); /* another thread */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 50, 100), 3);  /* ends where lanes 0-2 begin */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 300, 300), 0); /* zero duration: never */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 200, 250), 0); /* begins where one ends: fine */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 180, 260), 1); /* over the end of [100, 200] */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 110, 140), 0); /* inside [100, 150] */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 90, 180), 4);  /* over the begin of ones on 0-3 */
	cm_pflanes_free(l);
}
END_TEST

/* Slices in random order (or in the order of their begins), with ties and overlaps, on a few threads: on each
 * lane the trace processor's pairing (packets sorted by time, ties in file
 * order, an end closing the innermost open slice) closes each slice at
 * its own end's time; and each slice goes on the first lane where that holds,
 * found by looking at every slice placed before it.  Enough slices for the
 * lanes' nodes to be placed again (rebuilt) a few times; the last loops
 * move them along over three times the window of trace time, so that old
 * ones are forgotten. */
#define NLANES_RAND 3000
static int by_time(const void *x, const void *y)
{
	const int64_t *a = x, *b = y; /* time, file order */
	return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : (a[1] < b[1] ? -1 : a[1] > b[1]);
}

START_TEST(lanes_random)
{
	static struct placed p[NLANES_RAND];
	static int64_t pk[2 * NLANES_RAND][3], stack[NLANES_RAND];
	cm_pflanes *l = cm_pflanes_new();
	uint64_t r = 0x1234567u + (uint64_t)_i * 7919u;
	/* ns; the last loops: 1 ms a step, from 10 ms later each slice, over
	 * 30 s in all (three times the window).  Loops 8 to 15 do the same
	 * with the begins in order (pflanes.c's in-order lanes), ties often;
	 * the odd ones go back in time now and then (a lane leaves that mode) */
	int sorted = _i >= 8, k = _i % 8;
	int64_t span = 300, scale = k < 6 ? 1 : 1000000, step = k < 6 ? 0 : 10, at = 0;
	unsigned i, lane, maxlane = 0;
	for (i = 0; i < NLANES_RAND; i++) {
		int64_t b, e;
		r = r * 6364136223846793005u + 1442695040888963407u;
		if (sorted) {
			at += (int64_t)((r >> 20) % 4);
			b = (at + step * i) * scale;
			if (k % 2 && i % 500 == 499)
				b -= (int64_t)((r >> 30) % 100) * scale;
		} else {
			b = ((int64_t)((r >> 20) % (uint64_t)span) + step * i) * scale;
		}
		e = b + (int64_t)((r >> 45) % 40 < 3 ? 0 : (r >> 40) % 60) * scale;
		p[i].b = b, p[i].e = e, p[i].thread = (unsigned)(r >> 60) % 3 + 1, p[i].i = i;
		p[i].lane = cm_pflanes_place(l, p[i].thread, b, e);
		if (e > b)
			ck_assert_uint_eq(p[i].lane, first_free_lane(p, i, p[i].thread, b, e));
		if (p[i].lane > maxlane)
			maxlane = p[i].lane;
	}
	ck_assert_uint_gt(maxlane, 2);
	for (unsigned t = 1; t <= 3; t++)
		for (lane = 0; lane <= maxlane; lane++) {
			size_t n = 0, depth = 0, x;
			for (i = 0; i < NLANES_RAND; i++)
				if (p[i].thread == t && p[i].lane == lane) { /* begin, then its end next in the file */
					pk[n][0] = p[i].b, pk[n][1] = 2 * (int64_t)i, pk[n++][2] = i;
					pk[n][0] = p[i].e, pk[n][1] = 2 * (int64_t)i + 1, pk[n++][2] = -1 - (int64_t)i;
				}
			qsort(pk, n, sizeof *pk, by_time);
			for (x = 0; x < n; x++)
				if (pk[x][2] >= 0) {
					stack[depth++] = pk[x][2];
				} else {
					/* the end closes a slice that ends then: its own,
					 * or one that ends with it (ends carry nothing else) */
					ck_assert_uint_gt(depth, 0);
					ck_assert_int_eq(p[stack[--depth]].e, pk[x][0]);
				}
		}
	cm_pflanes_free(l);
}
END_TEST

/* The lanes' append (pflanes.c): a lane out of the in-order mode (a slice
 * went back in time) whose next slices begin at or after the end of all of
 * its slices, as a stream row's kernels do, one after another, but for an
 * overlap (a sync over a memcpy's end), a tie or a slice back in time now and
 * then: each slice on the first lane without a clash, found by looking at
 * every slice placed before it, and the append taken for most of them.
 * Loops: how often a slice goes back (1 in 4 to 1 in 64), on three
 * threads, with the times in ns or in steps of 7.5 ms (over 25 times the
 * window: the nodes placed again, old slices forgotten, which could not
 * clash any more; the threads drift apart in time, which a window that
 * followed the latest begin of all, before lanes25, did not take: loops 1,
 * 3 and 7 failed). */
#define NLANES_APPEND 4000
START_TEST(lanes_append)
{
	static struct placed p[NLANES_APPEND];
	cm_pflanes *l = cm_pflanes_new();
	uint64_t r = 0x9E3779B9u + (uint64_t)_i * 104729u;
	int64_t at[4] = {0, 0, 0, 0}, scale = _i % 2 ? 7500000 : 1;
	unsigned i, lane, back = 4u << (_i / 2), maxlane = 0;
	for (i = 0; i < NLANES_APPEND; i++) {
		unsigned t;
		int64_t b, e, d;
		r = r * 6364136223846793005u + 1442695040888963407u;
		/* (over the window too, the threads apart in time: each
		 * thread's lanes forget by its own latest begin, pflanewin.c) */
		t = (unsigned)(r >> 62) % 3 + 1;
		d = (int64_t)((r >> 20) % 50) + 1;
		switch ((unsigned)(r >> 30) % back) {
		case 0: /* back in time, into what is placed */
			b = at[t] - (int64_t)((r >> 40) % 200);
			break;
		case 1: /* over the end of the one before */
			b = at[t] - (int64_t)((r >> 40) % 3);
			break;
		default: /* after it, or where it ends */
			b = at[t] + (int64_t)((r >> 40) % 4);
			break;
		}
		e = b + d;
		if (e > at[t])
			at[t] = e;
		p[i].b = b * scale, p[i].e = e * scale, p[i].thread = t, p[i].i = i;
		p[i].lane = cm_pflanes_place(l, t, p[i].b, p[i].e);
		lane = first_free_lane(p, i, t, p[i].b, p[i].e);
		ck_assert_uint_eq(p[i].lane, lane);
		if (lane > maxlane)
			maxlane = lane;
	}
	ck_assert_uint_gt(maxlane, 0);
	ck_assert_uint_gt(cm_pflanes_appends(l), NLANES_APPEND / 4); /* the append taken */
	cm_pflanes_free(l);
}
END_TEST

/* The list in front of a treap (pflanes.c): a thread's lanes first take
 * slices late in trace time (the CPU trace's last, which its lanes
 * remember), then slices from early on, mostly in order (the window's
 * runtime calls, after the CPU trace), nested, tied, over the end of the
 * one before; now and then one goes back in time, or reaches the late ones
 * (the list's slices then go into the treap).  Each slice on the first
 * lane without a clash, found by looking at every slice placed before it;
 * and the list taken, for most of the early ones where none goes back.
 * Loops: how often a slice goes back or reaches the late ones (never, or
 * 1 in 8 to 1 in 256), times in ns or in us (within the window: the
 * nodes are placed again as the table grows, none forgotten), one thread
 * or three. */
#define NLANES_FRONT 4000
#define NLANES_LATE 400
START_TEST(lanes_front)
{
	static struct placed p[NLANES_FRONT];
	cm_pflanes *l = cm_pflanes_new();
	uint64_t r = 0x51ED2701u + (uint64_t)_i * 15485863u;
	int64_t at[4] = {0, 0, 0, 0}, open_b[4] = {0, 0, 0, 0}, open_e[4] = {0, 0, 0, 0}, lastb[4] = {0, 0, 0, 0};
	int64_t scale = _i % 2 ? 1000 : 1, late = 1000000;
	unsigned i, lane, odd = _i / 4 ? 4u << _i / 4 : 0, nthr = _i % 4 < 2 ? 1 : 3, maxlane = 0;
	for (i = 0; i < NLANES_FRONT; i++) {
		unsigned t;
		int64_t b, e, d;
		r = r * 6364136223846793005u + 1442695040888963407u;
		t = (unsigned)(r >> 62) % nthr + 1;
		d = (int64_t)((r >> 20) % 50) + 1;
		if (i < NLANES_LATE) { /* the late ones, nested runs in order */
			b = late + (int64_t)i * 8 + (int64_t)((r >> 40) % 4);
			e = b + d * (i % 5 ? 1 : 9);
		} else if (odd && (unsigned)(r >> 30) % odd == 0) {
			if (r >> 63) /* back in time, into what is listed */
				b = at[t] - (int64_t)((r >> 40) % 200);
			else /* reaching the late ones */
				b = late - (int64_t)((r >> 40) % 40);
			e = b + d;
		} else {
			switch ((unsigned)(r >> 33) % 4) {
			case 0: /* inside the one before, or tied with it */
				b = open_b[t] + (int64_t)((r >> 40) % 3);
				e = open_e[t] > b ? b + 1 + d % (open_e[t] - b) : b + d;
				break;
			case 1: /* over the end of the one before */
				b = at[t] - (int64_t)((r >> 40) % 3);
				e = b + d;
				break;
			default: /* after it, or where it ends */
				b = at[t] + (int64_t)((r >> 40) % 4);
				e = b + d;
				break;
			}
			if (b < lastb[t]) /* (in order) */
				b = lastb[t];
			if (e < b)
				e = b + d;
			if (e >= late) /* (the early ones stay early) */
				e = late - 1;
			if (b > e)
				b = e;
			lastb[t] = b;
			if (b >= at[t] || b >= open_b[t])
				open_b[t] = b, open_e[t] = e;
			if (e > at[t])
				at[t] = e;
		}
		p[i].b = b * scale, p[i].e = e * scale, p[i].thread = t, p[i].i = i;
		p[i].lane = cm_pflanes_place(l, t, p[i].b, p[i].e);
		if (p[i].e > p[i].b) {
			lane = first_free_lane(p, i, t, p[i].b, p[i].e);
			ck_assert_uint_eq(p[i].lane, lane);
			if (lane > maxlane)
				maxlane = lane;
		}
	}
	ck_assert_uint_gt(maxlane, 0);
	/* the list taken: for most of the early ones where none goes back,
	 * else at least until the first that does */
	ck_assert_uint_gt(cm_pflanes_fronts(l), odd ? 0 : (NLANES_FRONT - NLANES_LATE) / 2);
	cm_pflanes_free(l);
}
END_TEST

/* A pid or tid of number text or a string, for cm_pflaneq_key. */
static cm_jval jv(int type, const char *s)
{
	cm_jval v;
	memset(&v, 0, sizeof v);
	v.type = (unsigned char)type;
	v.s = s;
	v.len = (uint32_t)strlen(s);
	return v;
}

static uint64_t key_of(int pt, const char *p, int tt, const char *t)
{
	cm_jval pv = jv(pt, p), tv = jv(tt, t);
	return cm_pflaneq_key(&pv, &tv);
}

/* The lanes' thread keys: the events of one thread track (pftrack.c's
 * cm_pf_id: a float cut to its integer part, a pid outside 0..2^32-1 or
 * missing, bool or null is 0, a tid 0, outside it, missing, bool or null
 * is the pid shown, a tid of the pid's string too) have one key, so that
 * their slices share their lanes. */
START_TEST(laneq_keys)
{
	const int N = CM_J_NUM, S = CM_J_STR;
	cm_jval pv = jv(N, "3"), tv = jv(CM_J_TRUE, "");
	ck_assert_uint_eq(key_of(N, "3", N, "5000000000"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3", N, "-1"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "-1", N, "7"), key_of(N, "0", N, "7"));
	ck_assert_uint_eq(key_of(N, "99999999999999999999", N, "7"), key_of(N, "0", N, "7"));
	ck_assert_uint_eq(key_of(N, "3", N, "0"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(S, "Spans", N, "0"), key_of(S, "Spans", N, "-4"));
	/* floats, and no tid at all */
	ck_assert_uint_eq(key_of(N, "3", N, "0.0"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3", N, "-0.5"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3", N, "1e300"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3", N, "4294967296.0"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3.9", N, "7.5"), key_of(N, "3", N, "7"));
	ck_assert_uint_eq(key_of(N, "3", N, "0.7e1"), key_of(N, "3", N, "7"));
	ck_assert_uint_eq(key_of(N, "-2.5", N, "7"), key_of(N, "0", N, "7"));
	ck_assert_uint_eq(cm_pflaneq_key(&pv, NULL), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(cm_pflaneq_key(&pv, &tv), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(cm_pflaneq_key(NULL, &tv), key_of(N, "0", N, "0"));
	/* a string, "" too, is a number of its own, and a tid of the pid's
	 * string its main thread */
	ck_assert_uint_eq(key_of(S, "", S, ""), key_of(S, "", N, "0"));
	ck_assert_uint_eq(key_of(S, "Spans", S, "Spans"), key_of(S, "Spans", N, "0"));
	ck_assert_uint_ne(key_of(S, "", N, "7"), key_of(N, "0", N, "7"));
	/* a string pid: a tid outside is its number shown, from 0x7fff0000 */
	ck_assert_uint_eq(key_of(S, "Spans", N, "-4"), key_of(S, "Spans", N, "2147418113"));
	ck_assert_uint_eq(key_of(S, "Spans", S, "x"), key_of(S, "Spans", S, "x"));
	/* others apart (not needed, but a key a thread spreads them) */
	ck_assert_uint_ne(key_of(N, "3", N, "4"), key_of(N, "4", N, "3"));
	ck_assert_uint_ne(key_of(S, "Spans", N, "1"), key_of(S, "Traces", N, "1"));
	ck_assert_uint_ne(key_of(S, "Spans", N, "-4"), key_of(S, "Spans", N, "4"));
	ck_assert_uint_ne(key_of(N, "1", N, "2"), key_of(N, "1", N, "3"));
}
END_TEST

/* cm_pflaneq_key_ints (pfbatch.c's, of integers read once): the key that
 * cm_pflaneq_key gives their text, in and out of 1..2^32-1. */
START_TEST(laneq_key_ints)
{
	static const char *const ids[] = {"0",		"1",	      "3",	      "-1",	"-4",
					  "4294967295", "4294967296", "5000000000", "2147418113",
					  "-9000000000", "123456789012345678"};
	const size_t n = sizeof ids / sizeof *ids;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n; k++)
			ck_assert_uint_eq(cm_pflaneq_key_ints(strtoll(ids[i], NULL, 10), strtoll(ids[k], NULL, 10)),
					  key_of(CM_J_NUM, ids[i], CM_J_NUM, ids[k]));
}
END_TEST

/* The lanes placed through the queue (pflaneq.c), batches put from four
 * threads in any order, give each slice the lane that placing them all
 * in batch order, each shard apart, gives; and each batch's word of a
 * shard (cm_pflaneq_put's MOVED) is set exactly when one of the shard's
 * slices of the batch went off lane 0 (the sequential part looks for
 * those there alone: pfseg.c). */
#define LQ_BATCHES 200
#define LQ_SLICES 60
#define LQ_SLOTS 8
struct lq_test {
	cm_pflaneq *q;
	struct cm_pflaneq_job jobs[LQ_BATCHES][LQ_SLICES];
	uint32_t start[LQ_BATCHES][CM_PF_SHARDS + 1];
	uint32_t moved[LQ_BATCHES][CM_PF_SHARDS];
	int next; /* the next batch to put (under mu) */
	int order[LQ_BATCHES];
	int put[LQ_BATCHES]; /* put (atomic) */
	int waited;          /* batches the sink-like loop has waited for (atomic) */
	pthread_mutex_t mu;
};

/* A short wait (not sched_yield: on a loaded machine the spinning
 * threads kept the ones they waited for off the CPUs). */
static void lq_nap(void)
{
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
}

static void *lq_putter(void *arg)
{
	struct lq_test *t = arg;
	for (;;) {
		int b;
		pthread_mutex_lock(&t->mu);
		b = t->next < LQ_BATCHES ? t->order[t->next++] : -1;
		pthread_mutex_unlock(&t->mu);
		if (b < 0)
			return NULL;
		/* at most LQ_SLOTS batches in flight, as the pool holds */
		while (b >= __atomic_load_n(&t->waited, __ATOMIC_ACQUIRE) + LQ_SLOTS)
			lq_nap();
		cm_pflaneq_put(t->q, (uint64_t)b, t->jobs[b], t->start[b], t->moved[b]);
		__atomic_store_n(&t->put[b], 1, __ATOMIC_RELEASE);
	}
}

START_TEST(laneq_order)
{
	static struct lq_test t;
	static struct cm_pflaneq_job flat[LQ_BATCHES][LQ_SLICES];
	cm_pflanes *ref[CM_PF_SHARDS];
	pthread_t th[4];
	uint64_t r = 0x9e3779b9u + (uint64_t)_i;
	int b, k, s, i, nmoved = 0;
	memset(&t, 0, sizeof t);
	pthread_mutex_init(&t.mu, NULL);
	t.q = cm_pflaneq_new(LQ_SLOTS); /* its ring goes round many times */
	for (b = 0; b < LQ_BATCHES; b++) {
		uint32_t at[CM_PF_SHARDS];
		for (k = 0; k < LQ_SLICES; k++) { /* nested, overlapping and tied slices on 6 threads */
			r = r * 6364136223846793005u + 1442695040888963407u;
			flat[b][k].key = 1000 + (r >> 61) % 6;
			flat[b][k].b = b * 50 + (int64_t)((r >> 20) % 80);
			flat[b][k].e = flat[b][k].b + 1 + (int64_t)((r >> 40) % 40);
			flat[b][k].at = (uint32_t)k;
		}
		memset(t.start[b], 0, sizeof t.start[b]);
		for (k = 0; k < LQ_SLICES; k++)
			t.start[b][cm_pflaneq_shard(flat[b][k].key) + 1]++;
		for (s = 0; s < CM_PF_SHARDS; s++)
			t.start[b][s + 1] += t.start[b][s], at[s] = t.start[b][s];
		for (k = 0; k < LQ_SLICES; k++)
			t.jobs[b][at[cm_pflaneq_shard(flat[b][k].key)]++] = flat[b][k];
		t.order[b] = b;
	}
	/* each four batches in a shuffled order: out of order often, but
	 * within the slots (or the putters would wait for each other) */
	for (b = 0; b + 4 <= LQ_BATCHES; b += 4)
		for (k = 3; k > 0; k--) {
			int o = (int)((r = r * 6364136223846793005u + 1) >> 33) % (k + 1), x = t.order[b + k];
			t.order[b + k] = t.order[b + o], t.order[b + o] = x;
		}
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, lq_putter, &t), 0);
	/* the sequential part's waits, as the sink's: batch B once every
	 * batch up to it is put */
	for (b = 0; b < LQ_BATCHES; b++) {
		while (!__atomic_load_n(&t.put[b], __ATOMIC_ACQUIRE))
			lq_nap();
		cm_pflaneq_wait(t.q, (uint64_t)b);
		__atomic_store_n(&t.waited, b + 1, __ATOMIC_RELEASE);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (s = 0; s < CM_PF_SHARDS; s++)
		ref[s] = cm_pflanes_new();
	for (b = 0; b < LQ_BATCHES; b++) {
		uint32_t off0[CM_PF_SHARDS] = {0};
		for (k = 0; k < LQ_SLICES; k++) {
			unsigned want = cm_pflanes_place(ref[cm_pflaneq_shard(flat[b][k].key)], flat[b][k].key, flat[b][k].b,
							 flat[b][k].e);
			for (i = 0; i < LQ_SLICES && t.jobs[b][i].at != (uint32_t)k; i++)
				;
			ck_assert_int_lt(i, LQ_SLICES);
			ck_assert_uint_eq(t.jobs[b][i].lane, want);
			if (want)
				off0[cm_pflaneq_shard(flat[b][k].key)] = 1;
		}
		for (s = 0; s < CM_PF_SHARDS; s++) {
			ck_assert_uint_eq(t.moved[b][s], off0[s]);
			nmoved += (int)off0[s];
		}
	}
	ck_assert_int_gt(nmoved, 0); /* (the slices do go off lane 0) */
	for (s = 0; s < CM_PF_SHARDS; s++)
		cm_pflanes_free(ref[s]);
	cm_pflaneq_free(t.q);
	pthread_mutex_destroy(&t.mu);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pflaneq");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, lanes);
	tcase_add_loop_test(tc, lanes_random, 0, 16);
	tcase_add_loop_test(tc, lanes_append, 0, 10);
	tcase_add_loop_test(tc, lanes_front, 0, 28);
	tcase_add_test(tc, laneq_keys);
	tcase_add_test(tc, laneq_key_ints);
	tcase_add_loop_test(tc, laneq_order, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
