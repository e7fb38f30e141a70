/* jval.c - in-memory JSON values: arena, SAX builder, and a Python-compatible
 * parser for JSON held in strings (their writers: jvalout.c). */
#include "config.h"
#include "json/jval.h"
#include "base/diag.h"
#include "base/hmap.h"
#include "base/pyval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ arena */

/* 64 KiB blocks: a window event is a few hundred bytes; rare large ones get a
 * block of their own. */
#define ARENA_BLOCK (64u * 1024u)

struct block {
	struct block *next;
	size_t cap, used;
	unsigned char data[];
};

struct cm_arena {
	struct block *head; /* current block; older ones follow */
};

cm_arena *cm_arena_new(void)
{
	return cm_xcalloc(1, sizeof(cm_arena));
}

void *cm_arena_alloc(cm_arena *a, size_t n)
{
	struct block *b = a->head;
	n = (n + 7) & ~(size_t)7;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		b = cm_xmalloc(sizeof *b + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

void cm_arena_reset(cm_arena *a)
{
	/* keep one standard block, free the rest */
	struct block *b = a->head, *keep = NULL;
	if (b && !b->next && b->cap == ARENA_BLOCK) { /* the rule: one event fits a block */
		b->used = 0;
		return;
	}
	while (b) {
		struct block *next = b->next;
		if (!keep && b->cap == ARENA_BLOCK) {
			keep = b;
			keep->used = 0;
		} else {
			free(b);
		}
		b = next;
	}
	if (keep)
		keep->next = NULL;
	a->head = keep;
}

void cm_arena_free(cm_arena *a)
{
	if (!a)
		return;
	while (a->head) {
		struct block *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	free(a);
}

/* ----------------------------------------------------------------- access */

const cm_jval *cm_jval_getn(const cm_jval *o, const char *key, size_t n)
{
	const cm_jval *found = NULL;
	if (!o || o->type != CM_J_OBJ)
		return NULL;
	/* the digest asks a dozen keys of each window event: the length and
	 * the first byte turn nearly every other member away without a call */
	for (const cm_jval *k = o->kids; k; k = k->next)
		if (k->klen == n && (!n || k->key[0] == key[0]) && !memcmp(k->key, key, n))
			found = k;
	return found;
}

static int same_key(const cm_jval *a, const cm_jval *b)
{
	return a->klen == b->klen && !memcmp(a->key, b->key, a->klen);
}

const cm_jval **cm_jval_dict_members(const cm_jval *o, size_t *n)
{
	const cm_jval **out;
	cm_hmap *first; /* 64-bit FNV-1a of a key -> 1 + its index in OUT */
	size_t m = 0, cnt = 0;

	*n = 0;
	if (!o || o->type != CM_J_OBJ)
		return cm_xmalloc(1);
	for (const cm_jval *k = o->kids; k; k = k->next)
		cnt++;
	out = cm_xmalloc(cnt ? cnt * sizeof *out : 1);
	first = cm_hmap_new(8, sizeof(size_t));
	for (const cm_jval *k = o->kids; k; k = k->next) {
		uint64_t h = 0xcbf29ce484222325u;
		size_t *ix, j;
		int created;
		for (uint32_t i = 0; i < k->klen; i++)
			h = (h ^ (unsigned char)k->key[i]) * 0x100000001b3u;
		ix = cm_hmap_put(first, &h, &created);
		if (created) {
			*ix = m + 1;
			out[m++] = k;
			continue;
		}
		if (same_key(out[*ix - 1], k)) {
			out[*ix - 1] = k;
			continue;
		}
		/* two keys with one hash: look the key up the slow way */
		for (j = 0; j < m && !same_key(out[j], k); j++)
			;
		out[j] = k;
		m += j == m;
	}
	cm_hmap_free(first);
	*n = m;
	return out;
}

/* ---------------------------------------------------------------- builder */

static int jb_null(void *b) { return !cm_jbuild_scalar(b, CM_J_NULL, NULL, 0); }
static int jb_bool(void *b, int t) { return !cm_jbuild_scalar(b, t ? CM_J_TRUE : CM_J_FALSE, NULL, 0); }
static int jb_number(void *b, const char *s, size_t n) { return !cm_jbuild_scalar(b, CM_J_NUM, s, n); }
static int jb_string(void *b, const unsigned char *s, size_t n)
{
	return !cm_jbuild_scalar(b, CM_J_STR, (const char *)s, n);
}
static int jb_start_map(void *b) { return !cm_jbuild_open(b, CM_J_OBJ); }
static int jb_start_array(void *b) { return !cm_jbuild_open(b, CM_J_ARR); }
static int jb_key(void *b, const unsigned char *s, size_t n)
{
	cm_jbuild_key(b, (const char *)s, n);
	return 1;
}
static int jb_end(void *b)
{
	cm_jbuild_close(b);
	return 1;
}

const yajl_callbacks cm_jbuild_callbacks = {
	jb_null, jb_bool, NULL, NULL, jb_number, jb_string,
	jb_start_map, jb_key, jb_end, jb_start_array, jb_end,
};

/* ------------------------------------------------- Python json.loads parser */

struct pyparse {
	cm_arena *a;
	const char *s;
	size_t n, i;
	int depth;
};

static void py_ws(struct pyparse *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
			       p->s[p->i] == '\r'))
		p->i++;
}

static cm_jval *py_node(struct pyparse *p, int type)
{
	cm_jval *v = cm_arena_alloc(p->a, sizeof *v);
	memset(v, 0, sizeof *v);
	v->type = (unsigned char)type;
	return v;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at s[i..i+4) as a code unit, or -1. */
static long hex4(struct pyparse *p, size_t i)
{
	long u = 0;
	if (i + 4 > p->n)
		return -1;
	for (size_t k = 0; k < 4; k++) {
		int h = hexval(p->s[i + k]);
		if (h < 0)
			return -1;
		u = u * 16 + h;
	}
	return u;
}

/* Append code point CP as UTF-8 (surrogates as 3-byte WTF-8). */
static void put_utf8(cm_buf *b, unsigned long cp)
{
	char u[4];
	if (cp < 0x80) {
		cm_buf_putc(b, (char)cp);
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		cm_buf_put(b, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		cm_buf_put(b, u, 3);
	} else {
		u[0] = (char)(0xF0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		cm_buf_put(b, u, 4);
	}
}

/* A string starting after its opening quote; the text goes to out and outlen. */
static int py_string(struct pyparse *p, const char **out, uint32_t *outlen)
{
	cm_buf b = {0};
	size_t start = p->i, k = p->i;
	/* the common case: no escapes, so the text is the bytes themselves */
	while (k < p->n && p->s[k] != '"' && p->s[k] != '\\' && (unsigned char)p->s[k] >= 0x20)
		k++;
	if (k < p->n && p->s[k] == '"') {
		*out = p->s + start; /* no copy: the text outlives the value */
		*outlen = (uint32_t)(k - start);
		p->i = k + 1;
		return 0;
	}
	for (;;) {
		unsigned char c;
		if (p->i >= p->n)
			goto bad;
		c = (unsigned char)p->s[p->i++];
		if (c == '"')
			break;
		if (c < 0x20)
			goto bad; /* strict: no raw control characters */
		if (c != '\\') {
			cm_buf_putc(&b, (char)c);
			continue;
		}
		if (p->i >= p->n)
			goto bad;
		c = (unsigned char)p->s[p->i++];
		switch (c) {
		case '"': cm_buf_putc(&b, '"'); break;
		case '\\': cm_buf_putc(&b, '\\'); break;
		case '/': cm_buf_putc(&b, '/'); break;
		case 'b': cm_buf_putc(&b, '\b'); break;
		case 'f': cm_buf_putc(&b, '\f'); break;
		case 'n': cm_buf_putc(&b, '\n'); break;
		case 'r': cm_buf_putc(&b, '\r'); break;
		case 't': cm_buf_putc(&b, '\t'); break;
		case 'u': {
			long u = hex4(p, p->i);
			if (u < 0)
				goto bad;
			p->i += 4;
			if (u >= 0xD800 && u <= 0xDBFF && p->i + 1 < p->n && p->s[p->i] == '\\' &&
			    p->s[p->i + 1] == 'u') {
				long lo = hex4(p, p->i + 2);
				if (lo >= 0xDC00 && lo <= 0xDFFF) {
					u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
					p->i += 6;
				}
			}
			put_utf8(&b, (unsigned long)u);
			break;
		}
		default:
			goto bad;
		}
	}
	*out = cm_arena_dup(p->a, b.p ? b.p : "", b.len);
	*outlen = (uint32_t)b.len;
	cm_buf_free(&b);
	return 0;
bad:
	cm_buf_free(&b);
	return -1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static cm_jval *py_value(struct pyparse *p);

/* The remainder of an array or object after its opening bracket. */
static cm_jval *py_container(struct pyparse *p, int type)
{
	cm_jval *v = py_node(p, type), *tail = NULL;
	char close = type == CM_J_ARR ? ']' : '}';
	if (++p->depth > CM_JSON_MAX_DEPTH)
		return NULL;
	py_ws(p);
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
			if (py_string(p, &key, &klen) < 0)
				return NULL;
			py_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return NULL;
			p->i++;
			py_ws(p);
		}
		kid = py_value(p);
		if (!kid)
			return NULL;
		kid->key = key;
		kid->klen = klen;
		cm_jval_append(v, &tail, kid);
		py_ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			py_ws(p);
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

/* A literal WORD at the cursor. */
static int py_word(struct pyparse *p, const char *word)
{
	size_t n = strlen(word);
	if (p->n - p->i >= n && !memcmp(p->s + p->i, word, n)) {
		p->i += n;
		return 1;
	}
	return 0;
}

static cm_jval *py_value(struct pyparse *p)
{
	cm_jval *v;
	size_t start = p->i;
	char c;
	if (p->i >= p->n)
		return NULL;
	c = p->s[p->i];
	if (c == '"') {
		v = py_node(p, CM_J_STR);
		p->i++;
		return py_string(p, &v->s, &v->len) < 0 ? NULL : v;
	}
	if (c == '{' || c == '[') {
		p->i++;
		return py_container(p, c == '{' ? CM_J_OBJ : CM_J_ARR);
	}
	if (py_word(p, "null"))
		return py_node(p, CM_J_NULL);
	if (py_word(p, "true"))
		return py_node(p, CM_J_TRUE);
	if (py_word(p, "false"))
		return py_node(p, CM_J_FALSE);
	if (py_word(p, "NaN") || py_word(p, "Infinity") || py_word(p, "-Infinity")) {
		v = py_node(p, CM_J_NUM);
		v->s = cm_arena_dup(p->a, p->s + start, p->i - start);
		v->len = (uint32_t)(p->i - start);
		return v;
	}
	/* Python json's number pattern: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)? */
	if (c == '-')
		p->i++;
	if (p->i < p->n && p->s[p->i] == '0')
		p->i++;
	else if (p->i < p->n && is_digit(p->s[p->i]))
		while (p->i < p->n && is_digit(p->s[p->i]))
			p->i++;
	else
		return NULL;
	if (p->i + 1 < p->n && p->s[p->i] == '.' && is_digit(p->s[p->i + 1])) {
		p->i++;
		while (p->i < p->n && is_digit(p->s[p->i]))
			p->i++;
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		size_t save = p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		if (p->i < p->n && is_digit(p->s[p->i]))
			while (p->i < p->n && is_digit(p->s[p->i]))
				p->i++;
		else
			p->i = save; /* not an exponent: Python leaves it as extra data */
	}
	v = py_node(p, CM_J_NUM);
	v->s = cm_arena_dup(p->a, p->s + start, p->i - start);
	v->len = (uint32_t)(p->i - start);
	return v;
}

cm_jval *cm_jval_parse_prefix(cm_arena *a, const char *s, size_t n, size_t *used)
{
	struct pyparse p = {a, s, n, 0, 0};
	cm_jval *v = py_value(&p);
	/* a value cut by the end of the text is not a value (a number might
	 * continue: require one more byte after it) */
	if (!v || p.i >= n)
		return NULL;
	*used = p.i;
	return v;
}

cm_jval *cm_jval_parse_py(cm_arena *a, const char *s, size_t n)
{
	struct pyparse p = {a, s, n, 0, 0};
	cm_jval *v;
	py_ws(&p);
	v = py_value(&p);
	if (!v)
		return NULL;
	py_ws(&p);
	return p.i == p.n ? v : NULL;
}
