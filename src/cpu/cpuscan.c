/* cpuscan.c - C1, phase 1 over the CPU trace: one parse that keeps only counters, by
 * workers over batches in parallel, or by yajl when the fast path will not take it.
 *
 * Everything the output needs in front of the CPU events (the GPU metadata
 * goes before the first non-metadata event, and its thread rows depend on
 * External ids found anywhere in the trace) is learnt here, so the output
 * pass can copy the events as text.  Memory: the External id index, limited
 * to the ids the window links, and the indexes of the (normally three)
 * profiler span events the merge re-makes. */
#include "config.h"
#include "cpu/cpuscan.h"
#include "base/ids.h"
#include "cpu/cpuindex.h"
#include "cpu/cpucut.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "cpu/extindex.h"
#include "json/jval.h"
#include "base/tmpfile.h"
#include "json/saxread.h"
#include "json/docsplit.h"
#include "json/jvalid.h"
#include "base/opool.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fields of the event being read. */
enum field { F_NONE, F_PH, F_CAT, F_NAME, F_PID, F_TID, F_TS, F_DUR, F_ARGS, F_EXT, F_ARGNAME, F_ID, F_CORR };

/* A captured scalar: its type and, for numbers and strings, what matters. */
struct scalar {
	int type;        /* CM_J_* or -1: absent */
	int is_int;      /* a JSON integer literal (or a boolean); for ts, only the literal */
	cm_int i;        /* its value */
	int int_rc;      /* cm_py_int_of_* result for numbers/strings */
	double d;        /* float() of it */
	int float_rc;
	int word;        /* strings: which of the words below, or 0 */
};

enum word {
	W_OTHER, W_M, W_X, W_TRACE, W_CPU_OP, W_USER_ANN, W_PROF, W_ITER, W_WINEND,
	W_GPU,         /* the categories of GPU activity: kernel, gpu_memcpy, gpu_memset */
	W_API,         /* cuda_runtime, cuda_driver */
	W_THREAD_NAME, /* the metadata event thread_name */
	W_THREAD_N,    /* args.name: "thread " and an integer, as the merge names API rows */
	/* the other metadata events of a row (cm_cpuplan.meta) */
	W_PROCESS_NAME, W_PROCESS_LABELS, W_PROCESS_SORT, W_THREAD_SORT,
	W_FLOWPH,      /* the phases of flow events: s, f, t */
	W_PAIRPH,      /* the phases of begin/end pairs: B, E (by thread), b, e, n (async, by id) */
	W_SYNC,        /* the category cuda_sync */
	W_AC2G,        /* the category ac2g */
	W_STEP,        /* the name "ProfilerStep#N" (N in i) */
};

struct cscan {
	cm_sax sax;
	cm_cpuplan *plan;
	cm_hmap *ext;
	int depth;           /* 0 outside; 1 in the top object; 2 in traceEvents; 3 in an event; 4 in args */
	int in_events;       /* the depth-1 value being read is traceEvents */
	int top_key_base;    /* the depth-1 key is baseTimeNanoseconds */
	int skip;            /* nesting inside a value we ignore */
	enum field field;    /* the depth-3 or depth-4 key just read */
	int args_obj;        /* the event's args is an object */
	struct scalar ph, cat, name, pid, tid, ts, dur, ext_id, argname, id, corr;
	uint64_t kept;       /* kept events so far */
	int seen_non_m;
	int64_t last_pid;    /* the pid last added to plan->pids (most events repeat it) */
	int have_last_pid;
	cm_buf *spill_buf;   /* a worker of the parallel scan: candidates go here */
	cm_buf *names_buf;   /* ... and the names of its user annotations (cm_cpuplan.ann_names) */
	cm_buf *meta_buf;    /* ... and its metadata rows (cm_cpuplan.meta), 24 bytes each */
	cm_buf name_text;    /* the event's "name", when a string: its text */
	cm_buf argname_text; /* its args.name, when a string */
	cm_buf *cut_buf;     /* ... and the notes for cutting (cpucut.h) */
	int top_key_props;   /* the depth-1 key is deviceProperties */
	int props_depth;     /* inside deviceProperties: its nesting, built into props */
	cm_jbuild props;
	cm_arena *props_arena;
};

static const char *cname(struct cscan *c) { return cm_input_name(c->sax.in); }

static int fail(struct cscan *c, const char *fmt, unsigned long long n)
{
	cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax), fmt, n);
	return 0;
}

