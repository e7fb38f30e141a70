/* jscan.c - the value scanner of the splitter (docsplit.c), the copy
 * (cpu/cpucopy.c, cpuwalk.c), the window's maps (gpu/gpuscan.c) and the
 * .pftrace writer (pftrace/).
 *
 * Most bytes of a trace are plain: only quotes, backslashes and brackets
 * move the state.  With SSE2 (every x86-64) sixteen bytes are classified
 * at once and the interesting ones taken in order from the masks; the
 * state decides which mask counts (inside a string, quotes and
 * backslashes; outside, quotes and brackets).  A backslash makes the loop
 * skip the escaped byte and load again from there: escapes are rare.  The
 * byte loop below does the tail of a chunk, and all of it without SSE2 (or
 * with CM_JSCAN_NO_SIMD, so that the test can run both).
 *
 * Inside a value (depth above 0) most 64-byte blocks hold no backslash and
 * no end, and those are taken whole, without visiting a byte: which bytes
 * lie inside strings is the prefix XOR of the quote mask (each quote flips
 * it), so the brackets outside strings are two masks; when the depth
 * exceeds the closing brackets the block holds, the value cannot end in it
 * and the depth moves by the two counts; else the brackets are taken in
 * order.  A block with a backslash goes the 16-byte way.  (simdjson's
 * stage 1 does the same, with carry-less multiplication for the XOR.)
 * Where the CPU has AVX2, POPCNT and carry-less multiplication, chosen at
 * start-up, blocks_avx2 takes the blocks that way too, two loads a block;
 * the build's baseline has none of the three, and without POPCNT the
 * counts alone were a third of the splitters' time. */
#include "config.h"
#include "json/jscan.h"

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && !defined(CM_JSCAN_NO_SIMD)
#include <emmintrin.h>
#define JSCAN_SIMD 1
#if defined(__x86_64__) && defined(__GNUC__) && !defined(CM_JSCAN_NO_AVX2)
#include <immintrin.h>
#define JSCAN_AVX2 1
#endif
#endif

/* Byte classes outside strings (inside, only quotes and backslashes matter,
 * found with memchr): quotes and brackets. */
enum { C_PLAIN = 0, C_QUOTE, C_BSLASH, C_OPEN, C_CLOSE };

static const unsigned char cls_out[256] = {['"'] = C_QUOTE, ['{'] = C_OPEN, ['['] = C_OPEN,
					   ['}'] = C_CLOSE, [']'] = C_CLOSE};

#ifdef JSCAN_SIMD
/* Bit j of each mask: byte j of S[0..64) is a quote, a backslash, an
 * opening or a closing bracket ('{' and '[' differ only in the 0x20 bit, as
 * do '}' and ']', and no other byte ORed with 0x20 gives '{' or '}'). */
static inline void masks64(const char *s, uint64_t *mq, uint64_t *mb, uint64_t *mo, uint64_t *mc)
{
	const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\'), x20 = _mm_set1_epi8(0x20),
		      o = _mm_set1_epi8('{'), c = _mm_set1_epi8('}');
	*mq = *mb = *mo = *mc = 0;
	for (int j = 0; j < 4; j++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * j)), f = _mm_or_si128(v, x20);
		*mq |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)) << 16 * j;
		*mb |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, b)) << 16 * j;
		*mo |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, o)) << 16 * j;
		*mc |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, c)) << 16 * j;
	}
}

/* The set bits of X.  x86-64's baseline has no POPCNT instruction, and
 * without it __builtin_popcountll is a call into libgcc (1.4% of a merge's
 * time in a profile): the word-parallel sum is a dozen inline operations. */
