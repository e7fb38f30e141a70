/* check_threadmap.c - the id rules of thread repair: signed and abs ids,
 * INT32_MIN, an id that is also a real tid, reused pthread ids and lifetimes,
 * and the three file shapes. */
#include "config.h"
#include "check_common.h"
#include "base/diag.h"
#include "repair/threadmap.h"

static cm_threadmap *load(const char *text)
{
	const char *path = check_tmpfile(text);
	cm_threadmap *m = cm_threadmap_load(path, 64);
	unlink(path);
	return m;
}

/* pthread_self() values and their int32:
 *   0x7F0012345000 -> 305418240 (positive)
 *   0x7F008000C000 -> -2147434496, reused: worker_0 then worker_1
 *   0x7F00DD1FF6C0 -> -585107776 (Kineto writes 585107776)
 *   0x7F0080000000 and 0x7E0080000000 -> INT32_MIN, two threads, no lifetimes */
static const char v1[] =
	"{\"thread_map_version\": 1, \"processes\": {\"470\": ["
	"{\"tid\": 470, \"pthread\": 139638282145792, \"name\": \"MainThread\"},"
	"{\"tid\": 507, \"pthread\": 139640124260352, \"name\": \"worker_0\", \"start_ns\": 100, \"end_ns\": 200},"
	"{\"tid\": 611, \"pthread\": 139640124260352, \"name\": \"worker_1\", \"start_ns\": 300},"
	"{\"tid\": 562, \"pthread\": 139641686587072, \"name\": \"neg\"},"
	"{\"tid\": 578, \"pthread\": 139640124211200, \"name\": \"min\"},"
	"{\"tid\": 579, \"pthread\": \"138540612583424\"}"
	"]}}";

START_TEST(signed_and_abs)
{
	cm_threadmap *m = load(v1);
	int64_t tid;
	const char *name;
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(cm_threadmap_count(m), 6);
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, -585107776, 0, 0, &tid, &name), CM_TM_MOVE);
	ck_assert_int_eq(tid, 562);
	ck_assert_str_eq(name, "neg");
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 585107776, 0, 0, &tid, &name), CM_TM_MOVE);
	ck_assert_int_eq(tid, 562);
	/* other process: nothing */
	ck_assert_int_eq(cm_threadmap_resolve(m, 471, 585107776, 0, 0, &tid, &name), CM_TM_NONE);
	/* not an opaque id at all */
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 12345, 0, 0, &tid, &name), CM_TM_NONE);
	/* a positive id: signed and abs are the same */
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 305418240, 0, 0, &tid, &name), CM_TM_MOVE);
	ck_assert_int_eq(tid, 470);
	cm_threadmap_free(m);
}
END_TEST

START_TEST(int32_min_and_collisions)
{
	/* two threads whose pthread_self() ends in 0x80000000 (no lifetimes):
	 * refused, not guessed, under both INT32_MIN and its abs 2^31 */
	cm_threadmap *m = load(v1);
	cm_threadmap *one = load("{\"thread_map_version\": 1, \"processes\": {\"1\": ["
				 "{\"tid\": 578, \"pthread\": 139640124211200}]}}");
	int64_t tid;
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, INT32_MIN, 0, 0, &tid, NULL), CM_TM_AMBIG_REUSE);
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 2147483648LL, 0, 0, &tid, NULL), CM_TM_AMBIG_REUSE);
	/* one such thread: found under both spellings */
	ck_assert_int_eq(cm_threadmap_resolve(one, 1, INT32_MIN, 0, 0, &tid, NULL), CM_TM_MOVE);
	ck_assert_int_eq(tid, 578);
	ck_assert_int_eq(cm_threadmap_resolve(one, 1, 2147483648LL, 0, 0, &tid, NULL), CM_TM_MOVE);
	cm_threadmap_free(one);
	cm_threadmap_free(m);
}
END_TEST