static int fail_events(struct cscan *c)
{
	cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax), "\"traceEvents\" is not an array");
	return 0;
}

/* Which interesting word the string s[0..n) is. */
static int word_of(const char *s, size_t n)
{
	switch (n) {
	case 1:
		switch (s[0]) {
		case 'M': return W_M;
		case 'X': return W_X;
		case 's': case 'f': case 't': return W_FLOWPH;
		case 'B': case 'E': case 'b': case 'e': case 'n': return W_PAIRPH;
		default: return W_OTHER;
		}
	case 4: return !memcmp(s, "ac2g", 4) ? W_AC2G : W_OTHER;
	case 9: return !memcmp(s, "cuda_sync", 9) ? W_SYNC : W_OTHER;
	case 5: return !memcmp(s, "Trace", 5) ? W_TRACE : W_OTHER;
	case 6: return !memcmp(s, "cpu_op", 6) ? W_CPU_OP : !memcmp(s, "kernel", 6) ? W_GPU : W_OTHER;
	case 10: return !memcmp(s, "gpu_memcpy", 10) || !memcmp(s, "gpu_memset", 10) ? W_GPU : W_OTHER;
	case 11: return !memcmp(s, "cuda_driver", 11) ? W_API : !memcmp(s, "thread_name", 11) ? W_THREAD_NAME
											  : W_OTHER;
	case 12: return !memcmp(s, "cuda_runtime", 12) ? W_API : !memcmp(s, "process_name", 12) ? W_PROCESS_NAME
											   : W_OTHER;
	case 14: return !memcmp(s, "process_labels", 14) ? W_PROCESS_LABELS : W_OTHER;
	case 15: return !memcmp(s, "user_annotation", 15) ? W_USER_ANN : W_OTHER;
	case 17: return !memcmp(s, "Record Window End", 17) ? W_WINEND
		      : !memcmp(s, "thread_sort_index", 17) ? W_THREAD_SORT : W_OTHER;
	case 18: return !memcmp(s, "process_sort_index", 18) ? W_PROCESS_SORT : W_OTHER;
	case 20: return !memcmp(s, "PyTorch Profiler (0)", 20) ? W_PROF : W_OTHER;
	case 33: return !memcmp(s, "Iteration Start: PyTorch Profiler", 33) ? W_ITER : W_OTHER;
	default: return W_OTHER;
	}
}

/* Whether s[0..n) is "thread " and a decimal integer: the name the merge
 * gives the row of an API thread (Kineto writes "thread N (NAME)"). */
static int is_thread_n(const char *s, size_t n)
{
	size_t i = 7;
	if (n < 8 || memcmp(s, "thread ", 7))
		return 0;
	if (s[i] == '-' && ++i == n)
		return 0;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* Whether s[0..n) is "ProfilerStep#" and a decimal number (into *N):
 * the name of torch's step annotations, which --steps selects by. */
static int is_step(const char *s, size_t n, cm_int *num)
{
	cm_int v = 0;
	if (n < 14 || n > 13 + 18 || memcmp(s, "ProfilerStep#", 13))
		return 0;
	for (size_t i = 13; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*num = v;
	return 1;
}

static void capture(struct scalar *v, enum field f, int type, const char *s, size_t n)
{
	v->type = type;
	v->word = W_OTHER;
	v->is_int = 0;
	v->int_rc = CM_PY_VALUE;
	v->float_rc = CM_PY_VALUE;
	switch (type) {
	case CM_J_STR:
		if (f == F_PH || f == F_CAT || f == F_NAME) {
			v->word = word_of(s, n);
			if (f == F_NAME && is_step(s, n, &v->i))
				v->word = W_STEP;
		} else if (f == F_EXT)
			v->int_rc = cm_py_int_of_str(s, n, &v->i);
		else if (f == F_TS || f == F_DUR)
			v->float_rc = cm_py_float_of_str(s, n, &v->d);
		else if (f == F_ARGNAME && is_thread_n(s, n))
			v->word = W_THREAD_N;
		break;
	case CM_J_NUM:
		if (f == F_PID || f == F_TID || f == F_EXT || f == F_ID || f == F_CORR) {
			v->is_int = cm_json_number_is_int(s, n);
			v->int_rc = cm_py_int_of_number(s, n, &v->i);
		} else if (f == F_TS || f == F_DUR) {
			v->is_int = cm_json_number_is_int(s, n);
			v->float_rc = cm_py_float_of_number(s, n, &v->d);
		}
		break;
	case CM_J_TRUE:
	case CM_J_FALSE:
		/* bool is an int in Python: int(True) == 1, float(True) == 1.0 */
		v->is_int = 1;
		v->i = type == CM_J_TRUE;
		v->int_rc = CM_PY_OK;
		v->d = type == CM_J_TRUE;
		v->float_rc = CM_PY_OK;
		break;
	}
}

/* _as_float(event.get(KEY, 0.0)) for ts/dur; -1 after reporting an overflow. */
static int as_float(struct cscan *c, const struct scalar *v, const char *key, double *out)
{
	*out = 0.0;
	if (v->type < 0)
		return 0;
	if (v->float_rc == CM_PY_OVERFLOW)
		return cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax),
				"traceEvents[%llu]: \"%s\" is an integer too large for a float",
				(unsigned long long)c->plan->events, key),
		       -1;
	if (v->float_rc == CM_PY_OK)
		*out = v->d;
	return 0;
}

