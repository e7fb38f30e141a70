/* docread.c - a yajl SAX reader that hands out one array element at a time.
 *
 * Traces and windows are too large to hold; their elements are small.  Each
 * element's tree is built into an arena that is reset after the element is
 * handed on, so memory is bounded by the largest element (or wanted
 * top-level member), never by the document; and saxread refuses a value
 * longer than its bound (docsplit.h) as it arrives.
 *
 * An element's text, then its tree.  The tree is not built as yajl goes:
 * a tree of tiny values (`{"a":[1,1,1,...`) takes some 36 bytes a byte of
 * text, so an element that never ended cost 600 MB by the time saxread
 * refused it at 16 MiB.  yajl only checks the element; its bytes are kept
 * (from the piece it lies in, else, when it spans pieces, copied into
 * `etext` at the end of each piece: saxread's tap_done) and once it has
 * ended its tree is built from them by the fast readers' builder
 * (cm_jvalid_build, the same tree node for node), so an element that never
 * ends holds its text alone, at most its bound.
 *
 * The text as it was.  yajl reports values, not bytes, so saxread's tap
 * shows us every piece of text before yajl parses it: from the end of one
 * top-level value (or the opening brace) to the end of the next, the bytes
 * are kept in `raw`, at most the separator, the key and the value (the
 * array, and members skipped unbuilt, are not kept).  A wanted member is
 * parsed from them once it has ended (cm_jval_parse_py, the value the fast
 * readers make of it, node for node), not built as yajl goes: a tree of
 * tiny values takes some 36 bytes a byte of text, and one that never ended
 * would grow so until its bound, where its text alone is held.  A sink
 * with member_text also gets the member's bytes (a repaired trace passes
 * "distributedInfo" through unchanged: HTA reads a rank by its spacing).
 * Its text goes to a temporary file past the fast readers' spill size, as
 * their member values do (spillbuf.h), and is parsed from a mapping of it:
 * one that never ends takes no memory.
 * cm_sax_offset in a callback is the offset just past its token, so the
 * member's text ends there; it begins after the separator and the key,
 * which are found again in the kept bytes.  Pieces are cut anywhere the
 * input's chunks end, so the kept text does not depend on the read size. */
#include "config.h"
#include "json/docread.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/hmap.h"
#include "json/docsplit.h"
#include "json/jvalid.h"
#include "json/saxread.h"
#include "json/spillbuf.h"

#include <stdio.h>
#include <string.h>

enum where { W_START, W_TOP, W_SKIP, W_ARRAY, W_ELEM, W_MEMBER, W_DONE };

struct dread {
	cm_sax sax;
	const cm_docread_sink *sink;
	const char *array_key, *what;
	enum where where;
	int depth;       /* nesting inside a skipped value */
	cm_buf key;      /* the current top-level key */
	int key_is_array, seen_array;
	uint64_t index;
	cm_arena *arena;
	cm_jbuild build;
	uint64_t elem_at;   /* text offset of the open element's brace */
	cm_buf etext;       /* its bytes in the pieces before the current one */
	cm_hmap *seen_keys; /* hashes of built member names, to refuse repeats */
	/* the text as it was: a wanted member is parsed from it */
	const char *piece;  /* the piece yajl is parsing (saxread's tap) */
	size_t piece_len;
	uint64_t piece_at;  /* its text offset */
	int raw_on;         /* the bytes from raw_at on are being kept */
	uint64_t raw_at;    /* text offset of raw's first byte */
	cm_spillbuf raw;
	int raw_failed;     /* raw's file could not be written (reported): stop */
};

static const char *dname(struct dread *d) { return cm_input_name(d->sax.in); }

static int fail(struct dread *d, const char *msg)
{
	cm_error(CM_EXIT_DATA, dname(d), cm_sax_offset(&d->sax), "%s: %s", d->what, msg);
	return 0;
}

