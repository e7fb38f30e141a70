/* check_pfparse.c - the Perfetto transcoder's reading of an element
 * straight into its members (pfparse.c's cm_pf_parse_flat) on the text
 * it took over from the tree's reading: spaces of any run between the
 * tokens (an indented CPU trace's elements), nested args (objects and
 * arrays), the nesting limit and the nodes' array; against the general
 * parser's tree (cm_jval_parse_py, then cm_pf_members), node for node. */
#include "config.h"
#include "check_common.h"
#include "check_jtree.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfkeys.h"
#include "json/jcheck.h"
#include "base/pyval.h"

#include <stdint.h>
#include <stdlib.h>

enum { NM = sizeof(struct ev) / sizeof(const cm_jval *) };

/* The element T[0..N) read the compact way gives FLAT (1: read, 0: left
 * to the tree); where read, the members the general parser's tree gives,
 * with the values (has_iv, iv) pfparse.c's own tree keeps. */
static void check_flat(cm_pfev *w, cm_arena *a, const char *t, size_t n, int flat)
{
	struct ev got, want;
	const cm_jval **g = (const cm_jval **)&got, **x = (const cm_jval **)&want, *tree;
	unsigned char has[NM];
	int64_t iv[NM];
	int f = cm_pf_parse_flat(w, t, n, &got);
	ck_assert_msg(f == flat, "read compact %d, not %d: %.*s", f, flat, (int)(n < 300 ? n : 300), t);
	if (!f)
		return;
	cm_arena_reset(a);
	tree = cm_jval_parse_py(a, t, n);
	ck_assert_msg(tree && tree->type == CM_J_OBJ, "read compact, not an object to the general parser: %.*s",
		      (int)(n < 300 ? n : 300), t);
	cm_pf_members(tree, &want);
	for (size_t k = 0; k < NM; k++) {
		ck_assert_msg(check_same_tree(g[k], x[k]), "member %zu not the tree's: %.*s", k, (int)(n < 300 ? n : 300), t);
		has[k] = g[k] ? g[k]->has_iv : 0;
		iv[k] = g[k] ? g[k]->iv : 0;
	}
	tree = cm_pf_parse(w, t, n); /* (it takes the nodes: the compact members are gone) */
	ck_assert(tree && tree->type == CM_J_OBJ);
	cm_pf_members(tree, &want);
	for (size_t k = 0; k < NM; k++)
		ck_assert_msg(!x[k] || (x[k]->has_iv == has[k] && (!has[k] || x[k]->iv == iv[k])),
			      "member %zu's value not the tree's: %.*s", k, (int)(n < 300 ? n : 300), t);
}

static uint64_t next(uint64_t *r)
{
	*r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
	return *r;
}

/* An element's tokens, as Kineto writes a CPU op (and more kinds of
 * value): spaces may stand between any two. */
static const char *const tokens[] = {
	"{", "\"ph\"", ":", "\"X\"", ",", "\"cat\"", ":", "\"cpu_op\"", ",", "\"name\"", ":",
	"\"aten::linear with a name past sixteen bytes\"", ",", "\"pid\"", ":", "38303", ",", "\"tid\"", ":",
	"38315", ",", "\"ts\"", ":", "5117756144348.624", ",", "\"dur\"", ":", "40.718", ",", "\"args\"", ":",
	"{", "\"External id\"", ":", "1", ",", "\"Input Dims\"", ":", "[", "[", "16", ",", "1024", "]", ",", "[",
	"]", ",", "[", "4096", "]", "]", ",", "\"Input type\"", ":", "[", "\"float\"", ",", "\"\"", "]", ",",
	"\"Concrete Inputs\"", ":", "[", "\"\"", ",", "\"0.5\"", ",", "null", ",", "true", ",", "false", "]",
	",", "\"o\"", ":", "{", "\"x\"", ":", "{", "}", ",", "\"y\"", ":", "-1.5e3", "}", ",", "\"Ev Idx\"",
	":", "1", "}", "}",
};

/* Spaces of every run from none to 40 bytes (past the 16-byte blocks),
 * of the four that JSON takes, between every two tokens: read compact,
 * the general parser's members. */