/* Without the window's id list (W, the window's read, runs at the same
 * time, see merge.c), every candidate goes to an unlinked temporary file, in
 * event order, for cm_cpuindex_apply (a record each, cpuindex.h).  Returns
 * 1, or 0 after reporting. */

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
	uint32_t len = c->name.type == CM_J_STR && c->name_text.len < CM_ANN_NOT_STR ? (uint32_t)c->name_text.len
										      : CM_ANN_NOT_STR;
	size_t n = len == CM_ANN_NOT_STR ? 0 : len;
	if (c->names_buf) {
		cm_buf_put(c->names_buf, &len, 4);
		cm_buf_put(c->names_buf, c->name_text.p, n);
		return 1;
	}
	if (!p->ann_names && !(p->ann_names = cm_temp_file("names")))
		return 0;
	if (fwrite(&len, 4, 1, p->ann_names) != 1 || (n && fwrite(c->name_text.p, 1, n, p->ann_names) != n)) {
		cm_error(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
		return 0;
	}
	return 1;
}

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
static void put_meta(cm_cpuplan *p, const void *key)
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
		put_meta(p, key);
	if (key[0] == CM_META_PROCESS_NAME && !p->has_prog && c->argname.type == CM_J_STR && c->args_obj) {
		p->has_prog = 1;
		p->prog_name.len = 0;
		cm_buf_put(&p->prog_name, c->argname_text.p, c->argname_text.len);
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
static int event_done(struct cscan *c)
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
static void take_devprops(cm_cpuplan *p, const cm_jval *v)
{
	p->devprops = cm_kin_devices_read(&p->devices, v) ? CM_DEVPROPS_LISTED : CM_DEVPROPS_EMPTY;
}

/* The careful scan builds deviceProperties (a small value) as it goes:
 * each SAX event inside it goes to the builder; the value's end takes it.
 * Returns 1 (building never fails below the parser's depth limit). */
static int props_event(struct cscan *c, int type, const char *s, size_t n, int close)
{
	if (close) {
		c->props_depth--;
		if (cm_jbuild_close(&c->props))
			take_devprops(c->plan, c->props.root);
	} else if (type == CM_J_ARR || type == CM_J_OBJ) {
		if (!c->props_depth++) {
			if (!c->props_arena)
				c->props_arena = cm_arena_new();
			cm_arena_reset(c->props_arena);
			cm_jbuild_begin(&c->props, c->props_arena);
		}
		cm_jbuild_open(&c->props, type);
	} else {
		cm_jbuild_scalar(&c->props, type, s, n);
	}
	return 1;
}

/* The base time value. */
static int base_value(struct cscan *c, int type, const char *s, size_t n)
{
	int rc;
	cm_cpuplan *p = c->plan;
	switch (type) {
	case CM_J_NUM: rc = cm_py_int_of_number(s, n, &p->base_ns); break;
	case CM_J_STR: rc = cm_py_int_of_str(s, n, &p->base_ns); break;
	case CM_J_TRUE:
	case CM_J_FALSE: p->base_ns = type == CM_J_TRUE; rc = CM_PY_OK; break;
	default: rc = CM_PY_VALUE; break;
	}
	if (rc != CM_PY_OK) {
		cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax),
			 "baseTimeNanoseconds is not an integer (or is beyond 128 bits)");
		return 0;
	}
	p->has_base = 1;
	return 1;
}

