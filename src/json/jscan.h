/* jscan.h - find where a JSON value ends in text already known to be valid
 * JSON (the second pass over an input): strings, escapes and bracket depth
 * are tracked, nothing is decoded.  Works across chunks. */
#ifndef CM_JSCAN_H
#define CM_JSCAN_H

#include <stddef.h>

typedef struct cm_jscan {
	int depth, in_str, esc, scalar;
} cm_jscan;

/* Start a value whose first byte is FIRST; then feed from that byte on. */
static inline void cm_jscan_begin(cm_jscan *sc, char first)
{
	sc->depth = 0;
	sc->in_str = 0;
	sc->esc = 0;
	sc->scalar = first != '"' && first != '{' && first != '[';
}

/* Advance over s[*i..n).  Returns 1 when the value ended: a string or
 * container at s[*i - 1] (its last byte, consumed), a number or literal at
 * s[*i] (the byte after it, not consumed).  Returns 0 when the chunk ran out
 * first (*i == n). */
int cm_jscan_feed(cm_jscan *sc, const char *s, size_t n, size_t *i);

/* 1 for JSON whitespace. */
static inline int cm_jscan_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Advance *I past JSON whitespace in S[*I..N). */
static inline void cm_jscan_skip_ws(const char *s, size_t n, size_t *i)
{
	while (*i < n && cm_jscan_ws(s[*i]))
		(*i)++;
}

#endif
