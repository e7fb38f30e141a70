/* check_jvalid.c - the fast validator (jvalid.c) against the reading path.
 *
 * Every case is asked three times: of cm_jvalid_value, of the reading path
 * itself (cm_sax_run over a file holding the case wrapped to its depth,
 * read in 64 KiB and in 3-byte chunks), and of yajl + jcheck in one piece
 * (the oracle the fuzz harness uses, jvalid_oracle.h).  All must agree, and
 * for the table below also with the answer written by hand, so that a bug
 * shared by the validator and the oracle cannot pass unseen.  Built twice:
 * check_jvalid with the SSE2 string loop where the compiler has SSE2,
 * check_jvalid_swar with the portable 8-byte loop only. */
#include "config.h"
#include <limits.h>
#include "check_common.h"
#include "base/diag.h"
#include "io/input.h"
#include "json/jval.h"
#include "base/pyval.h"
#include "json/jvalid.h"
#include "json/jvalid_core.h" /* cm_jvalid_replay_num */
#include "json/saxread.h"
#include "../jvalid_oracle.h"

struct vcase {
	const char *s;
	size_t n;
	int depth0;
	int want; /* 1: valid */
};

/* A case at depth 1 (an array element), its length from the literal, so
 * that NUL bytes count. */
#define OK(lit) {lit, sizeof lit - 1, 1, 1}
#define NO(lit) {lit, sizeof lit - 1, 1, 0}

