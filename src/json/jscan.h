/* jscan.h - find where a JSON value ends: strings, escapes and bracket
 * depth are tracked, nothing is decoded, so a text that is not JSON is not
 * noticed here (the splitter's values are checked after it cuts them,
 * json/jvalid.c; the copy's, cpu/cpucopy.c, were checked by phase 1).
 * Works across chunks. */
#ifndef CM_JSCAN_H
#define CM_JSCAN_H

#include <stddef.h>
#include <stdint.h>

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

/* The elements of an array, many at a time: from S[*I], inside an element
 * that is an object or an array (SC's depth above 0) and that began at
 * *START (the caller's number for it: an offset in S, or a mark of its own
 * for one that began in an earlier chunk), find where it ends; when what
 * follows is the usual gap (blanks, a comma, blanks, and '{' or '['), go
 * on in the next element, which begins at that bracket, and so on.  Each
 * element that ended is recorded in SPANS as two numbers, its start and
 * the offset just past its last byte.  Returns the number recorded, and
 * stops when
 *   - the chunk ran out inside an element: *I == N, *AFTER 0, SC and
 *     *START that element's (its start may be one the call found);
 *   - an element ended and what follows is not the usual gap (or the gap
 *     runs to N), or it ended at STOP or past it, or MAX were recorded:
 *     *AFTER 1 and *I just past it (the gap is the caller's).
 * S is at most 4 GiB.  The ends are those cm_jscan_feed finds, element by
 * element; only faster (a 64-byte block's masks serve every element in
 * it). */
size_t cm_jscan_elements(cm_jscan *sc, const char *s, size_t n, size_t *i, uint32_t *start, uint32_t *spans,
			 size_t max, size_t stop, int *after);

/* 1 when S[0..N) holds a control byte (below 0x20) that is not JSON
 * whitespace: no JSON text holds one, inside a string or out (yajl and
 * jcheck.c refuse it where it stands).  The splitter asks it of what it
 * holds across chunks, which is otherwise taken unjudged. */
int cm_jscan_has_ctl(const char *s, size_t n);

/* 1 for JSON whitespace. */
static inline int cm_jscan_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* After a value that ended at S[I]: when S[I..N) holds blanks, a comma,
 * blanks and then '{' or '[' (the usual gap between the elements of an
 * array of containers), the offset just past that bracket; else 0. */
static inline size_t cm_jscan_gap(const char *s, size_t n, size_t i)
{
	while (i < n && cm_jscan_ws(s[i]))
		i++;
	if (i >= n || s[i] != ',')
		return 0;
	i++;
	while (i < n && cm_jscan_ws(s[i]))
		i++;
	if (i >= n || (s[i] != '{' && s[i] != '['))
		return 0;
	return i + 1;
}

/* Advance *I past JSON whitespace in S[*I..N). */
static inline void cm_jscan_skip_ws(const char *s, size_t n, size_t *i)
{
	while (*i < n && cm_jscan_ws(s[*i]))
		(*i)++;
}

#endif
