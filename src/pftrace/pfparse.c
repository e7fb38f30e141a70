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
 * number that breaks Python's pattern, an event's member with an exponent
 * that may be beyond a double's range, more nodes than the array holds,
 * text that is not JSON) it leaves to cm_jval_parse_py: the tree is then
 * that parser's, so an element gives the same tree, and the same bytes,
 * either way.
 *
 * Two things more, as the text is read once here: a number keeps the
 * value its readers would make of its text again (an integer's, a time's
 * nanoseconds: has_iv, pfevent.h's CM_PF_IV_*), and an element is read
 * straight into its members (cm_pf_parse_flat: the GPU events the merge
 * renders, compact, and the CPU trace's, indented, with their args
 * objects), the same nodes the tree would hold, without the element's own
 * node and the members' second pass.  CUPTIMERGE_PFT_GENERIC=1 turns both
 * off (tests/e2e/pfflat.sh compares).
 *
 * The reading goes by a cursor that each step takes and returns (NULL:
 * not read here), not by an index in the parser's struct: the compiler
 * keeps it in a register, where the struct's index was stored and loaded
 * again around every node's byte-wide store (a char may alias it).  That,
 * the spaces skipped sixteen bytes at a time (one at once) and the steps
 * inline up to a container's recursion took 28 % off the parse's
 * instructions on a CPU trace alone, 22 % on a merged one (BENCHMARKS.md,
 * pfparse11). */
#include "config.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfkeys.h"
#include "base/word.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

struct fp {
	const char *e; /* the end of the element's text */
	cm_jval *nodes;
	size_t nn, cap;
	int depth;
	int iv; /* numbers keep their value (not with CUPTIMERGE_PFT_GENERIC) */
};

/* Past the spaces at C (up to E): none most often (compact text), else a
 * run of them (an indented element's newline and indent), sixteen bytes
 * at a time. */
static inline const char *ws(const char *c, const char *e)
{
	if (c < e && (unsigned char)*c > ' ') /* most often: none */
		return c;
	if (e - c >= 2 && *c == ' ' && (unsigned char)c[1] > ' ') /* one (after an indented ':' or ',') */
		return c + 1;
#if defined(__SSE2__)
	while (e - c >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)c);
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
					 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
		unsigned bits = (unsigned)_mm_movemask_epi8(m) ^ 0xffffu; /* the bytes that are not spaces */
		if (bits)
			return c + __builtin_ctz(bits);
		c += 16;
	}
#endif
	while (c < e && (*c == ' ' || *c == '\n' || *c == '\t' || *c == '\r'))
		c++;
	return c;
}

static inline cm_jval *node(struct fp *p, int type)
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

/* The closing quote of the string whose bytes begin at C (after its
 * opening quote), up to E; NULL where an escape or a control byte comes
 * first (the general parser's to read), or no quote. */
static inline const char *string_end(const char *c, const char *e)
{
#if defined(__SSE2__)
	/* sixteen bytes at a time: a quote, a backslash or a byte below 0x20 */
	const __m128i q = _mm_set1_epi8('"'), b = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
	while (e - c >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)c);
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, b)),
					 _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
		unsigned bits = (unsigned)_mm_movemask_epi8(m);
		if (bits) {
			c += __builtin_ctz(bits);
			return *c == '"' ? c : NULL;
		}
		c += 16;
	}
#endif
	while (c < e && *c != '"' && *c != '\\' && (unsigned char)*c >= 0x20)
		c++;
	return c < e && *c == '"' ? c : NULL;
}

static inline int digit(char c) { return c >= '0' && c <= '9'; }

/* The digits from C on (up to E), their value folded into *M (M * 10 + d
 * each; it wraps past 19 digits, when it is not used): returns the first
 * byte that is not one.  Eight at a time where eight bytes are left (a
 * trace time has 13 before its point), the first non-digit of a word
 * found from its mask, as json/jvalid_core.h does. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const char *digits(const char *c, const char *e, uint64_t *mp)
{
	uint64_t m = *mp;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
	static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
	const uint64_t hi = UINT64_C(0xF0F0F0F0F0F0F0F0), threes = UINT64_C(0x3030303030303030);
	while (e - c >= 8) {
		uint64_t x = cm_load_le64(c);
		/* the digits as zero bytes, up to the first that is not one */
		uint64_t t = ((x & hi) ^ threes) | (((x + UINT64_C(0x0606060606060606)) & hi) ^ threes);
		unsigned k;
		if (!t) {
			m = m * 100000000u + cm_eight_digits_value(x);
			c += 8;
			continue;
		}
		k = (unsigned)__builtin_ctzll(t) >> 3;
		if (k) { /* the K digits moved up, '0's in front */
			x = (x << (64 - 8 * k)) | (threes >> (8 * k));
			m = m * pow10[k] + cm_eight_digits_value(x);
			c += k;
		}
		*mp = m;
		return c;
	}
