/* doclayout.h - the layout of a one-big-array document: where every part
 * of its top level and every element of its array lies, noted by the
 * splitter (docsplit.c) as it reads, for a later pass to walk instead of
 * the bytes (the CPU trace's copy, cpu/cpucopy.c).  The format, and the
 * writer.
 *
 * Varints (7 bits a byte, low first) in an unlinked temporary file, so that
 * a top level of millions of keys, or an array of millions of elements,
 * takes no memory; in document order:
 *
 *   document := OPEN member* 0 CLOSE
 *   member   := TAG KEY KLEN VAL (VLEN | element* 0 CLOSE)
 *   element  := GAP+1 LEN
 *
 * OPEN is the text offset of the '{'.  Every other place is a distance from
 * the end of what came before it (just past the '{', a key, a value, an
 * element, the array's '['): KEY to a key's opening quote, KLEN the key's
 * length with its quotes, VAL to the value's first byte, VLEN the value's
 * length, GAP to an element's first byte, LEN its length, CLOSE to the ']'
 * or the '}'.
 *
 * After the document, for a document with one array: its marks, so that a
 * later pass can walk parts of the array on several threads (cpu/cpucopypar.c)
 * without decoding the records before them.  A mark before every element
 * that starts CM_DOCLAYOUT_STRIDE text bytes or more past the last mark's
 * (the first element always), and one before the array's 0: three uint64
 * each (this machine's byte order: the file is this run's own), the element's
 * index, where the distance of its record counts from (the end of the
 * element before, or just past the '['), and the record's offset in the
 * file; then the marks' count and CM_DOCLAYOUT_MAGIC, a uint64 each.  A
 * file without that tail has no marks (cm_doclayout_marks).  TAG: */
#ifndef CM_DOCLAYOUT_H
#define CM_DOCLAYOUT_H

#include <stdint.h>
#include <stdio.h>
#include "base/buf.h"

enum {
	CM_DOCLAYOUT_ARRAY = 1, /* the array: VAL is its '[', its elements follow */
	CM_DOCLAYOUT_OTHER = 2, /* a key not among the names the splitter was given */
	CM_DOCLAYOUT_NAME = 3,  /* + i: the key is names[i] (decoded) */
};

/* The writer: records noted into BUF, written to FILE (made at the first
 * write) by cm_doclayout_flush; POS is where the next distance counts from. */
typedef struct cm_doclayout {
	cm_buf buf;
	FILE *file;
	uint64_t pos;
	/* the marks (see above): the bytes written to the file so far, the
	 * array's elements so far, where the next mark is due, the marks;
	 * the arrays begun and whether one is open */
	uint64_t flushed, nelem, mark_at;
	cm_buf marks;
	int arrays, in_array;
} cm_doclayout;

/* Text bytes between two marks, at least; and the tail's last word. */
#define CM_DOCLAYOUT_STRIDE (256u << 10)
#define CM_DOCLAYOUT_MAGIC 0x736b72616d796c63ull /* "clymarks" */

/* A mark: element INDEX's record is at OFF in the file, its distance
 * counted from POS. */
typedef struct cm_doclayout_mark {
	uint64_t index, pos, off;
} cm_doclayout_mark;

/* The text bytes between marks: CM_DOCLAYOUT_STRIDE, or the testing aid
 * CUPTIMERGE_COPY_STRIDE's. */
uint64_t cm_doclayout_stride(void);

/* Note a mark before element l->nelem (doclayout.c). */
void cm_doclayout_mark_here(cm_doclayout *l);

/* Note the distance from the last place noted to AT; AT is the new one. */
static inline void cm_doclayout_to(cm_doclayout *l, uint64_t at)
{
	cm_buf_put_varint(&l->buf, at - l->pos);
	l->pos = at;
}

/* The document's '{' at AT. */
void cm_doclayout_open(cm_doclayout *l, uint64_t at);
/* A member, not the array: its key [KEY_AT, KEY_END), its value [VAL_AT, END). */
void cm_doclayout_member(cm_doclayout *l, int tag, uint64_t key_at, uint64_t key_end, uint64_t val_at,
			 uint64_t end);
/* The array's key [KEY_AT, KEY_END) and its '[' at AT. */
void cm_doclayout_array(cm_doclayout *l, uint64_t key_at, uint64_t key_end, uint64_t at);
/* The ']' or '}' at AT. */
void cm_doclayout_close(cm_doclayout *l, uint64_t at);

/* An element [START, END). */
static inline void cm_doclayout_elem(cm_doclayout *l, uint64_t start, uint64_t end)
{
	if (start >= l->mark_at)
		cm_doclayout_mark_here(l);
	l->nelem++;
	cm_buf_put_varint(&l->buf, start - l->pos + 1);
	cm_buf_put_varint(&l->buf, end - start);
	l->pos = end;
}

/* The records noted go to the file.  0, or -1 after a report. */
int cm_doclayout_flush(cm_doclayout *l);

/* The document was read: when OK, its layout's file (all written, at its
 * end) to *OUT, or -1 after a report when it cannot be written; else the
 * file closed.  L's buffer is freed.  0 or -1. */
int cm_doclayout_end(cm_doclayout *l, int ok, FILE **out);

/* The marks of the layout file F (written, flushed), into *MARKS (malloc'd,
 * the caller frees it) and *N: 0, or -1 when it has none (a document with
 * no array or more than one, a file made otherwise) or cannot be read.
 * The last mark is the array's end.  F's position is left where it was. */
int cm_doclayout_marks(FILE *f, cm_doclayout_mark **marks, size_t *n);

#endif
