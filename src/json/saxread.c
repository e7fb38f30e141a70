/* saxread.c - the yajl read loop: fixed chunks in, callbacks out, one-line errors.
 *
 * Whole tokens.  When a token spans chunks, yajl keeps its start in a buffer
 * and lexes that buffer again from its first byte on every later chunk, so a
 * string of L bytes read in chunks of B costs about L*L/2B byte steps: 3 s
 * for a 100 MB name in 1 MiB chunks, hours for a gigabyte.  We hand yajl
 * only whole tokens instead.  The strict check (jcheck.c) already walks
 * every byte and knows where the punctuation is; the tail of a chunk from
 * its last punctuation byte on waits in `pending` and goes to yajl together
 * with the head of the next chunk, up to that chunk's first punctuation.
 * A long token is thus collected once (a doubling buffer: linear) and lexed
 * once.  Each piece starts with punctuation because yajl copies the first
 * token of every piece into its own buffer: a one-byte copy then, not a
 * second copy of a huge string.
 *
 * Bounded tokens.  What is collected is held: a string that never ends
 * would grow `pending` until memory ran out.  With the document's array
 * key (sax->array_key) the splitter's machine watches the chunks as they
 * arrive (cm_docsplit_watch_feed) and a value longer than its bound is
 * refused there, at its first byte, in the words the fast readers' fault
 * gets (they leave the naming to us).  A token longer than an element's
 * bound can only be a member's value (a string, a number), up to 256 MiB:
 * past that bound `pending` goes to a temporary file, as the fast readers'
 * member values do (spillbuf.h), and yajl reads it from a mapping of the
 * file once it has ended, so a string that never ends takes no memory.  White space is no token: once a
 * MiB is collected, a chunk that ends in it, outside a string, goes to yajl
 * at once, so that a run of it is not collected either.  (The next piece
 * then starts where the chunk after it does, and yajl copies its first
 * token: only after such a run, never in a real trace.) */
#include "config.h"
#include "json/saxread.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "json/docsplit.h"
#include "json/jcheck.h"
#include "json/jscan.h"
#include "json/jwrite.h"
#include "json/spillbuf.h"

#include <string.h>

/* Collected white space past this goes to yajl (see above). */
#define PENDING_WS (1u << 20)

int64_t cm_sax_offset(const cm_sax *sax)
{
	/* without a parser: a replay (cm_jvalid_replay) over text at BASE */
	return (int64_t)(sax->base + (sax->h ? yajl_get_bytes_consumed(sax->h) : 0));
}

/* Python's json writes NaN, Infinity and -Infinity for the floats JSON
 * cannot hold (a pid of float('nan') in a trace written by hand), and
 * yajl's word for each is "invalid char in json text" (-Infinity's "a
 * digit is required after the minus sign"), which sent the user looking
 * for a stray byte.  What the literal stands for, when yajl stopped one
 * byte into one (past its N, its I or its minus sign: AT of PIECE's LEN
 * bytes), else NULL: the message then stays yajl's. */
static const char *python_literal(const unsigned char *piece, size_t len, size_t at)
{
	static const char *const lit[][2] = {
		/* -Infinity before Infinity: the minus sign is its first byte */
		{"-Infinity", "-Infinity (Python's literal for a negative infinite float) is not JSON"},
		{"Infinity", "Infinity (Python's literal for an infinite float) is not JSON"},
		{"NaN", "NaN (Python's literal for a float that is not a number) is not JSON"},
	};
	for (size_t i = 0; at >= 1 && i < sizeof lit / sizeof *lit; i++) {
		size_t n = strlen(lit[i][0]);
		if (at - 1 + n <= len && !memcmp(piece + at - 1, lit[i][0], n))
			return lit[i][1];
	}
	return NULL;
}

/* Report yajl's error as one line: its first line, without "parse error: "
 * (or, at a literal of Python's, what that is: python_literal). */
static void report_syntax(cm_sax *sax, const unsigned char *piece, size_t len, int at_end)
{
	unsigned char *msg = yajl_get_error(sax->h, 0, piece, len);
	char line[200];
	const char *m = (const char *)msg, *lit;
	size_t n;
	if (!at_end && (lit = python_literal(piece, len, yajl_get_bytes_consumed(sax->h))) != NULL)
		m = lit;
	if (!strncmp(m, "parse error: ", 13))
		m += 13;
	else if (!strncmp(m, "lexical error: ", 15))
		m += 15;
	n = strcspn(m, "\n");
	if (n >= sizeof line)
		n = sizeof line - 1;
	memcpy(line, m, n);
	line[n] = 0;
	while (n && (line[n - 1] == ' ' || line[n - 1] == '.'))
		line[--n] = 0;
	if (cm_input_check_gzip(sax->in) < 0) {
		/* damaged gzip inflates to garbage: the damage was reported instead */
		yajl_free_error(sax->h, msg);
		return;
	}
	if (at_end && !sax->started)
		/* an empty file (a rank that died before writing) is no
		 * truncated document: say what it is */
		cm_error(CM_EXIT_DATA, cm_input_name(sax->in), (int64_t)sax->base, "no JSON: the input is %s",
			 sax->base ? "only white space" : "empty");
	else if (at_end && (strstr(line, "premature EOF") || !*line))
		cm_error(CM_EXIT_DATA, cm_input_name(sax->in), (int64_t)sax->base,
			 "truncated JSON: the text ends inside the document");
	else
		cm_error(CM_EXIT_DATA, cm_input_name(sax->in), cm_sax_offset(sax), "invalid JSON: %s", line);
	yajl_free_error(sax->h, msg);
}

/* Give yajl S[0..N), which starts at text offset BASE.  0, or -1 after a
 * report (a syntax error) or when a callback stopped the parse. */
