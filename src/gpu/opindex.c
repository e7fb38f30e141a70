/* opindex.c - CPU operators sorted by thread and start, each linked to its enclosing one.
 *
 * A trace can hold millions of operators (32 bytes each here), more than
 * the memory budget, so they are sorted as an external merge sort does: runs
 * of a budget's worth, sorted in memory and written to a temporary file,
 * then merged into a second one, which is mapped for the lookups.  The
 * operators of a thread nest (record_function scopes): in the merged order
 * (by start, the longer first on a tie) each one's enclosing operator is the
 * top of a stack of the open ones, so the links are made as the merge
 * writes.  The operator a call was made in is then an ancestor of the last
 * operator that starts no later than the call: a binary search, and a walk
 * up a chain as long as the nesting is deep.  The mapping's pages are
 * watched with the id tables' (cm_pages in idmap.h): the pages touched count
 * against the one budget, and all are dropped when it is passed. */
#include "config.h"
#include "gpu/opindex.h"
#include "base/diag.h"
#include "base/hmap.h"
#include "base/idmap.h"
#include "base/exitcode.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NONE UINT32_MAX
/* Operators a run reader buffers (128 KiB), and the fewest in a run. */
#define RUN_BUF 4096u

struct op {
	double ts, end;
	int64_t ext;
	uint32_t thr;  /* index of the thread (threads) */
	uint32_t link; /* the order added, then the enclosing operator's index (NONE) */
};

struct cm_opindex {
	size_t budget;        /* bytes of memory for a run */
	cm_hmap *threads;     /* (pid, tid) -> uint32 index + 1 */
	uint32_t nthreads;
	uint64_t n;
	struct op *buf;       /* the run being filled */
	size_t nbuf, cap;
	FILE *runs;           /* the sorted runs written so far */
	uint64_t *run_len;
	size_t nruns;
	FILE *table;          /* the merged table */
	const struct op *ops; /* ... mapped */
	size_t map_size;
	uint64_t *first;      /* thread i's operators: ops[first[i] .. first[i + 1]) */
	cm_pages *pages;      /* the mapping's pages, watched with the id tables' */
};

cm_opindex *cm_opindex_new(size_t budget)
{
	cm_opindex *x = cm_xcalloc(1, sizeof *x);
	x->budget = budget;
	x->threads = cm_hmap_new(16, 4);
	x->cap = budget / sizeof(struct op);
	if (x->cap < RUN_BUF)
		x->cap = RUN_BUF;
	return x;
}

void cm_opindex_free(cm_opindex *x)
{
	if (!x)
		return;
	cm_pages_unwatch(x->pages);
	if (x->ops)
		munmap((void *)x->ops, x->map_size);
	if (x->runs)
		fclose(x->runs);
	if (x->table)
		fclose(x->table);
	cm_hmap_free(x->threads);
	free(x->buf);
	free(x->run_len);
	free(x->first);
	free(x);
}

uint64_t cm_opindex_count(const cm_opindex *x) { return x->n; }

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

