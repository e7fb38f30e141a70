/* docsplit.c - the splitter: one byte loop over the top level of a document.
 *
 * Only three things need tracking to find where a value ends: whether we
 * are in a string, whether the byte before was a backslash, and the
 * bracket depth (jscan.h).  That is a table lookup a byte, far cheaper than
 * parsing, so one thread can cut a document for many that parse it.  The
 * top level itself - braces, keys, colons, commas - is checked here to the
 * letter of JSON, so that a document whose every value the workers accept
 * is exactly a document yajl accepts.  A batch is a run of elements in one
 * read chunk, held (io/input.h) until the batch is done: the cutter copies
 * no element, it only finds where each ends (cm_jscan_elements, many from
 * one 64-byte block's masks) and writes two numbers an element.  Only an
 * element that began in an earlier chunk is copied (one a chunk, with the
 * chunk's first batch; with tiny reads, every element, and a batch of
 * copies alone goes on across chunks up to its size).
 *
 * A member value is handed on whole, so it is held while it is read.  A
 * big one (a window's user_annotations: about 10 MB a GB of window) would
 * make memory grow with the input; so a value longer than the spill size
 * goes to an unlinked temporary file as it is read, and is handed on as a
 * read-only mapping of that file.  Its reader may then let go of the pages
 * behind it (cm_docsplit_release), and this file's own check of the value
 * does so too, an element or member at a time.
 *
 * The layout (doclayout.h) is noted on the way, where each part ends: the
 * copy of a trace (cpu/cpucopy.c) walks it instead of the bytes.  The
 * careful reader's trace gets the same layout from this machine alone,
 * fed through saxread's tap (cm_docsplit_record_*): what was checked is
 * then yajl's, what is noted is made here either way. */
#define _GNU_SOURCE 1 /* RUSAGE_THREAD */
#include "config.h"
#include "json/docsplit.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/tmpfile.h"
#include "json/jscan.h"
#include "json/jval.h"
#include "json/jvalid.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

enum state {
	ST_START,      /* before the top-level '{' */
	ST_OBJ_OPEN,   /* after '{': a key or '}' */
	ST_KEY_NEXT,   /* after ',': a key */
	ST_KEY,        /* in a key */
	ST_COLON,      /* after a key */
	ST_VALUE,      /* after ':': a value */
	ST_MEMBER,     /* in a member's value */
	ST_AFTER,      /* after a member: ',' or '}' */
	ST_ARR_OPEN,   /* after the array's '[': an element or ']' */
	ST_ELEM_NEXT,  /* after ',' in the array: an element */
	ST_ELEM,       /* in an element */
	ST_ARR_AFTER,  /* after an element: ',' or ']' */
	ST_END,        /* after the top-level '}' */
};

struct split {
	cm_input *in;
	const cm_docsplit_sink *sink;
	const char *array_key;
	size_t batch_size;
	enum state st;
	cm_jscan sc;
	int key_esc, key_is_array, seen_array;
	cm_buf key, val, batch;
	cm_buf carry;       /* the element begun in an earlier chunk: its bytes so far */
	cm_buf copy;        /* the batch's copied elements (struct crec and bytes each) */
	size_t inplace;     /* the batch's elements in its chunk */
	size_t bytes;       /* element bytes in the batch */
	uint64_t index;     /* the index of the batch's next element */
	cm_arena *arena;
	FILE *spill;        /* the value being read, when it outgrew val, or NULL */
	size_t spill_len;
	/* the layout (sink->layout), written at chunk ends; the places of
	 * the member being read */
	int lay_on, record_only, tag;
	const char *const *names;
	cm_doclayout lay;
	uint64_t key_at, key_end, val_at;
	double in_sink;     /* CPU seconds of this thread in the sink's callbacks (when cut_cpu) */
};

/* How many times the calling thread lost its CPU while it could run. */
static uint64_t thread_preempted(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
}

/* Member values longer than this go to a temporary file. */
static size_t spill_at = 1u << 20;

/* The spilled value being handed on by this thread, mapped. */
static __thread const char *spill_map;
static __thread size_t spill_map_len;

void cm_docsplit_set_spill(size_t bytes) { spill_at = bytes; }

