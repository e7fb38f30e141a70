/* check_apirules.c - the reference merge's rules for CUDA API records,
 * table-driven and independent of any trace: which thread row a record
 * goes on (gpu/tidrule.h: the tid exported, Kineto's int32 of
 * pthread_self(), the thread map's lookups) and the callback ids' names
 * and keep/flow rules (gpu/cbid.h). */
#include "config.h"
#include "check_common.h"
#include "gpu/tidrule.h"
#include "gpu/cbid.h"

START_TEST(tid_export)
{
	ck_assert(cm_tid_export((cm_int)INT64_MIN) == 0);
	ck_assert(cm_tid_export(-5) == 5);
	ck_assert(cm_tid_export(507) == 507);
	ck_assert(cm_tid_export(-(cm_int)INT64_MAX) == INT64_MAX);
}
END_TEST

START_TEST(tid_int32)
{
	/* Kineto: the low 32 bits of pthread_self() as a signed int32 */
	ck_assert_int_eq(cm_tid_int32(0x80000000LL), INT32_MIN);
	ck_assert_int_eq(cm_tid_int32(4294967295LL), -1);
	ck_assert_int_eq(cm_tid_int32(2587850560LL), -1707116736);
	ck_assert_int_eq(cm_tid_int32(140110934820544LL), 511690432);
	ck_assert_int_eq(cm_tid_int32(-268430796), -268430796);
	ck_assert_int_eq(cm_tid_int32(4242), 4242);
}
END_TEST

START_TEST(tidmap_rules)
{
	cm_tidmap *m = cm_tidmap_new();
	int64_t tid = 0;
	cm_tidmap_begin_pid(m, 470, 0);
	cm_tidmap_add(m, 352294592, 562, 0);
	cm_tidmap_add(m, -585124160, 578, 0);
	cm_tidmap_add(m, 77, 0, 1); /* a value int() rejects */
	cm_tidmap_begin_pid(m, 471, 1); /* not an object */
	ck_assert_int_eq(cm_tidmap_lookup(m, 470, 352294592, &tid), CM_TIDMAP_FOUND);
	ck_assert_int_eq(tid, 562);
	ck_assert_int_eq(cm_tidmap_lookup(m, 470, -585124160, &tid), CM_TIDMAP_FOUND);
	ck_assert_int_eq(tid, 578);
	ck_assert_int_eq(cm_tidmap_lookup(m, 470, 585124160, &tid), CM_TIDMAP_ABSENT);
	ck_assert_int_eq(cm_tidmap_lookup(m, 470, 77, &tid), CM_TIDMAP_BAD_VALUE);
	ck_assert_int_eq(cm_tidmap_lookup(m, 471, 1, &tid), CM_TIDMAP_BAD_MAP);
	ck_assert_int_eq(cm_tidmap_lookup(m, 999, 1, &tid), CM_TIDMAP_ABSENT);
	/* a repeated pid key replaces the earlier entries (dict semantics) */
	cm_tidmap_begin_pid(m, 470, 0);
	cm_tidmap_add(m, 1, 2, 0);
	ck_assert_int_eq(cm_tidmap_lookup(m, 470, 352294592, &tid), CM_TIDMAP_ABSENT);
	ck_assert_int_eq(cm_tidmap_lookup(m, 470, 1, &tid), CM_TIDMAP_FOUND);
	ck_assert_int_eq(tid, 2);
	cm_tidmap_set_bad(m);
	ck_assert_int_eq(cm_tidmap_lookup(m, 470, 1, &tid), CM_TIDMAP_BAD_MAP);
	cm_tidmap_free(m);
}
END_TEST

START_TEST(cbid_names)
{
	ck_assert_str_eq(cm_cbid_name(0, 211), "cudaLaunchKernel");
	ck_assert_str_eq(cm_cbid_name(0, 0), "INVALID");
	ck_assert_str_eq(cm_cbid_name(1, 307), "cuLaunchKernel");
	ck_assert_str_eq(cm_cbid_name(0, 2147483647), "FORCE_INT");
	ck_assert_ptr_null(cm_cbid_name(0, 999999));
	ck_assert_ptr_null(cm_cbid_name(1, -1));
	/* the _vNNNN suffix is cut, other suffixes stay */
	ck_assert_str_eq(cm_cbid_name(0, 10), "cudaGetLastError");
	for (size_t i = 1; i < cm_cbid_runtime_count; i++)
		ck_assert(cm_cbid_runtime[i - 1].cbid < cm_cbid_runtime[i].cbid);
	for (size_t i = 1; i < cm_cbid_driver_count; i++)
		ck_assert(cm_cbid_driver[i - 1].cbid < cm_cbid_driver[i].cbid);
}
END_TEST

START_TEST(cbid_rules)
{
	ck_assert(!cm_cbid_is_registered(0, "cudaGetDevice"));
	ck_assert(!cm_cbid_is_registered(0, "cudaEventCreateWithFlags"));
	ck_assert(cm_cbid_is_registered(0, "cudaMalloc"));
	ck_assert(cm_cbid_is_registered(0, "cbid_999999"));
	ck_assert(cm_cbid_is_registered(1, "cuMemMap"));
	ck_assert(!cm_cbid_is_registered(1, "cuCtxGetCurrent"));
	ck_assert(cm_cbid_requires_flow(0, "cudaMemcpyAsync"));
	ck_assert(cm_cbid_requires_flow(0, "cudaMemset2D"));
	ck_assert(cm_cbid_requires_flow(0, "cudaGraphLaunch"));
	ck_assert(!cm_cbid_requires_flow(0, "cudaMalloc"));
	ck_assert(cm_cbid_requires_flow(1, "cuLaunchKernelEx"));
	ck_assert(!cm_cbid_requires_flow(1, "cuMemCreate"));
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("apirules");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60); /* a loaded machine (make -j distcheck) is slow */
	tcase_add_test(tc, tid_export);
	tcase_add_test(tc, tid_int32);
	tcase_add_test(tc, tidmap_rules);
	tcase_add_test(tc, cbid_names);
	tcase_add_test(tc, cbid_rules);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