START_TEST(spaces_and_nesting)
{
	static const char sp[4] = {' ', '\n', '\t', '\r'};
	uint64_t rng = 0x2545F4914F6CDD1Du + (uint64_t)_i;
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	cm_buf b = {0};
	for (int round = 0; round < 500; round++) {
		int most = (int)(next(&rng) % 41); /* the longest run this time */
		b.len = 0;
		for (size_t k = 0; k < sizeof tokens / sizeof *tokens; k++) {
			int run = k ? (int)(next(&rng) % (unsigned)(most + 1)) : 0;
			if (run && next(&rng) % 3 == 0)
				run = 0; /* compact here and there */
			for (int j = 0; j < run; j++)
				cm_buf_putc(&b, sp[next(&rng) % 4]);
			cm_buf_put(&b, tokens[k], strlen(tokens[k]));
		}
		cm_pf_parse(w, b.p, b.len); /* (the nodes' array grown) */
		check_flat(w, a, b.p, b.len, 1);
	}
	/* the indented layout as Kineto writes it */
	{
		static const char kineto[] = "{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::copy_\", \"pid\": 38303, "
					     "\"tid\": 38315,\n    \"ts\": 5117756144348.624, \"dur\": 40.718,\n    \"args\": "
					     "{\n      \"External id\": 1,\"Record function id\": 0, \"Ev Idx\": 1\n    }\n  }";
		check_flat(w, a, kineto, sizeof kineto - 1, 1);
	}
	cm_buf_free(&b);
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

/* What it leaves to the tree's reading (0), at every place against the
 * 16-byte blocks: an escape or a raw control byte in a key or a string, a
 * byte between tokens that is not one of JSON's spaces, text that is not
 * one object. */
START_TEST(leaves)
{
	static const char *const cases[] = {
		"{\"ph\":\"X\",\"name\":\"@\"}",       /* @: the escape, in a string */
		"{\"ph\":\"X\",\"na@me\":\"a\"}",      /* in a key */
		"{\"ph\":\"X\",\"args\":{\"k@\":1}}",   /* in a nested key */
		"{\"ph\":\"X\",\"args\":[\"@\"]}",      /* in an array */
		"{\"ph\":\"X\",@\"name\":\"a\"}",      /* @: a byte between tokens */
		"{\"ph\":\"X\",\"args\":{\"k\":1@}}",
		"{\"ph\":\"X\",\"args\":[1,@2]}",
	};
	static const char *const subs[] = {"\\\"", "\\n", "\\u0041", "\x01", "\x1f", "\x0b", "\x0c", "x"};
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	cm_buf b = {0};
	cm_pf_parse(w, "{}", 2); /* (the nodes' array made) */
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		for (size_t s = 0; s < sizeof subs / sizeof *subs; s++)
			for (int pad = 0; pad < 40; pad++) {
				const char *at = strchr(cases[i], '@');
				int in_string = at[-1] != ',' && at[1] != '}' && at[1] != '2';
				const cm_jval *tree;
				int flat;
				b.len = 0;
				cm_buf_put(&b, cases[i], (size_t)(at - cases[i]));
				if (in_string)
					for (int j = 0; j < pad; j++)
						cm_buf_putc(&b, (char)('a' + j % 26));
				else
					for (int j = 0; j < pad; j++)
						cm_buf_putc(&b, " \n\t\r"[j % 4]);
				cm_buf_put(&b, subs[s], strlen(subs[s]));
				cm_buf_put(&b, at + 1, strlen(at + 1));
				/* read compact only where it is plain JSON text that the
				 * compact reading takes: an "x" in a string */
				flat = in_string && !strcmp(subs[s], "x");
				check_flat(w, a, b.p, b.len, flat);
				/* and the tree's reading is the general parser's either way */
				cm_arena_reset(a);
				tree = cm_pf_parse(w, b.p, b.len);
				ck_assert_msg(!tree == !cm_jval_parse_py(a, b.p, b.len), "not the general parser's: %.*s",
					      (int)b.len, b.p);
			}
	{
		static const char *const whole[] = {"{\"ph\":\"X\"} ", " {\"ph\":\"X\"}", "{\"ph\":\"X\",}", "{\"ph\":\"X\"}}",
						    "{\"ph\":\"X\",\"args\":{\"a\":1,}}", "{\"ph\":\"X\",\"args\":[1,]}",
						    "{\"ph\":\"X\",\"args\":{\"a\":1}", "{\"ph\" \"X\"}", "{\"ph\":\"X\" \"s\":1}",
						    "{,}", "{ }x", "{\"ph\":01}", "{\"ph\":1.}", "{\"ph\":-}", "{\"ph\":nul}",
						    "{\"a\":{\"b\":[{\"c\":[]}]} }"};
		for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
			check_flat(w, a, whole[i], strlen(whole[i]), i == sizeof whole / sizeof *whole - 1);
		check_flat(w, a, "{ \n}", 4, 1);
	}
	cm_buf_free(&b);
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

/* The separators that pfparse.c tests first (a key's colon with one
 * space or none after it, a comma with one space or none before the next
 * quote), and their neighbours that the general steps take: read compact
 * with the general parser's members where it is JSON, left to it where
 * not, also where the text ends right after them. */
START_TEST(separators)
{
	static const struct {
		const char *t;
		int flat;
	} cases[] = {
		{"{\"ph\":\"X\",\"ts\":1,\"name\":\"a\"}", 1},        /* compact */
		{"{\"ph\": \"X\", \"ts\": 1, \"name\": \"a\"}", 1},    /* indented */
		{"{\"ph\":  \"X\",  \"ts\" : 1 ,\"name\":\t\"a\"}", 1}, /* the general steps */
		{"{\"ph\":\n\"X\",\n\"ts\":\r1,\r\"name\":\"a\"}", 1},
		{"{\"args\":[\"a\", \"b\",\"c\", 1, 2,3, [\"d\"], {\"e\": \"f\",\"g\":[]}]}", 1},
		{"{\"args\":{\"a\": 1, \"b\":2}, \"ph\": \"X\"}", 1},
		{"{\"ph\":\"X\", \"}", 0},  /* a comma, then a quote that opens no key */
		{"{\"ph\":\"X\",\"}", 0},
		{"{\"ph\":\"X\",\"\"}", 0}, /* a key without its colon */
		{"{\"ph\":\"X\", \"a\"}", 0},
		{"{\"ph\":\"X\", \"a\":}", 0}, /* a colon, no value */
		{"{\"ph\":\"X\", \"a\": }", 0},
		{"{\"ph\":\"X\", \"a\":,\"b\":1}", 0},
		{"{\"ph\":\"X\", \"a\": ,\"b\":1}", 0},
		{"{\"ph\":\"X\",, \"a\":1}", 0},
		{"{\"ph\":\"X\", , \"a\":1}", 0},
		{"{\"ph\":\"X\",\"args\":[\"a\",]}", 0},
		{"{\"ph\":\"X\",\"args\":[\"a\", ]}", 0},
		{"{\"ph\":\"X\",\"args\":{\"a\":1, }}", 0},
		{"{\"a\":", 0},
		{"{\"a\": ", 0},
		{"{\"a\":1,", 0},
		{"{\"a\":1, \"", 0},
	};
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	cm_pf_parse(w, "{}", 2); /* (the nodes' array made) */
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t n = strlen(cases[i].t);
		char *t = malloc(n); /* (no byte after it, for the sanitizers) */
		const cm_jval *tree;
		memcpy(t, cases[i].t, n);
		check_flat(w, a, t, n, cases[i].flat);
		/* the tree's reading too: the general parser's either way */
		cm_arena_reset(a);
		tree = cm_pf_parse(w, t, n);
		ck_assert_msg(!tree == !cm_jval_parse_py(a, t, n), "not the general parser's: %s", cases[i].t);
		ck_assert_msg(!tree == !cases[i].flat, "%s: %s", tree ? "read" : "refused", cases[i].t);
		free(t);
	}
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

/* Args nested up to the general parser's limit (CM_JSON_MAX_DEPTH,
 * counting the element's own object) read compact; one more is left to
 * it (which refuses it), as the tree's reading does. */
START_TEST(depth_limit)
{
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	cm_buf b = {0};
	for (int depth = CM_JSON_MAX_DEPTH - 2; depth <= CM_JSON_MAX_DEPTH + 1; depth++) {
		const cm_jval *want;
		int arr = _i; /* arrays, or objects */
		b.len = 0;
		cm_buf_lit(&b, "{\"ph\":\"X\",\"args\":");
		for (int k = 1; k < depth; k++)
			cm_buf_put(&b, arr ? "[" : "{\"k\":", arr ? 1 : 5);
		cm_buf_putc(&b, '1');
		for (int k = 1; k < depth; k++)
			cm_buf_putc(&b, arr ? ']' : '}');
		cm_buf_putc(&b, '}');
		cm_pf_parse(w, b.p, b.len); /* (the nodes' array grown) */
		cm_pf_parse(w, b.p, b.len);
		cm_arena_reset(a);
		want = cm_jval_parse_py(a, b.p, b.len);
		ck_assert_msg(!want == (depth > CM_JSON_MAX_DEPTH), "the general parser at depth %d", depth);
		check_flat(w, a, b.p, b.len, depth <= CM_JSON_MAX_DEPTH);
	}
	cm_buf_free(&b);
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

/* An element of more values than the nodes' array holds is left to the
 * tree's reading, which grows the array: read compact the next time. */
START_TEST(nodes_array)
{
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	cm_arena *a = cm_arena_new();
	cm_buf b = {0};
	size_t cap;
	cm_pf_parse(w, "{}", 2);
	cap = w->nodes_cap;
	cm_buf_lit(&b, "{\"ph\":\"X\",\"args\":{");
	for (size_t k = 0; k <= cap; k++) {
		char m[32];
		cm_buf_put(&b, m, (size_t)snprintf(m, sizeof m, "%s\"k%zu\": %zu", k ? ", " : "", k, k));
	}
	cm_buf_lit(&b, "}}");
	check_flat(w, a, b.p, b.len, 0);
	ck_assert_uint_eq(w->nodes_cap, cap);
	ck_assert(cm_pf_parse(w, b.p, b.len) != NULL);
	ck_assert_uint_gt(w->nodes_cap, cap);
	check_flat(w, a, b.p, b.len, 1);
	cm_buf_free(&b);
	cm_arena_free(a);
	cm_pfev_free(w);
}
END_TEST

/* A number of every shape (1 to 20 integer digits, with a leading zero
 * or not, 0 to 17 decimals, an exponent, a sign) with room after it (its
 * digits read eight at a time, pfparse.c's digits()) and right at an
 * element's end (the last ones one by one): the same node, text and kept
 * value either way, the value its text's readers make of it
 * (cm_py_int_of_number, cm_pf_us_to_ns), or both left to the general
 * parser. */
START_TEST(number_block)
{
	static const char tail[] = ",\"pad\":\"0123456789abcdef0123456789abcdef\"}";
	uint64_t rng = 0x9E3779B97F4A7C15u + (uint64_t)_i;
	cm_pfev *w = cm_pfev_new(NULL, "<test>");
	char num[64], lng[128], sht[80];
	int blocks = 0;
	for (int i = 0; i < 100000; i++) {
		size_t n = 0;
		int ip = 1 + (int)(next(&rng) % 20), fp = (int)(next(&rng) % 18), shape = (int)(next(&rng) % 8);
		const cm_jval *a, *b;
		if (next(&rng) % 3 == 0)
			num[n++] = '-';
		for (int k = 0; k < ip; k++) /* a leading zero 1 in 8 */
			num[n++] = (char)('0' + (k || shape == 7 ? next(&rng) % 10 : 1 + next(&rng) % 9));
		if (shape >= 2 && fp) {
			num[n++] = '.';
			for (int k = 0; k < fp; k++)
				num[n++] = (char)('0' + next(&rng) % 10);
		} else if (shape == 1) {
			num[n++] = '.'; /* no digit after: not a number */
		}
		if (shape == 6)
			n += (size_t)snprintf(num + n, sizeof num - n, "%s%d", next(&rng) % 2 ? "e" : "E-",
					      (int)(next(&rng) % 30));
		num[n] = 0;
		snprintf(lng, sizeof lng, "{\"v\":%s%s", num, tail);
		snprintf(sht, sizeof sht, "{\"v\":%s}", num);
		a = cm_pf_parse(w, lng, strlen(lng));
		if (!a || !a->kids || a->kids->type != CM_J_NUM) { /* not a number: not one either way */
			b = cm_pf_parse(w, sht, strlen(sht));
			ck_assert_msg(!b || !b->kids || b->kids->type != CM_J_NUM, "%s", num);
			continue;
		}
		a = a->kids;
		{
			uint32_t len = a->len;
			unsigned char has = a->has_iv;
			int64_t iv = a->iv;
			ck_assert_msg(len == strlen(num) && !memcmp(a->s, lng + 5, len), "%s: the text", num);
			b = cm_pf_parse(w, sht, strlen(sht));
			ck_assert_msg(b && b->kids && b->kids->type == CM_J_NUM, "%s", num);
			b = b->kids;
			ck_assert_msg(b->len == len && b->has_iv == has && (!has || b->iv == iv),
				      "%s: kept %d %lld, the digits' loop %d %lld", num, has, (long long)iv, b->has_iv,
				      (long long)b->iv);
			if (has == CM_PF_IV_INT) {
				cm_int x;
				ck_assert_msg(!cm_py_int_of_number(num, len, &x) && x == iv, "%s: %lld", num, (long long)iv);
				blocks++;
			} else if (has == CM_PF_IV_NS) {
				int64_t ns;
				ck_assert_msg(!cm_pf_us_to_ns(num, len, &ns) && ns == iv, "%s: %lld ns", num, (long long)iv);
				blocks++;
			}
		}
	}
	ck_assert_int_gt(blocks, 15000);
	cm_pfev_free(w);
}
END_TEST

/* cm_pf_key_known finds each of struct ev's keys by its first word: the
 * eleven land on eleven entries, each found with the kno and length that
 * cm_jkey_no gives and the byte after its colon; what member_key must
 * read is not found: a key that begins as one or that one begins
 * ("pids", "p"), a space or an escape before the colon, no colon, too
 * few bytes left, another key; and the flat parse finds the same members
 * either way (a known key's spaces after the colon passed as ws() does). */
START_TEST(key_known)
{
	static const char *const keys[] = {"ph", "name", "cat", "ts", "dur", "pid", "tid", "args", "id", "s", "bp"};
	static const char *const not[] = {"\"pids\":1,\"x\":2}", "\"p\":1,\"xyz\":2}", "\"ph\" :1,\"x\":2}",
					  "\"p\\u0068\":1,\"x\":2}", "\"ph\"1,\"xyz\":2}", "\"tsx\":1,\"x\":2}",
					  "\"na\":1,\"xyzw\":2}", "\"ARGS\":1,\"x\":2}", "'ph\":1,\"xyz\":2}"};
	unsigned entries = 0, kno;
	uint32_t klen;
	char buf[64];
	for (unsigned i = 0; i < 16; i++)
		entries += cm_pf_keywords[i].klen != 0;
	ck_assert_uint_eq(entries, sizeof keys / sizeof *keys);
	for (unsigned i = 0; i < sizeof keys / sizeof *keys; i++) {
		size_t n = (size_t)snprintf(buf, sizeof buf, "\"%s\":1234567890", keys[i]);
		const char *q = cm_pf_key_known(buf, buf + n, &kno, &klen);
		ck_assert_msg(q == buf + strlen(keys[i]) + 3, "%s: not found", keys[i]);
		ck_assert_msg(kno == cm_jkey_no(keys[i], strlen(keys[i])) && klen == strlen(keys[i]), "%s: %u %u", keys[i],
			      kno, klen);
		ck_assert_msg(!cm_pf_key_known(buf, buf + 8, &kno, &klen), "%s: past the end", keys[i]);
	}
	for (unsigned i = 0; i < sizeof not / sizeof *not; i++)
		ck_assert_msg(!cm_pf_key_known(not[i], not[i] + strlen(not[i]), &kno, &klen), "%s: found", not[i]);
	for (int a = ' '; a < 127; a++) /* every other key's first two bytes, on every entry */
		for (int b = ' '; b < 127; b++) {
			size_t n = (size_t)snprintf(buf, sizeof buf, "\"%c%cq\":1234567890", a, b);
			ck_assert_msg(!cm_pf_key_known(buf, buf + n, &kno, &klen), "%s: found", buf);
		}
	{
		static const char *const el[] = {
			"{\"ph\":  \"X\",\"name\":\n\t\"n\", \"cat\":\"c\",\"pid\":1,\"tid\":2,\"ts\":3.5,\"dur\":4,"
			"\"args\": {\"ph\":1},\"id\":6,\"s\":\"g\",\"bp\":\"e\",\"pids\":7,\"ph\" :\"B\"}",
			"{\"ph\":\"X\", \"ts\":1}", "{\"ph\":}", "{\"ph\":1", "{\"s\":1}"};
		cm_pfev *w = cm_pfev_new(NULL, "<test>");
		cm_arena *a = cm_arena_new();
		for (unsigned i = 0; i < sizeof el / sizeof *el; i++) {
			struct ev got, want;
			cm_jval *tree = cm_jval_parse_py(a, el[i], strlen(el[i]));
			int ok = cm_pf_parse_flat(w, el[i], strlen(el[i]), &got);
			ck_assert_msg(ok == (tree != NULL), "%s: read %d", el[i], ok);
			if (!ok)
				continue;
			cm_pf_members(tree, &want);
#define SAME(f) ck_assert_msg(!want.f == !got.f && (!want.f || (want.f->len == got.f->len && \
				      !memcmp(want.f->s, got.f->s, want.f->len))), "%s: " #f, el[i])
			SAME(ph); SAME(name); SAME(cat); SAME(ts); SAME(dur); SAME(pid); SAME(tid); SAME(id); SAME(s); SAME(bp);
#undef SAME
			ck_assert_msg(!want.args == !got.args, "%s: args", el[i]);
		}
		cm_arena_free(a);
		cm_pfev_free(w);
	}
}
END_TEST

/* cm_pf_members_given takes a member's word for which it is (kno) and
 * finds one that says nothing by its key: on a tree whose members say
 * (a, the right number), say none (u) or say another (o: CM_JK_OTHER, a
 * key of none of them), the members cm_pf_members finds by their keys;
 * a member that says it is another is taken for it. */
START_TEST(members_given)
{
	static const char *const text =
		"{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"n\",\"pid\":1,\"tid\":2,\"ts\":3,\"dur\":4,"
		"\"args\":{\"name\":5},\"id\":6,\"s\":\"g\",\"bp\":\"e\",\"other\":7,\"ph\":\"B\"}";
	cm_arena *a = cm_arena_new();
	cm_jval *tree = cm_jval_parse_py(a, text, strlen(text));
	struct ev got, want;
	cm_jval *k;
	ck_assert(tree && tree->type == CM_J_OBJ);
	cm_pf_members(tree, &want);
	ck_assert(want.ph && want.ph->s[0] == 'B'); /* (the last of a repeated key) */
	for (int how = 0; how < 3; how++) {
		unsigned i = 0;
		for (k = tree->kids; k; k = k->next, i++) {
			k->kno = how == 0 ? cm_jkey_no(k->key, k->klen) : how == 1 ? CM_JK_UNSAID
				 : i % 2 ? cm_jkey_no(k->key, k->klen) : CM_JK_UNSAID;
			for (cm_jval *d = k->kids; d; d = d->next)
				d->kno = CM_JK_PH; /* (deeper: never read) */
		}
		cm_pf_members_given(tree, &got);
		ck_assert_msg(!memcmp(&got, &want, sizeof got), "members not cm_pf_members' (%d)", how);
	}
	/* "other" says it is the tid: taken for it */
	for (k = tree->kids; k->next->next; k = k->next)
		k->kno = cm_jkey_no(k->key, k->klen);
	k->kno = CM_JK_TID;
	k->next->kno = CM_JK_OTHER; /* (the second "ph" says it is none: left out) */
	cm_pf_members_given(tree, &got);
	ck_assert_ptr_eq(got.tid, k);
	ck_assert(got.ph && got.ph->s[0] == 'X');
	cm_arena_free(a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pfparse");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, spaces_and_nesting, 0, 4);
	tcase_add_test(tc, leaves);
	tcase_add_test(tc, separators);
	tcase_add_loop_test(tc, depth_limit, 0, 2);
	tcase_add_test(tc, nodes_array);
	tcase_add_loop_test(tc, number_block, 0, 2);
	tcase_add_test(tc, members_given);
	tcase_add_test(tc, key_known);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
