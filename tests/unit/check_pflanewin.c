/* check_pflanewin.c - the lanes' window (pflanewin.c): what the lanes
 * forget, and when, against a search of every slice placed before that
 * could clash; and the window's policy, as a model, which bounds what is
 * remembered.  (The placing's own tests are check_pflaneq.c's.) */
#include "config.h"
#include "check_common.h"
#include "pftrace/pfintern.h"
#include "pftrace/pflanes_int.h" /* (the slices remembered, the table, the window) */
#include "check_lanesearch.h"

/* The window's policy (pflanewin.c's cm_pflanes_room), as a model: the
 * slices remembered (node 0 included), the table's size and the window
 * after the placing of a slice of non-zero duration that begins at B on
 * thread T, the slices P[0..N) placed before it.  However the lanes hold
 * their slices (nodes, lists), they remember those that ended at or after
 * their horizon each time the table was full: a window behind their
 * thread's run's latest begin, or behind its latest begin of all where
 * they begin after the run's.  Threads below MODEL_THREADS. */
#define MODEL_THREADS 2048
#define MODEL_SLICES 20000
struct winmodel {
	size_t nn, cap;
	int64_t window;
	int64_t run[MODEL_THREADS], top[MODEL_THREADS]; /* each thread's latest begins */
	unsigned char gone[MODEL_SLICES]; /* each slice forgotten */
};

static void model_init(struct winmodel *m)
{
	memset(m, 0, sizeof *m);
	m->nn = 1, m->cap = 1024, m->window = WINDOW_NS;
	for (unsigned t = 0; t < MODEL_THREADS; t++)
		m->run[t] = m->top[t] = INT64_MIN;
}

/* The slices kept, those of P[0..N) that end behind their horizon
 * forgotten. */
static size_t model_kept(const struct placed *p, unsigned n, struct winmodel *m)
{
	size_t k = 1;
	for (unsigned i = 0; i < n; i++) {
		unsigned t = p[i].thread;
		int64_t latest = p[i].b > m->run[t] ? m->top[t] : m->run[t];
		if (p[i].e > p[i].b && latest > INT64_MIN + m->window && p[i].e < latest - m->window)
			m->gone[i] = 1;
		k += p[i].e > p[i].b && !m->gone[i];
	}
	return k;
}

static void model_place(struct winmodel *m, const struct placed *p, unsigned n, unsigned t, int64_t b)
{
	if (b > m->run[t] || m->run[t] - b > m->window) /* (the run's latest begin, or a new run) */
		m->run[t] = b;
	m->top[t] = b > m->top[t] ? b : m->top[t];
	if (m->nn == m->cap) {
		for (m->nn = model_kept(p, n, m); m->nn * 2 > m->cap;)
			if (m->cap < MAX_NODES)
				m->cap *= 2;
			else if (m->window > 1)
				m->window /= 2, m->nn = model_kept(p, n, m);
			else
				break;
		m->cap *= m->nn == m->cap ? 2 : 1;
	}
	m->nn++;
}

/* The lists through the window (pflanewin.c's rebuild keeps a list's
 * slices in place, less those it forgets): 64 threads at once, each a run
 * of slices one after another (its lane 0 a list); now and then one goes
 * back over the begin of its thread's last (the list goes into the treap)
 * and the thread ends, a new one in its place.  That slice clashes with
 * the last one only (one the window keeps): a listed slice lost at a
 * rebuild would put it on lane 0.  Each slice on the first lane without a
 * clash, by looking at every slice of its thread; after each, the slices
 * remembered, the table and the window as the model's (above).  Loops 0-3:
 * a slice a 33 ms step, a run longer than the window (some 300 slices):
 * the runs' first slices forgotten, the rest listed; a thread that ended
 * keeps its last window (nothing tells it from one that will come back),
 * so the table of 1,024, placed again at 1,023 slices, grows to 4,096 by
 * 3,500 (main before lanes25, which forgot by the latest begin of all,
 * placed it again every 700 or so).  Loops 4-5: 1 ms, the window over
 * 8,192 slices: it halves. */