static const struct vcase table[] = {
	/* numbers: yajl's lexer grammar, no size limit (numbers stay text) */
	OK("0"), OK("-0"), OK("1"), OK("-1"), OK("123"), OK("1.5"), OK("-1.5"), OK("0.0"), OK("1e5"),
	OK("1E5"), OK("1e+5"), OK("1e-5"), OK("1.5e10"), OK("-0.0e-0"), OK("0e0"), OK("-0E+00"),
	OK("123456789012345678901234567890"), OK("1e999"), OK("-1e-999"), OK("1.7976931348623157e309"),
	OK("9223372036854775808"), OK("-9223372036854775809"), OK("1795975081641835894"),
	OK("5118055641902.967"), OK("0.000000000000000000000000000001"),
	/* the builder's integer values (iv): the int64 limits, 8 and 16 digits, 20 digits */
	OK("9223372036854775807"), OK("-9223372036854775808"), OK("12345678"), OK("-1234567812345678"),
	OK("99999999999999999999"), OK("{\"a\": [1234567, -0, 7], \"b\": 10000000000000000000}"),
	/* every length of digits to 20, so that each count is read eight at a time and the rest as
	 * a part of eight, before each byte that can end a number */
	OK("[1, 12, 123, 1234, 12345, 123456, 1234567, 98765432, 123456789, 1234567890, 12345678901,"
	   "123456789012, 1234567890123, 12345678901234, 123456789012345, 1234567890123456,"
	   "12345678901234567, 123456789012345678, 1234567890123456789, 12345678901234567890]"),
	OK("{\"a\":-9876543,\"b\":[76543210]\n,\"c\":7654321\t,\"d\":5.5,\"e\":123456789e3,"
	   "\"f\":-12345678901234\r}"),
	/* fractions of every length to 20 and more, read eight at a time too (the replay with
	 * numbers read: the value of all the digits, the integer part's then the fraction's) */
	OK("[0.1, 1.12, 12.123, 123.1234, -1234.12345, 1.123456, 1.1234567, 12.12345678,"
	   "1.123456789, 5117756144348.624, 9007199254740.993, 0.1234567890123456789,"
	   "1.12345678901234567890, 123456789.1234567890e-3, -0.00000001, 1.5E+300]"),
	NO("01"), NO("-01"), NO("00"), NO("012"), NO("1."), NO("-"), NO("+1"), NO(".5"), NO("-.5"),
	NO("1e"), NO("1e+"), NO("1E-"), NO("1.e5"), NO("--1"), NO("-a"), NO("0x10"), NO("1.5.5"),
	NO("1e5e5"), NO("1ee5"), NO("0-"), NO("1,"), NO("1 2"), NO("Infinity"), NO("-Infinity"),
	NO("NaN"), NO("1_000"), NO("1e5.5"), NO("１"),
	/* literals */
	OK("true"), OK("false"), OK("null"), NO("True"), NO("NULL"), NO("tru"), NO("truex"),
	NO("nul"), NO("nulll"), NO("false1"), NO("t"), NO("f"), NO("n"), NO("true false"),
	/* strings: every escape */
	OK("\"\""), OK("\"abc\""), OK("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""), OK("\"/\""),
	OK("\"\\u0000\""), OK("\"\\uABCD\""), OK("\"\\uabcd\""), OK("\"\\u12345\""), OK("\"\\uFfFf\""),
	/* \u escapes of surrogates are not paired by yajl's lexer: lone ones pass */
	OK("\"\\ud800\""), OK("\"\\udc00\""), OK("\"\\ud800\\udc00\""), OK("\"\\udbff\\udfff\""),
	OK("\"\\udc00\\ud800\""), OK("\"\\ud800x\""), OK("\"\\ud800\\u0041\""),
	NO("\"\\x\""), NO("\"\\u12\""), NO("\"\\u12G4\""), NO("\"\\U1234\""), NO("\"\\'\""),
	NO("\"\\a\""), NO("\"\\0\""), NO("\"\\v\""), NO("\"\\ \""), NO("\"\\u\""), NO("\"\\u 123\""),
	NO("\"\\\xc3\xa9\""), NO("\"abc\\\""), NO("\"\\"), NO("\"abc"), NO("\""), NO("'abc'"),
	/* strings: raw bytes below 0x20 are refused, DEL is not */
	OK("\"\x7f\""), OK("\" ~\""), NO("\"\x01\""), NO("\"\x1f\""), NO("\"a\tb\""), NO("\"a\nb\""),
	NO("\"a\rb\""), NO("\"\x00\""), NO("\"\f\""), NO("\"\v\""),
	/* UTF-8 in strings: each length at its boundaries */
	OK("\"\xc2\x80\""), OK("\"\xdf\xbf\""), OK("\"\xe0\xa0\x80\""), OK("\"\xef\xbf\xbf\""),
	OK("\"\xed\x9f\xbf\""), OK("\"\xee\x80\x80\""), OK("\"\xf0\x90\x80\x80\""),
	OK("\"\xf4\x8f\xbf\xbf\""), OK("\"\xf3\xbf\xbf\xbf\""), OK("\"caf\xc3\xa9 \xf0\x9f\x94\xa5\""),
	OK("\"\xef\xbb\xbf\""),
	/* overlongs */
	NO("\"\xc0\x80\""), NO("\"\xc1\xbf\""), NO("\"\xe0\x80\x80\""), NO("\"\xe0\x9f\xbf\""),
	NO("\"\xf0\x80\x80\x80\""), NO("\"\xf0\x8f\xbf\xbf\""),
	/* surrogates D800..DFFF encoded in UTF-8 */
	NO("\"\xed\xa0\x80\""), NO("\"\xed\xbf\xbf\""), NO("\"\xed\xa0\x80\xed\xb0\x80\""),
	/* beyond U+10FFFF, bytes that never start a sequence */
	NO("\"\xf4\x90\x80\x80\""), NO("\"\xf5\x80\x80\x80\""), NO("\"\xf7\xbf\xbf\xbf\""),
	NO("\"\xf8\x88\x80\x80\x80\""), NO("\"\xfe\""), NO("\"\xff\""),
	/* stray continuations, truncated sequences */
	NO("\"\x80\""), NO("\"\xbf\""), NO("\"a\x80\""), NO("\"\xc2\""), NO("\"\xc2x\""),
	NO("\"\xe0\xa0\""), NO("\"\xe1\x80\""), NO("\"\xf0\x90\x80\""), NO("\"\xf1\x80\x80\""),
	NO("\"\xc2"), NO("\"\xf0\x90\x80"), NO("\"\xc3\xa9\xa9\""), NO("\"\xe2\x82\""),
	/* UTF-8 outside strings, a BOM */
	NO("\xc3\xa9"), NO("\xef\xbb\xbf" "1"), NO("[\xc2\x80]"),
	/* containers */
	OK("{}"), OK("[]"), OK("{\"a\":1}"), OK("{\"a\":[1,{\"b\":null}]}"), OK(" [ 1 , 2 ] "),
	OK("{ \"a\" : 1 , \"b\" : 2 }"), OK("[[],[[]],{}]"), OK("{\"\":\"\"}"), OK("{\"a\":1,\"a\":2}"),
	OK("[\"\\\"]\"]"), OK("{\"}\":\"{\"}"), OK("[true,false,null,-1.5e3,\"x\",{},[]]"),
	/* a trace event: the replay's depth cuts fall inside args; escaped keys and strings */
	OK("{\"ph\":\"X\",\"ts\":1.5,\"args\":{\"External id\":5,\"Input Dims\":[[1,2],[3,[]]],"
	   "\"n\\u0061me\":\"a\\nb\\ud83d\\ude00\",\"o\":{\"p\":{\"q\":[true,null]}}},\"e\":[{}]}"),
	NO("[1,]"), NO("{,}"), NO("{\"a\":1,}"), NO("[,1]"), NO("{\"a\"}"), NO("{\"a\":}"),
	NO("{1:2}"), NO("{a:1}"), NO("{\"a\" 1}"), NO("{\"a\"::1}"), NO("[1 2]"), NO("["), NO("]"),
	NO("{"), NO("}"), NO("[}"), NO("{]"), NO("{\"a\":1]"), NO("[1}"), NO("{\"a\":1 \"b\":2}"),
	NO("[1,,2]"), NO("[[]"), NO("[]]"), NO("[],[]"), NO("{} {}"), NO("[1]x"), NO("{\"a\",1}"),
	NO("{\"a\":1:2}"), NO("[1:2]"), NO("{'a':1}"), NO("{\"a\":1"), NO("[1,"), NO("{\"a\""),
	/* whitespace: SP HT LF CR around and between tokens; FF and VT nowhere */
	OK(" 1 "), OK("\t\n\r1\r\n\t"), OK("[\n  1,\n  2\n]"), OK("{\r\n\"a\"\t:\t1\r\n}"),
	NO("\f1"), NO("1\f"), NO("\v1"), NO("1\v"), NO("[1,\f2]"), NO("{\"a\":\v1}"), NO("[\f]"),
	NO(""), NO("   "), NO("\n"), NO("\x01"), NO("1\x00"), NO("\x00"), NO("[1\x00]"),
	NO("\xa0" "1"),
	/* ": " and ", " (the window's and Kineto's layout) are stepped over at
	 * once; what follows them is judged as after any blanks, and other
	 * blanks after them go the general way */
	OK("{\"a\": 1, \"b\": \"x\", \"c\": [1, 2, {\"d\": null}], \"e\": {}}"), OK("[1, [2, 3], \"x\"]"),
	OK("{\"a\": \t1,\n \"b\":  2 ,  \"c\": \r3}"), OK("[1,  2, \n3]"), OK("{\"a\": \"\", \"\": 1}"),
	NO("{\"a\": 1, 2}"), NO("[1, \"a\": 2]"), NO("{\"a\": 1, }"), NO("[1, ]"), NO("{\"a\": }"),
	NO("{\"a\": ,}"), NO("{\"a\": \f1}"), NO("[1, \v2]"), NO("{\"a\": 1, "), NO("{\"a\": "), NO("[1, "),
	NO("{\"a\": 1, \"b"), NO("{\"a\": :1}"), NO("{\"a\": 1, ,\"b\": 2}"),
	/* comments are off */
	NO("/*c*/1"), NO("1//c"), NO("[1/*x*/]"), NO("//\n1"), NO("#1"),
};

