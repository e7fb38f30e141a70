/* docsplit.c - the splitter: one byte loop over the top level of a document.
 *
 * Only three things need tracking to find where a value ends: whether we
 * are in a string, whether the byte before was a backslash, and the
 * bracket depth (jscan.h).  That is a table lookup a byte, far cheaper than
 * parsing, so one thread can cut a document for many that parse it.  The
 * top level itself - braces, keys, colons, commas - is checked here to the
 * letter of JSON, so that a document whose every value the workers accept
 * is exactly a document yajl accepts.  The array's elements go on in
 * batches (docbatch.c: the elements of one read chunk, handed on where they
 * lie); a member's value whole, once it has ended (docmember.c: held, or
 * spilled to a file when big).
 *
 * The layout (doclayout.h) is noted on the way, where each part ends: the
 * copy of a trace (cpu/cpucopy.c) walks it instead of the bytes.  The
 * careful reader's trace gets the same layout from this machine alone,
 * fed through saxread's tap (cm_docsplit_record_*): what was checked is
 * then yajl's, what is noted is made here either way. */
#include "config.h"
#include "json/docsplit.h"
#include "json/docsplit_int.h"
#include "json/docbatch.h"
#include "json/docmember.h"
#include "base/diag.h"
#include "json/jscan.h"
#include "json/jval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many times the calling thread lost its CPU while it could run. */
static uint64_t thread_preempted(void)
{
	unsigned long vol, invol;
	cm_thread_switches(&vol, &invol);
	return invol;
}

/* The run ended with RC: on CM_DOCSPLIT_OK the layout's file to *OUT (RC
 * becomes CM_DOCSPLIT_IOERR when it cannot be written), else away.  The
 * run's buffers are freed.  Returns RC. */
static int split_end(struct split *sp, int rc, FILE **out)
{
	if (sp->lay_on && cm_doclayout_end(&sp->lay, rc == CM_DOCSPLIT_OK, out) < 0)
		rc = CM_DOCSPLIT_IOERR;
	cm_buf_free(&sp->key);
	cm_spillbuf_free(&sp->val); /* (its file, when the document ended inside a spilled value) */
	cm_buf_free(&sp->batch);
	cm_buf_free(&sp->carry);
	cm_buf_free(&sp->copy);
	cm_arena_free(sp->arena);
	return rc;
}

/* The bounds (docsplit.h), or the smaller ones the testing aids
 * CUPTIMERGE_ELEM_MAX and CUPTIMERGE_MEMBER_MAX give (tests/e2e/endless.sh):
 * read once a run, not a chunk. */
static void split_limits(struct split *sp)
{
	const char *e;
	sp->elem_max = CM_DOCSPLIT_ELEM_MAX;
	sp->member_max = CM_DOCSPLIT_MEMBER_MAX;
	if ((e = getenv("CUPTIMERGE_ELEM_MAX")) && *e && strtoull(e, NULL, 10) > 0)
		sp->elem_max = strtoull(e, NULL, 10);
	if ((e = getenv("CUPTIMERGE_MEMBER_MAX")) && *e && strtoull(e, NULL, 10) > 0)
		sp->member_max = strtoull(e, NULL, 10);
}

/* N bytes in the units the man page gives the bounds in. */
static void size_words(char *out, size_t size, uint64_t n)
{
	if (n % (1u << 30) == 0)
		snprintf(out, size, "%llu GiB", (unsigned long long)(n >> 30));
	else if (n % (1u << 20) == 0)
		snprintf(out, size, "%llu MiB", (unsigned long long)(n >> 20));
	else
		snprintf(out, size, "%llu bytes", (unsigned long long)n);
}

/* The message for the value that passed its bound (sp->too), into MSG.
 * One for every reader: the careful one says it (cm_docsplit_watch_feed). */
static void too_long_msg(const struct split *sp, char *msg, size_t size)
{
	char lim[40];
	if (sp->too == TOO_MEMBER) {
		size_words(lim, sizeof lim, sp->member_max);
		snprintf(msg, size, "member %.*s%s: its value is longer than %s, the most a member's value may be",
			 (int)(sp->key.len > 60 ? 60 : sp->key.len), sp->key.p, sp->key.len > 60 ? "..." : "", lim);
		return;
	}
	size_words(lim, sizeof lim, sp->elem_max);
	if (sp->too == TOO_KEY)
		snprintf(msg, size, "a key longer than %s, the most a key may be", lim);
	else
		snprintf(msg, size, "%s[%llu] is longer than %s, the most an element may be (an event that never ends?)",
			 sp->array_key, (unsigned long long)sp->too_index, lim);
}

