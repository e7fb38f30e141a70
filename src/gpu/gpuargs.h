/* gpuargs.h - the "args" of a GPU activity event: an ordered dict with
 * Python's overwrite rule, and the annotation rules that fill it. */
#ifndef CM_GPUARGS_H
#define CM_GPUARGS_H

#include "json/jval.h"
#include "base/pyval.h"

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
};

/* args[KEY] = V for an integer, a string, a name from a table. */
void gpu_arg_int(struct args *A, const char *key, cm_int v);
void gpu_arg_str(struct args *A, const char *key, const char *v);
/* args[KEY] = the JSON value whose text is S[0..N) (S must live until the
 * args are written). */
void gpu_arg_raw(struct args *A, const char *key, const char *s, size_t n);
/* Memcpy kinds by name ("HtoD"), memory kinds ("pinned"), else the number. */
void gpu_arg_copy_kind(struct args *A, const char *key, cm_int v);
void gpu_arg_memory_kind(struct args *A, const char *key, cm_int v);
/* The annotation's contribution (the reference's _annotation_to_args): a
 * string is decoded as JSON when it can be (values in ARENA); an object
 * spreads into args, a list becomes its json.dumps text (kept in DUMPS),
 * anything else is stored as it is. */
void gpu_annotation_args(cm_arena *arena, struct args *A, const cm_jval *ann, cm_buf *dumps);
/* ,"args":{...}} */
void gpu_write_args(cm_buf *b, const struct args *A);

#endif
