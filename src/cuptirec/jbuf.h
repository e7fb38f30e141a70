/* jbuf.h - a growable text buffer with JSON writers that never abort the host. */
#ifndef CREC_JBUF_H
#define CREC_JBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A byte buffer for JSON text.  Unlike the merge's buffer it must not exit on
 * exhaustion (it runs inside someone else's process): a failed allocation sets
 * `failed`, later appends are dropped, and the owner checks the flag. */
typedef struct crec_jbuf {
	char *p;
	size_t len, cap;
	int failed;
} crec_jbuf;

/* Make room for N more bytes; returns 0, or -1 (and sets failed) on ENOMEM. */
int crec_jbuf_reserve(crec_jbuf *b, size_t n);

/* Append N bytes of S. */
static inline void crec_jbuf_put(crec_jbuf *b, const void *s, size_t n)
{
	if (b->cap - b->len < n && crec_jbuf_reserve(b, n) != 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}
#define crec_jbuf_lit(b, s) crec_jbuf_put((b), (s), sizeof(s) - 1)
static inline void crec_jbuf_puts(crec_jbuf *b, const char *s) { crec_jbuf_put(b, s, strlen(s)); }

/* Release the storage; the buffer is empty and reusable afterwards. */
void crec_jbuf_free(crec_jbuf *b);

/* Append a JSON string literal for the bytes s[0..n).  Quotes, backslashes and
 * control characters are escaped; valid UTF-8 passes through; every byte that
 * is not part of a valid UTF-8 sequence becomes U+FFFD, so the output is always
 * valid JSON whatever an application passes as an annotation name. */
void crec_jbuf_str(crec_jbuf *b, const char *s, size_t n);

/* Write the JSON string literal for s[0..n) (the same escaping as
 * crec_jbuf_str) into OUT, which must hold 6 * N + 3 bytes; no allocation, so
 * it may run where malloc may not (an _exit wrapper).  Returns the length
 * written (no NUL is added). */
size_t crec_json_str_fixed(char *out, const char *s, size_t n);

/* The most digits crec_json_u64_fixed writes: those of UINT64_MAX. */
#define CREC_U64_DIGITS 20

/* Write V in decimal into OUT, which must hold CREC_U64_DIGITS bytes; no
 * allocation, as crec_json_str_fixed.  Returns the length written (no NUL).
 * crec_jbuf_u64 and the thread map's malloc-free writer both use it. */
size_t crec_json_u64_fixed(char *out, uint64_t v);

/* Append the decimal text of an unsigned / signed 64-bit integer. */
void crec_jbuf_u64(crec_jbuf *b, uint64_t v);
void crec_jbuf_i64(crec_jbuf *b, int64_t v);

/* Append `"KEY":` followed by the integer V; KEY is a literal needing no escape. */
#define crec_jbuf_key(b, k) crec_jbuf_lit((b), ",\"" k "\":")

#endif
