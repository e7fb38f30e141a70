/* jcheck.c - whitespace, UTF-8 and depth, judged once for every pass.
 *
 * The check runs over the raw text beside yajl (saxread.c), so it only has
 * to know what yajl does not: it tracks strings (to count brackets outside
 * them) and UTF-8 sequences, and trusts yajl with the rest of the syntax.
 * Form feed and vertical tab are refused anywhere: outside a string they are
 * not JSON whitespace, inside one they are raw control characters. */
#include "config.h"
#include "jcheck.h"

#define DEPTH_TEXT_(n) #n
#define DEPTH_TEXT(n) DEPTH_TEXT_(n)

/* Byte classes.  Plain bytes are skipped in a tight loop. */
enum { K_PLAIN = 0, K_QUOTE, K_BSLASH, K_OPEN, K_CLOSE, K_HIGH, K_FF, K_VT };

static const unsigned char cls[256] = {
	['"'] = K_QUOTE, ['\\'] = K_BSLASH, ['{'] = K_OPEN, ['['] = K_OPEN, ['}'] = K_CLOSE,
	[']'] = K_CLOSE, ['\f'] = K_FF, ['\v'] = K_VT,
#define H16(b) [b] = K_HIGH, [b + 1] = K_HIGH, [b + 2] = K_HIGH, [b + 3] = K_HIGH, \
	[b + 4] = K_HIGH, [b + 5] = K_HIGH, [b + 6] = K_HIGH, [b + 7] = K_HIGH, [b + 8] = K_HIGH, \
	[b + 9] = K_HIGH, [b + 10] = K_HIGH, [b + 11] = K_HIGH, [b + 12] = K_HIGH, \
	[b + 13] = K_HIGH, [b + 14] = K_HIGH, [b + 15] = K_HIGH
	H16(0x80), H16(0x90), H16(0xa0), H16(0xb0), H16(0xc0), H16(0xd0), H16(0xe0), H16(0xf0),
#undef H16
};

void cm_jcheck_begin(cm_jcheck *c)
{
	c->in_str = c->esc = c->depth = c->need = 0;
	c->lo = c->hi = 0;
	c->err = NULL;
}

/* A lead byte B starts a sequence (RFC 3629, section 4): set how many
 * continuation bytes follow and the range of the first.  0, or -1 when B
 * cannot start a sequence (a stray continuation byte, C0/C1 for an overlong
 * two-byte form, F5..FF beyond U+10FFFF). */
static int utf8_lead(cm_jcheck *c, unsigned char b)
{
	c->lo = 0x80;
	c->hi = 0xbf;
	if (b >= 0xc2 && b <= 0xdf)
		c->need = 1;
	else if (b >= 0xe0 && b <= 0xef)
		c->need = 2;
	else if (b >= 0xf0 && b <= 0xf4)
		c->need = 3;
	else
		return -1;
	if (b == 0xe0)
		c->lo = 0xa0; /* overlong three-byte form */
	else if (b == 0xed)
		c->hi = 0x9f; /* UTF-16 surrogates */
	else if (b == 0xf0)
		c->lo = 0x90; /* overlong four-byte form */
	else if (b == 0xf4)
		c->hi = 0x8f; /* beyond U+10FFFF */
	return 0;
}

size_t cm_jcheck_feed(cm_jcheck *c, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned char b = u[i];
		if (c->need) { /* inside a multi-byte sequence */
			if (b < c->lo || b > c->hi) {
				c->err = "invalid UTF-8 (a truncated, overlong or out-of-range sequence)";
				return i;
			}
			c->lo = 0x80;
			c->hi = 0xbf;
			c->need--;
			i++;
			continue;
		}
		if (c->esc) { /* the byte after a backslash is yajl's to judge */
			c->esc = 0;
			if (cls[b] == K_PLAIN || cls[b] == K_QUOTE || cls[b] == K_BSLASH || cls[b] == K_CLOSE ||
			    cls[b] == K_OPEN) {
				i++;
				continue;
			}
		}
		switch (cls[b]) {
		case K_PLAIN:
			i++;
			while (i < n && cls[u[i]] == K_PLAIN)
				i++;
			continue;
		case K_QUOTE:
			c->in_str = !c->in_str;
			break;
		case K_BSLASH:
			if (c->in_str)
				c->esc = 1;
			break;
		case K_OPEN:
			if (!c->in_str && ++c->depth > CM_JSON_MAX_DEPTH) {
				c->err = "nesting deeper than " DEPTH_TEXT(CM_JSON_MAX_DEPTH) " levels";
				return i;
			}
			break;
		case K_CLOSE:
			if (!c->in_str && c->depth > 0)
				c->depth--;
			break;
		case K_HIGH:
			if (utf8_lead(c, b) < 0) {
				c->err = "invalid UTF-8 (a stray, overlong or out-of-range byte)";
				return i;
			}
			break;
		case K_FF:
			c->err = "form feed (\\f) is not JSON whitespace";
			return i;
		case K_VT:
			c->err = "vertical tab (\\v) is not JSON whitespace";
			return i;
		}
		i++;
	}
	return n;
}
