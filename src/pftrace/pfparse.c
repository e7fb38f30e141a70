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
 * either way. */
#include "config.h"
#include "pftrace/pfevent.h"

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

static cm_jval *value(struct fp *p);

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
		kid->key = key;
		kid->klen = klen;
		if (tail)
			tail->next = kid;
		else
			v->kids = kid;
		tail = kid;
		v->len++;
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

static cm_jval *value(struct fp *p)
{
	cm_jval *v;
	size_t start = p->i;
	const char *s = p->s;
	if (p->i >= p->n)
		return NULL;
	switch (s[p->i]) {
	case '"':
		p->i++;
		if (!(v = node(p, CM_J_STR)) || string(p, &v->s, &v->len) < 0)
			return NULL;
		return v;
	case '{':
		p->i++;
		return container(p, CM_J_OBJ);
	case '[':
		p->i++;
		return container(p, CM_J_ARR);
	case 'n':
		return word(p, "null", 4) ? node(p, CM_J_NULL) : NULL;
	case 't':
		return word(p, "true", 4) ? node(p, CM_J_TRUE) : NULL;
	case 'f':
		return word(p, "false", 5) ? node(p, CM_J_FALSE) : NULL;
	}
	/* a number as Python's json reads it, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?,
	 * or nothing (where that parser would stop inside it: left to it);
	 * read with a local cursor, which the compiler keeps in a register
	 * (p->i may alias the text, a char array, and was stored each digit) */
	{
		size_t i = p->i, n = p->n;
		if (s[i] == '-')
			i++;
		if (i < n && s[i] == '0')
			i++;
		else if (i < n && digit(s[i]))
			while (i < n && digit(s[i]))
				i++;
		else
			return NULL;
		if (i < n && s[i] == '.') {
			if (i + 1 >= n || !digit(s[i + 1]))
				return NULL;
			i++;
			while (i < n && digit(s[i]))
				i++;
		}
		if (i < n && (s[i] == 'e' || s[i] == 'E')) {
			i++;
			if (i < n && (s[i] == '+' || s[i] == '-'))
				i++;
			if (i >= n || !digit(s[i]))
				return NULL;
			while (i < n && digit(s[i]))
				i++;
		}
		p->i = i;
	}
	if (!(v = node(p, CM_J_NUM)))
		return NULL;
	v->s = s + start;
	v->len = (uint32_t)(p->i - start);
	return v;
}

cm_jval *cm_pf_parse(cm_pfev *w, const char *s, size_t n)
{
	struct fp p = {s, n, 0, w->nodes, 0, w->nodes_cap, 0};
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