void cm_docsplit_release(const char *text, size_t upto)
{
	uintptr_t a = (uintptr_t)text, b;
	long page = sysconf(_SC_PAGESIZE);
	if (!spill_map || text != spill_map)
		return;
	if (upto > spill_map_len)
		upto = spill_map_len;
	b = (a + upto) & ~(uintptr_t)(page - 1); /* whole pages only; the mapping starts on one */
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
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

/* Append S[0..N) to the member value being read: in memory, or past the
 * spill size in the temporary file.  0, or -1 after a report. */
static int val_put(struct split *sp, const char *s, size_t n)
{
	if (sp->record_only) /* the careful reader has the value */
		return 0;
	if (!sp->spill && sp->val.len + n <= spill_at) {
		cm_buf_put(&sp->val, s, n);
		return 0;
	}
	if (!sp->spill) {
		if (!(sp->spill = cm_temp_file("member")))
			return -1;
		sp->spill_len = 0;
		/* val may never have been grown (p NULL): fwrite must not see that */
		if (sp->val.len && fwrite(sp->val.p, 1, sp->val.len, sp->spill) != sp->val.len)
			goto fail;
		sp->spill_len = sp->val.len;
		sp->val.len = 0;
	}
	if (fwrite(s, 1, n, sp->spill) != n)
		goto fail;
	sp->spill_len += n;
	return 0;
fail:
	return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
}

/* The member value is complete: hand it to the sink, from memory or as a
 * mapping of its file.  0, 1 when the sink said stop, or CM_DOCSPLIT_IOERR
 * (reported). */
static int member_done(struct split *sp, int64_t end_offset)
{
	const char *v = sp->val.p;
	size_t n = sp->val.len;
	void *map = NULL;
	int rc;
	if (sp->lay_on)
		cm_doclayout_member(&sp->lay, sp->tag, sp->key_at, sp->key_end, sp->val_at, (uint64_t)end_offset);
	if (sp->record_only)
		return 0;
	if (sp->spill) {
		n = sp->spill_len;
		map = fflush(sp->spill) ? MAP_FAILED : mmap(NULL, n, PROT_READ, MAP_PRIVATE, fileno(sp->spill), 0);
		fclose(sp->spill);
		sp->spill = NULL;
		if (map == MAP_FAILED)
			return cm_error(CM_EXIT_IO, NULL, -1, "cannot map a temporary file: %s", strerror(errno)),
			       CM_DOCSPLIT_IOERR;
		v = spill_map = map;
		spill_map_len = n;
	}
	if (sp->sink->cut_cpu) {
		double t = cm_thread_cpu_s();
		rc = sp->sink->member(sp->sink->ctx, sp->key.p, sp->key.len, v, n, end_offset) < 0;
		sp->in_sink += cm_thread_cpu_s() - t;
	} else {
		rc = sp->sink->member(sp->sink->ctx, sp->key.p, sp->key.len, v, n, end_offset) < 0;
	}
	if (map) {
		spill_map = NULL;
		munmap(map, n);
	}
	return rc;
}

/* A batch, in its buffer: this header, two numbers an element (its start
 * and its end in the chunk; for an element begun in an earlier chunk,
 * CARRIED and where its copy lies among the copies), then the copies, each
 * a struct crec and the element's bytes, padded to 8.  A batch whose
 * elements are all copies stays open across chunks (with tiny reads every
 * element is one: a batch a chunk would be a batch an element). */
struct bhead {
	const char *chunk; /* the chunk the elements lie in */
	void *hold;        /* its hold (cm_input_hold), or NULL */
	int64_t base;      /* the text offset of chunk[0] */
	uint64_t first;    /* the first element's index */
	uint32_t n;        /* elements */
	uint32_t pad;
};

/* A copied element's record, before its bytes. */
struct crec {
	int64_t end_offset;
	uint32_t len, pad;
};

/* A span's start for an element that began in an earlier chunk. */
#define CARRIED UINT32_MAX

int cm_docsplit_next(const cm_buf *b, size_t *at, cm_docsplit_elem *e)
{
	const struct bhead *h = (const struct bhead *)(const void *)b->p;
	const uint32_t *span;
	if (b->len < sizeof *h || *at >= h->n)
		return 0;
	span = (const uint32_t *)(h + 1) + 2 * *at;
	if (span[0] == CARRIED) {
		const char *rec = (const char *)((const uint32_t *)(h + 1) + 2 * h->n) + span[1];
		struct crec c;
		memcpy(&c, rec, sizeof c);
		e->text = rec + sizeof c;
		e->len = c.len;
		e->end_offset = c.end_offset;
	} else {
		e->text = h->chunk + span[0];
		e->len = span[1] - span[0];
		e->end_offset = h->base + span[1];
	}
	e->index = h->first + *at;
	(*at)++;
	return 1;
}

void cm_docsplit_done(cm_buf *b)
{
	struct bhead *h = (struct bhead *)(void *)b->p;
	if (b->len >= sizeof *h && h->hold) {
		cm_input_release(h->hold);
		h->hold = NULL;
	}
}

/* cm_jvalid_value (at depth 1) of a spilled member value: an object or an
 * array is checked an element (a key and a value) at a time, letting go of
 * the pages behind every MiB; the verdict is the same. */
static int valid_released(const char *s, size_t n)
{
	size_t i = 0, at, done = 0;
	char close_ch;
	cm_jscan_skip_ws(s, n, &i);
	if (i >= n || (s[i] != '{' && s[i] != '['))
		return cm_jvalid_value(s, n, 1, NULL);
	close_ch = s[i++] == '{' ? '}' : ']';
	cm_jscan_skip_ws(s, n, &i);
	if (i < n && s[i] == close_ch) {
		i++;
	} else {
		for (;;) {
			if (close_ch == '}') { /* a key, then a colon */
				if (i >= n || s[i] != '"' || cm_jvalid_prefix(s + i, n - i, 2, &at) != 1)
					return 0;
				i += at;
				cm_jscan_skip_ws(s, n, &i);
				if (i >= n || s[i] != ':')
					return 0;
				i++;
				cm_jscan_skip_ws(s, n, &i);
			}
			if (cm_jvalid_prefix(s + i, n - i, 2, &at) != 1)
				return 0;
			i += at;
			if (i - done >= (1u << 20)) {
				cm_docsplit_release(s, i);
				done = i;
			}
			cm_jscan_skip_ws(s, n, &i);
			if (i < n && s[i] == ',') {
				i++;
				cm_jscan_skip_ws(s, n, &i);
			} else if (i < n && s[i] == close_ch) {
				i++;
				break;
			} else {
				return 0;
			}
		}
	}
	cm_jscan_skip_ws(s, n, &i);
	cm_docsplit_release(s, i);
	return i == n;
}

const cm_jval *cm_docsplit_member_key(cm_arena *arena, const char *key, size_t klen, const char *val, size_t vlen)
{
	if (!cm_jvalid_value(key, klen, 1, NULL))
		return NULL;
	if (val == spill_map ? !valid_released(val, vlen) : !cm_jvalid_value(val, vlen, 1, NULL))
		return NULL;
	return cm_jval_parse_py(arena, key, klen);
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

/* The batch, empty, starts on the chunk S at text offset BASE. */
static void batch_open(struct split *sp, const char *s, uint64_t base)
{
	struct bhead *h;
	sp->batch.len = 0;
	cm_buf_grow(&sp->batch, sizeof *h);
	h = (struct bhead *)(void *)sp->batch.p;
	h->chunk = s;
	h->hold = NULL;
	h->base = (int64_t)base;
	h->first = sp->index;
	h->n = 0;
	h->pad = 0;
	sp->batch.len = sizeof *h;
	sp->bytes = 0;
	sp->inplace = 0;
	sp->copy.len = 0;
}

/* Hand the batch on, when it has elements (with the chunk held when any
 * lies in it, and the copies), and start the next on the same chunk.  0,
 * or -1 when the sink said stop. */
static int batch_send(struct split *sp)
{
	struct bhead *h = (struct bhead *)(void *)sp->batch.p;
	const char *s = h->chunk;
	uint64_t base = (uint64_t)h->base;
	uint32_t n = (uint32_t)((sp->batch.len - sizeof *h) / 8);
	int rc;
	if (!n)
		return 0;
	h->n = n;
	if (sp->inplace && sp->in) /* the recorder (no input) hands nothing on */
		h->hold = cm_input_hold(sp->in);
	/* the buffer may move: h is not used after this */
	cm_buf_put(&sp->batch, sp->copy.p, sp->copy.len);
	sp->index += n;
	if (sp->sink->cut_cpu) { /* the sink may parse (a caller that helps, opool.h): not cutting */
		double t = cm_thread_cpu_s();
		rc = sp->sink->batch(sp->sink->ctx, &sp->batch);
		sp->in_sink += cm_thread_cpu_s() - t;
	} else {
		rc = sp->sink->batch(sp->sink->ctx, &sp->batch);
	}
	/* the buffer back from the sink (its own, or the pool's, done with)
	 * holds no chunk; one the sink did not take does */
	cm_docsplit_done(&sp->batch);
	batch_open(sp, s, base);
	return rc < 0 ? -1 : 0;
}

/* Room for MAX more elements in the batch; where their spans go. */
static uint32_t *spans_room(struct split *sp, size_t max)
{
	if (sp->batch.cap - sp->batch.len < 8 * max)
		cm_buf_grow(&sp->batch, 8 * max);
	return (uint32_t *)(void *)(sp->batch.p + sp->batch.len);
}

/* GOT elements that ended in S, at text offset BASE, have their spans in
 * place (spans_room): counted in; the first may be the one carried from an
 * earlier chunk, its last bytes taken and the whole copied.  When the batch
 * is full it goes.  0, or -1 when the sink said stop. */
static int spans_done(struct split *sp, const char *s, uint64_t base, size_t got)
{
	uint32_t *span = (uint32_t *)(void *)(sp->batch.p + sp->batch.len);
	for (size_t j = 0; j < got; j++) {
		if (span[2 * j] == CARRIED) {
			static const char zeros[8];
			struct crec c = {(int64_t)(base + span[2 * j + 1]), 0, 0};
			cm_buf_put(&sp->carry, s, span[2 * j + 1]);
			c.len = (uint32_t)sp->carry.len;
			if (sp->lay_on)
				cm_doclayout_elem(&sp->lay, (uint64_t)c.end_offset - c.len, (uint64_t)c.end_offset);
			span[2 * j + 1] = (uint32_t)sp->copy.len;
			cm_buf_put(&sp->copy, &c, sizeof c);
			cm_buf_put(&sp->copy, sp->carry.p, sp->carry.len);
			cm_buf_put(&sp->copy, zeros, (8 - sp->carry.len % 8) % 8);
			sp->bytes += sp->carry.len;
			sp->carry.len = 0;
		} else {
			if (sp->lay_on)
				cm_doclayout_elem(&sp->lay, base + span[2 * j], base + span[2 * j + 1]);
			sp->bytes += span[2 * j + 1] - span[2 * j];
			sp->inplace++;
		}
	}
	sp->batch.len += 8 * got;
	return sp->bytes >= sp->batch_size ? batch_send(sp) : 0;
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
		batch_open(sp, s, base);
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
				if (val_put(sp, s + run, i - run) < 0)
					return CM_DOCSPLIT_IOERR;
				if ((rc = member_done(sp, (int64_t)(base + i))) != 0)
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
				uint32_t *spans = spans_room(sp, 256), start = carried ? CARRIED : (uint32_t)run;
				size_t stop = i + (sp->batch_size > sp->bytes ? sp->batch_size - sp->bytes : 0);
				int after;
				size_t got = cm_jscan_elements(&sp->sc, s, n, &i, &start, spans, 256, stop, &after);
				if (after) {
					sp->st = ST_ARR_AFTER;
				} else if (got) { /* one began, and goes on in the next chunk */
					run = start;
					carried = 0;
				}
				if (spans_done(sp, s, base, got) < 0)
					return 1;
			} else if (cm_jscan_feed(&sp->sc, s, n, &i)) { /* a string, number or literal */
				uint32_t *span = spans_room(sp, 1);
				span[0] = carried ? CARRIED : (uint32_t)run;
				span[1] = (uint32_t)i;
				carried = 0;
				sp->st = ST_ARR_AFTER;
				if (spans_done(sp, s, base, 1) < 0)
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
	 * far kept */
	if (sp->inplace && batch_send(sp) < 0)
		return 1;
	if (sp->st == ST_ELEM) {
		if (!carried)
			sp->carry.len = 0;
		cm_buf_put(&sp->carry, s + run, n - run);
	} else if (sp->st == ST_MEMBER && run < n && val_put(sp, s + run, n - run) < 0)
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
	else if (sp.batch.len > sizeof(struct bhead) && batch_send(&sp) < 0) /* the copies left */
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
