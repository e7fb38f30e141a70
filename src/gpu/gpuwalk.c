/* gpuwalk.c - the walks of the window's records: each block (or piece of
 * blocks, or --split group's runs) handed in window order to the workers
 * of an ordered pool (opool.h), which read their own from the records'
 * temporary file.  The plan, the render and the annotation spans walk the
 * records block by block (gpu_walk_records); the render in groups for the
 * .pftrace walks them in whole groups (gpu_walk_groups). */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/opool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* Report a failed read back of a temporary file: K is cm_pread_all's
 * count (short: the file ends early) or -1 (errno set).  -1. */
static int read_back_failed(ssize_t k)
{
	return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file%s%s",
		       k < 0 ? ": " : " (it is shorter than written)", k < 0 ? strerror(errno) : "");
}

/* N bytes at OFF of the temporary file FD into P (cm_pread_all): 0, or -1
 * after a report. */
static int read_back(int fd, void *p, size_t n, uint64_t off)
{
	ssize_t k = cm_pread_all(fd, p, n, off);
	return (size_t)k == n ? 0 : read_back_failed(k);
}

/* --split: a group's runs (win.runs) to POOL, in window order, as pieces
 * of about a block (rs->piece bytes: as many records as a block of the
 * window holds on average, its names counted; a piece ends at the last run of a group: gpusplit.c
 * counts them so, when the runs are all the groups'): each run read from where the window's records lie (the
 * file, by pread, so that groups planned side by side read at once), or
 * copied from the one block in memory.  0, or -1 (after a report, or as
 * cm_opool_put). */
static int feed_runs(const cm_gpu *g, cm_opool *pool)
{
	const struct gpu_runs *rs = g->win.runs;
	int fd = g->win.recs ? fileno(g->win.recs) : -1, rc = 0;
	cm_buf b = {0};
	for (size_t i = 0; i < rs->n && rc == 0; i++) {
		const struct gpu_run *r = &rs->v[i];
		if (b.cap - b.len < r->len)
			cm_buf_grow(&b, r->len);
		if (fd < 0) {
			memcpy(b.p + b.len, g->win.block.p + r->off, r->len);
		} else if (read_back(fd, b.p + b.len, r->len, (uint64_t)r->off) < 0) {
			cm_buf_free(&b);
			return -1;
		}
		b.len += r->len;
		/* the pieces need not be the blocks: the walks' results do not
		 * depend on where the records are cut into pieces */
		if (b.len >= (rs->piece ? rs->piece : CM_GPU_BLOCK) || r->last || i + 1 == rs->n)
			rc = cm_opool_put(pool, &b);
	}
	cm_buf_free(&b);
	return rc;
}

/* Hand each block of records to POOL, in window order: the one still in
 * memory when the window was small (as a copy: the pool takes the bytes it
 * is given, and the plan and the output both read the blocks), else each
 * block of the temporary file in turn; or a --split group's runs.  0, or
 * -1 (after a report, or as cm_opool_put). */
static int gpu_feed_pool(const cm_gpu *g, cm_opool *pool)
{
	cm_buf b = {0};
	int rc;
	if (g->win.runs)
		return feed_runs(g, pool);
	if (!g->win.recs) {
		cm_buf_put(&b, g->win.block.p, g->win.block.len);
		rc = b.len ? cm_opool_put(pool, &b) : 0;
		cm_buf_free(&b);
		return rc;
	}
	if (fseek(g->win.recs, 0, SEEK_SET) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	while ((rc = cm_gpurec_block_read(g->win.recs, &b)) == 1)
		if (cm_opool_put(pool, &b) < 0) {
			rc = -1;
			break;
		}
	cm_buf_free(&b);
	return rc;
}
/* With several workers and the records in the temporary file, each worker
 * reads its own blocks: the caller's thread only hops from one block's
 * length to the next and queues where each lies (offset and length, 16
 * bytes), and the worker reads the block (pread) into a buffer of its own
 * before FN.  The caller read every block itself before, on the thread that
 * feeds the pool: 0.05 s a walk of the 1 GB pair, twice (the plan and the
 * render), while the workers of a 16-CPU run waited for it. */
struct rec_reader {
	cm_opool_fn fn;
	gpu_piece_fn pfn; /* read_groups' (FN not used then) */
	void *wctx;
	int fd;
	uint64_t span; /* read_groups': the groups' window indexes */
	cm_buf block, ahead; /* the block or piece read; read_groups' block after it */
	gpu_extra_fn xfn; /* read_groups': gpu_walk_groups' extra pieces */
	int worker;       /* this one's number (0 to n - 1), for XFN */
};

/* A worker's block: read where IN says, then FN over it. */
static int read_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct rec_reader *r = wctx;
	uint64_t off, len;
	memcpy(&off, in->p, 8);
	memcpy(&len, in->p + 8, 8);
	r->block.len = 0;
	if (r->block.cap < len)
		cm_buf_grow(&r->block, (size_t)len);
	if (read_back(r->fd, r->block.p, (size_t)len, off) < 0)
		return -1;
	r->block.len = (size_t)len;
	return r->fn(r->wctx, &r->block, out);
}

