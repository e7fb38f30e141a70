/* gpusplit.c - --split in a merge, its first stage: the window's records
 * dealt to the files of the groups of steps (gpugroups.c then plans each
 * group over its own, gpusplitout.c writes them).
 *
 * A file of --split=steps must be what --steps gives for its steps: the
 * GPU rows its metadata names, its gpu_user_annotation spans and its
 * profiler span come from the records that --steps of its steps keeps,
 * not from all of them.  So, once the groups are known, the records are
 * read once and each is dealt to every group that keeps it, by gpucut.c's
 * rule with a group's range for the span (an API call by its own times;
 * GPU work and syncs with their call, through a table correlation -> the
 * groups that keep the call, made from the notes the digest kept; those
 * without a call, and overhead, by their own times).  A group's records are
 * not copied: they are runs of the window's own record store (a group's
 * steps are nearly contiguous in window order, so a run is most of a block),
 * and the walks of the plan and the render read those runs where the
 * window's records lie (gpurules.c).  Each record is planned and rendered
 * once a file it goes to, as in a run of --steps for each: the whole split
 * costs about what one plain merge does.  (Copying the records to a store
 * a group, in blocks and temporary files, wrote 84 MB of temporary files
 * where the plain merge writes 36 MB: BENCHMARKS.md.)
 *
 * A cuda_event record is drawn by no one; in a window of version 2 a sync
 * looks up where its event was last recorded, before it in window order.
 * The deal makes those lookups once, in window order, into cm_gpu's table
 * of the syncs' waits, which every group's render reads; a group's plan
 * leaves them (plan.ops_noted), so a cuda_event record may lie inside a
 * group's run without changing what the group writes, and one that follows
 * a group's record joins its run instead of cutting it in two.
 *
 * The walk also takes what the plain plan notes of every record whatever
 * the cut, for the check that the window and the trace belong together
 * (crosscheck.c): the extent of the records drawn when uncut, and the
 * deferred errors of overhead and sync records (status 1, as the plan
 * reports them).
 *
 * The groups' store (struct gpu_split) is made here and freed here, with
 * the tables their plans made. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/gpusplit_int.h"
#include "gpu/gpusplitout_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/opool.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
 * API calls' groups (make_marks) is made on one thread before the deal,
 * a search a call: 0.05 s of the 200 MB pair's split on 2 CPUs. */
static uint64_t span_mask(const cm_gpu *g, const struct gpu_split *s, cm_int start, cm_int end, size_t *hint)
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

/* The groups that keep the call of correlation CORR; 0 with *FOUND 0 when
 * the window has no such call. */
static uint64_t call_mask(const struct gpu_split *s, cm_int corr, int *found)
{
	const uint64_t *m;
	*found = 0;
	if (!s->marks || corr < INT64_MIN || corr > INT64_MAX || !(m = cm_idmap_get(s->marks, (int64_t)corr)))
		return 0;
	*found = 1;
	return *m;
}

/* The groups that keep record R: gpu_cut_keep's rule a group at a time
 * (HINT: span_mask's). */
static uint64_t record_mask(const cm_gpu *g, const struct gpu_split *s, const cm_gpurec *r, size_t *hint)
{
	const cm_int *v = r->v;
	uint64_t m;
	int found;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER:
		return (r->flags & CM_REC_SPAN) ? span_mask(g, s, v[CM_RA_START], v[CM_RA_END], hint) : 0;
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET:
		m = call_mask(s, v[CM_RG_CORR], &found);
		return found ? m : span_mask(g, s, v[CM_RG_START], v[CM_RG_END], hint);
	case CM_REC_SYNC:
		m = call_mask(s, v[CM_RS_CORR], &found);
		return found ? m : span_mask(g, s, v[CM_RS_START], v[CM_RS_END], hint);
	case CM_REC_OVERHEAD:
		return span_mask(g, s, v[CM_RO_START], v[CM_RO_END], hint);
	}
	return 0; /* a cuda_event record: drawn by none (the deal notes it for the syncs) */
}

