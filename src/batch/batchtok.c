/* batchtok.c - whole tokens for the plan's yajl (batchtok.h): where a read
 * may be cut (btok_cuts), and the pieces handed to yajl. */
#include "config.h"
#include "batch/batchtok.h"
#include "json/jscan.h"
#include "json/strskip.h"

/* A run of white space collected past this goes to yajl at once. */
#define PENDING_WS (1u << 20)

#define NO_CUT ((size_t)-1)

/* The first and the last punctuation byte of S[0..N) outside a string (a
 * bracket, a brace, a comma, a colon), or NO_CUT, into P; P's string state
 * carried on to the read's end. */
static void btok_cuts(struct btok *p, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s, *e = u + n, *q = u;
	p->first_cut = p->last_cut = NO_CUT;
	while (q < e) {
		if (p->in_str) {
			if (p->esc) { /* the byte a backslash escapes */
				p->esc = 0;
				q++;
				continue;
			}
			if ((q = cm_strskip_plain(q, e)) == e)
				break;
			if (*q == '"')
				p->in_str = 0;
			else if (*q == '\\')
				p->esc = 1;
			q++;
			continue;
		}
#if CM_STRSKIP_SSE2
		/* between strings: 16 bytes a step to the next quote, noting
		 * the punctuation before it ({ } [ ] have the same bits as
		 * their lower case, 0x7b and 0x7d, with 0x20 set) */
		while (e - q >= 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
			__m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
			unsigned mq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
			unsigned mp = (unsigned)_mm_movemask_epi8(_mm_or_si128(
				_mm_or_si128(_mm_cmpeq_epi8(low, _mm_set1_epi8(0x7b)), _mm_cmpeq_epi8(low, _mm_set1_epi8(0x7d))),
				_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')), _mm_cmpeq_epi8(v, _mm_set1_epi8(':')))));
			if (mq)
				mp &= (1u << __builtin_ctz(mq)) - 1; /* before the quote */
			if (mp) {
				if (p->first_cut == NO_CUT)
					p->first_cut = (size_t)(q - u) + (size_t)__builtin_ctz(mp);
				p->last_cut = (size_t)(q - u) + 31 - (size_t)__builtin_clz(mp);
			}
			if (mq) {
				q += __builtin_ctz(mq);
				break;
			}
			q += 16;
		}
		if (q == e)
			break;
#endif
		switch (*q) {
		case '"':
			p->in_str = 1;
			break;
		case '{': case '}': case '[': case ']': case ',': case ':':
			if (p->first_cut == NO_CUT)
				p->first_cut = (size_t)(q - u);
			p->last_cut = (size_t)(q - u);
			break;
		default:
			break;
		}
		q++;
	}
}

/* yajl over S[0..N), at text offset AT. */
static int btok_piece(struct btok *p, const char *s, size_t n, uint64_t at)
{
	yajl_status st;
	if (n == 0)
		return BTOK_OK;
	st = yajl_parse(p->h, (const unsigned char *)s, n);
	if (st == yajl_status_client_canceled)
		return BTOK_STOP;
	if (st != yajl_status_ok) {
		p->err_at = at + yajl_get_bytes_consumed(p->h);
		return BTOK_ERROR;
	}
	return BTOK_OK;
}

int btok_flush(struct btok *p)
{
	size_t n;
	const char *s = cm_spillbuf_text(&p->pending, &n);
	int rc = s ? btok_piece(p, s, n, p->pending_at) : BTOK_SPILL;
	cm_spillbuf_clear(&p->pending);
	return rc;
}

int btok_feed(struct btok *p, const char *s, size_t n, uint64_t at)
{
	size_t head, tail;
	int rc;
	btok_cuts(p, s, n);
	if (p->first_cut == NO_CUT) { /* all of it inside one token */
		if (!cm_spillbuf_len(&p->pending))
			p->pending_at = at;
		if (cm_spillbuf_put(&p->pending, s, n, p->spill_at) < 0)
			return BTOK_SPILL;
		if (cm_spillbuf_len(&p->pending) < PENDING_WS || p->in_str || !cm_jscan_ws(s[n - 1]))
			return BTOK_OK;
		rc = btok_flush(p); /* or after it: a run of white space, which ended any token */
		p->pending_at = at + n;
		return rc;
	}
	head = cm_spillbuf_len(&p->pending) ? p->first_cut : 0; /* completes the pending token */
	tail = p->last_cut;
	if (cm_spillbuf_len(&p->pending)) {
		if (cm_spillbuf_put(&p->pending, s, head, p->spill_at) < 0)
			return BTOK_SPILL;
		if ((rc = btok_flush(p)) != BTOK_OK)
			return rc;
	}
	if ((rc = btok_piece(p, s + head, tail - head, at + head)) != BTOK_OK)
		return rc;
	p->pending_at = at + tail;
	return cm_spillbuf_put(&p->pending, s + tail, n - tail, p->spill_at) < 0 ? BTOK_SPILL : BTOK_OK;
}
