/* jbuf.c - the JSON text buffer shared by the collector and the thread recorder. */
#include "jbuf.h"

#include <stdlib.h>

int crec_jbuf_reserve(crec_jbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->failed)
		return -1;
	if (b->cap - b->len >= n)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->failed = 1;
			return -1;
		}
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p) {
		b->failed = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void crec_jbuf_free(crec_jbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->failed = 0;
}

/* Length of the valid UTF-8 sequence starting at s[0..n), or 0 when the bytes
 * there do not form one (overlong forms, surrogates and values above U+10FFFF
 * are invalid, as RFC 3629 says). */
static size_t crec_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void crec_jbuf_str(crec_jbuf *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0, k;

	crec_jbuf_lit(b, "\"");
	while (i < n) {
		unsigned c = s[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		/* flush the plain run before the byte that needs attention */
		crec_jbuf_put(b, s + run, i - run);
		if (c >= 0x80) {
			k = crec_utf8_len(s + i, n - i);
			if (k) {
				crec_jbuf_put(b, s + i, k);
				i += k;
			} else {
				crec_jbuf_lit(b, "\\ufffd");
				i++;
			}
		} else if (c == '"') {
			crec_jbuf_lit(b, "\\\"");
			i++;
		} else if (c == '\\') {
			crec_jbuf_lit(b, "\\\\");
			i++;
		} else if (c == '\n') {
			crec_jbuf_lit(b, "\\n");
			i++;
		} else if (c == '\t') {
			crec_jbuf_lit(b, "\\t");
			i++;
		} else if (c == '\r') {
			crec_jbuf_lit(b, "\\r");
			i++;
		} else {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			crec_jbuf_put(b, u, sizeof u);
			i++;
		}
		run = i;
	}
	crec_jbuf_put(b, s + run, i - run);
	crec_jbuf_lit(b, "\"");
}

size_t crec_json_str_fixed(char *out, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, o = 0, k;

	out[o++] = '"';
	while (i < n) {
		unsigned c = s[i];
		if (c >= 0x80) {
			k = crec_utf8_len(s + i, n - i);
			if (k) {
				memcpy(out + o, s + i, k);
				o += k;
				i += k;
			} else {
				memcpy(out + o, "\\ufffd", 6);
				o += 6;
				i++;
			}
			continue;
		}
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else if (c < 0x20) {
			out[o++] = '\\';
			out[o++] = 'u';
			out[o++] = '0';
			out[o++] = '0';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
		i++;
	}
	out[o++] = '"';
	return o;
}

size_t crec_json_u64_fixed(char *out, uint64_t v)
{
	char tmp[CREC_U64_DIGITS];
	size_t i = sizeof tmp;

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(out, tmp + i, sizeof tmp - i);
	return sizeof tmp - i;
}

void crec_jbuf_u64(crec_jbuf *b, uint64_t v)
{
	char num[CREC_U64_DIGITS];

	crec_jbuf_put(b, num, crec_json_u64_fixed(num, v));
}

void crec_jbuf_i64(crec_jbuf *b, int64_t v)
{
	if (v < 0) {
		crec_jbuf_lit(b, "-");
		/* negate in unsigned arithmetic: INT64_MIN has no positive twin */
		crec_jbuf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		crec_jbuf_u64(b, (uint64_t)v);
	}
}
