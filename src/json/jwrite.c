/* jwrite.c - JSON text writers: strings, integers, doubles, microseconds. */
#include "config.h"
#include "json/jwrite.h"
#include "base/diag.h"
#include "json/strskip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char hexdig[] = "0123456789abcdef";

/* Append \\uXXXX for the code unit U. */
static void put_u(cm_buf *b, unsigned u)
{
	char e[6] = {'\\', 'u', hexdig[(u >> 12) & 15], hexdig[(u >> 8) & 15], hexdig[(u >> 4) & 15],
		     hexdig[u & 15]};
	cm_buf_put(b, e, 6);
}

/* The short escape for C, or 0. */
static char short_escape(unsigned char c)
{
	switch (c) {
	case '"': return '"';
	case '\\': return '\\';
	case '\n': return 'n';
	case '\r': return 'r';
	case '\t': return 't';
	case '\b': return 'b';
	case '\f': return 'f';
	default: return 0;
	}
}

void cm_jw_string(cm_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0;
	cm_buf_putc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c;
		int lone;
		/* printable ASCII needs nothing: skip it a block at a time */
		i = (size_t)(cm_strskip_plain(p + i, p + n) - p);
		if (i == n)
			break;
		c = p[i];
		lone = c == 0xED && i + 2 < n && p[i + 1] >= 0xA0; /* WTF-8 surrogate */
		if (c >= 0x20 && c != '"' && c != '\\' && !lone)
			continue;
		cm_buf_put(b, s + run, i - run);
		if (lone) {
			put_u(b, 0xD000u | ((unsigned)(p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F));
			i += 2;
		} else if (short_escape(c)) {
			char e[2] = {'\\', short_escape(c)};
			cm_buf_put(b, e, 2);
		} else {
			put_u(b, c);
		}
		run = i + 1;
	}
	cm_buf_put(b, s + run, n - run);
	cm_buf_putc(b, '"');
}

void cm_jw_string_ascii(cm_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	cm_buf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned c = p[i], cp;
		int len;
		if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
			cm_buf_putc(b, (char)c);
			i++;
			continue;
		}
		if (c < 0x80) {
			if (short_escape((unsigned char)c)) {
				char e[2] = {'\\', short_escape((unsigned char)c)};
				cm_buf_put(b, e, 2);
			} else {
				put_u(b, c);
			}
			i++;
			continue;
		}
		/* decode one UTF-8 (or WTF-8) sequence; a stray byte stands for itself */
		len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		if (len == 1 || i + (size_t)len > n) {
			put_u(b, c);
			i++;
			continue;
		}
		cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
		for (int k = 1; k < len; k++)
			cp = (cp << 6) | (p[i + (size_t)k] & 0x3F);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			put_u(b, 0xD800 + (cp >> 10));
			put_u(b, 0xDC00 + (cp & 0x3FF));
		} else {
			put_u(b, cp);
		}
		i += (size_t)len;
	}
	cm_buf_putc(b, '"');
}

/* ------------------------------------------------ decimal digits, fast
 *
 * The render writes a few numbers an event (ids, and times as thousandths
 * of a microsecond): below 10^16 their digits are made here, eight at a
 * time in 32-bit steps, two a table look-up, with no division by a
 * variable; cm_py_int_format and cm_py_milli_repr (base/pyval.c) remain the
 * rule, for every other value, and the unit tests hold the two to the
 * same bytes. */

static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
			       "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
			       "8081828384858687888990919293949596979899";

/* The eight digits of W (below 10^8) at OUT, zeros in front. */
static inline void eight_digits(uint32_t w, char *out)
{
	uint32_t hi = w / 10000, lo = w % 10000;
	memcpy(out, pairs + 2 * (hi / 100), 2);
	memcpy(out + 2, pairs + 2 * (hi % 100), 2);
	memcpy(out + 4, pairs + 2 * (lo / 100), 2);
	memcpy(out + 6, pairs + 2 * (lo % 100), 2);
}

