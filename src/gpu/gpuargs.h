/* gpuargs.h - the "args" of a GPU activity event: an ordered dict with
 * Python's overwrite rule, and the annotation rules that fill it. */
#ifndef CM_GPUARGS_H
#define CM_GPUARGS_H

#include "json/jval.h"
#include "base/pyval.h"
#include "json/jwrite.h"
#include "gpu/gpumembers.h"

#include <string.h>

enum arg_kind { ARG_INT, ARG_STR, ARG_JVAL, ARG_PYTEXT, ARG_RAW };
struct arg {
	const char *key;
	size_t klen;
	int kind;
	cm_int i;
	const char *s; /* ARG_STR / ARG_PYTEXT bytes, ARG_RAW JSON text */
	size_t slen;
	const cm_jval *jv;
};
struct args {
	struct arg *v;
	size_t n, cap;
	/* Not NULL: the args go straight into this buffer as they are set,
	 * after ,"args":{ (gpu_args_begin's DIRECT).  Only for args whose keys are
	 * all different and all the render's own (text that needs no escape):
	 * an event without an annotation, whose keys are literals of the
	 * render.  The slots' search, the keys' strlen and cm_jw_string were
	 * a sixth of the render's instructions. */
	cm_buf *direct;
	/* Not NULL (with DIRECT only): the args' members are noted here as
	 * they are written (gpumembers.h: an element the .pftrace's encoder
	 * takes as a tree) */
	struct gpu_members *m;
};

/* Start A's args of an event: with DIRECT (not NULL) written at once into
 * DIRECT, after its ,"args":{ (the caller promises distinct keys that need
 * no escape, see struct args), else collected for gpu_write_args. */
void gpu_args_begin(struct args *A, cm_buf *direct);

/* The key of a direct arg: "KEY": after a comma from the second on. */
static inline void gpu_arg_direct_key(struct args *A, const char *key, size_t klen)
{
	cm_buf *b = A->direct;
	char *q;
	if (b->cap - b->len < klen + 4)
		cm_buf_grow(b, klen + 4);
	q = b->p + b->len;
	*q = ',';
	q += A->n++ != 0;
	*q++ = '"';
	memcpy(q, key, klen);
	q += klen;
	*q++ = '"';
	*q++ = ':';
	b->len = (size_t)(q - b->p);
}

/* args[KEY] = V for an integer, a string, a name from a table.  (Inline,
 * so that a literal KEY's length is known when compiled.) */
void gpu_arg_int_slot(struct args *A, const char *key, cm_int v);
/* gpu_arg_int's direct arg with its member noted (out of line: the JSON's
 * render, which notes none, keeps gpu_arg_int's few instructions). */
void gpu_arg_int_member(struct args *A, const char *key, size_t klen, cm_int v);
static inline void gpu_arg_int(struct args *A, const char *key, cm_int v)
{
	if (A->direct) {
		if (A->m) {
			gpu_arg_int_member(A, key, strlen(key), v);
			return;
		}
		gpu_arg_direct_key(A, key, strlen(key));
		cm_jw_int(A->direct, v);
		return;
	}
	gpu_arg_int_slot(A, key, v);
}
void gpu_arg_str(struct args *A, const char *key, const char *v);
/* args[KEY] = the JSON value whose text is S[0..N) (S must live until the
 * args are written; in the direct mode it is written at once). */
void gpu_arg_raw(struct args *A, const char *key, const char *s, size_t n);
/* Memcpy kinds by name ("HtoD"), memory kinds ("pinned"), else the number. */
void gpu_arg_copy_kind(struct args *A, const char *key, cm_int v);
void gpu_arg_memory_kind(struct args *A, const char *key, cm_int v);
/* The annotation's contribution (the reference's _annotation_to_args): a
 * string is decoded as JSON when it can be (values in ARENA); an object
 * spreads into args, a list becomes its json.dumps text (kept in DUMPS),
 * anything else is stored as it is. */
void gpu_annotation_args(cm_arena *arena, struct args *A, const cm_jval *ann, cm_buf *dumps);
/* ,"args":{...}} (in the direct mode, the closing }} after what was
 * written: B is then A's buffer). */
void gpu_write_args(cm_buf *b, const struct args *A);

#endif
