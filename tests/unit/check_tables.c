/* check_tables.c - the id index (hash map), the id tables (array, hash map,
 * key set and the tables packed over one), the thread-id rules, the cbid
 * tables, the packed window records, a GPU event's args and the members
 * the render notes (gpu/gpumembers.h). */
#include "config.h"
#include "check_common.h"
#include "gpu/cbid.h"
#include "base/hmap.h"
#include "base/idmap.h"
#include "gpu/tidrule.h"
#include "gpu/gpurec.h"
#include "gpu/gpunames.h"
#include "gpu/gpuargs.h"
#include "gpu/gpumembers.h"
#include "base/diag.h"
#include "json/jwrite.h"

#include <pthread.h>

START_TEST(hmap_many)
{
	cm_hmap *m = cm_hmap_new(8, 16);
	size_t seen = 0;
	for (int64_t k = -20000; k < 20000; k++) {
		int created;
		int64_t *v = cm_hmap_put(m, &k, &created);
		ck_assert(created);
		v[0] = k * 3;
		v[1] = -k;
	}
	ck_assert_uint_eq(cm_hmap_count(m), 40000);
	for (int64_t k = -20000; k < 20000; k += 7) {
		int64_t *v = cm_hmap_get(m, &k);
		ck_assert_ptr_nonnull(v);
		ck_assert(v[0] == k * 3 && v[1] == -k);
	}
	{
		int64_t k = 20000;
		int created;
		ck_assert_ptr_null(cm_hmap_get(m, &k));
		k = 7;
		cm_hmap_put(m, &k, &created);
		ck_assert(!created); /* the same key again: the same slot */
	}
	for (size_t i = 0; i < cm_hmap_slots(m); i++)
		seen += cm_hmap_slot(m, i, NULL) != NULL;
	ck_assert_uint_eq(seen, 40000);
	cm_hmap_free(m);
}
END_TEST


/* A small deterministic generator (xorshift64), so a failure repeats. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* What cm_idmap_each_sorted saw: the ids in order and their values. */
struct walk {
	int64_t last;
	size_t n;
	int in_order;
	int values_ok;
	int64_t stop_at;
};

static int walk_one(void *ctx, int64_t id, void *val)
{
	struct walk *w = ctx;
	int64_t v;
	memcpy(&v, val, 8);
	if (w->n && id <= w->last)
		w->in_order = 0;
	if (v != id * 7 + 1)
		w->values_ok = 0;
	w->last = id;
	w->n++;
	return id == w->stop_at ? -1 : 0;
}

/* Puts of random ids of [LO, HI] (value id*7+1, 24 bytes with a tag), then
 * every id of the range (and either side of it) asked against a reference
 * bitmap, then the sorted walk, whole and stopped.  The same checks for
 * an array, a hash map and a table packed over a key set. */
static void check_table(cm_idmap *m, const unsigned char *ref, int64_t lo, int64_t hi)
{
	size_t want = 0;
	struct walk w = {0, 0, 1, 1, INT64_MIN};
	for (int64_t id = lo - 3; id <= hi + 3; id++) {
		int64_t *v = cm_idmap_get(m, id);
		int present = id >= lo && id <= hi && ref[id - lo];
		want += present;
		ck_assert_msg((v != NULL) == present, "id %lld: got %p, want %s", (long long)id, (void *)v,
		              present ? "a value" : "NULL");
		if (v)
			ck_assert(v[0] == id * 7 + 1 && v[1] == ~id && v[2] == (int64_t)0x5a5a5a5a);
	}
	ck_assert_int_eq(cm_idmap_each_sorted(m, walk_one, &w), 0);
	ck_assert_uint_eq(w.n, want);
	ck_assert(w.in_order && w.values_ok);
	/* stopped at the third id: -1 back, two ids after the first not seen */
	if (want >= 3) {
		struct walk all = {0, 0, 1, 1, INT64_MIN}, cut = {0, 0, 1, 1, INT64_MIN};
		int64_t third = INT64_MIN;
		for (int64_t id = lo, k = 0; id <= hi; id++)
			if (ref[id - lo] && ++k == 3)
				third = id;
		cut.stop_at = third;
		ck_assert_int_eq(cm_idmap_each_sorted(m, walk_one, &cut), -1);
		ck_assert_uint_eq(cut.n, 3);
		ck_assert(cut.last == third);
		cm_idmap_each_sorted(m, walk_one, &all);
		ck_assert_uint_eq(all.n, want);
	}
}