/* What the plain plan judges of R whatever the cut (gpurules.c's rule):
 * its extent when drawn uncut, into [*LO, *HI], as gpuplan.c's cut_extent
 * notes it; its deferred error, and an API call's thread lookup, which
 * can fail.  (Not for a record that a group's plan part reads next: the
 * part looks up its thread, with the same report, and its extent is the
 * part's.  A hash lookup a call and the extent's arithmetic, twice, were
 * a sixth of the deal's CPU.)  0, or -1 after a report. */
static int record_uncut(cm_gpu *g, const cm_gpurec *r, double *lo, double *hi)
{
	cm_int start, end, tid;
	int fell, drawn;
	double ts, dur;
	if ((r->kind == CM_REC_RUNTIME || r->kind == CM_REC_DRIVER) && gpu_api_thread(g, r, &tid, &fell) < 0)
		return -1;
	if ((drawn = gpu_drawn_span(g, r, &start, &end)) <= 0)
		return drawn;
	ts = cm_jw_us_double(start - g->base_ns);
	dur = cm_jw_us_double(end - start);
	*lo = cm_py_min(*lo, ts);
	*hi = cm_py_max(*hi, ts + cm_py_max(dur, 0.0));
	return 0;
}

/* The user annotation whose span GPU work R widens (gpuplan.c: the window's
 * annotation of its correlation): 1 and *UA, or 0. */
static int record_ua(const cm_gpu *g, const cm_gpurec *r, int64_t *ua)
{
	const int64_t *ext;
	int64_t c;
	if ((r->kind != CM_REC_KERNEL && r->kind != CM_REC_MEMCPY && r->kind != CM_REC_MEMSET) || !g->link.uext ||
	    !cm_id_key(r->v[CM_RG_CORR], &c, NULL) || !(ext = cm_idmap_get(g->link.uext, c)))
		return 0;
	*ua = *ext;
	return 1;
}

/* The pool's work: a block of records into OUT as a head (the uncut
 * extent, two doubles; the length of the entries and of the block, two
 * uint64s), then the entries: a run (struct deal_run) for each stretch of
 * records one after the other that the same groups keep, a cuda_event
 * record right after one of them in it (it joins the runs of the record
 * before it); and notes, each (0: uint64, its kind: a byte, its body):
 * before an API call's run, struct gpu_op_note when it names an operator
 * or an annotation (what the plain plan of a window of version 2 notes of
 * every call: the operator lookups, a call each, on the workers here,
 * where the groups' plans would have made them again and each would have
 * written the shared tables); version 2, for a cuda_event record, where
 * its event was recorded, and for an event sync, the lookup of that place
 * (struct deal_wait).  Then the groups' plan parts, when planning as it
 * deals.  (An entry a record, folded on the one thread that takes the
 * blocks in order, was a fifth of the deal's fold and wrote 25 bytes a
 * record.) */
enum { DEAL_OP = 1, DEAL_EVENT, DEAL_WAIT };
struct deal_event {
	int64_t key[2]; /* (context, CUDA event) */
	struct wait_info w;
};
struct deal_wait { int64_t index, key[2]; };
/* A run: its groups (not 0), where it lies in the block and its length,
 * and the user annotations of its GPU work (ua_n of them, ids ua_lo to
 * ua_hi; gpu_group's). */
struct deal_run {
	uint64_t mask;
	uint32_t off, len;
	uint64_t ua_n;
	int64_t ua_lo, ua_hi;
};

struct deal_worker {
	cm_gpu *g;
	struct plan_part *part[64]; /* when planning as it deals: a group's notes of the block */
	uint64_t touched;           /* the groups with notes */
	size_t hint;                /* span_mask's */
	struct deal_run run;        /* the run in hand (mask 0: none) */
};

/* Note (0, KIND, the LEN bytes at P) into OUT. */
static void deal_note(cm_buf *out, char kind, const void *p, size_t len)
{
	uint64_t none = 0;
	cm_buf_put(out, &none, sizeof none);
	cm_buf_putc(out, kind);
	cm_buf_put(out, p, len);
}

/* The notes of record R that are not its groups': its operator, a
 * cuda_event record's place (version 2), an event sync's lookup. */
