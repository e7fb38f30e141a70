/* gpusplit.c - --split in a merge: the window's records dealt to the files
 * of the groups of steps, and each file's plan and render over its own.
 *
 * A file of --split=steps must be what --steps gives for its steps: the
 * GPU rows its metadata names, its gpu_user_annotation spans and its
 * profiler span come from the records that --steps of its steps keeps,
 * not from all of them.  So, once the groups are known, the records are
 * read once and each goes to the record store of every group that keeps it,
 * by gpucut.c's rule with a group's range for the span (an API call by its
 * own times; GPU work and syncs with their call, through a table
 * correlation -> the groups that keep the call, made from the notes the
 * digest kept; those without a call, and overhead, by their own times).  A
 * store is what cm_gpu's own records are (a block in memory, full blocks in
 * a temporary file), so the plan and the render run unchanged over a
 * group's store: selecting group K swaps its store and its plan tables
 * (rows, spans, extent, the syncs' waits) into cm_gpu, and takes the cut
 * off, since every record of the store is kept.  Each record is planned and
 * rendered once a file it goes to, as in a run of --steps for each: the
 * whole split costs about what one plain merge does.  The cuda_event
 * records (a version-2 sync looks up where its event was last recorded) go
 * to every store.
 *
 * The walk also takes what the plain plan notes of every record whatever
 * the cut, for the check that the window and the trace belong together
 * (crosscheck.c): the extent of the records drawn when uncut, and the
 * deferred errors of overhead and sync records (status 1, as the plan
 * reports them). */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/gpusplit_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/opool.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NOTE_BYTES 24 /* gpucut.c's notes: correlation, start, end (int64 each) */

#define SWAP(T, a, b)        \
	do {                 \
		T t_ = (a);  \
		(a) = (b);   \
		(b) = t_;    \
	} while (0)

/* Exchange group GR's store and plan with cm_gpu's. */
void gpu_split_swap(cm_gpu *g, struct gpu_group *gr)
{
	SWAP(cm_buf, g->win.block, gr->block);
	SWAP(FILE *, g->win.recs, gr->recs);
	SWAP(uint64_t, g->win.nrecs, gr->nrecs);
	SWAP(cm_hmap *, g->plan.devices, gr->devices);
	SWAP(cm_hmap *, g->plan.streams, gr->streams);
	SWAP(cm_hmap *, g->plan.procs, gr->procs);
	SWAP(cm_hmap *, g->plan.threads, gr->threads);
	SWAP(cm_hmap *, g->plan.device_rows, gr->device_rows);
	SWAP(cm_hmap *, g->plan.spans_more, gr->spans_more);
	SWAP(cm_hmap *, g->plan.waits, gr->waits);
	SWAP(cm_hmap *, g->ann.cspans_more, gr->cspans_more);
	SWAP(cm_idmap *, g->plan.spans, gr->spans);
	SWAP(cm_idmap *, g->ann.cspans, gr->cspans);
	SWAP(int, g->plan.need_overhead, gr->need_overhead);
	SWAP(double, g->plan.min_ts, gr->min_ts);
	SWAP(double, g->plan.max_end_ts, gr->max_end_ts);
	SWAP(uint64_t, g->plan.x_events, gr->x_events);
	SWAP(uint64_t, g->plan.x_outside, gr->x_outside);
	SWAP(void *, g->remap_ctx, gr->remap_ctx);
}

/* The groups whose ranges take [START, END] ns as gpucut.c's in_span does
 * under --steps (overlapping; an instant: in it).  The groups are sorted
 * by lo: a binary search finds those that start early enough, and the walk
 * back stops where none before reaches TS (s->max_hi, as cpucut.c's
 * groups_of does: testing all 60 groups a record was 1.6% of a split). */
