/* check_pfstrtab.c - the transcoder's string tables (pfintern.h's
 * cm_strtab), which intern every category, name and key it writes: a
 * string's number kept across growth and clears, and the cache of the
 * strings met lately, which tells strings by their length and two words,
 * against a list of them all.  Apart from the wire format
 * (check_pbwrite): a table the encoder looks strings up in, not bytes it
 * writes. */
#include "config.h"
#include "check_common.h"
#include "pftrace/pfintern.h"

/* The interning table: a string's number is the one given when it was
 * new, across growth; cleared, it forgets. */
START_TEST(strtab)
{
	cm_strtab t = {0};
	char key[32];
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof key, "name %d", i);
		ck_assert_uint_eq(cm_strtab_get(&t, key, (size_t)n, (uint64_t)i + 1), 0);
	}
	ck_assert_uint_eq(cm_strtab_get(&t, "", 0, 9999), 0); /* the empty string is a key too */
	ck_assert_uint_eq(cm_strtab_get(&t, "", 0, 1), 9999);
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof key, "name %d", i);
		ck_assert_uint_eq(cm_strtab_get(&t, key, (size_t)n, 0), (uint64_t)i + 1);
	}
	ck_assert_uint_eq(cm_strtab_get(&t, "name 5000", 9, 0), 0); /* VAL 0: only look */
	ck_assert_uint_eq(cm_strtab_get(&t, "name 5000", 9, 0), 0);
	cm_strtab_clear(&t);
	ck_assert_uint_eq(cm_strtab_bytes(&t), 0);
	ck_assert_uint_eq(cm_strtab_get(&t, "name 7", 6, 3), 0);
	ck_assert_uint_eq(cm_strtab_get(&t, "name 7", 6, 0), 3);
	cm_strtab_free(&t);
}
END_TEST

/* The string tables' cache (pfintern.h: a string told by its length and
 * two words, its middle compared past 16 bytes): strings of 0 to 40 bytes
 * that share their length and ends, or differ in one byte anywhere (the
 * middle of a long one too), looked up in random order, often again at
 * once (the cache's hit): each gets the number it was given first, and a
 * new one is new, as a list of them all says; the strings read in place
 * in a buffer that ends with them (no byte past them read: valgrind, ASan). */
START_TEST(strtab_cache)
{
	enum { NS = 400 };
	static char strs[NS][41];
	static size_t lens[NS];
	static uint64_t given[NS];
	cm_strtab t = {0};
	uint64_t r = 0xC0FFEEu + (uint64_t)_i, next = 1;
	memset(given, 0, sizeof given); /* (a loop's run may share the process: CK_FORK=no) */
	for (int i = 0; i < NS; i++) {
		size_t n = (size_t)(i % 41);
		memset(strs[i], 'a' + i % 3, n); /* many share length and ends */
		r = r * 6364136223846793005u + 1442695040888963407u;
		if (n)
			strs[i][(r >> 33) % n] = (char)('A' + (r >> 40) % 4); /* one byte set apart, anywhere */
		lens[i] = n;
	}
	for (int k = 0; k < 20000; k++) {
		int i, j;
		uint64_t want = 0, got;
		char *copy;
		r = r * 6364136223846793005u + 1442695040888963407u;
		i = (int)((r >> 33) % NS);
		for (j = 0; j < NS; j++) /* the first string with these bytes was given the number */
			if (lens[j] == lens[i] && !memcmp(strs[j], strs[i], lens[i]) && given[j]) {
				want = given[j];
				break;
			}
		copy = malloc(lens[i] ? lens[i] : 1); /* a buffer that ends with the string */
		memcpy(copy, strs[i], lens[i]);
		got = cm_strtab_get(&t, copy, lens[i], next);
		if (want) {
			ck_assert_uint_eq(got, want);
		} else {
			ck_assert_uint_eq(got, 0);
			given[i] = next++;
		}
		ck_assert_uint_eq(cm_strtab_get(&t, copy, lens[i], 0), want ? want : given[i]); /* again at once */
		free(copy);
	}
	cm_strtab_free(&t);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pfstrtab");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, strtab);
	tcase_add_loop_test(tc, strtab_cache, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