#define NLANES_FORGET 20000
#define FORGET_THREADS 64
START_TEST(lanes_forget)
{
	static struct placed p[NLANES_FORGET];
	static unsigned before[NLANES_FORGET], head[NLANES_FORGET + FORGET_THREADS + 1];
	static struct winmodel m;
	cm_pflanes *l = cm_pflanes_new();
	model_init(&m);
	memset(head, 0, sizeof head); /* (with CK_FORK=no, the loop before's) */
	uint64_t r = 0xC0FFEE11u + (uint64_t)_i * 2654435761u;
	unsigned thr[FORGET_THREADS], last[FORGET_THREADS], next = 1, i, j, lane, backs = 0;
	unsigned n = _i < 4 ? 6000 : NLANES_FORGET;
	int64_t step = _i < 4 ? 33333333 : 1000000, at = 0;
	for (i = 0; i < FORGET_THREADS; i++)
		thr[i] = next++, last[i] = NLANES_FORGET;
	for (i = 0; i < n; i++) {
		unsigned s;
		int64_t b, e;
		r = r * 6364136223846793005u + 1442695040888963407u;
		s = (unsigned)(r >> 58) % FORGET_THREADS;
		if (last[s] < NLANES_FORGET && p[last[s]].b > at - 100 * step && (r >> 20) % 16 == 0) {
			/* back over its last one's begin (placed within 100
			 * steps: one the window keeps) */
			b = p[last[s]].b - 1, e = p[last[s]].b + 1;
		} else { /* after all (they end within their step) */
			at += step;
			b = at, e = at + 2 + (int64_t)((r >> 24) % (uint64_t)(step - 3));
		}
		p[i].b = b, p[i].e = e, p[i].thread = thr[s], p[i].i = i;
		p[i].lane = cm_pflanes_place(l, thr[s], b, e);
		ck_assert_uint_lt(thr[s], MODEL_THREADS);
		model_place(&m, p, i, thr[s], b);
		ck_assert_uint_eq(l->nn, m.nn);
		ck_assert(l->cap == m.cap && l->window == m.window);
		ck_assert_uint_le(l->nnode, l->nn); /* (the listed slices' nodes have room) */
		for (lane = 0;; lane++) { /* the first lane without a clash, by looking at all */
			for (j = head[thr[s]]; j; j = before[j - 1]) {
				const struct placed *q = &p[j - 1];
				if (q->lane == lane && clash(q, b, e))
					break;
			}
			if (!j)
				break;
		}
		ck_assert_uint_eq(p[i].lane, lane);
		before[i] = head[thr[s]], head[thr[s]] = i + 1; /* (its thread's, newest first) */
		if (b < at) /* the thread ends */
			backs++, thr[s] = next++, last[s] = NLANES_FORGET;
		else
			last[s] = i;
	}
	ck_assert_uint_gt(backs, n / 30);
	ck_assert_int_eq(m.window < WINDOW_NS, _i >= 4); /* (the window halved, in loops 4-5) */
	cm_pflanes_free(l);
}
END_TEST

/* Slices far behind the latest begin, as a CPU thread's runtime calls come
 * from the window after the CPU trace: the lanes first take slices late in
 * trace time (the CPU trace's last ones, nested runs in order) on the
 * thread or on another of its shard, then the thread's slices from 99 s
 * before, in the order of their begins: nested, tied, over the end of the
 * one before, after it.  The table fills while they come and is placed
 * again.  Each slice on the first lane without a clash, found by looking
 * at every slice of its thread that could clash (the late ones, and the
 * early ones that end at or after its begin: they come in order, none
 * longer than MAXDUR).  A window that followed the latest begin of all
 * (main before lanes25) forgot the early ones at every rebuild: the first
 * after it that went over the end of the one before went on its lane (so
 * the one placed when the table is full goes over the end of the one
 * before where it can).  Loops: the late ones on the thread or on another
 * (_i % 2); 6,000 early ones in 1 us steps, or in 3 ms steps (over 10 s:
 * the window moves along them), or 20,000 in 1 us steps (over MAX_NODES:
 * the window halves). */