/* Cases generated at run time (nesting, string positions): malloc'd. */
static struct vcase *made;
static size_t made_len, made_cap;

static void add_case(const char *s, size_t n, int depth0, int want)
{
	char *copy = malloc(n + 1);
	memcpy(copy, s, n);
	copy[n] = 0;
	if (made_len == made_cap) {
		made_cap = made_cap ? made_cap * 2 : 256;
		made = realloc(made, made_cap * sizeof *made);
	}
	made[made_len++] = (struct vcase){copy, n, depth0, want};
}

/* K nested containers: arrays, or objects {"a":...} when OBJECTS, around
 * INNER. */
static void add_nest(int k, int objects, const char *inner, int depth0, int want)
{
	size_t cap = (size_t)k * 6 + strlen(inner) + 1, len = 0;
	char *s = malloc(cap);
	for (int i = 0; i < k; i++)
		len += (size_t)sprintf(s + len, "%s", objects ? "{\"a\":" : "[");
	len += (size_t)sprintf(s + len, "%s", inner);
	for (int i = 0; i < k; i++)
		s[len++] = objects ? '}' : ']';
	add_case(s, len, depth0, want);
	free(s);
}

/* The depth limit, CM_JSON_MAX_DEPTH = 512 counted from the document's
 * top: a value at DEPTH0 may nest 512 - DEPTH0 deep. */
