/* check_cpucut.c - the CPU side's cut (cpu/cpucut.c): the range's edges, the
 * steps, and each kind of note's decision, worked out by hand. */
#include "config.h"
#include "check_common.h"
#include "base/diag.h"
#include "cpu/cpucut.h"

#include <math.h>
#include <stdint.h>

/* Add the note (KIND, TS, END, KEY) to K, as the first pass makes it. */
static void note(cm_cpucut *k, int kind, double ts, double end, int64_t key)
{
	char rec[CM_CPUCUT_REC];
	rec[0] = (char)kind;
	memcpy(rec + 1, &ts, 8);
	memcpy(rec + 9, &end, 8);
	memcpy(rec + 17, &key, 8);
	ck_assert_int_eq(cm_cpucut_fold(k, NULL, rec, sizeof rec), 0);
}

/* A found call's correlation, as the first pass counts it. */
static void call(cm_cpucut *k, double ts, double end, int64_t corr)
{
	note(k, CM_CUTK_CALL | CM_CUTK_X, ts, end, corr);
	k->call_lo = corr < k->call_lo ? corr : k->call_lo;
	k->call_hi = corr > k->call_hi ? corr : k->call_hi;
	k->calls++;
}

static void flow(cm_cpucut *k, double ts, int64_t id)
{
	note(k, CM_CUTK_FLOW, ts, ts, id);
	k->flow_lo = id < k->flow_lo ? id : k->flow_lo;
	k->flow_hi = id > k->flow_hi ? id : k->flow_hi;
	k->flows++;
}

START_TEST(edges)
{
	/* [10, 20): a slice overlaps it or not; an instant falls in it or not */
	ck_assert(cm_cpucut_in(10, 20, 5, 11));
	ck_assert(!cm_cpucut_in(10, 20, 5, 10));   /* ends where the range begins */
	ck_assert(cm_cpucut_in(10, 20, 19, 30));
	ck_assert(!cm_cpucut_in(10, 20, 20, 30));  /* begins where it ends */
	ck_assert(cm_cpucut_in(10, 20, 0, 100));   /* spans it */
	ck_assert(cm_cpucut_in(10, 20, 10, 10));   /* an instant at the start */
	ck_assert(!cm_cpucut_in(10, 20, 20, 20));  /* ... at the end */
	ck_assert(!cm_cpucut_in(10, 20, 9.999, 9.999));
}
END_TEST

START_TEST(decisions)
{
	cm_cpucut k;
	/* element: kept? */
	static const int want[] = {1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1};
	memset(&k, 0, sizeof k);
	cm_cpucut_reset(&k);
	k.mode = CM_CPUCUT_RANGE;
	k.lo = 100;
	k.hi = 200;
	note(&k, CM_CUTK_ALWAYS, 0, 0, 0);                  /* 0 metadata */
	note(&k, CM_CUTK_SPAN | CM_CUTK_X, 90, 110, 0);     /* 1 crosses the start: kept whole */
	note(&k, CM_CUTK_SPAN | CM_CUTK_X, 200, 210, 0);    /* 2 begins at the end */
	call(&k, 150, 155, 7);                              /* 3 a call in it */
	call(&k, 50, 60, 8);                                /* 4 a call before it */
	note(&k, CM_CUTK_WORK | CM_CUTK_X, 300, 310, 7);    /* 5 its work, after the range: kept */
	note(&k, CM_CUTK_WORK | CM_CUTK_X, 150, 160, 8);    /* 6 the other's, in it: cut */
	note(&k, CM_CUTK_WORK | CM_CUTK_X, 150, 160, 99);   /* 7 work without a call, in it */
	note(&k, CM_CUTK_AC2G, 300, 300, 7);                /* 8 the flow of call 7, its end after */
	note(&k, CM_CUTK_AC2G, 150, 150, 8);                /* 9 the flow of call 8 */
	flow(&k, 120, 1);                                   /* 10 a flow wholly in it */
	flow(&k, 130, 2);                                   /* 11 a flow from in it ... */
	flow(&k, 250, 2);                                   /* 12 ... to after it */
	flow(&k, 190, 1);                                   /* 13 the end of flow 1 */
	ck_assert_int_eq(cm_cpucut_resolve(&k, "t.json"), 0);
	for (uint64_t i = 0; i < sizeof want / sizeof *want; i++)
		ck_assert_msg(cm_cpucut_keep(&k, i) == want[i], "element %llu", (unsigned long long)i);
	/* the kept X events' extent: 90 (element 1) to 310 (element 5) */
	ck_assert(k.kept_min == 90 && k.kept_max == 310);
	cm_cpucut_free(&k);
}
END_TEST

