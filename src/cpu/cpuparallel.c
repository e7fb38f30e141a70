/* cpuparallel.c - C1's parallel scan of the CPU trace.
 *
 * The same scanner (cpufields.c), run by worker threads over batches of
 * traceEvents cut by docsplit, each element checked and replayed into its
 * callbacks in one pass (cm_jvalid_replay).  A worker scans into a plan of its own for the batch;
 * the reading thread folds the batch plans into the trace's, in order:
 * counts add up, the extent folds (Python's min/max skip NaN the same way
 * in parts as whole), the leading "M" run continues only while no batch had
 * another event, and the index candidates and dropped events keep their
 * order.  Any fault - bad JSON, a bad shape, a bad value - sends the trace
 * to the careful yajl scan (cscan_careful), which names it. */
#include "config.h"
#include "cpu/cpuscan_int.h"
#include "base/opool.h"
#include "base/tmpfile.h"
#include "cpu/cpuindex.h"
#include "json/docsplit.h"
#include "json/jvalid.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CPU_BATCH (256u << 10)

struct cworker {
	struct cscan c;
	cm_cpuplan part;
	cm_buf spill, names, meta;
	cm_arena *arena;
	const cm_cpucut *main_cut; /* the trace's, when cutting: its mode and steps */
	cm_cpucut cut;             /* the batch's findings */
	cm_buf cutnotes;           /* the batch's notes */
};

/* A batch plan as the worker hands it back, followed by the dropped
 * indexes, the spilled candidates, their annotations' names, the metadata
 * rows, the program's name and the pids. */
struct cpart {
	uint64_t leading_m, gpu_events, api_events, merge_rows, ndropped, n_spill, npids, cut_bytes;
	uint64_t names_bytes, nmeta, prog_len;
	int saw_non_m, pids_overflow, has_prog;
	unsigned ext_signs;
	double min_ts, max_end, prof_min_ts, prof_max_end;
};

static int cworker_run(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct cworker *w = wctx;
	struct cscan *c = &w->c;
	cm_cpuplan *p = &w->part;
	struct cpart r;
	cm_diag_slot quiet = {0}, *was = cm_diag_defer_swap(&quiet);
	int ok = 1;
	cm_buf prog = p->prog_name; /* kept: the part's buffer */
	cm_hmap_free(p->pids);
	free(p->dropped);
	memset(p, 0, sizeof *p);
	p->prog_name = prog;
	p->prog_name.len = 0;
	p->min_ts = INFINITY;
	p->prof_min_ts = INFINITY;
	p->prof_max_end = -INFINITY;
	w->spill.len = 0;
	w->names.len = 0;
	w->meta.len = 0;
	if (w->main_cut) {
		cm_cpucut_reset(&w->cut);
		w->cut.mode = w->main_cut->mode;
		w->cut.step_a = w->main_cut->step_a;
		w->cut.step_b = w->main_cut->step_b;
		p->cut = &w->cut;
		w->cutnotes.len = 0;
	}
	c->seen_non_m = 0;
	c->have_last_pid = 0;
	c->skip = 0;
	cm_docsplit_elem e;
	for (size_t at = 0; ok && cm_docsplit_next(in, &at, &e);) {
		c->depth = 2;
		c->in_events = 1;
		p->events = e.index;
		c->sax.base = (uint64_t)e.end_offset;
		cm_arena_reset(w->arena);
		ok = cscan_replay(c, e.text, e.len, w->arena) && c->depth == 2;
	}
	cm_diag_drop(&quiet); /* the careful scan will say it */
	cm_diag_defer_swap(was);
	if (!ok)
		return -2;
	memset(&r, 0, sizeof r);
	r.leading_m = p->leading_m;
	r.saw_non_m = c->seen_non_m;
	r.gpu_events = p->gpu_events;
	r.api_events = p->api_events;
	r.merge_rows = p->merge_rows;
	r.ndropped = p->ndropped;
	r.n_spill = p->n_ext_spill;
	r.npids = p->pids ? cm_hmap_count(p->pids) : 0;
	r.pids_overflow = p->pids_overflow;
	r.ext_signs = p->ext_signs;
	r.min_ts = p->min_ts;
	r.max_end = p->max_end;
	r.names_bytes = w->names.len;
	r.nmeta = w->meta.len / 24;
	r.has_prog = p->has_prog;
	r.prog_len = p->prog_name.len;
	r.prof_min_ts = p->prof_min_ts;
	r.prof_max_end = p->prof_max_end;
	r.cut_bytes = w->main_cut ? w->cutnotes.len : 0;
	cm_buf_put(out, &r, sizeof r);
	cm_buf_put(out, p->dropped, p->ndropped * sizeof *p->dropped);
	cm_buf_put(out, w->spill.p, w->spill.len);
	cm_buf_put(out, w->names.p, w->names.len);
	cm_buf_put(out, w->meta.p, w->meta.len);
	cm_buf_put(out, p->prog_name.p, p->prog_name.len);
	for (size_t i = 0; p->pids && i < cm_hmap_slots(p->pids); i++) {
		const void *key;
		if (cm_hmap_slot(p->pids, i, &key))
			cm_buf_put(out, key, 8);
	}
	if (w->main_cut) {
		cm_buf_put(out, &w->cut, sizeof w->cut);
		cm_buf_put(out, w->cutnotes.p, w->cutnotes.len);
	}
	return 0;
}

