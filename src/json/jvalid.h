/* jvalid.h - a fast strict JSON validator for one value held in memory.
 *
 * It accepts exactly the texts that the reading path accepts, yajl 2 (no
 * comments, strings UTF-8 validated) together with the strict check of
 * jcheck.h: whitespace is space, tab, LF and CR only; strings hold no raw
 * byte below 0x20 and are well-formed UTF-8 (no overlongs, no UTF-16
 * surrogates, nothing beyond U+10FFFF); escapes are \" \\ \/ \b \f \n \r \t
 * and \u with four hex digits, any four (a lone surrogate escape such as
 * \ud800 is accepted, as yajl accepts it); numbers follow
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? with no limit on their
 * size; arrays and objects nest at most CM_JSON_MAX_DEPTH deep, counted
 * from the top of the document.  For the engine's worker threads, which
 * check one array element at a time at memory speed and leave the
 * user-facing message to a rerun of the slow yajl path. */
#ifndef CM_JVALID_H
#define CM_JVALID_H

#include <stddef.h>
#include <yajl/yajl_parse.h>
#include "json/jcheck.h" /* CM_JSON_MAX_DEPTH */
#include "json/jval.h"

/* cm_jvalid_prefix's answer when the text ran out before the value ended. */
#define CM_JVALID_SHORT (-1)

/* Validate S[0..N) as exactly one JSON value, with nothing else but JSON
 * whitespace (space, tab, LF, CR) before and after it, so that an array
 * element may be handed over with or without the blanks around it.  The
 * value sits inside DEPTH0 enclosing arrays and objects of its document
 * (0: it is the document; 2 for an element of {"traceEvents": [...]}): a
 * container of its own at nesting N within it is refused when DEPTH0 + N
 * exceeds CM_JSON_MAX_DEPTH, as jcheck refuses it.  DEPTH0 must be >= 0.
 * Returns 1 when the value is valid; 0 when it is not, with *BAD (when BAD
 * is not NULL) the offset of the first byte found wrong, or N when the text
 * ends too early.  An empty or all-blank text is not a value.  Reads no byte
 * outside S[0..N); S needs no NUL after it. */
int cm_jvalid_value(const char *s, size_t n, int depth0, size_t *bad);

/* Validate the JSON value at the start of S[0..N) (JSON whitespace before
 * it is skipped) and find where it ends, for a splitter that does not know
 * the value's length beforehand.  DEPTH0 as for cm_jvalid_value.  Returns:
 *   1               the value is valid; *AT = the offset just past its last
 *                   byte (whatever follows is not looked at);
 *   0               the text is not JSON; *AT = the first byte found wrong;
 *   CM_JVALID_SHORT every byte of S[0..N) can begin a valid value but the
 *                   value does not end within them: more text is needed.
 *                   A number that runs to S[N] is SHORT too, since its next
 *                   digits may be beyond N.  *AT = N.
 * Every byte before *AT has been checked, so a SHORT answer never hides an
 * error in S[0..N). */
int cm_jvalid_prefix(const char *s, size_t n, int depth0, size_t *at);

/* Validate S[0..N) as cm_jvalid_value does and, in the same pass, make the
 * yajl callbacks that a parse of it would make (null, boolean, number,
 * string, start_map, map_key, end_map, start_array, end_array; numbers go
 * to number as their text; integer and double are not used), for the
 * tokens that lie inside at most MAXDEPTH of the value's own containers:
 * with MAXDEPTH 0, the value itself (a scalar, or an empty-handed start and
 * end of its top container); with 1, also its members or elements and, for
 * one that is a container, its start and end; INT_MAX for every token.
 * Strings with escapes are decoded into ARENA as cm_jval_parse_py decodes
 * them.  A callback is made when its token has been judged valid, so the
 * callbacks of an invalid text stop at its first wrong byte, or earlier.
 * Returns 1 when the text is valid and every callback returned non-zero; 0
 * when the text is not valid, or a callback returned 0 (the text is then
 * not judged further).  Replaces a validation followed by a tokenizer: the
 * bytes are walked once. */
int cm_jvalid_replay(const char *s, size_t n, int depth0, int maxdepth, const yajl_callbacks *cb, void *ctx,
		     cm_arena *arena);

/* The replay into cm_jbuild_callbacks with MAXDEPTH INT_MAX, with the
 * builder's calls made inline rather than through callbacks: validate
 * S[0..N) as cm_jvalid_value does and build its tree into TREE (begun by
 * the caller, with its arena and borrow; escaped strings are decoded into
 * that arena).  With the borrow, numbers point into S too (no NUL after
 * them); a number that is an integer literal fitting an int64 has its
 * value in iv (has_iv).  Returns 1 when the text is valid, TREE->root then
 * the tree; 0 when it is not (the nodes made are the caller's to discard). */
int cm_jvalid_build(const char *s, size_t n, int depth0, cm_jbuild *tree);

#endif
