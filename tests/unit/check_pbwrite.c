/* check_pbwrite.c - the Perfetto writer's pieces: varints, tags, fixed64s,
 * nested messages (a length that outgrows its byte moves the body), exact
 * times from JSON number text, and the interning tables. */
#include "config.h"
#include "check_common.h"
#include "check_jtree.h"
#include "pftrace/pbwrite.h"
#include "pftrace/pfintern.h"
#include "pftrace/pftrace.h"
#include "pftrace/pfevent.h"
#include "base/diag.h"

#include <pthread.h>
#include <time.h>
#include <stdint.h>

/* B holds exactly the N bytes WANT. */
#define ck_bytes(b, want, n)                                         \
	do {                                                         \
		ck_assert_uint_eq((b)->len, (n));                    \
		ck_assert(!memcmp((b)->p, (want), (n)));             \
	} while (0)

START_TEST(varints)
{
	static const struct {
		uint64_t v;
		size_t n;
		unsigned char bytes[10];
	} cases[] = {
		{0, 1, {0x00}},
		{1, 1, {0x01}},
		{127, 1, {0x7f}},
		{128, 2, {0x80, 0x01}},
		{300, 2, {0xac, 0x02}},
		{16383, 2, {0xff, 0x7f}},
		{16384, 3, {0x80, 0x80, 0x01}},
		{UINT64_C(1) << 63, 10, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
		{UINT64_MAX, 10, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		cm_buf b = {0};
		cm_pb_varint(&b, cases[i].v);
		ck_bytes(&b, cases[i].bytes, cases[i].n);
		ck_assert_uint_eq(cm_pb_varint_size(cases[i].v), cases[i].n);
		cm_buf_free(&b);
	}
}
END_TEST

/* cm_pb_varint_size (from the top bit's place) is the length
 * cm_pb_varint_at writes, and 7 bits a byte, at every power of 2 and
 * beside it. */
START_TEST(varint_sizes)
{
	for (int k = 0; k < 64; k++)
		for (int d = -1; d <= 1; d++) {
			uint64_t v = (UINT64_C(1) << k) + (uint64_t)(int64_t)d, x = v;
			unsigned char p[10];
			size_t n = 1;
			while (x >= 0x80)
				x >>= 7, n++;
			ck_assert_uint_eq(cm_pb_varint_size(v), n);
			ck_assert_uint_eq(cm_pb_varint_at(p, v), n);
		}
	ck_assert_uint_eq(cm_pb_varint_size(0), 1);
	ck_assert_uint_eq(cm_pb_varint_size(UINT64_MAX), 10);
}
END_TEST

/* Fields: the key is (field << 3 | wire type); an int64 below 0 is its
 * two's complement in ten bytes; a double is its bits, little-endian. */
START_TEST(fields)
{
	cm_buf b = {0};
	static const unsigned char want[] = {
		0x08, 0x96, 0x01,                               /* 1: varint 150 */
		0x80, 0x01, 0x05,                               /* 16: varint 5 (a 2-byte key) */
		0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 4: int64 -1 */
		0x29, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f,             /* 5: double 1.0 */
		0x31, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* 6: fixed64 */
		0x12, 0x03, 'a', 'b', 'c',                      /* 2: bytes "abc" */
		0x1a, 0x00,                                     /* 3: empty bytes */
	};
	cm_pb_uint(&b, 1, 150);
	cm_pb_uint(&b, 16, 5);
	cm_pb_int(&b, 4, -1);
	cm_pb_double(&b, 5, 1.0);
	cm_pb_fixed64(&b, 6, UINT64_C(0x0102030405060708));
	cm_pb_bytes(&b, 2, "abc", 3);
	cm_pb_bytes(&b, 3, "", 0);
	ck_bytes(&b, want, sizeof want);
	cm_buf_free(&b);
}
END_TEST

/* A nested message of N bytes of body, inside another: the lengths are
 * those of the bodies, each in its shortest varint, the body intact. */
START_TEST(nested)
{
	size_t n = (size_t)_i;
	cm_buf b = {0};
	size_t outer, inner, i, pos = 0;
	uint64_t len;
	cm_buf_putc(&b, 0x55); /* something before */
	outer = cm_pb_open(&b, 1);
	cm_pb_uint(&b, 2, 1);
	inner = cm_pb_open(&b, 3);
	for (i = 0; i < n; i++)
		cm_buf_putc(&b, (char)(i * 7));
	cm_pb_close(&b, inner);
	cm_pb_close(&b, outer);
	/* read it back */
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x55);
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x0a); /* field 1, length-delimited */
	for (len = 0, i = 0;; i += 7) {
		unsigned char c = (unsigned char)b.p[pos++];
		len |= (uint64_t)(c & 0x7f) << i;
		if (c < 0x80)
			break;
	}
	ck_assert_uint_eq(len, b.len - pos);
	ck_assert_uint_eq(cm_pb_varint_size(len), pos - 2);
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x10);
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x01);
	ck_assert_uint_eq((unsigned char)b.p[pos++], 0x1a);
	{
		size_t start = pos;
		for (len = 0, i = 0;; i += 7) {
			unsigned char c = (unsigned char)b.p[pos++];
			len |= (uint64_t)(c & 0x7f) << i;
			if (c < 0x80)
				break;
		}
		ck_assert_uint_eq(len, n);
		ck_assert_uint_eq(pos - start, cm_pb_varint_size(n));
	}
	ck_assert_uint_eq(b.len - pos, n);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq((unsigned char)b.p[pos + i], (unsigned char)(i * 7));
	cm_buf_free(&b);
}
END_TEST

/* Microseconds as text to nanoseconds: the text's double times 1000,
 * exactly, to the nearest, a half to even. */