static void make_depth_cases(void)
{
	const int max = CM_JSON_MAX_DEPTH;
	for (int objects = 0; objects <= 1; objects++) {
		const int d0s[] = {0, 1, 2, 255, 500};
		for (size_t i = 0; i < sizeof d0s / sizeof d0s[0]; i++) {
			int room = max - d0s[i];
			add_nest(room - 1, objects, "1", d0s[i], 1);
			add_nest(room, objects, "1", d0s[i], 1);
			add_nest(room, objects, "[]", d0s[i], 0);
			add_nest(room + 1, objects, "1", d0s[i], 0);
			add_nest(room - 1, objects, "{}", d0s[i], 1);
		}
	}
	add_nest(1, 0, "", 511, 1);   /* [] at 511: level 512 */
	add_nest(2, 0, "", 511, 0);   /* [[]] at 511: level 513 */
	add_case("1", 1, 511, 1);
	add_case("1", 1, 512, 1);     /* a scalar opens no level */
	add_case("\"x\"", 3, 512, 1);
	add_case("[]", 2, 512, 0);
	add_case("{}", 2, 512, 0);
	add_case("[1,[2,[3]],4]", 13, 509, 1);
	add_case("[1,[2,[3]],4]", 13, 510, 0);
}

/* A string whose byte POS of LEN is SPECIAL (some bytes long), the others
 * 'a': the stop conditions of the 16- and 8-byte loops at every lane, with
 * the value's end at every distance.  The answer is the oracle's. */
static void make_lane_cases(void)
{
	static const struct {
		const char *b;
		size_t n;
	} specials[] = {{"\\n", 2}, {"\\u00e9", 6}, {"\xc3\xa9", 2}, {"\xe2\x82\xac", 3},
			{"\xf0\x9f\x94\xa5", 4}, {"\x7f", 1}, {"\x1f", 1}, {"\x80", 1}, {"\xc0\xaf", 2},
			{"\\", 1}, {"\"", 1}, {"\n", 1}, {"\x00", 1}, {"\xed\xa0\x80", 3}, {"\xe0\xa0", 2}};
	char buf[128];
	for (size_t len = 0; len <= 40; len++)
		for (size_t pos = 0; pos <= len; pos++)
			for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) {
				size_t n = 0;
				buf[n++] = '"';
				memset(buf + n, 'a', pos);
				n += pos;
				memcpy(buf + n, specials[k].b, specials[k].n);
				n += specials[k].n;
				memset(buf + n, 'a', len - pos);
				n += len - pos;
				buf[n++] = '"';
				add_case(buf, n, 1, -1);
			}
	/* long digit runs at every length: the 8-digit loop */
	for (size_t len = 1; len <= 40; len++) {
		memset(buf, '7', len);
		add_case(buf, len, 1, 1);
		memcpy(buf + len, ".5e12", 5);
		add_case(buf, len + 5, 1, 1);
		buf[len] = 'x';
		add_case(buf, len + 1, 1, 0);
		buf[len] = '.';
		add_case(buf, len + 1, 1, 0);
	}
}

/* The reading path itself: cm_sax_run over a file holding X wrapped to
 * DEPTH0, read in chunks of BUFSIZE, its message dropped.  1 when X is one
 * valid value at DEPTH0. */
