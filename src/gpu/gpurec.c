/* gpurec.c - packing window records and JSON values into bytes.
 *
 * Integers are 128-bit (cm_int) but nearly all are small ids or 61-bit
 * nanosecond times, so they go as zigzag varints: 1-5 bytes for an id, 9 for
 * a time.  A record is a few dozen bytes where its JSON was a few hundred. */
#include "config.h"
#include "gpu/gpurec.h"
#include "base/word.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <errno.h>
#include <string.h>

typedef unsigned __int128 u128;

/* The 7-bit groups of the N (1..8) varint bytes in X (little-endian, high
 * bits included) put together: the 56-bit compaction in three steps. */
static inline uint64_t varint_bits(uint64_t x, int n)
{
	if (n < 8)
		x &= (UINT64_C(1) << (8 * n)) - 1;
	x &= UINT64_C(0x7f7f7f7f7f7f7f7f);
	x = ((x & UINT64_C(0x7f007f007f007f00)) >> 1) | (x & UINT64_C(0x007f007f007f007f));
	x = ((x & UINT64_C(0x3fff00003fff0000)) >> 2) | (x & UINT64_C(0x00003fff00003fff));
	x = ((x & UINT64_C(0x0fffffff00000000)) >> 4) | (x & UINT64_C(0x000000000fffffff));
	return x;
}

/* A varint of at most 9 bytes (63 bits: every id and nanosecond time) at
 * *P, when 9 bytes of the block are there: 1 with *V, *P advanced; 0 when
 * get_uvar_long must read it.  Eight bytes are looked at in one load (a
 * byte loop of 128-bit shifts was 6% of a merge's instructions). */
static inline int get_u64(const char **p, const char *end, uint64_t *v)
{
	const unsigned char *s = (const unsigned char *)*p;
	uint64_t w, stops;
	if (end - *p < 9)
		return 0;
	w = cm_load_le64(s);
	stops = ~w & UINT64_C(0x8080808080808080); /* bytes that end the varint */
	if (stops) {
		int n = __builtin_ctzll(stops) / 8 + 1;
		*p += n;
		*v = varint_bits(w, n);
		return 1;
	}
	if (s[8] & 0x80)
		return 0;
	*p += 9;
	*v = varint_bits(w, 8) | (uint64_t)s[8] << 56;
	return 1;
}

/* Read any varint at *P (below END) into *V, a byte at a time.  0, or -1
 * when it runs past END or past 128 bits. */
