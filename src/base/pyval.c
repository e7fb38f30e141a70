/* pyval.c - Python int()/float()/repr() semantics for the numbers of a merge. */
#include "config.h"
#include "base/pyval.h"
#include "base/word.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cm_py_number_is_int(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			return 0;
	return 1;
}

/* Accumulate decimal digits s[0..n) (only digits) into *out with a sign.
 * Returns CM_PY_OK or CM_PY_OVERFLOW. */
static int digits_to_int(const char *s, size_t n, int neg, cm_int *out)
{
	unsigned __int128 v, lim10;
	unsigned lastd;
	uint64_t w = 0;
	size_t i, head = n < 19 ? n : 19;
	/* 19 digits always fit 64 bits (10^19 - 1 < 2^64): no 128-bit arithmetic
	 * for the window's 19-digit nanosecond times */
	for (i = 0; i < head; i++)
		w = w * 10 + (uint64_t)(s[i] - '0');
	v = w;
	/* constants the compiler folds: a tenth of the limit of the sign, and its last digit */
	lim10 = neg ? ((unsigned __int128)CM_INT_MAX + 1) / 10 : (unsigned __int128)CM_INT_MAX / 10;
	lastd = neg ? 8 : 7; /* 2^127 = ...728, 2^127 - 1 = ...727 */
	for (; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > lim10 || (v == lim10 && d > lastd))
			return CM_PY_OVERFLOW;
		v = v * 10 + d;
	}
	*out = neg ? (cm_int)(0 - v) : (cm_int)v;
	return CM_PY_OK;
}

int cm_py_int_of_number(const char *s, size_t n, cm_int *out)
{
	int neg = n && s[0] == '-';
	size_t k = (size_t)neg, head = n - k < 19 ? n : k + 19;
	uint64_t w = 0;
	/* the first 19 digits in 64 bits, eight at a time while they last */
	while (k + 8 <= head && cm_eight_digits(cm_load_le64(s + k))) {
		w = w * 100000000u + cm_eight_digits_value(cm_load_le64(s + k));
		k += 8;
	}
	while (k < head && s[k] >= '0' && s[k] <= '9')
		w = w * 10 + (uint64_t)(s[k++] - '0');
	if (k == n) { /* an integer literal of at most 19 digits */
		*out = neg ? -(cm_int)w : (cm_int)w;
		return CM_PY_OK;
	}
	while (k < n && s[k] >= '0' && s[k] <= '9')
		k++;
	if (k == n) { /* an integer literal: exact */
		return digits_to_int(s + neg, n - (size_t)neg, neg, out);
	} else {
		double d;
		if (cm_py_float_of_number(s, n, &d) != CM_PY_OK || isinf(d))
			return CM_PY_OVERFLOW;
		d = trunc(d);
		if (fabs(d) >= 0x1p127)
			return CM_PY_OVERFLOW;
		*out = (cm_int)d; /* exact: an integral double below 2^127 */
		return CM_PY_OK;
	}
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Trim ASCII whitespace from both ends of s[0..*n). */
static const char *trim(const char *s, size_t *n)
{
	while (*n && is_space(s[0]))
		s++, (*n)--;
	while (*n && is_space(s[*n - 1]))
		(*n)--;
	return s;
}

int cm_py_int_of_str(const char *s, size_t n, cm_int *out)
{
	char buf[160];
	size_t k = 0;
	int neg = 0;
	s = trim(s, &n);
	if (n && (s[0] == '+' || s[0] == '-'))
		neg = s[0] == '-', s++, n--;
	if (!n)
		return CM_PY_VALUE;
	for (size_t i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			if (k == sizeof buf)
				return CM_PY_OVERFLOW;
			buf[k++] = s[i];
		} else if (s[i] == '_' && i > 0 && i + 1 < n && s[i - 1] != '_' &&
			   s[i + 1] >= '0' && s[i + 1] <= '9') {
			continue; /* PEP 515: one underscore between digits */
		} else {
			return CM_PY_VALUE;
		}
	}
	return digits_to_int(buf, k, neg, out);
}

/* The common case exactly, without strtod: [-]DIGITS[.DIGITS] whose digits
 * make an integer M of at most 2^53, with at most 22 of them after the
 * point.  M and 10^k (k <= 22) are doubles exactly, so one correctly
 * rounded division gives the correctly rounded value, as strtod would
 * (Clinger's fast path).  Kineto's times in microseconds with three
 * decimals ("5118055641902.967", 16 digits) are such texts.  1 when it
 * applied. */