/* What the places P[0..N) (an offset and a length, two uint64s, a place)
 * hold, read one after the other into R->block; *NEXT (when not NULL)
 * where the last one ends.  0, or -1 after a report. */
static int read_places(struct rec_reader *r, const char *p, size_t n, uint64_t *next)
{
	r->block.len = 0;
	for (size_t at = 0; at + 16 <= n; at += 16) {
		uint64_t off, len;
		memcpy(&off, p + at, 8);
		memcpy(&len, p + at + 8, 8);
		if (r->block.cap - r->block.len < len)
			cm_buf_grow(&r->block, (size_t)len);
		if (read_back(r->fd, r->block.p + r->block.len, (size_t)len, off) < 0)
			return -1;
		r->block.len += (size_t)len;
		if (next)
			*next = off + len;
	}
	return 0;
}

/* A worker's piece of --split's runs: each run read where IN says, one
 * after the other, then FN over them. */
static int read_runs(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct rec_reader *r = wctx;
	if (read_places(r, in->p, in->len, NULL) < 0)
		return -1;
	return r->fn(r->wctx, &r->block, out);
}

/* feed_runs' pieces to POOL as where their runs lie (read_runs'), for
 * workers that read their own: the feeding thread read every run itself
 * before, the render's pace on many CPUs, as feed_places says of the
 * blocks.  0, or -1 as cm_opool_put. */
static int feed_run_places(const cm_gpu *g, cm_opool *pool)
{
	const struct gpu_runs *rs = g->win.runs;
	cm_buf b = {0};
	size_t piece = 0;
	int rc = 0;
	for (size_t i = 0; i < rs->n && rc == 0; i++) {
		const struct gpu_run *r = &rs->v[i];
		uint64_t place[2] = {(uint64_t)r->off, r->len};
		cm_buf_put(&b, place, sizeof place);
		piece += r->len;
		if (piece >= (rs->piece ? rs->piece : CM_GPU_BLOCK) || r->last || i + 1 == rs->n) {
			rc = cm_opool_put(pool, &b);
			piece = 0;
		}
	}
	cm_buf_free(&b);
	return rc;
}

/* Records of the temporary file that are not records.  -1. */
static int damaged(void)
{
	return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file (its records are damaged)");
}

/* The blocks of the records file (cm_gpurec_block_write's: a 4-byte
 * length, then the bytes) to POOL as where each lies (an offset and a
 * length, two uint64s), PER blocks a piece; with LASTS (win.lasts: 1 +
 * the window index of each block's last record), each piece after three
 * uint64s: that of the block before it (0 before the first), that of its
 * own last block and the piece's number (read_groups' input; else
 * read_block's).  0, or -1 (after a report, or as cm_opool_put). */
static int feed_places(cm_opool *pool, int fd, int per, const cm_buf *lasts, uint64_t *pieces)
{
	cm_buf b = {0};
	uint64_t off = 0, before = 0, *nb = lasts ? (uint64_t *)lasts->p : NULL, piece = 0;
	size_t nlasts = lasts ? lasts->len / sizeof *nb : 0, i = 0;
	int rc = 0, k = 0;
	for (;; i++) {
		uint32_t len;
		uint64_t place[2];
		ssize_t got = cm_pread_all(fd, &len, 4, off);
		if (got == 0)
			break;
		if (got != 4) {
			rc = read_back_failed(got);
			break;
		}
		if (lasts && i >= nlasts) { /* more blocks than were written */
			rc = damaged();
			break;
		}
		if (lasts && !b.len) {
			uint64_t head[3] = {before, 0, piece++};
			cm_buf_put(&b, head, sizeof head);
		}
		place[0] = off + 4;
		place[1] = len;
		cm_buf_put(&b, place, sizeof place);
		if (lasts) { /* the piece so far ends in block I */
			memcpy(b.p + 8, &nb[i], 8);
			before = nb[i];
		}
		off += 4 + (uint64_t)len;
		if (++k == per) {
			if ((rc = cm_opool_put(pool, &b)) < 0)
				break;
			k = 0;
		}
	}
	if (!rc && b.len)
		rc = cm_opool_put(pool, &b);
	cm_buf_free(&b);
	if (pieces)
		*pieces = piece;
	return rc;
}

