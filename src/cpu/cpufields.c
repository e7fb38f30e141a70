/* cpufields.c - C1's reader: each event's fields, by yajl's callbacks over
 * the whole trace (the careful scan) or replayed from one checked element
 * by a worker of the parallel scan (cpuparallel.c); what an event tells the
 * plan is cpuevent.c's.  One read that keeps only counters.
 *
 * The callbacks track where they are (the top object, traceEvents, an
 * event, its args) and capture the scalars of the fields the plan needs:
 * the phase, category and name as one of cpuscan_int.h's words, the ids as
 * Python's int(), the times as its float().  The replay is the same
 * callbacks compiled into the validator's pass, its numbers read from the
 * digits as they are checked (the hot path of a parallel read). */
#include "config.h"
#include "cpu/cpuscan_int.h"
#include "json/docsplit.h"
#include "json/jvalid_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	case CM_J_NUM: /* the common texts by the inline fast paths (pyval.h) */
		if (f == F_PID || f == F_TID || f == F_EXT || f == F_ID || f == F_CORR) {
			int64_t i64;
			if (cm_py_int_literal(s, n, &i64)) {
				v->is_int = 1;
				v->i = i64;
				v->int_rc = CM_PY_OK;
			} else {
				v->is_int = cm_py_number_is_int(s, n);
				v->int_rc = cm_py_int_of_number(s, n, &v->i);
			}
		} else if (f == F_TS || f == F_DUR) {
			if (cm_py_decimal_fast(s, n, &v->d, &v->is_int)) {
				v->float_rc = CM_PY_OK;
			} else {
				v->is_int = cm_py_number_is_int(s, n);
				v->float_rc = cm_py_float_of_number(s, n, &v->d);
			}
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


/* The careful scan builds deviceProperties (a small value) as it goes:
 * each SAX event inside it goes to the builder; the value's end takes it.
 * Returns 1 (building never fails below the parser's depth limit). */
static int props_event(struct cscan *c, int type, const char *s, size_t n, int close)
{
	if (close) {
		c->props_depth--;
		if (cm_jbuild_close(&c->props))
			cscan_take_devprops(c->plan, c->props.root);
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

/* on_scalar outside an event's members and its args' (a top-level value,
 * a scalar in traceEvents, deviceProperties, a skipped value): the rare
 * cases, out of the way of the common one. */
static __attribute__((noinline)) int on_scalar_outer(struct cscan *c, int type, const char *s, size_t n)
{
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
			cscan_take_devprops(c->plan, NULL); /* not an array: no devices */
		return c->top_key_base ? base_value(c, type, s, n) : 1;
	default:
		return fail(c, "traceEvents[%llu] is not an object", (unsigned long long)c->plan->events);
	}
}

/* The text of a string field the merge keeps (the name, args.name) for the
 * event's end: borrowed where it stays put (the replay: in the event's text
 * or the worker's arena, both kept until the event is done), else copied
 * into BUF (yajl's buffer moves on).  *TS, *TN: where it is. */
static inline void keep_text(struct cscan *c, cm_buf *buf, const char **ts, size_t *tn, const char *s, size_t n)
{
	if (!c->borrow) {
		buf->len = 0;
		cm_buf_put(buf, s, n);
		s = buf->p ? buf->p : "";
	}
	*ts = s;
	*tn = n;
}

/* A scalar: inside an event (depth 3) or its args (depth 4) the field the
 * last key named (cb_map_key sets only the fields of its depth: at depth 4
 * External id, args.name, correlation or none) is captured, by the field's
 * own fast path for the common texts; anything else is on_scalar_outer's. */
static int on_scalar(struct cscan *c, int type, const char *s, size_t n)
{
	struct scalar *v;
	if (__builtin_expect(c->props_depth || c->skip || c->depth < 3, 0))
		return on_scalar_outer(c, type, s, n);
	switch (c->field) {
	case F_NONE:
		return 1;
	case F_ARGS:
		c->args_obj = 0;
		return 1;
	case F_TS:
	case F_DUR:
		v = c->field == F_TS ? &c->ts : &c->dur;
		if (type == CM_J_NUM && cm_py_decimal_fast(s, n, &v->d, &v->is_int)) {
			v->type = CM_J_NUM;
			v->word = W_OTHER;
			v->int_rc = CM_PY_VALUE;
			v->float_rc = CM_PY_OK;
			return 1;
		}
		break;
	case F_PID:
	case F_TID:
		v = c->field == F_PID ? &c->pid : &c->tid;
		if (type == CM_J_NUM) {
			int64_t i64;
			if (cm_py_int_literal(s, n, &i64)) {
				v->type = CM_J_NUM;
				v->word = W_OTHER;
				v->is_int = 1;
				v->i = i64;
				v->int_rc = CM_PY_OK;
				v->float_rc = CM_PY_VALUE;
				return 1;
			}
		}
		break;
	case F_NAME:
		capture(&c->name, F_NAME, type, s, n);
		if (type == CM_J_STR)
			keep_text(c, &c->name_text, &c->name_s, &c->name_n, s, n);
		return 1;
	case F_ARGNAME:
		capture(&c->argname, F_ARGNAME, type, s, n);
		if (type == CM_J_STR)
			keep_text(c, &c->argname_text, &c->argname_s, &c->argname_n, s, n);
		return 1;
	default:
		break;
	}
	v = field_slot(c);
	if (v)
		capture(v, c->field, type, s, n);
	return 1;
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
		return cscan_event_done(c);
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

/* (inline: in cscan_replay's copy of the scanner, where a key a member
 * made it the most called callback; on_scalar and on_close inline cost
 * more than their calls, the scanner's registers being short) */
static inline __attribute__((always_inline)) int cb_map_key(void *cv, const unsigned char *k, size_t n)
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

const yajl_callbacks cscan_callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end,
};

/* The same table, static: the replay below is compiled with it known, so
 * its callbacks are called directly (cscan_callbacks, external, could be
 * another table at run time for all the compiler knows). */
static const yajl_callbacks replay_callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end, cb_start_array, cb_end,
};

/* A number of the replay, its digits read by the validator (NUM): an
 * event's time or id the common way, from there (the same texts taken and
 * the same values as cm_py_decimal_fast and cm_py_int_literal, on_scalar's
 * fast paths); any other number, or elsewhere, as on_scalar reads it. */
/* (inline in cscan_replay's scanner, as cb_map_key) */
static inline __attribute__((always_inline)) int cb_number_dec(void *cv, const char *s, size_t n, const struct cm_jnum *num)
{
	static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
				     1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
	struct cscan *c = cv;
	struct scalar *v;
	if (__builtin_expect(c->props_depth || c->skip || c->depth < 3 || num->exp, 0))
		return on_scalar(c, CM_J_NUM, s, n);
	switch (c->field) {
	case F_NONE:
		return 1;
	case F_TS:
	case F_DUR:
		/* -?DIGITS(.DIGITS)?, 19 digits at most, M at most 2^53 */
		if (num->ni + num->nf > 19 || num->m > (UINT64_C(1) << 53))
			break;
		v = c->field == F_TS ? &c->ts : &c->dur;
		v->d = (double)num->m / p10[num->nf];
		if (num->neg)
			v->d = -v->d;
		v->is_int = !num->nf;
		v->type = CM_J_NUM;
		v->word = W_OTHER;
		v->int_rc = CM_PY_VALUE;
		v->float_rc = CM_PY_OK;
		return 1;
	case F_PID:
	case F_TID:
	case F_EXT:
	case F_ID:
	case F_CORR:
		/* -?DIGITS, 19 at most, fitting an int64 */
		if (num->nf || num->ni > 19 || num->m > (uint64_t)INT64_MAX + (uint64_t)num->neg)
			break;
		v = field_slot(c);
		v->i = num->neg ? (int64_t)(0 - num->m) : (int64_t)num->m;
		v->is_int = 1;
		v->type = CM_J_NUM;
		v->word = W_OTHER;
		v->int_rc = CM_PY_OK;
		v->float_rc = CM_PY_VALUE;
		return 1;
	default:
		break;
	}
	return on_scalar(c, CM_J_NUM, s, n);
}

int cscan_replay(struct cscan *c, const char *s, size_t n, cm_arena *arena)
{
	/* the callbacks read an event's members and those of its args
	 * (depths 1 and 2 inside the event); deeper values they skip, so
	 * the replay need not report them */
	c->borrow = 1;
	return cm_jvalid_replay_num(s, n, 2, 2, &replay_callbacks, cb_number_dec, c, arena);
}

const char *const cm_cpuscan_keys[] = {"traceName", "schemaVersion", "deviceProperties", NULL};

/* The careful scan, cutting with CUT (or not: NULL).  The text yajl reads
 * goes to the splitter's recorder too (saxread's tap), which notes the
 * trace's layout as the parallel scan's splitter does. */
int cscan_careful(cm_input *in, cm_hmap *ext, cm_cpuplan *plan, cm_cpucut *cut)
{
	struct cscan c;
	int rc, lrc;
	memset(&c, 0, sizeof c);
	cscan_plan_begin(plan, cut);
	c.plan = plan;
	c.ext = ext;
	c.sax.tap = cm_docsplit_record_feed;
	c.sax.tap_ctx = cm_docsplit_record_new("traceEvents", cm_cpuscan_keys);
	c.sax.array_key = "traceEvents"; /* values bounded as the splitter bounds them */
	rc = cm_sax_run(&c.sax, in, &cscan_callbacks, &c, "reading the CPU trace");
	/* a text yajl takes, the splitter takes (its top level is JSON's, to
	 * the letter): without a layout the copy says the text has changed */
	lrc = cm_docsplit_record_end(c.sax.tap_ctx, &plan->layout);
	if (rc == 0 && lrc == CM_DOCSPLIT_IOERR)
		rc = -1;
	cm_arena_free(c.props_arena);
	cm_buf_free(&c.name_text);
	cm_buf_free(&c.argname_text);
	return rc;
}