static inline int popcount64(uint64_t x)
{
#ifdef __POPCNT__
	return __builtin_popcountll(x);
#else
	x -= (x >> 1) & UINT64_C(0x5555555555555555);
	x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (int)((x * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

/* The brackets of a 64-byte block inside a value (*DEPTH > 0): MO the
 * opening and MC the closing ones outside strings, bit j for byte j.  0
 * when the value goes on past the block (*DEPTH moved), else the length up
 * to its last byte (*DEPTH 0).  HW (a constant at each call): count with
 * the POPCNT instruction, which the caller's target has. */
static inline __attribute__((always_inline)) int brackets64(int *depth, uint64_t mo, uint64_t mc, int hw)
{
	int nc = hw ? __builtin_popcountll(mc) : popcount64(mc);
	if (*depth > nc) { /* more open than the block can close: no end in it */
		*depth += (hw ? __builtin_popcountll(mo) : popcount64(mo)) - nc;
		return 0;
	}
	for (uint64_t m = mo | mc; m; m &= m - 1) {
		int p = __builtin_ctzll(m);
		if (mo >> p & 1)
			(*depth)++;
		else if (--*depth == 0)
			return p + 1;
	}
	return 0;
}

/* The 64 bytes at S, inside a value (depth > 0, no escape pending): 0 when
 * they were taken whole (the state moved past them), 1..64 when the value
 * ended there (the length up to its last byte), -1 when they hold a
 * backslash (nothing taken). */
static inline int block64(cm_jscan *sc, const char *s)
{
	uint64_t mq, mb, mo, mc, in;
	int r;
	masks64(s, &mq, &mb, &mo, &mc);
	if (mb)
		return -1;
	in = mq; /* bit j: an odd number of the block's quotes at or before byte j */
	in ^= in << 1;
	in ^= in << 2;
	in ^= in << 4;
	in ^= in << 8;
	in ^= in << 16;
	in ^= in << 32;
	if (sc->in_str)
		in = ~in;
	r = brackets64(&sc->depth, mo & ~in, mc & ~in, 0);
	sc->in_str = r ? 0 : (int)(in >> 63);
	return r;
}
#endif

#ifdef JSCAN_AVX2
/* The blocks of a value, on a CPU with AVX2, POPCNT and carry-less
 * multiplication (x86-64-v3: every x86-64 server of the last ten years, but
 * not the baseline the build targets, hence the run-time choice below).
 * The same work as block64 (brackets64 is shared) over as many 64-byte
 * blocks as it can take: two loads a block instead of four, the quotes'
 * prefix XOR in one
 * multiplication, the counts in one instruction each (with no POPCNT, the
 * counts alone were a third of the splitters' time).  From S[K], depth
 * above 0 and no escape pending: the offset it stopped at, either with
 * *ENDED set (the value's last byte was just before it) or before a block
 * that holds a backslash or is cut by N (the caller goes on there; K
 * itself when the first block was such). */
__attribute__((target("avx2,popcnt,pclmul"))) static size_t blocks_avx2(cm_jscan *sc, const char *s, size_t k,
									   size_t n, int *ended)
{
	const __m256i q = _mm256_set1_epi8('"'), b = _mm256_set1_epi8('\\'), x20 = _mm256_set1_epi8(0x20),
		      o = _mm256_set1_epi8('{'), c = _mm256_set1_epi8('}');
	const __m128i ones = _mm_set1_epi8((char)0xff);
	uint64_t carry = sc->in_str ? ~(uint64_t)0 : 0; /* all ones when the block starts inside a string */
	int depth = sc->depth, r;
	*ended = 0;
	while (k + 64 <= n) {
		__m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)(s + k)),
			v1 = _mm256_loadu_si256((const __m256i *)(const void *)(s + k + 32)),
			f0 = _mm256_or_si256(v0, x20), f1 = _mm256_or_si256(v1, x20);
#define MASK64(x, y) ((uint64_t)(uint32_t)_mm256_movemask_epi8(x) | (uint64_t)(uint32_t)_mm256_movemask_epi8(y) << 32)
		uint64_t mb = MASK64(_mm256_cmpeq_epi8(v0, b), _mm256_cmpeq_epi8(v1, b)), mq, mo, mc, in;
		if (mb)
			break;
		mq = MASK64(_mm256_cmpeq_epi8(v0, q), _mm256_cmpeq_epi8(v1, q));
		mo = MASK64(_mm256_cmpeq_epi8(f0, o), _mm256_cmpeq_epi8(f1, o));
		mc = MASK64(_mm256_cmpeq_epi8(f0, c), _mm256_cmpeq_epi8(f1, c));
#undef MASK64
		in = (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)mq), ones, 0)) ^ carry;
		if ((r = brackets64(&depth, mo & ~in, mc & ~in, 1)) != 0) {
			sc->depth = 0;
			sc->in_str = 0;
			*ended = 1;
			return k + (size_t)r;
		}
		carry = (uint64_t)((int64_t)in >> 63);
		k += 64;
	}
	sc->depth = depth;
	sc->in_str = (int)(carry & 1);
	return k;
}

