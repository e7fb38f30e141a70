/* check_idmaps.c - the id index and the id tables of base/: the hash map
 * (hmap.h) and the tables from ids to values (idmap.h) as an array, a
 * hash map or packed over a key set, in memory or in files that give way
 * to the process's other memory.  Once in check_tables with the GPU
 * stages' tests (now check_apirules, check_gpurecs, check_gpumembers):
 * these stand on base/ alone, and they set the process's page budget
 * (cm_pages_budget), which none of those needs. */
#include "config.h"
#include "check_common.h"
#include "base/hmap.h"
#include "base/idmap.h"

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

static Suite *make_suite(void)
{
	Suite *s = suite_create("idmaps");
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
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
