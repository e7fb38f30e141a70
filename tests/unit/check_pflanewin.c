/* check_pflanewin.c - the lanes' window (pflanewin.c): what the lanes
 * forget, and when, against a search of every slice placed before that
 * could clash; and the window's policy, as a model, which bounds what is
 * remembered.  (The placing's own tests are check_pflaneq.c's.) */
#include "config.h"
#include "check_common.h"
#include "pftrace/pfintern.h"
#include "pftrace/pflanes_int.h" /* (the slices remembered, the table, the window) */
#include "check_lanesearch.h"

#include <pthread.h>

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

/* A slice that begins at the nanosecond of a shorter one of its thread
 * that the window forgot long before: a CPU operator of the CPU trace and a
 * runtime call of its thread from the window, which reaches the lanes after
 * the CPU trace's slices (BENCHMARKS.md "lanes26", "lanes27"; the 200M
 * pair's 503 are GPU spans tied with a kernel of their stream, the same
 * thing a phase later).  The call on the operator's lane would have its
 * begin after the operator's in the file and be closed by the operator's
 * end: it goes on another lane, the operator kept for it because its
 * (thread, begin) passes the filter of the calls (pflanetie.c), as
 * pflaneq.c sets it: CALL and SPAN for the operators, SPAN for the calls.
 * The thread's operators from 1 s, 4 us apart, 1-3 us long, now and then
 * a parent around one (the same begin, written after it: on lane 1), and
 * one at 100 s; then a call at each operator's begin, in order, shorter
 * than it (it may share the operator's lane: its begin after the
 * operator's, its end before), or longer, up to 4 us (longer than the
 * parent too, or not).  The calls clash with nothing but the operators
 * that begin where they do.  The window forgets the operators at the first
 * rebuild after the calls begin (they end 10 s behind the thread's latest
 * begin), or while they come (30,000: the window halves).  Loops: 3,000
 * operators, or 30,000; on another thread of the shard too, interleaved
 * (_i % 2); _i 4: no filter, the lanes as before lanes27 (a call on the
 * lane the window alone gives it: the operator's, where the operator is
 * forgotten, for many).  Each call on the first lane where no operator begins at its
 * begin and is shorter. */
#define NTIED 30000
START_TEST(lanes_tied)
{
	static struct placed op[NTIED + 1];
	cm_pflanes *l = cm_pflanes_new();
	cm_pfties *f = cm_pfties_new(NTIED);
	uint64_t r = 0x71ED0BEu + (uint64_t)_i * 7919u;
	unsigned nop = _i < 2 || _i == 4 ? 3000 : NTIED, i, j, lane, clane, ties = 0, moved = 0, wrong = 0;
	int64_t at = 1000000000, b, e;
	for (i = 0; i < nop; i++) {
		r = r * 6364136223846793005u + 1442695040888963407u;
		op[i].b = at, op[i].e = at + 1000 + (int64_t)((r >> 30) % 2000), op[i].thread = 1, op[i].i = i;
		if (i && (r >> 50) % 4 == 0 && op[i - 1].b == at - 4000 && op[i - 1].e < at - 500) { /* a parent */
			op[i].b = op[i - 1].b, op[i].e = at - 500;
		} else {
			at += 4000;
		}
		cm_pfties_add(f, 1, op[i].b, CM_PFTIES_CALL); /* (a call to come at every begin) */
	}
	if (_i < 4)
		cm_pflanes_ties(l, f, CM_PFTIES_CALL | CM_PFTIES_SPAN);
	for (i = 0; i < nop; i++) {
		op[i].lane = cm_pflanes_place(l, 1, op[i].b, op[i].e);
		if (_i % 2)
			cm_pflanes_place(l, 2, op[i].b, op[i].b + 500); /* (another thread of the shard) */
	}
	cm_pflanes_place(l, 1, 100000000000ll, 100000000010ll);
	if (_i < 4)
		cm_pflanes_ties(l, f, CM_PFTIES_SPAN); /* (the window's: no call kept) */
	for (i = 0; i < nop; i++) {
		r = r * 6364136223846793005u + 1442695040888963407u;
		if (i + 1 < nop && op[i + 1].b == op[i].b)
			continue; /* (one call at a begin: at its parent's turn) */
		b = op[i].b;
		if (i && op[i - 1].b == b) /* (the child's duration) */
			e = b + ((r >> 40) % 2 ? 500 + (int64_t)((r >> 20) % 500) : op[i - 1].e - b + 1 + (int64_t)((r >> 20) % (uint64_t)(3999 - (op[i - 1].e - b))));
		else
			e = b + ((r >> 40) % 2 ? 500 + (int64_t)((r >> 20) % 500) : op[i].e - b + 1 + (int64_t)((r >> 20) % (uint64_t)(3999 - (op[i].e - b))));
		clane = cm_pflanes_place(l, 1, b, e);
		for (lane = 0;; lane++) {
			for (j = i ? i - 1 : 0; j <= i && !(op[j].lane == lane && op[j].b == b && op[j].e < e); j++)
				;
			if (j > i)
				break;
		}
		for (j = i ? i - 1 : 0; j <= i; j++)
			ties += op[j].b == b && op[j].e < e;
		moved += clane != 0;
		if (_i < 4)
			ck_assert_uint_eq(clane, lane);
		else /* (before lanes27: the window alone, the operators forgotten) */
			wrong += clane != lane;
	}
	ck_assert_uint_gt(ties, nop / 4);
	ck_assert_uint_gt(moved, 0);
	ck_assert_uint_eq(wrong > nop / 8, _i == 4); /* (the defect, without the filter) */
	ck_assert_int_eq(l->window < WINDOW_NS, _i >= 2 && _i < 4);
	/* only the operators that passed the filter kept: all of them (a
	 * call at each), none of the calls (SPAN only) nor of thread 2 but
	 * a false positive's */
	ck_assert_uint_ge(cm_pflanes_kept(l, NULL), _i < 4 ? nop : 0);
	ck_assert_uint_le(cm_pflanes_kept(l, NULL), _i < 4 ? nop + nop / 20 : 0);
	cm_pflanes_free(l);
	cm_pfties_free(f);
}
END_TEST

