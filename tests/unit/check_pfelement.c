/* check_pfelement.c - the transcoder's reading of one traceEvents element
 * (pfparse.c) against the general parser's tree (cm_jval_parse_py), on
 * chosen texts: the tree node for node, or NULL where that is; and the
 * compact reading's members where it reads one.  check_pfparse.c has the
 * compact reading's details (spaces, nesting, the nodes' array).  These
 * two tests came from check_pbwrite; a program of their own rather than
 * check_pfparse.c's, which they would take to ~600 lines. */
#include "config.h"
#include "check_common.h"
#include "check_jtree.h"
#include "pftrace/pfintern.h"
#include "pftrace/pfevent.h"

/* pfparse.c's reading of an element is cm_jval_parse_py's tree, node for
 * node, or NULL where that is: on what it reads itself and on what it
 * leaves to it (escapes, NaN and Infinity, Python's number quirks, more
 * nodes than its array, text that is not JSON). */
START_TEST(element_parse)
{
	static const char *const texts[] = {
		"{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":5117756144365.792,\"dur\":1.5,\"args\":{\"a\":[1,-2,3e5,-0.5E-3,true,false,null,{}],\"b\":{\"c\":\"\"}}}",
		" {\n  \"ph\" : \"B\" ,\r\n\t\"ts\":0 , \"args\" : { } } \n",
		"{\"name\":\"a\\\"b\\u00e9\\ud83d\\ude00\",\"ph\":\"i\"}", /* escapes: the general parser's */
		"{\"k\\n\":1}",
		"{\"v\":NaN,\"w\":-Infinity,\"x\":Infinity}",
		"{\"v\":1.}", "{\"v\":01}", "{\"v\":1e}", "{\"v\":-}", "{\"v\":.5}", "{\"v\":1.5e+}",
		"{\"v\":tru}", "{\"v\":nul}", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":1", "{\"a\":\"x", "[1,2]", "\"s\"", "",
		"{\"a\":1} x", "{\"a\":\"tab\there\"}", "{\"a\":\"\x01\"}", "{\"\":0,\"\":1}",
		"{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}",
		"{\"long string value with no escape in it at all, past sixteen bytes\":\"0123456789abcdef0123456789abcdef\\\"\"}",
	};
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	cm_buf big = {0};
	size_t i;
	for (i = 0; i <= sizeof texts / sizeof *texts; i++) {
		const char *t;
		size_t n;
		const cm_jval *want, *got;
		if (i < sizeof texts / sizeof *texts) {
			t = texts[i];
		} else { /* 2,000 nodes: more than the array's first 256 */
			cm_buf_lit(&big, "{\"args\":[");
			for (int k = 0; k < 2000; k++)
				cm_buf_lit(&big, "7,");
			cm_buf_lit(&big, "8]}");
			cm_buf_putc(&big, 0);
			t = big.p;
		}
		n = strlen(t);
		cm_arena_reset(a);
		want = cm_jval_parse_py(a, t, n);
		for (int twice = 0; twice < 2; twice++) { /* the array grows after the first */
			got = cm_pf_parse(w, t, n);
			ck_assert_msg(check_same_tree(want, got), "not the general parser's tree: %s", t);
		}
	}
	cm_buf_free(&big);
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

/* The compact reading (cm_pf_parse_flat) fills the members the tree's
 * cm_pf_members finds, the same nodes and values, where it reads an
 * element; it reads an object without escapes (spaces and nested values
 * too: check_pfparse.c has more) and leaves the rest. */
START_TEST(element_flat)
{
	static const struct {
		const char *t;
		int flat;
	} cases[] = {
		{"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":1,\"tid\":7,\"ts\":5117756144328.248,\"dur\":49.984,"
		 "\"args\":{\"device\":1,\"context\":2,\"stream\":7,\"correlation\":50}}", 1},
		{"{\"ph\":\"f\",\"id\":50,\"pid\":1,\"tid\":7,\"ts\":5117756144328.248,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}", 1},
		{"{\"ph\":\"X\",\"name\":\"a\",\"name\":\"b\",\"args\":{},\"x\":{\"y\":null},\"ts\":-0,\"dur\":1e3,\"s\":true}", 1},
		{"{\"ph\":\"X\",\"args\":{\"a\":12345678901234567890,\"b\":-0.5,\"c\":1.2345,\"a\":\"x\"}}", 1},
		{"{\"ph\":\"X\",\"args\":{\"a\":[1]}}", 1},
		{"{\"ph\":\"X\",\"args\":{\"a\":{\"b\":1}}}", 1},
		{"{\"ph\": \"X\"}", 1},
		{"{\"ph\":\"X\"} ", 0},
		{"{\"p\\u0068\":\"X\"}", 0},
		{"{\"ph\":\"a\\\"b\"}", 0},
		{"{\"ph\":\"X\",}", 0},
		{"{\"ph\":01}", 0},
		{"{}", 1},
		{"[1]", 0},
	};
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	enum { NM = sizeof(struct ev) / sizeof(const cm_jval *) };
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *t = cases[i].t;
		size_t n = strlen(t);
		struct ev got, want;
		const cm_jval **g = (const cm_jval **)&got, **x = (const cm_jval **)&want, *tree;
		unsigned char has[NM];
		int64_t iv[NM];
		int flat = cm_pf_parse_flat(w, t, n, &got);
		ck_assert_msg(flat == cases[i].flat, "read compact %d, not %d: %s", flat, cases[i].flat, t);
		if (!flat)
			continue;
		/* the general parser's tree: the same members, text for text */
		cm_arena_reset(a);
		tree = cm_jval_parse_py(a, t, n);
		ck_assert(tree && tree->type == CM_J_OBJ);
		cm_pf_members(tree, &want);
		for (size_t k = 0; k < NM; k++) {
			ck_assert_msg(check_same_tree(g[k], x[k]), "member %zu not the tree's: %s", k, t);
			has[k] = g[k] ? g[k]->has_iv : 0;
			iv[k] = g[k] ? g[k]->iv : 0;
		}
		/* and the values pfparse.c's own tree keeps (it takes the nodes) */
		tree = cm_pf_parse(w, t, n);
		ck_assert(tree && tree->type == CM_J_OBJ);
		cm_pf_members(tree, &want);
		for (size_t k = 0; k < NM; k++)
			ck_assert_msg(!x[k] || (x[k]->has_iv == has[k] && (!has[k] || x[k]->iv == iv[k])),
				      "member %zu's value not the tree's: %s", k, t);
	}
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pfelement");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, element_parse);
	tcase_add_test(tc, element_flat);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
