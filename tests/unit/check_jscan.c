/* check_jscan.c - the value scanner (json/jscan.h) finds where each value
 * ends, whatever the chunk boundaries: generated values whose lengths the
 * generator knows (strings full of brackets, escaped quotes and backslashes
 * at every offset of a 16-byte block, nesting, numbers, literals), fed at
 * chunk sizes 1..40, 4096 and whole; and long values with rare escapes,
 * whose 64-byte blocks the SIMD paths take whole, at sizes around 64; and the
 * control-byte test (cm_jscan_has_ctl).  Built three times: as the
 * library runs it (AVX2 blocks where the CPU has them), on the SSE2 path (CM_JSCAN_NO_AVX2) and on
 * the portable byte loop (CM_JSCAN_NO_SIMD). */
#include "config.h"
#include "check_common.h"
#include "json/jscan.h"

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

struct doc {
	char *p;
	size_t len, cap;
	size_t *ends; /* just past each top-level value */
	size_t n, ncap;
};

static void put(struct doc *d, const char *s, size_t n)
{
	if (d->len + n > d->cap) {
		d->cap = 2 * (d->len + n);
		d->p = realloc(d->p, d->cap);
	}
	memcpy(d->p + d->len, s, n);
	d->len += n;
}
static void putc1(struct doc *d, char c) { put(d, &c, 1); }

/* A string: plain bytes, brackets, commas, and escapes at random places
 * (an escaped backslash right before the closing quote among them). */
static unsigned esc_one_in = 6; /* a byte of a string is an escape one time in this */
static unsigned members_max = 6;

static void gen_string(struct doc *d)
{
	static const char plain[] = "abcXYZ019 {}[],:-_./";
	static const char *esc[] = {"\\\"", "\\\\", "\\n", "\\u00e9", "\\/", "\\\\\\\""};
	unsigned n = rnd(40);
	putc1(d, '"');
	for (unsigned i = 0; i < n; i++) {
		if (rnd(esc_one_in) == 0) {
			const char *e = esc[rnd(6)];
			put(d, e, strlen(e));
		} else {
			putc1(d, plain[rnd(sizeof plain - 1)]);
		}
	}
	putc1(d, '"');
}

static void gen_value(struct doc *d, int depth);

/* A value of kind K: 0 a string, 1 a number or literal, 2 an object, 3 an
 * array. */
static void gen_kind(struct doc *d, int depth, unsigned k)
{
	static const char *scal[] = {"0", "-12.5e3", "true", "false", "null", "1234567890123"};
	if (k == 0) {
		gen_string(d);
	} else if (k == 1) {
		const char *s = scal[rnd(6)];
		put(d, s, strlen(s));
	} else {
		unsigned n = rnd(members_max);
		putc1(d, k == 2 ? '{' : '[');
		for (unsigned i = 0; i < n; i++) {
			if (i)
				put(d, ", ", 1 + rnd(2));
			if (rnd(3) == 0)
				put(d, "\n  ", 3);
			if (k == 2) {
				gen_string(d);
				putc1(d, ':');
			}
			gen_value(d, depth + 1);
		}
		putc1(d, k == 2 ? '}' : ']');
	}
}

static void gen_value(struct doc *d, int depth) { gen_kind(d, depth, depth > 4 ? rnd(2) : rnd(4)); }

static struct doc make_doc(unsigned values)
{
	struct doc d = {0};
	for (unsigned v = 0; v < values; v++) {
		static const char *ws[] = {" ", "\n", "\t ", "\n  "};
		const char *w = ws[rnd(4)];
		put(&d, w, strlen(w));
		gen_value(&d, 0);
		if (d.n == d.ncap) {
			d.ncap = 2 * d.ncap + 16;
			d.ends = realloc(d.ends, d.ncap * sizeof *d.ends);
		}
		d.ends[d.n++] = d.len;
	}
	put(&d, " ", 1); /* a scalar at the end needs the byte after it */
	return d;
}

/* Scan D in chunks of CHUNK bytes; every value must end where it was made
 * to.  Returns the number of values found. */