static int reading_path(const char *x, size_t n, int depth0, size_t bufsize)
{
	char path[] = "/tmp/cuptimerge-jvalid.XXXXXX";
	size_t len;
	char *doc = jvalid_oracle_wrap(x, n, depth0, &len);
	struct jvalid_oracle_count count = {depth0, 0, 0, 0};
	cm_diag_slot slot = {0};
	cm_sax sax;
	cm_input *in;
	int fd = mkstemp(path), rc;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, doc, len), (ssize_t)len);
	close(fd);
	free(doc);
	in = cm_input_open(path, bufsize);
	ck_assert_ptr_nonnull(in);
	memset(&sax, 0, sizeof sax);
	cm_diag_defer(&slot);
	rc = cm_sax_run(&sax, in, &jvalid_oracle_callbacks, &count, "test");
	cm_diag_defer(NULL);
	cm_diag_drop(&slot);
	cm_diag_reset();
	cm_input_close(in);
	unlink(path);
	return rc == 0 && jvalid_oracle_one_value(&count);
}

/* ---- the replay (cm_jvalid_replay) ----
 * A recorder writes each callback as a line "DEPTH TAG LEN:BYTES", DEPTH
 * being the containers open around the token (a container's start and end
 * count those around the container), so that a replay cut at MAXDEPTH can
 * be held against the full replay with the deeper lines taken out. */
struct rec {
	cm_buf out;
	int depth;
};

static int rec_put(struct rec *r, int depth, char tag, const void *s, size_t n)
{
	char head[48];
	int k = snprintf(head, sizeof head, "%d %c %zu:", depth, tag, n);
	cm_buf_put(&r->out, head, (size_t)k);
	cm_buf_put(&r->out, s, n);
	cm_buf_put(&r->out, "\n", 1);
	return 1;
}
static int r_null(void *r) { return rec_put(r, ((struct rec *)r)->depth, 'n', "", 0); }
static int r_bool(void *r, int b) { return rec_put(r, ((struct rec *)r)->depth, b ? 't' : 'f', "", 0); }
static int r_num(void *r, const char *s, size_t n) { return rec_put(r, ((struct rec *)r)->depth, '#', s, n); }
static int r_str(void *r, const unsigned char *s, size_t n) { return rec_put(r, ((struct rec *)r)->depth, 's', s, n); }
static int r_key(void *r, const unsigned char *s, size_t n) { return rec_put(r, ((struct rec *)r)->depth, 'k', s, n); }
static int r_open(void *rv, char tag)
{
	struct rec *r = rv;
	rec_put(r, r->depth, tag, "", 0);
	r->depth++;
	return 1;
}
static int r_close(void *rv, char tag)
{
	struct rec *r = rv;
	r->depth--;
	return rec_put(r, r->depth, tag, "", 0);
}
static int r_smap(void *r) { return r_open(r, '{'); }
static int r_emap(void *r) { return r_close(r, '}'); }
static int r_sarr(void *r) { return r_open(r, '['); }
static int r_earr(void *r) { return r_close(r, ']'); }
static const yajl_callbacks rec_callbacks = {r_null, r_bool, NULL, NULL, r_num, r_str,
					      r_smap, r_key, r_emap, r_sarr, r_earr};

/* The lines of FULL whose depth is at most MAX (the buffer has no NUL
 * after it: each line is parsed within its bounds). */
static void keep_depth(cm_buf *out, const cm_buf *full, int max)
{
	const char *p = full->p, *e = full->p + full->len;
	while (p < e) {
		const char *q = p;
		int d = 0;
		size_t n = 0;
		while (q < e && *q >= '0' && *q <= '9')
			d = d * 10 + (*q++ - '0');
		q += 3; /* " T " */
		while (q < e && *q >= '0' && *q <= '9')
			n = n * 10 + (size_t)(*q++ - '0');
		ck_assert(q < e && *q == ':' && (size_t)(e - q) >= n + 2);
		q += 1 + n + 1; /* ':', the bytes, '\n' */
		if (d <= max)
			cm_buf_put(out, p, (size_t)(q - p));
		p = q;
	}
}

/* Every number of a tree cm_jvalid_build made: its value in iv when, and
 * only when, its text is an integer literal that fits an int64 (at most 19
 * digits), the value Python's int() reads from the text. */
