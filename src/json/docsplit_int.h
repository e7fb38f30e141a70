/* docsplit_int.h - the state of one split, shared by the splitter's files.
 * Internal to src/json: the callers see json/docsplit.h only.
 *
 * Splitting a document is the top-level machine and two parts below it,
 * each in a file of its own, each calling only the ones below it (no file
 * calls back up):
 *
 *   docsplit.c    the byte loop over the top level (its grammar checked,
 *                 the layout noted), the run over an input, the recorder
 *   docbatch.c    the batches: their format, filled with the elements'
 *                 spans and copies, handed on, walked by the sink
 *   docmember.c   a member value: held, or spilled to a file and mapped,
 *                 handed on, and checked (cm_docsplit_member_key)
 *
 * struct split is as it was when one file held it all: val, spill and
 * spill_len are the member value (docmember.c, which hands the key read by
 * docsplit.c on with it); batch, copy, inplace, bytes and index the batch
 * being filled (docbatch.c; carry, the element cut by a chunk's end,
 * docsplit.c keeps and docbatch.c copies); the rest the machine's.  docsplit.c sets it up (cm_docsplit_run, the recorder) and
 * frees what it holds (split_end). */
#ifndef CM_DOCSPLIT_INT_H
#define CM_DOCSPLIT_INT_H

#include "json/docsplit.h"
#include "json/jscan.h"
#include "json/spillbuf.h"

#include <stdint.h>
#include <stdio.h>

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

/* feed's result (docsplit.c) when a value passed its bound: the split's
 * too, too_at and too_index say which.  Never returned by the run, which
 * calls it CM_DOCSPLIT_INVALID (the careful reader names it). */
#define DOCSPLIT_TOO_LONG (-4)
enum { TOO_ELEM = 1, TOO_KEY, TOO_MEMBER };

/* One split: the machine's state (docsplit.c), the member value being read
 * (docmember.c), the batch being filled (docbatch.c), the layout. */
struct split {
	cm_input *in;
	const cm_docsplit_sink *sink;
	const char *array_key;
	size_t batch_size;
	enum state st;
	cm_jscan sc;
	int key_esc, key_is_array, seen_array;
	cm_buf key, batch;
	cm_spillbuf val;    /* the member value being read (docmember.c) */
	cm_buf carry;       /* the element begun in an earlier chunk: its bytes so far */
	cm_buf copy;        /* the batch's copied elements (struct crec and bytes each) */
	size_t inplace;     /* the batch's elements in its chunk */
	size_t bytes;       /* element bytes in the batch */
	uint64_t index;     /* the index of the batch's next element */
	cm_arena *arena;
	/* the layout (sink->layout), written at chunk ends; the places of
	 * the member being read */
	int lay_on, record_only, tag;
	const char *const *names;
	cm_doclayout lay;
	uint64_t key_at, key_end, val_at;
	/* the bounds (docsplit.h): where the element being scanned began,
	 * noted at chunk ends; the longest element (and key) and member value
	 * taken; and once one is passed, which and where (split_too_long) */
	uint64_t elem_at;
	uint64_t elem_max, member_max;
	int too;            /* TOO_ELEM, TOO_KEY, TOO_MEMBER, or 0 */
	uint64_t too_at, too_index;
	double in_sink;     /* CPU seconds of this thread in the sink's callbacks (when cut_cpu) */
};

#endif