static uint64_t span_mask(const cm_gpu *g, const struct gpu_split *s, cm_int start, cm_int end)
{
	double ts = cm_us_of_ns(start - g->base_ns), dur = cm_us_of_ns(end - start);
	uint64_t m = 0;
	size_t a = 0, b = s->n; /* the groups before b start early enough */
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

/* The groups that keep record R: gpu_cut_keep's rule a group at a time. */
static uint64_t record_mask(const cm_gpu *g, const struct gpu_split *s, const cm_gpurec *r)
{
	const cm_int *v = r->v;
	uint64_t m;
	int found;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER:
		return (r->flags & CM_REC_SPAN) ? span_mask(g, s, v[CM_RA_START], v[CM_RA_END]) : 0;
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET:
		m = call_mask(s, v[CM_RG_CORR], &found);
		return found ? m : span_mask(g, s, v[CM_RG_START], v[CM_RG_END]);
	case CM_REC_SYNC:
		m = call_mask(s, v[CM_RS_CORR], &found);
		return found ? m : span_mask(g, s, v[CM_RS_START], v[CM_RS_END]);
	case CM_REC_OVERHEAD:
		return span_mask(g, s, v[CM_RO_START], v[CM_RO_END]);
	}
	/* a cuda_event record: read by the syncs after it (version 2) */
	return g->version >= 2 ? (s->n < 64 ? ((uint64_t)1 << s->n) - 1 : ~(uint64_t)0) : 0;
}

/* The uncut extent, as gpuplan.c's cut_extent notes it. */
static void uncut_extent(const cm_gpu *g, double *lo, double *hi, cm_int start, cm_int end)
{
	double ts = cm_us_of_ns(start - g->base_ns), dur = cm_us_of_ns(end - start);
	*lo = cm_py_min(*lo, ts);
	*hi = cm_py_max(*hi, ts + cm_py_max(dur, 0.0));
}

/* What the plain plan judges of R whatever the cut: its extent when drawn,
 * its deferred error.  0, or -1 after a report. */
static int record_uncut(cm_gpu *g, const cm_gpurec *r, double *lo, double *hi)
{
	const cm_int *v = r->v;
	cm_int tid;
	int fell;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER:
		if (gpu_api_thread(g, r, &tid, &fell) < 0) /* the plan's lookup, which can fail */
			return -1;
		if (r->flags & CM_REC_REGISTERED)
			uncut_extent(g, lo, hi, v[CM_RA_START], v[CM_RA_END]);
		return 0;
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET:
		uncut_extent(g, lo, hi, v[CM_RG_START], v[CM_RG_END]);
		return 0;
	case CM_REC_OVERHEAD:
		if (gpu_dropped(g, r))
			return 0;
		if (r->flags & CM_REC_DEFERRED)
			return gpu_ev_error(g, r->index, r->offset, "%.*s", (int)r->xlen, r->extra);
		uncut_extent(g, lo, hi, v[CM_RO_START], v[CM_RO_END]);
		return 0;
	case CM_REC_SYNC:
		if (g->version < 2)
			return 0;
		if (r->flags & CM_REC_DEFERRED)
			return gpu_ev_error(g, r->index, r->offset, "%.*s", (int)r->xlen, r->extra);
		if (gpu_sync_drawn(g, r))
			uncut_extent(g, lo, hi, v[CM_RS_START], v[CM_RS_END]);
		return 0;
	}
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

/* The pool's work: a block of records into OUT as the uncut extent (two
 * doubles), then (groups: uint64, length: uint32, its annotation: a flag
 * byte and an int64, the record's bytes) for each record that some group
 * keeps, and before an API call's, (0: uint64, struct gpu_op_note) when
 * it names an operator or an annotation: what the plain plan of a window
 * of version 2 notes of every call (the operator lookups, a call each, on
 * the workers here, where the groups' plans would have made them again
 * and each would have written the shared tables). */
struct deal_worker {
	cm_gpu *g;
	struct plan_part *part[64]; /* when planning as it deals: a group's notes of the block */
	uint64_t touched;           /* the groups with notes */
};

