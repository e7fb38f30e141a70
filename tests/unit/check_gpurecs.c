/* check_gpurecs.c - what the window's events are kept as between the
 * digest and the render: the packed records (gpu/gpurec.h: every 128-bit
 * value, records cut short), a GPU event's args written two ways
 * (gpu/gpuargs.h) and the window's name table shared by threads, with its
 * bounds (gpu/gpunames.h).  The render's inputs; what it notes as it
 * writes is check_gpumembers'. */
#include "config.h"
#include "check_common.h"
#include "gpu/gpurec.h"
#include "gpu/gpunames.h"
#include "gpu/gpuargs.h"
#include "json/jwrite.h"

#include <pthread.h>

/* Window records through cm_gpurec_pack and back: every 128-bit value near
 * each power of two (both signs, where the varints change length and where
 * the 64-bit step gives way to the 128-bit one) and random ones; each
 * record cut short anywhere is refused, never read past its end.  And
 * cm_gpurec_skip passes each as the unpack does, with its index. */
START_TEST(gpurec_roundtrip)
{
	cm_int vals[520];
	size_t nvals = 0;
	unsigned long long x = 0x2545F4914F6CDD1Dull;
	cm_buf b = {0};
	vals[nvals++] = 0;
	for (int k = 0; k < 127; k++) {
		cm_int p = (cm_int)1 << k;
		vals[nvals++] = p;
		vals[nvals++] = p - 1;
		vals[nvals++] = -p;
		vals[nvals++] = -p - 1;
	}
	vals[nvals++] = CM_INT_MAX;
	vals[nvals++] = -CM_INT_MAX - 1;
	while (nvals < sizeof vals / sizeof vals[0]) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		vals[nvals++] = (cm_int)(((unsigned __int128)x << 64) | (x * 0x9E3779B97F4A7C15ull)) >> (x % 128);
	}
	for (size_t i = 0; i < nvals; i++) {
		cm_gpurec r = {0}, back;
		const char *p, *end;
		r.kind = CM_REC_KERNEL;
		r.flags = (uint8_t)(i & 127); /* 64: the name by its number */
		r.name_id = (uint32_t)((uint64_t)vals[i] % CM_GPUNAMES_MAX);
		r.nv = (uint8_t)(i % (CM_REC_MAXV + 1));
		r.index = (uint64_t)vals[i];
		r.offset = (int64_t)vals[(i + 1) % nvals];
		for (int k = 0; k < r.nv; k++)
			r.v[k] = vals[(i + (size_t)k * 7) % nvals];
		r.name = "void gemm<128>(float*)";
		r.nlen = (uint32_t)(i % 23);
		r.extra = i % 3 ? "{\"a\":1}" : NULL;
		r.xlen = i % 3 ? 7 : 0;
		b.len = 0;
		cm_gpurec_pack(&b, &r);
		{ /* the index's varint: LEB128's bytes, a byte at a time, after kind, flags, nv */
			unsigned char want[19];
			size_t nw = 0;
			for (unsigned __int128 u = r.index; nw == 0 || u; u >>= 7)
				want[nw++] = (unsigned char)((u & 0x7f) | (u >> 7 ? 0x80 : 0));
			ck_assert_msg(b.len >= 3 + nw && !memcmp(b.p + 3, want, nw), "value %zu: index varint", i);
		}
		p = b.p, end = b.p + b.len;
		ck_assert_int_eq(cm_gpurec_unpack(&p, end, &back), 0);
		ck_assert_ptr_eq(p, end);
		ck_assert(back.kind == r.kind && back.flags == r.flags && back.nv == r.nv);
		ck_assert(back.index == r.index && back.offset == r.offset);
		for (int k = 0; k < r.nv; k++)
			ck_assert_msg(back.v[k] == r.v[k], "value %zu/%d changed", i, k);
		if (r.flags & CM_REC_NAMEREF)
			ck_assert(back.name == NULL && back.nlen == 0 && back.name_id == r.name_id);
		else
			ck_assert(back.nlen == r.nlen && !memcmp(back.name, r.name, r.nlen));
		ck_assert(back.xlen == r.xlen && (!r.xlen || !memcmp(back.extra, r.extra, r.xlen)));
		{
			uint64_t ix = 0;
			p = b.p;
			ck_assert_int_eq(cm_gpurec_skip(&p, end, &ix), 0);
			ck_assert_msg(p == end && ix == r.index, "value %zu: skipped to %td of %zu", i, p - b.p, b.len);
		}
		for (size_t cut = 0; cut < b.len; cut++) {
			char *copy = malloc(cut ? cut : 1);
			uint64_t ix;
			memcpy(copy, b.p, cut);
			p = copy;
			ck_assert_int_eq(cm_gpurec_unpack(&p, copy + cut, &back), -1);
			p = copy;
			ck_assert_int_eq(cm_gpurec_skip(&p, copy + cut, &ix), -1);
			free(copy);
		}
	}
	cm_buf_free(&b);
}
END_TEST

