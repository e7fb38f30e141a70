/* gpuargs.c - args of GPU activity events: dict semantics and annotations. */
#include "config.h"
#include "gpu/gpuargs.h"
#include "base/diag.h"

#include <string.h>


/* args[KEY] = ... : the slot for KEY, appended when new. */
static struct arg *arg_slot(struct args *A, const char *key, size_t klen)
{
	for (size_t i = 0; i < A->n; i++)
		if (A->v[i].klen == klen && !memcmp(A->v[i].key, key, klen))
			return &A->v[i];
	if (A->n == A->cap) {
		A->cap = A->cap ? A->cap * 2 : 16;
		A->v = cm_xrealloc(A->v, A->cap * sizeof *A->v);
	}
	A->v[A->n].key = key;
	A->v[A->n].klen = klen;
	return &A->v[A->n++];
}

void gpu_args_begin(struct args *A, cm_buf *direct)
{
	A->n = 0;
	A->direct = direct;
	if (direct)
		cm_buf_lit(direct, ",\"args\":{");
}

void gpu_arg_int_slot(struct args *A, const char *key, cm_int v)
{
	struct arg *s = arg_slot(A, key, strlen(key));
	s->kind = ARG_INT;
	s->i = v;
}

void gpu_arg_int_member(struct args *A, const char *key, size_t klen, cm_int v)
{
	size_t at;
	if (gpu_members_lean_int(A->m, key, klen, v))
		return; /* (the lean mode: no text) */
	gpu_arg_direct_key(A, key, klen);
	at = A->direct->len;
	cm_jw_int(A->direct, v);
	gpu_members_int(A->m, key, klen, A->direct, at, v);
}

void gpu_arg_str(struct args *A, const char *key, const char *v)
{
	struct arg *s;
	if (A->direct) {
		size_t at;
		gpu_arg_direct_key(A, key, strlen(key));
		at = A->direct->len;
		cm_jw_string(A->direct, v, strlen(v));
		if (A->m)
			gpu_members_str(A->m, key, strlen(key), A->direct, at);
		return;
	}
	s = arg_slot(A, key, strlen(key));
	s->kind = ARG_STR;
	s->s = v;
	s->slen = strlen(v);
}

void gpu_arg_raw(struct args *A, const char *key, const char *s, size_t n)
{
	struct arg *a;
	if (A->direct) {
		gpu_arg_direct_key(A, key, strlen(key));
		cm_buf_put(A->direct, s, n);
		return;
	}
	a = arg_slot(A, key, strlen(key));
	a->kind = ARG_RAW;
	a->s = s;
	a->slen = n;
}

/* A name from a small table, or the number itself (dict.get(k, k)). */
static void arg_named(struct args *A, const char *key, cm_int v, const char *const *names, int count)
{
	if (v >= 0 && v < count && names[(int)v])
		gpu_arg_str(A, key, names[(int)v]);
	else
		gpu_arg_int(A, key, v);
}

static const char *const memcpy_kind_names[] = {
	NULL, "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", NULL, "PtoP"};
static const char *const memory_kind_names[] = {
	"unknown", "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static"};

void gpu_annotation_args(cm_arena *arena, struct args *A, const cm_jval *ann, cm_buf *dumps)
{
	const cm_jval *dec;
	if (!ann || ann->type == CM_J_NULL)
		return;
	dec = ann->type == CM_J_STR ? cm_jval_parse_py(arena, ann->s, ann->len) : ann;
	if (!dec) { /* not JSON: the string itself */
		struct arg *s = arg_slot(A, "annotation", 10);
		s->kind = ARG_JVAL;
		s->jv = ann;
		return;
	}
	if (dec->type == CM_J_ARR) {
		struct arg *s = arg_slot(A, "annotation", 10);
		dumps->len = 0;
		cm_jval_dumps_py(dumps, dec);
		s->kind = ARG_PYTEXT;
		s->s = dumps->p;
		s->slen = dumps->len;
	} else if (dec->type == CM_J_OBJ) {
		for (const cm_jval *k = dec->kids; k; k = k->next) {
			struct arg *s = arg_slot(A, k->key, k->klen);
			s->kind = ARG_JVAL;
			s->jv = k;
		}
	} else {
		struct arg *s = arg_slot(A, "annotation", 10);
		s->kind = ARG_JVAL;
		s->jv = dec;
	}
}

void gpu_write_args(cm_buf *b, const struct args *A)
{
	if (A->direct) {
		cm_buf_lit(b, "}}");
		return;
	}
	cm_buf_lit(b, ",\"args\":{");
	for (size_t i = 0; i < A->n; i++) {
		const struct arg *s = &A->v[i];
		if (i)
			cm_buf_putc(b, ',');
		cm_jw_string(b, s->key, s->klen);
		cm_buf_putc(b, ':');
		switch (s->kind) {
		case ARG_INT: cm_jw_int(b, s->i); break;
		case ARG_STR:
		case ARG_PYTEXT: cm_jw_string(b, s->s, s->slen); break;
		case ARG_RAW: cm_buf_put(b, s->s, s->slen); break;
		default: cm_jval_write(b, s->jv); break;
		}
	}
	cm_buf_lit(b, "}}");
}

void gpu_arg_copy_kind(struct args *A, const char *key, cm_int v)
{
	arg_named(A, key, v, memcpy_kind_names, 11);
}

void gpu_arg_memory_kind(struct args *A, const char *key, cm_int v)
{
	arg_named(A, key, v, memory_kind_names, 8);
}
