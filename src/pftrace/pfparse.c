/* pfparse.c - the Perfetto transcoder's reading of one traceEvents
 * element: the value tree that cm_jval_parse_py makes of its text, made
 * without its costs where the text allows.
 *
 * The workers parse every element of the document (pfbatch.c), so this
 * is the transcoder's hottest loop.  The general parser allocates each
 * node from the arena and clears it, copies every number's text, and
 * tries six literals (null, true, false, NaN, Infinity, -Infinity) before
 * it reads a number, the commonest value of an event.  Here the nodes come
 * from an array the worker keeps, numbers and strings point into the
 * element's text (which outlives the tree), and a literal is tried only
 * where its first letter stands.  What this does not read itself (a
 * string with an escape or a raw control character, NaN or Infinity, a
 * number that breaks Python's pattern, more nodes than the array holds,
 * text that is not JSON) it leaves to cm_jval_parse_py: the tree is then
 * that parser's, so an element gives the same tree, and the same bytes,
 * either way.
 *
 * Two things more, as the text is read once here: a number keeps the
 * value its readers would make of its text again (an integer's, a time's
 * nanoseconds: has_iv, pfevent.h's CM_PF_IV_*), and a compact element
 * (the GPU events the merge renders, 60 % of a merged trace's) is read
 * straight into its members (cm_pf_parse_flat), the same nodes the tree
 * would hold, without the tree's recursion and the members' second pass.
 * CUPTIMERGE_PFT_GENERIC=1 turns both off (tests/e2e/pfflat.sh compares). */
#include "config.h"
#include "pftrace/pfevent.h"
#include "base/word.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

struct fp {
	const char *s;
	size_t n, i;
	cm_jval *nodes;
	size_t nn, cap;
	int depth;
	int iv; /* numbers keep their value (not with CUPTIMERGE_PFT_GENERIC) */
};

static inline void ws(struct fp *p)
{
	size_t i = p->i;
	const char *s = p->s;
	if (i < p->n && (unsigned char)s[i] > ' ') /* most often: none */
		return;
	while (i < p->n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
		i++;
	p->i = i;
}

static cm_jval *node(struct fp *p, int type)
{
	cm_jval *v;
	if (p->nn == p->cap)
		return NULL;
	v = &p->nodes[p->nn++];
	v->type = (unsigned char)type;
	v->len = v->klen = 0;
	v->s = v->key = NULL;
	v->kids = v->next = NULL;
	v->has_iv = 0;
	return v;
}

/* A string after its opening quote, with no escape or control byte: its
 * bytes in *OUT, *LEN.  0, or -1 (the general parser's to read). */
static int string(struct fp *p, const char **out, uint32_t *len)
{
	size_t k = p->i;
	const char *s = p->s;
#if defined(__SSE2__)
	/* sixteen bytes at a time: a quote, a backslash or a byte below 0x20 */
	const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\'), c = _mm_set1_epi8(0x1f);
	while (k + 16 <= p->n) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + k));
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b)),
					 _mm_cmpeq_epi8(_mm_max_epu8(v, c), c));
		unsigned bits = (unsigned)_mm_movemask_epi8(m);
		if (bits) {
			k += (size_t)__builtin_ctz(bits);
			goto found;
		}
		k += 16;
	}
#endif
	while (k < p->n && s[k] != '"' && s[k] != '\\' && (unsigned char)s[k] >= 0x20)
		k++;
#if defined(__SSE2__)
found:
#endif
	if (k == p->n || s[k] != '"')
		return -1;
	*out = s + p->i;
	*len = (uint32_t)(k - p->i);
	p->i = k + 1;
	return 0;
}

static int digit(char c) { return c >= '0' && c <= '9'; }

/* The digits of S from I on (up to N), their value folded into *M (M * 10
 * + d each; it wraps past 19 digits, when it is not used): returns the
 * index of the first byte that is not one.  Eight at a time where eight
 * bytes are left (a trace time has 13 before its point), the first
 * non-digit of a word found from its mask, as json/jvalid_core.h does. */