START_TEST(us_to_ns)
{
	static const struct {
		const char *s;
		int rc;
		int64_t ns;
	} cases[] = {
		{"0", 0, 0},
		{"1", 0, 1000},
		{"-2", 0, -2000},
		{"0.001", 0, 1},
		{"0.0004", 0, 0},
		{"0.0006", 0, 1},
		{"755.9649999999999", 0, 755965},  /* a float-rounded duration: the ns meant */
		{"5117762398366.4795", 0, 5117762398366479}, /* its double is ...4794921875 */
		{"5117762354211.8125", 0, 5117762354211812}, /* exactly a half: to even */
		{"5117762354211.8135", 0, 5117762354211813}, /* its double is ...8134765625 */
		{"1e3", 0, 1000000},
		{"0.0625", 0, 62},                 /* 62.5 ns exactly (1/16 us): to even */
		{"0.1875", 0, 188},                /* 187.5 ns exactly: to even */
		{"2.5e-3", 0, 3},                  /* its double is above 2.5 ns */
		{"9223372036854774", 0, INT64_C(9223372036854774000)},
		{"9223372036854776", -1, 0},       /* beyond int64 ns */
		{"1e400", -1, 0},
		{"NaN", -1, 0},
		{"Infinity", -1, 0},
		{"", -1, 0},
		{"12x", -1, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int64_t ns = 42;
		int rc = cm_pf_us_to_ns(cases[i].s, strlen(cases[i].s), &ns);
		ck_assert_msg(rc == cases[i].rc, "%s: rc %d", cases[i].s, rc);
		if (!rc)
			ck_assert_msg(ns == cases[i].ns, "%s: %lld, not %lld", cases[i].s, (long long)ns,
				      (long long)cases[i].ns);
	}
}
END_TEST

/* IP random integer digits at S + N (no leading zero unless IP is 1; a
 * third of the long ones start near 2^43 us: 8796093022208), drawn from
 * the xorshift state *RNG; returns the new length. */
static size_t put_int_digits(char *s, size_t n, int ip, uint64_t *rng)
{
	uint64_t r = *rng;
	if ((r >> 24) % 3 == 0 && ip >= 13) {
		memcpy(s + n, "879609302220", 12);
		n += 12;
		ip -= 12;
	}
	for (int k = 0; k < ip; k++) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		s[n++] = (char)('0' + (k || ip == 1 ? r % 10 : 1 + r % 9));
	}
	*rng = r;
	return n;
}

/* cm_pf_us_to_ns reads plain decimals itself (fast paths: the digits as
 * nanoseconds below 2^43 us, Clinger's division, a 128-bit division); it
 * must give what strtod's double gives, for random decimals of every
 * length and place of the point, near the paths' limits too. */
START_TEST(us_to_ns_decimals)
{
	uint64_t rng = 0x243F6A8885A308D3u;
	char s[64];
	for (int i = 0; i < 300000; i++) {
		size_t n = 0;
		int ip, fp, dot;
		int64_t a = 1, b = 2;
		int ra, rb;
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		ip = (int)(rng % 21);
		fp = (int)((rng >> 8) % 22);
		dot = (rng >> 16) % 8 != 0;
		if ((rng >> 20) % 4 == 0)
			s[n++] = '-';
		n = put_int_digits(s, n, ip, &rng);
		if (dot) {
			s[n++] = '.';
			for (int k = 0; k < fp; k++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				/* runs of 9s and 0s and halves, where rounding turns */
				s[n++] = (char)((rng >> 40) % 4 == 0 ? '9' : (rng >> 40) % 4 == 1 ? '0' : '0' + rng % 10);
			}
		}
		s[n] = 0;
		ra = cm_pf_us_to_ns(s, n, &a);
		rb = cm_pf_us_to_ns_strtod(s, n, &b);
		ck_assert_msg(ra == rb, "%s: rc %d, strtod's %d", s, ra, rb);
		if (!ra && a != b)
			ck_abort_msg("%s: %lld, strtod's %lld", s, (long long)a, (long long)b);
	}
}
END_TEST

/* pfparse.c's reading of an element is cm_jval_parse_py's tree, node for
 * node, or NULL where that is: on what it reads itself and on what it
 * leaves to it (escapes, NaN and Infinity, Python's number quirks, more
 * nodes than its array, text that is not JSON). */