static struct scalar *field_slot(struct cscan *c)
{
	switch (c->field) {
	case F_PH: return &c->ph;
	case F_CAT: return &c->cat;
	case F_NAME: return &c->name;
	case F_PID: return &c->pid;
	case F_TID: return &c->tid;
	case F_TS: return &c->ts;
	case F_DUR: return &c->dur;
	case F_EXT: return &c->ext_id;
	case F_ARGNAME: return &c->argname;
	case F_ID: return &c->id;
	case F_CORR: return &c->corr;
	default: return NULL;
	}
}

static int on_scalar(struct cscan *c, int type, const char *s, size_t n)
{
	struct scalar *v;
	if (c->props_depth)
		return props_event(c, type, s, n, 0);
	if (c->skip)
		return 1;
	switch (c->depth) {
	case 0:
		cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax), "the top level is not an object");
		return 0;
	case 1:
		if (c->in_events)
			return fail_events(c);
		if (c->top_key_props)
			take_devprops(c->plan, NULL); /* not an array: no devices */
		return c->top_key_base ? base_value(c, type, s, n) : 1;
	case 2:
		return fail(c, "traceEvents[%llu] is not an object", (unsigned long long)c->plan->events);
	default:
		if (c->depth == 4 && c->field != F_EXT && c->field != F_ARGNAME && c->field != F_CORR)
			return 1;
		if (c->field == F_ARGS) {
			c->args_obj = 0;
			return 1;
		}
		v = field_slot(c);
		if (v)
			capture(v, c->field, type, s, n);
		/* the texts a user annotation's span and the metadata take */
		if (type == CM_J_STR && (c->field == F_NAME || c->field == F_ARGNAME)) {
			cm_buf *t = c->field == F_NAME ? &c->name_text : &c->argname_text;
			t->len = 0;
			cm_buf_put(t, s, n);
		}
		return 1;
	}
}

static int cb_null(void *c) { return on_scalar(c, CM_J_NULL, NULL, 0); }
static int cb_bool(void *c, int b) { return on_scalar(c, b ? CM_J_TRUE : CM_J_FALSE, NULL, 0); }
static int cb_number(void *c, const char *s, size_t n) { return on_scalar(c, CM_J_NUM, s, n); }
static int cb_string(void *c, const unsigned char *s, size_t n)
{
	return on_scalar(c, CM_J_STR, (const char *)s, n);
}

static void reset_event(struct cscan *c)
{
	c->ph.type = c->cat.type = c->name.type = c->pid.type = c->tid.type = -1;
	c->ts.type = c->dur.type = c->ext_id.type = c->argname.type = c->id.type = c->corr.type = -1;
	c->args_obj = 0;
	c->field = F_NONE;
}

static int on_open(struct cscan *c, int is_map)
{
	if (c->props_depth || (c->depth == 1 && c->top_key_props && !c->skip))
		return props_event(c, is_map ? CM_J_OBJ : CM_J_ARR, NULL, 0, 0);
	if (c->skip) {
		c->skip++;
		return 1;
	}
	switch (c->depth) {
	case 0:
		if (!is_map) {
			cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax), "the top level is not an object");
			return 0;
		}
		c->depth = 1;
		return 1;
	case 1:
		if (c->in_events) {
			if (is_map)
				return fail_events(c);
			c->depth = 2;
			return 1;
		}
		if (c->top_key_base) {
			cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax),
				 "baseTimeNanoseconds is not an integer");
			return 0;
		}
		c->skip = 1;
		return 1;
	case 2:
		if (!is_map)
			return fail(c, "traceEvents[%llu] is not an object", (unsigned long long)c->plan->events);
		reset_event(c);
		c->depth = 3;
		return 1;
	case 3:
		if (c->field == F_NAME) {
			cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax),
				 "traceEvents[%llu]: \"name\" is an %s (the merge compares names as keys)",
				 (unsigned long long)c->plan->events, is_map ? "object" : "array");
			return 0;
		}
		if (c->field == F_ARGS) {
			c->args_obj = is_map;
			c->ext_id.type = c->argname.type = c->corr.type = -1; /* a repeated "args": the last one counts */
			if (is_map) {
				c->depth = 4;
				c->field = F_NONE;
				return 1;
			}
		}
		/* a container for a captured field: it is neither a string nor a number */
		if (field_slot(c))
			capture(field_slot(c), c->field, is_map ? CM_J_OBJ : CM_J_ARR, NULL, 0);
		c->skip = 1;
		return 1;
	default: /* inside args */
		if (c->field == F_EXT || c->field == F_ARGNAME || c->field == F_CORR)
			capture(field_slot(c), c->field, is_map ? CM_J_OBJ : CM_J_ARR, NULL, 0);
		c->skip = 1;
		return 1;
	}
}

