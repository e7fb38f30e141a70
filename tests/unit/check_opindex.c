/* check_opindex.c - the operator a CUDA call was made in (gpu/opindex.c), against a brute-force search. */
#include "config.h"
#include "check_common.h"
#include "gpu/opindex.h"

#include <stdint.h>

/* The operators of a test: nested spans on a few threads. */
struct top {
	int64_t pid, tid, ext;
	double ts, end;
};
static struct top ops[60000];
static int nops;

static uint64_t rng;
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

/* Children of [TS, END] on a thread, DEPTH levels deep: properly nested
 * spans, some sharing a start or an end with their parent, as
 * record_function scopes do. */
static void children(int64_t pid, int64_t tid, double ts, double end, int depth)
{
	double t = ts;
	while (depth > 0 && nops < 60000 && t < end) {
		double a = t + (double)(next() % 4), b = a + 1.0 + (double)(next() % 40);
		if (next() % 5 == 0)
			a = t; /* the same start as the one before (or the parent) */
		if (b > end || (next() % 7 == 0 && end - a < 100))
			b = end; /* the same end as the parent */
		if (a >= end)
			break;
		ops[nops++] = (struct top){pid, tid, 1000 + nops, a, b};
		children(pid, tid, a, b, depth - 1 - (int)(next() % 2));
		t = b + (double)(next() % 3);
	}
}

/* The answer by definition: of the operators of (PID, TID) enclosing [TS,
 * END], the latest start; on a tie the shorter; then the later added. */
static int brute(int64_t pid, int64_t tid, double ts, double end, int64_t *ext)
{
	int best = -1;
	for (int i = 0; i < nops; i++) {
		const struct top *o = &ops[i];
		if (o->pid != pid || o->tid != tid || o->ts > ts || o->end < end)
			continue;
		if (best < 0 || o->ts > ops[best].ts || (o->ts == ops[best].ts && o->end <= ops[best].end))
			best = i;
	}
	if (best >= 0)
		*ext = ops[best].ext;
	return best >= 0;
}

/* Operators on three threads of two processes, added in a shuffled order
 * (a trace is not sorted), looked up at many points; BUDGET small enough
 * for many sorted runs (_i = 1) or one (_i = 0). */
START_TEST(against_brute_force)
{
	size_t budget = _i ? 1 : 64u << 20;
	cm_opindex *x = cm_opindex_new(budget);
	int order[60000];
	rng = 0x9e3779b97f4a7c15ull + (uint64_t)_i;
	nops = 0;
	children(7, 7, 0.0, 40000.0, 6);
	children(7, 8, 100.0, 30000.0, 4);
	children(9, 7, 0.0, 20000.0, 5);
	for (int i = 0; i < nops; i++)
		order[i] = i;
	for (int i = nops - 1; i > 0; i--) {
		int j = (int)(next() % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	ck_assert_int_gt(nops, 20000); /* more than one run of the smallest size */
	/* the shuffle changes the added order; ties of start and end then
	 * depend on it, so the brute force sees the same order */
	{
		static struct top sorted[60000];
		for (int i = 0; i < nops; i++)
			sorted[i] = ops[order[i]];
		memcpy(ops, sorted, (size_t)nops * sizeof *ops);
	}
	for (int i = 0; i < nops; i++)
		ck_assert_int_eq(cm_opindex_add(x, ops[i].pid, ops[i].tid, ops[i].ts, ops[i].end, ops[i].ext), 0);
	ck_assert_int_eq(cm_opindex_build(x), 0);
	ck_assert_uint_eq(cm_opindex_count(x), (uint64_t)nops);
	for (int q = 0; q < 5000; q++) {
		static const int64_t threads[][2] = {{7, 7}, {7, 8}, {9, 7}, {9, 8}};
		int t = (int)(next() % 4);
		double ts = (double)(next() % 41000) + (next() % 2 ? 0.5 : 0.0), end = ts + (double)(next() % 8);
		int64_t want = -1, got = -1;
		int w = brute(threads[t][0], threads[t][1], ts, end, &want);
		int g = cm_opindex_find(x, threads[t][0], threads[t][1], ts, end, &got);
		ck_assert_msg(w == g && want == got, "thread %d [%g, %g]: brute force %d (%lld), index %d (%lld)", t, ts,
			      end, w, (long long)want, g, (long long)got);
	}
	cm_opindex_free(x);
}
END_TEST

/* A call on the edges of an operator is inside it; NaN spans are left out;
 * an index without operators finds nothing. */
START_TEST(edges)
{
	cm_opindex *x = cm_opindex_new(0);
	int64_t e = 0;
	ck_assert_int_eq(cm_opindex_add(x, 1, 1, 10.0, 20.0, 5), 0);
	ck_assert_int_eq(cm_opindex_add(x, 1, 1, 10.0, 20.0, 6), 0); /* the same span, added later: inside */
	ck_assert_int_eq(cm_opindex_add(x, 1, 1, 0.0 / 0.0, 30.0, 7), 0);
	ck_assert_int_eq(cm_opindex_build(x), 0);
	ck_assert_uint_eq(cm_opindex_count(x), 2);
	ck_assert_int_eq(cm_opindex_find(x, 1, 1, 10.0, 20.0, &e), 1);
	ck_assert_int_eq(e, 6);
	ck_assert_int_eq(cm_opindex_find(x, 1, 1, 9.999, 15.0, &e), 0);
	ck_assert_int_eq(cm_opindex_find(x, 1, 1, 15.0, 20.001, &e), 0);
	ck_assert_int_eq(cm_opindex_find(x, 1, 2, 15.0, 16.0, &e), 0);
	cm_opindex_free(x);
	x = cm_opindex_new(0);
	ck_assert_int_eq(cm_opindex_build(x), 0);
	ck_assert_int_eq(cm_opindex_find(x, 1, 1, 15.0, 16.0, &e), 0);
	cm_opindex_free(x);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("opindex");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, against_brute_force, 0, 2);
	tcase_add_test(tc, edges);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