static void deal_notes(const cm_gpu *g, const cm_gpurec *r, cm_buf *out)
{
	struct gpu_op_note op;
	uint32_t type;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER:
		if (gpu_api_operator_find(g, r, 0, &op))
			deal_note(out, DEAL_OP, &op, sizeof op);
		break;
	case CM_REC_CUDAEVENT: {
		struct deal_event e = {{(int64_t)r->v[CM_RE_CTX], (int64_t)r->v[CM_RE_EVENT]},
				       {cm_tid_int32(r->v[CM_RE_STREAM]), cm_tid_int32(r->v[CM_RE_CORR])}};
		if (g->split->evmap)
			deal_note(out, DEAL_EVENT, &e, sizeof e);
		break;
	}
	case CM_REC_SYNC:
		/* gpuplan.c's plan_sync, for every drawn event sync (the groups'
		 * renders ask for their own) */
		type = gpu_sync_type(r);
		if (g->version >= 2 && !(r->flags & CM_REC_DEFERRED) && gpu_sync_drawn(g, r) &&
		    (type == CM_SYNC_EVENT || type == CM_SYNC_STREAM_WAIT_EVENT)) {
			struct deal_wait dw = {(int64_t)r->index, {(int64_t)r->v[CM_RS_CTX], (int64_t)r->v[CM_RS_EVENT]}};
			deal_note(out, DEAL_WAIT, &dw, sizeof dw);
		}
		break;
	}
}

/* The head of a deal's output. */
struct deal_head {
	double ext[2];
	uint64_t entries, block;
};

/* The run in hand of W, if any, to OUT. */
static void run_flush(struct deal_worker *w, cm_buf *out)
{
	if (w->run.mask)
		cm_buf_put(out, &w->run, sizeof w->run);
	w->run.mask = 0;
}

/* Record R at OFF (LEN bytes) in the block, kept by the groups M (0: none)
 * with user annotation UA when HAS, into W's runs: the run in hand grows
 * when R follows it and the same groups keep R, or R is a cuda_event
 * record; else R begins one. */
static void run_take(struct deal_worker *w, const cm_gpurec *r, uint64_t m, uint32_t off, uint32_t len, int has,
		     int64_t ua, cm_buf *out)
{
	struct deal_run *run = &w->run;
	int follows = run->mask && run->off + run->len == off;
	if (!m && !(follows && r->kind == CM_REC_CUDAEVENT))
		return;
	if (m && !(follows && m == run->mask)) {
		run_flush(w, out);
		*run = (struct deal_run){m, off, 0, 0, 0, 0};
	}
	run->len += len;
	if (has) {
		run->ua_lo = !run->ua_n || ua < run->ua_lo ? ua : run->ua_lo;
		run->ua_hi = !run->ua_n || ua > run->ua_hi ? ua : run->ua_hi;
		run->ua_n++;
	}
}

static int deal_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct deal_worker *w = wctx;
	cm_gpu *g = w->g;
	struct gpu_split *s = g->split;
	const char *p = in->p, *end = in->p + in->len;
	struct deal_head h = {{INFINITY, -INFINITY}, 0, in->len};
	cm_gpurec r;
	cm_buf_put(out, &h, sizeof h);
	w->touched = 0;
	w->run.mask = 0;
	while (p < end) {
		const char *at = p;
		uint64_t m;
		int64_t ua = 0;
		int has = 0;
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "a temporary file was corrupted");
		m = record_mask(g, s, &r, &w->hint);
		if (!(m && s->plan_view) && record_uncut(g, &r, &h.ext[0], &h.ext[1]) < 0)
			return -1;
		deal_notes(g, &r, out);
		if (m)
			has = record_ua(g, &r, &ua);
		run_take(w, &r, m, (uint32_t)(at - in->p), (uint32_t)(p - at), has, ua, out);
		if (!m || !s->plan_view)
			continue;
		for (uint64_t k = m; k; k &= k - 1) { /* its groups' plans */
			int i = __builtin_ctzll(k);
			if (!w->part[i])
				w->part[i] = gpu_plan_part_new(s->plan_view);
			if (!(w->touched & ((uint64_t)1 << i)))
				gpu_plan_part_reset(w->part[i]);
			w->touched |= (uint64_t)1 << i;
			if (gpu_plan_part_record(w->part[i], &r) < 0)
				return -1;
		}
	}
	run_flush(w, out);
	for (uint64_t k = w->touched; k; k &= k - 1) { /* the extent of the records planned */
		double lo, hi;
		gpu_plan_part_extent(w->part[__builtin_ctzll(k)], &lo, &hi);
		h.ext[0] = cm_py_min(h.ext[0], lo);
		h.ext[1] = cm_py_max(h.ext[1], hi);
	}
	h.entries = out->len - sizeof h;
	memcpy(out->p, &h, sizeof h);
	/* then (group: uint32, length: uint32, the part) for each group planned */
	for (uint64_t k = w->touched; k; k &= k - 1) {
		uint32_t i = (uint32_t)__builtin_ctzll(k), len;
		size_t at = out->len;
		cm_buf_put(out, &i, sizeof i);
		cm_buf_put(out, &i, sizeof i); /* the length, below */
		gpu_plan_part_emit(w->part[i], out);
		len = (uint32_t)(out->len - at - 2 * sizeof i);
		memcpy(out->p + at + sizeof i, &len, sizeof len);
	}
	return 0;
}