#endif
	while (c < e && digit(*c))
		m = m * 10 + (uint64_t)(*c++ - '0');
	*mp = m;
	return c;
}

/* A number as Python's json reads it, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?,
 * at C, into a node in *OUT (its text, and what pfevent.h's CM_PF_IV_INT
 * and CM_PF_IV_NS say of its iv): the byte after it, or NULL where that
 * parser would stop inside it (left to it). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const char *number(struct fp *p, const char *c, cm_jval **out)
{
	static const uint64_t p10[4] = {1, 10, 100, 1000};
	const char *e = p->e, *start = c, *a, *b;
	size_t k;
	uint64_t m = 0;
	int neg = 0, frac = 0;
	cm_jval *v;
	if (c < e && *c == '-')
		neg = 1, c++;
	a = c;
	if (c < e && *c == '0')
		c++;
	else if (c < e && digit(*c))
		c = digits(c, e, &m);
	else
		return NULL;
	k = (size_t)(c - a); /* the integer's digits, for now */
	if (c < e && *c == '.') {
		if (e - c < 2 || !digit(c[1]))
			return NULL;
		b = ++c;
		c = digits(c, e, &m);
		frac = 1;
		if (k + (size_t)(c - b) > 18)
			k = 99; /* M is not exact */
		else
			k = (size_t)(c - b);
	}
	if (c < e && (*c == 'e' || *c == 'E')) {
		c++;
		if (c < e && (*c == '+' || *c == '-'))
			c++;
		if (c >= e || !digit(*c))
			return NULL;
		b = c;
		while (c < e && digit(*c))
			c++;
		frac = 2;
		/* an event's member that may be beyond a double's range
		 * (1e400): the tree's, which cm_pf_unreadable_member asks
		 * (below 10^20 with an exponent of two digits it is not) */
		if (p->depth == 1 && (c - b > 2 || c - start > 20))
			return NULL;
	}
	if (!(v = node(p, CM_J_NUM)))
		return NULL;
	v->s = start;
	v->len = (uint32_t)(c - start);
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
	*out = v;
	return c;
}

/* The literal WORD (N bytes) at C: the byte after it, or NULL. */
static inline const char *word(const char *c, const char *e, const char *w, size_t n)
{
	return (size_t)(e - c) >= n && !memcmp(c, w, n) ? c + n : NULL;
}

static const char *container(struct fp *p, const char *c, int type, cm_jval **out);

/* A value at C into *OUT: the byte after it, or NULL (an escape, NaN,
 * text that is not JSON: the general reading's).  One switch on its first
 * byte, the containers' cases in it: a test for a bracket, then the
 * scalars' own switch, cost 13 M instructions more on the 50k pair's
 * merged JSON (BENCHMARKS.md "pfparse20").  (Inline in its callers up to a
 * container, the reading's one call per nested container.) */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const char *value(struct fp *p, const char *c, cm_jval **out)
{
	const char *e = p->e, *q;
	cm_jval *v;
	if (c >= e)
		return NULL;
	switch (*c) {
	case '{':
		return container(p, c + 1, CM_J_OBJ, out);
	case '[':
		return container(p, c + 1, CM_J_ARR, out);
	case '"':
		if (!(q = string_end(c + 1, e)) || !(v = node(p, CM_J_STR)))
			return NULL;
		v->s = c + 1;
		v->len = (uint32_t)(q - c - 1);
		*out = v;
		return q + 1;
	case 'n':
		q = word(c, e, "null", 4);
		break;
	case 't':
		q = word(c, e, "true", 4);
		break;
	case 'f':
		q = word(c, e, "false", 5);
		break;
	default:
		return number(p, c, out);
	}
	if (!q || !(v = node(p, *c == 'n' ? CM_J_NULL : *c == 't' ? CM_J_TRUE : CM_J_FALSE)))
		return NULL;
	*out = v;
	return q;
}

/* An object member's "KEY": at C (its quote) up to E, its bytes in *KEY
 * and *KLEN: the value's first byte (the colon and the spaces around it
 * passed), or NULL (not that, or a key with an escape). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline const char *member_key(const char *c, const char *e, const char **key, uint32_t *klen)
{
	const char *q;
	if (c >= e || *c != '"' || !(q = string_end(c + 1, e)))
		return NULL;
	*key = c + 1;
	*klen = (uint32_t)(q - c - 1);
	/* the two layouts of the traces met, tested first: an indented
	 * trace's "KEY": VALUE and a compact one's "KEY":VALUE */
	if (e - q >= 4 && q[1] == ':' && (unsigned char)q[2] > ' ')
		return q + 2;
	if (e - q >= 4 && q[1] == ':' && q[2] == ' ' && (unsigned char)q[3] > ' ')
		return q + 3;
	c = ws(q + 1, e);
	if (c >= e || *c != ':')
		return NULL;
	return ws(c + 1, e);
}