static void put_value(cm_idmap *m, int64_t id, int want_created)
{
	int created = -1;
	int64_t *v = cm_idmap_put(m, id, &created);
	ck_assert_msg(created == want_created, "id %lld: created %d, want %d", (long long)id, created,
	              want_created);
	v[0] = id * 7 + 1;
	v[1] = ~id;
	v[2] = 0x5a5a5a5a;
}

/* put_value of ID, expected new unless REF (the ids of [LO, ...] put so
 * far) has it, and REF marked. */
static void put_ref(cm_idmap *m, unsigned char *ref, int64_t lo, int64_t id)
{
	put_value(m, id, !ref[id - lo]);
	ref[id - lo] = 1;
}

/* An array (dense ids), with a budget of one page, so that every few puts
 * drop the resident pages: the values must come back from the file. */
START_TEST(idmap_dense)
{
	const int64_t lo = -5000, hi = 60000;
	unsigned char *ref = calloc((size_t)(hi - lo + 1), 1);
	uint64_t s = 88172645463325252ull;
	cm_idmap *m;
	cm_pages_budget(4096);
	m = cm_idmap_new(24, lo, hi, 20000);
	ck_assert_ptr_nonnull(m);
	ck_assert(cm_idmap_is_dense(m));
	for (int i = 0; i < 20000; i++) {
		int64_t id = lo + (int64_t)(rng_next(&s) % (uint64_t)(hi - lo + 1));
		put_ref(m, ref, lo, id);
	}
	put_ref(m, ref, lo, lo);
	put_ref(m, ref, lo, hi);
	check_table(m, ref, lo, hi);
	cm_idmap_free(m);
	free(ref);
}
END_TEST

/* The tables of a run expected to fit in the budget are held in memory,
 * else they go to files; the answers are the same either way. */
START_TEST(idmap_in_memory_or_files)
{
	const int64_t lo = -5000, hi = 60000;
	const size_t budget = 4u << 20, size = (size_t)(hi - lo + 1) * 32; /* 24-byte values: 32 an entry */
	int in_memory = _i == 0;
	unsigned char *ref = calloc((size_t)(hi - lo + 1), 1);
	uint64_t s = 88172645463325252ull, mem0, files0, mem1, files1, drops;
	cm_idmap *m;
	cm_pages_budget(budget);
	cm_idmap_expect(in_memory ? size : budget + 1);
	cm_idmap_table_bytes(&mem0, &files0, &drops);
	m = cm_idmap_new(24, lo, hi, 20000);
	ck_assert_ptr_nonnull(m);
	ck_assert(cm_idmap_is_dense(m));
	cm_idmap_table_bytes(&mem1, &files1, &drops);
	ck_assert_uint_eq(mem1 - mem0, in_memory ? size : 0);
	ck_assert_uint_eq(files1 - files0, in_memory ? 0 : size);
	for (int i = 0; i < 20000; i++)
		put_ref(m, ref, lo, lo + (int64_t)(rng_next(&s) % (uint64_t)(hi - lo + 1)));
	put_ref(m, ref, lo, lo);
	put_ref(m, ref, lo, hi);
	check_table(m, ref, lo, hi);
	cm_idmap_free(m);
	/* a table that would pass the budget goes to a file all the same */
	if (in_memory) {
		cm_idmap_expect(budget);
		m = cm_idmap_new(24, 0, (int64_t)(budget / 32), budget / 64);
		cm_idmap_table_bytes(&mem0, &files0, &drops);
		ck_assert_uint_eq(mem0, mem1);
		ck_assert_uint_gt(files0, files1);
		cm_idmap_free(m);
	}
	cm_idmap_expect(0);
	free(ref);
}
END_TEST

/* This process's resident memory in file pages (shared, in
 * /proc/self/statm), in bytes. */
static size_t file_resident(void)
{
	unsigned long size, resident, shared;
	FILE *f = fopen("/proc/self/statm", "r");
	int n;
	ck_assert_ptr_nonnull(f);
	n = fscanf(f, "%lu %lu %lu", &size, &resident, &shared);
	fclose(f);
	ck_assert_int_eq(n, 3);
	return (size_t)shared * (size_t)sysconf(_SC_PAGESIZE);
}

