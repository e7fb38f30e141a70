/* jvalid_core.h - the scanner of jvalid.c, inline: one JSON value checked
 * to the letter of yajl + jcheck and, in the same pass, replayed as yajl's
 * callbacks or built into a tree (jvalid.c's comment says how and why).
 *
 * Not an interface of its own: jvalid.c compiles its entry points from it,
 * and a stage whose callbacks are fixed compiles a replay of its own with
 * cm_jvalid_replay_with, so that they are called directly, not through a
 * pointer (and may be inlined).  Every name here is static and starts with
 * jv_ or JV_, so that the file that includes it keeps its own names. */
#ifndef CM_JVALID_CORE_H
#define CM_JVALID_CORE_H

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include "json/jcheck.h" /* CM_JSON_MAX_DEPTH */
#include "json/jval.h"
#include "json/jvalid.h" /* CM_JVALID_SHORT */
#include "json/strskip.h"
#include "base/word.h"

/* The scanner's answers: the same values cm_jvalid_prefix returns. */
enum { JV_BAD = 0, JV_OK = 1, JV_SHORT = CM_JVALID_SHORT };

/* What a byte starts where a value is expected. */
enum { JV_VBAD = 0, JV_VOBJ, JV_VARR, JV_VSTR, JV_VNUM, JV_VTRUE, JV_VFALSE, JV_VNULL };

static const unsigned char jv_value_class[256] = {
	['{'] = JV_VOBJ, ['['] = JV_VARR, ['"'] = JV_VSTR, ['-'] = JV_VNUM, ['0'] = JV_VNUM, ['1'] = JV_VNUM,
	['2'] = JV_VNUM, ['3'] = JV_VNUM, ['4'] = JV_VNUM, ['5'] = JV_VNUM, ['6'] = JV_VNUM, ['7'] = JV_VNUM,
	['8'] = JV_VNUM, ['9'] = JV_VNUM, ['t'] = JV_VTRUE, ['f'] = JV_VFALSE, ['n'] = JV_VNULL,
};

/* JSON whitespace: not FF or VT, which yajl would take and jcheck refuses. */
static const unsigned char jv_is_blank[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1};

/* The one-byte escapes after a backslash ('u' is handled apart). */
static const unsigned char jv_is_short_escape[256] = {
	['"'] = 1, ['\\'] = 1, ['/'] = 1, ['b'] = 1, ['f'] = 1, ['n'] = 1, ['r'] = 1, ['t'] = 1,
};

static const unsigned char jv_is_hex[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
};

static inline int jv_is_digit(unsigned char c) { return (unsigned)(c - '0') < 10; }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
#define JV_DIGIT_MASK 1
/* Of the eight bytes of X (loaded little-endian), the ASCII digits as zero
 * bytes and every other byte not zero, up to the first that is not a
 * digit: cm_eight_digits' test a byte at a time (the carry of a byte past
 * 0xf9 may spoil the bytes after it, all beyond a non-digit). */
static inline uint64_t jv_nondigits(uint64_t x)
{
	const uint64_t hi = UINT64_C(0xF0F0F0F0F0F0F0F0), threes = UINT64_C(0x3030303030303030);
	return ((x & hi) ^ threes) | (((x + UINT64_C(0x0606060606060606)) & hi) ^ threes);
}
#else
#define JV_DIGIT_MASK 0
#endif

/* The digits from P on (up to E): returns the first byte that is not one.
 * Eight bytes are looked at a time, the first non-digit among them found
 * from their mask (a 13-digit trace time's last five were a byte loop). */
static inline const unsigned char *jv_skip_digits(const unsigned char *p, const unsigned char *e)
{
#if JV_DIGIT_MASK
	while (e - p >= 8) {
		uint64_t t = jv_nondigits(load8(p));
		if (t)
			return p + (__builtin_ctzll(t) >> 3);
		p += 8;
	}
#else
	while (e - p >= 8 && cm_eight_digits(load8(p)))
		p += 8;
#endif
	while (p < e && jv_is_digit(*p))
		p++;
	return p;
}

/* The JSON blanks from P on (up to E): returns the first other byte, or E.
 * Pretty-printed traces put a newline and a run of spaces between members,
 * so after each other blank the spaces that follow are skipped 8 at a time. */