/* LEN bytes of records at OFF (in the records' file, or the one block) to
 * group GR's runs: the last one grows when they follow it. */
static void run_add(struct gpu_group *gr, int64_t off, uint32_t len)
{
	struct gpu_runs *rs = &gr->rs;
	struct gpu_run *last = rs->n ? &rs->v[rs->n - 1] : NULL;
	if (last && last->off + last->len == off && last->len <= UINT32_MAX - len) {
		last->len += len;
		return;
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 16;
		rs->v = cm_xrealloc(rs->v, rs->cap * sizeof *rs->v);
	}
	rs->v[rs->n++] = (struct gpu_run){off, len, 0};
}

/* A note of the deal, in window order: an operator into the tables;
 * where a cuda_event record's event was recorded; an event sync's lookup
 * of that into the table of the waits.  Returns the bytes read at P. */
static size_t deal_apply(cm_gpu *g, struct gpu_split *s, const char *p)
{
	struct gpu_op_note op;
	struct deal_event e;
	struct deal_wait dw;
	const struct wait_info *w;
	switch (*p++) {
	case DEAL_OP:
		memcpy(&op, p, sizeof op);
		gpu_api_operator_note(g, &op);
		return 1 + sizeof op;
	case DEAL_EVENT:
		memcpy(&e, p, sizeof e);
		*(struct wait_info *)cm_hmap_put(s->evmap, e.key, NULL) = e.w;
		return 1 + sizeof e;
	default: /* DEAL_WAIT */
		memcpy(&dw, p, sizeof dw);
		if ((w = cm_hmap_get(s->evmap, dw.key)) != NULL) {
			struct wait_info copy = *w;
			*(struct wait_info *)cm_hmap_put(g->plan.waits, &dw.index, NULL) = copy;
		}
		return 1 + sizeof dw;
	}
}

/* The pool's sink: a block's records to their groups' runs, in window
 * order. */
static int deal_fold(void *sctx, cm_buf *out)
{
	cm_gpu *g = sctx;
	struct gpu_split *s = g->split;
	const char *p = out->p + sizeof(struct deal_head), *end;
	struct deal_head h;
	double t0 = cm_now_s();
	int64_t base = s->next_block; /* where the block's records lie */
	memcpy(&h, out->p, sizeof h);
	end = p + h.entries;
	if (g->win.recs) { /* past its length */
		base += 4;
		s->next_block += 4 + (int64_t)h.block;
	}
	s->blocks++;
	s->block_bytes += h.block;
	s->ucut_min = cm_py_min(s->ucut_min, h.ext[0]);
	s->ucut_max = cm_py_max(s->ucut_max, h.ext[1]);
	while (p < end) {
		struct deal_run run;
		uint64_t m;
		memcpy(&m, p, sizeof m);
		if (!m) { /* a note: applied in window order, as the plan does */
			p += sizeof m;
			p += deal_apply(g, s, p);
			continue;
		}
		memcpy(&run, p, sizeof run);
		p += sizeof run;
		while (m) {
			struct gpu_group *gr = &s->grp[__builtin_ctzll(m)];
			m &= m - 1;
			if (run.ua_n) {
				gr->ua_lo = !gr->ua_n || run.ua_lo < gr->ua_lo ? run.ua_lo : gr->ua_lo;
				gr->ua_hi = !gr->ua_n || run.ua_hi > gr->ua_hi ? run.ua_hi : gr->ua_hi;
				gr->ua_n += run.ua_n;
			}
			run_add(gr, base + run.off, run.len);
		}
	}
	/* the groups' plans: each block's notes in window order, as
	 * cm_gpu_plan's parts (the view of the fold, its tables the group's
	 * for the while) */
	for (end = out->p + out->len; p < end;) {
		uint32_t k, len;
		memcpy(&k, p, sizeof k);
		memcpy(&len, p + sizeof k, sizeof len);
		p += 2 * sizeof k;
		gpu_split_swap(s->fold_view, &s->grp[k]);
		gpu_plan_fold_part(s->fold_view, p, len, &s->grp[k].span_notes);
		gpu_split_swap(s->fold_view, &s->grp[k]);
		p += len;
	}
	s->st.fold += cm_now_s() - t0;
	return 0;
}

