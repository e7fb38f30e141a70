/* inputbuf.c - the chunk buffers of an input, and holds on them.
 *
 * The splitter hands its workers runs of elements in the chunks themselves
 * (json/docsplit.c), so a chunk must outlive the next cm_input_next.  Every
 * buffer a chunk is read into (raw, text, the read-ahead slots') carries a
 * count of references: one while the input owns it, one a hold.  Before the
 * input writes into a buffer (inputbuf_own), it looks whether anyone holds
 * it; if so it lets go of its own reference and takes a fresh buffer, from
 * the buffers let go (a few are kept) or malloc.  The last hold let go
 * returns the buffer to that list.  So memory is what is held, which the
 * caller bounds (the pools' slots).  The count is atomic: holds are let go
 * on the workers' threads.
 *
 * A buffer of an input that may be mapped (inputraw.c, "Mapped reading") is
 * a mapping of its own, so that a file's pages can be put where its bytes
 * lie; the rest of the input never knows which kind it holds. */
#include "config.h"
#include "io/inputbuf.h"
#include "io/input_int.h"
#include "base/diag.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Buffers kept for reuse, at most. */
#define FREE_MAX 8

size_t inputbuf_page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	return pg > 0 ? (size_t)pg : 4096;
}

/* A new buffer of raw_cap bytes.  For an input that may be mapped, its
 * bytes are a mapping of their own that starts a page, the header at the
 * end of the page before, so that inputraw_map_chunk can put a file's pages there
 * (and inputbuf_of still finds the header); else a malloc'd block. */
static struct chunkbuf *buf_new(cm_input *in)
{
	struct chunkbuf *b;
	if (in->map_ok) {
		size_t pg = inputbuf_page_size();
		char *base = mmap(NULL, pg + in->raw_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base != MAP_FAILED) {
			b = (struct chunkbuf *)(void *)(base + pg - offsetof(struct chunkbuf, data));
			b->mapped = 1;
			b->in = in;
			return b;
		}
	}
	b = cm_xmalloc(sizeof *b + in->raw_cap);
	b->mapped = 0;
	b->in = in;
	return b;
}

/* Free a buffer buf_new made. */
void inputbuf_free(struct chunkbuf *b)
{
	size_t pg;
	if (!b)
		return;
	if (!b->mapped) {
		free(b);
		return;
	}
	pg = inputbuf_page_size();
	munmap(b->data - pg, pg + b->in->raw_cap);
}

/* A buffer of raw_cap bytes the input owns: one let go, or a new one. */
unsigned char *inputbuf_get(cm_input *in)
{
	struct chunkbuf *b;
	pthread_mutex_lock(&in->hold_mu);
	if ((b = in->free) != NULL) {
		in->free = b->next;
		in->nfree--;
	}
	pthread_mutex_unlock(&in->hold_mu);
	if (!b)
		b = buf_new(in);
	b->refs = 1;
	return b->data;
}

/* One reference to B gone; the last one gives it back: kept for the next
 * chunks while the pass goes on, else freed. */
void inputbuf_unref(struct chunkbuf *b)
{
	cm_input *in = b->in;
	if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pthread_mutex_lock(&in->hold_mu);
	if (!in->ended && in->nfree < FREE_MAX) {
		b->next = in->free;
		in->free = b;
		in->nfree++;
		b = NULL;
	}
	pthread_mutex_unlock(&in->hold_mu);
	inputbuf_free(b);
}

/* Before the input writes into its buffer *P: when a hold keeps the chunk
 * it last held, the input lets go of it and writes into another. */
void inputbuf_own(cm_input *in, unsigned char **p)
{
	struct chunkbuf *b = inputbuf_of(*p);
	if (__atomic_load_n(&b->refs, __ATOMIC_ACQUIRE) == 1)
		return;
	inputbuf_unref(b);
	*p = inputbuf_get(in);
}

/* The pass handed out its end (or an error): buffers let go from now on
 * are freed, and those kept are. */
void inputbuf_pass_ended(cm_input *in)
{
	struct chunkbuf *b;
	pthread_mutex_lock(&in->hold_mu);
	in->ended = 1;
	b = in->free;
	in->free = NULL;
	in->nfree = 0;
	pthread_mutex_unlock(&in->hold_mu);
	while (b) {
		struct chunkbuf *next = b->next;
		inputbuf_free(b);
		b = next;
	}
}

void *cm_input_hold(cm_input *in)
{
	struct chunkbuf *b = inputbuf_of(in->last);
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
	return b;
}

void cm_input_release(void *hold)
{
	if (hold)
		inputbuf_unref(hold);
}