static inline const unsigned char *jv_skip_blanks(const unsigned char *p, const unsigned char *e)
{
	/* the blank after ':' or ',' of "a": 1, "b" is one space, or none in
	 * compact text: step over it without a branch, which the mix of the two
	 * would make hard to predict */
	if (p < e)
		p += *p == ' ';
	while (p < e && jv_is_blank[*p]) {
		p++;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
		while (e - p >= 8) {
			uint64_t not_space = load8(p) ^ (ONES * ' ');
			if (not_space) {
				p += __builtin_ctzll(not_space) >> 3;
				break;
			}
			p += 8;
		}
#endif
	}
	return p;
}

/* A multi-byte UTF-8 sequence whose lead byte is at P (>= 0x80), judged by
 * RFC 3629's table, the rule jcheck applies (yajl's own is looser).  JV_OK
 * with *PP past it, JV_BAD with *PP at the wrong byte, JV_SHORT when E comes
 * first. */
static inline int jv_utf8_sequence(const unsigned char **pp, const unsigned char *e)
{
	const unsigned char *p = *pp;
	unsigned char lead = *p, lo = 0x80, hi = 0xbf;
	int need;
	if (lead >= 0xc2 && lead <= 0xdf)
		need = 1;
	else if (lead >= 0xe0 && lead <= 0xef)
		need = 2;
	else if (lead >= 0xf0 && lead <= 0xf4)
		need = 3;
	else
		return JV_BAD; /* a stray continuation byte, C0/C1 (overlong), F5..FF */
	if (lead == 0xe0)
		lo = 0xa0; /* overlong three-byte form */
	else if (lead == 0xed)
		hi = 0x9f; /* UTF-16 surrogates D800..DFFF */
	else if (lead == 0xf0)
		lo = 0x90; /* overlong four-byte form */
	else if (lead == 0xf4)
		hi = 0x8f; /* beyond U+10FFFF */
	p++;
	while (need--) {
		if (p == e) {
			*pp = p;
			return JV_SHORT;
		}
		if (*p < lo || *p > hi) {
			*pp = p;
			return JV_BAD;
		}
		lo = 0x80;
		hi = 0xbf;
		p++;
	}
	*pp = p;
	return JV_OK;
}

/* A string body from *PP (just after the opening quote): JV_OK with *PP past
 * the closing quote, else JV_BAD or JV_SHORT with *PP at the byte concerned.
 * *ESC is set when the body holds an escape (the replay then decodes it;
 * the validator's copy drops the store). */
static inline int jv_string_body(const unsigned char **pp, const unsigned char *e, int *esc)
{
	const unsigned char *p = *pp;
	for (;;) {
		unsigned char c;
		p = cm_strskip_plain(p, e);
		if (p == e)
			goto short_;
		c = *p;
		if (c == '"') {
			*pp = p + 1;
			return JV_OK;
		}
		if (c == '\\') {
			*esc = 1;
			if (e - p < 2) {
				p = e;
				goto short_;
			}
			if (jv_is_short_escape[p[1]]) {
				p += 2;
				continue;
			}
			if (p[1] != 'u') {
				p++;
				goto bad;
			}
			p += 2;
			for (int k = 0; k < 4; k++, p++) { /* any four: lone surrogates too */
				if (p == e)
					goto short_;
				if (!jv_is_hex[*p])
					goto bad;
			}
			continue;
		}
		if (c < 0x20)
			goto bad; /* a raw control byte */
		{
			int r = jv_utf8_sequence(&p, e);
			if (r != JV_OK) {
				*pp = p;
				return r;
			}
		}
	}
short_:
	*pp = e;
	return JV_SHORT;
bad:
	*pp = p;
	return JV_BAD;
}

/* jv_string_body with its common case inline: plain bytes up to the closing
 * quote (a member name, most values), found without a call, whose entry
 * and exit cost as much as the search of a short key. */
static inline __attribute__((always_inline)) int jv_string_token(const unsigned char **pp, const unsigned char *e,
							       int *esc)
{
	const unsigned char *p = cm_strskip_plain(*pp, e);
	if (p < e && *p == '"') {
		*pp = p + 1;
		return JV_OK;
	}
	*pp = p; /* the rest as jv_string_body reads it, from the byte that stopped the run */
	return jv_string_body(pp, e, esc);
}