/* The groups that keep each API call, from the digest's notes: the notes'
 * file read in parts of MARK_NOTES notes, each part's groups found on a
 * worker (span_mask: 0.015 s of the 200 MB pair's split, on the one
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
	size_t hint;      /* span_mask's */
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
		m = span_mask(w->g, w->g->split, note[1], note[2], &w->hint);
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

static int make_marks(cm_gpu *g, struct gpu_split *s, int jobs)
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

int cm_gpu_split(cm_gpu *g, const double *lo, const double *hi, size_t n, int jobs)
{
	struct gpu_split *s = cm_xcalloc(1, sizeof *s);
	int workers = jobs < 1 ? 1 : jobs, rc;
	void **ctx;
	struct deal_worker *dw;
	g->split = s;
	s->n = n;
	s->lo = lo;
	s->hi = hi;
	s->cur = -1;
	s->ucut_min = INFINITY;
	s->ucut_max = -INFINITY;
	s->grp = cm_xcalloc(n, sizeof *s->grp);
	s->max_hi = cm_xmalloc(n * sizeof *s->max_hi);
	s->inner = cm_xmalloc(2 * n * sizeof *s->inner);
	for (size_t k = 0; k < n; k++)
		s->max_hi[k] = k && s->max_hi[k - 1] > hi[k] ? s->max_hi[k - 1] : hi[k];
	for (size_t k = 0; k < n; k++) { /* a group's own part (span_mask) */
		s->inner[2 * k] = k && s->max_hi[k - 1] > lo[k] ? s->max_hi[k - 1] : lo[k];
		s->inner[2 * k + 1] = k + 1 < n && lo[k + 1] < hi[k] ? lo[k + 1] : hi[k];
	}
	for (size_t k = 0; k < n; k++) {
		struct gpu_group *gr = &s->grp[k];
		gr->devices = cm_hmap_new(8, sizeof(struct first_ts));
		gr->streams = cm_hmap_new(16, 8);
		gr->procs = cm_hmap_new(8, sizeof(struct first_ts));
		gr->threads = cm_hmap_new(16, 8);
		gr->spans_more = cm_hmap_new(24, sizeof(struct gpu_ann_span));
		gr->device_rows = cm_hmap_new(8, 0);
		gr->min_ts = INFINITY;
		gr->max_end_ts = 0.0;
		gr->runs = &gr->rs;
	}
	s->st.marks = cm_now_s();
	s->st.marks_cpu = cm_process_cpu_s();
	if (make_marks(g, s, workers) < 0)
		return -1;
	s->st.deal = cm_now_s();
	s->st.deal_cpu = cm_process_cpu_s();
	s->st.marks = s->st.deal - s->st.marks;
	s->st.marks_cpu = s->st.deal_cpu - s->st.marks_cpu;
	/* the correlations' annotations, noted as the records are dealt; the
	 * table of their spans that comes with it is a group's (plan_group) */
	if (g->version >= 2 && gpu_anns_tables(g, g->win.api_lo, g->win.api_hi, g->win.api_n) < 0)
		return -1;
	cm_idmap_free(g->ann.cspans);
	cm_hmap_free(g->ann.cspans_more);
	g->ann.cspans = NULL;
	g->ann.cspans_more = NULL;
	g->plan.ops_noted = 1;
	if (g->version >= 2) { /* the syncs' waits, made as dealt, read by every group's render */
		s->evmap = cm_hmap_new(16, sizeof(struct wait_info));
		if (!g->plan.waits)
			g->plan.waits = cm_hmap_new(8, sizeof(struct wait_info));
	}
	if (g->version < 2 && !g->remap) {
		/* the plans as the records are dealt: what else the parts would
		 * write (a version-2 sync's wait, a remap's counts) is not there */
		s->plan_view = cm_xmalloc(sizeof *s->plan_view);
		*s->plan_view = *g;
		s->plan_view->cut = CM_CUT_NONE;
		s->plan_view->split = NULL;
		s->fold_view = cm_xmalloc(sizeof *s->fold_view);
		*s->fold_view = *s->plan_view;
		memset(&s->fold_view->st, 0, sizeof s->fold_view->st);
	}
	ctx = cm_xcalloc((size_t)workers, sizeof *ctx);
	dw = cm_xcalloc((size_t)workers, sizeof *dw);
	for (int i = 0; i < workers; i++) {
		dw[i].g = g;
		ctx[i] = &dw[i];
	}
	rc = gpu_walk_records(g, workers, deal_block, ctx, deal_fold, g);
	s->st.deal = cm_now_s() - s->st.deal;
	s->st.deal_cpu = cm_process_cpu_s() - s->st.deal_cpu;
	for (int i = 0; i < workers; i++)
		for (int k = 0; k < 64; k++)
			gpu_plan_part_free(dw[i].part[k]);
	free(dw);
	free(ctx);
	if (s->fold_view) {
		g->st.x_events += s->fold_view->st.x_events;
		g->st.api_rows += s->fold_view->st.api_rows;
	}
	cm_hmap_free(s->evmap); /* the syncs have taken what they need */
	s->evmap = NULL;
	/* a walk's piece of runs: as many records as a block of the window
	 * holds on average.  A block is CM_GPU_BLOCK bytes of records and
	 * their names (gpudigest.c: as much work as before the names went
	 * to a table), so of records alone it is less, 2.4 times less in
	 * gen_trace's windows; pieces of CM_GPU_BLOCK bytes of records held
	 * 2.4 times a block's events, and each was rendered to as much more
	 * text, -j + 4 of them in flight: the 200 MB pair's split at -j 16
	 * peaked at 112 MB against the plain merge's 47 (heaptrack: 37 MB of
	 * rendered text, 11 MB of pieces read) */
	s->piece = s->blocks ? (size_t)(s->block_bytes / s->blocks) : CM_GPU_BLOCK;
	s->piece = s->piece < 4096 ? 4096 : s->piece > CM_GPU_BLOCK ? CM_GPU_BLOCK : s->piece;
	for (size_t k = 0; k < n; k++) {
		s->grp[k].rs.piece = s->piece;
		if (s->grp[k].rs.n)
			s->grp[k].rs.v[s->grp[k].rs.n - 1].last = 1;
	}
	g->plan.cut_min_ts = s->ucut_min;
	g->plan.cut_max_end = s->ucut_max;
	return rc;
}

void gpu_split_free(cm_gpu *g)
{
	struct gpu_split *s = g->split;
	if (!s)
		return;
	cm_gpu_split_select(g, -1);
	for (size_t k = 0; k < s->n; k++) {
		struct gpu_group *gr = &s->grp[k];
		free(gr->rs.v);
		cm_hmap_free(gr->devices);
		cm_hmap_free(gr->streams);
		cm_hmap_free(gr->procs);
		cm_hmap_free(gr->threads);
		cm_hmap_free(gr->device_rows);
		cm_hmap_free(gr->spans_more);
		cm_hmap_free(gr->cspans_more);
		cm_idmap_free(gr->spans);
		cm_idmap_free(gr->cspans);
	}
	for (size_t k = 0; k < s->n; k++)
		cm_buf_free(&s->grp[k].span_notes);
	free(s->grp);
	free(s->max_hi);
	free(s->inner);
	free(s->plan_view);
	free(s->fold_view);
	cm_idmap_free(s->marks);
	cm_hmap_free(s->evmap);
	free(s);
	g->split = NULL;
}