/* Is the key just read NAME?  (Decoded when it has escapes: decoded in
 * *V, parsed once for all the names.) */
static int key_is(struct split *sp, const char *name, const cm_jval **v)
{
	size_t n = strlen(name);
	if (!sp->key_esc)
		return sp->key.len == n + 2 && !memcmp(sp->key.p + 1, name, n);
	if (!*v) {
		cm_arena_reset(sp->arena);
		*v = cm_jval_parse_py(sp->arena, sp->key.p, sp->key.len);
	}
	return *v && (*v)->type == CM_J_STR && (*v)->len == n && !memcmp((*v)->s, name, n);
}

/* Is the key just read the array's?  And its tag in the layout (the
 * array's is taken when its value is an array). */
static int key_is_array(struct split *sp)
{
	const cm_jval *v = NULL;
	int is = key_is(sp, sp->array_key, &v);
	sp->tag = CM_DOCLAYOUT_OTHER;
	for (int k = 0; sp->lay_on && !is && sp->names && sp->names[k]; k++)
		if (key_is(sp, sp->names[k], &v)) {
			sp->tag = CM_DOCLAYOUT_NAME + k;
			break;
		}
	return is;
}

/* The byte C starts a value? (The value itself is judged by the caller.) */
static int value_start(char c) { return c != ',' && c != ':' && c != '}' && c != ']' && !cm_jscan_ws(c); }

/* A value passed its bound: the element of index INDEX (TOO_ELEM), the
 * key (TOO_KEY) or the member's value (TOO_MEMBER), which began at text
 * offset AT.  Noted for the message; DOCSPLIT_TOO_LONG. */
static int too_long(struct split *sp, int what, uint64_t at, uint64_t index)
{
	sp->too = what;
	sp->too_at = at;
	sp->too_index = index;
	return DOCSPLIT_TOO_LONG;
}

/* The index the next element counted into the batch gets. */
static uint64_t next_index(const struct split *sp)
{
	return sp->index + (sp->batch.len - sizeof(struct bhead)) / 8;
}

/* Of the GOT elements whose spans lie at SPANS, cut from the chunk at text
 * offset BASE, the first longer than the bound: DOCSPLIT_TOO_LONG, or 0.
 * CARRIED: the first began in an earlier chunk (at elem_at).  Called only
 * when that one may be, or the chunk is longer than the bound (so that the
 * rule is exact with a small one, CUPTIMERGE_ELEM_MAX): not per element. */
static int spans_too_long(struct split *sp, const uint32_t *spans, size_t got, uint64_t base)
{
	for (size_t j = 0; j < got; j++) {
		uint64_t len = spans[2 * j] == CARRIED ? base + spans[2 * j + 1] - sp->elem_at
						       : (uint64_t)(spans[2 * j + 1] - spans[2 * j]);
		if (len > sp->elem_max)
			return too_long(sp, TOO_ELEM,
					spans[2 * j] == CARRIED ? sp->elem_at : base + spans[2 * j], next_index(sp) + j);
	}
	return 0;
}

/* Scan the chunk S[0..N) at text offset BASE.  0, 1 to stop (a sink said
 * so), CM_DOCSPLIT_INVALID, or DOCSPLIT_TOO_LONG.  The bounds cost nothing
 * a byte: a value still open at the chunk's end is measured from its first
 * byte, and one that ends is measured when it began in an earlier chunk
 * (its first byte is noted then), or when the chunk alone is longer than
 * the bound. */
