/* cpuevent.c - what each event of the CPU trace tells C1's plan: the kind
 * of trace, the extent of its X events, its pids and metadata rows, the
 * profiler span events to drop, the External id candidates (into the index,
 * or spilled while the window is still being read) and, when cutting, each
 * event's note (cpucut.h).  And the plan's start and end, which both scans
 * share (cscan_plan_begin, cm_cpuplan_free). */
#include "config.h"
#include "cpu/cpuscan_int.h"
#include "base/ids.h"
#include "base/tmpfile.h"
#include "cpu/cpuindex.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* _as_float(event.get(KEY, 0.0)) for ts/dur; -1 after reporting an overflow. */
static int as_float(struct cscan *c, const struct scalar *v, const char *key, double *out)
{
	*out = 0.0;
	if (v->type < 0)
		return 0;
	if (v->float_rc == CM_PY_OVERFLOW)
		return cm_fail(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax),
				"traceEvents[%llu]: \"%s\" is an integer too large for a float",
				(unsigned long long)c->plan->events, key);
	if (v->float_rc == CM_PY_OK)
		*out = v->d;
	return 0;
}

/* float() of ts or dur for the operator index: as_float without the error
 * (an event it would refuse is refused anyway), NaN for it. */
static double span_float(const struct scalar *v)
{
	if (v->type < 0)
		return 0.0;
	if (v->float_rc == CM_PY_OVERFLOW)
		return NAN;
	return v->float_rc == CM_PY_OK ? v->d : 0.0;
}

/* A user annotation candidate's name, in the order of the candidates
 * (cm_cpuplan.ann_names): 1, or 0 after reporting. */
