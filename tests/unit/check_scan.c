/* check_scan.c - the parser callbacks: CPU-trace scan and window reader. */
#include "config.h"
#include "check_common.h"
#include "cpu/cpuscan.h"
#include "base/diag.h"
#include "gpu/gpuconv.h"
#include "io/input.h"
#include "json/jcheck.h"
#include "gpu/window.h"

#include <math.h>
#include <string.h>
#include <yajl/yajl_parse.h>

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

/* yajl_parse as the engine calls it (linked with --wrap=yajl_parse): when
 * checking, every piece after the first must start with punctuation, so that
 * no token is split between two calls (yajl re-lexes a split token's start
 * on every call: quadratic in its length, finding F15). */
static int pieces_checked, pieces, pieces_bad;
yajl_status __real_yajl_parse(yajl_handle h, const unsigned char *s, size_t n);
yajl_status __wrap_yajl_parse(yajl_handle h, const unsigned char *s, size_t n);
yajl_status __wrap_yajl_parse(yajl_handle h, const unsigned char *s, size_t n)
{
	if (pieces_checked && pieces++ && n && !strchr("{}[],:", s[0]))
		pieces_bad++;
	return __real_yajl_parse(h, s, n);
}

START_TEST(sax_whole_tokens)
{
	cm_cpuplan plan;
	pieces_checked = 1;
	pieces = pieces_bad = 0;
	ck_assert_int_eq(scan(trace, (size_t)_i + 1, NULL, &plan), 0);
	ck_assert_int_gt(pieces, 1);
	ck_assert_int_eq(pieces_bad, 0);
	cm_cpuplan_free(&plan);
}
END_TEST

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
	ck_assert(t->thread && t->thread <= plan.ext_threads.n);
	/* the last one wins */
	ck_assert(plan.ext_threads.v[t->thread - 1].pid == 7 && plan.ext_threads.v[t->thread - 1].tid == 9);
	id = 6;
	t = cm_hmap_get(ext, &id);
	ck_assert(!t->thread); /* pid 7.0 is not an int */
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

/* The strict-JSON check on TEXT cut into pieces of PIECE bytes: the offset of
 * the first refused byte, or -1 when the whole text passes. */
static long jcheck_at(const char *text, size_t piece)
{
	cm_jcheck c;
	size_t n = strlen(text), off = 0;
	cm_jcheck_begin(&c);
	while (off < n) {
		size_t len = n - off < piece ? n - off : piece;
		size_t ok = cm_jcheck_feed(&c, text + off, len);
		if (ok < len) {
			ck_assert_ptr_nonnull(c.err);
			return (long)(off + ok);
		}
		off += len;
	}
	return -1;
}

static const struct {
	const char *text;
	long bad; /* offset of the refused byte, -1 if accepted */
} jcheck_cases[] = {
	{"{\"a\": [1, 2, {\"b\": \"\\\"[[[\"}]}", -1},
	{"{\"a\":\f1}", 5},
	{"{\"a\":\v1}", 5},
	{"[\"\f\"]", 2},                           /* a raw control byte in a string */
	{"[\"\\\\\", \"\f\"]", 8},
	{"[\"\303\251\342\202\254\360\237\230\200\"]", -1}, /* 2-, 3-, 4-byte forms */
	{"[\"\300\257\"]", 2},                     /* overlong "/" */
	{"[\"\340\201\201\"]", 3},                 /* overlong 3-byte */
	{"[\"\355\240\200\"]", 3},                 /* a surrogate */
	{"[\"\364\220\200\200\"]", 3},             /* past U+10FFFF */
	{"[\"\200\"]", 2},                         /* a stray continuation */
	{"[\"\303\"]", 3},                         /* cut short by the quote */
	{"[\"\\u00e9\"]", -1},
	{"{\"a\":1\001}", 6},                       /* a C0 byte outside a string */
	{"[1,\037 2]", 3},
	{"{\"a\":\b}", 5},
	{"[\"\001\"]", 2},                          /* in a string too (a pipe of them was held) */
	{"[\"a\\\001\"]", -1},                     /* escaped: yajl's to refuse */
	{"[\"\\u1\001\"]", 5},                     /* in a \u's hex digits */
	{"[\"\\u12ab\\\\u\001\"]", 11},             /* past them, and a \\ before a u */
};

START_TEST(jcheck_rules)
{
	/* every case at every piece size: the verdict cannot depend on the cuts */
	for (size_t piece = 1; piece <= 32; piece++)
		ck_assert_int_eq(jcheck_at(jcheck_cases[_i].text, piece), jcheck_cases[_i].bad);
}
END_TEST

START_TEST(jcheck_depth)
{
	char deep[2 * CM_JSON_MAX_DEPTH + 8];
	size_t n = 0;
	for (int i = 0; i < CM_JSON_MAX_DEPTH; i++)
		deep[n++] = i % 2 ? '{' : '[';
	deep[n] = 0;
	/* brackets inside strings do not count, whatever the cuts */
	ck_assert_int_eq(jcheck_at("[\"[[[[\\\"[[[\"]", 1), -1);
	ck_assert_int_eq(jcheck_at(deep, 3), -1);
	deep[n++] = '[';
	deep[n] = 0;
	ck_assert_int_eq(jcheck_at(deep, 7), CM_JSON_MAX_DEPTH);
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
	tcase_add_loop_test(tc, jcheck_rules, 0, sizeof jcheck_cases / sizeof *jcheck_cases);
	tcase_add_test(tc, jcheck_depth);
	tcase_add_loop_test(tc, sax_whole_tokens, 0, 31);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
