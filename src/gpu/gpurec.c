/* gpurec.c - packing window records and JSON values into bytes.
 *
 * Integers are 128-bit (cm_int) but nearly all are small ids or 61-bit
 * nanosecond times, so they go as zigzag varints: 1-5 bytes for an id, 9 for
 * a time.  A record is a few dozen bytes where its JSON was a few hundred. */
#include "config.h"
#include "gpu/gpurec.h"
#include "gpu/gpunames.h"
#include "base/word.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
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
	if (*p < end && !(s[0] & 0x80)) { /* one byte: most of a record's values */
		*p += 1;
		*v = s[0];
		return 1;
	}
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

/* get_int for a varint of at most 9 bytes at *S, whose 9 bytes are known
 * to be in the block: 1 with *V, *S advanced; 0 (nothing read) when it is
 * longer, for get_int to read. */
static inline int get_int_unchecked(const unsigned char **s, cm_int *v)
{
	const unsigned char *q = *s;
	uint64_t w, stops, x;
	if (!(q[0] & 0x80)) {
		x = q[0];
		*s = q + 1;
	} else {
		w = cm_load_le64(q);
		stops = ~w & UINT64_C(0x8080808080808080);
		if (stops) {
			int n = __builtin_ctzll(stops) / 8 + 1;
			x = varint_bits(w, n);
			*s = q + n;
		} else if (!(q[8] & 0x80)) {
			x = varint_bits(w, 8) | (uint64_t)q[8] << 56;
			*s = q + 9;
		} else {
			return 0;
		}
	}
	*v = (int64_t)((x >> 1) ^ -(x & 1));
	return 1;
}

/* Bytes with their length in front. */
static void put_bytes(cm_buf *b, const char *s, size_t n)
{
	cm_buf_put_varint(b, n);
	cm_buf_put(b, s, n);
}

static __attribute__((noinline)) int get_bytes_long(const char **p, const char *end, const char **s, uint32_t *n)
{
	u128 len;
	if (get_uvar(p, end, &len) < 0 || len > (u128)(end - *p) || len > UINT32_MAX)
		return -1;
	*s = *p;
	*n = (uint32_t)len;
	*p += len;
	return 0;
}

/* Bytes with their length in front, read: 0 with *S and *N, *P past
 * them; -1 when they run past END.  A length below 128 (a record's extra
 * text, mostly none, and most names) inline, any other by get_bytes_long:
 * the 128-bit varint path was a call and most of the cost of each. */
static inline int get_bytes(const char **p, const char *end, const char **s, uint32_t *n)
{
	const unsigned char *q = (const unsigned char *)*p;
	if (*p < end && !(q[0] & 0x80)) {
		size_t len = q[0];
		if (len > (size_t)(end - *p) - 1)
			return -1;
		*s = *p + 1;
		*n = (uint32_t)len;
		*p += 1 + len;
		return 0;
	}
	return get_bytes_long(p, end, s, n);
}

/* X's eight bytes at P, little-endian (cm_load_le64's inverse). */
static inline void store_le64(void *p, uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	memcpy(p, &x, 8);
}

/* The 7-bit groups of X (below 2^56) one to a byte, low group first: the
 * inverse of varint_bits, before the continuation bits are set. */
static inline uint64_t varint_spread(uint64_t x)
{
	x = ((x & UINT64_C(0x00fffffff0000000)) << 4) | (x & UINT64_C(0x000000000fffffff));
	x = ((x & UINT64_C(0x0fffc0000fffc000)) << 2) | (x & UINT64_C(0x00003fff00003fff));
	x = ((x & UINT64_C(0x3f803f803f803f80)) << 1) | (x & UINT64_C(0x007f007f007f007f));
	return x;
}

/* W's varint at Q (room for 10 bytes); returns the byte after it.  Below
 * 2^63 (every id and nanosecond time) the bytes are made in a word and
 * stored at once, as get_u64 reads them: a byte loop was half of the
 * pack's instructions, nine steps for each time. */
static inline unsigned char *u64_at(unsigned char *q, uint64_t w)
{
	uint64_t x;
	int n;
	if (w < 0x80) {
		*q = (unsigned char)w;
		return q + 1;
	}
	if (w >> 63) {
		while (w >= 0x80) {
			*q++ = (unsigned char)(w | 0x80);
			w >>= 7;
		}
		*q++ = (unsigned char)w;
		return q;
	}
	if (w >> 56) { /* nine bytes: eight full groups, then the top seven bits */
		x = varint_spread(w & ((UINT64_C(1) << 56) - 1)) | UINT64_C(0x8080808080808080);
		store_le64(q, x);
		q[8] = (unsigned char)(w >> 56);
		return q + 9;
	}
	n = (64 - __builtin_clzll(w) + 6) / 7; /* 2..8 bytes */
	x = varint_spread(w) | (UINT64_C(0x8080808080808080) & ((UINT64_C(1) << (8 * (n - 1))) - 1));
	store_le64(q, x);
	return q + n;
}

