/* jcheck.h - the strict-JSON rules that yajl does not enforce, checked in
 * front of every yajl pass so that every pass judges a text the same way.
 *
 * yajl 2 takes form feed and vertical tab as whitespace, accepts overlong
 * and surrogate UTF-8 sequences and nests without limit; Python's json (the
 * reference) and our hand-written readers (the splitter and its scanner,
 * docsplit.c and jscan.c; the validator, jvalid.c; jval.c; the copy,
 * cpu/cpucopy.c) do not.  A text that passes yajl and this check is one
 * that every one of them reads the same way. */
#ifndef CM_JCHECK_H
#define CM_JCHECK_H

#include <stddef.h>

/* The deepest nesting of arrays and objects accepted anywhere, counted from
 * the document's top (the top object is level 1).  Python's json gives up
 * near 1000; real traces nest a few levels.  Every parser of ours uses this
 * one number. */
#define CM_JSON_MAX_DEPTH 512

typedef struct cm_jcheck {
	int in_str, esc;   /* inside a string; just after a backslash */
	int hex;           /* hex digits of a \u escape still to come */
	int depth;         /* open arrays and objects */
	int need;          /* UTF-8 continuation bytes still expected */
	unsigned char lo, hi; /* the range of the next continuation byte */
	const char *err;   /* what is wrong, once cm_jcheck_feed stopped */
	/* Token boundaries in the piece last fed: the indexes of the first and
	 * the last punctuation byte outside a string (a bracket, a brace, a
	 * comma, a colon); CM_JCHECK_NONE when there is none. */
	size_t first_cut, last_cut;
} cm_jcheck;

#define CM_JCHECK_NONE ((size_t)-1)

/* Start checking a new text. */
void cm_jcheck_begin(cm_jcheck *c);

/* Check s[0..n), the next piece of the text.  Returns n when it is fine, or
 * the index of the first offending byte, with c->err set to a message
 * ("form feed is not JSON whitespace", ...).  Assumes nothing about where
 * the pieces are cut.  Sets first_cut and last_cut (within the checked
 * part). */
size_t cm_jcheck_feed(cm_jcheck *c, const char *s, size_t n);

/* The text has ended: 0, or -1 with c->err set when it ended inside a
 * string or a UTF-8 sequence.  (yajl takes an unterminated string after a
 * complete document, `{}"abc`, as the end of the text.) */
int cm_jcheck_end(cm_jcheck *c);

#endif
