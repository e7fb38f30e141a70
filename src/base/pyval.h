/* pyval.h - Python's number semantics, as far as the reference merge uses them:
 * int() and float() of JSON values and of strings, and repr() of a float.
 *
 * Integers are held in 128 bits (cm_int): enough for every id, time and
 * 64-bit graph id a trace holds; larger values are reported, not wrapped. */
#ifndef CM_PYVAL_H
#define CM_PYVAL_H

#include <stddef.h>
#include <stdint.h>
#include "base/word.h"

typedef __int128 cm_int;

/* Results of the conversions below. */
enum cm_py_rc {
	CM_PY_OK = 0,
	CM_PY_VALUE = -1,    /* Python raises ValueError/TypeError: callers use their default */
	CM_PY_OVERFLOW = -2, /* Python raises OverflowError (inf), or beyond 128 bits */
};

/* 1 when a JSON number token is an integer literal (no '.', 'e' or 'E'):
 * Python's json makes an int of it, a float otherwise. */
int cm_py_number_is_int(const char *s, size_t n);

/* int() of a JSON number token: exact for integer literals, truncation toward
 * zero for floats; infinity (e.g. 1e999) overflows. */
int cm_py_int_of_number(const char *s, size_t n, cm_int *out);

/* The fast paths of the two above, inline for the readers that convert a
 * few numbers an event (each was a call that read the digits a byte at a
 * time, after another call that looked for a point: 7% of a merge's
 * instructions).  Each takes only the texts it converts exactly as the
 * general function would, and says 0 for any other (the caller then calls
 * the general one).
 *
 * cm_py_int_literal: a valid JSON number S[0..N) that is an integer
 * literal -?DIGITS of at most 19 digits fitting an int64: 1 and *OUT, its
 * value (as cm_py_int_of_number gives it). */
static inline int cm_py_int_literal(const char *s, size_t n, int64_t *out)
{
	int neg = n && s[0] == '-';
	size_t k = (size_t)neg, nd = n - (size_t)neg;
	uint64_t w = 0;
	if (nd == 0 || nd > 19)
		return 0;
	if (nd >= 8 && cm_eight_digits(cm_load_le64(s + k))) {
		w = cm_eight_digits_value(cm_load_le64(s + k));
		k += 8;
		if (nd >= 16 && cm_eight_digits(cm_load_le64(s + k))) {
			w = w * 100000000u + cm_eight_digits_value(cm_load_le64(s + k));
			k += 8;
		}
	}
	for (; k < n; k++) {
		unsigned d = (unsigned)(s[k] - '0');
		if (d > 9)
			return 0; /* a fraction or an exponent */
		w = w * 10 + d;
	}
	if (w > (uint64_t)INT64_MAX + (uint64_t)neg)
		return 0;
	*out = neg ? (int64_t)(0 - w) : (int64_t)w;
	return 1;
}

/* cm_py_decimal_fast: a valid JSON number S[0..N) of the form
 * -?DIGITS(.DIGITS)? with at most 19 digits in all, whose digits make an
 * integer M of at most 2^53: 1, *OUT = its float() (M / 10^decimals, one
 * correctly rounded division, as cm_py_float_of_number's own fast path
 * computes it), *IS_INT whether it has no point (cm_py_number_is_int). */
static inline int cm_py_decimal_fast(const char *s, size_t n, double *out, int *is_int)
{
	static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
				     1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
	int neg = n && s[0] == '-';
	size_t k = (size_t)neg, dot = n, frac = 0;
	uint64_t m = 0;
	if (n - (size_t)neg > 20)
		return 0;
	for (int part = 0; part < 2; part++) {
		while (n - k >= 8 && cm_eight_digits(cm_load_le64(s + k))) {
			m = m * 100000000u + cm_eight_digits_value(cm_load_le64(s + k));
			k += 8;
			if (m > (UINT64_C(1) << 53))
				return 0; /* (and 17 digits do not overflow before this test) */
		}
		while (k < n && (unsigned)(s[k] - '0') <= 9)
			m = m * 10 + (unsigned)(s[k++] - '0');
		if (k == n || part || s[k] != '.')
			break;
		dot = k++;
	}
	if (k != n || m > (UINT64_C(1) << 53))
		return 0; /* an exponent; or too many digits for M */
	if (dot < n)
		frac = n - dot - 1;
	if (n - (size_t)neg - (dot < n) > 19)
		return 0;
	*out = (double)m / p10[frac];
	if (neg)
		*out = -*out;
	*is_int = dot == n;
	return 1;
}

/* int() of a str: surrounding whitespace, a sign, decimal digits with single
 * underscores between them. */
int cm_py_int_of_str(const char *s, size_t n, cm_int *out);

/* float() of a JSON number token (an integer literal too large for a double
 * overflows, as float(int) does in Python). */
int cm_py_float_of_number(const char *s, size_t n, double *out);

/* float() of a str: whitespace, sign, digits with underscores, '.', exponent,
 * and the words inf, infinity, nan in any case. */
int cm_py_float_of_str(const char *s, size_t n, double *out);

/* repr() of a float into BUF (at least 32 bytes): the shortest text that reads
 * back as D, in Python's layout (1e+16, 0.0001, 1e-05, 5.0, inf, nan).
 * Returns the length. */
size_t cm_py_float_repr(double d, char *buf);

/* The same text found the general way (a search over %.Ne precisions, each
 * read back), without cm_py_float_repr's exact arithmetic from 0.001 to
 * 2^53: the yardstick the unit tests hold that arithmetic to. */
size_t cm_py_float_repr_search(double d, char *buf);

/* Below this, a double has more than one per thousandth (its ulp is under
 * 0.001, 2^-10 at most), so the text of V / 1000 is the only text of three
 * decimals or fewer that reads back as that double. */
#define CM_PY_MILLI_MAX 8796093022208000LL /* 2^43 x 1000 */

/* repr(V / 1000.0) into BUF (at least 32 bytes), for |V| < CM_PY_MILLI_MAX:
 * V's digits with the point put three places in and the trailing zeros of
 * the fraction dropped (one kept).  Returns the length. */
size_t cm_py_milli_repr(int64_t v, char *buf);

/* Decimal text of V into BUF (at least CM_INT_TEXT_MAX bytes), with a NUL
 * after it.  Returns the length. */
#define CM_INT_TEXT_MAX 48
size_t cm_py_int_format(cm_int v, char *buf);

/* Double nearest to V (IEEE round-to-nearest-even, as Python's float(int)). */
double cm_py_int_to_double(cm_int v);

/* Python's min(a, b) and max(a, b): the first argument unless the second
 * compares strictly smaller / larger (so a NaN second argument is ignored). */
static inline double cm_py_min(double a, double b) { return b < a ? b : a; }
static inline double cm_py_max(double a, double b) { return b > a ? b : a; }

#define CM_INT_MAX ((cm_int)(((unsigned __int128)1 << 127) - 1))
#define CM_INT_MIN (-CM_INT_MAX - 1)

#endif
