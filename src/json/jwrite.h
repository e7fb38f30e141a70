/* jwrite.h - the JSON text writers the merge uses, appending to a cm_buf (base/buf.h). */
#ifndef CM_JWRITE_H
#define CM_JWRITE_H

#include <stddef.h>
#include <string.h>
#include "base/buf.h"
#include "base/pyval.h"

/* A JSON string literal for the UTF-8 bytes s[0..n): quotes, backslashes and
 * control characters escaped, other bytes as they are (non-ASCII stays UTF-8).
 * A lone surrogate carried as its 3-byte WTF-8 form is written as \\uXXXX. */
void cm_jw_string(cm_buf *b, const char *s, size_t n);

/* The same escaped for Python's json.dumps(ensure_ascii=True): every byte
 * outside ' '..'~' becomes \\u00XX / \\uXXXX (surrogate pairs beyond the BMP),
 * with the short escapes \\n \\r \\t \\b \\f. */
void cm_jw_string_ascii(cm_buf *b, const char *s, size_t n);

/* A JSON integer. */
void cm_jw_int(cm_buf *b, cm_int v);

/* A JSON number that reads back as exactly D (Python's repr digits); NaN and
 * the infinities as Python's json writes them (NaN, Infinity, -Infinity). */
void cm_jw_double(cm_buf *b, double d);

/* The microsecond value max(float(NS) / 1000.0, 0.0) the reference computes
 * for a nanosecond difference, as Python's repr writes it, fast: below
 * CM_PY_MILLI_MAX ns (2^43 us, 278 years) that is the decimal NS/1000 itself
 * (cm_py_milli_repr); otherwise via cm_jw_double.  Returns the double. */
double cm_jw_us_of_ns(cm_buf *b, cm_int ns);

/* The fast digits of the writers: below CM_JW_FAST_LIMIT, made in 32-bit
 * steps, the same bytes as base/pyval.c's (which write every other value).
 * cm_jw_u64_digits: the decimal digits of W (below CM_JW_FAST_LIMIT) at
 * OUT, no NUL; their number.  cm_jw_int_text: cm_py_int_format's text of V,
 * with a NUL after it (OUT: CM_INT_TEXT_MAX bytes); its length.
 * cm_jw_milli_text: cm_py_milli_repr's text of NS / 1000 (|NS| below
 * CM_PY_MILLI_MAX), with a NUL after it (OUT: 32 bytes); its length. */
#define CM_JW_FAST_LIMIT 10000000000000000LL /* 10^16 */
size_t cm_jw_u64_digits(uint64_t w, char *out);
size_t cm_jw_int_text(cm_int v, char *out);
size_t cm_jw_milli_text(int64_t ns, char *out);

/* The text cm_jw_us_of_ns writes, into OUT (at least CM_US_TEXT_MAX
 * bytes); its length.  *d gets the double. */
#define CM_US_TEXT_MAX 48
size_t cm_jw_us_text(cm_int ns, char *out, double *d);

/* Append S[0..N), a text of cm_jw_us_text kept in a CM_US_TEXT_MAX-byte
 * array: when N is at most 32 (every time of a trace) with a copy of a
 * fixed 32 bytes, which compiles to two moves where a copy of N bytes is a
 * call (S has the 32 bytes readable). */
static inline void cm_buf_put_short(cm_buf *b, const char *s, size_t n)
{
	if (n > 32) {
		cm_buf_put(b, s, n);
		return;
	}
	if (b->cap - b->len < 32)
		cm_buf_grow(b, 32);
	memcpy(b->p + b->len, s, 32);
	b->len += n;
}

/* The double of cm_jw_us_of_ns without writing it. */
double cm_jw_us_double(cm_int ns);

#endif
