/* fuzz_jvalid.c - differential fuzz harness: the fast validator (jvalid.c)
 * against the reading path's judges, yajl + jcheck (tests/jvalid_oracle.h).
 *
 * The fuzzer's bytes are one value at a depth taken from their length
 * (mostly an array element at depth 1 or 2, sometimes the whole document,
 * sometimes a few levels short of CM_JSON_MAX_DEPTH so that the limit is
 * within reach of small inputs).  It aborts, and libFuzzer keeps the input,
 * when
 *   - cm_jvalid_value and yajl + jcheck disagree on accept/reject, or the
 *     offset of a refusal lies outside the text;
 *   - cm_jvalid_prefix on the whole text disagrees with cm_jvalid_value
 *     (a valid value is found whole, with only blanks after it, or SHORT
 *     for a number that runs to the end);
 *   - the value cm_jvalid_prefix found is not valid alone, as yajl + jcheck
 *     judge it;
 *   - cm_jvalid_prefix on the text cut short, at a place taken from a hash
 *     of the text, does not answer what the whole text implies: SHORT
 *     before the end of a value or before the first wrong byte, the same
 *     error after it;
 *   - cm_jvalid_replay (building a tree through cm_jbuild_callbacks), or
 *     cm_jvalid_build (the same builder inline), disagrees with
 *     cm_jvalid_value, or builds for a valid text another tree than
 *     cm_jval_parse_py parses of it;
 *   - cm_jvalid_replay_num (the CPU scan's replay, numbers with their
 *     digits read) disagrees with cm_jvalid_value, builds another tree, or
 *     tells of a number other digits, parts, sign or exponent than its text
 *     has. */
#include "config.h"
#include "json/jvalid.h"
#include "json/jvalid_core.h" /* cm_jvalid_replay_num */
#include "../jvalid_oracle.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...)                                              \
	do {                                                   \
		fprintf(stderr, "fuzz_jvalid: property failed: "); \
		fprintf(stderr, __VA_ARGS__);                  \
		fputc('\n', stderr);                           \
		abort();                                       \
	} while (0)

/* The depth of the value, from the input's length: mutations that add or
 * drop a byte move it. */
static int depth_of(size_t size)
{
	static const int depths[] = {1, 2, 0, 1, 2, 505, 510, 512};
	return depths[size % (sizeof depths / sizeof depths[0])];
}

static int is_blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* FNV-1a: where to cut, stable for a saved input. */
static size_t hash(const uint8_t *s, size_t n)
{
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211u;
	return (size_t)h;
}

/* cm_jvalid_replay_num's number callback: what it was told of the number
 * S[0..N) is what its text says, read a byte at a time; then the builder's
 * number, so that the tree can be compared. */