/* The filter of ties (pflanetie.c): every key added is found, for its kind
 * (no false negative: a tie missed), whatever the filter's size, a key
 * added from several threads at once too; a key not added is found
 * rarely (a false positive only costs the lanes an entry kept), under 2 %
 * while it has 16 bits a key or more.  Loops: keys of 1 to 4 M (the last
 * past the filter's 8 MiB: fewer bits a key), threads or the kinds mixed. */
struct addjob {
	cm_pfties *f;
	uint64_t from, n;
};

/* The key numbered K: a thread key (a hash, as cm_pflaneq_key's) and a
 * begin near the last, a call's kind for even K. */
static void nth_key(uint64_t k, uint64_t *thread, int64_t *b, unsigned *kind)
{
	uint64_t x = (k % 7 + 1) * 0x9E3779B97F4A7C15u;
	*thread = x ^ x >> 29;
	*b = 1000000000ll + (int64_t)k * 37;
	*kind = k % 2 ? CM_PFTIES_SPAN : CM_PFTIES_CALL;
}

static void *add_keys(void *p)
{
	const struct addjob *a = p;
	for (uint64_t k = a->from; k < a->from + a->n; k++) {
		uint64_t t;
		int64_t b;
		unsigned kind;
		nth_key(k, &t, &b, &kind);
		cm_pfties_add(a->f, t, b, kind);
	}
	return NULL;
}

START_TEST(ties_filter)
{
	static const uint64_t sizes[] = {1, 100, 3000, 100000, 4000000};
	uint64_t n = sizes[_i], k, fp = 0, asked = 0;
	cm_pfties *f = cm_pfties_new(n);
	pthread_t th[4];
	struct addjob a[4];
	for (int i = 0; i < 4; i++) {
		a[i].f = f, a[i].from = n * (uint64_t)i / 4, a[i].n = n * (uint64_t)(i + 1) / 4 - a[i].from;
		ck_assert_int_eq(pthread_create(&th[i], NULL, add_keys, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_ge(cm_pfties_bytes(f) * 8, n < (1u << 22) ? 16 * n : 16 * (1u << 20) * 4);
	for (k = 0; k < n; k++) {
		uint64_t t;
		int64_t b;
		unsigned kind;
		nth_key(k, &t, &b, &kind);
		ck_assert_msg(cm_pfties_has(f, t, b, kind), "key %llu of %llu not found", (unsigned long long)k,
			      (unsigned long long)n);
		ck_assert(cm_pfties_has(f, t, b, CM_PFTIES_CALL | CM_PFTIES_SPAN));
		/* the same key a step off, and of the other kind: not added */
		fp += cm_pfties_has(f, t, b + 1, CM_PFTIES_CALL | CM_PFTIES_SPAN);
		fp += cm_pfties_has(f, t, b, kind ^ (CM_PFTIES_CALL | CM_PFTIES_SPAN));
		asked += 2;
	}
	if (n >= 3000 && n < 1000000)
		ck_assert_msg(fp * 50 < asked, "%llu false positives of %llu", (unsigned long long)fp,
			      (unsigned long long)asked);
	cm_pfties_free(f);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pflanewin");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, lanes_forget, 0, 6);
	tcase_add_loop_test(tc, lanes_behind, 0, 6);
	tcase_add_loop_test(tc, lanes_bound, 0, 2);
	tcase_add_loop_test(tc, lanes_tied, 0, 5);
	tcase_add_loop_test(tc, ties_filter, 0, 5);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