/* Past a comma right after a value at C, and the one space after it, up
 * to E: the next member's quote (or an array's next string), or NULL for
 * anything else (ws() and the comma's test then, in their callers).  The
 * two layouts of the traces met: an indented trace's VALUE, "KEY" on one
 * line and a compact one's VALUE,"KEY".  (With member_key's own two, 15.6
 * M of the 1,974 M instructions of the 50k pair's .pftrace merge, once
 * member_key was inline again: ws() was called four times a member, two
 * of them for one space; BENCHMARKS.md "pfcpu16".) */
static inline const char *comma(const char *c, const char *e)
{
	if (e - c >= 3 && c[0] == ',') {
		if (c[1] == '"')
			return c + 1;
		if (c[1] == ' ' && c[2] == '"')
			return c + 2;
	}
	return NULL;
}

/* An array or object after its opening bracket at C, into *OUT: the
 * byte after its closing bracket, or NULL. */
static const char *container(struct fp *p, const char *c, int type, cm_jval **out)
{
	const char *e = p->e;
	cm_jval *v = node(p, type), *tail = NULL;
	char close = type == CM_J_ARR ? ']' : '}';
	if (!v || ++p->depth > CM_JSON_MAX_DEPTH)
		return NULL;
	*out = v;
	c = ws(c, e);
	if (c < e && *c == close) {
		p->depth--;
		return c + 1;
	}
	for (;;) {
		const char *key = NULL, *q;
		uint32_t klen = 0;
		cm_jval *kid;
		if (type == CM_J_OBJ && !(c = member_key(c, e, &key, &klen)))
			return NULL;
		if (!(c = value(p, c, &kid)))
			return NULL;
		kid->key = key;
		kid->klen = klen;
		cm_jval_append(v, &tail, kid);
		if ((q = comma(c, e)) != NULL) {
			c = q;
			continue;
		}
		c = ws(c, e);
		if (c < e && *c == ',') {
			c = ws(c + 1, e);
			continue;
		}
		if (c < e && *c == close) {
			p->depth--;
			return c + 1;
		}
		return NULL;
	}
}

cm_jval *cm_pf_parse(cm_pfev *w, const char *s, size_t n)
{
	struct fp p = {s + n, w->nodes, 0, w->nodes_cap, 0, !w->no_flat};
	const char *c = ws(s, s + n);
	cm_jval *v = NULL;
	if ((c = value(&p, c, &v)) != NULL && ws(c, s + n) == s + n)
		return v;
	if (p.nn == p.cap) { /* more nodes next time */
		w->nodes_cap = w->nodes_cap ? w->nodes_cap * 2 : 256;
		w->nodes = cm_xrealloc(w->nodes, w->nodes_cap * sizeof *w->nodes);
	}
	cm_arena_reset(w->arena);
	return cm_jval_parse_py(w->arena, s, n);
}

int cm_pf_parse_flat(cm_pfev *w, const char *s, size_t n, struct ev *ev)
{
	/* (depth 1: the element's object, as container() counts it) */
	struct fp p = {s + n, w->nodes, 0, w->nodes_cap, 1, 1};
	const char *c, *e = s + n;
	if (n < 2 || s[0] != '{' || s[n - 1] != '}')
		return 0;
	cm_pf_ev_clear(ev);
	c = ws(s + 1, e);
	if (*c == '}') /* (c < e: the last byte is one) */
		return c == e - 1;
	for (;;) {
		const char *key = c + 1, *q;
		uint32_t klen;
		unsigned kno;
		const cm_jval **slot;
		cm_jval *v;
		if ((q = cm_pf_key_known(c, e, &kno, &klen)) != NULL) {
			/* one of struct ev's keys, its field by its CM_JK_* (the
			 * order pfevent.h's cm_pf_members_given asserts) */
			if (!(c = value(&p, ws(q, e), &v)))
				return 0;
			v->key = key;
			v->klen = klen;
			*(const cm_jval **)(void *)((char *)ev + (kno - 1) * sizeof(cm_jval *)) = v;
		} else {
			if (!(c = member_key(c, e, &key, &klen)) || !(c = value(&p, c, &v)))
				return 0;
			v->key = key;
			v->klen = klen;
			if ((slot = cm_pf_member_slot(ev, key, klen)) != NULL)
				*slot = v; /* the last of a repeated key, as cm_pf_members */
		}
		if ((q = comma(c, e)) != NULL) {
			c = q;
			continue;
		}
		c = ws(c, e);
		if (c < e && *c == ',') {
			c = ws(c + 1, e);
			continue;
		}
		return c == e - 1; /* at the closing brace, the element's last byte */
	}
}
