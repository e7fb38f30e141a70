/* pfbody.c - an event's TrackEvent body, as a worker encodes it into e->te
 * (cm_pf_body): its category and name interned, its args as debug
 * annotations (pfevent.c's head gives the mapping), each string new to
 * the batch's tables written into e->interned, and the tables started
 * over when they hold too much (cm_pf_maybe_clear).  Apart from
 * pfevent.c's packets because this is the per-event hot path of a
 * .pftrace merge: intern, intern_fixed and put_int_iid stay inline in
 * cm_pf_body here (BENCHMARKS.md "pfrender19", "pfcpu16"). */
#include "config.h"
#include "pftrace/pfevent.h"

#include <stdlib.h>
#include <string.h>

/* A new string S[0..N) of a table (an InternedData field FIELD): its iid,
 * and its entry in e->interned, for the packet being made. */
static __attribute__((noinline)) uint64_t intern_new(cm_pfev *e, uint32_t field, const char *s, size_t n)
{
	uint64_t iid = e->next_iid++;
	size_t m;
	if (cm_pf_lone_surrogate(s, n)) /* (new strings only: the event refuses, so no other meets it) */
		e->lone = 1;
	m = cm_pb_open(&e->interned, field);
	cm_pb_uint(&e->interned, 1, iid);
	cm_pb_bytes(&e->interned, 2, s, n);
	cm_pb_close(&e->interned, m);
	return iid;
}

/* The iid of S[0..N) in table T (an InternedData field FIELD), interning it
 * (intern_new) when new: inline, as most find theirs in T's cache. */
static inline __attribute__((always_inline)) uint64_t intern(cm_pfev *e, cm_strtab *t, uint32_t field, const char *s, size_t n)
{
	uint64_t iid = cm_strtab_get(t, s, n, e->next_iid);
	return iid ? iid : intern_new(e, field, s, n);
}

/* intern's for the string V of table T (FIELD) whose memo by pointer is
 * REFS: V's iid found there when V's bytes stay (sfix, in a tree given:
 * e->lit), none of them read (an element's category and name looked up
 * in the tables' cache were 10 M instructions of the 50k pair's .pftrace
 * merge: BENCHMARKS.md "pfrender19"). */
static inline __attribute__((always_inline)) uint64_t intern_fixed(cm_pfev *e, struct cm_pfkeyref *refs, cm_strtab *t,
								  uint32_t field, const cm_jval *v)
{
	struct cm_pfkeyref *r;
	uint64_t iid;
	if (!e->lit || !v->sfix)
		return intern(e, t, field, v->s, v->len);
	r = cm_pf_ref(refs, v->s);
	if (r->key == v->s && r->klen == v->len && r->gen == e->keygen)
		return r->iid;
	iid = intern(e, t, field, v->s, v->len);
	r->key = v->s, r->klen = v->len, r->gen = e->keygen, r->iid = iid;
	return iid;
}

/* (pfevent.h) */
void cm_pf_tables_clear(cm_pfev *e)
{
	cm_strtab_clear(&e->cats);
	cm_strtab_clear(&e->names);
	cm_strtab_clear(&e->keys);
	cm_pf_keys_cleared(e);
	e->next_iid = 1;
	e->cleared = 1;
}

/* Between packets: start the tables over when they hold too much. */
void cm_pf_maybe_clear(cm_pfev *e)
{
	if (cm_strtab_bytes(&e->cats) + cm_strtab_bytes(&e->names) + cm_strtab_bytes(&e->keys) >= e->intern_max)
		cm_pf_tables_clear(e);
}

/* ---- args ---- */

/* The double of the number text V (NaN, Infinity as Python's json reads them). */
double cm_pf_number_of(const cm_jval *v)
{
	char tmp[64], *t = tmp;
	double d;
	if (v->len >= sizeof tmp)
		t = cm_xmalloc(v->len + 1);
	memcpy(t, v->s, v->len);
	t[v->len] = 0;
	d = strtod(t, NULL); /* strtod reads "NaN", "Infinity" and "-Infinity" */
	if (t != tmp)
		free(t);
	return d;
}

/* 1 when the key K[0..N) holds a '.': a word's test for a key of 16
 * bytes at most (most of them), where a call of memchr cost more. */
static inline int has_dot(const char *k, size_t n)
{
	const uint64_t ones = 0x0101010101010101u, dots = 0x2e2e2e2e2e2e2e2eu;
	uint64_t w0, w1;
	if (n > 16)
		return memchr(k, '.', n) != NULL;
	cm_strtab_words(k, n, &w0, &w1); /* every byte of K, and 0s (no dot) */
	w0 ^= dots, w1 ^= dots;
	return ((((w0 - ones) & ~w0) | ((w1 - ones) & ~w1)) & ones << 7) != 0;
}

/* An integer V under a plain key (no dot) interned as IID, field FIELD
 * (below 16) of what is open in B: most args of a trace, their bytes
 * written at once (the same as put_annotation's: the body takes 22 bytes
 * at most, so its length is one byte, and the tag one). */
