/* buf.h - a growable byte buffer, the one every stage writes into (git's strbuf).
 * It lives at the bottom (base/) so that io/ and base/ can hold one without
 * depending on json/; the JSON writers that append to it are json/jwrite.h. */
#ifndef CM_BUF_H
#define CM_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct cm_buf {
	char *p;
	size_t len, cap;
} cm_buf;

/* Make room for N more bytes (exits on exhaustion, see cm_xrealloc). */
void cm_buf_grow(cm_buf *b, size_t n);

/* N may be 0 on a buffer that was never grown (p == NULL, an empty key ""):
 * then nothing is done, as NULL + 0 and memcpy(NULL, ...) are undefined. */
static inline void cm_buf_put(cm_buf *b, const void *s, size_t n)
{
	if (n == 0)
		return;
	if (b->cap - b->len < n)
		cm_buf_grow(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}
static inline void cm_buf_putc(cm_buf *b, char c)
{
	if (b->cap == b->len)
		cm_buf_grow(b, 1);
	b->p[b->len++] = c;
}
#define cm_buf_lit(b, s) cm_buf_put((b), (s), sizeof(s) - 1)
/* Append V as a varint: 7 bits a byte, low first, high bit = more (the
 * record packing of gpurec.c, the element places of cpuparallel.c). */
static inline void cm_buf_put_varint(cm_buf *b, unsigned __int128 v)
{
	unsigned char tmp[20];
	int n = 0;
	if (!(v >> 64)) { /* nearly every value: 64-bit steps, not 128-bit ones */
		uint64_t w = (uint64_t)v;
		while (w >= 0x80) {
			tmp[n++] = (unsigned char)(w | 0x80);
			w >>= 7;
		}
		tmp[n++] = (unsigned char)w;
		cm_buf_put(b, tmp, (size_t)n);
		return;
	}
	while (v >= 0x80) {
		tmp[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (unsigned char)v;
	cm_buf_put(b, tmp, (size_t)n);
}
static inline void cm_buf_puts(cm_buf *b, const char *s) { cm_buf_put(b, s, strlen(s)); }
/* Release the bytes; B is empty again (p NULL) and may be reused. */
void cm_buf_free(cm_buf *b);

#endif