static __attribute__((noinline)) int get_uvar_long(const char **p, const char *end, u128 *v)
{
	const unsigned char *s = (const unsigned char *)*p;
	u128 x = 0;
	for (int shift = 0; shift < 133; shift += 7) {
		if ((const char *)s >= end)
			return -1;
		x |= (u128)(*s & 0x7f) << shift;
		if (!(*s++ & 0x80)) {
			*p = (const char *)s;
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* Read a varint at *P (below END) into *V.  0, or -1 when it runs past END
 * or past 128 bits. */
static inline int get_uvar(const char **p, const char *end, u128 *v)
{
	uint64_t w;
	if (get_u64(p, end, &w)) {
		*v = w;
		return 0;
	}
	return get_uvar_long(p, end, v);
}

static void put_int(cm_buf *b, cm_int v) { cm_buf_put_varint(b, ((u128)v << 1) ^ (u128)(v >> 127)); }

static inline int get_int(const char **p, const char *end, cm_int *v)
{
	u128 u;
	uint64_t w;
	if (get_u64(p, end, &w)) { /* below 2^64: the value fits in 64 bits, as does its zigzag */
		*v = (int64_t)((w >> 1) ^ -(w & 1));
		return 0;
	}
	if (get_uvar_long(p, end, &u) < 0)
		return -1;
	*v = (cm_int)(u >> 1) ^ -(cm_int)(u & 1);
	return 0;
}

/* Bytes with their length in front. */
static void put_bytes(cm_buf *b, const char *s, size_t n)
{
	cm_buf_put_varint(b, n);
	cm_buf_put(b, s, n);
}

static int get_bytes(const char **p, const char *end, const char **s, uint32_t *n)
{
	u128 len;
	if (get_uvar(p, end, &len) < 0 || len > (u128)(end - *p) || len > UINT32_MAX)
		return -1;
	*s = *p;
	*n = (uint32_t)len;
	*p += len;
	return 0;
}

void cm_gpurec_pack(cm_buf *b, const cm_gpurec *r)
{
	unsigned char head[3] = {r->kind, r->flags, r->nv};
	cm_buf_put(b, head, 3);
	cm_buf_put_varint(b, r->index);
	put_int(b, r->offset);
	for (int i = 0; i < r->nv; i++)
		put_int(b, r->v[i]);
	put_bytes(b, r->name, r->nlen);
	put_bytes(b, r->extra, r->xlen);
}

int cm_gpurec_unpack(const char **p, const char *end, cm_gpurec *r)
{
	u128 u;
	cm_int off;
	if (end - *p < 3)
		return -1;
	r->kind = (uint8_t)(*p)[0];
	r->flags = (uint8_t)(*p)[1];
	r->nv = (uint8_t)(*p)[2];
	*p += 3;
	if (r->nv > CM_REC_MAXV || get_uvar(p, end, &u) < 0 || get_int(p, end, &off) < 0)
		return -1;
	r->index = (uint64_t)u;
	r->offset = (int64_t)off;
	for (int i = 0; i < r->nv; i++)
		if (get_int(p, end, &r->v[i]) < 0)
			return -1;
	if (get_bytes(p, end, &r->name, &r->nlen) < 0 || get_bytes(p, end, &r->extra, &r->xlen) < 0)
		return -1;
	return 0;
}

int cm_gpurec_block_write(FILE *f, cm_buf *b)
{
	uint32_t len = (uint32_t)b->len;
	if (!b->len)
		return 0;
	if (fwrite(&len, 4, 1, f) != 1 || fwrite(b->p, b->len, 1, f) != 1)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	b->len = 0;
	return 0;
}

int cm_gpurec_block_read(FILE *f, cm_buf *b)
{
	uint32_t len;
	size_t got = fread(&len, 1, 4, f);
	b->len = 0;
	if (got == 0 && !ferror(f))
		return 0;
	if (got != 4)
		goto bad;
	cm_buf_grow(b, len);
	if (fread(b->p, 1, len, f) != len)
		goto bad;
	b->len = len;
	return 1;
bad:
	return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file%s%s",
			ferror(f) ? ": " : " (it is shorter than written)", ferror(f) ? strerror(errno) : "");
}

/* ------------------------------------------------------ packed JSON values */

/* A node: its type byte; then strings and numbers their bytes; containers
 * their child count and children; an object member's key comes first. */
static void pack_node(cm_buf *b, const cm_jval *v, int member)
{
	cm_buf_putc(b, (char)v->type);
	if (member)
		put_bytes(b, v->key, v->klen);
	switch (v->type) {
	case CM_J_NUM:
	case CM_J_STR:
		put_bytes(b, v->s, v->len);
		break;
	case CM_J_ARR:
	case CM_J_OBJ:
		cm_buf_put_varint(b, v->len);
		for (const cm_jval *k = v->kids; k; k = k->next)
			pack_node(b, k, v->type == CM_J_OBJ);
		break;
	default:
		break;
	}
}

void cm_jval_pack(cm_buf *b, const cm_jval *v) { pack_node(b, v, 0); }

static cm_jval *unpack_node(cm_arena *a, const char **p, const char *end, int member, int depth)
{
	cm_jval *v;
	u128 n;
	if (*p >= end || depth > CM_JBUILD_MAXDEPTH + 1)
		return NULL;
	v = cm_arena_alloc(a, sizeof *v);
	memset(v, 0, sizeof *v);
	v->type = (unsigned char)*(*p)++;
	if (member && get_bytes(p, end, &v->key, &v->klen) < 0)
		return NULL;
	switch (v->type) {
	case CM_J_NULL:
	case CM_J_FALSE:
	case CM_J_TRUE:
		return v;
	case CM_J_NUM:
	case CM_J_STR:
		return get_bytes(p, end, &v->s, &v->len) < 0 ? NULL : v;
	case CM_J_ARR:
	case CM_J_OBJ: {
		cm_jval **tail = &v->kids;
		if (get_uvar(p, end, &n) < 0 || n > (u128)(end - *p))
			return NULL;
		v->len = (uint32_t)n;
		for (u128 i = 0; i < n; i++) {
			cm_jval *k = unpack_node(a, p, end, v->type == CM_J_OBJ, depth + 1);
			if (!k)
				return NULL;
			*tail = k;
			tail = &k->next;
		}
		return v;
	}
	default:
		return NULL;
	}
}

cm_jval *cm_jval_unpack(cm_arena *a, const char *s, size_t n)
{
	const char *p = s;
	cm_jval *v = unpack_node(a, &p, s + n, 0, 0);
	return v && p == s + n ? v : NULL;
}
