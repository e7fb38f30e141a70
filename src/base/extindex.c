/* extindex.c - the lists of threads that the External-id index numbers. */
#include "config.h"
#include "base/extindex.h"
#include "base/diag.h"
#include "base/hmap.h"

#include <stdlib.h>

uint32_t cm_ext_threads_number(cm_ext_threads *l, int64_t pid, int64_t tid)
{
	int64_t key[2] = {pid, tid};
	uint32_t *n;
	/* a run of ids on one thread is the rule */
	if (l->n && l->v[l->n - 1].pid == pid && l->v[l->n - 1].tid == tid)
		return l->n;
	if (!l->ix)
		l->ix = cm_hmap_new(16, sizeof(uint32_t));
	n = cm_hmap_put(l->ix, key, NULL);
	if (!*n) {
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 16;
			l->v = cm_xrealloc(l->v, l->cap * sizeof *l->v);
		}
		l->v[l->n].pid = pid;
		l->v[l->n].tid = tid;
		*n = ++l->n;
	}
	return *n;
}

void cm_ext_threads_free(cm_ext_threads *l)
{
	free(l->v);
	cm_hmap_free(l->ix);
	*l = (cm_ext_threads){0};
}
