/* word.h - eight bytes at a time: a little-endian load, and the tests and
 * values of eight ASCII digits (simdjson's word tricks), for the readers
 * that step over digits (json/jvalid.c), read them as integers
 * (base/pyval.c) or decode varints (gpu/gpurec.c). */
#ifndef CM_WORD_H
#define CM_WORD_H

#include <stdint.h>
#include <string.h>

/* The 8 bytes at P as a little-endian word. */
static inline uint64_t cm_load_le64(const void *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

/* 1 when all eight bytes of X are ASCII digits (each byte's high nibble is
 * 3, and adding 6 keeps it 3, so the low nibble is 0..9); in any byte order. */
static inline int cm_eight_digits(uint64_t x)
{
	return ((x & UINT64_C(0xF0F0F0F0F0F0F0F0)) |
		(((x + UINT64_C(0x0606060606060606)) & UINT64_C(0xF0F0F0F0F0F0F0F0)) >> 4)) ==
	       UINT64_C(0x3333333333333333);
}

/* The value of the eight digits in X, loaded little-endian (cm_load_le64). */
static inline uint64_t cm_eight_digits_value(uint64_t x)
{
	x -= UINT64_C(0x3030303030303030);
	x = x * 10 + (x >> 8);
	return (((x & UINT64_C(0x000000FF000000FF)) * UINT64_C(0x000F424000000064)) +
		(((x >> 16) & UINT64_C(0x000000FF000000FF)) * UINT64_C(0x0000271000000001))) >>
	       32;
}

#endif
