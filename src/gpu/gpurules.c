/* gpurules.c - the rules more than one stage of the window applies, and the
 * walk of the records they share.  The plan and the render make the same
 * thread lookup (gpu_api_thread) and the same drop decision (gpu_dropped),
 * so that the metadata written before the CPU events agrees with the events
 * written after them; the plan, the render and the annotation spans all
 * walk the records on an ordered pool (gpu_walk_records).  Nothing here
 * calls into a stage: every stage may call here. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/cbid.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/opool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Report a problem with events[INDEX] (OFFSET: just past the event). */
int gpu_ev_error(const cm_gpu *g, uint64_t index, int64_t offset, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cm_error(CM_EXIT_DATA, g->wname, offset, "window: events[%llu]: %s", (unsigned long long)index, msg);
	return -1;
}

/* The thread row of an API record (tidrule.h): the CPU thread its
 * correlation links to, else the window's map, else the int32 id itself
 * (*fell set).  0, or -1 after a report (only when REPORT; without it the
 * caller knows the plan has checked the same lookup). */
int gpu_api_thread(const cm_gpu *g, const cm_gpurec *r, cm_int *tid, int *fell)
{
	cm_int pid = r->v[CM_RA_PID], corr = r->v[CM_RA_CORR];
	int32_t id = cm_tid_int32(r->v[CM_RA_RAWTID]);
	int64_t t, c;
	int rc;
	*fell = 0;
	if (cm_id_key(corr, &c, NULL)) {
		const struct gpu_corr_thread *l = cm_idmap_get(g->link.linked, c);
		if (l && l->thread && (cm_int)g->link.cpu_threads.v[l->thread - 1].pid == pid) {
			*tid = g->link.cpu_threads.v[l->thread - 1].tid;
			return 0;
		}
	}
	rc = pid < INT64_MIN || pid > INT64_MAX ? CM_TIDMAP_ABSENT
						: cm_tidmap_lookup(g->win.tidmap, (int64_t)pid, id, &t);
	switch (rc) {
	case CM_TIDMAP_FOUND: *tid = t; return 0;
	case CM_TIDMAP_ABSENT: *tid = id; *fell = 1; return 0;
	case CM_TIDMAP_BAD_MAP:
		return gpu_ev_error(g, r->index, r->offset,
				"thread_resource_map (or its entry for this process_id) is not an object");
	default:
		return gpu_ev_error(g, r->index, r->offset,
				"thread_resource_map entry for thread_id %d is not an integer of at most 64 bits",
				(int)id);
	}
}

/* The name of an API record's callback id (NAME: 64 bytes for "cbid_N"). */
const char *gpu_api_name(int driver, cm_int cbid, char *fallback)
{
	const char *name = cbid >= INT64_MIN && cbid <= INT64_MAX ? cm_cbid_name(driver, (int64_t)cbid) : NULL;
	if (name)
		return name;
	memcpy(fallback, "cbid_", 5);
	cm_py_int_format(cbid, fallback + 5);
	return fallback;
}

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

/* An overhead record that the rule drops. */
int gpu_dropped(const cm_gpu *g, const cm_gpurec *r)
{
	return (r->flags & CM_REC_ABR) && g->win.max_end > 0 && r->v[CM_RO_START] > g->win.max_end;
}

/* Kineto's sync type of a sync record: CUPTI's uint32 field. */
uint32_t gpu_sync_type(const cm_gpurec *r) { return (uint32_t)(unsigned __int128)r->v[CM_RS_TYPE]; }

/* Whether a sync record (without a deferred error) is drawn: in a window of
 * version 2, every one but a "Stream Wait Event" on a stream where no
 * kernel, copy or set ran: Kineto holds those back until the end and then
 * drops them as noise. */