static size_t scan(const struct doc *d, size_t chunk)
{
	size_t base = 0, i = 0, found = 0;
	while (found < d->n) {
		size_t clen = d->len - base < chunk ? d->len - base : chunk, k;
		const char *s = d->p + base;
		cm_jscan sc;
		while (i < clen && cm_jscan_ws(s[i]))
			i++;
		if (i == clen) {
			base += clen;
			i = 0;
			continue;
		}
		cm_jscan_begin(&sc, s[i]);
		k = i;
		while (!cm_jscan_feed(&sc, s, clen, &k)) {
			base += clen;
			if (base >= d->len) /* not ck_assert: each passing one writes to libcheck's pipe */
				ck_abort_msg("value %zu: the document ended inside it", found);
			s = d->p + base;
			clen = d->len - base < chunk ? d->len - base : chunk;
			k = 0;
		}
		if (base + k != d->ends[found])
			ck_abort_msg("value %zu at chunk size %zu: ends at %zu, made to end at %zu",
				     found, chunk, base + k, d->ends[found]);
		found++;
		i = k;
		if (i == clen) {
			base += clen;
			i = 0;
		}
	}
	return found;
}

START_TEST(test_value_ends_at_every_chunk_size)
{
	struct doc d = make_doc(3000);
	for (size_t c = 1; c <= 40; c++)
		ck_assert_uint_eq(scan(&d, c), d.n);
	ck_assert_uint_eq(scan(&d, 4096), d.n);
	ck_assert_uint_eq(scan(&d, d.len), d.n);
	free(d.p);
	free(d.ends);
}
END_TEST

/* Long values with few escapes, as a trace's events are: most 64-byte
 * blocks are taken whole (jscan.c), so chunk sizes around and past 64 and
 * values that end at every place of a block must all come out right. */
START_TEST(test_long_values_few_escapes)
{
	struct doc d;
	static const size_t chunks[] = {1, 15, 16, 17, 63, 64, 65, 100, 127, 128, 129, 200, 1000, 4096};
	esc_one_in = 400;
	members_max = 12;
	d = make_doc(3000);
	for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
		ck_assert_uint_eq(scan(&d, chunks[c]), d.n);
	ck_assert_uint_eq(scan(&d, d.len), d.n);
	esc_one_in = 6;
	members_max = 6;
	free(d.p);
	free(d.ends);
}
END_TEST

/* A backslash as the last byte of a chunk, at each place of a 16-byte
 * block: the escaped quote after it must not end the string. */
START_TEST(test_backslash_at_block_edges)
{
	for (size_t pre = 0; pre < 40; pre++) {
		struct doc d = {0};
		putc1(&d, '[');
		putc1(&d, '"');
		for (size_t j = 0; j < pre; j++)
			putc1(&d, 'x');
		put(&d, "\\\"]\\\\\"]", 7);
		d.ends = malloc(sizeof *d.ends);
		d.ends[d.n++] = d.len;
		put(&d, " ", 1);
		for (size_t c = 1; c <= 40; c++)
			ck_assert_uint_eq(scan(&d, c), 1);
		ck_assert_uint_eq(scan(&d, d.len), 1);
		free(d.p);
		free(d.ends);
	}
}
END_TEST

/* An array's elements, after its '[': mostly objects and arrays, in the
 * usual gaps (blanks, a comma, blanks), now and then a string, a number or
 * a gap with something else in it (", 5,"), as cm_jscan_elements must
 * hand back to its caller.  STARTS: where each element begins. */
static size_t *starts;
static struct doc make_array(unsigned values)
{
	static const char *gaps[] = {",", ", ", ",\n", " ,\n  ", ",\t", "\n,\n"};
	struct doc d = {0};
	free(starts);
	starts = malloc(values * sizeof *starts);
	for (unsigned v = 0; v < values; v++) {
		if (v) {
			const char *g = gaps[rnd(6)];
			put(&d, g, strlen(g));
		}
		starts[v] = d.len;
		gen_kind(&d, 1, rnd(12) == 0 ? rnd(2) : 2 + rnd(2));
		if (d.n == d.ncap) {
			d.ncap = 2 * d.ncap + 16;
			d.ends = realloc(d.ends, d.ncap * sizeof *d.ends);
		}
		d.ends[d.n++] = d.len;
	}
	put(&d, "]", 1);
	return d;
}

/* Cut the array D in chunks of CHUNK bytes as docsplit.c does: containers
 * by cm_jscan_elements (at most MAX a call, stopping at STOP bytes into a
 * chunk when STOP is not 0), anything else element by element.  Every
 * element must start and end where it was made to.  Returns the number
 * found. */