static int elem_not_object(struct dread *d)
{
	cm_error(CM_EXIT_DATA, dname(d), cm_sax_offset(&d->sax), "%s: %s[%llu] is not an object", d->what,
		 d->array_key, (unsigned long long)d->index);
	return 0;
}

/* FNV-1a of the key, for the repeat check. */
static uint64_t key_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* saxread's tap: the next piece of text, before yajl parses it. */
static void tap(void *ctx, const char *s, size_t n, uint64_t at)
{
	struct dread *d = ctx;
	d->piece = s;
	d->piece_len = n;
	d->piece_at = at;
	if (d->raw_on && !d->raw_failed && cm_spillbuf_put(&d->raw, s, n, cm_docsplit_spill_size()) < 0)
		d->raw_failed = 1;
}

/* saxread's tap_done: the piece has been parsed; an element still open
 * will need its bytes in it, which are kept before the piece is gone. */
static void tap_done(void *ctx)
{
	struct dread *d = ctx;
	size_t from;
	if (d->where != W_ELEM)
		return;
	from = d->elem_at > d->piece_at ? (size_t)(d->elem_at - d->piece_at) : 0;
	if (from < d->piece_len)
		cm_buf_put(&d->etext, d->piece + from, d->piece_len - from);
}

/* A top-level value (or the opening brace) has just ended: keep the bytes
 * from here on, when the sink wants the text.  The rest of the current piece
 * is taken now, while it is still there. */
static void raw_start(struct dread *d)
{
	uint64_t at = (uint64_t)cm_sax_offset(&d->sax), end = d->piece_at + d->piece_len;
	cm_spillbuf_clear(&d->raw);
	d->raw_at = at;
	d->raw_on = 1;
	if (at >= d->piece_at && at < end && !d->raw_failed &&
	    cm_spillbuf_put(&d->raw, d->piece + (at - d->piece_at), (size_t)(end - at), cm_docsplit_spill_size()) < 0)
		d->raw_failed = 1;
}

static int ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The member that ends here, as its bytes were: raw holds the separator, the
 * key, the colon and the value, already checked by yajl.  0 or -1. */
static int raw_member(struct dread *d, cm_docread_text *t)
{
	uint64_t end = (uint64_t)cm_sax_offset(&d->sax);
	size_t n = end >= d->raw_at ? (size_t)(end - d->raw_at) : 0, i = 0, k, have;
	const char *p;
	if (!d->raw_on)
		return -1;
	if (!(p = cm_spillbuf_text(&d->raw, &have))) {
		d->raw_failed = 1; /* reported */
		return -1;
	}
	if (n > have)
		return -1;
	while (i < n && (ws(p[i]) || p[i] == ','))
		i++;
	if (i == n || p[i] != '"')
		return -1;
	for (k = i + 1; k < n && p[k] != '"'; k++)
		if (p[k] == '\\')
			k++;
	if (k >= n)
		return -1;
	t->key = p + i;
	t->klen = k + 1 - i;
	for (i = k + 1; i < n && (ws(p[i]) || p[i] == ':'); i++)
		;
	if (i == n)
		return -1;
	t->value = p + i;
	t->vlen = n - i;
	return 0;
}

/* A value begins at the top level: decide what to do with it.  Returns 1 to
 * go on, 0 to stop, -1 for a scalar member to be built by the caller. */