struct cread {
	cm_input *in;
	cm_cpuplan *plan;
	cm_opool *pool;
	int seen_non_m, bad;
	cm_arena *arena;
};

/* Fold one batch plan into the trace's. */
static int cfold(void *sctx, cm_buf *out)
{
	struct cread *cr = sctx;
	cm_cpuplan *p = cr->plan;
	struct cpart r;
	const char *q = out->p;
	memcpy(&r, q, sizeof r);
	q += sizeof r;
	if (!cr->seen_non_m)
		p->leading_m += r.leading_m;
	cr->seen_non_m |= r.saw_non_m;
	p->gpu_events += r.gpu_events;
	p->api_events += r.api_events;
	p->merge_rows += r.merge_rows;
	p->ext_signs |= r.ext_signs;
	p->min_ts = cm_py_min(p->min_ts, r.min_ts);
	p->max_end = cm_py_max(p->max_end, r.max_end);
	p->prof_min_ts = cm_py_min(p->prof_min_ts, r.prof_min_ts);
	p->prof_max_end = cm_py_max(p->prof_max_end, r.prof_max_end);
	if (r.ndropped) {
		if (p->ndropped + r.ndropped > p->cap_dropped) {
			p->cap_dropped = 2 * (p->ndropped + r.ndropped);
			p->dropped = cm_xrealloc(p->dropped, p->cap_dropped * sizeof *p->dropped);
		}
		memcpy(p->dropped + p->ndropped, q, r.ndropped * sizeof *p->dropped);
		p->ndropped += r.ndropped;
		q += r.ndropped * sizeof *p->dropped;
	}
	if (r.n_spill) {
		if (!p->ext_spill && !(p->ext_spill = cm_temp_file("ids")))
			return -1;
		if (fwrite(q, CM_CAND_REC, r.n_spill, p->ext_spill) != r.n_spill)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
		p->n_ext_spill += r.n_spill;
		q += CM_CAND_REC * r.n_spill;
	}
	if (r.names_bytes) {
		if (!p->ann_names && !(p->ann_names = cm_temp_file("names")))
			return -1;
		if (fwrite(q, 1, r.names_bytes, p->ann_names) != r.names_bytes)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
		q += r.names_bytes;
	}
	for (uint64_t i = 0; i < r.nmeta; i++, q += 24)
		cscan_put_meta(p, q);
	if (r.has_prog && !p->has_prog) { /* the first batch's that has one */
		p->has_prog = 1;
		cm_buf_put(&p->prog_name, q, r.prog_len);
	}
	q += r.prog_len;
	p->pids_overflow |= r.pids_overflow;
	for (uint64_t i = 0; i < r.npids && !p->pids_overflow; i++, q += 8) {
		if (!p->pids)
			p->pids = cm_hmap_new(8, 0);
		if (cm_hmap_count(p->pids) >= CM_CPUSCAN_MAX_PIDS && !cm_hmap_get(p->pids, q))
			p->pids_overflow = 1;
		else
			cm_hmap_put(p->pids, q, NULL);
	}
	if (p->pids_overflow)
		q = out->p + sizeof r + r.ndropped * sizeof *p->dropped + CM_CAND_REC * r.n_spill + 8 * r.npids;
	if (p->cut) {
		cm_cpucut part;
		memcpy(&part, q, sizeof part);
		q += sizeof part;
		if (cm_cpucut_fold(p->cut, &part, q, (size_t)r.cut_bytes) < 0)
			return -1;
	}
	return 0;
}

/* The splitter's thread, a batch at a time in document order: count the
 * elements, hand the batch on.  (Where they lie the splitter notes itself:
 * cm_cpuplan.layout.) */
static int cbatch(void *ctx, cm_buf *b)
{
	struct cread *cr = ctx;
	cm_cpuplan *p = cr->plan;
	cm_docsplit_elem e;
	for (size_t at = 0; cm_docsplit_next(b, &at, &e);)
		p->events = e.index + 1; /* the index after the batch's last element */
	return cm_opool_put(cr->pool, b) < 0 ? -1 : 0;
}

