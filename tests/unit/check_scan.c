/* check_scan.c - the parser callbacks: CPU-trace scan and window reader. */
#include "config.h"
#include "check_common.h"
#include "cpuscan.h"
#include "diag.h"
#include "gpuconv.h"
#include "input.h"
#include "window.h"

#include <math.h>

/* Scan TEXT as a CPU trace with chunk size BUFSIZE; EXT may be NULL. */
static int scan(const char *text, size_t bufsize, cm_hmap *ext, cm_cpuplan *plan)
{
	const char *path = check_tmpfile(text);
	cm_input *in = cm_input_open(path, bufsize);
	cm_hmap *own = ext ? NULL : cm_hmap_new(8, sizeof(struct cm_ext_thread));
	int rc;
	ck_assert_ptr_nonnull(in);
	rc = cm_cpuscan_run(in, ext ? ext : own, plan);
	cm_input_close(in);
	cm_hmap_free(own);
	unlink(path);
	return rc;
}

static const char trace[] =
	"{\"baseTimeNanoseconds\": \"1_000\", \"traceEvents\": ["
	"{\"ph\":\"M\",\"name\":\"process_name\"},"
	"{\"ph\":\"i\",\"name\":\"Record Window End\"},"
	"{\"ph\":\"M\",\"name\":\"thread_name\"},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"pid\":7,\"tid\":8,\"ts\":\"10.5\",\"dur\":2,\"args\":{\"External id\":5}},"
	"{\"ph\":\"X\",\"cat\":\"user_annotation\",\"pid\":7,\"tid\":9,\"ts\":3,\"dur\":-1,\"args\":{\"External id\":\"5\"}},"
	"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"pid\":7.0,\"tid\":10,\"ts\":1,\"args\":{\"External id\":6}},"
	"{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"ts\":0,\"dur\":99},"
	"{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"other span\",\"ts\":0,\"dur\":99},"
	"{\"ph\":\"M\",\"name\":\"late\"}"
	"], \"traceName\": \"x\"}";

START_TEST(plan_counts)
{
	cm_cpuplan plan;
	cm_hmap *ext = cm_hmap_new(8, sizeof(struct cm_ext_thread));
	int64_t id = 5;
	const struct cm_ext_thread *t;
	cm_hmap_put(ext, &id, NULL);
	id = 6;
	cm_hmap_put(ext, &id, NULL);
	ck_assert_int_eq(scan(trace, (size_t)_i + 1, ext, &plan), 0);
	ck_assert_uint_eq(plan.events, 9);
	ck_assert_uint_eq(plan.leading_m, 2); /* the dropped event does not end the run */
	ck_assert_uint_eq(plan.ndropped, 2);
	ck_assert_uint_eq(plan.dropped[0], 1);
	ck_assert_uint_eq(plan.dropped[1], 6);
	ck_assert(plan.has_base && plan.base_ns == 1000);
	ck_assert(plan.has_events && plan.has_trace_name);
	/* X events other than cat Trace: ts 10.5/2, 3/-1, 1/absent */
	ck_assert(plan.min_ts == 1.0);
	ck_assert(plan.max_end == 12.5);
	id = 5;
	t = cm_hmap_get(ext, &id);
	ck_assert(t->found && t->pid == 7 && t->tid == 9); /* the last one wins */
	id = 6;
	t = cm_hmap_get(ext, &id);
	ck_assert(!t->found); /* pid 7.0 is not an int */
	ck_assert_uint_eq(plan.indexed, 1);
	cm_cpuplan_free(&plan);
	cm_hmap_free(ext);
}
END_TEST

static const char *const bad_traces[] = {
	"[1, 2]",
	"{\"traceEvents\": {}}",
	"{\"traceEvents\": [1]}",
	"{\"traceEvents\": [{\"name\": [1]}]}",
	"{\"traceEvents\": [], \"traceEvents\": []}",
	"{\"baseTimeNanoseconds\": null, \"traceEvents\": []}",
	"{\"baseTimeNanoseconds\": \"12x\"}",
	"{\"traceEvents\": [{}]",
	"{\"traceEvents\": []} x",
	"{\"traceEvents\": [{\"ph\":\"X\",\"ts\":1" "0000000000000000000000000000000000000000000000000000000000000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
	"00000000000000000000000000000000000000000000000000000}]}",
};

