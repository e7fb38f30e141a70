/* gpusplitmarks.c - --split in a merge: which groups keep a span of time,
 * and the table of which groups keep each API call.
 *
 * The deal (gpusplitdeal.c) asks, for each record, which of the groups
 * keep it: a span by the groups' ranges (gpu_splitmarks_span), GPU work
 * and syncs by the groups that keep their API call, looked up in a table
 * correlation -> groups (s->marks) made here from the digest's notes
 * before the deal starts.  A file of its own because it is the one rule
 * of the split's two passes (the table's and the deal's): both ask it of
 * the store that gpusplit.c made, and neither knows the other's walk. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/gpusplit_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/opool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTE_BYTES 24 /* gpucut.c's notes: correlation, start, end (int64 each) */

/* The groups whose ranges take [START, END] ns as gpucut.c's in_span does
 * under --steps (overlapping; an instant: in it).  The groups are sorted
 * by lo: a binary search finds those that start early enough, and the walk
 * back stops where none before reaches TS (s->max_hi, as cpucut.c's
 * groups_of does: testing all 60 groups a record was 1.6% of a split).
 * But first *HINT, the group of the last span that went to one alone: a
 * span inside a group's own part (s->inner: past the end of every group
 * before it, before the next starts) is in that group alone, and the
 * records come in time order, most inside one step.  The table of the
 * API calls' groups (gpu_splitmarks_make) is made on one thread before the deal,
 * a search a call: 0.05 s of the 200 MB pair's split on 2 CPUs. */
uint64_t gpu_splitmarks_span(const cm_gpu *g, const struct gpu_split *s, cm_int start, cm_int end, size_t *hint)
{
	double ts = cm_jw_us_double(start - g->base_ns), dur = cm_jw_us_double(end - start);
	uint64_t m = 0;
	size_t a = 0, b = s->n; /* the groups before b start early enough */
	const double *in = s->inner + 2 * *hint;
	if (ts >= in[0] && (dur > 0 ? ts + dur <= in[1] : ts < in[1]))
		return (uint64_t)1 << *hint;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (dur > 0 ? s->lo[mid] < ts + dur : s->lo[mid] <= ts)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t k = a; k-- > 0 && s->max_hi[k] > ts;)
		if (dur > 0 ? ts < s->hi[k] && ts + dur > s->lo[k] : ts >= s->lo[k] && ts < s->hi[k])
			m |= (uint64_t)1 << k;
	if (m && !(m & (m - 1)))
		*hint = (size_t)__builtin_ctzll(m);
	return m;
}

/* The groups that keep each API call, from the digest's notes: the notes'
 * file read in parts of MARK_NOTES notes, each part's groups found on a
 * worker (gpu_splitmarks_span: 0.015 s of the 200 MB pair's split, on the one
 * thread before the deal) and put into the table there when it is an
 * array (cm_idmap_put takes different ids from several threads; a
 * correlation id twice, its groups or'ed in at once), else by the pool's
 * sink, in order.  (The sink's puts of the 1 GB pair's 5 million calls
 * were 0.09 s of the 16-core machine's split, all its other threads
 * idle.) */
#define MARK_NOTES 8192
struct marks_worker {
	const cm_gpu *g;
	int fd;
	cm_idmap *direct; /* the table, when the worker puts into it */
	size_t hint;      /* gpu_splitmarks_span's */
	char buf[NOTE_BYTES * MARK_NOTES];
};

/* A part (where it lies in the file, its notes: two uint64s) into the
 * table, or into OUT as (correlation: int64, groups: uint64) for each
 * note. */
static int marks_part(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct marks_worker *w = wctx;
	uint64_t place[2];
	size_t len;
	ssize_t k;
	memcpy(place, in->p, sizeof place);
	len = (size_t)place[1] * NOTE_BYTES;
	if ((k = cm_pread_all(w->fd, w->buf, len, place[0])) != (ssize_t)len)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file%s%s",
			       k < 0 ? ": " : " (it is shorter than written)", k < 0 ? strerror(errno) : "");
	if (!w->direct && out->cap - out->len < place[1] * 2 * sizeof(int64_t))
		cm_buf_grow(out, place[1] * 2 * sizeof(int64_t));
	for (size_t i = 0; i < len; i += NOTE_BYTES) {
		int64_t note[3];
		uint64_t m;
		memcpy(note, w->buf + i, sizeof note);
		m = gpu_splitmarks_span(w->g, w->g->split, note[1], note[2], &w->hint);
		if (w->direct) { /* an array's entries start at 0 */
			__atomic_fetch_or((uint64_t *)cm_idmap_put(w->direct, note[0], NULL), m, __ATOMIC_RELAXED);
			continue;
		}
		cm_buf_put(out, &note[0], sizeof note[0]);
		cm_buf_put(out, &m, sizeof m);
	}
	return 0;
}

/* The pool's sink: a part's groups into the table. */
static int marks_fold(void *sctx, cm_buf *out)
{
	struct gpu_split *s = sctx;
	for (size_t i = 0; i + 16 <= out->len; i += 16) {
		int64_t corr;
		uint64_t add, *m;
		int created;
		memcpy(&corr, out->p + i, sizeof corr);
		memcpy(&add, out->p + i + 8, sizeof add);
		m = cm_idmap_put(s->marks, corr, &created);
		/* a correlation id twice: kept where either is */
		*m = (created ? 0 : *m) | add;
	}
	return 0;
}

int gpu_splitmarks_make(cm_gpu *g, struct gpu_split *s, int jobs)
{
	int n = jobs < 1 ? 1 : jobs, rc;
	struct marks_worker *w;
	void **ctx;
	cm_opool *pool;
	cm_buf b = {0};
	if (!g->cut_napis)
		return 0;
	if (!(s->marks = cm_idmap_new(sizeof(uint64_t), g->win.api_lo, g->win.api_hi, g->win.api_n)))
		return -1;
	if (fflush(g->cut_apis) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
	w = cm_xcalloc((size_t)n, sizeof *w);
	ctx = cm_xcalloc((size_t)n, sizeof *ctx);
	for (int i = 0; i < n; i++) {
		w[i].g = g;
		w[i].fd = fileno(g->cut_apis);
		w[i].direct = cm_idmap_is_dense(s->marks) ? s->marks : NULL;
		ctx[i] = &w[i];
	}
	pool = cm_opool_new(n, 0, marks_part, ctx, marks_fold, s);
	rc = 0;
	for (uint64_t at = 0; at < g->cut_napis && rc == 0; at += MARK_NOTES) {
		uint64_t place[2] = {at * NOTE_BYTES, g->cut_napis - at < MARK_NOTES ? g->cut_napis - at : MARK_NOTES};
		cm_buf_put(&b, place, sizeof place);
		rc = cm_opool_put(pool, &b);
	}
	rc = cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	cm_buf_free(&b);
	free(w);
	free(ctx);
	if (rc < 0)
		return -1;
	fclose(g->cut_apis);
	g->cut_apis = NULL;
	return 0;
}