/* Tables in files give way to the process's other memory: with ANON bytes
 * of buffers touched, a table's resident pages stay within what they leave
 * of the budget (give or take the 1 MiB touched between two measures), not
 * within the whole budget; and the values survive the drops.  Each page of
 * a 32 MiB table is touched once, in order, as the render reads its
 * table. */
START_TEST(idmap_files_yield_to_memory)
{
	const size_t budget = 8u << 20, anon = 5u << 20, per_page = 4096 / 32;
	const int64_t hi = (int64_t)((32u << 20) / 32) - 1;
	size_t base, top = 0, allowance;
	unsigned char *buffers, *ref = calloc((size_t)hi + 1, 1);
	uint64_t mem0, files0, drops0, drops1;
	cm_idmap *m;
	cm_pages_budget(budget);
	cm_idmap_expect(0); /* files */
	cm_idmap_table_bytes(&mem0, &files0, &drops0);
	m = cm_idmap_new(24, 0, hi, (uint64_t)hi + 1);
	ck_assert(cm_idmap_is_dense(m));
	buffers = malloc(anon);
	memset(buffers, 0x5a, anon); /* resident, as the output phase's buffers are */
	base = file_resident();
	for (int64_t id = 0; id <= hi; id += (int64_t)per_page) {
		size_t now;
		put_ref(m, ref, 0, id);
		if ((id / (int64_t)per_page) % 32 == 31 && (now = file_resident()) > base && now - base > top)
			top = now - base;
	}
	allowance = cm_pages_allowance();
	cm_idmap_table_bytes(&mem0, &files0, &drops1);
	ck_assert_uint_gt(drops1, drops0);
	ck_assert_msg(allowance <= budget - anon, "allowance %zu with %zu of %zu taken", allowance, anon, budget);
	ck_assert_msg(top <= budget - anon + (1u << 20) + (256u << 10),
		      "file pages peaked at %zu bytes with %zu of the %zu budget taken by buffers", top, anon, budget);
	ck_assert_uint_gt(top, 512u << 10); /* the measure sees the table's pages at all */
	for (int64_t id = 0; id <= hi; id += (int64_t)per_page * 7) {
		int64_t *v = cm_idmap_get(m, id);
		ck_assert(v && v[0] == id * 7 + 1 && v[1] == ~id);
	}
	ck_assert_uint_eq(buffers[anon - 1], 0x5a);
	cm_idmap_free(m);
	free(buffers);
	free(ref);
}
END_TEST

/* Ids too sparse for an array: a hash map, the same answers. */
START_TEST(idmap_sparse)
{
	const int64_t lo = 1000, hi = 400000;
	unsigned char *ref = calloc((size_t)(hi - lo + 1), 1);
	uint64_t s = 1234567;
	cm_idmap *m;
	cm_pages_budget(1 << 20);
	m = cm_idmap_new(24, lo, hi, 500);
	ck_assert(!cm_idmap_is_dense(m));
	for (int i = 0; i < 500; i++) {
		int64_t id = lo + (int64_t)(rng_next(&s) % (uint64_t)(hi - lo + 1));
		put_ref(m, ref, lo, id);
	}
	check_table(m, ref, lo, hi);
	cm_idmap_free(m);
	free(ref);
}
END_TEST

/* A key set and a table packed over it, dense (one id in twelve, as user
 * annotations are) or, for a range over 128 times the keys, a hash map:
 * the set answers has() for every id, the table gives NULL for every id
 * that is not a key, and its values and walk are those of any table. */
