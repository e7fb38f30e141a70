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
 * or the '}'.  TAG: */
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
} cm_doclayout;

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

#endif