/* The piece head of read_groups' extra pieces (where a piece of records
 * has the group it goes on with, which no record's is). */
#define EXTRA_PIECE UINT64_MAX

/* gpu_walk_groups' NEXTRA extra pieces to POOL, numbered on from PIECE.
 * 0, or -1 as cm_opool_put. */
static int feed_extra(cm_opool *pool, int nextra, uint64_t piece)
{
	cm_buf b = {0};
	int rc = 0;
	for (int k = 0; k < nextra && rc == 0; k++) {
		uint64_t head[3] = {EXTRA_PIECE, (uint64_t)k, piece + (uint64_t)k};
		cm_buf_put(&b, head, sizeof head);
		rc = cm_opool_put(pool, &b);
	}
	cm_buf_free(&b);
	return rc;
}

/* The end of the records from P (below END) of the group Q (window indexes
 * Q * SPAN to Q * SPAN + SPAN - 1): the first record of another group, or
 * END.  NULL when the bytes are not records. */
static const char *group_end(const char *p, const char *end, uint64_t q, uint64_t span)
{
	while (p < end) {
		const char *rec = p;
		uint64_t ix;
		if (cm_gpurec_skip(&p, end, &ix) < 0)
			return NULL;
		if (ix / span != q)
			return rec;
	}
	return end;
}

/* A worker's whole groups: IN holds 1 + the window index of the last
 * record of the block before the piece (0: none) and of the piece's own
 * last block (feed_places: noted as the blocks were written, so that
 * neither block is read, nor walked, to find them; the block before was
 * read whole for its last record's group, a block more for every
 * CM_GPU_GROUP_BLOCKS), the piece's number, then where its blocks lie.  The piece is
 * read (as read_runs), less the records at its head of the group the
 * block before ends in (an earlier piece's worker has them), and with the
 * records after it of the group it ends in (read from the blocks that
 * follow it, as far as that group goes: at most a group's worth, and a
 * block at a time); then FN over them, which are whole groups. */
static int read_groups(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct rec_reader *r = wctx;
	const char *at, *end;
	uint64_t last1[3], off = 0, q; /* (last1[2]: the piece's number) */
	size_t head;
	int rc;
	cm_buf whole;
	memcpy(last1, in->p, sizeof last1);
	if (last1[0] == EXTRA_PIECE)
		return r->xfn(r->wctx, r->worker, last1[2], (int)last1[1], out);
	if (read_places(r, in->p + sizeof last1, in->len - sizeof last1, &off) < 0)
		return -1;
	at = r->block.p;
	end = r->block.p + r->block.len;
	/* the head that goes on from the block before */
	if (last1[0] && !(at = group_end(at, end, (last1[0] - 1) / r->span, r->span)))
		return damaged();
	head = (size_t)(at - r->block.p);
	/* the group the piece ends in, unless the head took all of it */
	rc = at < end && last1[1];
	q = rc ? (last1[1] - 1) / r->span : 0;
	while (rc) { /* the tail: the blocks after, while they go on with group Q */
		uint32_t len;
		const char *stop;
		ssize_t got = cm_pread_all(r->fd, &len, 4, off);
		if (got == 0)
			break;
		if (got != 4)
			return read_back_failed(got);
		r->ahead.len = 0;
		cm_buf_grow(&r->ahead, len);
		if (read_back(r->fd, r->ahead.p, len, off + 4) < 0)
			return -1;
		if (!(stop = group_end(r->ahead.p, r->ahead.p + len, q, r->span)))
			return damaged();
		cm_buf_put(&r->block, r->ahead.p, (size_t)(stop - r->ahead.p));
		rc = stop == r->ahead.p + len;
		off += 4 + (uint64_t)len;
	}
	whole.p = r->block.p + head;
	whole.len = whole.cap = r->block.len - head;
	return r->pfn(r->wctx, last1[2], &whole, out);
}

/* The whole window in memory, one block: piece 0 (gpu_walk_groups'). */
static int whole_groups(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct rec_reader *r = wctx;
	return r->pfn(r->wctx, 0, in, out);
}