static size_t scan_array(const struct doc *d, size_t chunk, size_t max, size_t stop)
{
	size_t base = 0, found = 0, start = 0;
	int in_elem = 0; /* 1 in a container, 2 in a string or scalar */
	cm_jscan sc;
	uint32_t spans[2 * 16];
	while (base < d->len) {
		size_t clen = d->len - base < chunk ? d->len - base : chunk, i = 0;
		const char *s = d->p + base;
		while (i < clen) {
			if (!in_elem) { /* between elements: the gap */
				if (cm_jscan_ws(s[i]) || s[i] == ',' || s[i] == ']') {
					i++;
					continue;
				}
				if (base + i != starts[found])
					ck_abort_msg("element %zu at chunk size %zu: begins at %zu, made to at %zu", found,
						     chunk, base + i, starts[found]);
				start = base + i;
				cm_jscan_begin(&sc, s[i]);
				in_elem = 2;
				if (s[i] == '{' || s[i] == '[') {
					sc.depth = 1;
					in_elem = 1;
					i++;
				}
			} else if (in_elem == 1 && sc.depth > 0) {
				uint32_t st = start >= base ? (uint32_t)(start - base) : UINT32_MAX;
				int after;
				size_t got = cm_jscan_elements(&sc, s, clen, &i, &st, spans, max, stop ? stop : clen, &after);
				for (size_t j = 0; j < got; j++) {
					size_t a = spans[2 * j] == UINT32_MAX ? start : base + spans[2 * j];
					if (j && spans[2 * j] == UINT32_MAX)
						ck_abort_msg("a later element marked as begun earlier");
					if (found >= d->n || a != starts[found] || base + spans[2 * j + 1] != d->ends[found])
						ck_abort_msg("element %zu at chunk size %zu (max %zu, stop %zu): %zu-%zu, made "
							     "%zu-%zu", found, chunk, max, stop, a, base + spans[2 * j + 1],
							     starts[found], d->ends[found]);
					found++;
				}
				if (after)
					in_elem = 0;
				else if (got)
					start = base + st;
			} else if (cm_jscan_feed(&sc, s, clen, &i)) {
				if (base + i != d->ends[found])
					ck_abort_msg("element %zu at chunk size %zu: ends at %zu, made to end at %zu",
						     found, chunk, base + i, d->ends[found]);
				found++;
				in_elem = 0;
			}
		}
		base += clen;
	}
	return found;
}

START_TEST(test_array_elements)
{
	static const size_t chunks[] = {1, 2, 3, 7, 16, 31, 63, 64, 65, 100, 127, 128, 129, 200, 1000, 4096};
	struct doc d;
	for (int pass = 0; pass < 2; pass++) {
		/* escapes often (at block edges), then rarely (blocks taken whole) */
		esc_one_in = pass ? 300 : 6;
		members_max = pass ? 12 : 6;
		d = make_array(3000);
		for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
			ck_assert_uint_eq(scan_array(&d, chunks[c], 16, 0), d.n);
		ck_assert_uint_eq(scan_array(&d, d.len, 16, 0), d.n);
		ck_assert_uint_eq(scan_array(&d, d.len, 1, 0), d.n);
		ck_assert_uint_eq(scan_array(&d, 4096, 5, 700), d.n);
		ck_assert_uint_eq(scan_array(&d, d.len, 16, 1), d.n);
		free(d.p);
		free(d.ends);
	}
	esc_one_in = 6;
	members_max = 6;
}
END_TEST

/* cm_jscan_has_ctl: each byte 0..255 alone, at every place of a 40-byte
 * run of plain text (the 16-byte blocks and the tail), and a run without
 * one; only C0 bytes other than tab, LF and CR count. */
START_TEST(test_has_ctl)
{
	char buf[40];
	for (int b = 0; b < 256; b++) {
		int want = b < 0x20 && b != '\t' && b != '\n' && b != '\r';
		for (size_t at = 0; at < sizeof buf; at++) {
			memset(buf, 'a', sizeof buf);
			buf[at] = (char)b;
			ck_assert_int_eq(cm_jscan_has_ctl(buf, sizeof buf), want);
			ck_assert_int_eq(cm_jscan_has_ctl(buf, at), 0); /* up to it, not it */
		}
	}
	memcpy(buf, " \t\r\n\"\\{}[]\x7f\x80\xff", 13);
	ck_assert_int_eq(cm_jscan_has_ctl(buf, 13), 0);
}
END_TEST

static Suite *jscan_suite(void)
{
	Suite *s = suite_create("jscan");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_value_ends_at_every_chunk_size);
	tcase_add_test(tc, test_backslash_at_block_edges);
	tcase_add_test(tc, test_long_values_few_escapes);
	tcase_add_test(tc, test_array_elements);
	tcase_add_test(tc, test_has_ctl);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(jscan_suite)
