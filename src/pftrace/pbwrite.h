/* pbwrite.h - a zero-copy protobuf writer in the spirit of Perfetto's
 * protozero: tags, varints, fixed64s and length-delimited fields appended
 * straight to a cm_buf, no message objects.  A nested message is opened
 * with one byte kept for its length and closed when its bytes are known:
 * the length is then written in that byte, or, when it needs more than
 * one (128 bytes or more), the body moves up to make room, so every
 * length is written in its shortest form (no padded varints: they would
 * cost a few bytes a field on a trace of millions of events). */
#ifndef CM_PBWRITE_H
#define CM_PBWRITE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "json/jwrite.h"

/* Wire types (protobuf encoding). */
enum { CM_PB_VARINT = 0, CM_PB_FIXED64 = 1, CM_PB_LEN = 2 };

/* Bytes of the varint of V (1..10). */
static inline size_t cm_pb_varint_size(uint64_t v)
{
	/* 7 bits a byte: from the top bit's place, no loop (protobuf's
	 * way: (log2 * 9 + 73) / 64 is log2 / 7 + 1 for log2 0..63) */
	return (size_t)((63 - __builtin_clzll(v | 1)) * 9 + 73) / 64;
}

/* Write the varint of V at P (room for 10 bytes); returns its length. */
static inline size_t cm_pb_varint_at(unsigned char *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* Append the varint of V. */
static inline void cm_pb_varint(cm_buf *b, uint64_t v)
{
	if (b->cap - b->len < 10)
		cm_buf_grow(b, 10);
	b->len += cm_pb_varint_at((unsigned char *)b->p + b->len, v);
}

/* Append the key of field FIELD with wire type WIRE. */
static inline void cm_pb_tag(cm_buf *b, uint32_t field, int wire)
{
	cm_pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

/* A varint field: uint32/64, bool, enum, and int32/int64 (a negative value
 * as its 64-bit two's complement, ten bytes, as protobuf writes it). */
static inline void cm_pb_uint(cm_buf *b, uint32_t field, uint64_t v)
{
	/* the key and the value: room for both made once */
	unsigned char *p;
	size_t n;
	if (b->cap - b->len < 20)
		cm_buf_grow(b, 20);
	p = (unsigned char *)b->p + b->len;
	n = cm_pb_varint_at(p, (uint64_t)field << 3 | CM_PB_VARINT);
	n += cm_pb_varint_at(p + n, v);
	b->len += n;
}
static inline void cm_pb_int(cm_buf *b, uint32_t field, int64_t v)
{
	cm_pb_uint(b, field, (uint64_t)v);
}

/* A fixed64 field (fixed64, and double by its bits), little-endian. */
static inline void cm_pb_fixed64(cm_buf *b, uint32_t field, uint64_t v)
{
	unsigned char le[8];
	int i;
	for (i = 0; i < 8; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	cm_pb_tag(b, field, CM_PB_FIXED64);
	cm_buf_put(b, le, 8);
}
static inline void cm_pb_double(cm_buf *b, uint32_t field, double d)
{
	uint64_t v;
	memcpy(&v, &d, 8);
	cm_pb_fixed64(b, field, v);
}

/* A length-delimited field (string, bytes, or a message already encoded). */
static inline void cm_pb_bytes(cm_buf *b, uint32_t field, const void *p, size_t n)
{
	cm_pb_tag(b, field, CM_PB_LEN);
	cm_pb_varint(b, n);
	cm_buf_put(b, p, n);
}

/* Open the nested message FIELD; returns the mark cm_pb_close needs (the
 * offset of its length byte).  Marks are offsets, not pointers: the
 * buffer may move as it grows. */
static inline size_t cm_pb_open(cm_buf *b, uint32_t field)
{
	cm_pb_tag(b, field, CM_PB_LEN);
	cm_buf_putc(b, 0);
	return b->len - 1;
}

/* Close the message opened at MARK: write its length, in the byte kept for
 * it or, when longer, moving the body up. */
static inline void cm_pb_close(cm_buf *b, size_t mark)
{
	size_t body = b->len - mark - 1, k = cm_pb_varint_size(body);
	if (k > 1) {
		if (b->cap - b->len < k - 1)
			cm_buf_grow(b, k - 1);
		memmove(b->p + mark + k, b->p + mark + 1, body);
		b->len += k - 1;
	}
	cm_pb_varint_at((unsigned char *)b->p + mark, body);
}

#endif
