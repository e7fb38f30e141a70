/* check_pyval.c - Python number semantics and the number writers. */
#include "config.h"
#include "check_common.h"
#include "json/jwrite.h"
#include "base/pyval.h"

#include <math.h>

static const char *fmt_int(cm_int v)
{
	static char buf[64];
	cm_py_int_format(v, buf);
	return buf;
}

/* cm_py_int_format against a model that prints 19 digits at a time with
 * printf, near every power of two of both signs (the 64-bit step takes
 * over from the 128-bit one at 2^64), and back through cm_py_int_of_number. */
static void model_int(cm_int v, char *out)
{
	unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
	const unsigned long long e19 = 10000000000000000000ull;
	unsigned long long part[3];
	int n = 0;
	do {
		part[n++] = (unsigned long long)(u % e19);
		u /= e19;
	} while (u);
	out += sprintf(out, "%s%llu", v < 0 ? "-" : "", part[n - 1]);
	while (--n > 0)
		out += sprintf(out, "%019llu", part[n - 1]);
}

START_TEST(int_format_model)
{
	for (int k = 0; k < 127; k++) {
		for (int d = -2; d <= 2; d++) {
			for (int sign = -1; sign <= 1; sign += 2) {
				cm_int v = ((cm_int)1 << k) + d, back;
				char want[64];
				const char *got;
				if (sign < 0)
					v = -v;
				got = fmt_int(v);
				model_int(v, want);
				ck_assert_str_eq(got, want);
				ck_assert_int_eq(cm_py_int_of_number(got, strlen(got), &back), CM_PY_OK);
				ck_assert(back == v);
			}
		}
	}
}
END_TEST

/* The same at every power of ten and beside it (where the number of
 * digits, counted before they are written, changes). */
START_TEST(int_format_powers_of_ten)
{
	cm_int p = 1;
	for (int k = 0; k <= 38; k++, p = k <= 38 ? p * 10 : p) { /* 10^38 < 2^127: no overflow */
		for (int d = -1; d <= 1; d++) {
			for (int sign = -1; sign <= 1; sign += 2) {
				cm_int v = (p + d) * sign;
				char want[64];
				model_int(v, want);
				ck_assert_str_eq(fmt_int(v), want);
			}
		}
	}
}
END_TEST

/* cm_py_milli_repr (thousandths, as repr(N / 1000.0)) against printf's
 * three decimals with the zeros after the first dropped, at and beside
 * every power of ten, both signs. */
START_TEST(milli_repr_model)
{
	int64_t p = 1;
	for (int k = 0; k <= 18; k++, p = k <= 18 ? p * 10 : p) { /* 10^18 < 2^63: no overflow */
		for (int64_t d = -1; d <= 1; d++) {
			for (int sign = -1; sign <= 1; sign += 2) {
				int64_t v = (p + d) * sign;
				uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
				char got[CM_US_TEXT_MAX], want[64];
				size_t n = cm_py_milli_repr(v, got), w;
				w = (size_t)sprintf(want, "%s%llu.%03llu", v < 0 ? "-" : "", (unsigned long long)(u / 1000),
						    (unsigned long long)(u % 1000));
				while (want[w - 1] == '0' && want[w - 2] != '.')
					want[--w] = 0;
				ck_assert_str_eq(got, want);
				ck_assert_uint_eq(n, w);
			}
		}
	}
}
END_TEST

