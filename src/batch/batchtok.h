/* batchtok.h - whole tokens for the plan's yajl (batchscan.c), as the
 * merge's careful reader gives them (and why: json/saxread.c).  yajl keeps
 * a token cut by a read's end and lexes it again from its first byte with
 * every read: a member's string near its bound of 256 MiB cost 64 passes
 * over itself (5 s) and was held whole (270 MB) before it was refused.
 * The tail of a read from its last punctuation byte outside a string on
 * waits in `pending`, past an element's bound in a temporary file (only a
 * member's value is longer), and goes to yajl with the head of the next
 * read, so a token is lexed once; a long run of white space goes at once.
 * yajl's verdict does not depend on where its pieces are cut, so the cuts
 * need no strict check (jcheck.h, which the careful reader has anyway,
 * cost the plan a quarter more time): batchtok.c follows strings alone,
 * 16 bytes a step. */
#ifndef CM_BATCHTOK_H
#define CM_BATCHTOK_H

#include "json/spillbuf.h"

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

/* The caller sets h and spill_at, the rest zero; frees pending at the end. */
struct btok {
	yajl_handle h;
	int in_str, esc;      /* the text read so far ends inside a string; after a backslash */
	size_t first_cut, last_cut; /* the read's first and last punctuation outside a string */
	cm_spillbuf pending;  /* a token cut by a read's end */
	uint64_t pending_at;  /* its text offset */
	size_t spill_at;      /* pending past it goes to a file */
	uint64_t err_at;      /* after BTOK_ERROR: the text offset where yajl stopped */
};
/* BTOK_STOP: a callback stopped the parse; BTOK_SPILL: pending's file failed (reported) */
enum { BTOK_OK, BTOK_STOP, BTOK_ERROR, BTOK_SPILL };

/* S[0..N), the next read at text offset AT (every byte once, in order), to
 * yajl in whole tokens: the tail after its last cut waits in pending.  One
 * of the BTOK_ values. */
int btok_feed(struct btok *p, const char *s, size_t n, uint64_t at);

/* The text has ended (or yajl is to have all of it now): the pending token
 * to yajl, and pending emptied.  One of the BTOK_ values. */
int btok_flush(struct btok *p);

#endif
