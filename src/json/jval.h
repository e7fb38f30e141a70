/* jval.h - small JSON values held in memory: one window event at a time, an
 * annotation decoded from a string.  Nodes live in an arena that is reset per
 * event, so memory is bounded by the largest event, never by the file.
 * Numbers keep their text; strings are UTF-8 (WTF-8 for lone surrogates). */
#ifndef CM_JVAL_H
#define CM_JVAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include "json/jcheck.h"
#include "json/jwrite.h"

enum cm_jtype { CM_J_NULL, CM_J_FALSE, CM_J_TRUE, CM_J_NUM, CM_J_STR, CM_J_ARR, CM_J_OBJ };

typedef struct cm_jval cm_jval;
struct cm_jval {
	unsigned char type;
	uint32_t len;    /* bytes of s (string, number text); children of a container */
	uint32_t klen;   /* bytes of key when this is an object member */
	const char *s;   /* string bytes or number text */
	const char *key; /* member name, or NULL */
	cm_jval *kids;   /* first child (containers) */
	cm_jval *next;   /* next sibling */
	int64_t iv;      /* with has_iv: the value of a number that is an integer literal */
	unsigned char has_iv; /* set only by cm_jvalid_build, for -?DIGITS that fits int64 */
	/* which member of a trace event this is (CM_JK_*, below), where the
	 * tree's builder says so: gpu/gpumembers.h's, whose keys are mostly
	 * constants, so the number is made when the code is compiled and the
	 * .pftrace's encoder skips comparing the key (pftrace/pfevent.h's
	 * cm_pf_members_given).  The parsers leave it as they find it: read
	 * it only in a tree whose builder promises it (pftrace.h's
	 * cm_pft_enc_elem). */
	unsigned char kno;
	/* a string whose bytes at s stay as they are while the .pftrace's
	 * encoder's batch lasts, where the tree's builder says so (1; gpu/
	 * gpumembers.h's: a literal, the window's name table): the encoder
	 * may know it again by its pointer (pftrace.h's cm_pft_enc_elem).
	 * The parsers leave it as they find it, as kno. */
	unsigned char sfix;
};

/* The members of a trace event that the .pftrace's encoder reads, in the
 * order of its struct ev (pftrace/pfevent.h checks it); CM_JK_OTHER: a
 * key that is none of them; CM_JK_UNSAID (0): not said. */
enum {
	CM_JK_UNSAID, CM_JK_PH, CM_JK_NAME, CM_JK_CAT, CM_JK_TS, CM_JK_DUR, CM_JK_PID, CM_JK_TID, CM_JK_ARGS, CM_JK_ID,
	CM_JK_S, CM_JK_BP, CM_JK_OTHER
};

/* The CM_JK_* of the member key KEY[0..KLEN) (NULL: an array's element,
 * CM_JK_OTHER).  Inline, of constants: with a literal key the compiler
 * works it out. */
static inline unsigned char cm_jkey_no(const char *key, size_t klen)
{
	if (!key)
		return CM_JK_OTHER;
	switch (klen) {
	case 1: return key[0] == 's' ? CM_JK_S : CM_JK_OTHER;
	case 2:
		return !memcmp(key, "ph", 2) ? CM_JK_PH : !memcmp(key, "ts", 2) ? CM_JK_TS
		     : !memcmp(key, "id", 2) ? CM_JK_ID : !memcmp(key, "bp", 2) ? CM_JK_BP : CM_JK_OTHER;
	case 3:
		return !memcmp(key, "cat", 3) ? CM_JK_CAT : !memcmp(key, "dur", 3) ? CM_JK_DUR
		     : !memcmp(key, "pid", 3) ? CM_JK_PID : !memcmp(key, "tid", 3) ? CM_JK_TID : CM_JK_OTHER;
	case 4: return !memcmp(key, "name", 4) ? CM_JK_NAME : !memcmp(key, "args", 4) ? CM_JK_ARGS : CM_JK_OTHER;
	}
	return CM_JK_OTHER;
}