int gpu_sync_drawn(const cm_gpu *g, const cm_gpurec *r)
{
	int64_t key[2];
	if (g->version < 2)
		return 0;
	if (gpu_sync_type(r) != CM_SYNC_STREAM_WAIT_EVENT)
		return 1;
	key[0] = (int64_t)r->v[CM_RS_DEV];
	key[1] = (int64_t)r->v[CM_RS_STREAM];
	return cm_hmap_get(g->win.act_streams, key) != NULL;
}

/* Whether record R is drawn when nothing is cut, and over which times:
 * the rule the plan applies before the cut, which --split's deal applies
 * to every record for the extent of the window uncut (crosscheck.c).  An
 * API call when its name is one the merge keeps; GPU work always; an
 * overhead record unless the rule drops it; a sync in a window of version
 * 2 when gpu_sync_drawn.  A deferred error (an overhead or sync record the
 * digest found wrong) is reported here, status 1, as the plan reports it.
 * The thread lookup of an API call is the caller's (gpu_api_thread).  1
 * with *START and *END (ns), 0 when not drawn, -1 after a report. */
int gpu_drawn_span(const cm_gpu *g, const cm_gpurec *r, cm_int *start, cm_int *end)
{
	int s, e;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER:
		if (!(r->flags & CM_REC_REGISTERED))
			return 0;
		s = CM_RA_START, e = CM_RA_END;
		break;
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET:
		s = CM_RG_START, e = CM_RG_END;
		break;
	case CM_REC_OVERHEAD:
		if (gpu_dropped(g, r))
			return 0;
		if (r->flags & CM_REC_DEFERRED)
			return gpu_ev_error(g, r->index, r->offset, "%.*s", (int)r->xlen, r->extra);
		s = CM_RO_START, e = CM_RO_END;
		break;
	case CM_REC_SYNC:
		if (g->version < 2)
			return 0;
		if (r->flags & CM_REC_DEFERRED)
			return gpu_ev_error(g, r->index, r->offset, "%.*s", (int)r->xlen, r->extra);
		if (!gpu_sync_drawn(g, r))
			return 0;
		s = CM_RS_START, e = CM_RS_END;
		break;
	default: /* a cuda_event record */
		return 0;
	}
	*start = r->v[s];
	*end = r->v[e];
	return 1;
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
	void *wctx;
	int fd;
	cm_buf block;
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

/* The blocks of the records file (cm_gpurec_block_write's: a 4-byte
 * length, then the bytes) to POOL as where each lies.  0, or -1 (after a
 * report, or as cm_opool_put). */
static int feed_places(cm_opool *pool, int fd)
{
	cm_buf b = {0};
	uint64_t off = 0;
	int rc = 0;
	for (;;) {
		uint32_t len;
		uint64_t place[2];
		ssize_t k = cm_pread_all(fd, &len, 4, off);
		if (k == 0)
			break;
		if (k != 4) {
			rc = read_back_failed(k);
			break;
		}
		place[0] = off + 4;
		place[1] = len;
		cm_buf_put(&b, place, sizeof place);
		if ((rc = cm_opool_put(pool, &b)) < 0)
			break;
		off += 4 + (uint64_t)len;
	}
	cm_buf_free(&b);
	return rc;
}

/* A worker's piece of --split's runs: each run read where IN says (an
 * offset and a length, two uint64s, a run), one after the other, then FN
 * over them. */