static int num_dec(void *b, const char *s, size_t n, const struct cm_jnum *num)
{
	size_t i;
	unsigned ni = 0, nf = 0;
	uint64_t m = 0;
	int neg = n && s[0] == '-';
	for (i = (size_t)neg; i < n && s[i] >= '0' && s[i] <= '9'; i++, ni++)
		m = m * 10 + (uint64_t)(s[i] - '0');
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, nf++)
			m = m * 10 + (uint64_t)(s[i] - '0');
	if (num->neg != neg || num->ni != ni || num->nf != nf || num->exp != (i < n) || (ni + nf <= 19 && num->m != m))
		FAIL("cm_jvalid_replay_num: %.*s read as neg %d, %u + %u digits, exp %d, m %llu", (int)n, s, num->neg,
		     num->ni, num->nf, num->exp, (unsigned long long)num->m);
	return cm_jbuild_callbacks.yajl_number(b, s, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	int depth0 = depth_of(size);
	size_t bad = (size_t)-1, at = (size_t)-1, first = 0, cut, cut_at = (size_t)-1;
	int oracle = jvalid_oracle(s, size, depth0);
	int fast = cm_jvalid_value(s, size, depth0, &bad);
	int whole, part, want;
	char *piece;

	if (fast != oracle)
		FAIL("cm_jvalid_value says %d, yajl+jcheck %d (depth0 %d, %zu bytes)", fast, oracle, depth0, size);
	if (!fast && bad > size)
		FAIL("bad offset %zu beyond %zu bytes", bad, size);

	{
		cm_arena *a = cm_arena_new();
		cm_jbuild b;
		int replay;
		cm_jbuild_begin(&b, a);
		b.borrow = 1;
		replay = cm_jvalid_replay(s, size, depth0, INT_MAX, &cm_jbuild_callbacks, &b, a);
		if (replay != fast)
			FAIL("cm_jvalid_replay says %d, cm_jvalid_value %d", replay, fast);
		if (replay && !jvalid_oracle_same_tree(b.root, cm_jval_parse_py(a, s, size)))
			FAIL("cm_jvalid_replay built another tree than cm_jval_parse_py parses");
		cm_jbuild_begin(&b, a);
		b.borrow = 1;
		replay = cm_jvalid_build(s, size, depth0, &b);
		if (replay != fast)
			FAIL("cm_jvalid_build says %d, cm_jvalid_value %d", replay, fast);
		if (replay && !jvalid_oracle_same_tree(b.root, cm_jval_parse_py(a, s, size)))
			FAIL("cm_jvalid_build built another tree than cm_jval_parse_py parses");
		cm_jbuild_begin(&b, a);
		b.borrow = 1;
		replay = cm_jvalid_replay_num(s, size, depth0, INT_MAX, &cm_jbuild_callbacks, num_dec, &b, a);
		if (replay != fast)
			FAIL("cm_jvalid_replay_num says %d, cm_jvalid_value %d", replay, fast);
		if (replay && !jvalid_oracle_same_tree(b.root, cm_jval_parse_py(a, s, size)))
			FAIL("cm_jvalid_replay_num built another tree than cm_jval_parse_py parses");
		cm_arena_free(a);
	}

	whole = cm_jvalid_prefix(s, size, depth0, &at);
	while (first < size && is_blank(data[first]))
		first++;
	if (whole == 1) {
		size_t k = at;
		if (at <= first || at > size)
			FAIL("cm_jvalid_prefix: end %zu outside %zu..%zu", at, first + 1, size);
		while (k < size && is_blank(data[k]))
			k++;
		if ((k == size) != fast)
			FAIL("cm_jvalid_prefix found a whole value, cm_jvalid_value says %d", fast);
		if (!jvalid_oracle(s, at, depth0))
			FAIL("cm_jvalid_prefix took %zu bytes that yajl+jcheck refuse", at);
	} else if (fast) {
		/* a valid value is SHORT only when it is a number up to the end */
		if (whole != CM_JVALID_SHORT || !strchr("-0123456789", s[first]) || is_blank(data[size - 1]))
			FAIL("cm_jvalid_prefix says %d of a valid value", whole);
	} else if (whole == 0 && at >= size) {
		FAIL("cm_jvalid_prefix: error offset %zu beyond %zu bytes", at, size);
	}

	/* the text cut at CUT, in a buffer of its own size */
	cut = size ? hash(data, size) % (size + 1) : 0;
	piece = malloc(cut ? cut : 1);
	memcpy(piece, data, cut);
	part = cm_jvalid_prefix(piece, cut, depth0, &cut_at);
	free(piece);
	if (whole == 1 && cut > at)
		want = 1;
	else if (whole == 1 && cut == at)
		want = strchr("-0123456789", s[first]) ? CM_JVALID_SHORT : 1;
	else if (whole == 0 && cut > at)
		want = 0;
	else
		want = CM_JVALID_SHORT;
	if (part != want || (want != CM_JVALID_SHORT && cut_at != at))
		FAIL("cut at %zu: cm_jvalid_prefix says %d at %zu, the whole text %d at %zu", cut, part, cut_at,
		     whole, at);
	return 0;
}
