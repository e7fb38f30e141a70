/* batchtok.h - whole tokens for the plan's yajl (batchread.c), as the
 * merge's careful reader gives them (and why: json/saxread.c).  yajl keeps
 * a token cut by a read's end and lexes it again from its first byte with
 * every read: a member's string near its bound of 256 MiB cost 64 passes
 * over itself (5 s) and was held whole (270 MB) before it was refused.
 * The token a read ends in waits in `pending`, past an element's bound in
 * a temporary file (only a member's value is longer), and goes to yajl
 * with the head of the next read that ends it, so a token is lexed once.
 * Where a read ends, inside a string or not, the caller knows from the
 * bounds' watchers (json/docsplit.h), which see every byte before yajl:
 * then the token's first byte is a look back from the read's end, and the
 * pending token's last a look on from the next read's start, a few bytes
 * each.  A scan of every byte for the cuts (btok_cuts) cost the plan 11 %
 * more CPU for a gzip window, 16 % for a plain one; it is left for a text
 * the watchers gave up on (not a document they know).  yajl's verdict
 * does not depend on where its pieces are cut, so the cuts need no strict
 * check (jcheck.h, which the careful reader has anyway, cost the plan a
 * quarter more time): they follow strings alone, and a wrong cut in a
 * text that is no JSON costs a token held by yajl, not a wrong answer. */
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
	size_t first_cut, last_cut; /* btok_cuts: the read's first and last punctuation outside a string */
	cm_spillbuf pending;  /* a token cut by a read's end */
	uint64_t pending_at;  /* its text offset */
	size_t spill_at;      /* pending past it goes to a file */
	uint64_t err_at;      /* after BTOK_ERROR: the text offset where yajl stopped */
};
/* BTOK_STOP: a callback stopped the parse; BTOK_SPILL: pending's file failed (reported) */
enum { BTOK_OK, BTOK_STOP, BTOK_ERROR, BTOK_SPILL };

/* S[0..N), the next read at text offset AT (every byte once, in order), to
 * yajl in whole tokens: the token it ends in waits in pending.  END: where
 * S ends, as cm_docsplit_watch_in_string says (1 inside a string, 3 after
 * a backslash in one, 0 out of strings), or -1 when unknown: S is then
 * scanned for its cuts.  One of the BTOK_ values. */
int btok_feed(struct btok *p, const char *s, size_t n, uint64_t at, int end);

/* The text has ended (or yajl is to have all of it now): the pending token
 * to yajl, and pending emptied.  One of the BTOK_ values. */
int btok_flush(struct btok *p);

#endif
