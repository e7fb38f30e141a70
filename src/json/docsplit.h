/* docsplit.h - cut a one-big-array JSON document (a trace's "traceEvents",
 * a window's "events") into batches of whole elements, at memory speed,
 * without parsing them.
 *
 * The splitter checks the document's top-level grammar (an object of
 * members, one of them the array) exactly; each element and member value
 * it hands on as text, for the caller to check and parse (jvalid.h), in
 * parallel when it likes.  It judges no value: on anything it cannot split
 * it says so, and the caller explains the fault with the careful reader
 * (saxread.h), which finds the same fault and names its place. */
#ifndef CM_DOCSPLIT_H
#define CM_DOCSPLIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "io/input.h"
#include "json/doclayout.h"
#include "json/jval.h"
#include "json/jwrite.h"

/* A batch of elements: a run of them in one read chunk of the input,
 * which the batch holds (io/input.h) until cm_docsplit_done, and the one
 * begun in an earlier chunk, copied.  Walk it with cm_docsplit_next. */
typedef struct cm_docsplit_elem {
	const char *text;    /* its first byte to its last */
	uint32_t len;
	uint64_t index;      /* its index in the array */
	int64_t end_offset;  /* text offset just past its last byte */
} cm_docsplit_elem;

/* The element at *AT of the batch B (*AT 0 for the first) into *E, and
 * *AT on to the next: 1, or 0 when there are no more. */
int cm_docsplit_next(const cm_buf *b, size_t *at, cm_docsplit_elem *e);

/* The batch B is done with: the chunk it holds is let go (its texts are
 * gone).  Once a batch, on any thread: the pool's done hook (opool.h)
 * for the pool that runs the batches. */
void cm_docsplit_done(cm_buf *b);

typedef struct cm_docsplit_sink {
	/* A top-level member other than the array: its key as in the input
	 * (quotes and escapes included) and its value's text (first byte to
	 * last); END_OFFSET: just past the value.  0 to go on, -1 to stop. */
	int (*member)(void *ctx, const char *key, size_t klen, const char *val, size_t vlen, int64_t end_offset);
	/* A batch of elements (the sink takes B's bytes by swapping the
	 * buffer with an empty one, or one done with: cm_docsplit_done is
	 * then the taker's to call).  0 to go on, -1 to stop. */
	int (*batch)(void *ctx, cm_buf *b);
	/* The array key: its decoded name is ARRAY_KEY.  A key with escapes is
	 * compared after decoding. */
	void *ctx;
	/* When set, the document's layout is noted (doclayout.h): *LAYOUT
	 * gets its file when the run returns CM_DOCSPLIT_OK (else it is
	 * closed); NAMES (NULL-ended, or NULL) are the keys with tags of their
	 * own. */
	FILE **layout;
	const char *const *names;
	/* When not NULL: the CPU seconds this thread spent cutting, outside
	 * the callbacks above, are added to *CUT_CPU, and the text bytes it
	 * cut to *CUT_BYTES (for -v: the cutter is the one thread of a read) */
	double *cut_cpu;
	uint64_t *cut_bytes;
	/* When not NULL: this thread's CPU seconds over the whole run are
	 * added to *RAN_CPU, and the times it was switched out while it
	 * could run (getrusage's involuntary switches) to *PREEMPTED */
	double *ran_cpu;
	uint64_t *preempted;
} cm_docsplit_sink;

/* For a sink's member callback: the member's key, decoded (in ARENA), when
 * both the key and the value are valid JSON; NULL when either is not (the
 * careful reader must then say what is wrong). */
const cm_jval *cm_docsplit_member_key(cm_arena *arena, const char *key, size_t klen, const char *val,
				      size_t vlen);

/* A member value longer than BYTES (default 1 MiB) is kept in a temporary
 * file while it is read, and handed to the sink's member callback as a
 * read-only mapping of it. */
void cm_docsplit_set_spill(size_t bytes);
/* That size (the careful reader spills a member's text past it too). */
size_t cm_docsplit_spill_size(void);

/* From a member callback: the bytes of its value TEXT before TEXT + UPTO
 * will not be read again, so their pages may leave memory (they stay in
 * the file: reading them again is correct, only slower).  Does nothing for
 * a value held in memory. */
void cm_docsplit_release(const char *text, size_t upto);