static void iv_agrees(const cm_jval *v)
{
	for (; v; v = v->next) {
		if (v->type == CM_J_NUM) {
			cm_int want;
			size_t nd = v->len - (v->s[0] == '-');
			int lit = cm_py_number_is_int(v->s, v->len) && nd <= 19 &&
				  cm_py_int_of_number(v->s, v->len, &want) == CM_PY_OK && want >= INT64_MIN &&
				  want <= INT64_MAX;
			ck_assert_msg(v->has_iv == lit, "%.*s: has_iv %d", (int)v->len, v->s, v->has_iv);
			ck_assert_msg(!lit || v->iv == (int64_t)want, "%.*s: iv %lld", (int)v->len, v->s, (long long)v->iv);
		}
		iv_agrees(v->kids);
	}
}

/* cm_jvalid_replay_num's number callback: what it was told of the number
 * S[0..N) is what its text says (read here a byte at a time), then the
 * line r_num would write, so that the replay's lines can be compared. */
static int r_num_dec(void *r, const char *s, size_t n, const struct cm_jnum *num)
{
	size_t i = 0;
	unsigned ni = 0, nf = 0;
	uint64_t m = 0;
	int neg = n && s[0] == '-';
	i = (size_t)neg;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, ni++)
		m = m * 10 + (uint64_t)(s[i] - '0');
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, nf++)
			m = m * 10 + (uint64_t)(s[i] - '0');
	ck_assert_msg(num->neg == neg && num->ni == ni && num->nf == nf && num->exp == (i < n),
		      "%.*s: neg %d ni %u nf %u exp %d", (int)n, s, num->neg, num->ni, num->nf, num->exp);
	ck_assert_msg(ni + nf > 19 || num->m == m, "%.*s: m %llu", (int)n, s, (unsigned long long)num->m);
	return r_num(r, s, n);
}

/* The replay of COPY[0..N) agrees with the validator's answer OK: the same
 * decision at every depth cut; for a valid text, the cut replays are the
 * full one with the deeper lines taken out, and the tree built through
 * cm_jbuild_callbacks (borrowing) is the one cm_jval_parse_py makes.  So do
 * cm_jvalid_build's decision and tree. */
static void replay_agrees(const char *copy, size_t n, int depth0, int ok)
{
	cm_arena *a = cm_arena_new();
	struct rec full = {{0}, 0};
	cm_jbuild b;
	int r = cm_jvalid_replay(copy, n, depth0, INT_MAX, &rec_callbacks, &full, a);
	ck_assert_msg(r == ok, "replay says %d, validator %d: \"%.*s\"", r, ok, (int)(n < 200 ? n : 200), copy);
	for (int max = 0; max < 4; max++) {
		struct rec cut = {{0}, 0};
		cm_buf want = {0};
		r = cm_jvalid_replay(copy, n, depth0, max, &rec_callbacks, &cut, a);
		ck_assert_msg(r == ok, "replay to depth %d says %d, validator %d", max, r, ok);
		if (ok) {
			keep_depth(&want, &full.out, max);
			ck_assert_msg(want.len == cut.out.len && !memcmp(want.p, cut.out.p, want.len),
				      "replay to depth %d: \"%.*s\" against \"%.*s\"", max, (int)cut.out.len,
				      cut.out.p ? cut.out.p : "", (int)want.len, want.p ? want.p : "");
		}
		cm_buf_free(&want);
		cm_buf_free(&cut.out);
	}
	{ /* with the numbers read as they are checked: the same decision and
	   * lines, and what it read of each number right */
		struct rec nums = {{0}, 0};
		r = cm_jvalid_replay_num(copy, n, depth0, INT_MAX, &rec_callbacks, r_num_dec, &nums, a);
		ck_assert_msg(r == ok, "replay_num says %d, validator %d: \"%.*s\"", r, ok, (int)(n < 200 ? n : 200),
			      copy);
		ck_assert_msg(!ok || (nums.out.len == full.out.len && !memcmp(nums.out.p, full.out.p, full.out.len)),
			      "replay_num: \"%.*s\" against \"%.*s\"", (int)nums.out.len, nums.out.p ? nums.out.p : "",
			      (int)full.out.len, full.out.p ? full.out.p : "");
		cm_buf_free(&nums.out);
	}
	if (ok) {
		cm_jbuild_begin(&b, a);
		b.borrow = 1;
		ck_assert(cm_jvalid_replay(copy, n, depth0, INT_MAX, &cm_jbuild_callbacks, &b, a));
		ck_assert_msg(jvalid_oracle_same_tree(b.root, cm_jval_parse_py(a, copy, n)),
			      "the replay's tree is not cm_jval_parse_py's: \"%.*s\"", (int)(n < 200 ? n : 200), copy);
	}
	/* the builder: the same decision, and the same tree */
	cm_jbuild_begin(&b, a);
	b.borrow = 1;
	r = cm_jvalid_build(copy, n, depth0, &b);
	ck_assert_msg(r == ok, "build says %d, validator %d: \"%.*s\"", r, ok, (int)(n < 200 ? n : 200), copy);
	if (ok) {
		ck_assert_msg(jvalid_oracle_same_tree(b.root, cm_jval_parse_py(a, copy, n)),
			      "the builder's tree is not cm_jval_parse_py's: \"%.*s\"", (int)(n < 200 ? n : 200), copy);
		iv_agrees(b.root);
	}
	cm_buf_free(&full.out);
	cm_arena_free(a);
}