static int parse(cm_sax *sax, const char *s, size_t n, uint64_t base)
{
	yajl_status st;
	if (n == 0)
		return 0;
	sax->base = base;
	for (size_t i = 0; !sax->started && i < n; i++)
		sax->started = !(s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r');
	if (sax->tap)
		sax->tap(sax->tap_ctx, s, n, base);
	st = yajl_parse(sax->h, (const unsigned char *)s, n);
	if (st == yajl_status_client_canceled)
		return -1;
	if (st == yajl_status_error) {
		report_syntax(sax, (const unsigned char *)s, n, 0);
		return -1;
	}
	if (sax->tap_done)
		sax->tap_done(sax->tap_ctx);
	return 0;
}

/* Give yajl the collected token P, at text offset AT, and empty P.  0 or -1
 * (parse's). */
static int parse_pending(cm_sax *sax, cm_spillbuf *p, uint64_t at)
{
	size_t n;
	const char *s = cm_spillbuf_text(p, &n);
	int rc = s ? parse(sax, s, n, at) : -1;
	cm_spillbuf_clear(p);
	return rc;
}

int cm_sax_run(cm_sax *sax, cm_input *in, const yajl_callbacks *callbacks, void *ctx,
	       const char *what)
{
	const char *chunk = NULL;
	size_t len = 0;
	int rc, result = -1;
	yajl_status st;
	cm_jcheck check;
	cm_spillbuf pending = {0}; /* a token cut by the end of a chunk */
	uint64_t pending_at = 0, end; /* its text offset */
	cm_docsplit_rec *watch;    /* the bounds (docsplit.h), or NULL */
	size_t spill_at = (size_t)-1; /* past it, pending is spilled (above) */
	char msg[200];
	int64_t msg_at;
	sax->in = in;
	sax->what = what;
	sax->started = 0;
	sax->h = yajl_alloc(callbacks, NULL, ctx);
	if (!sax->h)
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	watch = sax->array_key ? cm_docsplit_watch_new(sax->array_key) : NULL;
	if (watch)
		spill_at = (size_t)cm_docsplit_watch_elem_max(watch);
	/* strict JSON: UTF-8 checked, no comments, exactly one value */
	yajl_config(sax->h, yajl_allow_comments, 0);
	yajl_config(sax->h, yajl_dont_validate_strings, 0);
	cm_progress_begin(what, cm_input_raw_size(in));
	cm_jcheck_begin(&check);
	while ((rc = cm_input_next(in, &chunk, &len)) == 1) {
		uint64_t at = cm_input_offset(in);
		size_t ok = cm_jcheck_feed(&check, chunk, len), head, tail;
		if (ok < len) {
			/* yajl sees the text up to the byte the strict check refuses,
			 * so an earlier syntax error is still reported as such */
			if (cm_spillbuf_put(&pending, chunk, ok, spill_at) < 0 ||
			    parse_pending(sax, &pending, pending_at) < 0)
				goto out;
			if (cm_input_check_gzip(in) < 0)
				goto out;
			cm_error(CM_EXIT_DATA, cm_input_name(in), (int64_t)(at + ok), "invalid JSON: %s",
				 check.err);
			goto out;
		}
		if (watch && cm_docsplit_watch_feed(watch, chunk, len, at, msg, sizeof msg, &msg_at)) {
			if (cm_input_check_gzip(in) < 0)
				goto out;
			cm_error(CM_EXIT_DATA, cm_input_name(in), msg_at, "%s", msg);
			goto out;
		}
		if (check.first_cut == CM_JCHECK_NONE) { /* all of it inside one token */
			if (!cm_spillbuf_len(&pending))
				pending_at = at;
			if (cm_spillbuf_put(&pending, chunk, len, spill_at) < 0)
				goto out;
			if (cm_spillbuf_len(&pending) < PENDING_WS || check.in_str || !cm_jscan_ws(chunk[len - 1]))
				continue;
			/* or after it: a run of white space, which ended any token */
			if (parse_pending(sax, &pending, pending_at) < 0)
				goto out;
			pending_at = at + len;
			cm_progress_update(cm_input_raw_done(in));
			continue;
		}
		head = cm_spillbuf_len(&pending) ? check.first_cut : 0; /* completes the pending token */
		tail = check.last_cut;
		if (cm_spillbuf_len(&pending)) {
			if (cm_spillbuf_put(&pending, chunk, head, spill_at) < 0 ||
			    parse_pending(sax, &pending, pending_at) < 0)
				goto out;
		}
		if (parse(sax, chunk + head, tail - head, at + head) < 0)
			goto out;
		cm_spillbuf_clear(&pending);
		pending_at = at + tail;
		if (cm_spillbuf_put(&pending, chunk + tail, len - tail, spill_at) < 0)
			goto out;
		cm_progress_update(cm_input_raw_done(in));
	}
	if (rc < 0)
		goto out;
	end = pending_at + cm_spillbuf_len(&pending);
	if (parse_pending(sax, &pending, pending_at) < 0)
		goto out;
	sax->base = end;
	st = yajl_complete_parse(sax->h);
	if (st == yajl_status_client_canceled)
		goto out;
	if (st == yajl_status_error) {
		report_syntax(sax, (const unsigned char *)"", 0, 1);
		goto out;
	}
	if (cm_jcheck_end(&check) < 0) {
		if (cm_input_check_gzip(in) < 0)
			goto out;
		cm_error(CM_EXIT_DATA, cm_input_name(in), (int64_t)sax->base, "invalid JSON: %s", check.err);
		goto out;
	}
	result = 0;
out:
	cm_docsplit_watch_free(watch);
	cm_spillbuf_free(&pending);
	yajl_free(sax->h);
	sax->h = NULL;
	return result;
}
