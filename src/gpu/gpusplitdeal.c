/* gpusplitdeal.c - --split in a merge: the deal, the window's records read
 * once and each dealt to every group that keeps it.
 *
 * Workers (gpu_walk_records' pool) take the blocks of records: for each
 * record the groups that keep it (gpusplitmarks.c), the runs of records
 * the same groups keep, the notes that are no group's (an operator, a
 * cuda_event record's place, an event sync's lookup), and, when the
 * groups are planned as dealt, each group's plan part (gpuplan.c).  One
 * thread folds the blocks in window order into the groups' runs, the
 * notes into the tables, the plan parts into the groups' plans.  A file of
 * its own because it is the split's one walk of the records, with an
 * encoding of its own between the workers and the fold (the head, the
 * entries, the parts), which nothing else reads. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "gpu/gpusplit_int.h"
#include "gpu/gpusplitout_int.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
 * (HINT: gpu_splitmarks_span's). */
static uint64_t record_mask(const cm_gpu *g, const struct gpu_split *s, const cm_gpurec *r, size_t *hint)
{
	const cm_int *v = r->v;
	uint64_t m;
	int found;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER:
		return (r->flags & CM_REC_SPAN) ? gpu_splitmarks_span(g, s, v[CM_RA_START], v[CM_RA_END], hint) : 0;
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET:
		m = call_mask(s, v[CM_RG_CORR], &found);
		return found ? m : gpu_splitmarks_span(g, s, v[CM_RG_START], v[CM_RG_END], hint);
	case CM_REC_SYNC:
		m = call_mask(s, v[CM_RS_CORR], &found);
		return found ? m : gpu_splitmarks_span(g, s, v[CM_RS_START], v[CM_RS_END], hint);
	case CM_REC_OVERHEAD:
		return gpu_splitmarks_span(g, s, v[CM_RO_START], v[CM_RO_END], hint);
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
	size_t hint;                /* gpu_splitmarks_span's */
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

/* The deal (gpusplit_int.h). */
int gpu_splitdeal_run(cm_gpu *g, int workers)
{
	struct gpu_split *s = g->split;
	void **ctx;
	struct deal_worker *dw;
	int rc;
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
	return rc;
}
