/* check_jval.c - in-memory values: Python's json.loads, json.dumps and str();
 * the writers' fast digits against base/pyval.c's. */
#include "config.h"
#include "check_common.h"
#include "json/jval.h"

static cm_arena *arena;

static void setup(void) { arena = cm_arena_new(); }
static void teardown(void) { cm_arena_free(arena); }

/* dumps(loads(IN)) as a C string (static buffer). */
static const char *roundtrip(const char *in, int mode)
{
	static char out[512];
	cm_buf b = {0};
	cm_jval *v = cm_jval_parse_py(arena, in, strlen(in));
	if (!v)
		return NULL;
	if (mode == 0)
		cm_jval_dumps_py(&b, v);
	else if (mode == 1)
		cm_jval_str_py(&b, v);
	else
		cm_jval_write(&b, v);
	snprintf(out, sizeof out, "%.*s", (int)b.len, b.p);
	cm_buf_free(&b);
	return out;
}

/* json.dumps(json.loads(x)) in Python 3.11 */
static const char *const dumps_cases[][2] = {
	{"[1, {\"a\": 2}]", "[1, {\"a\": 2}]"},
	{"[1,2,3]", "[1, 2, 3]"},
	{"[1.0, 1e5, -0.0, 1E400, -0]", "[1.0, 100000.0, -0.0, Infinity, 0]"},
	{"[NaN, -Infinity]", "[NaN, -Infinity]"},
	{"[\"caf\\u00e9\", \"\xc3\xa9\", \"\xf0\x9f\x94\xa5\", \"\\u007f\"]",
	 "[\"caf\\u00e9\", \"\\u00e9\", \"\\ud83d\\udd25\", \"\\u007f\"]"},
	{"[{\"a\": 1, \"b\": 2, \"a\": 3}]", "[{\"a\": 3, \"b\": 2}]"},
	{"[\"q\\\"\\\\/\\n\\t\\u0001\"]", "[\"q\\\"\\\\/\\n\\t\\u0001\"]"},
	{" [true, false, null] ", "[true, false, null]"},
	{"[1.5e-7, 123456789012345678901234567890]", "[1.5e-07, 123456789012345678901234567890]"},
};

START_TEST(dumps)
{
	const char *got = roundtrip(dumps_cases[_i][0], 0);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, dumps_cases[_i][1]);
}
END_TEST

/* inputs json.loads rejects */
static const char *const bad_cases[] = {
	"[1,]", "01", "{\"a\" 1}", "[1 2]", "\"tab\there\"", "nul", "1.", "-", "{'a': 1}", "", "[", "\"\\x\"",
	"42 x",
};

START_TEST(rejects)
{
	ck_assert_ptr_null(cm_jval_parse_py(arena, bad_cases[_i], strlen(bad_cases[_i])));
}
END_TEST

/* str(json.loads(x)) */
static const char *const str_cases[][2] = {
	{"[1, \"a\", null, true]", "[1, 'a', None, True]"},
	{"{\"k\": \"it's\"}", "{'k': \"it's\"}"},
	{"12.50", "12.5"},
	{"\"plain\"", "plain"},
	{"false", "False"},
	{"1e16", "1e+16"},
};

START_TEST(str)
{
	ck_assert_str_eq(roundtrip(str_cases[_i][0], 1), str_cases[_i][1]);
}
END_TEST

START_TEST(write_keeps_number_text)
{
	ck_assert_str_eq(roundtrip("{\"a\": [1.50, 1E2, \"\xc3\xa9\"]}", 2), "{\"a\":[1.50,1E2,\"\xc3\xa9\"]}");
}
END_TEST

START_TEST(get_last_key)
{
	cm_jval *v = cm_jval_parse_py(arena, "{\"a\": 1, \"b\": 2, \"a\": \"x\"}", 26);
	const cm_jval *a;
	ck_assert_ptr_nonnull(v);
	a = cm_jval_get(v, "a");
	ck_assert(cm_jval_streq(a, "x"));
	ck_assert_ptr_null(cm_jval_get(v, "c"));
}
END_TEST