/* The longest value the readers hold whole, in bytes of text from its
 * first byte to its last: an element of the array (and a key), and a
 * top-level member's value.  Real events are below 64 KiB (a kernel name
 * with its templates, a stack: the corpus's longest is 5 KB); 16 MiB
 * leaves 256 times that.  An element is held a few times over once it
 * has ended (a copy, the careful reader's token, its tree: about three
 * times its text for long strings, some 36 times for a run of tiny
 * values), but while it is read its text alone (docread.c builds the
 * careful reader's tree once the element ends), so one that never ends
 * costs some 20 MB.  A member's value is spilled to a file as it is read
 * (spillbuf.h: docmember.c, and the careful reader's docread.c and, for
 * a token longer than an element's bound, saxread.c), but its reader
 * parses the ones it wants whole: a window's user_annotations grow with the window (about 10 MB
 * for 1.5 GB), so 256 MiB takes a window of some 40 GB, and the text alone
 * is what an endless one costs.  A value that never ends (a stream of 'a'
 * after '"name":"') is refused where it passes its bound, at its first
 * byte.  (The testing aids CUPTIMERGE_ELEM_MAX and CUPTIMERGE_MEMBER_MAX
 * set smaller ones.) */
#define CM_DOCSPLIT_ELEM_MAX ((uint64_t)16 << 20)
#define CM_DOCSPLIT_MEMBER_MAX ((uint64_t)256 << 20)

/* Results of cm_docsplit_run. */
enum {
	CM_DOCSPLIT_OK = 0,
	CM_DOCSPLIT_STOPPED = -1, /* a sink callback returned -1 */
	CM_DOCSPLIT_IOERR = -2,   /* reading, or a temporary file, failed (reported) */
	CM_DOCSPLIT_INVALID = -3, /* not a document the splitter can cut: the
				     top level breaks JSON's grammar, a key
				     repeats the array's, or a value is longer
				     than its bound; nothing reported */
};

/* Read all of IN, handing members and batches of about BATCH bytes (at
 * most a read chunk's) to SINK in document order.  *SEEN_ARRAY tells whether ARRAY_KEY was there.
 * Returns one of the CM_DOCSPLIT_ values. */
int cm_docsplit_run(cm_input *in, const char *array_key, size_t batch, const cm_docsplit_sink *sink,
		    const char *label, int *seen_array);

/* The layout alone, of a document read by someone else (the careful
 * reader: saxread.h's tap): no member values held, no batches handed on.
 * The recorder for ARRAY_KEY and NAMES (as in the sink): */
typedef struct cm_docsplit_rec cm_docsplit_rec;
cm_docsplit_rec *cm_docsplit_record_new(const char *array_key, const char *const *names);
/* The next piece of the text, S[0..N) at text offset BASE; every byte
 * once, in order (a cm_sax tap: REC is a cm_docsplit_rec). */
void cm_docsplit_record_feed(void *rec, const char *s, size_t n, uint64_t base);
/* The text has ended: *LAYOUT gets the layout's file and CM_DOCSPLIT_OK is
 * returned, or CM_DOCSPLIT_INVALID (the text was not a document the
 * splitter takes; nothing reported) or CM_DOCSPLIT_IOERR (reported).  REC
 * is freed. */
int cm_docsplit_record_end(cm_docsplit_rec *rec, FILE **layout);

/* The bounds alone, for the careful reader (saxread.h), which holds a
 * token cut by a chunk's end and builds what it hands on: the same machine
 * over the same bytes, so a value is refused by the same rule, at the same
 * offset, with the same words, whichever reader meets it.  A watcher of
 * the document whose array is ARRAY_KEY: */
cm_docsplit_rec *cm_docsplit_watch_new(const char *array_key);
/* The next piece, S[0..N) at text offset BASE, every byte once, in order,
 * as it arrives: 0, or 1 when a value has passed its bound, its message
 * in MSG (SIZE bytes) and its first byte's offset in *AT.  After a fault of
 * the top level's grammar it watches no more (0): the reader's own parse
 * names that fault. */
int cm_docsplit_watch_feed(cm_docsplit_rec *w, const char *s, size_t n, uint64_t base, char *msg, size_t size,
			   int64_t *at);
void cm_docsplit_watch_free(cm_docsplit_rec *w);
/* Where the text W was given so far ends: inside a string (a key's, or
 * one in a value) 1, after a backslash in it 3, else 0; -1 once W watches
 * no more.  The plan's scan (batch/batchtok.h) cuts its reads between
 * tokens by it. */
int cm_docsplit_watch_in_string(const cm_docsplit_rec *w);
/* The bound W holds an element (and a key) to, in bytes: a token longer
 * than it can only be a top-level member's value. */
uint64_t cm_docsplit_watch_elem_max(const cm_docsplit_rec *w);

#endif