/* The bytes of a block that a backslash escapes, from BS its backslashes
 * (simdjson's way, without a branch a backslash: a run of them escapes
 * the byte after it when the run is odd; a subtraction finds the runs'
 * ends, the odd bits their parity).  *CARRY: the block's first byte is
 * escaped (the last block ended in an odd run); set for the next. */
static inline uint64_t escaped64(uint64_t bs, uint64_t *carry)
{
	const uint64_t odd = UINT64_C(0xaaaaaaaaaaaaaaaa);
	uint64_t pe, term, escaped;
	if (!bs) {
		escaped = *carry;
		*carry = 0;
		return escaped;
	}
	pe = bs & ~*carry; /* backslashes that are not themselves escaped */
	term = (((pe << 1) | odd) - pe) ^ odd;
	escaped = term ^ (bs | *carry);
	*carry = (term & bs) >> 63;
	return escaped;
}

/* Blocks a stage of elements_avx2 takes: 1 KiB, its masks 256 bytes. */
#define STAGE_BLOCKS 16

/* cm_jscan_elements over whole 64-byte blocks, on a CPU with AVX2, POPCNT
 * and carry-less multiplication: blocks_avx2's masks, with the escaped
 * quotes taken out (escaped64) rather than a backslash sending the block
 * to the 16-byte way.  In two stages, as simdjson does: the masks of the
 * brackets outside strings, for up to STAGE_BLOCKS blocks, without a
 * branch; then a walk of them.  So the walk's branches, which miss where an
 * element ends, wait on no multiplication, and the masks of the next
 * blocks are computed while they do.  An element's end and the usual gap
 * after it leave the masks as they are: the gap holds no bracket, so the
 * next one in the masks is the bracket that opens the next element (at
 * depth 0, taken to 1).  Returns as cm_jscan_elements, except that with
 * *AFTER 0 it stopped before a block cut by N (between two elements at
 * depth 0, or inside one; the state in SC) for the caller to go on. */
__attribute__((target("avx2,popcnt,pclmul"))) static size_t elements_avx2(cm_jscan *sc, const char *s, size_t n,
									     size_t *i, uint32_t *start,
									     uint32_t *spans, size_t max, size_t stop,
									     int *after)
{
	const __m256i q = _mm256_set1_epi8('"'), b = _mm256_set1_epi8('\\'), x20 = _mm256_set1_epi8(0x20),
		      o = _mm256_set1_epi8('{'), c = _mm256_set1_epi8('}');
	const __m128i ones = _mm_set1_epi8((char)0xff);
	uint64_t carry = sc->in_str ? ~(uint64_t)0 : 0, esc = sc->esc ? 1 : 0, mos[STAGE_BLOCKS],
		 mcs[STAGE_BLOCKS];
	size_t k = *i, got = 0, end = 0;
	int depth = sc->depth;
	*after = 0;
	while (k + 64 <= n) {
		size_t nb = (n - k) / 64 < STAGE_BLOCKS ? (n - k) / 64 : STAGE_BLOCKS;
		for (size_t j = 0; j < nb; j++) { /* the masks */
			const char *at = s + k + 64 * j;
			__m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)at),
				v1 = _mm256_loadu_si256((const __m256i *)(const void *)(at + 32)),
				f0 = _mm256_or_si256(v0, x20), f1 = _mm256_or_si256(v1, x20);
#define MASK64(x, y) ((uint64_t)(uint32_t)_mm256_movemask_epi8(x) | (uint64_t)(uint32_t)_mm256_movemask_epi8(y) << 32)
			uint64_t mb = MASK64(_mm256_cmpeq_epi8(v0, b), _mm256_cmpeq_epi8(v1, b)),
				 mq = MASK64(_mm256_cmpeq_epi8(v0, q), _mm256_cmpeq_epi8(v1, q)), in;
			mos[j] = MASK64(_mm256_cmpeq_epi8(f0, o), _mm256_cmpeq_epi8(f1, o));
			mcs[j] = MASK64(_mm256_cmpeq_epi8(f0, c), _mm256_cmpeq_epi8(f1, c));
#undef MASK64
			mq &= ~escaped64(mb, &esc);
			in = (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)mq), ones, 0)) ^
			     carry;
			carry = (uint64_t)((int64_t)in >> 63);
			mos[j] &= ~in;
			mcs[j] &= ~in;
		}
		for (size_t j = 0; j < nb; j++) { /* the walk */
			uint64_t mo = mos[j], mc = mcs[j];
			int nc = __builtin_popcountll(mc);
			if (depth > nc) { /* no element ends in the block */
				depth += __builtin_popcountll(mo) - nc;
				continue;
			}
			for (uint64_t m = mo | mc; m; m &= m - 1) {
				size_t p = (size_t)__builtin_ctzll(m), g;
				if (mo >> p & 1) {
					depth++;
					continue;
				}
				if (--depth)
					continue;
				end = k + 64 * j + p + 1; /* an element ended */
				spans[2 * got] = *start;
				spans[2 * got + 1] = (uint32_t)end;
				if (++got == max || end >= stop || !(g = cm_jscan_gap(s, n, end)))
					goto ended;
				*start = (uint32_t)(g - 1); /* its bracket: the next in the masks */
			}
		}
		k += 64 * nb;
	}
	sc->depth = depth;
	sc->in_str = (int)(carry & 1);
	sc->esc = (int)esc;
	*i = k;
	return got;