/* Python's dict of a JSON object: a repeated key keeps its first place and
 * its last value (the window's maps, finding F7). */
START_TEST(dict_members)
{
	static const char in[] = "{\"5\": \"a\", \"05\": \"b\", \"5\": \"c\", \"\": 1, \"7\": 2, \"\": 3}";
	static const char *const keys[] = { "5", "05", "", "7" }, *const vals[] = { "\"c\"", "\"b\"", "3", "2" };
	cm_jval *v = cm_jval_parse_py(arena, in, strlen(in));
	size_t n, i;
	const cm_jval **m;

	ck_assert_ptr_nonnull(v);
	m = cm_jval_dict_members(v, &n);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++) {
		cm_buf b = {0};
		ck_assert_uint_eq(m[i]->klen, strlen(keys[i]));
		ck_assert(!memcmp(m[i]->key, keys[i], m[i]->klen));
		cm_jval_write(&b, m[i]);
		ck_assert_uint_eq(b.len, strlen(vals[i]));
		ck_assert(!memcmp(b.p, vals[i], b.len));
		cm_buf_free(&b);
	}
	free(m);
	m = cm_jval_dict_members(v->kids, &n); /* not an object */
	ck_assert_uint_eq(n, 0);
	free(m);
}
END_TEST

START_TEST(builder)
{
	cm_jbuild b;
	cm_buf out = {0};
	cm_jbuild_begin(&b, arena);
	cm_jbuild_open(&b, CM_J_OBJ);
	cm_jbuild_key(&b, "k", 1);
	cm_jbuild_open(&b, CM_J_ARR);
	cm_jbuild_scalar(&b, CM_J_NUM, "1.0", 3);
	cm_jbuild_scalar(&b, CM_J_NULL, NULL, 0);
	ck_assert_int_eq(cm_jbuild_close(&b), 0);
	cm_jbuild_key(&b, "s", 1);
	cm_jbuild_scalar(&b, CM_J_STR, "a\"b", 3);
	ck_assert_int_eq(cm_jbuild_close(&b), 1);
	cm_jval_write(&out, b.root);
	cm_buf_putc(&out, 0);
	ck_assert_str_eq(out.p, "{\"k\":[1.0,null],\"s\":\"a\\\"b\"}");
	cm_buf_free(&out);
}
END_TEST

/* cm_jw_string against a byte-at-a-time model of its contract: quote and
 * backslash escaped, \n \r \t \b \f short, other bytes below 0x20 as \u00XX,
 * a WTF-8 surrogate (ED A0..BF xx) as its \uDXXX, every other byte as it is.
 * Random strings of every length up to 80 from an alphabet rich in the
 * bytes that stop the block skip, so that each stop falls at every place
 * of a 16- and an 8-byte block. */
static void model_string(cm_buf *b, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	cm_buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned c = p[i];
		char e[7];
		if (c == '"' || c == '\\') {
			e[0] = '\\', e[1] = (char)c;
			cm_buf_put(b, e, 2);
		} else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
			e[0] = '\\', e[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
			cm_buf_put(b, e, 2);
		} else if (c < 0x20 || (c == 0xED && i + 2 < n && p[i + 1] >= 0xA0)) {
			unsigned u = c < 0x20 ? c : 0xD000u | ((unsigned)(p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F);
			snprintf(e, sizeof e, "\\u%c%c%c%c", hex[u >> 12], hex[(u >> 8) & 15], hex[(u >> 4) & 15],
				 hex[u & 15]);
			cm_buf_put(b, e, 6);
			i += c == 0xED ? 2 : 0;
		} else {
			cm_buf_putc(b, (char)c);
		}
	}
	cm_buf_putc(b, '"');
}