static int deal_block(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct deal_worker *w = wctx;
	cm_gpu *g = w->g;
	struct gpu_split *s = g->split;
	const char *p = in->p, *end = in->p + in->len;
	double ext[2] = {INFINITY, -INFINITY};
	uint64_t reclen = 0;
	cm_gpurec r;
	cm_buf_put(out, ext, sizeof ext);
	cm_buf_put(out, &reclen, sizeof reclen);
	w->touched = 0;
	while (p < end) {
		const char *at = p;
		uint64_t m;
		uint32_t len;
		int64_t ua = 0;
		char has;
		struct gpu_op_note op;
		if (cm_gpurec_unpack(&p, end, &r) < 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "a temporary file was corrupted");
		if (record_uncut(g, &r, &ext[0], &ext[1]) < 0)
			return -1;
		if ((r.kind == CM_REC_RUNTIME || r.kind == CM_REC_DRIVER) && gpu_api_operator_find(g, &r, 0, &op)) {
			uint64_t none = 0; /* an operator note, not a record */
			cm_buf_put(out, &none, sizeof none);
			cm_buf_put(out, &op, sizeof op);
		}
		if (!(m = record_mask(g, g->split, &r)))
			continue;
		len = (uint32_t)(p - at);
		has = (char)record_ua(g, &r, &ua);
		cm_buf_put(out, &m, sizeof m);
		cm_buf_put(out, &len, sizeof len);
		cm_buf_putc(out, has);
		cm_buf_put(out, &ua, sizeof ua);
		cm_buf_put(out, at, len);
		if (!s->plan_view)
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
	memcpy(out->p, ext, sizeof ext);
	reclen = out->len - sizeof ext - sizeof reclen;
	memcpy(out->p + sizeof ext, &reclen, sizeof reclen);
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

/* A group's blocks: a quarter of cm_gpu's, since up to 64 fill at once
 * (60 blocks of 256 KiB were 15 MB of a 60-file split's peak); the render
 * takes a block a worker all the same. */
#define GROUP_BLOCK (CM_GPU_BLOCK / 4)

/* Group K's store: a full block goes to its temporary file.  0, or -1. */
static int store_flush(struct gpu_group *gr, int last)
{
	if (gr->block.len < (last ? 1 : GROUP_BLOCK))
		return 0;
	if (last && !gr->recs)
		return 0; /* all of it in the block, as a small cm_gpu keeps it */
	if (!gr->recs && !(gr->recs = cm_temp_file("records")))
		return -1;
	return cm_gpurec_block_write(gr->recs, &gr->block);
}

/* The pool's sink: a block's records to their groups' stores, in window
 * order. */
static int deal_fold(void *sctx, cm_buf *out)
{
	cm_gpu *g = sctx;
	struct gpu_split *s = g->split;
	const char *p = out->p + 2 * sizeof(double) + sizeof(uint64_t), *end;
	double ext[2];
	uint64_t reclen;
	memcpy(ext, out->p, sizeof ext);
	memcpy(&reclen, out->p + sizeof ext, sizeof reclen);
	end = p + reclen;
	s->ucut_min = cm_py_min(s->ucut_min, ext[0]);
	s->ucut_max = cm_py_max(s->ucut_max, ext[1]);
	while (p < end) {
		uint64_t m;
		uint32_t len;
		int64_t ua;
		int has;
		memcpy(&m, p, sizeof m);
		if (!m) { /* an operator note: applied in window order, as the plan does */
			struct gpu_op_note op;
			memcpy(&op, p + sizeof m, sizeof op);
			gpu_api_operator_note(g, &op);
			p += sizeof m + sizeof op;
			continue;
		}
		memcpy(&len, p + sizeof m, sizeof len);
		has = p[sizeof m + sizeof len];
		memcpy(&ua, p + sizeof m + sizeof len + 1, sizeof ua);
		p += sizeof m + sizeof len + 1 + sizeof ua;
		while (m) {
			struct gpu_group *gr = &s->grp[__builtin_ctzll(m)];
			m &= m - 1;
			if (has) {
				gr->ua_lo = !gr->ua_n || ua < gr->ua_lo ? ua : gr->ua_lo;
				gr->ua_hi = !gr->ua_n || ua > gr->ua_hi ? ua : gr->ua_hi;
				gr->ua_n++;
			}
			cm_buf_put(&gr->block, p, len);
			gr->nrecs++;
			if (store_flush(gr, 0) < 0)
				return -1;
		}
		p += len;
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
	return 0;
}

/* The groups that keep each API call, from the digest's notes. */
static int make_marks(cm_gpu *g, struct gpu_split *s)
{
	char buf[NOTE_BYTES * 1024];
	size_t got;
	if (!g->cut_napis)
		return 0;
	if (!(s->marks = cm_idmap_new(sizeof(uint64_t), g->win.api_lo, g->win.api_hi, g->win.api_n)))
		return -1;
	if (fflush(g->cut_apis) != 0 || fseek(g->cut_apis, 0, SEEK_SET) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
	while ((got = fread(buf, 1, sizeof buf, g->cut_apis)) > 0) {
		for (size_t i = 0; i + NOTE_BYTES <= got; i += NOTE_BYTES) {
			int64_t note[3];
			int created;
			uint64_t *m;
			memcpy(note, buf + i, sizeof note);
			m = cm_idmap_put(s->marks, note[0], &created);
			/* a correlation id twice: kept where either is */
			*m = (created ? 0 : *m) | span_mask(g, s, note[1], note[2]);
		}
	}
	if (ferror(g->cut_apis))
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
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
	for (size_t k = 0; k < n; k++)
		s->max_hi[k] = k && s->max_hi[k - 1] > hi[k] ? s->max_hi[k - 1] : hi[k];
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
	}
	if (make_marks(g, s) < 0)
		return -1;
	/* the correlations' annotations, noted as the records are dealt; the
	 * table of their spans that comes with it is a group's (plan_group) */
	if (g->version >= 2 && gpu_anns_tables(g, g->win.api_lo, g->win.api_hi, g->win.api_n) < 0)
		return -1;
	cm_idmap_free(g->ann.cspans);
	cm_hmap_free(g->ann.cspans_more);
	g->ann.cspans = NULL;
	g->ann.cspans_more = NULL;
	g->plan.ops_noted = 1;
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
	for (int i = 0; i < workers; i++)
		for (int k = 0; k < 64; k++)
			gpu_plan_part_free(dw[i].part[k]);
	free(dw);
	free(ctx);
	if (s->fold_view) {
		g->st.x_events += s->fold_view->st.x_events;
		g->st.api_rows += s->fold_view->st.api_rows;
	}
	for (size_t k = 0; rc == 0 && k < n; k++) {
		if (store_flush(&s->grp[k], 1) < 0 || (s->grp[k].recs && fflush(s->grp[k].recs) != 0))
			rc = -1;
		if (s->grp[k].recs) /* its records are all in the file */
			cm_buf_free(&s->grp[k].block);
	}
	/* the records are all in the stores now, and cm_gpu's are not read
	 * again: their pages go */
	if (rc == 0 && g->win.recs) {
		fclose(g->win.recs);
		g->win.recs = NULL;
		g->win.block.len = 0;
	}
	g->plan.cut_min_ts = s->ucut_min;
	g->plan.cut_max_end = s->ucut_max;
	return rc;
}

int cm_gpu_split_select(cm_gpu *g, int k)
{
	struct gpu_split *s = g->split;
	if (s->cur >= 0) {
		gpu_split_swap(g, &s->grp[s->cur]);
		g->cut = s->cut;
	}
	s->cur = k;
	if (k < 0)
		return 0;
	s->cut = g->cut;
	g->cut = CM_CUT_NONE; /* every record of the store is kept */
	gpu_split_swap(g, &s->grp[k]);
	return 0;
}

void cm_gpu_split_set_remap_ctx(cm_gpu *g, int k, void *ctx) { g->split->grp[k].remap_ctx = ctx; }

void cm_gpu_split_totals(cm_gpu *g)
{
	struct gpu_split *s = g->split;
	cm_gpu_split_select(g, -1);
	g->plan.x_events = g->plan.x_outside = 0;
	for (size_t k = 0; k < s->n; k++) {
		const struct gpu_group *gr = &s->grp[k];
		g->plan.x_events += gr->x_events;
		g->plan.x_outside += gr->x_outside;
		for (size_t i = 0; i < cm_hmap_slots(gr->procs); i++) {
			const int64_t *key;
			const struct first_ts *f = cm_hmap_slot(gr->procs, i, (const void **)&key);
			int created;
			struct first_ts *to;
			if (!f)
				continue;
			to = cm_hmap_put(g->plan.procs, key, &created);
			if (created || f->ns < to->ns)
				to->ns = f->ns;
		}
	}
}

void gpu_split_free(cm_gpu *g)
{
	struct gpu_split *s = g->split;
	if (!s)
		return;
	cm_gpu_split_select(g, -1);
	for (size_t k = 0; k < s->n; k++) {
		struct gpu_group *gr = &s->grp[k];
		cm_buf_free(&gr->block);
		if (gr->recs)
			fclose(gr->recs);
		cm_hmap_free(gr->devices);
		cm_hmap_free(gr->streams);
		cm_hmap_free(gr->procs);
		cm_hmap_free(gr->threads);
		cm_hmap_free(gr->device_rows);
		cm_hmap_free(gr->spans_more);
		cm_hmap_free(gr->waits);
		cm_hmap_free(gr->cspans_more);
		cm_idmap_free(gr->spans);
		cm_idmap_free(gr->cspans);
	}
	for (size_t k = 0; k < s->n; k++)
		cm_buf_free(&s->grp[k].span_notes);
	free(s->grp);
	free(s->max_hi);
	free(s->plan_view);
	free(s->fold_view);
	cm_idmap_free(s->marks);
	free(s);
	g->split = NULL;
}
