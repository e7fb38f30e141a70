/* jcheck.c - whitespace, UTF-8 and depth, judged once for every pass.
 *
 * The check runs over the raw text beside yajl (saxread.c), so it only has
 * to know what yajl does not: it tracks strings (to count brackets outside
 * them) and UTF-8 sequences, and trusts yajl with the rest of the syntax.
 * Form feed and vertical tab are refused anywhere: outside a string they are
 * not JSON whitespace, inside one they are raw control characters.  On the
 * way it notes where punctuation tokens start, so that saxread.c can hand
 * yajl whole tokens (see there why). */
#include "config.h"
#include "json/jcheck.h"

#define DEPTH_TEXT_(n) #n
#define DEPTH_TEXT(n) DEPTH_TEXT_(n)

/* Byte classes.  Plain bytes are skipped in a tight loop; whitespace,
 * commas and colons are plain inside a string. */
enum { K_PLAIN = 0, K_WS, K_PUNCT, K_QUOTE, K_BSLASH, K_OPEN, K_CLOSE, K_HIGH, K_FF, K_VT, K_CTRL };

static const unsigned char cls[256] = {
	[' '] = K_WS, ['\t'] = K_WS, ['\n'] = K_WS, ['\r'] = K_WS, [','] = K_PUNCT, [':'] = K_PUNCT,
	['"'] = K_QUOTE, ['\\'] = K_BSLASH, ['{'] = K_OPEN, ['['] = K_OPEN, ['}'] = K_CLOSE,
	[']'] = K_CLOSE, ['\f'] = K_FF, ['\v'] = K_VT,
	/* the other C0 bytes: no token holds one, and yajl, which refuses
	 * it, would first be handed all the bytes up to the token's end
	 * (saxread.c), a pipe of NULs for ever (after '"' too, a string of
	 * them); escaped, yajl's to judge (its message for a bad escape) */
	[0x00] = K_CTRL, [0x01] = K_CTRL, [0x02] = K_CTRL, [0x03] = K_CTRL, [0x04] = K_CTRL,
	[0x05] = K_CTRL, [0x06] = K_CTRL, [0x07] = K_CTRL, [0x08] = K_CTRL, [0x0e] = K_CTRL,
	[0x0f] = K_CTRL, [0x10] = K_CTRL, [0x11] = K_CTRL, [0x12] = K_CTRL, [0x13] = K_CTRL,
	[0x14] = K_CTRL, [0x15] = K_CTRL, [0x16] = K_CTRL, [0x17] = K_CTRL, [0x18] = K_CTRL,
	[0x19] = K_CTRL, [0x1a] = K_CTRL, [0x1b] = K_CTRL, [0x1c] = K_CTRL, [0x1d] = K_CTRL,
	[0x1e] = K_CTRL, [0x1f] = K_CTRL,
#define H16(b) [b] = K_HIGH, [b + 1] = K_HIGH, [b + 2] = K_HIGH, [b + 3] = K_HIGH, \
	[b + 4] = K_HIGH, [b + 5] = K_HIGH, [b + 6] = K_HIGH, [b + 7] = K_HIGH, [b + 8] = K_HIGH, \
	[b + 9] = K_HIGH, [b + 10] = K_HIGH, [b + 11] = K_HIGH, [b + 12] = K_HIGH, \
	[b + 13] = K_HIGH, [b + 14] = K_HIGH, [b + 15] = K_HIGH
	H16(0x80), H16(0x90), H16(0xa0), H16(0xb0), H16(0xc0), H16(0xd0), H16(0xe0), H16(0xf0),
#undef H16
};

void cm_jcheck_begin(cm_jcheck *c)
{
	c->in_str = c->esc = c->hex = c->depth = c->need = 0;
	c->lo = c->hi = 0;
	c->err = NULL;
	c->first_cut = c->last_cut = CM_JCHECK_NONE;
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

/* A punctuation token starts at index AT of the piece. */
static inline void cut_at(cm_jcheck *c, size_t at)
{
	if (c->first_cut == CM_JCHECK_NONE)
		c->first_cut = at;
	c->last_cut = at;
}

size_t cm_jcheck_feed(cm_jcheck *c, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	c->first_cut = c->last_cut = CM_JCHECK_NONE;
	while (i < n) {
		unsigned char b = u[i];
		int k;
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
		k = cls[b];
		if (c->in_str) {
			if (c->esc) { /* the escaped byte: yajl judges it, unless it is high or FF/VT */
				c->esc = 0;
				c->hex = b == 'u' ? 4 : 0;
				if (k <= K_CLOSE || k == K_CTRL) {
					i++;
					continue;
				}
			} else if (c->hex) { /* \uXXXX: a control byte among them, in yajl's words */
				c->hex--;
				if (k == K_CTRL) {
					c->err = "invalid (non-hex) character occurs after '\\u' inside string";
					return i;
				}
			}
			switch (k) {
			case K_PLAIN:
			case K_WS:
			case K_PUNCT:
			case K_OPEN:
			case K_CLOSE:
				i++;
				while (!c->hex && i < n && cls[u[i]] <= K_PUNCT)
					i++;
				continue;
			case K_QUOTE:
				c->in_str = 0;
				break;
			case K_BSLASH:
				c->esc = 1;
				break;
			}
		} else {
			switch (k) {
			case K_PLAIN: /* a number or a literal */
			case K_WS:
				i++;
				while (i < n && cls[u[i]] <= K_WS)
					i++;
				continue;
			case K_PUNCT:
				cut_at(c, i);
				break;
			case K_QUOTE:
				c->in_str = 1;
				break;
			case K_OPEN:
				if (++c->depth > CM_JSON_MAX_DEPTH) {
					c->err = "nesting deeper than " DEPTH_TEXT(CM_JSON_MAX_DEPTH) " levels";
					return i;
				}
				cut_at(c, i);
				break;
			case K_CLOSE:
				if (c->depth > 0)
					c->depth--;
				cut_at(c, i);
				break;
			}
		}
		switch (k) { /* what is wrong in or out of a string */
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
		case K_CTRL: /* in a string, in yajl's words for it */
			c->err = c->in_str ? "invalid character inside string" : "a control byte outside a string";
			return i;
		}
		i++;
	}
	return n;
}

int cm_jcheck_end(cm_jcheck *c)
{
	if (c->in_str || c->need) {
		c->err = "trailing garbage (the text ends inside a string)";
		return -1;
	}
	return 0;
}