START_TEST(write_string_model)
{
	static const unsigned char alphabet[] = {'a', 'Z', ' ', '~', 0x7f, '"', '\\', '\n', '\t', 0x01, 0x1f,
						 0xC3, 0xA9, 0xED, 0xA0, 0x80, 0xBF, 0xF0, '/'};
	unsigned long long x = 0x9E3779B97F4A7C15ull;
	unsigned char s[96];
	for (int round = 0; round < 20000; round++) {
		cm_buf got = {0}, want = {0};
		size_t n = (size_t)(round % 81);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* mostly plain letters, so that long runs reach the block skip */
			s[i] = (x & 7) < 5 ? (unsigned char)('a' + (x >> 8) % 26) : alphabet[(x >> 8) % sizeof alphabet];
		}
		cm_jw_string(&got, (const char *)s, n);
		model_string(&want, s, n);
		ck_assert_msg(got.len == want.len && !memcmp(got.p, want.p, got.len), "%.*s against %.*s",
			      (int)got.len, got.p, (int)want.len, want.p);
		cm_buf_free(&got);
		cm_buf_free(&want);
	}
}
END_TEST

/* The writers' digits (cm_jw_int_text, cm_jw_milli_text, and cm_jw_int,
 * cm_jw_us_text over them) are cm_py_int_format's and cm_py_milli_repr's bytes:
 * at every power of ten and its neighbours, both signs, each side of the
 * fast limit, and a million values spread over the range of times. */
static void digits_agree(cm_int v)
{
	char got[CM_INT_TEXT_MAX], want[CM_INT_TEXT_MAX];
	size_t n = cm_jw_int_text(v, got), m = cm_py_int_format(v, want);
	cm_buf b = {0};
	ck_assert_msg(n == m && !memcmp(got, want, n + 1), "int %s: %s", want, got);
	cm_jw_int(&b, v);
	ck_assert_msg(b.len == m && !memcmp(b.p, want, m), "cm_jw_int %s: %.*s", want, (int)b.len, b.p);
	cm_buf_free(&b);
	if (v > -CM_PY_MILLI_MAX && v < CM_PY_MILLI_MAX) {
		double d;
		n = cm_jw_milli_text((int64_t)v, got);
		m = cm_py_milli_repr((int64_t)v, want);
		ck_assert_msg(n == m && !memcmp(got, want, n + 1), "milli %s: %s", want, got);
		if (v >= 0) {
			n = cm_jw_us_text(v, got, &d);
			ck_assert_msg(n == m && !memcmp(got, want, n + 1), "us %s: %s", want, got);
			ck_assert(d == (double)(int64_t)v / 1000.0);
		}
	}
}

START_TEST(fast_digits)
{
	cm_int p = 1;
	uint64_t x = 88172645463325252ull;
	/* every power of ten an int128 holds, 10^0 to 10^38; 7 and 3 times it
	 * only to 10^37, the last they fit (past it, UBSan's overflow) */
	for (int k = 0; k < 39; k++) {
		for (int dv = -3; dv <= 3; dv++) {
			digits_agree(p + dv);
			digits_agree(-(p + dv));
			if (k == 38)
				continue;
			digits_agree(p * 7 + dv);
			digits_agree(CM_JW_FAST_LIMIT + (cm_int)dv * p);
			digits_agree(-CM_JW_FAST_LIMIT + (cm_int)dv * p);
		}
		if (k < 38)
			p *= 10;
	}
	digits_agree(CM_PY_MILLI_MAX - 1);
	digits_agree(CM_PY_MILLI_MAX);
	digits_agree(-CM_PY_MILLI_MAX + 1);
	digits_agree((cm_int)INT64_MAX);
	digits_agree((cm_int)INT64_MIN);
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		digits_agree((cm_int)(x >> (x % 64)) * (x & 1 ? -1 : 1));
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("jval");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, dumps, 0, sizeof dumps_cases / sizeof *dumps_cases);
	tcase_add_loop_test(tc, rejects, 0, sizeof bad_cases / sizeof *bad_cases);
	tcase_add_loop_test(tc, str, 0, sizeof str_cases / sizeof *str_cases);
	tcase_add_test(tc, write_keeps_number_text);
	tcase_add_test(tc, get_last_key);
	tcase_add_test(tc, dict_members);
	tcase_add_test(tc, builder);
	tcase_add_test(tc, write_string_model);
	tcase_add_test(tc, fast_digits);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