/* A number from *PP (at '-' or a digit), yajl's grammar.  JV_OK with *PP
 * past it, also when it runs to E (the caller decides whether E ends it). */
static inline int jv_number(const unsigned char **pp, const unsigned char *e)
{
	const unsigned char *p = *pp;
	if (*p == '-') {
		p++;
		if (p == e)
			goto short_;
	}
	if (*p == '0')
		p++;
	else if (jv_is_digit(*p))
		p = jv_skip_digits(p + 1, e);
	else
		goto bad; /* "-" without a digit */
	if (p < e && *p == '.') {
		p++;
		if (p == e)
			goto short_;
		if (!jv_is_digit(*p))
			goto bad;
		p = jv_skip_digits(p + 1, e);
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p == e)
			goto short_;
		if (!jv_is_digit(*p))
			goto bad;
		p = jv_skip_digits(p + 1, e);
	}
	*pp = p;
	return JV_OK;
short_:
	*pp = e;
	return JV_SHORT;
bad:
	*pp = p;
	return JV_BAD;
}

/* The digits from P on (up to E), their value folded into *W (W * 10 + d
 * each; it wraps past 19 digits, when it is not used): returns the first
 * byte that is not one.  Eight at a time, as jv_skip_digits steps over them
 * (jv_number_iv and jv_number_dec read their digits here). */
static inline const unsigned char *jv_digits_value(const unsigned char *p, const unsigned char *e, uint64_t *wp)
{
	uint64_t w = *wp;
#if JV_DIGIT_MASK
	while (e - p >= 8) {
		static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
		uint64_t x = load8(p), t = jv_nondigits(x);
		unsigned k;
		if (!t) {
			w = w * 100000000u + cm_eight_digits_value(x);
			p += 8;
			continue;
		}
		k = (unsigned)__builtin_ctzll(t) >> 3;
		if (k) {
			x = (x << (64 - 8 * k)) | (UINT64_C(0x3030303030303030) >> (8 * k));
			w = w * pow10[k] + cm_eight_digits_value(x);
			p += k;
		}
		*wp = w;
		return p;
	}
#else
	while (e - p >= 8 && cm_eight_digits(load8(p))) {
		w = w * 100000000u + cm_eight_digits_value(load8(p));
		p += 8;
	}
#endif
	while (p < e && jv_is_digit(*p))
		w = w * 10 + (uint64_t)(*p++ - '0');
	*wp = w;
	return p;
}

/* jv_number() for the builder, which also wants the value of an integer
 * literal: the digits of the integer part are read as they are checked
 * (eight at a time, as jv_skip_digits steps over them).  *HAS 1 and *IV its
 * value when the number is -?DIGITS of at most 19 digits that fits an
 * int64 (cm_py_int_literal's texts, the same value), else 0. */
static inline int jv_number_iv(const unsigned char **pp, const unsigned char *e, int64_t *iv, int *has)
{
	const unsigned char *p = *pp, *d;
	int neg = 0;
	uint64_t w;
	*has = 0;
	if (*p == '-') {
		neg = 1;
		p++;
		if (p == e) {
			*pp = e;
			return JV_SHORT;
		}
	}
	d = p;
	if (*p == '0') {
		w = 0;
		p++;
	} else if (jv_is_digit(*p)) {
		w = (uint64_t)(*p++ - '0');
		p = jv_digits_value(p, e, &w); /* past 19 digits W wraps, and is not used */
	} else {
		*pp = p;
		return JV_BAD; /* "-" without a digit */
	}
	if (p < e && (*p == '.' || *p == 'e' || *p == 'E')) {
		*pp = d; /* the rest as jv_number() reads it, from the digits on */
		return jv_number(pp, e);
	}
	if (p - d <= 19 && w <= (uint64_t)INT64_MAX + (uint64_t)neg) {
		*iv = neg ? (int64_t)(0 - w) : (int64_t)w;
		*has = 1;
	}
	*pp = p;
	return JV_OK;
}