static void check_keyed(int64_t lo, int64_t hi, uint64_t every, int want_dense, size_t budget)
{
	unsigned char *keys_ref = calloc((size_t)(hi - lo + 1), 1);
	unsigned char *put_ids = calloc((size_t)(hi - lo + 1), 1);
	uint64_t s = 0x9e3779b97f4a7c15ull, n = 0;
	cm_idkeys *k;
	cm_idmap *m;
	cm_pages_budget(budget);
	k = cm_idkeys_new(lo, hi, (uint64_t)(hi - lo + 1) / every);
	ck_assert_ptr_nonnull(k);
	for (int64_t id = lo; id <= hi; id++) {
		if (id != lo && id != hi && rng_next(&s) % every)
			continue;
		ck_assert_int_eq(cm_idkeys_add(k, id), 1);
		keys_ref[id - lo] = 1;
		n++;
	}
	ck_assert_int_eq(cm_idkeys_add(k, lo), 0); /* a key again */
	ck_assert_uint_eq(cm_idkeys_count(k), n);
	for (int64_t id = lo - 2; id <= hi + 2; id++)
		ck_assert_int_eq(cm_idkeys_has(k, id), id >= lo && id <= hi && keys_ref[id - lo]);
	m = cm_idmap_new_keyed(24, k);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(cm_idmap_is_dense(m), want_dense);
	/* values for about two keys in three, in a random order of passes */
	for (int pass = 0; pass < 2; pass++)
		for (int64_t id = pass ? hi : lo; pass ? id >= lo : id <= hi; id += pass ? -1 : 1) {
			if (!keys_ref[id - lo] || rng_next(&s) % 3 == 0)
				continue;
			put_ref(m, put_ids, lo, id);
		}
	check_table(m, put_ids, lo, hi);
	if (want_dense)
		ck_assert_uint_eq(cm_idmap_bytes(m) % 32, 0); /* 24 bytes + tag, in 32 */
	cm_idmap_free(m);
	cm_idkeys_free(k);
	free(keys_ref);
	free(put_ids);
}

START_TEST(idkeys_dense) { check_keyed(-700, 90000, 12, 1, 4096); }
END_TEST

START_TEST(idkeys_every_id) { check_keyed(1, 5000, 1, 1, 1 << 20); }
END_TEST

START_TEST(idkeys_sparse) { check_keyed(10, 700000, 1000, 0, 1 << 20); }
END_TEST

/* A put of an id that is not a key of the set is a caller's bug: abort. */
START_TEST(idkeys_put_outside)
{
	cm_idkeys *k;
	cm_idmap *m;
	cm_pages_budget(1 << 20);
	k = cm_idkeys_new(0, 1000, 100);
	for (int64_t id = 0; id <= 1000; id += 10)
		cm_idkeys_add(k, id);
	m = cm_idmap_new_keyed(8, k);
	ck_assert(cm_idmap_is_dense(m));
	cm_idmap_put(m, 15, NULL);
}
END_TEST

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

/* B's bytes moved elsewhere (a new block, the old freed): what a grow
 * may do. */
static void move_buf(cm_buf *b)
{
	char *p = cm_xmalloc(b->cap);
	memcpy(p, b->p, b->len);
	free(b->p);
	b->p = p;
}

/* gpu_members' pointers into the text: made as each member is written,
 * and made again from their offsets when the buffer moved during the
 * record (MOVE 1: between two members, 2: after the last, 3: before the
 * first, so both pointers stale; 4: between them and back after the last,
 * so the second is stale with the buffer where it began) or not (0). */
START_TEST(gpu_members_moves)
{
	static struct gpu_members m;
	cm_buf b = {0};
	const cm_jval *t, *k;
	size_t at;
	char *home = NULL, *away = cm_xmalloc(256);
	gpu_members_init(&m);
	for (int move = 0; move < 5; move++) {
		b.len = 0;
		cm_buf_grow(&b, 64);
		gpu_members_reset(&m, &b);
		if (move == 3)
			move_buf(&b);
		gpu_members_element(&m);
		cm_buf_lit(&b, "{\"pid\":");
		at = b.len;
		cm_jw_int(&b, 12);
		gpu_members_int(&m, "pid", 3, &b, at, 12);
		if (move == 1)
			move_buf(&b);
		if (move == 4) { /* (room enough: no grow below) */
			home = b.p;
			memcpy(away, b.p, b.len);
			b.p = away;
		}
		cm_buf_lit(&b, ",\"name\":");
		at = b.len;
		cm_buf_lit(&b, "\"ab\"");
		gpu_members_str(&m, "name", 4, &b, at);
		cm_buf_putc(&b, '}');
		if (move == 2)
			move_buf(&b);
		if (move == 4) {
			memcpy(home, b.p, b.len);
			b.p = home;
		}
		gpu_members_fix(&m, &b);
		ck_assert_ptr_nonnull(t = gpu_members_tree(&m, 0));
		ck_assert_uint_eq(t->len, 2);
		k = t->kids;
		ck_assert_ptr_eq(k->s, b.p + 7);
		ck_assert(k->len == 2 && !memcmp(k->s, "12", 2) && k->has_iv == 1 && k->iv == 12);
		k = k->next;
		ck_assert_ptr_eq(k->s, b.p + 18);
		ck_assert(k->len == 2 && !memcmp(k->s, "ab", 2) && !k->next);
	}
	cm_buf_free(&b);
	free(away);
}
END_TEST