/* The validator on an exact-size copy (so that a read past the end is a
 * sanitizer's finding), with its bad offset in range; the replay on the
 * same copy must agree with it. */
static int validator(const char *x, size_t n, int depth0)
{
	char *copy = malloc(n ? n : 1);
	size_t bad = (size_t)-1;
	int ok;
	memcpy(copy, x, n);
	ok = cm_jvalid_value(copy, n, depth0, &bad);
	if (!ok)
		ck_assert_msg(bad <= n, "bad offset %zu beyond %zu", bad, n);
	replay_agrees(copy, n, depth0, ok);
	free(copy);
	return ok;
}

static void judge(const struct vcase *c, int slow_too)
{
	int oracle = jvalid_oracle(c->s, c->n, c->depth0);
	int fast = validator(c->s, c->n, c->depth0);
	ck_assert_msg(fast == oracle, "jvalid says %d, yajl+jcheck %d: depth0 %d, \"%.*s\"", fast, oracle,
		      c->depth0, (int)(c->n < 200 ? c->n : 200), c->s);
	if (c->want >= 0)
		ck_assert_msg(fast == c->want, "jvalid says %d, by hand %d: depth0 %d, \"%.*s\"", fast, c->want,
			      c->depth0, (int)(c->n < 200 ? c->n : 200), c->s);
	if (slow_too) {
		ck_assert_msg(reading_path(c->s, c->n, c->depth0, 65536) == oracle,
			      "the reading path (64 KiB) differs from the oracle: \"%.*s\"", (int)c->n, c->s);
		ck_assert_msg(reading_path(c->s, c->n, c->depth0, 3) == oracle,
			      "the reading path (3 bytes) differs from the oracle: \"%.*s\"", (int)c->n, c->s);
	}
}

START_TEST(table_cases) { judge(&table[_i], 1); }
END_TEST

START_TEST(made_cases)
{
	/* the reading path for the depth cases (few); the oracle alone for the
	 * thousands of lane cases */
	for (size_t i = 0; i < made_len; i++)
		judge(&made[i], made[i].want >= 0);
}
END_TEST

/* The same table at depth 0, where the value is the whole document: the
 * reading path then also has its end-of-text rule (a trailing unterminated
 * string passes yajl, jcheck refuses it). */
START_TEST(table_at_top)
{
	struct vcase c = table[_i];
	c.depth0 = 0;
	judge(&c, 0);
}
END_TEST

START_TEST(top_level_trailing_string)
{
	static const char *const cases[] = {"1 \"abc", "{}\"x", "[]  \"\\u12", "1e400\""};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct vcase c = {cases[i], strlen(cases[i]), 0, 0};
		judge(&c, 1);
	}
}
END_TEST

/* cm_jvalid_prefix: a valid value cut anywhere is SHORT (the chunk
 * boundaries of a splitter), and followed by more bytes ends where it ends. */