#define NBEHIND 20000
#define NBEHIND_LATE 300
START_TEST(lanes_behind)
{
	static struct placed p[NBEHIND_LATE + NBEHIND];
	cm_pflanes *l = cm_pflanes_new();
	uint64_t r = 0xBE41D5EEu + (uint64_t)_i * 40503u;
	unsigned k = (unsigned)_i / 2, late_thread = _i % 2 ? 2 : 1, n = NBEHIND_LATE + (k == 2 ? NBEHIND : 6000);
	int64_t scale = k == 1 ? 3000000 : 1000, maxdur = 60 * scale, late = 100000000000ll, early = 1000000000;
	int64_t at = 0, open_b = 0, open_e = 0, lastb = 0;
	unsigned i, j, lo = NBEHIND_LATE, lane, maxlane = 0;
	for (i = 0; i < n; i++) {
		int64_t b, e, d;
		unsigned t = i < NBEHIND_LATE ? late_thread : 1;
		r = r * 6364136223846793005u + 1442695040888963407u;
		d = (int64_t)((r >> 20) % 50) + 1;
		if (i < NBEHIND_LATE) { /* the late ones, in ns */
			b = late + (int64_t)i * 8000 + (int64_t)((r >> 40) % 4) * 1000;
			e = b + d * 1000 * (i % 5 ? 1 : 9);
		} else {
			/* the table full: placed again before this one, which then
			 * goes over the end of the one before where it can */
			switch (l->nn == l->cap ? 1 : (unsigned)(r >> 33) % 4) {
			case 0: /* inside the one before, or tied with it */
				b = open_b + (int64_t)((r >> 40) % 3);
				e = open_e > b ? b + 1 + d % (open_e - b) : b + d;
				break;
			case 1: /* over the end of the one before */
				b = at - (int64_t)((r >> 40) % 3);
				e = b + d + 1;
				break;
			default: /* after it, or where it ends */
				b = at + (int64_t)((r >> 40) % 4);
				e = b + d;
				break;
			}
			if (b < lastb) /* (in order) */
				b = lastb;
			if (e <= b)
				e = b + d;
			lastb = b;
			if (b >= at || b >= open_b)
				open_b = b, open_e = e;
			if (e > at)
				at = e;
			b = early + b * scale, e = early + e * scale;
			ck_assert_int_le(e - b, maxdur);
		}
		p[i].b = b, p[i].e = e, p[i].thread = t, p[i].i = i;
		p[i].lane = cm_pflanes_place(l, t, b, e);
		if (i < NBEHIND_LATE) {
			ck_assert_uint_eq(p[i].lane, first_free_lane(p, i, t, b, e));
			continue;
		}
		while (p[lo].b + maxdur < b) /* (the early ones before LO end before B) */
			lo++;
		for (lane = 0;; lane++) { /* the late ones of its thread, and the early ones from LO */
			for (j = 0; j < i; j = j + 1 == NBEHIND_LATE ? lo : j + 1)
				if (p[j].thread == t && p[j].lane == lane && clash(&p[j], b, e))
					break;
			if (j >= i)
				break;
		}
		ck_assert_uint_eq(p[i].lane, lane);
		if (lane > maxlane)
			maxlane = lane;
	}
	ck_assert_uint_gt(maxlane, 0);
	ck_assert_int_eq(l->window < WINDOW_NS, k == 2); /* (the window halved, in loops 4-5) */
	cm_pflanes_free(l);
}
END_TEST

/* The window bounds what is remembered however far back a thread's slices
 * go: one thread whose runs of 100 slices, each in order, begin each 20 s
 * (twice the window at first) before the run before.  Each run begins a
 * new run of the thread (its latest begin goes back to it), and the runs
 * before are ahead of it: forgotten a window behind the first run's latest
 * begin (pflanewin.c), all but that one's last slices.  After each slice
 * the slices remembered, the table and the window as the model's (above),
 * the table the first's; and each slice on the first lane without a clash
 * among the slices of its run (the only ones that can clash with it: the
 * runs are apart). */
#define NBOUND MODEL_SLICES
START_TEST(lanes_bound)
{
	static struct placed p[NBOUND];
	static struct winmodel m;
	cm_pflanes *l = cm_pflanes_new();
	uint64_t r = 0xB0D11D5u + (uint64_t)_i;
	int64_t at = 0;
	unsigned i, run;
	model_init(&m);
	for (i = 0; i < NBOUND; i++) {
		r = r * 6364136223846793005u + 1442695040888963407u;
		if (i % 100 == 0) /* a run, 20 s before the run before */
			at = 10000000000000ll - (int64_t)(i / 100) * 20000000000ll;
		at += (int64_t)((r >> 20) % 1000);
		p[i].b = at, p[i].e = at + 1 + (int64_t)((r >> 40) % 2000), p[i].thread = 1, p[i].i = i;
		p[i].lane = cm_pflanes_place(l, 1, p[i].b, p[i].e);
		model_place(&m, p, i, 1, p[i].b);
		ck_assert_uint_eq(l->nn, m.nn);
		ck_assert(l->cap == m.cap && l->window == m.window);
		ck_assert_uint_eq(l->cap, 1024);
		run = i - i % 100;
		ck_assert_uint_eq(p[i].lane, first_free_lane(p + run, i - run, 1, p[i].b, p[i].e));
	}
	cm_pflanes_free(l);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pflanewin");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, lanes_forget, 0, 6);
	tcase_add_loop_test(tc, lanes_behind, 0, 6);
	tcase_add_loop_test(tc, lanes_bound, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