ended:
	sc->depth = 0;
	sc->in_str = 0;
	sc->esc = 0;
	*i = end;
	*after = 1;
	return got;
}

/* Set before main: whether this CPU runs blocks_avx2. */
static int have_avx2;
__attribute__((constructor)) static void detect_avx2(void)
{
	__builtin_cpu_init();
	have_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") &&
		    __builtin_cpu_supports("pclmul");
}
#endif

int cm_jscan_feed(cm_jscan *sc, const char *s, size_t n, size_t *i)
{
	size_t k = *i;
	if (sc->scalar) { /* a number or literal: ends before , } ] or space */
		while (k < n && s[k] != ',' && s[k] != '}' && s[k] != ']' && !cm_jscan_ws(s[k]))
			k++;
		*i = k;
		return k < n;
	}
#ifdef JSCAN_SIMD
	if (sc->esc && k < n) { /* a backslash ended the last chunk */
		sc->esc = 0;
		k++;
	}
	{
		const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\'), o1 = _mm_set1_epi8('{'),
			      o2 = _mm_set1_epi8('['), c1 = _mm_set1_epi8('}'), c2 = _mm_set1_epi8(']');
		while (k + 16 <= n) {
			__m128i v;
#ifdef JSCAN_AVX2
			if (have_avx2 && sc->depth > 0 && k + 64 <= n) {
				int ended;
				size_t k2 = blocks_avx2(sc, s, k, n, &ended);
				if (ended) {
					*i = k2;
					return 1;
				}
				if (k2 != k) {
					k = k2;
					continue;
				}
			} else
#endif
			if (sc->depth > 0 && k + 64 <= n) {
				int r = block64(sc, s + k);
				if (r > 0) {
					*i = k + (size_t)r;
					return 1;
				}
				if (r == 0) {
					k += 64;
					continue;
				}
			}
			v = _mm_loadu_si128((const __m128i *)(const void *)(s + k));
			unsigned mq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, q));
			unsigned mb = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, b));
			unsigned mo = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, o1), _mm_cmpeq_epi8(v, o2)));
			unsigned mc = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, c1), _mm_cmpeq_epi8(v, c2)));
			unsigned done = 0; /* the bits at and below the last byte taken */
			int reload = 0;
			for (;;) {
				unsigned m = (sc->in_str ? mq | mb : mq | mo | mc) & ~done, bit;
				int p;
				if (!m)
					break;
				p = __builtin_ctz(m);
				bit = 1u << p;
				done |= (bit << 1) - 1;
				if (sc->in_str) {
					if (mb & bit) { /* skip the escaped byte, load again after it */
						k += (size_t)p + 2;
						if (k > n) {
							sc->esc = 1;
							*i = n;
							return 0;
						}
						reload = 1;
						break;
					}
					sc->in_str = 0;
					if (sc->depth == 0) { /* a string on its own ended */
						*i = k + (size_t)p + 1;
						return 1;
					}
				} else if (mq & bit) {
					sc->in_str = 1;
				} else if (mo & bit) {
					sc->depth++;
				} else if (--sc->depth == 0) {
					*i = k + (size_t)p + 1;
					return 1;
				}
			}
			if (!reload)
				k += 16;
		}
	}