START_TEST(element_parse)
{
	static const char *const texts[] = {
		"{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":5117756144365.792,\"dur\":1.5,\"args\":{\"a\":[1,-2,3e5,-0.5E-3,true,false,null,{}],\"b\":{\"c\":\"\"}}}",
		" {\n  \"ph\" : \"B\" ,\r\n\t\"ts\":0 , \"args\" : { } } \n",
		"{\"name\":\"a\\\"b\\u00e9\\ud83d\\ude00\",\"ph\":\"i\"}", /* escapes: the general parser's */
		"{\"k\\n\":1}",
		"{\"v\":NaN,\"w\":-Infinity,\"x\":Infinity}",
		"{\"v\":1.}", "{\"v\":01}", "{\"v\":1e}", "{\"v\":-}", "{\"v\":.5}", "{\"v\":1.5e+}",
		"{\"v\":tru}", "{\"v\":nul}", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":1", "{\"a\":\"x", "[1,2]", "\"s\"", "",
		"{\"a\":1} x", "{\"a\":\"tab\there\"}", "{\"a\":\"\x01\"}", "{\"\":0,\"\":1}",
		"{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}",
		"{\"long string value with no escape in it at all, past sixteen bytes\":\"0123456789abcdef0123456789abcdef\\\"\"}",
	};
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	cm_buf big = {0};
	size_t i;
	for (i = 0; i <= sizeof texts / sizeof *texts; i++) {
		const char *t;
		size_t n;
		const cm_jval *want, *got;
		if (i < sizeof texts / sizeof *texts) {
			t = texts[i];
		} else { /* 2,000 nodes: more than the array's first 256 */
			cm_buf_lit(&big, "{\"args\":[");
			for (int k = 0; k < 2000; k++)
				cm_buf_lit(&big, "7,");
			cm_buf_lit(&big, "8]}");
			cm_buf_putc(&big, 0);
			t = big.p;
		}
		n = strlen(t);
		cm_arena_reset(a);
		want = cm_jval_parse_py(a, t, n);
		for (int twice = 0; twice < 2; twice++) { /* the array grows after the first */
			got = cm_pf_parse(w, t, n);
			ck_assert_msg(check_same_tree(want, got), "not the general parser's tree: %s", t);
		}
	}
	cm_buf_free(&big);
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

/* The compact reading (cm_pf_parse_flat) fills the members the tree's
 * cm_pf_members finds, the same nodes and values, where it reads an
 * element; it reads an object without escapes (spaces and nested values
 * too: check_pfparse.c has more) and leaves the rest. */
START_TEST(element_flat)
{
	static const struct {
		const char *t;
		int flat;
	} cases[] = {
		{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":7,\"ts\":5117756144328.248,\"dur\":49.984,"
		 "\"args\":{\"device\":1,\"context\":2,\"stream\":7,\"correlation\":50}}", 1},
		{"{\"ph\":\"f\",\"id\":50,\"pid\":1,\"tid\":7,\"ts\":5117756144328.248,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}", 1},
		{"{\"ph\":\"X\",\"name\":\"a\",\"name\":\"b\",\"args\":{},\"x\":{\"y\":null},\"ts\":-0,\"dur\":1e3,\"s\":true}", 1},
		{"{\"ph\":\"X\",\"args\":{\"a\":12345678901234567890,\"b\":-0.5,\"c\":1.2345,\"a\":\"x\"}}", 1},
		{"{\"ph\":\"X\",\"args\":{\"a\":[1]}}", 1},
		{"{\"ph\":\"X\",\"args\":{\"a\":{\"b\":1}}}", 1},
		{"{\"ph\": \"X\"}", 1},
		{"{\"ph\":\"X\"} ", 0},
		{"{\"p\\u0068\":\"X\"}", 0},
		{"{\"ph\":\"a\\\"b\"}", 0},
		{"{\"ph\":\"X\",}", 0},
		{"{\"ph\":01}", 0},
		{"{}", 1},
		{"[1]", 0},
	};
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	enum { NM = sizeof(struct ev) / sizeof(const cm_jval *) };
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *t = cases[i].t;
		size_t n = strlen(t);
		struct ev got, want;
		const cm_jval **g = (const cm_jval **)&got, **x = (const cm_jval **)&want, *tree;
		unsigned char has[NM];
		int64_t iv[NM];
		int flat = cm_pf_parse_flat(w, t, n, &got);
		ck_assert_msg(flat == cases[i].flat, "read compact %d, not %d: %s", flat, cases[i].flat, t);
		if (!flat)
			continue;
		/* the general parser's tree: the same members, text for text */
		cm_arena_reset(a);
		tree = cm_jval_parse_py(a, t, n);
		ck_assert(tree && tree->type == CM_J_OBJ);
		cm_pf_members(tree, &want);
		for (size_t k = 0; k < NM; k++) {
			ck_assert_msg(check_same_tree(g[k], x[k]), "member %zu not the tree's: %s", k, t);
			has[k] = g[k] ? g[k]->has_iv : 0;
			iv[k] = g[k] ? g[k]->iv : 0;
		}
		/* and the values pfparse.c's own tree keeps (it takes the nodes) */
		tree = cm_pf_parse(w, t, n);
		ck_assert(tree && tree->type == CM_J_OBJ);
		cm_pf_members(tree, &want);
		for (size_t k = 0; k < NM; k++)
			ck_assert_msg(!x[k] || (x[k]->has_iv == has[k] && (!has[k] || x[k]->iv == iv[k])),
				      "member %zu's value not the tree's: %s", k, t);
	}
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

/* A number's value kept as it is parsed (pfparse.c, has_iv) is what its
 * text's readers make of it: an integer's small_int / cm_py_int_of_number
 * value, a time's cm_pf_us_to_ns; for random numbers of every shape. */
START_TEST(number_values)
{
	uint64_t rng = 0x13198A2E03707344u;
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	char s[80];
	int ints = 0, nss = 0;
	for (int i = 0; i < 200000; i++) {
		size_t n = 0;
		int ip, fp, shape;
		const cm_jval *v;
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		ip = 1 + (int)(rng % 21);
		fp = (int)((rng >> 8) % 6);
		shape = (int)((rng >> 16) % 4); /* 0: an integer, 1: a decimal, 2: with an exponent, 3: 0.x */
		n += (size_t)snprintf(s, sizeof s, "{\"v\":");
		if ((rng >> 20) % 3 == 0)
			s[n++] = '-';
		if (shape == 3) {
			s[n++] = '0';
		} else {
			n = put_int_digits(s, n, ip, &rng);
		}
		if (shape != 0) {
			s[n++] = '.';
			for (int k = 0; k < fp + 1; k++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				s[n++] = (char)('0' + rng % 10);
			}
		}
		if (shape == 2)
			n += (size_t)snprintf(s + n, sizeof s - n, "e%d", (int)(rng % 5));
		s[n++] = '}';
		s[n] = 0;
		v = cm_pf_parse(w, s, n);
		ck_assert_msg(v && v->kids && v->kids->type == CM_J_NUM, "%s", s);
		v = v->kids;
		if (v->has_iv == CM_PF_IV_INT) {
			cm_int x;
			ints++;
			ck_assert_msg(!cm_py_int_of_number(v->s, v->len, &x) && x == v->iv, "%s: %lld", s, (long long)v->iv);
		} else if (v->has_iv == CM_PF_IV_NS) {
			int64_t ns;
			nss++;
			ck_assert_msg(!cm_pf_us_to_ns(v->s, v->len, &ns) && ns == v->iv, "%s: %lld ns", s, (long long)v->iv);
		} else {
			ck_assert_int_eq(v->has_iv, 0);
		}
	}
	ck_assert(ints > 10000 && nss > 10000);
	cm_pfev_free(w);
}
END_TEST

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

/* Lanes: a slice goes to a second lane only when the first would pair a
 * begin or end of it with another slice's. */
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

START_TEST(lanes)
{
	cm_pflanes *l = cm_pflanes_new();
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 100, 200), 0);
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 100, 150), 0); /* shorter after longer: fine */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 100, 300), 1); /* longer after shorter: clash */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 100, 400), 2); /* clashes on 0 and 1 */
	ck_assert_uint_eq(cm_pflanes_place(l, 8, 100, 300), 0); /* another thread */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 50, 100), 3);  /* ends where lanes 0-2 begin */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 300, 300), 0); /* zero duration: never */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 200, 250), 0); /* begins where one ends: fine */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 180, 260), 1); /* over the end of [100, 200] */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 110, 140), 0); /* inside [100, 150] */
	ck_assert_uint_eq(cm_pflanes_place(l, 7, 90, 180), 4);  /* over the begin of ones on 0-3 */
	cm_pflanes_free(l);
}
END_TEST

