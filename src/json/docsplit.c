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
#define _GNU_SOURCE 1 /* RUSAGE_THREAD */
#include "config.h"
#include "json/docsplit.h"
#include "json/docsplit_int.h"
#include "json/docbatch.h"
#include "json/docmember.h"
#include "base/diag.h"
#include "json/jscan.h"
#include "json/jval.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* How many times the calling thread lost its CPU while it could run. */
static uint64_t thread_preempted(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
}

/* The run ended with RC: on CM_DOCSPLIT_OK the layout's file to *OUT (RC
 * becomes CM_DOCSPLIT_IOERR when it cannot be written), else away.  The
 * run's buffers are freed.  Returns RC. */
static int split_end(struct split *sp, int rc, FILE **out)
{
	if (sp->lay_on && cm_doclayout_end(&sp->lay, rc == CM_DOCSPLIT_OK, out) < 0)
		rc = CM_DOCSPLIT_IOERR;
	if (sp->spill) /* the document ended inside a spilled value */
		fclose(sp->spill);
	cm_buf_free(&sp->key);
	cm_buf_free(&sp->val);
	cm_buf_free(&sp->batch);
	cm_buf_free(&sp->carry);
	cm_buf_free(&sp->copy);
	cm_arena_free(sp->arena);
	return rc;
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

/* Scan the chunk S[0..N) at text offset BASE.  0, 1 to stop (a sink said
 * so), or CM_DOCSPLIT_INVALID. */
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
				sp->val.len = 0;
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
	if (sp->st == ST_ELEM) {
		if (!carried)
			sp->carry.len = 0;
		cm_buf_put(&sp->carry, s + run, n - run);
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
	else if (fed || sp.st != ST_END)
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
