/* strict.h - the fuzz harnesses' test of a JSON text as the program writes
 * it: yajl (no comments, strings validated) and the strict check
 * (json/jcheck.h: no NaN or Infinity, which yajl takes) over all of it.
 * fuzz.c checks the merge's output with it, fuzz_pftrace.c which inputs
 * are the program's own kind of text. */
#ifndef FUZZ_STRICT_H
#define FUZZ_STRICT_H

#include "json/jcheck.h"

#include <stddef.h>
#include <yajl/yajl_parse.h>

/* 1 when S[0..N) is one JSON text the program could write. */
static inline int fuzz_strict_valid(const char *s, size_t n)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	cm_jcheck c;
	int ok;
	yajl_config(h, yajl_allow_comments, 0);
	yajl_config(h, yajl_dont_validate_strings, 0);
	cm_jcheck_begin(&c);
	ok = cm_jcheck_feed(&c, s, n) == n && yajl_parse(h, (const unsigned char *)s, n) == yajl_status_ok &&
	     yajl_complete_parse(h) == yajl_status_ok && cm_jcheck_end(&c) == 0;
	yajl_free(h);
	return ok;
}

#endif