/* The literal WORD (LEN bytes) at *PP, whose first byte is known to match. */
static inline int jv_literal(const unsigned char **pp, const unsigned char *e, const char *word, size_t len)
{
	const unsigned char *p = *pp;
	if ((size_t)(e - p) >= len && !memcmp(p, word, len)) {
		*pp = p + len;
		return JV_OK;
	}
	for (size_t k = 0; p + k < e; k++) /* find the first wrong byte, or run out */
		if (p[k] != (unsigned char)word[k]) {
			*pp = p + k;
			return JV_BAD;
		}
	*pp = e;
	return JV_SHORT;
}

/* What the replay with numbers read (cm_jvalid_replay_num) tells of a
 * number besides its text: the value of all its digits as one integer (the
 * integer part's, then the fraction's), meaningful when there are 19 of
 * them or fewer; how many each part has; its sign; whether it has an
 * exponent.  A reader that wants -?DIGITS(.DIGITS)? (a Chrome trace's
 * times, ids) takes it from here instead of reading the digits again. */
struct cm_jnum {
	uint64_t m;
	unsigned ni, nf;
	int neg, exp;
};

/* jv_number, the same grammar and answers (*PP likewise), reading the
 * digits' value as it checks them into *NUM. */
static inline int jv_number_dec(const unsigned char **pp, const unsigned char *e, struct cm_jnum *num)
{
	const unsigned char *p = *pp, *d;
	uint64_t w = 0;
	num->neg = 0;
	num->exp = 0;
	num->nf = 0;
	if (*p == '-') {
		num->neg = 1;
		p++;
		if (p == e)
			goto short_;
	}
	d = p;
	if (*p == '0')
		p++;
	else if (jv_is_digit(*p))
		p = jv_digits_value(p, e, &w);
	else
		goto bad; /* "-" without a digit */
	num->ni = (unsigned)(p - d);
	if (p < e && *p == '.') {
		p++;
		if (p == e)
			goto short_;
		if (!jv_is_digit(*p))
			goto bad;
		d = p;
		p = jv_digits_value(p, e, &w);
		num->nf = (unsigned)(p - d);
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		num->exp = 1;
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p == e)
			goto short_;
		if (!jv_is_digit(*p))
			goto bad;
		p = jv_skip_digits(p + 1, e);
	}
	num->m = w;
	*pp = p;
	return JV_OK;
short_:
	*pp = e;
	return JV_SHORT;
bad:
	*pp = p;
	return JV_BAD;
}

/* Whether P[0] is A and P[1] is B (both bytes there): one 16-bit compare,
 * for the ": " and ", " of every member. */
static inline int jv_two(const unsigned char *p, unsigned char a, unsigned char b)
{
	uint16_t x, y;
	const unsigned char ab[2] = {a, b};
	memcpy(&x, p, 2);
	memcpy(&y, ab, 2);
	return x == y;
}

#define JV_STACK_WORDS ((CM_JSON_MAX_DEPTH + 63) / 64)

/* The copies of the scanner (jv_scan_core's KIND, a constant at each call):
 * the validator, the replay through callbacks, the tree builder, and the
 * replay whose numbers go with their digits read (cm_jvalid_replay_num). */
enum { JV_KCHECK, JV_KREPLAY, JV_KBUILD, JV_KREPLAYN };

/* What the replay (cm_jvalid_replay) needs besides the text: the callbacks,
 * how deep to report, and where escaped strings are decoded; or, for the
 * builder (cm_jvalid_build), the tree being built. */
struct jv_emit {
	const yajl_callbacks *cb;
	void *ctx;
	int maxdepth;
	cm_arena *arena;
	cm_jbuild *tree;
	struct jv_nodes *nodes; /* the builder's nodes (jv_build_attach) */
	/* JV_KREPLAYN: numbers go here, not to cb->yajl_number */
	int (*number_dec)(void *ctx, const char *s, size_t n, const struct cm_jnum *num);
};

/* The builder's nodes, taken from the arena JV_NODE_RUN at a time: an event's
 * dozen members were a call into the arena each. */
#define JV_NODE_RUN 16
struct jv_nodes {
	cm_jval *next, *end;
};

/* cm_jbuild_attach, with the node from the run (cm_jbuild_link). */
static inline cm_jval *jv_build_attach(const struct jv_emit *em, int type)
{
	cm_jbuild *b = em->tree;
	struct jv_nodes *ns = em->nodes;
	if (ns->next == ns->end) {
		ns->next = cm_arena_alloc(b->arena, JV_NODE_RUN * sizeof(cm_jval));
		ns->end = ns->next + JV_NODE_RUN;
	}
	return cm_jbuild_link(b, ns->next++, type);
}