static int feed(struct split *sp, const char *s, size_t n, uint64_t base)
{
	size_t i = 0, run = 0; /* run: where the value being scanned began in S (0 when it began in an earlier chunk) */
	int carried = sp->st == ST_ELEM; /* the element being scanned began in an earlier chunk */
	if (sp->batch.len > sizeof(struct bhead) && !sp->inplace) { /* open, copies only: on into this chunk */
		struct bhead *h = (struct bhead *)(void *)sp->batch.p;
		h->chunk = s;
		h->base = (int64_t)base;
	} else {
		docbatch_open(sp, s, base);
	}
	while (i < n) {
		char ch = s[i];
		switch (sp->st) {
		case ST_START:
			if (ch == '{') {
				sp->st = ST_OBJ_OPEN;
				if (sp->lay_on)
					cm_doclayout_open(&sp->lay, base + i);
			} else if (!cm_jscan_ws(ch))
				return CM_DOCSPLIT_INVALID;
			i++;
			break;
		case ST_OBJ_OPEN:
		case ST_KEY_NEXT:
			if (ch == '"') {
				sp->key.len = 0;
				cm_buf_putc(&sp->key, '"');
				sp->key_esc = 0;
				sp->sc.esc = 0;
				sp->st = ST_KEY;
				sp->key_at = base + i;
			} else if (ch == '}' && sp->st == ST_OBJ_OPEN) {
				sp->st = ST_END;
				if (sp->lay_on)
					cm_doclayout_close(&sp->lay, base + i);
			} else if (!cm_jscan_ws(ch)) {
				return CM_DOCSPLIT_INVALID;
			}
			i++;
			break;
		case ST_KEY: { /* after the opening quote */
			size_t k = i;
			int done = 0;
			while (k < n) {
				char c = s[k++];
				if (sp->sc.esc) {
					sp->sc.esc = 0;
				} else if (c == '\\') {
					sp->sc.esc = sp->key_esc = 1;
				} else if (c == '"') {
					done = 1;
					break;
				} else if ((unsigned char)c < 0x20) {
					return CM_DOCSPLIT_INVALID; /* no key holds one */
				}
			}
			cm_buf_put(&sp->key, s + i, k - i);
			i = k;
			if (done) {
				if (base + k - sp->key_at > sp->elem_max)
					return too_long(sp, TOO_KEY, sp->key_at, 0);
				sp->key_is_array = key_is_array(sp);
				if (sp->key_is_array && sp->seen_array)
					return CM_DOCSPLIT_INVALID; /* the careful reader names it */
				sp->key_end = base + k;
				sp->st = ST_COLON;
			}
			break;
		}
		case ST_COLON:
			if (ch == ':')
				sp->st = ST_VALUE;
			else if (!cm_jscan_ws(ch))
				return CM_DOCSPLIT_INVALID;
			i++;
			break;
		case ST_VALUE:
			if (cm_jscan_ws(ch)) {
				i++;
			} else if (sp->key_is_array && ch == '[') {
				sp->seen_array = 1;
				sp->st = ST_ARR_OPEN;
				if (sp->lay_on)
					cm_doclayout_array(&sp->lay, sp->key_at, sp->key_end, base + i);
				i++;
			} else if (value_start(ch)) {
				sp->val_at = base + i;
				cm_spillbuf_clear(&sp->val);
				cm_jscan_begin(&sp->sc, ch); /* jscan reads the opening byte itself */
				run = i;
				sp->st = ST_MEMBER;
			} else {
				return CM_DOCSPLIT_INVALID;
			}
			break;
		case ST_MEMBER:
			if (cm_jscan_feed(&sp->sc, s, n, &i)) {
				int rc;
				if (base + i - sp->val_at > sp->member_max)
					return too_long(sp, TOO_MEMBER, sp->val_at, 0);
				if (docmember_put(sp, s + run, i - run) < 0)
					return CM_DOCSPLIT_IOERR;
				if ((rc = docmember_done(sp, (int64_t)(base + i))) != 0)
					return rc;
				sp->st = ST_AFTER;
			} /* else the chunk ran out: kept below */
			break;
		case ST_AFTER:
			if (ch == ',') {
				sp->st = ST_KEY_NEXT;
			} else if (ch == '}') {
				sp->st = ST_END;
				if (sp->lay_on)
					cm_doclayout_close(&sp->lay, base + i);
			} else if (!cm_jscan_ws(ch))
				return CM_DOCSPLIT_INVALID;
			i++;
			break;
		case ST_ARR_OPEN:
		case ST_ELEM_NEXT:
			if (cm_jscan_ws(ch)) {
				i++;
			} else if (ch == ']' && sp->st == ST_ARR_OPEN) {
				sp->st = ST_AFTER;
				if (sp->lay_on)
					cm_doclayout_close(&sp->lay, base + i);
				i++;
			} else if (value_start(ch)) {
				cm_jscan_begin(&sp->sc, ch);
				run = i;
				carried = 0;
				sp->st = ST_ELEM;
				if (ch == '{' || ch == '[') { /* taken: cm_jscan_elements goes on inside it */
					sp->sc.depth = 1;
					i++;
				}
			} else {
				return CM_DOCSPLIT_INVALID;
			}
			break;
		case ST_ELEM:
			if (!sp->sc.scalar && sp->sc.depth > 0) {
				/* an object or an array: this one and those that
				 * follow it in the usual way, many at a time, up to
				 * a full batch */
				uint32_t *spans = docbatch_spans_room(sp, 256), start = carried ? CARRIED : (uint32_t)run;
				size_t stop = i + (sp->batch_size > sp->bytes ? sp->batch_size - sp->bytes : 0);
				int after;
				size_t got = cm_jscan_elements(&sp->sc, s, n, &i, &start, spans, 256, stop, &after);
				if ((carried || n > sp->elem_max) && spans_too_long(sp, spans, got, base))
					return DOCSPLIT_TOO_LONG;
				if (after) {
					sp->st = ST_ARR_AFTER;
				} else if (got) { /* one began, and goes on in the next chunk */
					run = start;
					carried = 0;
				}
				if (docbatch_spans_done(sp, s, base, got) < 0)
					return 1;
			} else if (cm_jscan_feed(&sp->sc, s, n, &i)) { /* a string, number or literal */
				uint32_t *span = docbatch_spans_room(sp, 1);
				span[0] = carried ? CARRIED : (uint32_t)run;
				span[1] = (uint32_t)i;
				if (spans_too_long(sp, span, 1, base)) /* (an element a chunk at most: a rare kind) */
					return DOCSPLIT_TOO_LONG;
				carried = 0;
				sp->st = ST_ARR_AFTER;
				if (docbatch_spans_done(sp, s, base, 1) < 0)
					return 1;
			} /* else the chunk ran out: kept below */
			break;
		case ST_ARR_AFTER:
			if (ch == ',') {
				sp->st = ST_ELEM_NEXT;
			} else if (ch == ']') {
				sp->st = ST_AFTER;
				if (sp->lay_on)
					cm_doclayout_close(&sp->lay, base + i);
			} else if (!cm_jscan_ws(ch))
				return CM_DOCSPLIT_INVALID;
			i++;
			break;
		case ST_END:
			if (!cm_jscan_ws(ch))
				return CM_DOCSPLIT_INVALID;
			i++;
			break;
		}
	}
	/* the chunk's last batch goes when any of its elements lies in the
	 * chunk; an element cut by its end goes on in the next, its bytes so
	 * far kept.  What is kept, unjudged, must be able to end: with a
	 * control byte in it, it is no JSON, and would be held without bound
	 * (a pipe of zeros after '['), so the careful reader is called now */
	if (sp->inplace && docbatch_send(sp) < 0)
		return 1;
	if ((sp->st == ST_ELEM || sp->st == ST_MEMBER) && cm_jscan_has_ctl(s + run, n - run))
		return CM_DOCSPLIT_INVALID;
	/* nor longer than its bound: one that never ends (no control byte
	 * in it) is refused once it is, not held until memory runs out */
	if (sp->st == ST_ELEM) {
		if (!carried) {
			sp->carry.len = 0;
			sp->elem_at = base + run;
		}
		if (base + n - sp->elem_at > sp->elem_max)
			return too_long(sp, TOO_ELEM, sp->elem_at, next_index(sp));
		if (!sp->record_only) /* the recorder keeps no bytes: elem_at says where it began */
			cm_buf_put(&sp->carry, s + run, n - run);
	} else if (sp->st == ST_MEMBER && base + n - sp->val_at > sp->member_max) {
		return too_long(sp, TOO_MEMBER, sp->val_at, 0);
	} else if (sp->st == ST_KEY && base + n - sp->key_at > sp->elem_max) {
		return too_long(sp, TOO_KEY, sp->key_at, 0);
	} else if (sp->st == ST_MEMBER && run < n && docmember_put(sp, s + run, n - run) < 0)
		return CM_DOCSPLIT_IOERR;
	if (sp->lay.buf.len >= (64u << 10) && cm_doclayout_flush(&sp->lay) < 0)
		return CM_DOCSPLIT_IOERR;
	return 0;
}

