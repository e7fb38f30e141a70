/* jwrite.h - a growable byte buffer and the JSON text writers the merge uses. */
#ifndef CM_JWRITE_H
#define CM_JWRITE_H

#include <stddef.h>
#include <string.h>
#include "base/pyval.h"

typedef struct cm_buf {
	char *p;
	size_t len, cap;
} cm_buf;

/* Make room for N more bytes (exits on exhaustion, see cm_xrealloc). */
void cm_buf_grow(cm_buf *b, size_t n);

/* N may be 0 on a buffer that was never grown (p == NULL, an empty key ""):
 * then nothing is done, as NULL + 0 and memcpy(NULL, ...) are undefined. */
static inline void cm_buf_put(cm_buf *b, const void *s, size_t n)
{
	if (n == 0)
		return;
	if (b->cap - b->len < n)
		cm_buf_grow(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}
static inline void cm_buf_putc(cm_buf *b, char c)
{
	if (b->cap == b->len)
		cm_buf_grow(b, 1);
	b->p[b->len++] = c;
}
#define cm_buf_lit(b, s) cm_buf_put((b), (s), sizeof(s) - 1)
/* Append V as a varint: 7 bits a byte, low first, high bit = more (the
 * record packing of gpurec.c, the element places of cpuscan.c). */
static inline void cm_buf_put_varint(cm_buf *b, unsigned __int128 v)
{
	unsigned char tmp[20];
	int n = 0;
	if (!(v >> 64)) { /* nearly every value: 64-bit steps, not 128-bit ones */
		uint64_t w = (uint64_t)v;
		while (w >= 0x80) {
			tmp[n++] = (unsigned char)(w | 0x80);
			w >>= 7;
		}
		tmp[n++] = (unsigned char)w;
		cm_buf_put(b, tmp, (size_t)n);
		return;
	}
	while (v >= 0x80) {
		tmp[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (unsigned char)v;
	cm_buf_put(b, tmp, (size_t)n);
}
static inline void cm_buf_puts(cm_buf *b, const char *s) { cm_buf_put(b, s, strlen(s)); }
void cm_buf_free(cm_buf *b);

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

/* The text cm_jw_us_of_ns writes, into OUT (at least CM_US_TEXT_MAX
 * bytes); its length.  *d gets the double. */
#define CM_US_TEXT_MAX 48
size_t cm_us_text(cm_int ns, char *out, double *d);

/* Append S[0..N), a text of cm_us_text kept in a CM_US_TEXT_MAX-byte
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
double cm_us_of_ns(cm_int ns);

#endif