/* The builder's scalar (cm_jbuild_scalar), not a number: jv_build_number. */
static inline void jv_build_scalar(const struct jv_emit *em, int type, const unsigned char *s, size_t n)
{
	cm_jval *v = jv_build_attach(em, type);
	if (type == CM_J_STR) {
		v->s = em->tree->borrow ? (const char *)s : cm_arena_dup(em->tree->arena, (const char *)s, n);
		v->len = (uint32_t)n;
	}
}

/* The builder's number: with the builder's borrow, its text is not copied
 * either (the readers of the window's trees take its length); an integer
 * literal gets its value, read by jv_number_iv while its digits were at hand:
 * the window's ids and nanosecond times are such numbers, and the digest
 * takes them from the node instead of reading the digits again
 * (cm_py_int_of_number was 5% of a merge's instructions). */
static inline void jv_build_number(const struct jv_emit *em, const unsigned char *s, size_t n, int64_t iv, int has_iv)
{
	cm_jval *v = jv_build_attach(em, CM_J_NUM);
	v->s = em->tree->borrow ? (const char *)s : cm_arena_dup(em->tree->arena, (const char *)s, n);
	v->len = (uint32_t)n;
	v->iv = iv;
	v->has_iv = (unsigned char)has_iv;
}

/* The builder's open (cm_jbuild_open; the depth is known to be in range). */
static inline void jv_build_open(const struct jv_emit *em, int type)
{
	cm_jbuild *b = em->tree;
	cm_jval *v = jv_build_attach(em, type);
	b->stack[b->depth] = v;
	b->tail[b->depth] = NULL;
	b->depth++;
}

/* A string token of the replay: Q is its opening quote, E just past its
 * closing one, ESC whether it holds a backslash.  Its text, decoded into
 * the arena when it does (Python's decoding, as cm_jval_parse_py does it,
 * the rule jsax.c followed), in *LEN bytes. */
static const unsigned char *jv_emit_string(const struct jv_emit *em, const unsigned char *q, const unsigned char *e,
					int esc, size_t *len)
{
	const cm_jval *v;
	if (!esc) {
		*len = (size_t)(e - q - 2);
		return q + 1;
	}
	v = cm_jval_parse_py(em->arena, (const char *)q, (size_t)(e - q));
	*len = v ? v->len : 0;
	return (const unsigned char *)(v ? v->s : "");
}

/* The replay: report to EM's callbacks when the token lies within its
 * depth (D: the containers open around it); a callback's 0 stops the scan.
 * The builder: add the token to EM's tree with BUILD, inline. */
#define JV_EMIT(d, call, build)                                          \
	do {                                                          \
		if ((kind == JV_KREPLAY || kind == JV_KREPLAYN) && (d) <= em->maxdepth && !(call)) \
			goto stopped;                                 \
		if (kind == JV_KBUILD)                                  \
			build;                                        \
	} while (0)

/* The scanner every entry point shares: one value from S + *AT (at its
 * first byte, no blanks before it).  Returns JV_OK with *AT just past the
 * value, JV_BAD with *AT at the first wrong byte, JV_SHORT with *AT = N.
 * KIND JV_KREPLAY also reports each token to EM's callbacks as it is judged
 * (JV_BAD when one returns 0), JV_KBUILD adds it to EM's tree; KIND is a
 * constant at each call, so the compiler keeps only that copy's reports
 * (none for the validator's, JV_KCHECK). */