/* Every member of an event that gpu_members notes says which it is (kno:
 * the .pftrace's encoder takes its word for it), the one that jval.h's
 * cm_jkey_no finds by its key, whichever way it was noted (node by node,
 * a row copied, a flow or an X event at once); a node deeper says none of
 * them (an arg named "name" is no event's name). */
static void check_kno(const cm_jval *t)
{
	unsigned n = 0;
	ck_assert_ptr_nonnull(t);
	for (const cm_jval *k = t->kids; k; k = k->next, n++) {
		unsigned na = 0;
		ck_assert_msg(k->kno == cm_jkey_no(k->key, k->klen) && k->kno != CM_JK_UNSAID, "\"%.*s\" says %u",
			      (int)k->klen, k->key, k->kno);
		for (const cm_jval *a = k->kids; a; a = a->next, na++)
			ck_assert_uint_eq(a->kno, CM_JK_OTHER);
		ck_assert_uint_eq(na, k->kids ? k->len : 0);
	}
	ck_assert_uint_eq(n, t->len); /* (the members linked, as many as it says) */
}

/* The event T's category and name say sfix (their bytes stay while the
 * encoder's batch lasts) as CAT and NAME, no other member of it. */
static void check_sfix(const cm_jval *t, int cat, int name)
{
	for (const cm_jval *k = t->kids; k; k = k->next)
		ck_assert_msg(k->sfix == (k->kno == CM_JK_CAT ? cat : k->kno == CM_JK_NAME ? name : 0), "\"%.*s\": sfix %u",
			      (int)k->klen, k->key, k->sfix);
}