/* A top-level member other than traceEvents. */
static int cmember(void *ctx, const char *key, size_t klen, const char *val, size_t vlen, int64_t end_offset)
{
	struct cread *cr = ctx;
	cm_cpuplan *p = cr->plan;
	const cm_jval *k, *v;
	cm_arena_reset(cr->arena);
	if (!(k = cm_docsplit_member_key(cr->arena, key, klen, val, vlen)))
		goto bad;
	if (k->len == 11 && !memcmp(k->s, "traceEvents", 11))
		goto bad; /* not an array */
	if (k->len == 9 && !memcmp(k->s, "traceName", 9))
		p->has_trace_name = 1;
	if (k->len == 6 && !memcmp(k->s, "events", 6))
		p->has_window_events = 1;
	if (k->len == 16 && !memcmp(k->s, "deviceProperties", 16)) {
		if (!(v = cm_jval_parse_py(cr->arena, val, vlen)))
			goto bad;
		cscan_take_devprops(p, v);
	}
	if (k->len == 19 && !memcmp(k->s, "baseTimeNanoseconds", 19)) {
		int rc;
		if (!(v = cm_jval_parse_py(cr->arena, val, vlen)))
			goto bad;
		switch (v->type) {
		case CM_J_NUM: rc = cm_py_int_of_number(v->s, v->len, &p->base_ns); break;
		case CM_J_STR: rc = cm_py_int_of_str(v->s, v->len, &p->base_ns); break;
		case CM_J_TRUE:
		case CM_J_FALSE: p->base_ns = v->type == CM_J_TRUE; rc = CM_PY_OK; break;
		default: rc = CM_PY_VALUE; break;
		}
		if (rc != CM_PY_OK)
			goto bad;
		p->has_base = 1;
	}
	(void)end_offset;
	return 0;
bad:
	cr->bad = 1;
	return -1;
}

/* The parallel scan, cutting with CUT (or not: NULL), on JOBS workers of
 * its own, or on CREW's (its JOBS workers, shared) when not NULL. */
int cscan_parallel(cm_input *in, cm_cpuplan *plan, int jobs, cm_ocrew *crew, cm_cpucut *cut)
{
	struct cread cr;
	struct cworker *w = cm_xcalloc((size_t)jobs, sizeof *w);
	void **wctx = cm_xcalloc((size_t)jobs, sizeof *wctx);
	cm_docsplit_sink ds = {cmember, cbatch, &cr, &plan->layout, cm_cpuscan_keys, &plan->read_stats.cut,
			       &plan->read_stats.cut_bytes, &plan->read_stats.cut_ran,
			       &plan->read_stats.cut_preempted};
	int seen = 0, rc, prc;
	cscan_plan_begin(plan, cut);
	memset(&cr, 0, sizeof cr);
	cr.in = in;
	cr.plan = plan;
	cr.arena = cm_arena_new();
	for (int i = 0; i < jobs; i++) {
		w[i].c.plan = &w[i].part;
		w[i].c.sax.in = in;
		w[i].c.spill_buf = &w[i].spill;
		w[i].c.names_buf = &w[i].names;
		w[i].c.meta_buf = &w[i].meta;
		w[i].c.cut_buf = &w[i].cutnotes;
		w[i].main_cut = cut;
		w[i].arena = cm_arena_new();
		wctx[i] = &w[i];
	}
	cr.pool = crew ? cm_opool_new_crew(crew, cworker_run, wctx, cfold, &cr)
		       : cm_opool_new(jobs, 0, cworker_run, wctx, cfold, &cr);
	cm_opool_set_stats(cr.pool, &plan->read_stats);
	cm_opool_set_done(cr.pool, cm_docsplit_done);
	rc = cm_docsplit_run(in, "traceEvents", CPU_BATCH, &ds, "reading the CPU trace", &seen);
	prc = cm_opool_finish(cr.pool);
	for (int i = 0; i < jobs; i++) {
		cm_arena_free(w[i].arena);
		cm_buf_free(&w[i].spill);
		cm_buf_free(&w[i].names);
		cm_buf_free(&w[i].meta);
		cm_buf_free(&w[i].part.prog_name);
		cm_buf_free(&w[i].c.name_text);
		cm_buf_free(&w[i].c.argname_text);
		cm_buf_free(&w[i].cutnotes);
		cm_hmap_free(w[i].part.pids);
		free(w[i].part.dropped);
	}
	free(w);
	free(wctx);
	cm_arena_free(cr.arena);
	plan->has_events = seen;
	if (rc == CM_DOCSPLIT_IOERR)
		return -1;
	if (rc == CM_DOCSPLIT_OK && !cr.bad && prc == 0)
		return 0;
	if (rc != CM_DOCSPLIT_INVALID && !cr.bad && prc == -1)
		return -1; /* reported (a temporary file) */
	/* the careful scan, from the start, says what is wrong */
	cm_cpuplan_free(plan);
	if (cm_input_rewind(in) < 0)
		return -1;
	rc = cscan_careful(in, NULL, plan, cut);
	plan->careful = 1;
	return rc;
}