static int write_error(void)
{
	cm_error(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	return -1;
}

/* The buffer becomes a sorted run in x->runs.  0, or -1 after a report. */
static int flush_run(cm_opindex *x)
{
	if (!x->nbuf)
		return 0;
	qsort(x->buf, x->nbuf, sizeof *x->buf, cmp_op);
	if (!x->runs && !(x->runs = cm_temp_file("operators")))
		return -1;
	if (fwrite(x->buf, sizeof *x->buf, x->nbuf, x->runs) != x->nbuf)
		return write_error();
	x->run_len = cm_xrealloc(x->run_len, (x->nruns + 1) * sizeof *x->run_len);
	x->run_len[x->nruns++] = x->nbuf;
	x->nbuf = 0;
	return 0;
}

int cm_opindex_add(cm_opindex *x, int64_t pid, int64_t tid, double ts, double end, int64_t ext)
{
	int64_t key[2] = {pid, tid};
	uint32_t *ix;
	struct op *o;
	if (isnan(ts) || isnan(end) || x->n >= NONE) /* a span no call can lie in; or beyond the links */
		return 0;
	if (x->nbuf == x->cap && flush_run(x) < 0)
		return -1;
	if (!x->buf)
		x->buf = cm_xmalloc(x->cap * sizeof *x->buf);
	ix = cm_hmap_put(x->threads, key, NULL);
	if (!*ix)
		*ix = ++x->nthreads;
	o = &x->buf[x->nbuf++];
	memset(o, 0, sizeof *o);
	o->ts = ts;
	o->end = end;
	o->ext = ext;
	o->thr = *ix - 1;
	o->link = (uint32_t)x->n++;
	return 0;
}

/* A sorted run being read: the next operator at buf[pos] (of len), LEFT
 * more in the runs file from operator OFF on. */
struct reader {
	struct op *buf;
	size_t pos, len;
	uint64_t off, left;
};

/* Refill R from the runs file.  0, or -1 after a report. */
static int refill(cm_opindex *x, struct reader *r)
{
	size_t want = r->left < RUN_BUF ? (size_t)r->left : RUN_BUF;
	if (fseeko(x->runs, (off_t)(r->off * sizeof(struct op)), SEEK_SET) != 0 ||
	    fread(r->buf, sizeof *r->buf, want, x->runs) != want)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file");
	r->pos = 0;
	r->len = want;
	r->off += want;
	r->left -= want;
	return 0;
}

/* The readers with operators left, as a binary heap on their next one. */
static int before(const struct reader *r, size_t a, size_t b)
{
	return cmp_op(&r[a].buf[r[a].pos], &r[b].buf[r[b].pos]) < 0;
}

/* Move heap entry I down to its place. */
static void sift_down(const struct reader *r, size_t *heap, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i, t;
		if (l < n && before(r, heap[l], heap[m]))
			m = l;
		if (l + 1 < n && before(r, heap[l + 1], heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

int cm_opindex_build(cm_opindex *x)
{
	struct reader *rd;
	size_t nrd, depth = 0, cap_stack = 64, *heap, nheap = 0;
	struct open { uint32_t ix; double end; } *stack;
	uint64_t i = 0;
	uint32_t cur = 0; /* the thread being written */
	int rc = 0;
	if (!x->n)
		return 0;
	if (x->nruns) { /* the rest becomes a run too, and all are read back */
		if (flush_run(x) < 0)
			return -1;
		if (fflush(x->runs) != 0)
			return write_error();
		free(x->buf);
		x->buf = NULL;
		nrd = x->nruns;
		rd = cm_xcalloc(nrd, sizeof *rd);
		for (size_t r = 0, off = 0; r < nrd; off += x->run_len[r++]) {
			rd[r].buf = cm_xmalloc(RUN_BUF * sizeof *rd[r].buf);
			rd[r].off = off;
			rd[r].left = x->run_len[r];
			if (rc == 0 && refill(x, &rd[r]) < 0)
				rc = -1;
		}
	} else { /* a single run, in memory */
		qsort(x->buf, x->nbuf, sizeof *x->buf, cmp_op);
		nrd = 1;
		rd = cm_xcalloc(1, sizeof *rd);
		rd[0].buf = x->buf;
		rd[0].len = x->nbuf;
		x->buf = NULL;
	}
	x->first = cm_xcalloc((size_t)x->nthreads + 1, sizeof *x->first);
	stack = cm_xmalloc(cap_stack * sizeof *stack);
	heap = cm_xmalloc(nrd * sizeof *heap);
	for (size_t r = 0; r < nrd; r++)
		if (rd[r].len)
			heap[nheap++] = r;
	for (size_t h = nheap; h-- > 0;)
		sift_down(rd, heap, nheap, h);
	if (rc == 0 && !(x->table = cm_temp_file("operators")))
		rc = -1;
	/* merge, linking each operator to the innermost open one that encloses it */
	while (rc == 0 && nheap) {
		size_t k = heap[0];
		struct op o = rd[k].buf[rd[k].pos++];
		if (rd[k].pos == rd[k].len && rd[k].left && refill(x, &rd[k]) < 0) {
			rc = -1;
			break;
		}
		if (rd[k].pos == rd[k].len) /* this run is done */
			heap[0] = heap[--nheap];
		sift_down(rd, heap, nheap, 0);
		if (i == 0 || o.thr != cur) { /* the first operator of a thread */
			for (uint32_t t = i ? cur + 1 : 0; t <= o.thr; t++)
				x->first[t] = i;
			cur = o.thr;
			depth = 0;
		}
		while (depth && stack[depth - 1].end < o.end) /* it started no later: does not enclose */
			depth--;
		o.link = depth ? stack[depth - 1].ix : NONE;
		if (depth == cap_stack)
			stack = cm_xrealloc(stack, (cap_stack *= 2) * sizeof *stack);
		stack[depth].ix = (uint32_t)i;
		stack[depth++].end = o.end;
		if (fwrite(&o, sizeof o, 1, x->table) != 1)
			rc = write_error();
		i++;
	}
	if (rc == 0) {
		for (uint32_t t = cur + 1; t <= x->nthreads; t++)
			x->first[t] = x->n;
		x->map_size = (size_t)x->n * sizeof *x->ops;
		if (fflush(x->table) != 0 ||
		    (x->ops = mmap(NULL, x->map_size, PROT_READ, MAP_SHARED, fileno(x->table), 0)) == MAP_FAILED) {
			x->ops = NULL;
			cm_error(CM_EXIT_IO, NULL, -1, "cannot map a temporary file: %s", strerror(errno));
			rc = -1;
		} else if (x->map_size) {
			x->pages = cm_pages_watch((void *)x->ops, x->map_size);
		}
	}
	for (size_t r = 0; r < nrd; r++)
		free(rd[r].buf);
	free(rd);
	free(heap);
	free(stack);
	if (x->runs) { /* merged: the runs are not needed any more */
		fclose(x->runs);
		x->runs = NULL;
	}
	return rc;
}

/* Operator I, its page marked touched (idmap.h: the tables' budget). */
static const struct op *touch(cm_opindex *x, uint64_t i)
{
	const struct op *o = &x->ops[i];
	cm_pages_touch(x->pages, o);
	return o;
}

int cm_opindex_find(cm_opindex *x, int64_t pid, int64_t tid, double ts, double end, int64_t *ext)
{
	int64_t key[2] = {pid, tid};
	const uint32_t *ix;
	const struct op *o;
	uint64_t lo, hi;
	uint32_t i;
	if (!x || !x->ops || !(ix = cm_hmap_get(x->threads, key)))
		return 0;
	lo = x->first[*ix - 1];
	hi = x->first[*ix];
	/* the last operator that starts no later than TS */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (touch(x, mid)->ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->first[*ix - 1])
		return 0;
	for (i = (uint32_t)(lo - 1); i != NONE; i = o->link) {
		o = touch(x, i);
		if (o->ts <= ts && end <= o->end) {
			*ext = o->ext;
			return 1;
		}
	}
	return 0;
}
