/* jvalid.c - strict JSON validation of one value in memory, at memory speed.
 *
 * Why a second validator.  The reading path (saxread.c) lets yajl judge the
 * syntax and jcheck.c judge what yajl lets through (FF/VT whitespace, loose
 * UTF-8, depth).  yajl lexes at about 200 MB/s: it goes through a callback
 * per token and a byte-at-a-time table loop in strings, and the pair walks
 * every byte twice.  The new engine hands each array element, already in
 * memory, to a worker thread; this file decides for such an element, in one
 * pass, what the pair decides, and nothing else.  The decision must be the
 * same bit for bit (a differential fuzz harness, tests/fuzz/fuzz_jvalid.c,
 * holds it to that); the words of the message are not ours to give: on a
 * refusal the engine reruns the yajl path, which reports as it always has.
 *
 * What the pair accepts (yajl 2.1 read with allow_comments 0 and
 * dont_validate_strings 0, every caller passing numbers through the
 * yajl_number callback, plus jcheck):
 *   - whitespace: yajl takes SP HT LF CR VT FF, jcheck refuses VT and FF;
 *   - numbers: yajl's lexer is exactly -?(0|[1-9][0-9]*)(\.[0-9]+)?
 *     ([eE][+-]?[0-9]+)?, greedy, and the parser then wants a separator:
 *     "01" is the number 0 followed by the number 1 (refused), "1.", "-",
 *     "+1", ".5", "1e" are refused; no size limit, since with a yajl_number
 *     callback yajl never converts (no "integer overflow" for 1e999 or a
 *     hundred digits);
 *   - strings: no byte below 0x20 (DEL 0x7f is fine); escapes are the eight
 *     of RFC 8259 and \u with four hex digits of either case; the lexer does
 *     not pair surrogates, so "\ud800", "\udc00x" are accepted; UTF-8 is
 *     checked by both, yajl loosely (C0/C1 leads, E0 overlongs, ED
 *     surrogates and F5..F7 pass it), jcheck to RFC 3629, which is the rule
 *     that binds;
 *   - literals true, false, null, case-sensitive, and a separator after
 *     them ("truex" is refused);
 *   - depth: jcheck counts the top container as level 1 and refuses level
 *     CM_JSON_MAX_DEPTH + 1; yajl has no limit.
 *
 * How.  One loop over the bytes with an explicit stack of one bit per open
 * container (object or array), no recursion, so depth costs nothing and a
 * hostile element cannot blow the stack.  The state is where the code is
 * (labels: a value, an object key, after a value); a 256-entry class table
 * dispatches at the start of a value.  The time goes where trace events
 * spend their bytes: string bodies are skipped 16 bytes at a time with SSE2
 * (x86-64's baseline, so no run-time dispatch) and 8 at a time with a
 * portable SWAR word test, stopping at a quote, a backslash, a control byte
 * or a non-ASCII byte; digit runs (19-digit nanosecond times) are skipped 8
 * at a time, and so are the indentation spaces of pretty-printed text; the
 * rest is byte steps with table lookups.  On this project's shared 2-core
 * machine that is 2.4 to 3 times yajl's speed alone and 3.5 to 5 times that
 * of yajl and jcheck together: 1.2 GB/s on the window, 0.7-0.8 GB/s on a
 * pretty-printed CPU trace (bench/RUNS.md, bench/jvalid.sh).
 *
 * Running out of bytes is an answer of its own (SHORT), separate from an
 * error, so that cm_jvalid_prefix can serve a splitter that does not know
 * where the value ends: each byte is judged as it is reached, and SHORT is
 * given only when every byte so far could begin a valid value.
 *
 * The replay.  A worker that checks an event then parses it walks its
 * bytes twice; the second walk cost about as much as the first (a tree
 * parse of the window's events, a tokenizer for the CPU trace's).  So the
 * same loop can also report each token as yajl's callbacks would, as soon
 * as the token is judged (cm_jvalid_replay): the CPU scan takes an event's
 * members and its args' (depth 2), the window's reader builds each event's
 * tree.  The loop is one always-inline core with a report at each token,
 * compiled three times: with the reports as callbacks, with the tree
 * builder's steps inline instead (cm_jvalid_build, for the window's events:
 * a call through a pointer a token cost more than the step it made), and
 * without reports for the plain validator, whose copy keeps its old speed.
 * The scanner also notes whether a string holds a backslash, so that a
 * string without one is handed over as it lies, unsearched.  Callbacks made before a fault
 * further on are the caller's to discard (the engine does: any fault sends
 * the document to the careful reader).
 *
 * The seam.  The scanner itself is in jvalid_core.h, inline, so that a
 * caller with fixed callbacks can have a copy of its own with them called
 * directly (cm_jvalid_replay_with: the CPU scan's, where a call through a
 * pointer a token was the price of most of its tokens); this file is the
 * entry points that every other caller links against. */
#include "config.h"
#include "json/jvalid.h"
#include "json/jvalid_core.h"

#include <limits.h>

static int scan_value(const unsigned char *s, size_t n, int depth0, size_t *at)
{
	return jv_scan_core(s, n, depth0, at, NULL, JV_KCHECK);
}

int cm_jvalid_value(const char *s, size_t n, int depth0, size_t *bad)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t at = 0;
	int r;
	while (at < n && jv_is_blank[u[at]])
		at++;
	r = scan_value(u, n, depth0, &at);
	if (r == JV_OK) { /* a number that ran to N ended there: nothing follows */
		while (at < n && jv_is_blank[u[at]])
			at++;
		if (at == n)
			return 1;
	}
	if (bad)
		*bad = at;
	return 0;
}

int cm_jvalid_prefix(const char *s, size_t n, int depth0, size_t *at)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t start = 0, end;
	int r;
	while (start < n && jv_is_blank[u[start]])
		start++;
	end = start;
	r = scan_value(u, n, depth0, &end);
	/* a number alone that reaches N might go on past it */
	if (r == JV_OK && end == n && jv_value_class[u[start]] == JV_VNUM)
		r = JV_SHORT;
	*at = end;
	return r;
}

int cm_jvalid_replay(const char *s, size_t n, int depth0, int maxdepth, const yajl_callbacks *cb, void *ctx,
		     cm_arena *arena)
{
	struct jv_emit em = {cb, ctx, maxdepth, arena, NULL, NULL, NULL};
	return jv_whole_value(s, n, depth0, &em, JV_KREPLAY);
}

int cm_jvalid_build(const char *s, size_t n, int depth0, cm_jbuild *tree)
{
	struct jv_nodes nodes = {NULL, NULL};
	struct jv_emit em = {NULL, NULL, INT_MAX, tree->arena, tree, &nodes, NULL};
	return jv_whole_value(s, n, depth0, &em, JV_KBUILD);
}