static inline __attribute__((always_inline)) void put_int_iid(cm_buf *b, uint32_t field, uint64_t iid, const cm_jval *v)
{
	unsigned char *p;
	size_t n = 2;
	if (b->cap - b->len < 24)
		cm_buf_grow(b, 24);
	p = (unsigned char *)b->p + b->len;
	p[0] = (unsigned char)(field << 3 | CM_PB_LEN);
	p[n++] = DA_NAME_IID << 3 | CM_PB_VARINT;
	n += cm_pb_varint_at(p + n, iid);
	p[n++] = DA_INT << 3 | CM_PB_VARINT;
	n += cm_pb_varint_at(p + n, (uint64_t)v->iv);
	p[1] = (unsigned char)(n - 2);
	b->len += n;
}

/* put_int_iid's for the plain KEY[0..KLEN), interned here. */
static inline __attribute__((always_inline)) void put_int_annotation(cm_pfev *e, cm_buf *b, uint32_t field, const char *key, size_t klen,
				      const cm_jval *v)
{
	put_int_iid(b, field, intern(e, &e->keys, ID_ANNOTATION_NAMES, key, klen), v);
}

/* Append V as a DebugAnnotation, field FIELD of what is open in B, named
 * KEY (NULL: an array element, unnamed).  A null, an empty object or an
 * empty array writes nothing, as Perfetto's JSON import keeps no arg for
 * them.  A key with dots is written as dictionaries nested at them: the
 * trace processor joins nested names with dots, so the arg is the JSON
 * import's "args.a.b" (a dot within one name it would write as "_").
 * Returns 1, having written nothing of it, at a number beyond a double's
 * range (1e400, 400 digits): Perfetto's JSON import keeps the event's args
 * up to it, none from it on, so the caller stops there too (what was
 * opened for it and holds nothing else taken back); 2 the same way where
 * V lies more than PF_ANN_DEPTH levels deep (DEPTH: V's), counting the
 * dots of keys, which nest too (a key of a million dots overflowed the
 * stack); 3 at a string with a lone surrogate, which the caller refuses
 * (cm_pf_lone_surrogate; a key's is found where it is interned); else 0. */
#define PF_ANN_DEPTH 4096
static int put_annotation(cm_pfev *e, cm_buf *b, uint32_t field, const char *key, size_t klen, const cm_jval *v,
			  int depth)
{
	size_t m, at = b->len, body;
	int stop = 0;
	const cm_jval *k;
	const char *dot = key ? memchr(key, '.', klen) : NULL;
	if (v->has_iv == CM_PF_IV_INT && key && !dot && field < 16) {
		put_int_annotation(e, b, field, key, klen, v);
		return 0;
	}
	if (v->type == CM_J_NULL || ((v->type == CM_J_OBJ || v->type == CM_J_ARR) && !v->kids))
		return 0;
	if (depth > PF_ANN_DEPTH)
		return 2;
	if (v->type == CM_J_NUM && beyond_double(v))
		return 1;
	m = cm_pb_open(b, field);
	if (key)
		cm_pb_uint(b, DA_NAME_IID, intern(e, &e->keys, ID_ANNOTATION_NAMES, key, dot ? (size_t)(dot - key) : klen));
	body = b->len;
	if (dot) {
		stop = put_annotation(e, b, DA_DICT, dot + 1, klen - (size_t)(dot + 1 - key), v, depth + 1);
		goto close;
	}
	switch (v->type) {
	case CM_J_FALSE:
	case CM_J_TRUE:
		cm_pb_uint(b, DA_BOOL, v->type == CM_J_TRUE);
		break;
	case CM_J_NUM: {
		cm_int x;
		int64_t x64;
		if (v->has_iv == CM_PF_IV_INT)
			cm_pb_int(b, DA_INT, v->iv);
		else if (small_int(v->s, v->len, &x64))
			cm_pb_int(b, DA_INT, x64);
		else if (is_integer_text(v->s, v->len) && cm_py_int_of_number(v->s, v->len, &x) == 0 &&
		    x >= INT64_MIN && x <= (cm_int)UINT64_MAX) {
			if (x <= INT64_MAX)
				cm_pb_int(b, DA_INT, (int64_t)x);
			else
				cm_pb_uint(b, DA_UINT, (uint64_t)x);
		} else {
			cm_pb_double(b, DA_DOUBLE, cm_pf_number_of(v));
		}
		break;
	}
	case CM_J_STR:
		if (cm_pf_lone_surrogate(v->s, v->len)) {
			stop = 3;
			break;
		}
		cm_pb_bytes(b, DA_STRING, v->s, v->len);
		break;
	case CM_J_OBJ:
		for (k = v->kids; k && !stop; k = k->next)
			stop = put_annotation(e, b, DA_DICT, k->key, k->klen, k, depth + 1);
		break;
	case CM_J_ARR:
		for (k = v->kids; k && !stop; k = k->next)
			stop = put_annotation(e, b, DA_ARRAY, NULL, 0, k, depth + 1);
		break;
	}
close:
	if (stop && b->len == body) { /* nothing in it: taken back */
		b->len = at;
		return stop;
	}
	cm_pb_close(b, m);
	return stop;
}