static int top_value(struct dread *d, int type)
{
	const cm_docread_sink *s = d->sink;
	int want;
	if (d->key_is_array) {
		if (type != CM_J_ARR) {
			char msg[80];
			snprintf(msg, sizeof msg, "\"%s\" is not an array", d->array_key);
			return fail(d, msg);
		}
		d->where = W_ARRAY;
		d->raw_on = 0;
		return !s->array_begin || s->array_begin(s->ctx) == 0;
	}
	if ((s->member || s->member_text) &&
	    (want = !s->wants_member ? 1 : s->wants_member(s->ctx, d->key.p, d->key.len))) {
		uint64_t h = key_hash(d->key.p, d->key.len);
		int created;
		cm_hmap_put(d->seen_keys, &h, &created);
		if (!created && want == 1) {
			cm_error(CM_EXIT_DATA, dname(d), cm_sax_offset(&d->sax), "%s: member \"%.*s\" appears twice",
				 d->what, (int)(d->key.len > 60 ? 60 : d->key.len), d->key.p);
			return 0;
		}
		d->where = W_MEMBER; /* parsed from raw once it ends */
		if (type == CM_J_ARR || type == CM_J_OBJ) {
			d->depth = 1;
			return 1;
		}
		return -1;
	}
	if (type == CM_J_ARR || type == CM_J_OBJ) {
		d->where = W_SKIP;
		d->depth = 1;
		d->raw_on = 0;
	} else {
		raw_start(d); /* a skipped scalar has ended */
	}
	return 1;
}

static int member_done(struct dread *d)
{
	const cm_docread_sink *s = d->sink;
	cm_docread_text t;
	const cm_jval *v;
	int rc;
	d->where = W_TOP;
	if (raw_member(d, &t) < 0)
		return d->raw_failed ? 0 : fail(d, "internal error: the member's text was not kept");
	cm_arena_reset(d->arena);
	/* yajl and jcheck took the text: Python's json does too */
	if (!(v = cm_jval_parse_py(d->arena, t.value, t.vlen)))
		return fail(d, "internal error: the member's text does not parse");
	if (s->member_text)
		rc = s->member_text(s->ctx, d->key.p, d->key.len, v, &t, cm_sax_offset(&d->sax));
	else
		rc = s->member(s->ctx, d->key.p, d->key.len, v, cm_sax_offset(&d->sax));
	raw_start(d);
	return rc == 0;
}

/* The element that ends here: its tree, built from its bytes (in the
 * current piece, or in etext when it began in an earlier one), handed on. */
static int elem_done(struct dread *d)
{
	const cm_docread_sink *s = d->sink;
	uint64_t end = (uint64_t)cm_sax_offset(&d->sax);
	const char *text;
	size_t n;
	int rc;
	if (d->elem_at >= d->piece_at) {
		text = d->piece + (d->elem_at - d->piece_at);
	} else {
		cm_buf_put(&d->etext, d->piece, (size_t)(end - d->piece_at));
		text = d->etext.p;
	}
	n = (size_t)(end - d->elem_at);
	cm_arena_reset(d->arena);
	cm_jbuild_begin(&d->build, d->arena);
	/* yajl and jcheck took the text, and the builder decides as they do */
	if (*text != '{' || !cm_jvalid_build(text, n, 2, &d->build) || !d->build.root)
		return fail(d, "internal error: the element's text does not parse");
	rc = s->element(s->ctx, d->index, d->build.root, (int64_t)end);
	d->index++;
	d->where = W_ARRAY;
	return rc == 0;
}

static int on_scalar(struct dread *d, int type, const char *s, size_t n)
{
	if (d->raw_failed) /* (reported) */
		return 0;
	switch (d->where) {
	case W_START:
		return fail(d, "the top level is not an object");
	case W_TOP: {
		int r = top_value(d, type);
		return r < 0 ? member_done(d) : r;
	}
	case W_ARRAY:
		return elem_not_object(d);
	default: /* W_SKIP, W_ELEM: built once it ends */
		return 1;
	}
}

static int cb_null(void *d) { return on_scalar(d, CM_J_NULL, NULL, 0); }
static int cb_bool(void *d, int b) { return on_scalar(d, b ? CM_J_TRUE : CM_J_FALSE, NULL, 0); }
static int cb_number(void *d, const char *s, size_t n) { return on_scalar(d, CM_J_NUM, s, n); }
static int cb_string(void *d, const unsigned char *s, size_t n)
{
	return on_scalar(d, CM_J_STR, (const char *)s, n);
}