static inline __attribute__((always_inline)) int jv_scan_core(const unsigned char *s, size_t n, int depth0,
							    size_t *at, const struct jv_emit *em, int kind)
{
	const unsigned char *p = s + *at, *e = s + n, *tok;
	/* bit D of in_object: the container at local depth D+1 is an object */
	uint64_t in_object[JV_STACK_WORDS];
	int depth = 0; /* containers of this value open at P */
	int room = CM_JSON_MAX_DEPTH - depth0; /* how deep this value may nest */
	int r, esc;
	size_t len;

value: /* P is at the first byte of a value, blanks skipped */
	if (p == e)
		goto short_;
	tok = p;
	switch (jv_value_class[*p]) {
	case JV_VSTR:
		p++;
		esc = 0;
		r = jv_string_token(&p, e, &esc);
		if (r != JV_OK)
			goto fail;
		JV_EMIT(depth, (tok = jv_emit_string(em, tok, p, esc, &len), em->cb->yajl_string(em->ctx, tok, len)),
		     (tok = jv_emit_string(em, tok, p, esc, &len), jv_build_scalar(em, CM_J_STR, tok, len)));
		goto after_value;
	case JV_VNUM:
		if (kind == JV_KBUILD) { /* the value of an integer literal read as its digits are checked */
			int64_t iv = 0;
			int has_iv;
			r = jv_number_iv(&p, e, &iv, &has_iv);
			if (r != JV_OK)
				goto fail;
			jv_build_number(em, tok, (size_t)(p - tok), iv, has_iv);
			goto after_value;
		}
		if (kind == JV_KREPLAYN) { /* the digits read as they are checked */
			struct cm_jnum num;
			r = jv_number_dec(&p, e, &num);
			if (r != JV_OK)
				goto fail;
			if (depth <= em->maxdepth && !em->number_dec(em->ctx, (const char *)tok, (size_t)(p - tok), &num))
				goto stopped;
			goto after_value;
		}
		r = jv_number(&p, e);
		if (r != JV_OK)
			goto fail;
		JV_EMIT(depth, em->cb->yajl_number(em->ctx, (const char *)tok, (size_t)(p - tok)), (void)0);
		goto after_value;
	case JV_VTRUE:
		r = jv_literal(&p, e, "true", 4);
		if (r != JV_OK)
			goto fail;
		JV_EMIT(depth, em->cb->yajl_boolean(em->ctx, 1), jv_build_scalar(em, CM_J_TRUE, NULL, 0));
		goto after_value;
	case JV_VFALSE:
		r = jv_literal(&p, e, "false", 5);
		if (r != JV_OK)
			goto fail;
		JV_EMIT(depth, em->cb->yajl_boolean(em->ctx, 0), jv_build_scalar(em, CM_J_FALSE, NULL, 0));
		goto after_value;
	case JV_VNULL:
		r = jv_literal(&p, e, "null", 4);
		if (r != JV_OK)
			goto fail;
		JV_EMIT(depth, em->cb->yajl_null(em->ctx), jv_build_scalar(em, CM_J_NULL, NULL, 0));
		goto after_value;
	case JV_VOBJ:
		if (depth >= room)
			goto bad; /* jcheck's depth limit, at the bracket, as it reports */
		/* (the builder's depth: under CM_JBUILD_MAXDEPTH, as ROOM keeps it) */
		JV_EMIT(depth, em->cb->yajl_start_map(em->ctx), jv_build_open(em, CM_J_OBJ));
		in_object[depth >> 6] |= UINT64_C(1) << (depth & 63);
		depth++;
		p++;
		p = jv_skip_blanks(p, e);
		if (p == e)
			goto short_;
		if (*p == '}') {
			p++;
			depth--;
			JV_EMIT(depth, em->cb->yajl_end_map(em->ctx), cm_jbuild_close(em->tree));
			goto after_value;
		}
		goto key;
	case JV_VARR:
		if (depth >= room)
			goto bad;
		JV_EMIT(depth, em->cb->yajl_start_array(em->ctx), jv_build_open(em, CM_J_ARR));
		in_object[depth >> 6] &= ~(UINT64_C(1) << (depth & 63));
		depth++;
		p++;
		p = jv_skip_blanks(p, e);
		if (p == e)
			goto short_;
		if (*p == ']') {
			p++;
			depth--;
			JV_EMIT(depth, em->cb->yajl_end_array(em->ctx), cm_jbuild_close(em->tree));
			goto after_value;
		}
		goto value;
	default:
		goto bad;
	}

key: /* P is at the byte where an object's member name must start */
	if (*p != '"')
		goto bad;
	tok = p;
	p++;
	esc = 0;
	r = jv_string_token(&p, e, &esc);
	if (r != JV_OK)
		goto fail;
	JV_EMIT(depth, (tok = jv_emit_string(em, tok, p, esc, &len), em->cb->yajl_map_key(em->ctx, tok, len)),
	     (tok = jv_emit_string(em, tok, p, esc, &len), cm_jbuild_key(em->tree, (const char *)tok, len)));
	/* "key": value, as the window and Kineto write every member: the
	 * colon and its one space stepped over at once (what the general
	 * path below decides for them), where two jv_skip_blanks cost a tenth of
	 * the window's parse */
	if (e - p >= 3 && jv_two(p, ':', ' ') && !jv_is_blank[p[2]]) {
		p += 2;
		goto value;
	}
	p = jv_skip_blanks(p, e);
	if (p == e)
		goto short_;
	if (*p != ':')
		goto bad;
	p++;
	p = jv_skip_blanks(p, e);
	goto value;

after_value: /* P is just past a value */
	if (depth == 0) {
		*at = (size_t)(p - s);
		return JV_OK;
	}
	/* ", " then the next member or element, likewise */
	if (e - p >= 3 && jv_two(p, ',', ' ') && !jv_is_blank[p[2]]) {
		p += 2;
		if ((in_object[(depth - 1) >> 6] >> ((depth - 1) & 63)) & 1)
			goto key;
		goto value;
	}
	p = jv_skip_blanks(p, e);
	if (p == e)
		goto short_;
	{
		int object = (int)(in_object[(depth - 1) >> 6] >> ((depth - 1) & 63)) & 1;
		if (*p == ',') {
			p++;
			p = jv_skip_blanks(p, e);
			if (p == e)
				goto short_;
			if (object)
				goto key;
			goto value;
		}
		if (*p == (object ? '}' : ']')) {
			p++;
			depth--;
			JV_EMIT(depth, object ? em->cb->yajl_end_map(em->ctx) : em->cb->yajl_end_array(em->ctx),
			     cm_jbuild_close(em->tree));
			goto after_value;
		}
	}
	goto bad;

fail: /* a part scanner said R (not JV_OK) and left P at the byte concerned */
	if (r == JV_SHORT)
		goto short_;
bad:
	*at = (size_t)(p - s);
	return JV_BAD;
short_:
	*at = n;
	return JV_SHORT;
stopped: /* a callback said stop: the text is not judged further */
	*at = (size_t)(p - s);
	return JV_BAD;
}