int cm_docsplit_run(cm_input *in, const char *array_key, size_t batch, const cm_docsplit_sink *sink,
		    const char *label, int *seen_array)
{
	struct split sp;
	const char *chunk;
	size_t len;
	uint64_t cut = 0; /* text bytes handed out */
	int rc, fed = 0;
	double t0;
	uint64_t pre0;
	memset(&sp, 0, sizeof sp);
	sp.in = in;
	sp.sink = sink;
	sp.array_key = array_key;
	sp.batch_size = batch;
	sp.arena = cm_arena_new();
	sp.lay_on = sink->layout != NULL;
	sp.names = sink->names;
	split_limits(&sp);
	t0 = sink->cut_cpu || sink->ran_cpu ? cm_thread_cpu_s() : 0;
	pre0 = sink->preempted ? thread_preempted() : 0;
	cm_progress_begin(label, cm_input_raw_size(in));
	while ((rc = cm_input_next(in, &chunk, &len)) == 1) {
		cut = cm_input_offset(in) + len;
		fed = feed(&sp, chunk, len, cm_input_offset(in));
		if (fed)
			break;
		cm_progress_update(cm_input_raw_done(in));
	}
	if (rc < 0 || fed == CM_DOCSPLIT_IOERR)
		rc = CM_DOCSPLIT_IOERR;
	else if (fed == 1)
		rc = CM_DOCSPLIT_STOPPED;
	else if (fed || sp.st != ST_END) /* (a value too long among them: the careful reader names it) */
		rc = CM_DOCSPLIT_INVALID;
	else if (sp.batch.len > sizeof(struct bhead) && docbatch_send(&sp) < 0) /* the copies left */
		rc = CM_DOCSPLIT_STOPPED;
	else
		rc = CM_DOCSPLIT_OK;
	if (sink->cut_cpu)
		*sink->cut_cpu += cm_thread_cpu_s() - t0 - sp.in_sink;
	if (sink->ran_cpu)
		*sink->ran_cpu += cm_thread_cpu_s() - t0;
	if (sink->preempted)
		*sink->preempted += thread_preempted() - pre0;
	if (sink->cut_bytes)
		*sink->cut_bytes += cut;
	if (seen_array)
		*seen_array = sp.seen_array;
	return split_end(&sp, rc, sink->layout);
}

