/* spillbuf.h - bytes collected in memory up to a size, past it in an
 * unnamed temporary file, and read back whole as a mapping of that file:
 * how a value that may be long (a top-level member's, up to its 256 MiB
 * bound) is held while it is read without its bytes taking memory.  The
 * splitter's member values (docmember.c), and the careful reader's token
 * (saxread.c) and member text (docread.c). */
#ifndef CM_SPILLBUF_H
#define CM_SPILLBUF_H

#include "base/buf.h"

#include <stddef.h>
#include <stdio.h>

typedef struct cm_spillbuf {
	cm_buf mem;      /* the bytes, while they are in memory */
	FILE *file;      /* all of them, once they outgrew it, or NULL */
	size_t file_len;
	void *map;       /* the file mapped by cm_spillbuf_text, or NULL */
	size_t map_len;
} cm_spillbuf;       /* zero: empty */

/* Append S[0..N): in memory while the bytes stay within AT, else (all of
 * them, the ones in memory first) in the file.  0, or -1 after a report. */
int cm_spillbuf_put(cm_spillbuf *b, const char *s, size_t n, size_t at);

/* How many bytes B holds. */
static inline size_t cm_spillbuf_len(const cm_spillbuf *b)
{
	return b->file ? b->file_len : b->mem.len;
}

/* All the bytes, *N of them, one after the other: from memory, or the
 * file mapped read-only (the file is then closed: B takes no more bytes
 * until cm_spillbuf_clear).  Valid until cm_spillbuf_clear; NULL after a
 * report. */
const char *cm_spillbuf_text(cm_spillbuf *b, size_t *n);

/* Empty B: the mapping and the file let go, the memory kept for reuse. */
void cm_spillbuf_clear(cm_spillbuf *b);

/* Empty B and free its memory. */
void cm_spillbuf_free(cm_spillbuf *b);

#endif
