/* buf.c - the growable byte buffer's out-of-line steps: growing and freeing. */
#include "config.h"
#include "base/buf.h"
#include "base/diag.h"

#include <stdlib.h>

void cm_buf_grow(cm_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	b->p = cm_xrealloc(b->p, cap);
	b->cap = cap;
}

void cm_buf_free(cm_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
