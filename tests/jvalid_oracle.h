/* jvalid_oracle.h - what the reading path (yajl + jcheck, as saxread.c sets
 * them up) says about one value, for the tests of jvalid.c: the unit test
 * tests/unit/check_jvalid.c and the differential fuzz harness
 * tests/fuzz/fuzz_jvalid.c.
 *
 * cm_jvalid_value(X, depth0) is asked about a value inside DEPTH0 arrays or
 * objects.  The oracle asks yajl and jcheck about the document made of
 * DEPTH0 '[' + X + DEPTH0 ']' (X itself when DEPTH0 is 0), which holds X at
 * exactly that depth, so jcheck's depth count is the one the validator must
 * apply.  Accepting that document is not enough: X = "1,2" or "1],[2" would
 * pass.  So the callbacks watch the structure: the only containers opened
 * above depth DEPTH0 must be the DEPTH0 wrapping arrays, and exactly one
 * value may start at depth DEPTH0.  Then X is one value with blanks around
 * it.  The callbacks pass numbers through as text (yajl_number), as every
 * caller of saxread.c does: yajl then never converts a number, so no
 * "integer overflow" can refuse one. */
#ifndef JVALID_ORACLE_H
#define JVALID_ORACLE_H

#include "json/jcheck.h"
#include "json/jval.h"

#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

struct jvalid_oracle_count {
	int depth0;        /* the depth X sits at */
	int depth;         /* containers open now */
	int opens_outside; /* containers opened above depth0: the wrapping */
	int values_at;     /* values started at depth0 */
};

static int oracle_value(void *ctx)
{
	struct jvalid_oracle_count *c = ctx;
	if (c->depth == c->depth0)
		c->values_at++;
	return 1;
}
static int oracle_open(void *ctx)
{
	struct jvalid_oracle_count *c = ctx;
	if (c->depth < c->depth0)
		c->opens_outside++;
	oracle_value(ctx);
	c->depth++;
	return 1;
}
static int oracle_close(void *ctx)
{
	((struct jvalid_oracle_count *)ctx)->depth--;
	return 1;
}
static int oracle_null(void *ctx) { return oracle_value(ctx); }
static int oracle_bool(void *ctx, int b) { return (void)b, oracle_value(ctx); }
static int oracle_number(void *ctx, const char *s, size_t n) { return (void)s, (void)n, oracle_value(ctx); }
static int oracle_string(void *ctx, const unsigned char *s, size_t n)
{
	return (void)s, (void)n, oracle_value(ctx);
}
static int oracle_key(void *ctx, const unsigned char *s, size_t n) { return (void)ctx, (void)s, (void)n, 1; }

static const yajl_callbacks jvalid_oracle_callbacks = {
	oracle_null, oracle_bool, NULL, NULL, oracle_number, oracle_string,
	oracle_open, oracle_key, oracle_close, oracle_open, oracle_close,
};

/* The document of X at DEPTH0: malloc'd, its length in *LEN. */
static inline char *jvalid_oracle_wrap(const char *x, size_t n, int depth0, size_t *len)
{
	char *doc = malloc(n + 2 * (size_t)depth0 + 1);
	memset(doc, '[', (size_t)depth0);
	if (n)
		memcpy(doc + depth0, x, n);
	memset(doc + depth0 + n, ']', (size_t)depth0);
	*len = n + 2 * (size_t)depth0;
	return doc;
}

/* 1 when COUNT, filled while the document of DEPTH0 was accepted, shows
 * that X is exactly one value. */
static inline int jvalid_oracle_one_value(const struct jvalid_oracle_count *c)
{
	return c->opens_outside == c->depth0 && c->values_at == 1;
}

/* yajl + jcheck over the document in one piece, as saxread.c judges a text:
 * the strict check over every byte, yajl with comments off and strings
 * validated, the complete parse, the end of the strict check.  1 when X
 * is one valid value at DEPTH0. */
static inline int jvalid_oracle(const char *x, size_t n, int depth0)
{
	size_t len;
	char *doc = jvalid_oracle_wrap(x, n, depth0, &len);
	struct jvalid_oracle_count count = {depth0, 0, 0, 0};
	yajl_handle h = yajl_alloc(&jvalid_oracle_callbacks, NULL, &count);
	cm_jcheck c;
	int ok;
	yajl_config(h, yajl_allow_comments, 0);
	yajl_config(h, yajl_dont_validate_strings, 0);
	cm_jcheck_begin(&c);
	ok = cm_jcheck_feed(&c, doc, len) == len &&
	     yajl_parse(h, (const unsigned char *)doc, len) == yajl_status_ok &&
	     yajl_complete_parse(h) == yajl_status_ok && cm_jcheck_end(&c) == 0 &&
	     jvalid_oracle_one_value(&count);
	yajl_free(h);
	free(doc);
	return ok;
}

/* Node for node, A and B are the same value: what cm_jvalid_replay builds
 * through cm_jbuild_callbacks against what cm_jval_parse_py parses. */
static inline int jvalid_oracle_same_tree(const cm_jval *a, const cm_jval *b)
{
	if (!a || !b)
		return a == b;
	if (a->type != b->type || a->len != b->len || a->klen != b->klen || !a->key != !b->key ||
	    (a->key && memcmp(a->key, b->key, a->klen)))
		return 0;
	if (a->type == CM_J_STR || a->type == CM_J_NUM)
		return !memcmp(a->s, b->s, a->len);
	if (a->type == CM_J_ARR || a->type == CM_J_OBJ) {
		const cm_jval *x = a->kids, *y = b->kids;
		for (; x && y; x = x->next, y = y->next)
			if (!jvalid_oracle_same_tree(x, y))
				return 0;
		return !x && !y;
	}
	return 1;
}

#endif