static inline size_t digits(const char *s, size_t i, size_t n, uint64_t *mp)
{
	uint64_t m = *mp;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
	static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
	const uint64_t hi = UINT64_C(0xF0F0F0F0F0F0F0F0), threes = UINT64_C(0x3030303030303030);
	while (n - i >= 8) {
		uint64_t x = cm_load_le64(s + i);
		/* the digits as zero bytes, up to the first that is not one */
		uint64_t t = ((x & hi) ^ threes) | (((x + UINT64_C(0x0606060606060606)) & hi) ^ threes);
		unsigned k;
		if (!t) {
			m = m * 100000000u + cm_eight_digits_value(x);
			i += 8;
			continue;
		}
		k = (unsigned)__builtin_ctzll(t) >> 3;
		if (k) { /* the K digits moved up, '0's in front */
			x = (x << (64 - 8 * k)) | (threes >> (8 * k));
			m = m * pow10[k] + cm_eight_digits_value(x);
			i += k;
		}
		*mp = m;
		return i;
	}
#endif
	while (i < n && digit(s[i]))
		m = m * 10 + (uint64_t)(s[i++] - '0');
	*mp = m;
	return i;
}

/* A number as Python's json reads it, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?,
 * at the cursor, which passes it, into the node V (its text, and what
 * pfevent.h's CM_PF_IV_INT and CM_PF_IV_NS say of its iv): V, or NULL
 * where that parser would stop inside it (left to it).  Read with a local
 * cursor, which the compiler keeps in a register (p->i may alias the
 * text, a char array, and was stored each digit). */
static inline cm_jval *number(struct fp *p)
{
	static const uint64_t p10[4] = {1, 10, 100, 1000};
	size_t i = p->i, n = p->n, a, k = 0;
	const char *s = p->s;
	uint64_t m = 0;
	int neg = 0, frac = 0;
	cm_jval *v;
	if (i < n && s[i] == '-')
		neg = 1, i++;
	a = i;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && digit(s[i]))
		i = digits(s, i, n, &m);
	else
		return NULL;
	k = i - a; /* the integer's digits, for now */
	if (i < n && s[i] == '.') {
		size_t b;
		if (i + 1 >= n || !digit(s[i + 1]))
			return NULL;
		b = ++i;
		i = digits(s, i, n, &m);
		frac = 1;
		if (k + (i - b) > 18)
			k = 99; /* M is not exact */
		else
			k = i - b;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || !digit(s[i]))
			return NULL;
		while (i < n && digit(s[i]))
			i++;
		frac = 2;
	}
	if (!(v = node(p, CM_J_NUM)))
		return NULL;
	v->s = s + p->i;
	v->len = (uint32_t)(i - p->i);
	p->i = i;
	/* the value, where it is as cheap to keep as the digits were to read:
	 * what small_int and cm_pf_us_to_ns's digits path would make of the
	 * text (its readers' fast paths) */
	if (!p->iv) {
		;
	} else if (!frac && k <= 18) {
		v->iv = neg ? -(int64_t)m : (int64_t)m;
		v->has_iv = CM_PF_IV_INT;
	} else if (frac == 1 && k <= 3 && m < ((uint64_t)1 << 43) * p10[k]) {
		uint64_t x = m * p10[3 - k];
		v->iv = neg ? -(int64_t)x : (int64_t)x;
		v->has_iv = CM_PF_IV_NS;
	}
	return v;
}

static cm_jval *value(struct fp *p);

/* KID, under KEY (KLEN bytes; NULL in an array), after TAIL (NULL: first)
 * among V's kids; returns KID, the new tail. */
static inline cm_jval *append_kid(cm_jval *v, cm_jval *tail, cm_jval *kid, const char *key, uint32_t klen)
{
	kid->key = key;
	kid->klen = klen;
	if (tail)
		tail->next = kid;
	else
		v->kids = kid;
	v->len++;
	return kid;
}

/* An array or object after its opening bracket. */
static cm_jval *container(struct fp *p, int type)
{
	cm_jval *v = node(p, type), *tail = NULL;
	char close = type == CM_J_ARR ? ']' : '}';
	if (!v || ++p->depth > CM_JSON_MAX_DEPTH)
		return NULL;
	ws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return v;
	}
	for (;;) {
		const char *key = NULL;
		uint32_t klen = 0;
		cm_jval *kid;
		if (type == CM_J_OBJ) {
			if (p->i >= p->n || p->s[p->i] != '"')
				return NULL;
			p->i++;
			if (string(p, &key, &klen) < 0)
				return NULL;
			ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return NULL;
			p->i++;
			ws(p);
		}
		if (!(kid = value(p)))
			return NULL;
		tail = append_kid(v, tail, kid, key, klen);
		ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			ws(p);
			continue;
		}
		if (p->i < p->n && p->s[p->i] == close) {
			p->i++;
			p->depth--;
			return v;
		}
		return NULL;
	}
}