/* A GPU event's args written straight out (the direct mode, for an event
 * whose keys are all different literals) are the bytes the slots and
 * gpu_write_args make of the same calls: integers of both signs and past 64
 * bits, strings, raw JSON text, the kinds by name and by number, and no
 * args at all. */
static void args_calls(struct args *A, int n)
{
	static const char raw[] = "[1,2,3]";
	if (n > 0)
		gpu_arg_int(A, "device", 0);
	if (n > 1)
		gpu_arg_int(A, "context", -7);
	if (n > 2)
		gpu_arg_int(A, "stream", (cm_int)1 << 100);
	if (n > 3)
		gpu_arg_copy_kind(A, "copy kind", 1);
	if (n > 4)
		gpu_arg_memory_kind(A, "src kind", 9);
	if (n > 5)
		gpu_arg_raw(A, "grid", raw, sizeof raw - 1);
	if (n > 6)
		gpu_arg_str(A, "est. achieved occupancy %", "a/b");
}

START_TEST(gpuargs_direct)
{
	static const char *const want[] = {
		",\"args\":{}}",
		",\"args\":{\"device\":0}}",
		",\"args\":{\"device\":0,\"context\":-7,\"stream\":1267650600228229401496703205376,"
		"\"copy kind\":\"HtoD\",\"src kind\":9,\"grid\":[1,2,3],\"est. achieved occupancy %\":\"a/b\"}}",
	};
	static const int counts[] = {0, 1, 7};
	for (int c = 0; c < 3; c++) {
		struct args A = {0};
		cm_buf slots = {0}, direct = {0};
		cm_buf_lit(&direct, ",{\"ph\":\"X\"");
		gpu_args_begin(&A, NULL);
		args_calls(&A, counts[c]);
		gpu_write_args(&slots, &A);
		ck_assert_msg(slots.len == strlen(want[c]) && !memcmp(slots.p, want[c], slots.len), "slots %d: %.*s",
			      c, (int)slots.len, slots.p);
		gpu_args_begin(&A, &direct);
		args_calls(&A, counts[c]);
		gpu_write_args(&direct, &A);
		ck_assert_msg(direct.len == 10 + slots.len && !memcmp(direct.p, ",{\"ph\":\"X\"", 10) &&
				      !memcmp(direct.p + 10, slots.p, slots.len),
			      "direct %d: %.*s", c, (int)direct.len, direct.p);
		cm_buf_free(&slots);
		cm_buf_free(&direct);
		free(A.v);
	}
}
END_TEST

/* The window's name table, filled from four threads at once, each with its
 * own cache and its own order: one entry a name, the same number for it in
 * every thread (3,000 names over 1,024 cache slots: evictions), its JSON
 * text cm_jw_string's; a name longer than CM_GPUNAMES_LONG stays out. */
#define NAMES_N 3000
struct names_thread {
	cm_gpunames *t;
	int order;
	uint32_t id[NAMES_N];
	int ok;
};

static void names_text(char *buf, int i)
{
	/* a backslash, a quote, a control byte and UTF-8 among them */
	snprintf(buf, 64, "%skernel_%d%s", i % 5 ? "" : "\\\"", i * 7919 % 100003, i % 7 ? "" : "\t\xc3\xa9");
}