START_TEST(plan_rejects)
{
	cm_cpuplan plan;
	cm_diag_set_quiet(1);
	ck_assert_int_eq(scan(bad_traces[_i], 7, NULL, &plan), -1);
	cm_cpuplan_free(&plan);
}
END_TEST

START_TEST(plan_no_events)
{
	cm_cpuplan plan;
	ck_assert_int_eq(scan("{\"a\": [1, {\"b\": 2}]}", 3, NULL, &plan), 0);
	ck_assert(!plan.has_events && !plan.has_base && plan.events == 0);
	ck_assert(isinf(plan.min_ts));
	cm_cpuplan_free(&plan);
}
END_TEST

START_TEST(default_base)
{
	/* (int(now) // 7889238) * 7889238 * 10**9 */
	ck_assert(cm_cpuscan_default_base(1764441600.9) == (cm_int)1759300074 * 1000000000);
	ck_assert(cm_cpuscan_default_base(1795974776) == (cm_int)1790857026 * 1000000000);
}
END_TEST

/* Window reading: events handed over one at a time, members when asked. */
struct wsink {
	int events, members;
	char kinds[256];
};
static int on_event(void *ctx, uint64_t index, const cm_jval *ev, int64_t offset)
{
	struct wsink *w = ctx;
	const cm_jval *k = cm_jval_get(ev, "kind");
	ck_assert_uint_eq(index, (uint64_t)w->events);
	ck_assert(offset > 0);
	w->events++;
	strncat(w->kinds, k && k->type == CM_J_STR ? k->s : "?", sizeof w->kinds - strlen(w->kinds) - 2);
	strcat(w->kinds, ",");
	return 0;
}
static int on_member(void *ctx, const char *key, const cm_jval *val, int64_t offset)
{
	struct wsink *w = ctx;
	ck_assert(!strcmp(key, "user_annotations") || !strcmp(key, "thread_resource_map"));
	w->members++;
	return 0;
}

static int read_window(const char *text, size_t bufsize, struct wsink *w)
{
	const char *path = check_tmpfile(text);
	cm_input *in = cm_input_open(path, bufsize);
	cm_window_sink sink = {on_event, on_member, w};
	int rc = cm_window_read(in, &sink, "test", NULL);
	cm_input_close(in);
	unlink(path);
	return rc;
}

START_TEST(window_events)
{
	struct wsink w = {0};
	ck_assert_int_eq(read_window("{\"thread_resource_map\": {\"1\": {\"2\": 3}}, \"x\": [[{}]],"
				     " \"events\": [{\"kind\": \"kernel\", \"a\": [1, {\"b\": null}]},"
				     " {\"kind\": \"cuda_runtime\"}, {}], \"user_annotations\": {}}",
				     (size_t)_i + 1, &w),
			 0);
	ck_assert_int_eq(w.events, 3);
	ck_assert_int_eq(w.members, 2);
	ck_assert_str_eq(w.kinds, "kernel,cuda_runtime,?,");
}
END_TEST

static const char *const bad_windows[] = {
	"[]", "{}", "{\"events\": {}}", "{\"events\": [1]}", "{\"events\": [], \"events\": []}", "{\"events\": [",
};

START_TEST(window_rejects)
{
	struct wsink w = {0};
	cm_diag_set_quiet(1);
	ck_assert_int_eq(read_window(bad_windows[_i], 5, &w), -1);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("scan");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, plan_counts, 0, 31); /* read chunks of 1..31 bytes */
	tcase_add_loop_test(tc, plan_rejects, 0, sizeof bad_traces / sizeof *bad_traces);
	tcase_add_test(tc, plan_no_events);
	tcase_add_test(tc, default_base);
	tcase_add_loop_test(tc, window_events, 0, 31);
	tcase_add_loop_test(tc, window_rejects, 0, sizeof bad_windows / sizeof *bad_windows);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