/* The recorder's sink: the batches are let go (the careful reader has
 * the elements). */
static int rec_batch(void *ctx, cm_buf *b)
{
	(void)ctx;
	(void)b;
	return 0;
}

static const cm_docsplit_sink rec_sink = {NULL, rec_batch, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

struct cm_docsplit_rec {
	struct split sp;
	int rc; /* feed's first non-zero result */
};

cm_docsplit_rec *cm_docsplit_record_new(const char *array_key, const char *const *names)
{
	cm_docsplit_rec *r = cm_xcalloc(1, sizeof *r);
	r->sp.sink = &rec_sink;
	r->sp.array_key = array_key;
	r->sp.batch_size = 64u << 10;
	r->sp.arena = cm_arena_new();
	r->sp.lay_on = r->sp.record_only = 1;
	r->sp.names = names;
	split_limits(&r->sp);
	return r;
}

void cm_docsplit_record_feed(void *rec, const char *s, size_t n, uint64_t base)
{
	cm_docsplit_rec *r = rec;
	if (!r->rc)
		r->rc = feed(&r->sp, s, n, base);
}

int cm_docsplit_record_end(cm_docsplit_rec *r, FILE **layout)
{
	int rc = r->rc == CM_DOCSPLIT_IOERR ? CM_DOCSPLIT_IOERR
		 : r->rc || r->sp.st != ST_END ? CM_DOCSPLIT_INVALID
					       : CM_DOCSPLIT_OK;
	rc = split_end(&r->sp, rc, layout);
	free(r);
	return rc;
}

/* The watcher is a recorder that notes no layout: it keeps the machine's
 * state and no bytes of an element or a member (record_only). */
cm_docsplit_rec *cm_docsplit_watch_new(const char *array_key)
{
	cm_docsplit_rec *r = cm_docsplit_record_new(array_key, NULL);
	r->sp.lay_on = 0;
	return r;
}

int cm_docsplit_watch_feed(cm_docsplit_rec *w, const char *s, size_t n, uint64_t base, char *msg, size_t size,
			   int64_t *at)
{
	if (w->rc)
		return 0;
	w->rc = feed(&w->sp, s, n, base);
	if (w->rc != DOCSPLIT_TOO_LONG)
		return 0;
	too_long_msg(&w->sp, msg, size);
	*at = (int64_t)w->sp.too_at;
	return 1;
}

int cm_docsplit_watch_in_string(const cm_docsplit_rec *w)
{
	if (w->rc)
		return -1;
	switch (w->sp.st) {
	case ST_KEY: /* its scanner's escape flag is the key's (ST_KEY's loop) */
		return 1 | (w->sp.sc.esc ? 2 : 0);
	case ST_MEMBER:
	case ST_ELEM:
		return w->sp.sc.in_str ? 1 | (w->sp.sc.esc ? 2 : 0) : 0;
	default:
		return 0;
	}
}

uint64_t cm_docsplit_watch_elem_max(const cm_docsplit_rec *w) { return w->sp.elem_max; }

void cm_docsplit_watch_free(cm_docsplit_rec *w)
{
	if (!w)
		return;
	split_end(&w->sp, CM_DOCSPLIT_INVALID, NULL);
	free(w);
}