static void *names_worker(void *arg)
{
	struct names_thread *w = arg;
	cm_gpunames_cache *c = cm_gpunames_cache_new();
	char buf[64];
	w->ok = 1;
	for (int round = 0; round < 3; round++)
		for (int k = 0; k < NAMES_N; k++) {
			int i = w->order ? NAMES_N - 1 - k : (k * 17) % NAMES_N;
			uint32_t id;
			names_text(buf, i);
			if (!cm_gpunames_intern(w->t, c, buf, strlen(buf), &id) || (round && id != w->id[i]))
				w->ok = 0;
			w->id[i] = id;
		}
	cm_gpunames_cache_free(c);
	return NULL;
}

START_TEST(gpunames_threads)
{
	cm_gpunames *t = cm_gpunames_new();
	struct names_thread w[4];
	pthread_t th[4];
	char buf[64], *longname;
	cm_buf want = {0};
	cm_gpunames_cache *c = cm_gpunames_cache_new();
	uint32_t id;
	for (int k = 0; k < 4; k++) {
		w[k].t = t;
		w[k].order = k & 1;
		ck_assert_int_eq(pthread_create(&th[k], NULL, names_worker, &w[k]), 0);
	}
	for (int k = 0; k < 4; k++) {
		pthread_join(th[k], NULL);
		ck_assert(w[k].ok);
	}
	ck_assert_uint_eq(cm_gpunames_count(t), NAMES_N);
	for (int i = 0; i < NAMES_N; i++) {
		size_t len;
		const char *json = cm_gpunames_json(t, w[0].id[i], &len);
		for (int k = 1; k < 4; k++)
			ck_assert_uint_eq(w[k].id[i], w[0].id[i]);
		names_text(buf, i);
		want.len = 0;
		cm_jw_string(&want, buf, strlen(buf));
		ck_assert_msg(len == want.len && !memcmp(json, want.p, len), "name %d: %.*s", i, (int)len, json);
	}
	longname = malloc(CM_GPUNAMES_LONG + 1);
	memset(longname, 'x', CM_GPUNAMES_LONG + 1);
	ck_assert(!cm_gpunames_intern(t, c, longname, CM_GPUNAMES_LONG + 1, &id));
	ck_assert(cm_gpunames_intern(t, c, longname, CM_GPUNAMES_LONG, &id));
	ck_assert_uint_eq(id, NAMES_N);
	free(longname);
	cm_buf_free(&want);
	cm_gpunames_cache_free(c);
	cm_gpunames_free(t);
}
END_TEST

/* The table's bounds: past CM_GPUNAMES_MAX names, or CM_GPUNAMES_BYTES
 * bytes, a new name stays in its record; the names taken keep their
 * numbers. */
START_TEST(gpunames_bounds)
{
	cm_gpunames *t = cm_gpunames_new();
	cm_gpunames_cache *c = cm_gpunames_cache_new();
	char buf[32], *big = malloc(CM_GPUNAMES_LONG);
	uint32_t id, n;
	for (uint32_t i = 0; i < CM_GPUNAMES_MAX; i++) {
		snprintf(buf, sizeof buf, "k%u", i);
		ck_assert(cm_gpunames_intern(t, c, buf, strlen(buf), &id));
		ck_assert_uint_eq(id, i);
	}
	ck_assert(!cm_gpunames_intern(t, c, "one more", 8, &id));
	ck_assert(cm_gpunames_intern(t, c, "k77", 3, &id) && id == 77);
	cm_gpunames_free(t);
	t = cm_gpunames_new();
	for (n = 0;; n++) { /* names of 4 KiB: raw and JSON, 8 KiB an entry */
		memset(big, 'a' + n % 26, CM_GPUNAMES_LONG);
		snprintf(big, 16, "%u", n);
		if (!cm_gpunames_intern(t, c, big, CM_GPUNAMES_LONG, &id))
			break;
		ck_assert_uint_eq(id, n);
	}
	ck_assert_uint_eq(n, CM_GPUNAMES_BYTES / (2 * (CM_GPUNAMES_LONG + 2)));
	ck_assert(cm_gpunames_intern(t, c, "short", 5, &id)); /* room for a short one still */
	free(big);
	cm_gpunames_cache_free(c);
	cm_gpunames_free(t);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpurecs");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60); /* a loaded machine (make -j distcheck) is slow */
	tcase_add_test(tc, gpurec_roundtrip);
	tcase_add_test(tc, gpuargs_direct);
	tcase_add_test(tc, gpunames_threads);
	tcase_add_test(tc, gpunames_bounds);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
