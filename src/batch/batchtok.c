/* batchtok.c - whole tokens for the plan's yajl (batchtok.h): where a read
 * may be cut (btok_cuts), and the pieces handed to yajl. */
#include "config.h"
#include "batch/batchtok.h"
#include "json/jscan.h"
#include "json/strskip.h"

/* A run of white space collected past this goes to yajl at once. */
#define PENDING_WS (1u << 20)

#define NO_CUT ((size_t)-1)

/* cut_before looks back over this much white space at most */
#define CUT_WS 4096u

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

/* A byte of a number or a literal (true, false, null), which yajl holds
 * until the byte after it. */
static int tok_byte(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
	       c == '+' || c == '.';
}

/* S[0..N), inside a string at its start (P's state: ESC after a
 * backslash): the offset just past the string's closing quote, or N when
 * it goes on past S (P's state then that of S's end). */
static size_t str_end(struct btok *p, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s, *e = u + n, *q = u;
	while (q < e) {
		if (p->esc) {
			p->esc = 0;
			q++;
			continue;
		}
		if ((q = cm_strskip_plain(q, e)) == e)
			break;
		if (*q == '"') {
			p->in_str = 0;
			return (size_t)(q - u) + 1;
		}
		if (*q == '\\')
			p->esc = 1;
		q++;
	}
	return n;
}

/* The first byte of the token S[FROM..N) ends in, S's end inside a string
 * when IN_STR: its opening quote, the last quote in S that no odd run of
 * backslashes escapes (valid JSON has none outside strings); else the
 * first of the number's or literal's bytes that end S.  N when S ends
 * between tokens, FROM when the token began at or before it; FROM too
 * when a run of backslashes reaches it (which quote it escapes, only the
 * text before FROM tells). */
static size_t last_token(const char *s, size_t from, size_t n, int in_str)
{
	size_t i = n, k;
	if (!in_str) {
		while (i > from && tok_byte((unsigned char)s[i - 1]))
			i--;
		return i;
	}
	for (;;) {
		while (i > from && s[i - 1] != '"')
			i--;
		if (i == from)
			return from;
		for (k = --i; k > from && s[k - 1] == '\\'; k--)
			;
		if (k == from && k < i)
			return from;
		if (((i - k) & 1) == 0)
			return i;
	}
}

/* The first token of S[0..N), S's start inside a string when P says so:
 * the offset just past it (past white space, N when it goes on past S;
 * P's string state then that of S's end).  A string's or a number's, the
 * one a read ended in; after the cut before it, its first byte. */
static size_t first_token(struct btok *p, const char *s, size_t n)
{
	size_t i = 0;
	if (!p->in_str) {
		while (i < n && cm_jscan_ws(s[i]))
			i++;
		if (i == n || (s[i] != '"' && !tok_byte((unsigned char)s[i])))
			return i; /* a bracket, a comma, a colon: a token of a byte */
		if (s[i] != '"') {
			while (i < n && tok_byte((unsigned char)s[i]))
				i++;
			return i;
		}
		p->in_str = 1;
		p->esc = 0;
		i++;
	}
	return i + str_end(p, s + i, n - i);
}

/* Where to cut S[FROM..N) before the token T it ends in (N: none): at the
 * comma, colon or bracket before it, so that the piece that completes the
 * token starts with that byte.  (yajl copies the first token of each
 * piece it is given into its lexer's buffer: that of a member's string of
 * 200 MiB cost 200 MB.)  T when nothing comes before it in S, or more
 * than CUT_WS bytes of white space before it (a read of blanks is not
 * looked through). */
static size_t cut_before(const char *s, size_t from, size_t t)
{
	size_t j = t;
	while (j > from && cm_jscan_ws(s[j - 1]))
		if (t - --j > CUT_WS) /* a read of blanks: no cut is needed */
			return t;
	if (j > from && (s[j - 1] == ',' || s[j - 1] == ':' || s[j - 1] == '[' || s[j - 1] == '{'))
		return j - 1;
	return t;
}

/* The reads' pieces when the caller knows where each read ends (END): the
 * pending text completed by the head of S that ends its token, S to the
 * cut before its last token, and the rest pending.  A token is lexed once,
 * and found by a look at S's first and last few bytes, not a scan of S. */
static int btok_known(struct btok *p, const char *s, size_t n, uint64_t at, int end)
{
	size_t head = 0, tail;
	int rc;
	if (cm_spillbuf_len(&p->pending)) {
		head = first_token(p, s, n);
		if (cm_spillbuf_put(&p->pending, s, head, p->spill_at) < 0)
			return BTOK_SPILL;
		/* S inside the pending token, unless it ends in white space
		 * outside a string: that ended the token, and a run of it
		 * (which no bound holds) goes to yajl as it comes */
		if (head == n && ((end & 1) || !cm_jscan_ws(s[n - 1]))) {
			p->in_str = end & 1;
			p->esc = (end >> 1) & 1;
			return BTOK_OK;
		}
		if ((rc = btok_flush(p)) != BTOK_OK)
			return rc;
	}
	p->in_str = end & 1;
	p->esc = (end >> 1) & 1;
	tail = cut_before(s, head, last_token(s, head, n, p->in_str));
	if ((rc = btok_piece(p, s + head, tail - head, at + head)) != BTOK_OK)
		return rc;
	p->pending_at = at + tail;
	return cm_spillbuf_put(&p->pending, s + tail, n - tail, p->spill_at) < 0 ? BTOK_SPILL : BTOK_OK;
}

/* The reads' pieces when nothing tells where a read ends: S scanned for
 * its cuts (btok_cuts), the pending token completed by the head before the
 * first, S to its last, the tail after it pending. */
static int btok_scanned(struct btok *p, const char *s, size_t n, uint64_t at)
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

int btok_feed(struct btok *p, const char *s, size_t n, uint64_t at, int end)
{
	return end >= 0 ? btok_known(p, s, n, at, end) : btok_scanned(p, s, n, at);
}