static int float_fast(const char *s, size_t n, double *out)
{
	static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
				     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	size_t i = 0, digits = 0, frac = 0;
	int neg = 0, point = 0;
	uint64_t m = 0;
	if (i < n && s[i] == '-')
		neg = 1, i++;
	for (; i < n; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			if (m || c != '0')
				digits++;
			m = m * 10 + (uint64_t)(c - '0');
			frac += point;
			if (digits > 19) /* M might not fit 64 bits */
				return 0;
		} else if (c == '.' && !point) {
			point = 1;
		} else {
			return 0; /* an exponent, or anything else: strtod */
		}
	}
	if (frac > 22 || m > (UINT64_C(1) << 53))
		return 0;
	*out = (double)m / p10[frac];
	if (neg)
		*out = -*out;
	return 1;
}

int cm_py_float_of_number(const char *s, size_t n, double *out)
{
	char stack[64], *buf;
	int rc = CM_PY_OK;
	if (float_fast(s, n, out))
		return CM_PY_OK;
	buf = n < sizeof stack ? stack : malloc(n + 1);
	if (!buf)
		return CM_PY_OVERFLOW;
	memcpy(buf, s, n);
	buf[n] = 0;
	*out = strtod(buf, NULL);
	/* float(int) raises OverflowError beyond the largest double; a float
	 * literal like 1e999 is simply inf */
	if (isinf(*out) && cm_py_number_is_int(s, n))
		rc = CM_PY_OVERFLOW;
	if (buf != stack)
		free(buf);
	return rc;
}

/* Case-insensitive equality of s[0..n) with the lowercase word W. */
static int word_eq(const char *s, size_t n, const char *w)
{
	size_t m = strlen(w);
	if (n != m)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((s[i] | 0x20) != w[i])
			return 0;
	return 1;
}

int cm_py_float_of_str(const char *s, size_t n, double *out)
{
	char buf[512];
	size_t k = 0, i = 0;
	int neg = 0, digits = 0;
	char *end;
	s = trim(s, &n);
	if (n && (s[0] == '+' || s[0] == '-'))
		neg = s[0] == '-', s++, n--;
	if (word_eq(s, n, "inf") || word_eq(s, n, "infinity")) {
		*out = neg ? -INFINITY : INFINITY;
		return CM_PY_OK;
	}
	if (word_eq(s, n, "nan")) {
		*out = neg ? -NAN : NAN;
		return CM_PY_OK;
	}
	if (neg)
		buf[k++] = '-';
	/* mantissa digits [. digits] [e [sign] digits], underscores between digits */
	for (int part = 0; part < 3 && i <= n; part++) {
		int got = 0;
		if (part == 1) {
			if (i < n && s[i] == '.')
				buf[k++] = s[i++];
			else
				continue;
		} else if (part == 2) {
			if (i < n && (s[i] == 'e' || s[i] == 'E')) {
				buf[k++] = s[i++];
				if (i < n && (s[i] == '+' || s[i] == '-'))
					buf[k++] = s[i++];
			} else {
				break;
			}
		}
		while (i < n && k < sizeof buf - 1) {
			if (s[i] >= '0' && s[i] <= '9') {
				buf[k++] = s[i++];
				got = 1;
			} else if (s[i] == '_' && got && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
				i++;
			} else {
				break;
			}
		}
		if (part < 2)
			digits |= got;
		else if (!got)
			return CM_PY_VALUE; /* "1e" */
	}
	if (i != n || !digits || k >= sizeof buf - 1)
		return CM_PY_VALUE;
	buf[k] = 0;
	*out = strtod(buf, &end);
	return *end ? CM_PY_VALUE : CM_PY_OK;
}