/* The digits of W (below 10^8) at OUT, none in front; their number. */
static inline size_t small_digits(uint32_t w, char *out)
{
	size_t n = w < 10000 ? (w < 100 ? (w < 10 ? 1 : 2) : (w < 1000 ? 3 : 4))
			     : (w < 1000000 ? (w < 100000 ? 5 : 6) : (w < 10000000 ? 7 : 8));
	char *end = out + n;
	while (w >= 100) {
		end -= 2;
		memcpy(end, pairs + 2 * (w % 100), 2);
		w /= 100;
	}
	if (w >= 10)
		memcpy(end - 2, pairs + 2 * w, 2);
	else
		end[-1] = (char)('0' + w);
	return n;
}

size_t cm_jw_u64_digits(uint64_t w, char *out)
{
	size_t n;
	if (w < 100000000)
		return small_digits((uint32_t)w, out);
	n = small_digits((uint32_t)(w / 100000000), out); /* below 10^8 too: W < 10^16 */
	eight_digits((uint32_t)(w % 100000000), out + n);
	return n + 8;
}

size_t cm_jw_int_text(cm_int v, char *out)
{
	size_t k = 0;
	uint64_t w;
	if (v <= -CM_JW_FAST_LIMIT || v >= CM_JW_FAST_LIMIT)
		return cm_py_int_format(v, out);
	if (v < 0)
		out[k++] = '-';
	w = v < 0 ? (uint64_t)0 - (uint64_t)(int64_t)v : (uint64_t)v;
	k += cm_jw_u64_digits(w, out + k);
	out[k] = 0;
	return k;
}

void cm_jw_int(cm_buf *b, cm_int v)
{
	if (v >= 0 && v < 10) {
		cm_buf_putc(b, (char)('0' + (int)v));
		return;
	}
	/* written in place: a staging copy cost two memcpy calls a number,
	 * a fifth of the render's time */
	if (b->cap - b->len < CM_INT_TEXT_MAX)
		cm_buf_grow(b, CM_INT_TEXT_MAX);
	b->len += cm_jw_int_text(v, b->p + b->len);
}

void cm_jw_double(cm_buf *b, double d)
{
	char tmp[40];
	if (isnan(d))
		cm_buf_lit(b, "NaN");
	else if (isinf(d))
		cm_buf_puts(b, d < 0 ? "-Infinity" : "Infinity");
	else
		cm_buf_put(b, tmp, cm_py_float_repr(d, tmp));
}

double cm_jw_us_double(cm_int ns)
{
	double us = cm_py_int_to_double(ns) / 1000.0;
	return cm_py_max(us, 0.0);
}

size_t cm_jw_milli_text(int64_t ns, char *out)
{
	static const uint16_t scale[3] = {100, 10, 1};
	uint64_t w;
	unsigned frac, k;
	size_t n = 0;
	if (ns < 0 || ns >= CM_JW_FAST_LIMIT)
		return cm_py_milli_repr(ns, out);
	w = (uint64_t)ns;
	frac = (unsigned)(w % 1000);
	n = cm_jw_u64_digits(w / 1000, out);
	out[n++] = '.';
	/* the thousandths without their trailing zeros, one digit at least */
	k = frac % 10 ? 3 : frac % 100 ? 2 : 1;
	for (unsigned i = 0; i < k; i++)
		out[n++] = (char)('0' + frac / scale[i] % 10);
	out[n] = 0;
	return n;
}

size_t cm_jw_us_text(cm_int ns, char *out, double *d)
{
	if (ns >= 0 && ns < CM_PY_MILLI_MAX) {
		*d = (double)(int64_t)ns / 1000.0;
		return cm_jw_milli_text((int64_t)ns, out);
	}
	*d = cm_jw_us_double(ns);
	if (isnan(*d) || isinf(*d))
		return (size_t)sprintf(out, isnan(*d) ? "NaN" : *d < 0 ? "-Infinity" : "Infinity");
	return cm_py_float_repr(*d, out);
}

double cm_jw_us_of_ns(cm_buf *b, cm_int ns)
{
	double d;
	if (b->cap - b->len < CM_US_TEXT_MAX)
		cm_buf_grow(b, CM_US_TEXT_MAX);
	b->len += cm_jw_us_text(ns, b->p + b->len, &d);
	return d;
}