START_TEST(gpu_members_kno)
{
	static struct gpu_members m;
	static const char *const keys[] = {"name", "cbid"};
	static const unsigned char klens[] = {4, 4};
	static const cm_int vals[] = {7, 8};
	static const struct {
		const char *key;
		unsigned char kno;
	} known[] = {{"ph", CM_JK_PH},     {"name", CM_JK_NAME}, {"cat", CM_JK_CAT}, {"ts", CM_JK_TS},
		     {"dur", CM_JK_DUR},   {"pid", CM_JK_PID},   {"tid", CM_JK_TID}, {"args", CM_JK_ARGS},
		     {"id", CM_JK_ID},     {"s", CM_JK_S},       {"bp", CM_JK_BP},   {"p", CM_JK_OTHER},
		     {"pidx", CM_JK_OTHER}, {"nam", CM_JK_OTHER}, {"", CM_JK_OTHER}, {"argz", CM_JK_OTHER}};
	cm_buf b = {0};
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		ck_assert_uint_eq(cm_jkey_no(known[i].key, strlen(known[i].key)), known[i].kno);
	ck_assert_uint_eq(cm_jkey_no(NULL, 0), CM_JK_OTHER);
	cm_buf_grow(&b, 64);
	gpu_members_init(&m);
	/* node by node, then its flow with the row copied */
	m.lean = 1;
	gpu_members_reset(&m, &b);
	gpu_members_element(&m);
	gpu_members_lit(&m, "ph", 2, "X", 1);
	gpu_members_lit(&m, "name", 4, "k", 1);
	gpu_members_lean_int(&m, "pid", 3, 1);
	gpu_members_lean_int(&m, "tid", 3, 2);
	gpu_members_row(&m);
	gpu_members_lean_time(&m, "ts", 2, 1000);
	gpu_members_lean_time(&m, "dur", 3, 1000);
	gpu_members_lit(&m, "other", 5, "o", 1);
	gpu_members_open(&m, "args", 4, CM_J_OBJ);
	gpu_members_lean_int(&m, "name", 4, 3);
	gpu_members_lit(&m, "cat", 3, "c", 1);
	gpu_members_close(&m);
	gpu_members_element(&m);
	gpu_members_lit(&m, "ph", 2, "s", 1);
	gpu_members_row_copy(&m, &b, 0, 0);
	check_kno(gpu_members_tree(&m, 0));
	check_kno(gpu_members_tree(&m, 1));
	check_sfix(gpu_members_tree(&m, 0), 0, 0); /* (node by node: none says) */
	ck_assert_uint_eq(gpu_members_tree(&m, 0)->len, 8);
	ck_assert_uint_eq(gpu_members_tree(&m, 1)->len, 3);
	/* an X event and its flows at once */
	for (int ph = 0; ph < 4; ph++) { /* (an "f" after an "s", and back: the nodes kept in their places) */
		gpu_members_reset(&m, &b);
		ck_assert(gpu_members_x(&m, "cuda_runtime", 12, "cudaLaunchKernel", 16, 1, 2, 1000, 2000, keys, klens, vals,
					2 - ph % 2));
		ck_assert(!gpu_members_x(&m, "cuda_runtime", 12, "cudaLaunchKernel", 16, 1, 2, 1000, 2000, keys, klens,
					 vals, 2)); /* (one a record) */
		ck_assert(gpu_members_flow(&m, ph % 2 ? 'f' : 's', 9, 3000));
		check_kno(gpu_members_tree(&m, 0));
		check_kno(gpu_members_tree(&m, 1));
		ck_assert_uint_eq(gpu_members_tree(&m, 0)->kids->next->next->next->next->next->next->next->len, 2 - ph % 2);
		ck_assert_uint_eq(gpu_members_tree(&m, 1)->len, ph % 2 ? 8 : 7);
		ck_assert_int_eq(gpu_members_tree(&m, 1)->kids->next->next->iv, 1); /* (the X's pid, copied) */
		/* the strings that stay (sfix): the X's category, a literal, not
		 * its name (the API cache's head); the flow's both, literals */
		check_sfix(gpu_members_tree(&m, 0), 1, 0);
		check_sfix(gpu_members_tree(&m, 1), 1, 1);
	}
	/* a kernel's: its head at once, then member by member, and its flow */
	for (int rec = 0; rec < 2; rec++) {
		gpu_members_reset(&m, &b);
		gpu_members_element(&m);
		ck_assert(gpu_members_head(&m, "kernel", 6, "k0", 2, 7, 8 + rec));
		ck_assert(!gpu_members_head(&m, "kernel", 6, "k0", 2, 7, 8)); /* (one a record) */
		gpu_members_lean_time(&m, "ts", 2, 1000);
		gpu_members_lean_time(&m, "dur", 3, 1000);
		gpu_members_open(&m, "args", 4, CM_J_OBJ);
		gpu_members_lean_int(&m, "device", 6, 0);
		gpu_members_close(&m);
		ck_assert(gpu_members_flow(&m, 'f', 9, 3000));
		check_kno(gpu_members_tree(&m, 0));
		check_kno(gpu_members_tree(&m, 1));
		ck_assert_uint_eq(gpu_members_tree(&m, 0)->len, 8);
		ck_assert_int_eq(gpu_members_tree(&m, 1)->kids->next->next->next->iv, 8 + rec); /* (the head's tid) */
		check_sfix(gpu_members_tree(&m, 0), 1, 1); /* (a literal, the window's name table's) */
	}
	gpu_members_reset(&m, &b); /* (not first: node by node) */
	gpu_members_element(&m);
	gpu_members_lit(&m, "ph", 2, "X", 1);
	ck_assert(!gpu_members_head(&m, "kernel", 6, "k0", 2, 7, 8));
	cm_buf_free(&b);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("tables");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60); /* a loaded machine (make -j distcheck) is slow */
	tcase_add_test(tc, hmap_many);
	tcase_add_test(tc, idmap_dense);
	tcase_add_loop_test(tc, idmap_in_memory_or_files, 0, 2);
	tcase_add_test(tc, idmap_files_yield_to_memory);
	tcase_add_test(tc, idmap_sparse);
	tcase_add_test(tc, idkeys_dense);
	tcase_add_test(tc, idkeys_every_id);
	tcase_add_test(tc, idkeys_sparse);
	tcase_add_test_raise_signal(tc, idkeys_put_outside, SIGABRT);
	tcase_add_test(tc, tid_export);
	tcase_add_test(tc, tid_int32);
	tcase_add_test(tc, tidmap_rules);
	tcase_add_test(tc, cbid_names);
	tcase_add_test(tc, cbid_rules);
	tcase_add_test(tc, gpurec_roundtrip);
	tcase_add_test(tc, gpu_members_moves);
	tcase_add_test(tc, gpu_members_kno);
	tcase_add_test(tc, gpuargs_direct);
	tcase_add_test(tc, gpunames_threads);
	tcase_add_test(tc, gpunames_bounds);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