static int on_close(struct cscan *c)
{
	if (c->props_depth)
		return props_event(c, 0, NULL, 0, 1);
	if (c->skip) {
		c->skip--;
		return 1;
	}
	switch (c->depth) {
	case 4:
		c->depth = 3;
		c->field = F_NONE;
		return 1;
	case 3:
		c->depth = 2;
		return event_done(c);
	case 2:
		c->depth = 1;
		c->in_events = 0;
		return 1;
	default:
		c->depth = 0;
		return 1;
	}
}

static int cb_start_map(void *c) { return on_open(c, 1); }
static int cb_start_array(void *c) { return on_open(c, 0); }
static int cb_end(void *c) { return on_close(c); }

static int cb_map_key(void *cv, const unsigned char *k, size_t n)
{
	struct cscan *c = cv;
	const char *s = (const char *)k;
	if (c->props_depth) {
		cm_jbuild_key(&c->props, s, n);
		return 1;
	}
	if (c->skip)
		return 1;
	if (c->depth == 1) {
		c->in_events = n == 11 && !memcmp(s, "traceEvents", 11);
		c->top_key_base = n == 19 && !memcmp(s, "baseTimeNanoseconds", 19);
		c->top_key_props = n == 16 && !memcmp(s, "deviceProperties", 16);
		if (n == 9 && !memcmp(s, "traceName", 9))
			c->plan->has_trace_name = 1;
		if (n == 6 && !memcmp(s, "events", 6))
			c->plan->has_window_events = 1;
		if (c->in_events && c->plan->has_events++) {
			cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax),
				 "\"traceEvents\" appears twice in the top-level object");
			return 0;
		}
		return 1;
	}
	if (c->depth == 3) {
		switch (n) {
		case 2: c->field = !memcmp(s, "ph", 2) ? F_PH : F_NONE; break;
		case 3: c->field = !memcmp(s, "cat", 3) ? F_CAT : !memcmp(s, "pid", 3) ? F_PID
					: !memcmp(s, "tid", 3) ? F_TID : !memcmp(s, "dur", 3) ? F_DUR : F_NONE; break;
		case 4: c->field = !memcmp(s, "name", 4) ? F_NAME : !memcmp(s, "args", 4) ? F_ARGS : F_NONE; break;
		default: c->field = F_NONE; break;
		}
		if (n == 2 && !memcmp(s, "ts", 2))
			c->field = F_TS;
		else if (n == 2 && !memcmp(s, "id", 2))
			c->field = F_ID;
		return 1;
	}
	if (c->depth == 4)
		c->field = n == 11 && !memcmp(s, "External id", 11) ? F_EXT
			   : n == 4 && !memcmp(s, "name", 4)        ? F_ARGNAME
			   : n == 11 && !memcmp(s, "correlation", 11) ? F_CORR
								    : F_NONE;
	return 1;
}

static const yajl_callbacks cpu_callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end,
};

/* The careful scan, cutting with CUT (or not: NULL). */
static int run_careful(cm_input *in, cm_hmap *ext, cm_cpuplan *plan, cm_cpucut *cut)
{
	struct cscan c;
	int rc;
	memset(&c, 0, sizeof c);
	memset(plan, 0, sizeof *plan);
	if ((plan->cut = cut))
		cm_cpucut_reset(cut);
	plan->min_ts = INFINITY;
	plan->max_end = 0.0;
	plan->prof_min_ts = INFINITY;
	plan->prof_max_end = -INFINITY;
	c.plan = plan;
	c.ext = ext;
	rc = cm_sax_run(&c.sax, in, &cpu_callbacks, &c, "reading the CPU trace");
	cm_arena_free(c.props_arena);
	cm_buf_free(&c.name_text);
	cm_buf_free(&c.argname_text);
	return rc;
}