static int on_open(struct dread *d, int type)
{
	if (d->raw_failed)
		return 0;
	switch (d->where) {
	case W_START:
		if (type != CM_J_OBJ)
			return fail(d, "the top level is not an object");
		d->where = W_TOP;
		raw_start(d);
		return 1;
	case W_TOP:
		return top_value(d, type);
	case W_SKIP:
	case W_MEMBER:
		d->depth++;
		return 1;
	case W_ARRAY:
		if (type != CM_J_OBJ)
			return elem_not_object(d);
		if (!d->sink->element) { /* elements unwanted: skip them */
			d->where = W_SKIP;
			d->depth = 1;
			d->index++;
			return 1;
		}
		/* just past its brace: built from its bytes once it ends */
		d->elem_at = (uint64_t)cm_sax_offset(&d->sax) - 1;
		d->etext.len = 0;
		d->where = W_ELEM;
		d->depth = 1;
		return 1;
	case W_ELEM:
		d->depth++; /* (jcheck holds the depth to its bound) */
		return 1;
	default:
		return 1;
	}
}

static int on_close(struct dread *d)
{
	const cm_docread_sink *s = d->sink;
	if (d->raw_failed)
		return 0;
	switch (d->where) {
	case W_SKIP:
		if (--d->depth == 0) {
			/* a skipped element returns to the array, a skipped member to the top */
			d->where = d->key_is_array ? W_ARRAY : W_TOP;
			if (!d->key_is_array)
				raw_start(d);
		}
		return 1;
	case W_ARRAY:
		d->where = W_TOP;
		raw_start(d);
		return !s->array_end || s->array_end(s->ctx) == 0;
	case W_ELEM:
		return --d->depth == 0 ? elem_done(d) : 1;
	case W_MEMBER:
		return --d->depth == 0 ? member_done(d) : 1;
	default:
		d->where = W_DONE;
		return 1;
	}
}

static int cb_start_map(void *d) { return on_open(d, CM_J_OBJ); }
static int cb_start_array(void *d) { return on_open(d, CM_J_ARR); }
static int cb_end(void *d) { return on_close(d); }

static int cb_map_key(void *v, const unsigned char *s, size_t n)
{
	struct dread *d = v;
	if (d->raw_failed)
		return 0;
	if (d->where != W_TOP)
		return 1;
	d->key.len = 0;
	cm_buf_put(&d->key, s, n);
	cm_buf_putc(&d->key, 0);
	d->key.len--; /* NUL-terminated for callers, not counted */
	d->key_is_array = n == strlen(d->array_key) && !memcmp(s, d->array_key, n);
	if (d->key_is_array && d->seen_array++) {
		cm_error(CM_EXIT_DATA, dname(d), cm_sax_offset(&d->sax), "%s: member \"%s\" appears twice", d->what,
			 d->array_key);
		return 0;
	}
	return 1;
}

static const yajl_callbacks doc_callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end,
};

int cm_docread_run(cm_input *in, const char *array_key, const char *what, const cm_docread_sink *sink,
		   const char *label, int *seen_array)
{
	struct dread d;
	int rc;
	memset(&d, 0, sizeof d);
	d.sink = sink;
	d.array_key = array_key;
	d.what = what;
	d.arena = cm_arena_new();
	d.seen_keys = cm_hmap_new(8, 1);
	d.sax.array_key = array_key; /* values bounded as the splitter bounds them */
	d.sax.tap = tap;
	d.sax.tap_done = tap_done;
	d.sax.tap_ctx = &d;
	rc = cm_sax_run(&d.sax, in, &doc_callbacks, &d, label);
	cm_arena_free(d.arena);
	cm_hmap_free(d.seen_keys);
	cm_buf_free(&d.key);
	cm_spillbuf_free(&d.raw);
	cm_buf_free(&d.etext);
	if (seen_array)
		*seen_array = d.seen_array;
	return rc;
}