/* Slices in random order (or in the order of their begins), with ties and overlaps, on a few threads: on each
 * lane the trace processor's pairing (packets sorted by time, ties in file
 * order, an end closing the innermost open slice) closes each slice at
 * its own end's time; and each slice goes on the first lane where that holds,
 * found by looking at every slice placed before it.  Enough slices for the
 * lanes' nodes to be placed again (rebuilt) a few times; the last loops
 * move them along over three times the window of trace time, so that old
 * ones are forgotten. */
#define NLANES_RAND 3000
struct placed {
	int64_t b, e;
	unsigned thread, lane, i;
};

static int by_time(const void *x, const void *y)
{
	const int64_t *a = x, *b = y; /* time, file order */
	return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : (a[1] < b[1] ? -1 : a[1] > b[1]);
}

START_TEST(lanes_random)
{
	static struct placed p[NLANES_RAND];
	static int64_t pk[2 * NLANES_RAND][3], stack[NLANES_RAND];
	cm_pflanes *l = cm_pflanes_new();
	uint64_t r = 0x1234567u + (uint64_t)_i * 7919u;
	/* ns; the last loops: 1 ms a step, from 10 ms later each slice, over
	 * 30 s in all (three times the window).  Loops 8 to 15 do the same
	 * with the begins in order (pflanes.c's in-order lanes), ties often;
	 * the odd ones go back in time now and then (a lane leaves that mode) */
	int sorted = _i >= 8, k = _i % 8;
	int64_t span = 300, scale = k < 6 ? 1 : 1000000, step = k < 6 ? 0 : 10, at = 0;
	unsigned i, j, lane, maxlane = 0;
	for (i = 0; i < NLANES_RAND; i++) {
		int64_t b, e;
		r = r * 6364136223846793005u + 1442695040888963407u;
		if (sorted) {
			at += (int64_t)((r >> 20) % 4);
			b = (at + step * i) * scale;
			if (k % 2 && i % 500 == 499)
				b -= (int64_t)((r >> 30) % 100) * scale;
		} else {
			b = ((int64_t)((r >> 20) % (uint64_t)span) + step * i) * scale;
		}
		e = b + (int64_t)((r >> 45) % 40 < 3 ? 0 : (r >> 40) % 60) * scale;
		p[i].b = b, p[i].e = e, p[i].thread = (unsigned)(r >> 60) % 3 + 1, p[i].i = i;
		p[i].lane = cm_pflanes_place(l, p[i].thread, b, e);
		if (e > b) { /* the first lane without a clash, by looking at all */
			for (lane = 0;; lane++) {
				for (j = 0; j < i; j++) {
					const struct placed *q = &p[j];
					if (q->thread != p[i].thread || q->lane != lane || q->e == q->b)
						continue;
					if ((q->b == b && q->e < e) || (q->b > b && q->b <= e && q->e > e) ||
					    (q->b < b && q->e > b && q->e < e))
						break;
				}
				if (j == i)
					break;
			}
			ck_assert_uint_eq(p[i].lane, lane);
		}
		if (p[i].lane > maxlane)
			maxlane = p[i].lane;
	}
	ck_assert_uint_gt(maxlane, 2);
	for (unsigned t = 1; t <= 3; t++)
		for (lane = 0; lane <= maxlane; lane++) {
			size_t n = 0, depth = 0, x;
			for (i = 0; i < NLANES_RAND; i++)
				if (p[i].thread == t && p[i].lane == lane) { /* begin, then its end next in the file */
					pk[n][0] = p[i].b, pk[n][1] = 2 * (int64_t)i, pk[n++][2] = i;
					pk[n][0] = p[i].e, pk[n][1] = 2 * (int64_t)i + 1, pk[n++][2] = -1 - (int64_t)i;
				}
			qsort(pk, n, sizeof *pk, by_time);
			for (x = 0; x < n; x++)
				if (pk[x][2] >= 0) {
					stack[depth++] = pk[x][2];
				} else {
					/* the end closes a slice that ends then: its own,
					 * or one that ends with it (ends carry nothing else) */
					ck_assert_uint_gt(depth, 0);
					ck_assert_int_eq(p[stack[--depth]].e, pk[x][0]);
				}
		}
	cm_pflanes_free(l);
}
END_TEST

/* The lanes' append (pflanes.c): a lane out of the in-order mode (a slice
 * went back in time) whose next slices begin at or after the end of all of
 * its slices, as a stream row's kernels do, one after another, but for an
 * overlap (a sync over a memcpy's end), a tie or a slice back in time now and
 * then: each slice on the first lane without a clash, found by looking at
 * every slice placed before it, and the append taken for most of them.
 * Loops: how often a slice goes back (1 in 4 to 1 in 64), with the times in
 * ns on three threads, or in steps of 7.5 ms on one (over 25 times the
 * window: the nodes placed again, old slices forgotten, which could not
 * clash any more). */