START_TEST(prefix_cuts)
{
	const struct vcase *c = &table[_i];
	char *buf;
	size_t at, start = 0, end;
	if (!c->want || c->depth0 != 1)
		return;
	end = c->n;
	while (start < end && strchr(" \t\r\n", c->s[start]))
		start++;
	while (end > start && strchr(" \t\r\n", c->s[end - 1]))
		end--;
	buf = malloc(c->n + 2);
	for (size_t k = start; k < end; k++) {
		memcpy(buf, c->s, k);
		at = 12345;
		ck_assert_msg(cm_jvalid_prefix(buf, k, 1, &at) == CM_JVALID_SHORT,
			      "\"%.*s\" cut at %zu is not SHORT", (int)c->n, c->s, k);
		ck_assert_uint_eq(at, k);
	}
	memcpy(buf, c->s, c->n);
	memcpy(buf + c->n, ",x", 2);
	ck_assert_int_eq(cm_jvalid_prefix(buf, c->n + 2, 1, &at), 1);
	ck_assert_uint_eq(at, end);
	/* a number alone up to the end may go on */
	ck_assert_int_eq(cm_jvalid_prefix(buf, c->n, 1, &at),
			 strchr("-0123456789", c->s[start]) && end == c->n ? CM_JVALID_SHORT : 1);
	free(buf);
}
END_TEST

START_TEST(prefix_errors)
{
	size_t at;
	ck_assert_int_eq(cm_jvalid_prefix("[1,]xx", 6, 1, &at), 0);
	ck_assert_uint_eq(at, 3);
	ck_assert_int_eq(cm_jvalid_prefix("{\"a\":\f1}", 8, 1, &at), 0);
	ck_assert_uint_eq(at, 5);
	ck_assert_int_eq(cm_jvalid_prefix("\"\xc0", 2, 1, &at), 0);
	ck_assert_uint_eq(at, 1);
	ck_assert_int_eq(cm_jvalid_prefix("\"\xe0\x9f", 3, 1, &at), 0);
	ck_assert_uint_eq(at, 2);
	ck_assert_int_eq(cm_jvalid_prefix("tx", 2, 1, &at), 0);
	ck_assert_uint_eq(at, 1);
	ck_assert_int_eq(cm_jvalid_prefix("\"\\u0g", 5, 1, &at), 0);
	ck_assert_uint_eq(at, 4);
	ck_assert_int_eq(cm_jvalid_prefix("  {\"a\":1} ,", 11, 1, &at), 1);
	ck_assert_uint_eq(at, 9);
	ck_assert_int_eq(cm_jvalid_prefix("", 0, 1, &at), CM_JVALID_SHORT);
	ck_assert_int_eq(cm_jvalid_prefix(" \t", 2, 1, &at), CM_JVALID_SHORT);
	ck_assert_int_eq(cm_jvalid_prefix("1 ", 2, 1, &at), 1);
	ck_assert_uint_eq(at, 1);
	ck_assert_int_eq(cm_jvalid_prefix("[]", 2, 512, &at), 0);
	ck_assert_uint_eq(at, 0);
}
END_TEST

START_TEST(bad_offsets)
{
	size_t bad = 0;
	ck_assert(!cm_jvalid_value("[1,]", 4, 1, &bad));
	ck_assert_uint_eq(bad, 3);
	ck_assert(!cm_jvalid_value("{\"a\":1", 6, 1, &bad));
	ck_assert_uint_eq(bad, 6);
	ck_assert(!cm_jvalid_value("1 2", 3, 1, &bad));
	ck_assert_uint_eq(bad, 2);
	ck_assert(!cm_jvalid_value("\"a\x01\"", 4, 1, &bad));
	ck_assert_uint_eq(bad, 2);
	ck_assert(!cm_jvalid_value("\"\xed\xa0\x80\"", 5, 1, &bad));
	ck_assert_uint_eq(bad, 2);
	ck_assert(cm_jvalid_value("1", 1, 1, NULL));
	ck_assert(!cm_jvalid_value("x", 1, 1, NULL));
}
END_TEST

static Suite *jvalid_suite(void)
{
	Suite *s = suite_create("jvalid");
	TCase *tc = tcase_create("core");
	make_depth_cases();
	make_lane_cases();
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, table_cases, 0, (int)(sizeof table / sizeof table[0]));
	tcase_add_loop_test(tc, table_at_top, 0, (int)(sizeof table / sizeof table[0]));
	tcase_add_test(tc, made_cases);
	tcase_add_test(tc, top_level_trailing_string);
	tcase_add_loop_test(tc, prefix_cuts, 0, (int)(sizeof table / sizeof table[0]));
	tcase_add_test(tc, prefix_errors);
	tcase_add_test(tc, bad_offsets);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(jvalid_suite)
