/* opindex.c - CPU operators sorted by thread and start, each linked to its enclosing one.
 *
 * A trace can hold millions of operators, so the table is a temporary file
 * of 32-byte records, mapped and sorted in place (page cache, not resident
 * memory).  The operators of a thread nest (record_function scopes), so
 * sorted by start (the longer first on a tie) each one's enclosing operator
 * is found with a stack, and the operator a call was made in is an ancestor
 * of the last operator that starts no later than the call: a binary search,
 * then a walk up a chain as long as the nesting is deep. */
#include "config.h"
#include "gpu/opindex.h"
#include "base/diag.h"
#include "base/hmap.h"
#include "exitcode.h"
#include "io/tmpfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NONE UINT32_MAX

struct op {
	double ts, end;
	int64_t ext;
	uint32_t thr;  /* index of the thread (threads) */
	uint32_t link; /* the order added, then the enclosing operator's index (NONE) */
};

struct cm_opindex {
	FILE *f;
	cm_hmap *threads;   /* (pid, tid) -> uint32 index + 1 */
	uint32_t nthreads;
	uint64_t n;
	struct op *ops;     /* mapped, once built */
	size_t map_size;
	uint64_t *first;    /* thread i's operators: ops[first[i] .. first[i + 1]) */
};

cm_opindex *cm_opindex_new(void)
{
	cm_opindex *x = cm_xcalloc(1, sizeof *x);
	x->threads = cm_hmap_new(16, 4);
	return x;
}

void cm_opindex_free(cm_opindex *x)
{
	if (!x)
		return;
	if (x->ops)
		munmap(x->ops, x->map_size);
	if (x->f)
		fclose(x->f);
	cm_hmap_free(x->threads);
	free(x->first);
	free(x);
}

uint64_t cm_opindex_count(const cm_opindex *x) { return x->n; }

int cm_opindex_add(cm_opindex *x, int64_t pid, int64_t tid, double ts, double end, int64_t ext)
{
	int64_t key[2] = {pid, tid};
	uint32_t *ix;
	struct op o;
	if (isnan(ts) || isnan(end) || x->n >= NONE) /* a span no call can lie in; or beyond the links */
		return 0;
	if (!x->f && !(x->f = cm_temp_file("operators")))
		return -1;
	ix = cm_hmap_put(x->threads, key, NULL);
	if (!*ix)
		*ix = ++x->nthreads;
	memset(&o, 0, sizeof o);
	o.ts = ts;
	o.end = end;
	o.ext = ext;
	o.thr = *ix - 1;
	o.link = (uint32_t)x->n++;
	if (fwrite(&o, sizeof o, 1, x->f) != 1)
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno)), -1;
	return 0;
}

/* By thread, then start; on a tie the longer first (it encloses the other),
 * then the order of the trace (the later one is taken to be inside). */
static int cmp_op(const void *pa, const void *pb)
{
	const struct op *a = pa, *b = pb;
	if (a->thr != b->thr)
		return a->thr < b->thr ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->link < b->link ? -1 : a->link > b->link;
}

int cm_opindex_build(cm_opindex *x)
{
	uint32_t *stack;
	size_t depth = 0;
	if (!x->n)
		return 0;
	x->map_size = (size_t)x->n * sizeof *x->ops;
	if (fflush(x->f) != 0 ||
	    (x->ops = mmap(NULL, x->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(x->f), 0)) == MAP_FAILED) {
		x->ops = NULL;
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot map a temporary file: %s", strerror(errno)), -1;
	}
	qsort(x->ops, (size_t)x->n, sizeof *x->ops, cmp_op);
	x->first = cm_xcalloc((size_t)x->nthreads + 1, sizeof *x->first);
	stack = cm_xmalloc((size_t)x->n * sizeof *stack);
	for (uint64_t i = 0; i < x->n; i++) {
		struct op *o = &x->ops[i];
		if (i == 0 || o->thr != x->ops[i - 1].thr) {
			for (uint32_t t = i ? x->ops[i - 1].thr + 1 : 0; t <= o->thr; t++)
				x->first[t] = i;
			depth = 0;
		}
		/* pop what does not enclose this one (it started no later) */
		while (depth && x->ops[stack[depth - 1]].end < o->end)
			depth--;
		o->link = depth ? stack[depth - 1] : NONE;
		stack[depth++] = (uint32_t)i;
	}
	for (uint32_t t = x->ops[x->n - 1].thr + 1; t <= x->nthreads; t++)
		x->first[t] = x->n;
	free(stack);
	return 0;
}

int cm_opindex_find(const cm_opindex *x, int64_t pid, int64_t tid, double ts, double end, int64_t *ext)
{
	int64_t key[2] = {pid, tid};
	const uint32_t *ix;
	uint64_t lo, hi;
	uint32_t i;
	if (!x || !x->ops || !(ix = cm_hmap_get(x->threads, key)))
		return 0;
	lo = x->first[*ix - 1];
	hi = x->first[*ix];
	/* the last operator that starts no later than TS */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (x->ops[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->first[*ix - 1])
		return 0;
	for (i = (uint32_t)(lo - 1); i != NONE; i = x->ops[i].link)
		if (x->ops[i].ts <= ts && end <= x->ops[i].end) {
			*ext = x->ops[i].ext;
			return 1;
		}
	return 0;
}