/* V's varint at Q (room for 19 bytes); returns the byte after it. */
static inline unsigned char *varint_at(unsigned char *q, u128 v)
{
	if (!(v >> 64))
		return u64_at(q, (uint64_t)v);
	while (v >= 0x80) {
		*q++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*q++ = (unsigned char)v;
	return q;
}

/* V zigzagged, as a varint at Q: in 64-bit steps when V fits an int64
 * (its zigzag then fits a uint64). */
static inline unsigned char *int_at(unsigned char *q, cm_int v)
{
	int64_t lo = (int64_t)v;
	if ((cm_int)lo == v)
		return u64_at(q, ((uint64_t)lo << 1) ^ (uint64_t)(lo >> 63));
	return varint_at(q, ((u128)v << 1) ^ (u128)(v >> 127));
}

/* The numbers go straight into the block, room made for them once: a
 * cm_buf_put of each varint's few bytes was a call to memcpy each. */
void cm_gpurec_pack(cm_buf *b, const cm_gpurec *r)
{
	unsigned char *q, *q0;
	int named = !(r->flags & CM_REC_NAMEREF);
	/* the numbers and both lengths (19 bytes each at most), and the bytes */
	size_t room = 3 + 19 * (5 + (size_t)r->nv) + (named ? r->nlen : 0) + r->xlen;
	if (b->cap - b->len < room)
		cm_buf_grow(b, room);
	q = q0 = (unsigned char *)b->p + b->len;
	q[0] = r->kind;
	q[1] = r->flags;
	q[2] = r->nv;
	q = varint_at(q + 3, r->index);
	q = int_at(q, r->offset);
	for (int i = 0; i < r->nv; i++)
		q = int_at(q, r->v[i]);
	if (!named) {
		q = varint_at(q, r->name_id);
	} else {
		q = varint_at(q, r->nlen);
		if (r->nlen)
			memcpy(q, r->name, r->nlen);
		q += r->nlen;
	}
	q = varint_at(q, r->xlen);
	if (r->xlen)
		memcpy(q, r->extra, r->xlen);
	q += r->xlen;
	b->len += (size_t)(q - q0);
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
	{
		int i = 0;
		/* with nine bytes a value left in the block (all but its last
		 * records), each value is read without a look at END */
		if (end - *p >= 9 * (ptrdiff_t)r->nv) {
			const unsigned char *s = (const unsigned char *)*p;
			for (; i < r->nv && get_int_unchecked(&s, &r->v[i]); i++)
				;
			*p = (const char *)s;
		}
		for (; i < r->nv; i++)
			if (get_int(p, end, &r->v[i]) < 0)
				return -1;
	}
	if (r->flags & CM_REC_NAMEREF) {
		if (get_uvar(p, end, &u) < 0 || u >= CM_GPUNAMES_MAX)
			return -1;
		r->name = NULL;
		r->nlen = 0;
		r->name_id = (uint32_t)u;
	} else if (get_bytes(p, end, &r->name, &r->nlen) < 0) {
		return -1;
	}
	if (get_bytes(p, end, &r->extra, &r->xlen) < 0)
		return -1;
	return 0;
}

/* Skip N varints at *P (below END), eight bytes at a time where eight are
 * left: the bytes without the high bit end them.  0, or -1 past END. */
static inline int skip_varints(const char **p, const char *end, unsigned n)
{
	const unsigned char *s = (const unsigned char *)*p, *e = (const unsigned char *)end;
	while (n && e - s >= 8) {
		uint64_t stops = ~cm_load_le64(s) & UINT64_C(0x8080808080808080);
		/* the stops counted by a multiply (a byte each, summed in the
		 * top byte): __builtin_popcountll is a call without -mpopcnt */
		unsigned c = (unsigned)(((stops >> 7) * UINT64_C(0x0101010101010101)) >> 56);
		if (c < n) {
			n -= c;
			s += 8;
			continue;
		}
		while (--n) /* the Nth stop */
			stops &= stops - 1;
		s += __builtin_ctzll(stops) / 8 + 1;
	}
	for (; n && s < e; s++)
		n -= !(*s & 0x80);
	*p = (const char *)s;
	return n ? -1 : 0;
}

int cm_gpurec_skip(const char **p, const char *end, uint64_t *index)
{
	u128 u;
	unsigned nv, flags;
	const char *s;
	uint32_t n;
	if (end - *p < 3)
		return -1;
	flags = (unsigned char)(*p)[1];
	nv = (unsigned char)(*p)[2];
	*p += 3;
	if (nv > CM_REC_MAXV || get_uvar(p, end, &u) < 0 || skip_varints(p, end, 1 + nv) < 0)
		return -1;
	*index = (uint64_t)u;
	if (flags & CM_REC_NAMEREF ? skip_varints(p, end, 1) < 0 : get_bytes(p, end, &s, &n) < 0)
		return -1;
	return get_bytes(p, end, &s, &n);
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

void cm_gpurec_pack_jval(cm_buf *b, const cm_jval *v) { pack_node(b, v, 0); }

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

cm_jval *cm_gpurec_unpack_jval(cm_arena *a, const char *s, size_t n)
{
	const char *p = s;
	cm_jval *v = unpack_node(a, &p, s + n, 0, 0);
	return v && p == s + n ? v : NULL;
}