START_TEST(real_tid_left_alone)
{
	/* thread A's opaque id is 507, which is thread B's kernel tid */
	cm_threadmap *m = load("{\"thread_map_version\": 1, \"processes\": {\"1\": ["
			       "{\"tid\": 600, \"pthread\": 507}, {\"tid\": 507, \"pthread\": 139637976776704}]}}");
	int64_t tid;
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(cm_threadmap_resolve(m, 1, 507, 0, 0, &tid, NULL), CM_TM_AMBIG_REAL);
	cm_threadmap_free(m);
}
END_TEST

START_TEST(lifetimes)
{
	/* 0x7F008000C000 -> int32 -2147434496: worker_0 lived 100..200 ns,
	 * worker_1 from 300 on */
	cm_threadmap *m = load(v1);
	int64_t tid;
	const char *name;
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, -2147434496, 1, 150, &tid, &name), CM_TM_MOVE);
	ck_assert_int_eq(tid, 507);
	ck_assert_str_eq(name, "worker_0");
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 2147434496, 1, 1e9, &tid, &name), CM_TM_MOVE);
	ck_assert_int_eq(tid, 611);
	/* no time: both candidates, refused */
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 2147434496, 0, 0, &tid, &name), CM_TM_AMBIG_REUSE);
	/* a time no lifetime holds: all candidates count, refused */
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 2147434496, 1, 250, &tid, &name), CM_TM_AMBIG_REUSE);
	cm_threadmap_free(m);
}
END_TEST

START_TEST(window_shape)
{
	cm_threadmap *m = load("{\"events\": [{\"kind\": \"kernel\"}], \"thread_resource_map\": "
			       "{\"470\": {\"352294592\": 562, \"-585124160\": 578}}}");
	int64_t tid;
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 352294592, 0, 0, &tid, NULL), CM_TM_MOVE);
	ck_assert_int_eq(tid, 562);
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 585124160, 0, 0, &tid, NULL), CM_TM_MOVE);
	ck_assert_int_eq(tid, 578);
	cm_threadmap_free(m);
}
END_TEST

START_TEST(python_shape)
{
	/* the snippet's layout; "meta" may come after "threads" */
	cm_threadmap *m = load("{\"threads\": {\"140110775424704\": {\"native_id\": 562, \"name\": \"worker_1\","
			       " \"ident_i32\": 352294592}, \"140109838005952\": {\"native_id\": 578}},"
			       " \"meta\": {\"pid\": 470}}");
	int64_t tid;
	const char *name = NULL;
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 352294592, 0, 0, &tid, &name), CM_TM_MOVE);
	ck_assert_int_eq(tid, 562);
	ck_assert_str_eq(name, "worker_1");
	/* no ident_i32: derived from the ident 0x7F6DDD1FB6C0 -> -585124160 */
	ck_assert_int_eq(cm_threadmap_resolve(m, 470, 585124160, 0, 0, &tid, &name), CM_TM_MOVE);
	ck_assert_int_eq(tid, 578);
	ck_assert_int_eq(cm_threadmap_resolve(m, 999, 352294592, 0, 0, &tid, &name), CM_TM_NONE);
	cm_threadmap_free(m);
}
END_TEST

static const char *const bad_maps[] = {
	"{\"thread_map_version\": 2, \"processes\": {}}",
	"{\"processes\": {\"x\": []}}",
	"{\"processes\": {\"1\": [{\"tid\": 5}]}}",
	"{\"something\": 1}",
	"[]",
};

START_TEST(rejects)
{
	cm_diag_set_quiet(1);
	ck_assert_ptr_null(load(bad_maps[_i]));
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("threadmap");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, signed_and_abs);
	tcase_add_test(tc, int32_min_and_collisions);
	tcase_add_test(tc, real_tid_left_alone);
	tcase_add_test(tc, lifetimes);
	tcase_add_test(tc, window_shape);
	tcase_add_test(tc, python_shape);
	tcase_add_loop_test(tc, rejects, 0, sizeof bad_maps / sizeof *bad_maps);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