/* 1 when the literal WORD (N bytes) is at the cursor, which passes it. */
static int word(struct fp *p, const char *w, size_t n)
{
	if (p->n - p->i < n || memcmp(p->s + p->i, w, n))
		return 0;
	p->i += n;
	return 1;
}

static cm_jval *flat_scalar(struct fp *p);

static cm_jval *value(struct fp *p)
{
	if (p->i < p->n && (p->s[p->i] == '{' || p->s[p->i] == '[')) {
		p->i++;
		return container(p, p->s[p->i - 1] == '{' ? CM_J_OBJ : CM_J_ARR);
	}
	return flat_scalar(p);
}

cm_jval *cm_pf_parse(cm_pfev *w, const char *s, size_t n)
{
	struct fp p = {s, n, 0, w->nodes, 0, w->nodes_cap, 0, !w->no_flat};
	cm_jval *v;
	ws(&p);
	v = value(&p);
	if (v) {
		ws(&p);
		if (p.i == p.n)
			return v;
	}
	if (p.nn == p.cap) { /* more nodes next time */
		w->nodes_cap = w->nodes_cap ? w->nodes_cap * 2 : 256;
		w->nodes = cm_xrealloc(w->nodes, w->nodes_cap * sizeof *w->nodes);
	}
	cm_arena_reset(w->arena);
	return cm_jval_parse_py(w->arena, s, n);
}

/* ---- the compact element: straight into the event's members ---- */

/* A scalar value at the cursor (a string without escapes, a number,
 * true, false, null), for value() and the compact reading alike; NULL for
 * anything else (a container, a space, an escape: the general reading's). */
static cm_jval *flat_scalar(struct fp *p)
{
	const char *s = p->s;
	cm_jval *v;
	if (p->i >= p->n)
		return NULL;
	switch (s[p->i]) {
	case '"':
		p->i++;
		if (!(v = node(p, CM_J_STR)) || string(p, &v->s, &v->len) < 0)
			return NULL;
		return v;
	case 'n': return word(p, "null", 4) ? node(p, CM_J_NULL) : NULL;
	case 't': return word(p, "true", 4) ? node(p, CM_J_TRUE) : NULL;
	case 'f': return word(p, "false", 5) ? node(p, CM_J_FALSE) : NULL;
	}
	return number(p);
}

/* A member's "KEY": at the cursor (its quote), the cursor passing the
 * colon.  0, or -1 (not that, or a key with an escape). */
static int flat_key(struct fp *p, const char **key, uint32_t *klen)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return -1;
	p->i++;
	if (string(p, key, klen) < 0 || p->i >= p->n || p->s[p->i] != ':')
		return -1;
	p->i++;
	return 0;
}

/* An object of scalars at the cursor (its '{'), as container() makes it;
 * NULL for anything else. */
static cm_jval *flat_object(struct fp *p)
{
	cm_jval *o = node(p, CM_J_OBJ), *tail = NULL, *kid;
	const char *key;
	uint32_t klen;
	if (!o)
		return NULL;
	p->i++;
	if (p->i < p->n && p->s[p->i] == '}') {
		p->i++;
		return o;
	}
	for (;;) {
		if (flat_key(p, &key, &klen) < 0 || !(kid = flat_scalar(p)))
			return NULL;
		tail = append_kid(o, tail, kid, key, klen);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->i < p->n && p->s[p->i] == '}') {
			p->i++;
			return o;
		}
		return NULL;
	}
}

int cm_pf_parse_flat(cm_pfev *w, const char *s, size_t n, struct ev *ev)
{
	struct fp p = {s, n, 1, w->nodes, 0, w->nodes_cap, 0, 1};
	if (n < 3 || s[0] != '{' || s[n - 1] != '}')
		return 0;
	memset(ev, 0, sizeof *ev);
	for (;;) {
		const char *key;
		uint32_t klen;
		const cm_jval **slot;
		cm_jval *v;
		if (flat_key(&p, &key, &klen) < 0)
			return 0;
		if (p.i < n && s[p.i] == '{')
			v = flat_object(&p);
		else
			v = flat_scalar(&p);
		if (!v)
			return 0;
		v->key = key;
		v->klen = klen;
		if ((slot = cm_pf_member_slot(ev, key, klen)) != NULL)
			*slot = v; /* the last of a repeated key, as cm_pf_members */
		if (p.i < n && s[p.i] == ',') {
			p.i++;
			continue;
		}
		return p.i == n - 1; /* at the closing brace, the element's last byte */
	}
}
