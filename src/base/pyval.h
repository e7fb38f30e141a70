/* pyval.h - Python's number semantics, as far as the reference merge uses them:
 * int() and float() of JSON values and of strings, and repr() of a float.
 *
 * Integers are held in 128 bits (cm_int): enough for every id, time and
 * 64-bit graph id a trace holds; larger values are reported, not wrapped. */
#ifndef CM_PYVAL_H
#define CM_PYVAL_H

#include <stddef.h>
#include <stdint.h>

typedef __int128 cm_int;

/* Results of the conversions below. */
enum cm_py_rc {
	CM_PY_OK = 0,
	CM_PY_VALUE = -1,    /* Python raises ValueError/TypeError: callers use their default */
	CM_PY_OVERFLOW = -2, /* Python raises OverflowError (inf), or beyond 128 bits */
};

/* 1 when a JSON number token is an integer literal (no '.', 'e' or 'E'):
 * Python's json makes an int of it, a float otherwise. */
int cm_json_number_is_int(const char *s, size_t n);

/* int() of a JSON number token: exact for integer literals, truncation toward
 * zero for floats; infinity (e.g. 1e999) overflows. */
int cm_py_int_of_number(const char *s, size_t n, cm_int *out);

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
size_t cm_int_format(cm_int v, char *buf);

/* Double nearest to V (IEEE round-to-nearest-even, as Python's float(int)). */
double cm_int_to_double(cm_int v);

/* Python's min(a, b) and max(a, b): the first argument unless the second
 * compares strictly smaller / larger (so a NaN second argument is ignored). */
static inline double cm_py_min(double a, double b) { return b < a ? b : a; }
static inline double cm_py_max(double a, double b) { return b > a ? b : a; }

#define CM_INT_MAX ((cm_int)(((unsigned __int128)1 << 127) - 1))
#define CM_INT_MIN (-CM_INT_MAX - 1)

#endif