START_TEST(int_of_str)
{
	cm_int v;
	ck_assert_int_eq(cm_py_int_of_str(" 12 ", 4, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "12");
	ck_assert_int_eq(cm_py_int_of_str("1_000", 5, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "1000");
	ck_assert_int_eq(cm_py_int_of_str("-0", 2, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "0");
	ck_assert_int_eq(cm_py_int_of_str("+7", 2, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "7");
	ck_assert_int_eq(cm_py_int_of_str("_1", 2, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("1__0", 4, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("1_", 2, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("12.0", 4, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("x", 1, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("", 0, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("-", 1, &v), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_int_of_str("170141183460469231731687303715884105727", 39, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "170141183460469231731687303715884105727");
	ck_assert_int_eq(cm_py_int_of_str("170141183460469231731687303715884105728", 39, &v), CM_PY_OVERFLOW);
	ck_assert_int_eq(cm_py_int_of_str("-170141183460469231731687303715884105728", 40, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "-170141183460469231731687303715884105728");
}
END_TEST

START_TEST(int_of_number)
{
	cm_int v;
	ck_assert_int_eq(cm_py_int_of_number("18446744073709551615", 20, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "18446744073709551615");
	ck_assert_int_eq(cm_py_int_of_number("12.9", 4, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "12");
	ck_assert_int_eq(cm_py_int_of_number("-12.9", 5, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "-12");
	ck_assert_int_eq(cm_py_int_of_number("1e3", 3, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "1000");
	ck_assert_int_eq(cm_py_int_of_number("1e30", 4, &v), CM_PY_OK);
	/* int(1e30) is the double's exact value, not 10**30 */
	ck_assert_str_eq(fmt_int(v), "1000000000000000019884624838656");
	ck_assert_int_eq(cm_py_int_of_number("1e999", 5, &v), CM_PY_OVERFLOW);
	ck_assert_int_eq(cm_py_int_of_number("-0", 2, &v), CM_PY_OK);
	ck_assert_str_eq(fmt_int(v), "0");
	ck_assert(cm_py_number_is_int("-12", 3));
	ck_assert(!cm_py_number_is_int("1E2", 3));
}
END_TEST

START_TEST(float_of_str)
{
	double d;
	ck_assert_int_eq(cm_py_float_of_str(" 1.5 ", 5, &d), CM_PY_OK);
	ck_assert(d == 1.5);
	ck_assert_int_eq(cm_py_float_of_str("1_0.2_5", 7, &d), CM_PY_OK);
	ck_assert(d == 10.25);
	ck_assert_int_eq(cm_py_float_of_str("-Infinity", 9, &d), CM_PY_OK);
	ck_assert(isinf(d) && d < 0);
	ck_assert_int_eq(cm_py_float_of_str("nan", 3, &d), CM_PY_OK);
	ck_assert(isnan(d));
	ck_assert_int_eq(cm_py_float_of_str(".5", 2, &d), CM_PY_OK);
	ck_assert(d == 0.5);
	ck_assert_int_eq(cm_py_float_of_str("5.", 2, &d), CM_PY_OK);
	ck_assert_int_eq(cm_py_float_of_str("1e", 2, &d), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_float_of_str(".", 1, &d), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_float_of_str("0x10", 4, &d), CM_PY_VALUE);
	ck_assert_int_eq(cm_py_float_of_str("", 0, &d), CM_PY_VALUE);
	/* float(int) of a huge integer literal raises OverflowError */
	ck_assert_int_eq(cm_py_float_of_number("1" "0000000000000000000000000000000000000000000000000000000000"
					       "0000000000000000000000000000000000000000000000000000000000"
					       "0000000000000000000000000000000000000000000000000000000000"
					       "0000000000000000000000000000000000000000000000000000000000"
					       "0000000000000000000000000000000000000000000000000000000000"
					       "00000000000000000000000000000000000000000000000000000000000",
					       350, &d),
			 CM_PY_OVERFLOW);
	ck_assert_int_eq(cm_py_float_of_number("1e999", 5, &d), CM_PY_OK);
	ck_assert(isinf(d));
}
END_TEST

/* Table of repr() results, checked against Python 3.11. */
static const struct {
	double d;
	const char *repr;
} reprs[] = {
	{1e16, "1e+16"},
	{1e15, "1000000000000000.0"},
	{0.0001, "0.0001"},
	{0.00001, "1e-05"},
	{5.0, "5.0"},
	{-0.0, "-0.0"},
	{0.1 + 0.2, "0.30000000000000004"},
	{755.9649999999999, "755.9649999999999"},
	{14935.81640625, "14935.81640625"},
	{5117755921679.665, "5117755921679.665"},
	{1.5e-7, "1.5e-07"},
	{123456789012345678.0, "1.2345678901234568e+17"},
	{-2.5, "-2.5"},
};

/* float() of a number token, the fast path included: the same double as
 * strtod for decimal texts around its limits (digits making at most 2^53,
 * 22 after the point) and on both sides of them. */
START_TEST(float_of_number_fast)
{
	unsigned long long x = 88172645463325252ull;
	char text[64], *p;
	for (int i = 0; i < 200000; i++) {
		double d, want;
		int sig, frac, k;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		sig = 1 + (int)(x % 20);         /* 1..20 significant digits */
		frac = (int)((x >> 8) % 25);     /* 0..24 of them (or zeros) after the point */
		p = text;
		if (x & (1ull << 40))
			*p++ = '-';
		for (k = 0; k < sig; k++) {
			if (k == sig - frac && k > 0)
				*p++ = '.';
			*p++ = (char)('0' + (k == 0 ? 1 + (x >> (20 + k)) % 9 : (x >> (16 + k)) % 10));
		}
		if (frac >= sig) { /* 0.000ddd */
			char tmp[64];
			int z = frac - sig;
			size_t len = (size_t)(p - text) - (text[0] == '-');
			memcpy(tmp, text + (text[0] == '-'), len);
			p = text + (text[0] == '-');
			*p++ = '0';
			*p++ = '.';
			while (z-- > 0)
				*p++ = '0';
			memcpy(p, tmp, len);
			p += len;
		}
		*p = 0;
		want = strtod(text, NULL);
		ck_assert_int_eq(cm_py_float_of_number(text, strlen(text), &d), CM_PY_OK);
		ck_assert_msg(memcmp(&d, &want, sizeof d) == 0, "%s: %.17g, strtod %.17g", text, d, want);
	}
	/* digits making 2^53 and its neighbours, at every place of the point */
	for (int pt = 0; pt <= 16; pt++) {
		static const char *const m[] = {"9007199254740991", "9007199254740992", "9007199254740993",
						"9007199254740995", "18014398509481985"};
		for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
			double d, want;
			size_t len = strlen(m[i]);
			int at = pt < (int)len ? pt : (int)len - 1;
			snprintf(text, sizeof text, "%.*s%s%s", (int)(len - (size_t)at), m[i], at ? "." : "",
				 m[i] + len - (size_t)at);
			want = strtod(text, NULL);
			ck_assert_int_eq(cm_py_float_of_number(text, strlen(text), &d), CM_PY_OK);
			ck_assert_msg(memcmp(&d, &want, sizeof d) == 0, "%s: %.17g, strtod %.17g", text, d, want);
		}
	}
}
END_TEST

/* The inline fast paths (pyval.h) against the general functions: on every
 * text they take, the same value (a double bit for bit) and the same
 * answer of cm_py_number_is_int; and they take the texts they are there
 * for (every integer of at most 19 digits that fits an int64, decimals of
 * at most 19 digits making at most 2^53), so that the merge's ids and
 * times do not fall through to the slow path unseen. */
START_TEST(number_fast_paths)
{
	unsigned long long x = 0x9E3779B97F4A7C15ull;
	static const char *const edge[] = {"0", "-0", "9223372036854775807", "9223372036854775808",
					   "-9223372036854775808", "-9223372036854775809", "9999999999999999999",
					   "10000000000000000000", "12345678", "-12345678", "1234567812345678",
					   "0.5", "-0.0", "1e5", "1E-5", "1.5e3", "9007199254740992.0", "9007199254740993",
					   "900719925474099.3", "90071992547409.93", "0.0000000000000000001",
					   "5117756144348.624", "40.718", "1795974782144318225"};
	char text[64];
	for (int i = 0; i < 50000 + (int)(sizeof edge / sizeof *edge); i++) {
		size_t n;
		int64_t iv;
		cm_int want;
		double d, dwant;
		int is_int, wide, int_rc;
		if (i < (int)(sizeof edge / sizeof *edge)) {
			snprintf(text, sizeof text, "%s", edge[i]);
		} else {
			char *p = text;
			int digits, point;
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			digits = 1 + (int)(x % 22);
			point = (int)((x >> 5) % 26) - 3; /* digits before the point; none when beyond */
			if (x & (1ull << 40))
				*p++ = '-';
			for (int k = 0; k < digits; k++) {
				if (k == point && k > 0)
					*p++ = '.';
				*p++ = (char)('0' + (k == 0 && digits > 1 && point != 1 ? 1 + (x >> (8 + k)) % 9
										    : (x >> (11 + 2 * k)) % 10));
			}
			if ((x >> 50) % 13 == 0)
				p += sprintf(p, "e%d", (int)((x >> 20) % 40) - 20);
			*p = 0;
		}
		n = strlen(text);
		int_rc = cm_py_int_of_number(text, n, &want); /* (1e40 and so on overflow) */
		if (cm_py_int_literal(text, n, &iv)) {
			ck_assert_msg(int_rc == CM_PY_OK && cm_py_number_is_int(text, n) && (cm_int)iv == want,
				      "%s: int literal %lld", text, (long long)iv);
		} else {
			size_t nd = n - (text[0] == '-');
			ck_assert_msg(!cm_py_number_is_int(text, n) || nd > 19 || want > INT64_MAX || want < INT64_MIN,
				      "%s: an int64 literal not taken", text);
		}
		wide = cm_py_float_of_number(text, n, &dwant) != CM_PY_OK;
		if (cm_py_decimal_fast(text, n, &d, &is_int)) {
			ck_assert_msg(!wide && memcmp(&d, &dwant, sizeof d) == 0, "%s: %.17g, float() %.17g", text, d,
				      dwant);
			ck_assert_int_eq(is_int, cm_py_number_is_int(text, n));
		} else {
			/* not taken: an exponent, more than 19 digits, or beyond 2^53 */
			unsigned long long m = 0;
			int nd = 0, exp = 0;
			for (size_t k = 0; k < n; k++) {
				if (text[k] == 'e' || text[k] == 'E')
					exp = 1;
				if (!exp && text[k] >= '0' && text[k] <= '9')
					nd++, m = nd <= 19 ? m * 10 + (unsigned)(text[k] - '0') : m;
			}
			ck_assert_msg(exp || nd > 19 || m > (1ull << 53), "%s: a decimal not taken", text);
		}
	}
}
END_TEST

START_TEST(float_repr)
{
	char buf[40];
	cm_py_float_repr(reprs[_i].d, buf);
	ck_assert_str_eq(buf, reprs[_i].repr);
}
END_TEST

/* The short cut for thousandths gives the search's text: numbers of
 * thousandths from 0.001 up to the bound (random, and those next to powers
 * of ten and two), negatives, and doubles that are no number of thousandths
 * (which must fall through to the search). */
START_TEST(float_repr_milli)
{
	unsigned long long x = 0x9e3779b97f4a7c15ull;
	char fast[40], slow[40];
	for (int i = 0; i < 60000; i++) {
		long long v;
		double d;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (i % 4) {
		case 0: /* any size up to the bound: a random magnitude, then digits */
			v = (long long)(x % ((unsigned long long)CM_PY_MILLI_MAX >> (x >> 58) % 48));
			break;
		case 1: { /* next to a power of ten (9.999, 10.0, 10.001) */
			long long p = 1;
			for (int k = (int)((x >> 8) % 16); k > 0; k--)
				p *= 10;
			v = p + (long long)((x >> 20) % 5) - 2;
			break;
		}
		case 2: /* next to a power of two, up to the bound */
			v = (1LL << (x >> 8) % 53) + (long long)((x >> 20) % 5) - 2;
			break;
		default: /* near the bound, either side */
			v = CM_PY_MILLI_MAX - 2000 + (long long)((x >> 8) % 4000);
			break;
		}
		if (x & (1ull << 40))
			v = -v;
		d = (double)v / 1000.0;
		cm_py_float_repr(d, fast);
		cm_py_float_repr_search(d, slow);
		ck_assert_msg(!strcmp(fast, slow), "%lld/1000: %s, the search %s", v, fast, slow);
		/* a double next to it is (nearly always) no number of thousandths */
		d = nextafter(d, (x & 2) ? INFINITY : -INFINITY);
		cm_py_float_repr(d, fast);
		cm_py_float_repr_search(d, slow);
		ck_assert_msg(!strcmp(fast, slow), "next to %lld/1000: %s, the search %s", v, fast, slow);
	}
}
END_TEST

/* Any double: the short cuts (thousandths; exact fixed notation from 0.001
 * to 2^53) give the search's text.  Random bit patterns over all exponents,
 * the spans' times (thousandths minus 0.001, plus 0.002: one ulp off), and
 * the doubles either side of both ends of the fixed range. */
START_TEST(float_repr_any)
{
	unsigned long long x = 0x2545f4914f6cdd1dull;
	static const double ends[] = {0.001, 0x1p53, 0x1p52, 1e15, 1e16, 0.1, 1.0, 9.999999999999999e15};
	char fast[40], slow[40];
	for (int i = 0; i < 60000; i++) {
		double d;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (i % 3) {
		case 0: { /* exponents 2^-30 .. 2^60, any mantissa */
			uint64_t bits = (x & 0x800fffffffffffffull) | (uint64_t)(1023 - 30 + (x >> 52) % 91) << 52;
			memcpy(&d, &bits, sizeof d);
			break;
		}
		case 1:
			d = (double)(long long)(x % 100000000000000ull) / 1000.0 - 0.001;
			break;
		default:
			d = (double)(long long)(x % 100000000000ull) / 1000.0 + 0.002;
			break;
		}
		if (i < 8 * 4) /* and first: each end, from both sides */
			d = nextafter(ends[i / 4], i % 2 ? INFINITY : -INFINITY) * (i % 4 < 2 ? 1 : -1);
		cm_py_float_repr(d, fast);
		cm_py_float_repr_search(d, slow);
		ck_assert_msg(!strcmp(fast, slow), "%.17g: %s, the search %s", d, fast, slow);
	}
	for (int k = -12; k <= 55; k++) /* powers of two: the interval is narrower below */
		for (int side = -1; side <= 1; side++) {
			double d = ldexp(1.0, k);
			if (side)
				d = nextafter(d, side * INFINITY);
			cm_py_float_repr(d, fast);
			cm_py_float_repr_search(d, slow);
			ck_assert_msg(!strcmp(fast, slow), "%.17g: %s, the search %s", d, fast, slow);
		}
}
END_TEST

START_TEST(us_of_ns)
{
	static const long long ns[] = {7000010000LL, 5, 1234, 0, 999, 1000, 9007199254740991LL,
				       2117755923936272LL, -5, 9007199254740993LL};
	for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
		cm_buf b = {0};
		double d = cm_jw_us_of_ns(&b, ns[i]), back;
		cm_buf_putc(&b, 0);
		back = strtod(b.p, NULL);
		/* the text reads back as the double the reference computes */
		ck_assert_msg(back == cm_jw_us_double(ns[i]) && d == back, "ns %lld -> %s", ns[i], b.p);
		ck_assert(back == (ns[i] < 0 ? 0.0 : (double)ns[i] / 1000.0));
		cm_buf_free(&b);
	}
}
END_TEST

START_TEST(min_max_nan)
{
	ck_assert(cm_py_min(INFINITY, NAN) == INFINITY);
	ck_assert(cm_py_max(0.0, NAN) == 0.0);
	ck_assert(cm_py_min(3.0, 2.0) == 2.0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pyval");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, int_of_str);
	tcase_add_test(tc, int_of_number);
	tcase_add_test(tc, float_of_number_fast);
	tcase_add_test(tc, number_fast_paths);
	tcase_add_test(tc, int_format_model);
	tcase_add_test(tc, int_format_powers_of_ten);
	tcase_add_test(tc, milli_repr_model);
	tcase_add_test(tc, float_of_str);
	tcase_add_loop_test(tc, float_repr, 0, sizeof reprs / sizeof *reprs);
	tcase_add_test(tc, float_repr_milli);
	tcase_add_test(tc, float_repr_any);
	tcase_add_test(tc, us_of_ns);
	tcase_add_test(tc, min_max_nan);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