/* Encode a slice begin or an instant (TYPE) of event EV on track UUID at
 * TS into e->te (the track event body, without the flows). */
int cm_pf_body(cm_pfev *e, const struct ev *ev, int type, int64_t off)
{
	cm_buf *b = &e->te;
	const cm_jval *k;
	int stop;
	unsigned char *p;
	size_t n = 0;
	/* the head's three fields (cm_pb_uint's bytes: their tags one byte
	 * each) written in room made once: by cm_pb_uint each made its own,
	 * 3.5 M instructions of the 50k pair's .pftrace merge (BENCHMARKS.md
	 * "pfrender19"); intern writes elsewhere (e->interned) */
	_Static_assert(TE_CATEGORY_IIDS < 16 && TE_NAME_IID < 16 && TE_TYPE < 16, "one-byte tags");
	if (b->cap < 3 * 11)
		cm_buf_grow(b, 3 * 11);
	p = (unsigned char *)b->p;
	if (ev->cat && ev->cat->type == CM_J_STR) {
		p[n++] = TE_CATEGORY_IIDS << 3 | CM_PB_VARINT;
		n += cm_pb_varint_at(p + n, intern_fixed(e, e->catref, &e->cats, ID_CATEGORIES, ev->cat));
	}
	/* Perfetto's JSON import names a slice without a name "[No name]" */
	if (ev->name && ev->name->type == CM_J_STR && ev->name->len) {
		p[n++] = TE_NAME_IID << 3 | CM_PB_VARINT;
		n += cm_pb_varint_at(p + n, intern_fixed(e, e->nameref, &e->names, ID_NAMES, ev->name));
	} else if ((!ev->name || ev->name->type == CM_J_STR) && type != TYPE_COUNTER && type != TYPE_END && type) {
		p[n++] = TE_NAME_IID << 3 | CM_PB_VARINT;
		n += cm_pb_varint_at(p + n, intern(e, &e->names, ID_NAMES, "[No name]", 9));
	} else if (ev->name && ev->name->type != CM_J_STR) {
		b->len = 0;
		return REFUSE(e, off, "an event whose name is not a string cannot be written as Perfetto protobuf");
	}
	if (type) {
		p[n++] = TE_TYPE << 3 | CM_PB_VARINT;
		n += cm_pb_varint_at(p + n, (uint64_t)type);
	}
	b->len = n;
	if (ev->args && ev->args->type != CM_J_OBJ)
		return REFUSE(e, off, "an event whose args is not an object cannot be written as Perfetto protobuf");
	if (ev->args)
		for (k = ev->args->kids; k; k = k->next) {
			uint64_t iid;
			struct cm_pfkeyref *r = NULL;
			/* a literal key met since the tables' clearing: its iid
			 * by its pointer, none of its bytes read (the keys'
			 * cache's hash and compare were 8 M instructions of the
			 * 50k pair's .pftrace merge: BENCHMARKS.md "pfrender19") */
			if (k->has_iv == CM_PF_IV_INT && e->lit) {
				r = cm_pf_keyref(e, k->key);
				if (r->key == k->key && r->klen == k->klen && r->gen == e->keygen) {
					put_int_iid(b, TE_ANNOTATIONS, r->iid, k);
					continue;
				}
			}
			/* a key that the keys' cache holds has no dot: only keys
			 * without one are interned whole (put_annotation interns a
			 * dotted one by its parts), so has_dot's test is left out
			 * for most (7 M instructions of the 50k pair's .pftrace
			 * merge: BENCHMARKS.md "pfcpu16") */
			if (k->has_iv == CM_PF_IV_INT && ((iid = cm_strtab_cached(&e->keys, k->key, k->klen)) != 0 ||
							  (!has_dot(k->key, k->klen) && /* (k->key: an object's) */
							   (iid = intern(e, &e->keys, ID_ANNOTATION_NAMES, k->key, k->klen)) != 0))) {
				if (r) /* (the key interned whole: its iid stays until the tables' clearing) */
					r->key = k->key, r->klen = k->klen, r->gen = e->keygen, r->iid = iid;
				put_int_iid(b, TE_ANNOTATIONS, iid, k);
				continue;
			}
			if ((stop = put_annotation(e, b, TE_ANNOTATIONS, k->key, k->klen, k, 1)) == 2)
				return REFUSE(e, off, "an event whose args nest more than %d deep (objects, arrays and the dots of keys) cannot be written as Perfetto protobuf",
					      PF_ANN_DEPTH);
			if (stop) {
				if (stop == 3)
					return REFUSE(e, off, CM_PF_SURROGATE_MSG);
				break; /* the JSON import keeps none from there on */
			}
		}
	if (e->lone) {
		e->lone = 0;
		return REFUSE(e, off, CM_PF_SURROGATE_MSG);
	}
	return 0;
}