/* ---- arena ---- */
typedef struct cm_arena cm_arena;
cm_arena *cm_arena_new(void);
/* N bytes, 8-aligned, valid until the next reset. */
void *cm_arena_alloc(cm_arena *a, size_t n);
/* Forget everything allocated (keeps the first block for reuse). */
void cm_arena_reset(cm_arena *a);
void cm_arena_free(cm_arena *a);
/* A copy of s[0..n) in the arena, NUL-terminated for convenience. */
static inline const char *cm_arena_dup(cm_arena *a, const char *s, size_t n)
{
	char *p = cm_arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* ---- access ---- */
/* The member KEY of object O (the last one when a key repeats, as Python's
 * json keeps), or NULL when O is not an object or has no such member. */
const cm_jval *cm_jval_getn(const cm_jval *o, const char *key, size_t n);
/* (inline, so that the length of a literal KEY is known when compiled) */
static inline const cm_jval *cm_jval_get(const cm_jval *o, const char *key)
{
	return cm_jval_getn(o, key, strlen(key));
}
/* 1 when V is a string equal to the NUL-terminated S. */
static inline int cm_jval_streq(const cm_jval *v, const char *s)
{
	size_t n = strlen(s); /* inline: a literal's length and compare are compiled in */
	return v && v->type == CM_J_STR && v->len == n && !memcmp(v->s, s, n);
}
/* The members of object O as the dict Python's json module makes of it: a
 * key that repeats keeps the place of its first appearance and the value of
 * its last.  Returns a malloc'd array (the caller frees it) of *N member
 * nodes, each the last appearance of its key, in the order of the first
 * appearances; O's kids when it is not an object: *N = 0.  Time linear in
 * the members, for the window's maps (millions of annotations). */
const cm_jval **cm_jval_dict_members(const cm_jval *o, size_t *n);

/* ---- building from SAX events (see saxread.h) ---- */
#define CM_JBUILD_MAXDEPTH CM_JSON_MAX_DEPTH
typedef struct cm_jbuild {
	cm_arena *arena;
	cm_jval *stack[CM_JBUILD_MAXDEPTH]; /* open containers */
	cm_jval *tail[CM_JBUILD_MAXDEPTH];  /* their last child */
	int depth;
	cm_jval *root;
	const char *key; /* pending member name */
	uint32_t klen;
	int borrow; /* strings and keys point at the caller's bytes, not copies */
} cm_jbuild;

/* (The builder is inline: the window's reader builds a tree of each of
 * millions of events, a call a token, as jvalid.c's cm_jvalid_build does.) */
static inline void cm_jbuild_begin(cm_jbuild *b, cm_arena *a)
{
	b->arena = a;
	b->depth = 0;
	b->root = NULL;
	b->key = NULL;
	b->klen = 0;
	b->borrow = 0;
}

/* KID made the last of PARENT's kids, *TAIL the last before it (NULL: none)
 * and then KID: the one way the parsers and the builder link a container's
 * kids, in order and counted. */
static inline void cm_jval_append(cm_jval *parent, cm_jval **tail, cm_jval *kid)
{
	if (*tail)
		(*tail)->next = kid;
	else
		parent->kids = kid;
	*tail = kid;
	parent->len++;
}

/* Give the node V, zeroed, the TYPE and attach it to the open container
 * (or make it the root).  Returns V.  (The validator's builder takes its
 * nodes from runs of its own: jvalid.c.) */
static inline cm_jval *cm_jbuild_link(cm_jbuild *b, cm_jval *v, int type)
{
	memset(v, 0, sizeof *v);
	v->type = (unsigned char)type;
	if (b->depth == 0) {
		b->root = v;
	} else {
		cm_jval *parent = b->stack[b->depth - 1];
		if (parent->type == CM_J_OBJ) {
			v->key = b->key;
			v->klen = b->klen;
		}
		cm_jval_append(parent, &b->tail[b->depth - 1], v);
	}
	return v;
}

/* Attach a new node to the open container (or make it the root). */
static inline cm_jval *cm_jbuild_attach(cm_jbuild *b, int type)
{
	return cm_jbuild_link(b, cm_arena_alloc(b->arena, sizeof(cm_jval)), type);
}

/* Add a scalar (type, bytes); returns 0. */
static inline int cm_jbuild_scalar(cm_jbuild *b, int type, const char *s, size_t n)
{
	cm_jval *v = cm_jbuild_attach(b, type);
	if (type == CM_J_STR || type == CM_J_NUM) {
		v->s = b->borrow && type == CM_J_STR ? s : cm_arena_dup(b->arena, s, n);
		v->len = (uint32_t)n;
	}
	return 0;
}

/* Open a container; returns 0, or -1 when nesting is too deep. */
static inline int cm_jbuild_open(cm_jbuild *b, int type)
{
	cm_jval *v;
	if (b->depth == CM_JBUILD_MAXDEPTH)
		return -1;
	v = cm_jbuild_attach(b, type);
	b->stack[b->depth] = v;
	b->tail[b->depth] = NULL;
	b->depth++;
	return 0;
}

static inline void cm_jbuild_key(cm_jbuild *b, const char *s, size_t n)
{
	b->key = b->borrow ? s : cm_arena_dup(b->arena, s, n);
	b->klen = (uint32_t)n;
}

/* Close the innermost container; returns 1 when that finished the root. */
static inline int cm_jbuild_close(cm_jbuild *b)
{
	b->depth--;
	return b->depth == 0;
}

/* The builder as yajl callbacks (ctx: a cm_jbuild), for cm_jvalid_replay.
 * Set the builder's borrow after cm_jbuild_begin when the strings and keys
 * the callbacks get outlive the value (a text held in memory, escaped
 * strings decoded into the same arena): they are then not copied, and the
 * value is the one cm_jval_parse_py makes of the text, node for node
 * (numbers are copied either way, with a NUL after them). */
extern const yajl_callbacks cm_jbuild_callbacks;

/* ---- Python json.loads / json.dumps / str ---- */
/* Parse S as Python's json.loads would (NaN, Infinity, -Infinity accepted,
 * control characters in strings rejected, surrounding whitespace allowed).
 * Returns the value, or NULL when Python raises JSONDecodeError.  Strings
 * without escapes point into S, without a NUL after them: S must outlive
 * the value (no code may take a jval string for a C string). */
cm_jval *cm_jval_parse_py(cm_arena *a, const char *s, size_t n);

/* Parse one value at the start of S (no leading whitespace) with the rules of
 * cm_jval_parse_py; *used: its length.  NULL when S does not begin with a
 * complete value followed by at least one more byte. */
cm_jval *cm_jval_parse_prefix(cm_arena *a, const char *s, size_t n, size_t *used);

/* Write V as JSON text (numbers as their own text, strings UTF-8). */
void cm_jval_write(cm_buf *b, const cm_jval *v);

/* Append the text json.dumps(V) makes with its defaults: ", " and ": "
 * separators, ASCII-only escapes, repr() floats. */
void cm_jval_dumps_py(cm_buf *b, const cm_jval *v);

/* Append the text str(V) makes for the value json.loads gives. */
void cm_jval_str_py(cm_buf *b, const cm_jval *v);

#endif