size_t cm_py_float_repr_search(double d, char *out)
{
	char tmp[40], digits[20];
	int prec, nd = 0, exp10, decpt;
	size_t k = 0;
	if (isnan(d))
		return (size_t)sprintf(out, "nan");
	if (isinf(d))
		return (size_t)sprintf(out, d < 0 ? "-inf" : "inf");
	if (d == 0)
		return (size_t)sprintf(out, signbit(d) ? "-0.0" : "0.0");
	/* the shortest %.Ne that reads back exactly (Python's 'r' mode); reading
	 * back is monotonic in the precision, so a binary search finds it */
	{
		int lo = 0, hi = 16; /* %.16e (17 digits) always reads back */
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			snprintf(tmp, sizeof tmp, "%.*e", mid, d);
			if (strtod(tmp, NULL) == d)
				hi = mid;
			else
				lo = mid + 1;
		}
		prec = lo;
		snprintf(tmp, sizeof tmp, "%.*e", prec, d);
	}
	{
		const char *p = tmp;
		if (*p == '-')
			out[k++] = '-', p++;
		for (; *p && *p != 'e'; p++)
			if (*p != '.')
				digits[nd++] = *p;
		exp10 = atoi(p + 1);
	}
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	decpt = exp10 + 1;
	if (decpt <= -4 || decpt > 16) {
		out[k++] = digits[0];
		if (nd > 1) {
			out[k++] = '.';
			memcpy(out + k, digits + 1, (size_t)nd - 1);
			k += (size_t)nd - 1;
		}
		k += (size_t)sprintf(out + k, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	} else if (decpt <= 0) {
		out[k++] = '0';
		out[k++] = '.';
		for (int i = 0; i < -decpt; i++)
			out[k++] = '0';
		memcpy(out + k, digits, (size_t)nd);
		k += (size_t)nd;
	} else if (decpt >= nd) {
		memcpy(out + k, digits, (size_t)nd);
		k += (size_t)nd;
		for (int i = nd; i < decpt; i++)
			out[k++] = '0';
		out[k++] = '.';
		out[k++] = '0';
	} else {
		memcpy(out + k, digits, (size_t)decpt);
		k += (size_t)decpt;
		out[k++] = '.';
		memcpy(out + k, digits + decpt, (size_t)(nd - decpt));
		k += (size_t)(nd - decpt);
	}
	out[k] = 0;
	return k;
}

/* W / 10^K in fixed notation, as repr writes a float: the integer part,
 * a point, the fraction without its trailing zeros (one digit at least). */
/* The decimal digits of W, written backward so as to end just before END;
 * returns the first.  Two digits a division (every id and time of a merge
 * goes through here, a digit a division was 4% of its instructions). */
static char *u64_digits(uint64_t w, char *end)
{
	static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				       "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				       "8081828384858687888990919293949596979899";
	while (w >= 100) {
		unsigned r = (unsigned)(w % 100);
		w /= 100;
		end -= 2;
		memcpy(end, pairs + 2 * r, 2);
	}
	if (w >= 10) {
		end -= 2;
		memcpy(end, pairs + 2 * w, 2);
	} else {
		*--end = (char)('0' + (int)w);
	}
	return end;
}

/* The number of decimal digits of W (1 for 0). */
static inline int u64_ndigits(uint64_t w)
{
	static const uint64_t pow10[20] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u,
					   100000000u, 1000000000u, 10000000000u, 100000000000u,
					   1000000000000u, 10000000000000u, 100000000000000u,
					   1000000000000000u, 10000000000000000u, 100000000000000000u,
					   1000000000000000000u, 10000000000000000000u};
	/* W | 1: 0 has a digit too, and no power of ten is odd */
	uint64_t v = w | 1;
	int t = ((64 - __builtin_clzll(v)) * 1233) >> 12; /* about log10(2) times the bits */
	return t - (v < pow10[t]) + 1;
}

/* W / 10^K as text with at least one decimal (K decimals, their trailing
 * zeros dropped), negative when NEGATIVE, written in place into OUT (no
 * staging copy: every time of the render goes through here); its length,
 * with a NUL after it. */
static size_t decimal_text(uint64_t w, int k, int negative, char *out)
{
	size_t len = 0;
	int nd;
	while (k > 0 && w % 10 == 0) { /* 5.500 -> 5.5, 5.000 -> 5 (then ".0") */
		w /= 10;
		k--;
	}
	if (negative)
		out[len++] = '-';
	if (!k) {
		nd = u64_ndigits(w);
		u64_digits(w, out + len + nd);
		len += (size_t)nd;
		out[len++] = '.';
		out[len++] = '0';
	} else {
		static const uint64_t scale[4] = {1, 10, 100, 1000};
		uint64_t ip, fp;
		if (k <= 3) {
			ip = w / scale[k];
			fp = w % scale[k];
		} else if (k < 20) {
			uint64_t p = 1;
			for (int i = 0; i < k; i++)
				p *= 10;
			ip = w / p;
			fp = w % p;
		} else { /* 10^K beyond 64 bits: W is all decimals */
			ip = 0;
			fp = w;
		}
		nd = u64_ndigits(ip);
		u64_digits(ip, out + len + nd);
		len += (size_t)nd;
		out[len++] = '.';
		/* the K decimals, with the zeros that lead them (0.005) */
		for (int i = k - 1; i >= 0; i--, fp /= 10)
			out[len + (size_t)i] = (char)('0' + (int)(fp % 10));
		len += (size_t)k;
	}
	out[len] = 0;
	return len;
}