static int spill_name(struct cscan *c)
{
	cm_cpuplan *p = c->plan;
	uint32_t len = c->name.type == CM_J_STR && c->name_n < CM_ANN_NOT_STR ? (uint32_t)c->name_n : CM_ANN_NOT_STR;
	size_t n = len == CM_ANN_NOT_STR ? 0 : len;
	if (c->names_buf) {
		cm_buf_put(c->names_buf, &len, 4);
		cm_buf_put(c->names_buf, c->name_s, n);
		return 1;
	}
	if (!p->ann_names && !(p->ann_names = cm_temp_file("names")))
		return 0;
	if (fwrite(&len, 4, 1, p->ann_names) != 1 || (n && fwrite(c->name_s, 1, n, p->ann_names) != n)) {
		cm_error(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
		return 0;
	}
	return 1;
}

/* Without the window's id list (W, the window's read, runs at the same
 * time, see merge.c), every candidate goes to an unlinked temporary file, in
 * event order, for cm_cpuindex_apply (a record each, cpuindex.h).  Returns
 * 1, or 0 after reporting. */
static int spill(struct cscan *c, int64_t id, uint64_t index)
{
	cm_cpuplan *p = c->plan;
	unsigned char rec[CM_CAND_REC];
	int64_t pid = 0, tid = 0;
	double ts = span_float(&c->ts), end = ts + span_float(&c->dur);
	int bad = c->pid.int_rc != CM_PY_OK || c->tid.int_rc != CM_PY_OK || c->pid.i < INT64_MIN ||
		  c->pid.i > INT64_MAX || c->tid.i < INT64_MIN || c->tid.i > INT64_MAX;
	if (!bad) {
		pid = (int64_t)c->pid.i;
		tid = (int64_t)c->tid.i;
	}
	memcpy(rec, &id, 8);
	memcpy(rec + 8, &pid, 8);
	memcpy(rec + 16, &tid, 8);
	memcpy(rec + 24, &index, 8);
	memcpy(rec + 32, &ts, 8);
	memcpy(rec + 40, &end, 8);
	rec[48] = (unsigned char)((bad ? CM_CAND_BAD : 0) | (c->cat.word == W_CPU_OP ? CM_CAND_CPU_OP : 0));
	if (c->cat.word != W_CPU_OP && !spill_name(c))
		return 0;
	if (c->spill_buf) {
		cm_buf_put(c->spill_buf, rec, sizeof rec);
		p->n_ext_spill++;
		return 1;
	}
	if (!p->ext_spill && !(p->ext_spill = cm_temp_file("ids")))
		return 0;
	if (fwrite(rec, sizeof rec, 1, p->ext_spill) != 1) {
		cm_error(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
		return 0;
	}
	p->n_ext_spill++;
	return 1;
}

/* Count the events that tell what kind of trace this is: GPU activity and
 * CUDA API rows (Kineto's CPU+CUDA traces; torch's CPU activity set also
 * records the API), and the thread rows the merge itself writes, which
 * Kineto never writes: "thread N" with ts 0.0 (the repair stage writes ts 0,
 * an integer, so a repaired trace is not taken for a merged one). */
static void note_kind(struct cscan *c, int is_x)
{
	cm_cpuplan *p = c->plan;
	if (is_x && c->cat.type == CM_J_STR && c->cat.word == W_GPU)
		p->gpu_events++;
	else if (is_x && c->cat.type == CM_J_STR && c->cat.word == W_API)
		p->api_events++;
	else if (c->ph.type == CM_J_STR && c->ph.word == W_M && c->name.type == CM_J_STR &&
		 c->name.word == W_THREAD_NAME && c->argname.type == CM_J_STR && c->argname.word == W_THREAD_N &&
		 c->ts.type == CM_J_NUM && !c->ts.is_int && c->ts.float_rc == CM_PY_OK && c->ts.d == 0.0)
		p->merge_rows++;
}

/* Put the metadata row KEY into P's set, within its bound. */
void cscan_put_meta(cm_cpuplan *p, const void *key)
{
	if (p->meta_overflow)
		return;
	if (!p->meta)
		p->meta = cm_hmap_new(24, 0);
	if (cm_hmap_count(p->meta) >= CM_CPUSCAN_MAX_META && !cm_hmap_get(p->meta, key))
		p->meta_overflow = 1;
	else
		cm_hmap_put(p->meta, key, NULL);
}

/* Whether the scalar V is a JSON integer that fits in 64 bits. */
static int int64_value(const struct scalar *v)
{
	return v->type == CM_J_NUM && v->is_int && v->int_rc == CM_PY_OK && v->i >= INT64_MIN && v->i <= INT64_MAX;
}

/* A metadata event that names a row (process_name ... thread_sort_index)
 * into the set of rows the trace names, and the first process_name's
 * string as the program's name. */
static void note_meta(struct cscan *c)
{
	cm_cpuplan *p = c->plan;
	int64_t key[3];
	int thread;
	if (c->ph.type != CM_J_STR || c->ph.word != W_M || c->name.type != CM_J_STR || !int64_value(&c->pid))
		return;
	switch (c->name.word) {
	case W_PROCESS_NAME: key[0] = CM_META_PROCESS_NAME; break;
	case W_PROCESS_LABELS: key[0] = CM_META_PROCESS_LABELS; break;
	case W_PROCESS_SORT: key[0] = CM_META_PROCESS_SORT; break;
	case W_THREAD_NAME: key[0] = CM_META_THREAD_NAME; break;
	case W_THREAD_SORT: key[0] = CM_META_THREAD_SORT; break;
	default: return;
	}
	thread = key[0] >= CM_META_THREAD_NAME;
	if (thread && !int64_value(&c->tid))
		return;
	key[1] = (int64_t)c->pid.i;
	key[2] = thread ? (int64_t)c->tid.i : 0;
	if (c->meta_buf)
		cm_buf_put(c->meta_buf, key, sizeof key);
	else
		cscan_put_meta(p, key);
	if (key[0] == CM_META_PROCESS_NAME && !p->has_prog && c->argname.type == CM_J_STR && c->args_obj) {
		p->has_prog = 1;
		p->prog_name.len = 0;
		cm_buf_put(&p->prog_name, c->argname_s, c->argname_n);
	}
}

/* Add the event's pid, when it is an integer, to the trace's pid set. */
static void note_pid(struct cscan *c)
{
	cm_cpuplan *p = c->plan;
	int64_t pid;
	if (c->pid.type < 0 || c->pid.type == CM_J_STR || c->pid.int_rc != CM_PY_OK || c->pid.i < INT64_MIN ||
	    c->pid.i > INT64_MAX || p->pids_overflow)
		return;
	pid = (int64_t)c->pid.i;
	if (c->have_last_pid && pid == c->last_pid)
		return;
	c->last_pid = pid;
	c->have_last_pid = 1;
	if (!p->pids)
		p->pids = cm_hmap_new(8, 0);
	if (cm_hmap_count(p->pids) >= CM_CPUSCAN_MAX_PIDS && !cm_hmap_get(p->pids, &pid))
		p->pids_overflow = 1;
	else
		cm_hmap_put(p->pids, &pid, NULL);
}

/* An integer scalar that fits in 64 bits (*OUT), or 0. */
static int int64_of(const struct scalar *v, int64_t *out)
{
	if (v->type < 0 || v->type == CM_J_STR || v->int_rc != CM_PY_OK || !v->is_int || v->i < INT64_MIN ||
	    v->i > INT64_MAX)
		return 0;
	*out = (int64_t)v->i;
	return 1;
}

/* When cutting (cpucut.h): the note of the event just ended, and the steps
 * it may be.  0, or -1 after a report. */
static int cut_note(struct cscan *c, int is_x, int dropped)
{
	cm_cpucut *k = c->plan->cut;
	unsigned char rec[CM_CPUCUT_REC];
	int kind = CM_CUTK_ALWAYS, ph = c->ph.type == CM_J_STR ? c->ph.word : -1;
	int cat = c->cat.type == CM_J_STR ? c->cat.word : -1;
	double ts = span_float(&c->ts), dur = span_float(&c->dur), end;
	int64_t key = 0;
	int have_ts = c->ts.type >= 0 && c->ts.float_rc == CM_PY_OK && isfinite(ts);
	if (!have_ts || !isfinite(dur))
		dur = 0.0;
	end = is_x && dur > 0 ? ts + dur : ts;
	/* metadata and begin/end pairs (never cut in two) are kept */
	if (!dropped && ph != W_M && ph != W_PAIRPH && have_ts) {
		kind = CM_CUTK_SPAN;
		if (is_x && cat == W_API && int64_of(&c->corr, &key)) {
			kind = CM_CUTK_CALL;
			k->call_lo = key < k->call_lo ? key : k->call_lo;
			k->call_hi = key > k->call_hi ? key : k->call_hi;
			k->calls++;
		} else if (is_x && (cat == W_GPU || cat == W_SYNC) && int64_of(&c->corr, &key)) {
			kind = CM_CUTK_WORK;
			k->works++;
		} else if (ph == W_FLOWPH && int64_of(&c->id, &key)) {
			kind = cat == W_AC2G ? CM_CUTK_AC2G : CM_CUTK_FLOW;
			if (kind == CM_CUTK_FLOW) {
				k->flow_lo = key < k->flow_lo ? key : k->flow_lo;
				k->flow_hi = key > k->flow_hi ? key : k->flow_hi;
				k->flows++;
			}
		}
		if (is_x && cat != W_TRACE)
			kind |= CM_CUTK_X;
	}
	if (is_x && have_ts && c->name.type == CM_J_STR && c->name.word == W_STEP) {
		if (kind == (CM_CUTK_SPAN | CM_CUTK_X)) { /* for --split: which step */
			kind |= CM_CUTK_STEP;
			key = (int64_t)c->name.i;
		}
		k->steps_any++;
		if (k->mode == CM_CPUCUT_STEPS && c->name.i >= (cm_int)k->step_a && c->name.i <= (cm_int)k->step_b) {
			k->steps_found++;
			k->step_lo = ts < k->step_lo ? ts : k->step_lo;
			k->step_hi = end > k->step_hi ? end : k->step_hi;
		}
	}
	rec[0] = (unsigned char)kind;
	memcpy(rec + 1, &ts, 8);
	memcpy(rec + 9, &end, 8);
	memcpy(rec + 17, &key, 8);
	if (c->cut_buf) {
		cm_buf_put(c->cut_buf, rec, sizeof rec);
		return 0;
	}
	return cm_cpucut_fold(k, NULL, (const char *)rec, sizeof rec);
}

/* The event just ended: drop / keep, extent, External id index. */
int cscan_event_done(struct cscan *c)
{
	cm_cpuplan *p = c->plan;
	uint64_t index = p->events++;
	int dropped = (c->cat.type == CM_J_STR && c->cat.word == W_TRACE && c->name.type == CM_J_STR &&
		       c->name.word == W_PROF) ||
		      (c->name.type == CM_J_STR && (c->name.word == W_ITER || c->name.word == W_WINEND));
	int is_x = c->ph.type == CM_J_STR && c->ph.word == W_X;

	note_kind(c, is_x);
	note_meta(c);
	if (p->cut && cut_note(c, is_x, dropped) < 0)
		return 0;
	/* the index looks at every event, dropped or not */
	if (is_x && c->cat.type == CM_J_STR && (c->cat.word == W_CPU_OP || c->cat.word == W_USER_ANN) &&
	    c->pid.type >= 0 && c->pid.is_int && c->tid.type >= 0 && c->tid.is_int && c->args_obj &&
	    c->ext_id.type >= 0 && c->ext_id.type != CM_J_NULL) {
		if (c->ext_id.int_rc == CM_PY_OVERFLOW)
			return fail(c, "traceEvents[%llu]: \"External id\" is infinite or beyond 128 bits",
				    (unsigned long long)index);
		int64_t id;
		unsigned signs = 0;
		/* an id in [2^63, 2^64) is CUPTI's uint64: a key like the window's (base/ids.h) */
		if (c->ext_id.int_rc == CM_PY_OK && (c->ext_id.type == CM_J_NUM || c->ext_id.type == CM_J_STR ||
						    c->ext_id.type == CM_J_TRUE || c->ext_id.type == CM_J_FALSE) &&
		    cm_id_key(c->ext_id.i, &id, &signs)) {
			struct cm_ext_thread *t;
			p->ext_signs |= signs; /* the scan's or a worker's own plan */
			if (!c->ext) { /* the window is still being read: note it for later */
				if (!spill(c, id, index))
					return 0;
				t = NULL;
			} else {
				t = cm_hmap_get(c->ext, &id);
			}
			if (t) {
				if (c->pid.int_rc != CM_PY_OK || c->tid.int_rc != CM_PY_OK || c->pid.i < INT64_MIN ||
				    c->pid.i > INT64_MAX || c->tid.i < INT64_MIN || c->tid.i > INT64_MAX)
					return fail(c, "traceEvents[%llu]: pid or tid does not fit in 64 bits",
						    (unsigned long long)index);
				if (!t->thread)
					p->indexed++;
				t->thread = cm_ext_threads_number(&p->ext_threads, (int64_t)c->pid.i, (int64_t)c->tid.i);
			}
		}
	}
	if (dropped) {
		/* the profiler's span covers the whole recording, API calls
		 * made before the first operator too (crosscheck.c) */
		if (is_x && c->name.type == CM_J_STR && c->name.word == W_PROF && c->ts.type == CM_J_NUM &&
		    c->ts.float_rc == CM_PY_OK && c->dur.type == CM_J_NUM && c->dur.float_rc == CM_PY_OK) {
			p->prof_min_ts = cm_py_min(p->prof_min_ts, c->ts.d);
			p->prof_max_end = cm_py_max(p->prof_max_end, c->ts.d + cm_py_max(c->dur.d, 0.0));
		}
		if (p->ndropped == p->cap_dropped) {
			p->cap_dropped = p->cap_dropped ? 2 * p->cap_dropped : 8;
			p->dropped = cm_xrealloc(p->dropped, p->cap_dropped * sizeof *p->dropped);
		}
		p->dropped[p->ndropped++] = index;
		return 1;
	}
	if (c->ph.type == CM_J_STR && c->ph.word == W_M) {
		if (!c->seen_non_m)
			p->leading_m++;
	} else {
		c->seen_non_m = 1;
	}
	if (is_x && !(c->cat.type == CM_J_STR && c->cat.word == W_TRACE)) {
		double ts, dur;
		if (as_float(c, &c->ts, "ts", &ts) < 0 || as_float(c, &c->dur, "dur", &dur) < 0)
			return 0;
		p->min_ts = cm_py_min(p->min_ts, ts);
		p->max_end = cm_py_max(p->max_end, ts + cm_py_max(dur, 0.0));
		note_pid(c);
	}
	c->kept++;
	return 1;
}

/* A top-level "deviceProperties" value V (the last one counts, as in
 * Python's json): what the merge needs of it. */
void cscan_take_devprops(cm_cpuplan *p, const cm_jval *v)
{
	p->devprops = cm_kin_devices_read(&p->devices, v) ? CM_DEVPROPS_LISTED : CM_DEVPROPS_EMPTY;
}

void cscan_plan_begin(cm_cpuplan *plan, cm_cpucut *cut)
{
	memset(plan, 0, sizeof *plan);
	if ((plan->cut = cut))
		cm_cpucut_reset(cut);
	plan->min_ts = INFINITY;
	plan->max_end = 0.0;
	plan->prof_min_ts = INFINITY;
	plan->prof_max_end = -INFINITY;
}

void cm_cpuplan_free(cm_cpuplan *plan)
{
	cm_kin_devices_free(&plan->devices);
	free(plan->dropped);
	plan->dropped = NULL;
	if (plan->ext_spill)
		fclose(plan->ext_spill);
	plan->ext_spill = NULL;
	if (plan->ann_names)
		fclose(plan->ann_names);
	plan->ann_names = NULL;
	cm_hmap_free(plan->meta);
	plan->meta = NULL;
	cm_buf_free(&plan->prog_name);
	plan->has_prog = 0;
	if (plan->layout)
		fclose(plan->layout);
	plan->layout = NULL;
	cm_hmap_free(plan->pids);
	plan->pids = NULL;
	cm_ext_threads_free(&plan->ext_threads);
}