static int read_runs(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct rec_reader *r = wctx;
	r->block.len = 0;
	for (size_t at = 0; at + 16 <= in->len; at += 16) {
		uint64_t off, len;
		memcpy(&off, in->p + at, 8);
		memcpy(&len, in->p + at + 8, 8);
		if (r->block.cap - r->block.len < len)
			cm_buf_grow(&r->block, (size_t)len);
		if (read_back(r->fd, r->block.p + r->block.len, (size_t)len, off) < 0)
			return -1;
		r->block.len += (size_t)len;
	}
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

/* The blocks of the records file to POOL as where they lie, PER blocks a
 * piece (read_runs' input).  0, or -1 as feed_places. */
static int feed_pieces(cm_opool *pool, int fd, int per)
{
	cm_buf b = {0};
	uint64_t off = 0;
	int rc = 0, k = 0;
	for (;;) {
		uint32_t len;
		uint64_t place[2];
		ssize_t got = cm_pread_all(fd, &len, 4, off);
		if (got == 0)
			break;
		if (got != 4) {
			rc = read_back_failed(got);
			break;
		}
		place[0] = off + 4;
		place[1] = len;
		cm_buf_put(&b, place, sizeof place);
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
	return rc;
}

int gpu_walk_records(const cm_gpu *g, int n, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx)
{
	return gpu_walk_pieces(g, n, 1, fn, wctx, sink, sctx);
}

int gpu_walk_pieces(const cm_gpu *g, int n, int per, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx)
{
	cm_opool *pool;
	struct rec_reader *rd;
	void **rctx;
	int rc;
	/* (one worker reads the blocks in turn; but pieces of several blocks,
	 * for the render in groups, come from the file as on more workers:
	 * with pieces of one block, half of a trace's groups were a piece's
	 * first or last, which go as text) */
	if ((n < 2 && per <= 1) || !g->win.recs) {
		pool = cm_opool_new(n, 0, fn, wctx, sink, sctx);
		rc = gpu_feed_pool(g, pool);
		return cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	}
	if (fflush(g->win.recs) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	rd = cm_xcalloc((size_t)n, sizeof *rd);
	rctx = cm_xcalloc((size_t)n, sizeof *rctx);
	for (int i = 0; i < n; i++) {
		rd[i].fn = fn;
		rd[i].wctx = wctx[i];
		rd[i].fd = fileno(g->win.recs);
		rctx[i] = &rd[i];
	}
	pool = cm_opool_new(n, 0, g->win.runs || per > 1 ? read_runs : read_block, rctx, sink, sctx);
	rc = g->win.runs ? feed_run_places(g, pool)
	   : per > 1	 ? feed_pieces(pool, fileno(g->win.recs), per)
			 : feed_places(pool, fileno(g->win.recs));
	rc = cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	for (int i = 0; i < n; i++)
		cm_buf_free(&rd[i].block);
	free(rd);
	free(rctx);
	return rc;
}

int gpu_write_rendered(void *sctx, cm_buf *out) { return cm_evout_elements(sctx, out->p, out->len); }

/* Begin an X event: {"ph":"X","cat":CAT,"name":NAME,"pid":PID,"tid":TID */
void gpu_x_head(cm_buf *b, const char *cat, const char *name, size_t nlen, cm_int pid, cm_int tid)
{
	cm_buf_lit(b, "{\"ph\":\"X\",\"cat\":");
	cm_jw_string(b, cat, strlen(cat));
	cm_buf_lit(b, ",\"name\":");
	cm_jw_string(b, name, nlen);
	cm_buf_lit(b, ",\"pid\":");
	cm_jw_int(b, pid);
	cm_buf_lit(b, ",\"tid\":");
	cm_jw_int(b, cm_tid_export(tid));
}

/* Note an X event's extent (Python: min(min_ts, ts), max(max_end, ts + max(dur, 0))),
 * and whether it overlaps the CPU trace's span. */
void gpu_extent(cm_gpu *g, double ts, double dur)
{
	gpu_extent_into(g, &g->plan.min_ts, &g->plan.max_end_ts, &g->plan.x_events, &g->plan.x_outside, ts, dur);
	g->st.x_events++;
}

/* The ts and dur of a span: 1 ns wider on each side, as Kineto draws them. */
void gpu_span_times(const cm_gpu *g, const struct gpu_ann_span *sp, double *ts, double *dur)
{
	*ts = cm_py_max(cm_py_int_to_double(sp->start - g->base_ns) / 1000.0 - 0.001, 0.0);
	*dur = cm_py_max(cm_py_int_to_double(sp->end - sp->start) / 1000.0 + 0.002, 0.0);
}
