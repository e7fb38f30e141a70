/* jscan.c - the value scanner of the second passes: a table-driven byte loop. */
#include "config.h"
#include "json/jscan.h"

/* Byte classes: inside a string only quotes and backslashes matter; outside,
 * quotes and brackets. */
enum { C_PLAIN = 0, C_QUOTE, C_BSLASH, C_OPEN, C_CLOSE };

static const unsigned char cls_str[256] = {['"'] = C_QUOTE, ['\\'] = C_BSLASH};
static const unsigned char cls_out[256] = {['"'] = C_QUOTE, ['{'] = C_OPEN, ['['] = C_OPEN,
					   ['}'] = C_CLOSE, [']'] = C_CLOSE};

int cm_jscan_feed(cm_jscan *sc, const char *s, size_t n, size_t *i)
{
	size_t k = *i;
	if (sc->scalar) { /* a number or literal: ends before , } ] or space */
		while (k < n && s[k] != ',' && s[k] != '}' && s[k] != ']' && !cm_jscan_ws(s[k]))
			k++;
		*i = k;
		return k < n;
	}
	while (k < n) {
		if (sc->in_str) {
			if (sc->esc) {
				sc->esc = 0;
				k++;
				continue;
			}
			while (k < n && cls_str[(unsigned char)s[k]] == C_PLAIN)
				k++;
			if (k == n)
				break;
			if (s[k++] == '\\') {
				sc->esc = 1;
				continue;
			}
			sc->in_str = 0;
			if (sc->depth == 0) { /* a string on its own ended */
				*i = k;
				return 1;
			}
			continue;
		}
		while (k < n && cls_out[(unsigned char)s[k]] == C_PLAIN)
			k++;
		if (k == n)
			break;
		switch (cls_out[(unsigned char)s[k++]]) {
		case C_QUOTE:
			sc->in_str = 1;
			break;
		case C_OPEN:
			sc->depth++;
			break;
		case C_CLOSE:
			if (--sc->depth == 0) {
				*i = k;
				return 1;
			}
			break;
		}
	}
	*i = k;
	return 0;
}