START_TEST(skipped_elements)
{
	/* the copy asks only for elements it did not drop: the notes of the
	 * others are passed over */
	cm_cpucut k;
	memset(&k, 0, sizeof k);
	cm_cpucut_reset(&k);
	k.mode = CM_CPUCUT_RANGE;
	k.lo = 0;
	k.hi = 10;
	for (int i = 0; i < 5000; i++)
		note(&k, CM_CUTK_SPAN, i % 20, i % 20, 0);
	ck_assert_int_eq(cm_cpucut_resolve(&k, "t.json"), 0);
	for (uint64_t i = 3; i < 5000; i += 7)
		ck_assert_int_eq(cm_cpucut_keep(&k, i), i % 20 < 10);
	cm_cpucut_free(&k);
}
END_TEST

START_TEST(steps)
{
	cm_cpucut k;
	memset(&k, 0, sizeof k);
	cm_diag_init("check_cpucut");
	cm_diag_set_quiet(1);
	cm_cpucut_reset(&k);
	k.mode = CM_CPUCUT_STEPS;
	note(&k, CM_CUTK_SPAN | CM_CUTK_X, 0, 10, 0);
	ck_assert_int_eq(cm_cpucut_resolve(&k, "t.json"), -1); /* no ProfilerStep events */
	k.steps_any = 3;
	ck_assert_int_eq(cm_cpucut_resolve(&k, "t.json"), -1); /* none of those asked for */
	k.steps_found = 2;
	k.step_lo = 5;
	k.step_hi = 8;
	ck_assert_int_eq(cm_cpucut_resolve(&k, "t.json"), 0);
	ck_assert(k.lo == 5 && k.hi == 8);
	ck_assert_int_eq(cm_cpucut_keep(&k, 0), 1);
	cm_cpucut_free(&k);
}
END_TEST

START_TEST(split_groups)
{
	/* --split=steps: four steps, 2 and 3 overlapping ([15, 20)), a gap
	 * [30, 40) before step 4; each element's files (groups 0-3, steps
	 * 1-4) worked out by hand, in an order that goes from one group's
	 * inside to the edges beside it and back (the search starts at the
	 * group of the event before) */
	static const struct { double ts, end; int ga, gb; } ev[] = {
		{0, 10, 0, 0},      /* 0-3 the steps themselves: step 1 ends where 2 begins */
		{10, 20, 1, 2},     /* step 2 overlaps step 3 */
		{15, 30, 1, 2},
		{40, 50, 3, 3},
		{11, 12, 1, 1},     /* 4 inside step 2 alone */
		{16, 17, 1, 2},     /* 5 where 2 and 3 overlap */
		{12, 15, 1, 1},     /* 6 ends where step 3 begins */
		{12, 15.5, 1, 2},   /* 7 ... just after */
		{15, 15, 1, 2},     /* 8 an instant where step 3 begins */
		{25, 26, 2, 2},     /* 9 step 3 alone */
		{19, 21, 1, 2},     /* 10 across step 2's end */
		{30, 40, 1, 0},     /* 11 the gap: none */
		{35, 45, 3, 3},     /* 12 from the gap into step 4 */
		{50, 50, 1, 0},     /* 13 an instant at step 4's end: none */
		{1, 2, 0, 0},       /* 14 back to step 1 */
		{5, 11, 0, 1},      /* 15 across steps 1 and 2 */
		{9.5, 10, 0, 0},    /* 16 ends where step 2 begins */
		{10, 10, 1, 1},     /* 17 an instant where step 2 begins */
	};
	cm_cpucut k;
	memset(&k, 0, sizeof k);
	cm_cpucut_reset(&k);
	k.mode = CM_CPUCUT_SPLIT;
	k.split_n = 1;
	for (size_t i = 0; i < sizeof ev / sizeof *ev; i++)
		note(&k, (i < 4 ? CM_CUTK_STEP : 0) | CM_CUTK_SPAN | CM_CUTK_X, ev[i].ts, ev[i].end, (int64_t)i + 1);
	ck_assert_int_eq(cm_cpucut_resolve(&k, "t.json"), 0);
	ck_assert_int_eq(k.ngroups, 4);
	for (uint64_t i = 0; i < sizeof ev / sizeof *ev; i++) {
		ck_assert_int_eq(cm_cpucut_keep(&k, i), ev[i].ga <= ev[i].gb);
		ck_assert_msg(k.ga == ev[i].ga && k.gb == ev[i].gb, "element %llu: groups %d-%d, not %d-%d",
			      (unsigned long long)i, k.ga, k.gb, ev[i].ga, ev[i].gb);
	}
	cm_cpucut_free(&k);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cpucut");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, edges);
	tcase_add_test(tc, decisions);
	tcase_add_test(tc, skipped_elements);
	tcase_add_test(tc, steps);
	tcase_add_test(tc, split_groups);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
