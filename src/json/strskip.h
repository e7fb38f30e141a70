/* strskip.h - the run of string bytes that need no second look, found 16 or
 * 8 bytes at a time.
 *
 * Inside a JSON string most bytes are printable ASCII that is neither a
 * quote nor a backslash: the validator (jvalid.c) has nothing to check in
 * them and the writer (jwrite.c) nothing to escape.  Both stop at the same
 * bytes: a quote, a backslash, a control byte (below 0x20) and any byte
 * above 0x7f (UTF-8 that the validator checks and the writer looks at for
 * WTF-8 surrogates).  SSE2 is x86-64's baseline, so no run-time dispatch;
 * elsewhere (or with CM_JVALID_NO_SIMD, for the unit test of the portable
 * path) a SWAR word test does 8 bytes a step. */
#ifndef CM_STRSKIP_H
#define CM_STRSKIP_H

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && !defined(CM_JVALID_NO_SIMD)
#include <emmintrin.h>
#define CM_STRSKIP_SSE2 1
#else
#define CM_STRSKIP_SSE2 0
#endif

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

static inline uint64_t load8(const unsigned char *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x;
}

/* Nonzero when one of the eight bytes of X needs a look inside a string: a
 * quote, a backslash, a byte below 0x20 or one above 0x7f.  The lowest set
 * bit marks the first such byte (in memory order on a little-endian
 * machine): borrows only run upward from a flagged byte. */
static inline uint64_t swar_string_stops(uint64_t x)
{
	uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
	uint64_t zero_q = (q - ONES) & ~q, zero_b = (b - ONES) & ~b;
	uint64_t ctl_or_high = (x - ONES * 0x20) | x;
	return (zero_q | zero_b | ctl_or_high) & HIGHS;
}

/* The bytes from P on (up to E) that need no look inside a string: returns
 * the first one that does, or E. */
static inline const unsigned char *cm_strskip_plain(const unsigned char *p, const unsigned char *e)
{
#if CM_STRSKIP_SSE2
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i space = _mm_set1_epi8(0x20);
	while (e - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		/* a signed compare: bytes 0x80..0xff are negative, so "< 0x20"
		 * catches control bytes and non-ASCII bytes at once */
		__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
					    _mm_cmplt_epi8(v, space));
		unsigned mask = (unsigned)_mm_movemask_epi8(stop);
		if (mask)
			return p + __builtin_ctz(mask);
		p += 16;
	}
#endif
	while (e - p >= 8) {
		uint64_t stops = swar_string_stops(load8(p));
		if (stops) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
			return p + (__builtin_ctzll(stops) >> 3);
#else
			break; /* the byte loop finds it within these eight */
#endif
		}
		p += 8;
	}
	while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
		p++;
	return p;
}

#endif
