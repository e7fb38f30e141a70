/* inputbuf.h - the chunk buffers of an input and the holds on them
 * (inputbuf.c).  Internal to src/io: the stages of input_int.h. */
#ifndef CM_INPUTBUF_H
#define CM_INPUTBUF_H

#include "io/input.h"

#include <stddef.h>

/* A buffer a chunk is read into (raw, text, the read-ahead slots'): a
 * count of references before its bytes, and what a mapping needs. */
struct chunkbuf {
	cm_input *in;
	struct chunkbuf *next; /* on the free list */
	int refs;
	int mapped;            /* 1: the bytes start a page of their own (buf_new), inputraw_map_chunk may
				* map a file there; 2: they are a file's pages now (read-only), until
				* inputraw.c makes them writable again */
	int pad[2];            /* the bytes start 32 bytes in: 16-aligned, as malloc's block is */
	unsigned char data[];
};

/* The buffer whose bytes start at P (P from inputbuf_get). */
static inline struct chunkbuf *inputbuf_of(unsigned char *p)
{
	return (struct chunkbuf *)(p - offsetof(struct chunkbuf, data));
}

/* The page size (4096 when sysconf does not say). */
size_t inputbuf_page_size(void);

/* A buffer of IN->raw_cap bytes the input owns (one reference): one let
 * go, or a new one (pages of its own when IN->map_ok).  Exits on OOM. */
unsigned char *inputbuf_get(cm_input *in);

/* Free a buffer (NULL: nothing) at once, whatever its references: for the
 * input's own buffers before any chunk was handed out. */
void inputbuf_free(struct chunkbuf *b);

/* One reference to B gone; the last one gives it back: kept for the next
 * chunks while the pass goes on, else freed.  On any thread. */
void inputbuf_unref(struct chunkbuf *b);

/* Before the input writes into its buffer *P: when a hold keeps the chunk
 * it last held, the input lets go of it and *P becomes another buffer. */
void inputbuf_own(cm_input *in, unsigned char **p);

/* The pass handed out its end (or an error): buffers let go from now on
 * are freed, and those kept are. */
void inputbuf_pass_ended(cm_input *in);

#endif