#endif
	while (k < n) {
		if (sc->in_str) {
			if (sc->esc) {
				sc->esc = 0;
				k++;
				continue;
			}
			{ /* the closing quote, unless a backslash comes first */
				const char *q = memchr(s + k, '"', n - k);
				size_t lim = q ? (size_t)(q - s) : n;
				const char *bs = memchr(s + k, '\\', lim - k);
				k = bs ? (size_t)(bs - s) : lim;
			}
			if (k == n)
				break;
			if (s[k++] == '\\') {
				sc->esc = 1;
				continue;
			}
			sc->in_str = 0;
			if (sc->depth == 0) { /* a string on its own ended */
				*i = k;
				return 1;
			}
			continue;
		}
		while (k < n && cls_out[(unsigned char)s[k]] == C_PLAIN)
			k++;
		if (k == n)
			break;
		switch (cls_out[(unsigned char)s[k++]]) {
		case C_QUOTE:
			sc->in_str = 1;
			break;
		case C_OPEN:
			sc->depth++;
			break;
		case C_CLOSE:
			if (--sc->depth == 0) {
				*i = k;
				return 1;
			}
			break;
		}
	}
	*i = k;
	return 0;
}

size_t cm_jscan_elements(cm_jscan *sc, const char *s, size_t n, size_t *i, uint32_t *start, uint32_t *spans,
			 size_t max, size_t stop, int *after)
{
	size_t got = 0, k = *i, g;
	*after = 0;
	for (;;) {
#ifdef JSCAN_AVX2
		if (have_avx2 && k + 64 <= n) {
			got += elements_avx2(sc, s, n, &k, start, spans + 2 * got, max - got, stop, after);
			if (*after) {
				*i = k;
				return got;
			}
		}
#endif
		if (!cm_jscan_feed(sc, s, n, &k)) { /* the chunk ran out inside the element */
			*i = k;
			return got;
		}
		spans[2 * got] = *start;
		spans[2 * got + 1] = (uint32_t)k;
		if (++got == max || k >= stop || !(g = cm_jscan_gap(s, n, k)))
			break;
		*start = (uint32_t)(g - 1);
		cm_jscan_begin(sc, s[g - 1]);
		sc->depth = 1; /* its bracket taken */
		k = g;
	}
	*i = k;
	*after = 1;
	return got;
}

/* Why a test of its own: a value the splitter cannot see the end of (a
 * pipe of zeros after '[') would be held without bound, and the scan
 * above takes control bytes for plain ones.  Sixteen bytes at a time with
 * SSE2 (c <= 0x1f is min(c, 0x1f) == c, unsigned), since a window's big
 * member passes through here whole. */
int cm_jscan_has_ctl(const char *s, size_t n)
{
	size_t k = 0;
#ifdef JSCAN_SIMD
	const __m128i lim = _mm_set1_epi8(0x1f), tab = _mm_set1_epi8('\t'), lf = _mm_set1_epi8('\n'),
		      cr = _mm_set1_epi8('\r');
	for (; k + 16 <= n; k += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + k));
		__m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, lim), v);
		__m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, lf)),
					  _mm_cmpeq_epi8(v, cr));
		if (_mm_movemask_epi8(_mm_andnot_si128(ws, ctl)))
			return 1;
	}
#endif
	for (; k < n; k++)
		if ((unsigned char)s[k] < 0x20 && !cm_jscan_ws(s[k]))
			return 1;
	return 0;
}