#undef JV_EMIT

/* The replay's and the builder's entry: S[0..N) as one value with blanks
 * around it, through jv_scan_core's copy KIND (a constant at each call). */
static inline __attribute__((always_inline)) int jv_whole_value(const char *s, size_t n, int depth0,
							      const struct jv_emit *em, int kind)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t at = 0;
	while (at < n && jv_is_blank[u[at]])
		at++;
	if (jv_scan_core(u, n, depth0, &at, em, kind) != JV_OK)
		return 0;
	while (at < n && jv_is_blank[u[at]])
		at++;
	return at == n;
}


/* cm_jvalid_replay, compiled where it is called: CB should be the address
 * of a static const table of the caller's file, so that its callbacks are
 * called directly (and may be inlined into the scanner), and MAXDEPTH a
 * constant.  The same answers and callbacks as cm_jvalid_replay. */
static inline __attribute__((always_inline)) int cm_jvalid_replay_with(const char *s, size_t n, int depth0,
									int maxdepth, const yajl_callbacks *cb,
									void *ctx, cm_arena *arena)
{
	struct jv_emit em = {cb, ctx, maxdepth, arena, NULL, NULL, NULL};
	return jv_whole_value(s, n, depth0, &em, JV_KREPLAY);
}

/* cm_jvalid_replay_with, but each number goes to NUMBER_DEC (CB's
 * yajl_number is not used) with what jv_number_dec read of its digits, as
 * its validation reads them: a reader of numbers need not read them again.
 * The same answers, and the same callbacks otherwise. */
static inline __attribute__((always_inline)) int
cm_jvalid_replay_num(const char *s, size_t n, int depth0, int maxdepth, const yajl_callbacks *cb,
		     int (*number_dec)(void *ctx, const char *s, size_t n, const struct cm_jnum *num), void *ctx,
		     cm_arena *arena)
{
	struct jv_emit em = {cb, ctx, maxdepth, arena, NULL, NULL, number_dec};
	return jv_whole_value(s, n, depth0, &em, JV_KREPLAYN);
}

#endif