#define NLANES_APPEND 4000
START_TEST(lanes_append)
{
	static struct placed p[NLANES_APPEND];
	cm_pflanes *l = cm_pflanes_new();
	uint64_t r = 0x9E3779B9u + (uint64_t)_i * 104729u;
	int64_t at[4] = {0, 0, 0, 0}, scale = _i % 2 ? 7500000 : 1;
	unsigned i, j, lane, back = 4u << (_i / 2), maxlane = 0;
	for (i = 0; i < NLANES_APPEND; i++) {
		unsigned t;
		int64_t b, e, d;
		r = r * 6364136223846793005u + 1442695040888963407u;
		/* one thread over the window (the window follows the latest
		 * begin of all threads: one far behind would lose slices that
		 * can still clash) */
		t = scale > 1 ? 1 : (unsigned)(r >> 62) % 3 + 1;
		d = (int64_t)((r >> 20) % 50) + 1;
		switch ((unsigned)(r >> 30) % back) {
		case 0: /* back in time, into what is placed */
			b = at[t] - (int64_t)((r >> 40) % 200);
			break;
		case 1: /* over the end of the one before */
			b = at[t] - (int64_t)((r >> 40) % 3);
			break;
		default: /* after it, or where it ends */
			b = at[t] + (int64_t)((r >> 40) % 4);
			break;
		}
		e = b + d;
		if (e > at[t])
			at[t] = e;
		p[i].b = b * scale, p[i].e = e * scale, p[i].thread = t, p[i].i = i;
		p[i].lane = cm_pflanes_place(l, t, p[i].b, p[i].e);
		for (lane = 0;; lane++) { /* the first lane without a clash, by looking at all */
			for (j = 0; j < i; j++) {
				const struct placed *q = &p[j];
				if (q->thread != t || q->lane != lane)
					continue;
				if ((q->b == p[i].b && q->e < p[i].e) || (q->b > p[i].b && q->b <= p[i].e && q->e > p[i].e) ||
				    (q->b < p[i].b && q->e > p[i].b && q->e < p[i].e))
					break;
			}
			if (j == i)
				break;
		}
		ck_assert_uint_eq(p[i].lane, lane);
		if (lane > maxlane)
			maxlane = lane;
	}
	ck_assert_uint_gt(maxlane, 0);
	ck_assert_uint_gt(cm_pflanes_appends(l), NLANES_APPEND / 4); /* the append taken */
	cm_pflanes_free(l);
}
END_TEST

/* A pid or tid of number text or a string, for cm_pflaneq_key. */
static cm_jval jv(int type, const char *s)
{
	cm_jval v;
	memset(&v, 0, sizeof v);
	v.type = (unsigned char)type;
	v.s = s;
	v.len = (uint32_t)strlen(s);
	return v;
}

static uint64_t key_of(int pt, const char *p, int tt, const char *t)
{
	cm_jval pv = jv(pt, p), tv = jv(tt, t);
	return cm_pflaneq_key(&pv, &tv);
}

/* The lanes' thread keys: the events of one thread track (pftrack.c's
 * cm_pf_id: a float cut to its integer part, a pid outside 0..2^32-1 or
 * missing, bool or null is 0, a tid 0, outside it, missing, bool or null
 * is the pid shown, a tid of the pid's string too) have one key, so that
 * their slices share their lanes. */