/* Why the text of thousandths is exact.  Times in the window are integer
 * nanoseconds and reach us as N / 1000.0, the nearest double D to a number
 * of thousandths.  Python prints the shortest text that reads back as D.
 * The text of N / 1000 (three decimals, zeros dropped) reads back as D, and
 * any other text that does lies within D's rounding interval, narrower than
 * an ulp; below 2^43 an ulp is under 0.001, so no other number of
 * thousandths fits there, and a text with a digit past the third decimal
 * has more significant digits than N / 1000's.  So that text is repr(D). */
size_t cm_py_milli_repr(int64_t v, char *out)
{
	return decimal_text(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 3, v < 0, out);
}

/* repr(D) for 0.001 <= |D| < 2^53, in exact integer arithmetic; 0 for any
 * other D.  Python prints such a double in fixed notation with the fewest
 * digits that read back as D, the nearest to D when several do.  D is
 * M x 2^-S/4 exactly, and the texts that read back as D are those within
 * its rounding interval [(4M-2) / 2^S, (4M+2) / 2^S] (4M-1 below, at a power
 * of two, where the gap below is half; the ends count when M is even: a
 * tie rounds to the even neighbour).  Fewest digits means the fewest
 * decimals K, since all these texts have the same integer part up to a
 * carry: for K = 0, 1, ... the first K for which an integer N lies within
 * 10^K times the interval gives the text N / 10^K, N being the one nearest
 * 10^K x D.  Every product fits in 128 bits: M < 2^53, 10^K <= 10^20 and
 * S <= 64 in this range, and 17 significant digits always suffice.  (A
 * number of thousandths, the window's times, is found at K <= 3.) */
static size_t fixed_repr(double d, char *out)
{
	typedef unsigned __int128 u128;
	double a = fabs(d);
	int e, s, even;
	uint64_t m;
	u128 p = 1, one, lo4, hi4;
	if (!(a >= 0.001 && a < 0x1p53))
		return 0;
	m = (uint64_t)ldexp(frexp(a, &e), 53); /* a = m x 2^(e-53), 2^52 <= m < 2^53 */
	s = 55 - e;                            /* a = 4m / 2^s; 2 <= s <= 64 */
	even = !(m & 1);
	one = (u128)1 << s;
	lo4 = m == (1ull << 52) ? 4 * (u128)m - 1 : 4 * (u128)m - 2;
	hi4 = 4 * (u128)m + 2;
	for (int k = 0; k <= 20; k++, p *= 10) {
		u128 lo = lo4 * p, hi = hi4 * p, x = 4 * (u128)m * p, n, rem;
		u128 nlo = (lo + one - 1) >> s, nhi = hi >> s;
		if (!even && nlo << s == lo)
			nlo++;
		if (!even && nhi << s == hi) {
			if (!nhi)
				continue;
			nhi--;
		}
		if (nlo > nhi)
			continue;
		n = x >> s; /* the nearest to x / 2^s; a tie to the even one */
		rem = x - (n << s);
		if (rem > one / 2 || (rem == one / 2 && (n & 1)))
			n++;
		if (n < nlo)
			n = nlo;
		if (n > nhi)
			n = nhi;
		/* the first K that fits gives at most 17 significant digits, so N
		 * is below 10^18 and 64-bit divisions print it (128-bit ones are
		 * calls into libgcc) */
		return n >> 64 ? 0 : decimal_text((uint64_t)n, k, d < 0, out);
	}
	return 0;
}

size_t cm_py_float_repr(double d, char *out)
{
	size_t len = fixed_repr(d, out);
	return len ? len : cm_py_float_repr_search(d, out);
}

size_t cm_py_int_format(cm_int v, char *buf)
{
	char tmp[48];
	size_t k = 0, n = 0;
	unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
	if (!(u >> 64)) { /* in place, no staging copy */
		if (v < 0)
			buf[k++] = '-';
		n = (size_t)u64_ndigits((uint64_t)u);
		u64_digits((uint64_t)u, buf + k + n);
		buf[k + n] = 0;
		return k + n;
	}
	/* a 128-bit division is a call into libgcc; below 2^64 (every id and
	 * time) the compiler divides by 10 with a multiplication */
	while (u >> 64) {
		tmp[n++] = (char)('0' + (int)(u % 10));
		u /= 10;
	}
	for (uint64_t w = (uint64_t)u;;) {
		tmp[n++] = (char)('0' + (int)(w % 10));
		w /= 10;
		if (!w)
			break;
	}
	if (v < 0)
		buf[k++] = '-';
	while (n)
		buf[k++] = tmp[--n];
	buf[k] = 0;
	return k;
}

double cm_py_int_to_double(cm_int v)
{
	if (v >= INT64_MIN && v <= INT64_MAX)
		return (double)(int64_t)v; /* one correctly rounded instruction */
	return (double)v;              /* libgcc: rounds to nearest even as well */
}