/* ------------------------------------------------------ the parallel scan
 *
 * The same scanner, run by worker threads over batches of traceEvents cut
 * by docsplit, each element checked and replayed into the callbacks above
 * in one pass (cm_jvalid_replay).  A worker scans into a plan of its own for the batch;
 * the reading thread folds the batch plans into the trace's, in order:
 * counts add up, the extent folds (Python's min/max skip NaN the same way
 * in parts as whole), the leading "M" run continues only while no batch had
 * another event, and the index candidates and dropped events keep their
 * order.  Any fault - bad JSON, a bad shape, a bad value - sends the trace
 * to the careful yajl scan above, which names it. */

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
	for (const cm_docsplit_elem *e = cm_docsplit_first(in); e && ok; e = cm_docsplit_next(in, e)) {
		const char *t = cm_docsplit_text(e);
		c->depth = 2;
		c->in_events = 1;
		p->events = e->index;
		c->sax.base = (uint64_t)e->end_offset;
		cm_arena_reset(w->arena);
		/* the callbacks read an event's members and those of its args
		 * (depths 1 and 2 inside the event); deeper values they skip,
		 * so the replay need not report them */
		ok = cm_jvalid_replay(t, e->len, 2, 2, &cpu_callbacks, c, w->arena) && c->depth == 2;
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
	cm_buf lenbuf;    /* a batch's element places, encoded */
	int64_t prev_end; /* the end of the element before the batch */
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
		put_meta(p, q);
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
 * elements, note where they lie (cm_cpuplan.layout), hand the batch on. */
static int cbatch(void *ctx, cm_buf *b)
{
	struct cread *cr = ctx;
	cm_cpuplan *p = cr->plan;
	cm_buf *lb = &cr->lenbuf;
	lb->len = 0;
	for (const cm_docsplit_elem *e = cm_docsplit_first(b); e; e = cm_docsplit_next(b, e)) {
		int64_t start = e->end_offset - (int64_t)e->len;
		p->events = e->index + 1; /* the index after the batch's last element */
		cm_buf_put_varint(lb, (uint64_t)(e->index ? start - cr->prev_end : start));
		cm_buf_put_varint(lb, e->len);
		cr->prev_end = e->end_offset;
	}
	if (lb->len) {
		if (!p->layout && !(p->layout = cm_temp_file("layout")))
			return -1;
		if (fwrite(lb->p, 1, lb->len, p->layout) != lb->len)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	}
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
		take_devprops(p, v);
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

/* The parallel scan, cutting with CUT (or not: NULL). */
static int run_parallel(cm_input *in, cm_cpuplan *plan, int jobs, cm_cpucut *cut)
{
	struct cread cr;
	struct cworker *w = cm_xcalloc((size_t)jobs, sizeof *w);
	void **wctx = cm_xcalloc((size_t)jobs, sizeof *wctx);
	cm_docsplit_sink ds = {cmember, cbatch, &cr};
	int seen = 0, rc, prc;
	memset(plan, 0, sizeof *plan);
	if ((plan->cut = cut))
		cm_cpucut_reset(cut);
	plan->min_ts = INFINITY;
	plan->max_end = 0.0;
	plan->prof_min_ts = INFINITY;
	plan->prof_max_end = -INFINITY;
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
	cr.pool = cm_opool_new(jobs, 0, cworker_run, wctx, cfold, &cr);
	cm_opool_set_stats(cr.pool, &plan->read_stats);
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
	cm_buf_free(&cr.lenbuf);
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
	rc = run_careful(in, NULL, plan, cut);
	plan->careful = 1;
	return rc;
}

int cm_cpuscan_run(cm_input *in, cm_hmap *ext, cm_cpuplan *plan) { return run_careful(in, ext, plan, NULL); }

int cm_cpuscan_run_parallel(cm_input *in, cm_cpuplan *plan, int jobs) { return run_parallel(in, plan, jobs, NULL); }

int cm_cpuscan_run_cut(cm_input *in, cm_cpuplan *plan, int jobs, struct cm_cpucut *cut)
{
	if (!jobs) {
		int rc = run_careful(in, NULL, plan, cut);
		plan->careful = 1;
		return rc;
	}
	return run_parallel(in, plan, jobs, cut);
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

cm_int cm_cpuscan_default_base(double now)
{
	/* Kineto's "trimester": the base is rounded down to this many seconds */
	const cm_int period = 7889238;
	cm_int s = (cm_int)now; /* int(): toward zero */
	cm_int q = s / period;
	if (s % period && s < 0)
		q--; /* Python's // floors */
	return q * period * 1000000000;
}