/* The blocks in flight of the groups' pool of N workers: twice the
 * workers and 8 (opool.h's most), not the workers and 4.  Its sink hands
 * each piece's batches to the .pftrace's sequential part and waits while
 * that part's queue is full; meanwhile no slot frees, and a pool of 20
 * slots on 16 CPUs kept its workers about 3 ms of the sequential part's
 * work ahead of it, less than a piece's render often takes: the window's
 * phase went in turns, the sequential part waiting for pieces (0.23 s in
 * 35 waits, up to 20 ms) and the sink for room (0.28 s in 61), 0.50 s in
 * all.  With 40 slots (CUPTIMERGE_POOL_SLOTS=40, every pool's) the phase
 * took 0.34 s and the sequential part waited 0.14 s (1 GB pair, H100
 * host, bench/dev-perf16.sh, BENCHMARKS.md "Where the .pftrace's window
 * phase waits").  The testing aid CUPTIMERGE_PFT_AHEAD sets it (within
 * opool.h's bounds: no fewer than the workers and 4, no more than 2n + 8;
 * the bytes do not depend on it). */
static int ahead_slots(int n)
{
	const char *env = getenv("CUPTIMERGE_PFT_AHEAD");
	if (env && *env && atoi(env) > 0)
		return atoi(env);
	return 2 * n + 8;
}

/* The walk of gpu_walk_records and gpu_walk_groups: with the records in
 * the temporary file and READ not NULL, the pool's workers are READ
 * (rec_readers: FN and WCTX each worker's, SPAN the groups') over where
 * the blocks lie, as its feed queues them (read_groups': pieces of PER
 * blocks); else FN itself over the blocks gpu_feed_pool hands on. */
static int walk(const cm_gpu *g, int n, cm_opool_fn read, int per, uint64_t span, cm_opool_fn fn, gpu_piece_fn pfn,
		const struct gpu_extra *x, void **wctx, cm_opool_sink sink, void *sctx)
{
	cm_opool *pool;
	struct rec_reader *rd;
	void **rctx;
	int rc, fd;
	uint64_t pieces = 0;
	if (x)
		*x->done = 0;
	if (!pfn && (!read || !g->win.recs)) {
		pool = cm_opool_new(n, 0, fn, wctx, sink, sctx);
		rc = gpu_feed_pool(g, pool);
		return cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	}
	if (g->win.recs && fflush(g->win.recs) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	fd = g->win.recs ? fileno(g->win.recs) : -1;
	rd = cm_xcalloc((size_t)n, sizeof *rd);
	rctx = cm_xcalloc((size_t)n, sizeof *rctx);
	for (int i = 0; i < n; i++) {
		rd[i].fn = fn;
		rd[i].pfn = pfn;
		rd[i].wctx = wctx[i];
		rd[i].fd = fd;
		rd[i].span = span;
		rd[i].xfn = x ? x->fn : NULL;
		rd[i].worker = i;
		rctx[i] = &rd[i];
	}
	if (fd < 0) { /* (read_groups' walk of the one block in memory) */
		pool = cm_opool_new(n, 0, whole_groups, rctx, sink, sctx);
		rc = gpu_feed_pool(g, pool);
	} else if (read == read_groups) {
		/* the render's pieces far ahead of its sink (AHEAD), which waits
		 * on the .pftrace's sequential part */
		pool = cm_opool_new_ahead(n, ahead_slots(n), read, rctx, sink, sctx);
		rc = feed_places(pool, fd, per, &g->win.lasts, &pieces);
		if (x && x->n > 0 && rc == 0) { /* (after the last piece of records, in the same pool) */
			if (x->start)
				x->start(x->ctx, pieces);
			rc = feed_extra(pool, x->n, pieces);
			*x->done = 1;
		}
	} else {
		pool = cm_opool_new(n, 0, read, rctx, sink, sctx);
		rc = read == read_runs ? feed_run_places(g, pool) : feed_places(pool, fd, per, NULL, NULL);
	}
	rc = cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	for (int i = 0; i < n; i++) {
		cm_buf_free(&rd[i].block);
		cm_buf_free(&rd[i].ahead);
	}
	free(rd);
	free(rctx);
	return rc;
}

int gpu_walk_records(const cm_gpu *g, int n, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx)
{
	/* (one worker reads the blocks in turn) */
	cm_opool_fn read = n < 2 ? NULL : g->win.runs ? read_runs : read_block;
	return walk(g, n, read, 1, 0, fn, NULL, NULL, wctx, sink, sctx);
}

int gpu_walk_groups(const cm_gpu *g, int n, int per, uint64_t span, gpu_piece_fn fn, const struct gpu_extra *x,
		    void **wctx, cm_opool_sink sink, void *sctx)
{
	/* (pieces of several blocks at any N: each costs a look at the blocks
	 * either side of it) */
	return walk(g, n, read_groups, per < 1 ? 1 : per, span ? span : 1, NULL, fn, x, wctx, sink, sctx);
}