START_TEST(laneq_keys)
{
	const int N = CM_J_NUM, S = CM_J_STR;
	cm_jval pv = jv(N, "3"), tv = jv(CM_J_TRUE, "");
	ck_assert_uint_eq(key_of(N, "3", N, "5000000000"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3", N, "-1"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "-1", N, "7"), key_of(N, "0", N, "7"));
	ck_assert_uint_eq(key_of(N, "99999999999999999999", N, "7"), key_of(N, "0", N, "7"));
	ck_assert_uint_eq(key_of(N, "3", N, "0"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(S, "Spans", N, "0"), key_of(S, "Spans", N, "-4"));
	/* floats, and no tid at all */
	ck_assert_uint_eq(key_of(N, "3", N, "0.0"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3", N, "-0.5"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3", N, "1e300"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3", N, "4294967296.0"), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(key_of(N, "3.9", N, "7.5"), key_of(N, "3", N, "7"));
	ck_assert_uint_eq(key_of(N, "3", N, "0.7e1"), key_of(N, "3", N, "7"));
	ck_assert_uint_eq(key_of(N, "-2.5", N, "7"), key_of(N, "0", N, "7"));
	ck_assert_uint_eq(cm_pflaneq_key(&pv, NULL), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(cm_pflaneq_key(&pv, &tv), key_of(N, "3", N, "3"));
	ck_assert_uint_eq(cm_pflaneq_key(NULL, &tv), key_of(N, "0", N, "0"));
	/* a string, "" too, is a number of its own, and a tid of the pid's
	 * string its main thread */
	ck_assert_uint_eq(key_of(S, "", S, ""), key_of(S, "", N, "0"));
	ck_assert_uint_eq(key_of(S, "Spans", S, "Spans"), key_of(S, "Spans", N, "0"));
	ck_assert_uint_ne(key_of(S, "", N, "7"), key_of(N, "0", N, "7"));
	/* a string pid: a tid outside is its number shown, from 0x7fff0000 */
	ck_assert_uint_eq(key_of(S, "Spans", N, "-4"), key_of(S, "Spans", N, "2147418113"));
	ck_assert_uint_eq(key_of(S, "Spans", S, "x"), key_of(S, "Spans", S, "x"));
	/* others apart (not needed, but a key a thread spreads them) */
	ck_assert_uint_ne(key_of(N, "3", N, "4"), key_of(N, "4", N, "3"));
	ck_assert_uint_ne(key_of(S, "Spans", N, "1"), key_of(S, "Traces", N, "1"));
	ck_assert_uint_ne(key_of(S, "Spans", N, "-4"), key_of(S, "Spans", N, "4"));
	ck_assert_uint_ne(key_of(N, "1", N, "2"), key_of(N, "1", N, "3"));
}
END_TEST

/* cm_pflaneq_key_ints (pfbatch.c's, of integers read once): the key that
 * cm_pflaneq_key gives their text, in and out of 1..2^32-1. */
START_TEST(laneq_key_ints)
{
	static const char *const ids[] = {"0",		"1",	      "3",	      "-1",	"-4",
					  "4294967295", "4294967296", "5000000000", "2147418113",
					  "-9000000000", "123456789012345678"};
	const size_t n = sizeof ids / sizeof *ids;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n; k++)
			ck_assert_uint_eq(cm_pflaneq_key_ints(strtoll(ids[i], NULL, 10), strtoll(ids[k], NULL, 10)),
					  key_of(CM_J_NUM, ids[i], CM_J_NUM, ids[k]));
}
END_TEST

/* The lanes placed through the queue (pflaneq.c), batches put from four
 * threads in any order, give each slice the lane that placing them all
 * in batch order, each shard apart, gives. */
#define LQ_BATCHES 200
#define LQ_SLICES 60
#define LQ_SLOTS 8
struct lq_test {
	cm_pflaneq *q;
	struct cm_pflaneq_job jobs[LQ_BATCHES][LQ_SLICES];
	uint32_t start[LQ_BATCHES][CM_PF_SHARDS + 1];
	int next; /* the next batch to put (under mu) */
	int order[LQ_BATCHES];
	int put[LQ_BATCHES]; /* put (atomic) */
	int waited;          /* batches the sink-like loop has waited for (atomic) */
	pthread_mutex_t mu;
};

/* A short wait (not sched_yield: on a loaded machine the spinning
 * threads kept the ones they waited for off the CPUs). */
static void lq_nap(void)
{
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
}

static void *lq_putter(void *arg)
{
	struct lq_test *t = arg;
	for (;;) {
		int b;
		pthread_mutex_lock(&t->mu);
		b = t->next < LQ_BATCHES ? t->order[t->next++] : -1;
		pthread_mutex_unlock(&t->mu);
		if (b < 0)
			return NULL;
		/* at most LQ_SLOTS batches in flight, as the pool holds */
		while (b >= __atomic_load_n(&t->waited, __ATOMIC_ACQUIRE) + LQ_SLOTS)
			lq_nap();
		cm_pflaneq_put(t->q, (uint64_t)b, t->jobs[b], t->start[b]);
		__atomic_store_n(&t->put[b], 1, __ATOMIC_RELEASE);
	}
}

START_TEST(laneq_order)
{
	static struct lq_test t;
	static struct cm_pflaneq_job flat[LQ_BATCHES][LQ_SLICES];
	cm_pflanes *ref[CM_PF_SHARDS];
	pthread_t th[4];
	uint64_t r = 0x9e3779b9u + (uint64_t)_i;
	int b, k, s, i;
	memset(&t, 0, sizeof t);
	pthread_mutex_init(&t.mu, NULL);
	t.q = cm_pflaneq_new(LQ_SLOTS); /* its ring goes round many times */
	for (b = 0; b < LQ_BATCHES; b++) {
		uint32_t at[CM_PF_SHARDS];
		for (k = 0; k < LQ_SLICES; k++) { /* nested, overlapping and tied slices on 6 threads */
			r = r * 6364136223846793005u + 1442695040888963407u;
			flat[b][k].key = 1000 + (r >> 61) % 6;
			flat[b][k].b = b * 50 + (int64_t)((r >> 20) % 80);
			flat[b][k].e = flat[b][k].b + 1 + (int64_t)((r >> 40) % 40);
			flat[b][k].idx = (uint32_t)k;
		}
		memset(t.start[b], 0, sizeof t.start[b]);
		for (k = 0; k < LQ_SLICES; k++)
			t.start[b][cm_pflaneq_shard(flat[b][k].key) + 1]++;
		for (s = 0; s < CM_PF_SHARDS; s++)
			t.start[b][s + 1] += t.start[b][s], at[s] = t.start[b][s];
		for (k = 0; k < LQ_SLICES; k++)
			t.jobs[b][at[cm_pflaneq_shard(flat[b][k].key)]++] = flat[b][k];
		t.order[b] = b;
	}
	/* each four batches in a shuffled order: out of order often, but
	 * within the slots (or the putters would wait for each other) */
	for (b = 0; b + 4 <= LQ_BATCHES; b += 4)
		for (k = 3; k > 0; k--) {
			int o = (int)((r = r * 6364136223846793005u + 1) >> 33) % (k + 1), x = t.order[b + k];
			t.order[b + k] = t.order[b + o], t.order[b + o] = x;
		}
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, lq_putter, &t), 0);
	/* the sequential part's waits, as the sink's: batch B once every
	 * batch up to it is put */
	for (b = 0; b < LQ_BATCHES; b++) {
		while (!__atomic_load_n(&t.put[b], __ATOMIC_ACQUIRE))
			lq_nap();
		cm_pflaneq_wait(t.q, (uint64_t)b);
		__atomic_store_n(&t.waited, b + 1, __ATOMIC_RELEASE);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (s = 0; s < CM_PF_SHARDS; s++)
		ref[s] = cm_pflanes_new();
	for (b = 0; b < LQ_BATCHES; b++)
		for (k = 0; k < LQ_SLICES; k++) {
			unsigned want = cm_pflanes_place(ref[cm_pflaneq_shard(flat[b][k].key)], flat[b][k].key, flat[b][k].b,
							 flat[b][k].e);
			for (i = 0; i < LQ_SLICES && t.jobs[b][i].idx != (uint32_t)k; i++)
				;
			ck_assert_int_lt(i, LQ_SLICES);
			ck_assert_uint_eq(t.jobs[b][i].lane, want);
		}
	for (s = 0; s < CM_PF_SHARDS; s++)
		cm_pflanes_free(ref[s]);
	cm_pflaneq_free(t.q);
	pthread_mutex_destroy(&t.mu);
}
END_TEST

/* The transcoder's sink: collect the bytes. */
static int collect(void *ctx, const void *p, size_t n)
{
	cm_buf_put(ctx, p, n);
	return 0;
}

/* Transcode DOC, fed in pieces of STEP bytes, into OUT on THREADS threads
 * (the workers, and from 2 the passer); the finish's rc. */
static int transcode_threads(const char *doc, size_t step, int threads, cm_buf *out)
{
	cm_pft *t = cm_pft_new(collect, out, "<test>");
	size_t n = strlen(doc), i;
	int rc = 0;
	cm_pft_threads(t, threads);
	for (i = 0; i < n && !rc; i += step)
		rc = cm_pft_write(t, doc + i, n - i < step ? n - i : step);
	if (!rc)
		rc = cm_pft_finish(t);
	cm_pft_free(t);
	return rc;
}

/* transcode_threads' on one thread, the transcoder's default. */
static int transcode(const char *doc, size_t step, cm_buf *out)
{
	return transcode_threads(doc, step, 1, out);
}

/* The passer's share (pfseg.c): a batch's packets written by the
 * sequential part (when the passer's queue is full; here every other
 * batch, CUPTIMERGE_PFT_SHARE_ALTERNATE) come out where the passer would
 * have put them: the bytes of one thread, with batches of 300 bytes of
 * text (some 500 of them), slices with args, ties, zero durations, flows
 * and held-back ends across the batches' edges; and with the passer alone
 * (CUPTIMERGE_PFT_PASSER_ONLY). */
START_TEST(passer_share)
{
	cm_buf doc = {0}, one = {0}, shared = {0}, passer = {0};
	uint64_t r = 0x5EED;
	cm_buf_lit(&doc, "{\"traceEvents\":[");
	for (int i = 0; i < 1500; i++) {
		char ev[256];
		int n;
		r = r * 6364136223846793005u + 1442695040888963407u;
		n = snprintf(ev, sizeof ev,
			     "%s{\"ph\":\"X\",\"name\":\"k%d\",\"cat\":\"c\",\"pid\":1,\"tid\":%d,\"ts\":%d.%03d,"
			     "\"dur\":%d,\"args\":{\"i\":%d}}",
			     i ? "," : "", (int)(r >> 60), (int)((r >> 58) % 3) + 1, 1000 + i / 2, (int)((r >> 20) % 1000),
			     (int)((r >> 40) % 4), i);
		cm_buf_put(&doc, ev, (size_t)n);
		if (i % 5 == 0) {
			n = snprintf(ev, sizeof ev,
				     ",{\"ph\":\"s\",\"id\":%d,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"pid\":1,\"tid\":%d,"
				     "\"ts\":%d.%03d}",
				     i, (int)((r >> 58) % 3) + 1, 1000 + i / 2, (int)((r >> 20) % 1000));
			cm_buf_put(&doc, ev, (size_t)n);
		}
	}
	cm_buf_lit(&doc, "]}");
	cm_buf_putc(&doc, 0);
	setenv("CUPTIMERGE_PFT_BATCH", "300", 1);
	ck_assert_int_eq(transcode_threads(doc.p, 4096, 1, &one), 0);
	setenv("CUPTIMERGE_PFT_SHARE_ALTERNATE", "1", 1);
	ck_assert_int_eq(transcode_threads(doc.p, 4096, 3, &shared), 0);
	unsetenv("CUPTIMERGE_PFT_SHARE_ALTERNATE");
	setenv("CUPTIMERGE_PFT_PASSER_ONLY", "1", 1);
	ck_assert_int_eq(transcode_threads(doc.p, 4096, 3, &passer), 0);
	unsetenv("CUPTIMERGE_PFT_PASSER_ONLY");
	unsetenv("CUPTIMERGE_PFT_BATCH");
	ck_assert_uint_gt(one.len, 30000);
	ck_bytes(&shared, one.p, one.len);
	ck_bytes(&passer, one.p, one.len);
	cm_buf_free(&doc);
	cm_buf_free(&one);
	cm_buf_free(&shared);
	cm_buf_free(&passer);
}
END_TEST

/* The document cut anywhere gives the same bytes; other members are
 * skipped, whatever their values; a key with escapes is still found. */
START_TEST(stream)
{
	static const char doc[] = " {\"a\":[1,{\"traceEvents\":2}],\"n\":-1.5e3,\"s\":\"x]}\\\"\",\"traceEvents\":["
				  "{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":1.5,\"dur\":2,"
				  "\"args\":{\"a.b\":[1,\"t\"],\"c\":null}},"
				  "{\"ph\":\"s\",\"id\":7,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"pid\":1,\"tid\":2,\"ts\":1.5}"
				  " ] , \"z\":true}\n";
	cm_buf whole = {0}, esc = {0};
	size_t step;
	ck_assert_int_eq(transcode(doc, sizeof doc, &whole), 0);
	ck_assert_uint_gt(whole.len, 40);
	for (step = 1; step <= 31; step++) {
		cm_buf b = {0};
		ck_assert_int_eq(transcode(doc, step, &b), 0);
		ck_bytes(&b, whole.p, whole.len);
		cm_buf_free(&b);
	}
	{
		/* the same with the key written \u0074raceEvents */
		/* room for the 5 more bytes of the escape */
		char *d = memcpy(malloc(sizeof doc + 5), doc, sizeof doc), *k = strstr(d, "\"traceEvents\":[");
		cm_buf want = {0};
		memmove(k + 6, k + 1, strlen(k + 1) + 1);
		memcpy(k + 1, "\\u0074", 6);
		ck_assert_int_eq(transcode(d, 3, &esc), 0);
		ck_bytes(&esc, whole.p, whole.len);
		cm_buf_free(&want);
		free(d);
	}
	cm_buf_free(&whole);
	cm_buf_free(&esc);
}
END_TEST

/* A document that stops short, or an event the format cannot hold, is
 * an error (reported). */
START_TEST(stream_errors)
{
	cm_buf b = {0};
	cm_diag_set_quiet(1);
	ck_assert_int_eq(transcode("{\"traceEvents\":[{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":1}", 4, &b), -1);
	ck_assert_int_eq(transcode("{\"traceEvents\":[{\"ph\":\"P\",\"pid\":1,\"tid\":1,\"ts\":1}]}", 4, &b), -1);
	ck_assert_int_eq(transcode("[]", 1, &b), -1);
	ck_assert_int_eq(transcode("{\"traceEvents\":{}}", 1, &b), -1);
	ck_assert_int_eq(transcode("{} x", 1, &b), -1);
	ck_assert_int_eq(transcode("{}", 1, &b), 0);
	cm_buf_free(&b);
}
END_TEST

/* DOC with every "@" replaced by LIT, in B (a string). */
static void with_literal(cm_buf *b, const char *doc, const char *lit)
{
	b->len = 0;
	for (; *doc; doc++)
		if (*doc == '@')
			cm_buf_puts(b, lit);
		else
			cm_buf_putc(b, *doc);
	cm_buf_putc(b, 0);
}

/* Python's literals NaN, Infinity and -Infinity, which Perfetto's JSON
 * import (v55.3) cannot read, as it cannot read 1e400: an arg or a "C"
 * event's value ends the event's args (values) there, in an object and
 * an array too, the same bytes as 1e400 there (tests/e2e/pffuzz.sh checks
 * those against the JSON import); a ts, a dur or another member of the
 * event is refused in one line that names it (the import refuses the
 * whole trace). */
START_TEST(python_literals)
{
	static const char doc[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":5,\"args\":{\"k\":1,\"n\":@,\"z\":2}},"
		"{\"ph\":\"X\",\"name\":\"b\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,"
		"\"args\":{\"o\":{\"x\":2.5,\"y\":@,\"w\":3},\"z\":2}},"
		"{\"ph\":\"X\",\"name\":\"b\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,"
		"\"args\":{\"a\":[1,@,2],\"z\":2}},"
		"{\"ph\":\"i\",\"s\":\"t\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":3,\"args\":{\"k\":4,\"u\":1.5,\"t\":@}},"
		"{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":4,\"args\":{\"a\":1,\"b\":@,\"c\":3}},"
		"{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":5,\"args\":{\"a\":@,\"b\":2}},"
		"{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":6,\"args\":{\"a\":7,\"b\":8}}"
		"]}";
	static const char *const lits[] = {"NaN", "Infinity", "-Infinity"};
	static const char *const times[] = {
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":@,\"dur\":5}]}",
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":@}]}",
		"{\"traceEvents\":[{\"ph\":\"i\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":@}]}",
		"{\"traceEvents\":[{\"ph\":\"C\",\"name\":\"a\",\"pid\":1,\"ts\":@,\"args\":{\"v\":1}}]}",
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"id\":@}]}",
	};
	static const char *const what[] = {"\"X\" event whose ts", "\"X\" event whose dur", "\"i\" event whose ts",
					   "\"C\" event whose ts", "\"X\" event whose id"};
	cm_buf text = {0}, want = {0}, got = {0};
	char err[512], line[256];
	size_t i, j;
	with_literal(&text, doc, "1e400");
	ck_assert_int_eq(transcode(text.p, 4096, &want), 0);
	for (i = 0; i < 3; i++) {
		with_literal(&text, doc, lits[i]);
		for (j = 1; j <= 3; j += 2) { /* (one thread and three) */
			got.len = 0;
			ck_assert_int_eq(transcode_threads(text.p, 7, (int)j, &got), 0);
			ck_bytes(&got, want.p, want.len);
		}
	}
	for (i = 0; i < 3; i++)
		for (j = 0; j < sizeof times / sizeof *times; j++) {
			FILE *f = tmpfile();
			int saved = dup(2);
			size_t n;
			ck_assert_ptr_nonnull(f);
			fflush(stderr);
			dup2(fileno(f), 2);
			with_literal(&text, times[j], lits[i]);
			got.len = 0;
			ck_assert_int_eq(transcode(text.p, 4096, &got), -1);
			fflush(stderr);
			dup2(saved, 2);
			close(saved);
			rewind(f);
			n = fread(err, 1, sizeof err - 1, f);
			fclose(f);
			err[n] = 0;
			snprintf(line, sizeof line,
				 "cuptimerge: <test>:16: a %s is %s cannot be written as Perfetto protobuf (Perfetto refuses the trace)\n",
				 what[j], lits[i]);
			ck_assert_str_eq(err, line);
		}
	cm_buf_free(&text);
	cm_buf_free(&want);
	cm_buf_free(&got);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pbwrite");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, varints);
	tcase_add_test(tc, varint_sizes);
	tcase_add_test(tc, fields);
	tcase_add_loop_test(tc, nested, 0, 300);
	tcase_add_test(tc, us_to_ns);
	tcase_add_test(tc, us_to_ns_decimals);
	tcase_add_test(tc, element_parse);
	tcase_add_test(tc, element_flat);
	tcase_add_test(tc, number_values);
	tcase_add_test(tc, strtab);
	tcase_add_loop_test(tc, strtab_cache, 0, 4);
	tcase_add_test(tc, lanes);
	tcase_add_loop_test(tc, lanes_random, 0, 16);
	tcase_add_loop_test(tc, lanes_append, 0, 10);
	tcase_add_test(tc, laneq_keys);
	tcase_add_test(tc, laneq_key_ints);
	tcase_add_loop_test(tc, laneq_order, 0, 8);
	tcase_add_test(tc, stream);
	tcase_add_test(tc, passer_share);
	tcase_add_test(tc, stream_errors);
	tcase_add_test(tc, python_literals);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
