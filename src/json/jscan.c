/* jscan.c - the value scanner of the splitter and the second passes.
 *
 * Most bytes of a trace are plain: only quotes, backslashes and brackets
 * move the state.  With SSE2 (every x86-64) sixteen bytes are classified
 * at once and the interesting ones taken in order from the masks; the
 * state decides which mask counts (inside a string, quotes and
 * backslashes; outside, quotes and brackets).  A backslash makes the loop
 * skip the escaped byte and load again from there: escapes are rare.  The
 * byte loop below does the tail of a chunk, and all of it without SSE2 (or
 * with CM_JSCAN_NO_SIMD, so that the test can run both). */
#include "config.h"
#include "json/jscan.h"

#include <string.h>
#if defined(__SSE2__) && !defined(CM_JSCAN_NO_SIMD)
#include <emmintrin.h>
#define JSCAN_SIMD 1
#endif

/* Byte classes outside strings (inside, only quotes and backslashes matter,
 * found with memchr): quotes and brackets. */
enum { C_PLAIN = 0, C_QUOTE, C_BSLASH, C_OPEN, C_CLOSE };

static const unsigned char cls_out[256] = {['"'] = C_QUOTE, ['{'] = C_OPEN, ['['] = C_OPEN,
					   ['}'] = C_CLOSE, [']'] = C_CLOSE};

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
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + k));
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
