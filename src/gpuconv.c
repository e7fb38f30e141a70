/* gpuconv.c - trace-window events to Chrome-trace events, by the reference rules.
 *
 * One function, do_event(), holds the per-event rules of the reference merge
 * (PyTorch's _cupti_monitor_trace.py) and runs twice: in pass 2 without an
 * output, to check every field pass 3 will read and to note the rows and the
 * time extent; in pass 3 with one, to write the events.  Keeping a single
 * copy of the rules is what keeps the metadata of pass 2 and the events of
 * pass 3 in agreement.
 *
 * Python's semantics are kept where they show in the output: int() of
 * numbers, strings and booleans (pyval.h), str() of names, json.loads of
 * annotation strings and json.dumps of list annotations (jval.h), floats
 * computed with the same operations in the same order (no contraction, see
 * configure.ac), and dict semantics for repeated keys. */
#include "config.h"
#include "gpuconv.h"
#include "cbid.h"
#include "diag.h"
#include "exitcode.h"
#include "repair.h"
#include "tidrule.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pair {
	int64_t corr, ext;
	int user; /* external_kind == CUSTOM1 (4): a user annotation */
};

struct ua_ent {
	char *name; /* NUL-terminated copy, or NULL when the value is not a string */
	uint32_t len;
};

struct linked { int64_t pid, tid; };
/* Values kept in hash maps, whose slots are 8-aligned: 128-bit fields with
 * 8-byte alignment (GCC lets a typedef lower alignment). */
typedef cm_int cm_int_a8 __attribute__((aligned(8)));
struct first_ts { cm_int_a8 ns; };
struct span { cm_int_a8 start, end; };

/* CUpti_ExternalCorrelationKind CUSTOM1: the monitor's user annotations. */
#define USER_EXTERNAL_KIND 4
/* Overhead rows live in a process of their own, sorted after the others. */
#define OVERHEAD_PID (-1)
#define OVERHEAD_SORT_INDEX 0x1000000
/* GPU processes sort after CPU ones: Kineto's 5000000 + device. */
#define GPU_SORT_BASE 5000000

struct cm_gpu {
	const char *wname;
	cm_int base_ns;
	cm_arena *scratch; /* annotation values, per event */
	cm_buf text;       /* scratch text (names) */
	/* pass 1 */
	struct pair *pairs;
	size_t npairs, cap;
	cm_int max_end;  /* end of the last non-overhead activity */
	cm_hmap *ext;    /* ext id -> struct cm_ext_thread */
	int ua_dict;     /* user_annotations is an object */
	cm_hmap *ua;     /* ext id -> struct ua_ent */
	cm_tidmap *tidmap;
	/* resolved */
	cm_hmap *linked; /* correlation -> struct linked */
	cm_hmap *uext;   /* correlation -> user annotation ext id */
	/* pass 2 */
	cm_hmap *devices, *streams, *procs, *threads, *spans;
	int need_overhead;
	double min_ts, max_end_ts;
	struct cm_gpu_stats st;
	cm_repair *repair; /* or NULL */
};

void cm_gpu_set_repair(cm_gpu *g, cm_repair *r) { g->repair = r; }

void cm_gpu_mark_named(const cm_gpu *g, cm_repair *r)
{
	for (size_t i = 0; i < cm_hmap_slots(g->threads); i++) {
		const int64_t *key;
		if (cm_hmap_slot(g->threads, i, (const void **)&key))
			cm_repair_named(r, key[0], key[1]);
	}
}

cm_gpu *cm_gpu_new(const char *window_name)
{
	cm_gpu *g = cm_xcalloc(1, sizeof *g);
	g->wname = window_name;
	g->scratch = cm_arena_new();
	g->ext = cm_hmap_new(8, sizeof(struct cm_ext_thread));
	g->ua = cm_hmap_new(8, sizeof(struct ua_ent));
	g->tidmap = cm_tidmap_new();
	g->devices = cm_hmap_new(8, sizeof(struct first_ts));
	g->streams = cm_hmap_new(16, 8);
	g->procs = cm_hmap_new(8, sizeof(struct first_ts));
	g->threads = cm_hmap_new(16, 8);
	g->spans = cm_hmap_new(24, sizeof(struct span));
	g->min_ts = INFINITY;
	g->max_end_ts = 0.0;
	return g;
}

void cm_gpu_free(cm_gpu *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < cm_hmap_slots(g->ua); i++) {
		struct ua_ent *u = cm_hmap_slot(g->ua, i, NULL);
		if (u)
			free(u->name);
	}
	cm_hmap_free(g->ua);
	cm_hmap_free(g->ext);
	cm_hmap_free(g->linked);
	cm_hmap_free(g->uext);
	cm_hmap_free(g->devices);
	cm_hmap_free(g->streams);
	cm_hmap_free(g->procs);
	cm_hmap_free(g->threads);
	cm_hmap_free(g->spans);
	cm_tidmap_free(g->tidmap);
	cm_arena_free(g->scratch);
	cm_buf_free(&g->text);
	free(g->pairs);
	free(g);
}

cm_hmap *cm_gpu_linked_ext(cm_gpu *g) { return g->ext; }

void cm_gpu_stats(const cm_gpu *g, struct cm_gpu_stats *st) { *st = g->st; }

/* ------------------------------------------------------------ field access */

/* Report a problem with events[INDEX] (OFFSET: just past the event). */
static int ev_error(cm_gpu *g, uint64_t index, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int ev_error(cm_gpu *g, uint64_t index, int64_t offset, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cm_error(CM_EXIT_DATA, g->wname, offset, "window: events[%llu]: %s", (unsigned long long)index, msg);
	return -1;
}

/* Where the event being handled is, for messages. */
struct at {
	cm_gpu *g;
	uint64_t index;
	int64_t offset;
	const cm_jval *ev;
};

/* Python's _as_int(V) (V NULL: a missing key read with .get(key, 0)):
 * int() of a number or string, 0 when int() raises ValueError/TypeError;
 * an infinite number raises OverflowError in Python: an error here too. */
static int as_int(const struct at *a, const char *key, const cm_jval *v, cm_int *out)
{
	int rc;
	*out = 0;
	if (!v)
		return 0;
	switch (v->type) {
	case CM_J_NUM:
		rc = cm_py_int_of_number(v->s, v->len, out);
		break;
	case CM_J_STR:
		rc = cm_py_int_of_str(v->s, v->len, out);
		if (rc == CM_PY_VALUE) {
			*out = 0;
			rc = CM_PY_OK;
		}
		break;
	case CM_J_TRUE:
		*out = 1;
		return 0;
	default:
		return 0;
	}
	if (rc != CM_PY_OK)
		return ev_error(a->g, a->index, a->offset, "\"%s\": %.*s is infinite or beyond 128 bits", key,
				(int)(v->len > 40 ? 40 : v->len), v->s);
	return 0;
}

/* _as_int(event[KEY]) (REQUIRED: a missing key is an error, as the KeyError
 * of event[KEY]) or _as_int(event.get(KEY, 0)). */
static int int_field(const struct at *a, const char *key, int required, cm_int *out)
{
	const cm_jval *v = cm_jval_get(a->ev, key);
	if (!v && required)
		return ev_error(a->g, a->index, a->offset, "missing field \"%s\"", key);
	return as_int(a, key, v, out);
}

/* Narrow V to 64 bits for a table key. */
static int to_i64(const struct at *a, const char *key, cm_int v, int64_t *out)
{
	if (v < INT64_MIN || v > INT64_MAX)
		return ev_error(a->g, a->index, a->offset, "\"%s\" does not fit in 64 bits", key);
	*out = (int64_t)v;
	return 0;
}

/* The event's field KEY, which must exist. */
static const cm_jval *need(const struct at *a, const char *key)
{
	const cm_jval *v = cm_jval_get(a->ev, key);
	if (!v)
		ev_error(a->g, a->index, a->offset, "missing field \"%s\"", key);
	return v;
}

/* ------------------------------------------------------------------ pass 1 */

int cm_gpu_scan_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset)
{
	struct at a = {g, index, offset, ev};
	const cm_jval *kind = cm_jval_get(ev, "kind");
	cm_int end;
	g->st.events++;
	if (cm_jval_streq(kind, "external_correlation")) {
		cm_int corr, ext, ekind;
		if (int_field(&a, "correlation_id", 0, &corr) < 0 || int_field(&a, "external_id", 0, &ext) < 0 ||
		    int_field(&a, "external_kind", 0, &ekind) < 0)
			return -1;
		if (corr != 0) {
			struct pair p;
			if (to_i64(&a, "correlation_id", corr, &p.corr) < 0 || to_i64(&a, "external_id", ext, &p.ext) < 0)
				return -1;
			p.user = ekind == USER_EXTERNAL_KIND;
			if (g->npairs == g->cap) {
				g->cap = g->cap ? g->cap * 2 : 1024;
				g->pairs = cm_xrealloc(g->pairs, g->cap * sizeof *g->pairs);
			}
			g->pairs[g->npairs++] = p;
			cm_hmap_put(g->ext, &p.ext, NULL);
		}
	}
	if (!cm_jval_streq(kind, "overhead")) {
		if (int_field(&a, "end_ns", 0, &end) < 0)
			return -1;
		g->max_end = end > g->max_end ? end : g->max_end;
	}
	return 0;
}

/* int() of a map key (a JSON object member name).  0, or -1 after a report. */
static int key_int(cm_gpu *g, int64_t offset, const char *what, const cm_jval *k, int64_t *out)
{
	cm_int v;
	int rc = cm_py_int_of_str(k->key, k->klen, &v);
	if (rc == CM_PY_VALUE)
		return cm_error(CM_EXIT_DATA, g->wname, offset, "window: %s key \"%.*s\" is not an integer", what,
				(int)(k->klen > 40 ? 40 : k->klen), k->key),
		       -1;
	if (rc != CM_PY_OK || v < INT64_MIN || v > INT64_MAX)
		return cm_error(CM_EXIT_DATA, g->wname, offset, "window: %s key \"%.*s\" does not fit in 64 bits",
				what, (int)(k->klen > 40 ? 40 : k->klen), k->key),
		       -1;
	*out = (int64_t)v;
	return 0;
}

/* int(V) for a thread_resource_map value: 0 and *tid, or -1 when Python's
 * int() would raise (or the value needs more than 64 bits). */
static int map_value_int(const cm_jval *v, int64_t *tid)
{
	cm_int x;
	int rc;
	switch (v->type) {
	case CM_J_NUM: rc = cm_py_int_of_number(v->s, v->len, &x); break;
	case CM_J_STR: rc = cm_py_int_of_str(v->s, v->len, &x); break;
	case CM_J_TRUE: *tid = 1; return 0;
	case CM_J_FALSE: *tid = 0; return 0;
	default: return -1;
	}
	if (rc != CM_PY_OK || x < INT64_MIN || x > INT64_MAX)
		return -1;
	*tid = (int64_t)x;
	return 0;
}

int cm_gpu_scan_member(cm_gpu *g, const char *key, const cm_jval *val, int64_t offset)
{
	if (!strcmp(key, "user_annotations")) {
		g->ua_dict = val->type == CM_J_OBJ;
		if (!g->ua_dict)
			return 0; /* not an object: no gpu_user_annotation spans, no error */
		for (const cm_jval *k = val->kids; k; k = k->next) {
			int64_t ext;
			struct ua_ent *u;
			if (key_int(g, offset, "user_annotations", k, &ext) < 0)
				return -1;
			u = cm_hmap_put(g->ua, &ext, NULL);
			free(u->name);
			u->name = NULL;
			if (k->type == CM_J_STR) {
				u->name = cm_xmalloc(k->len + 1);
				memcpy(u->name, k->s, k->len);
				u->name[k->len] = 0;
				u->len = k->len;
			}
		}
	} else if (!strcmp(key, "thread_resource_map")) {
		if (val->type != CM_J_OBJ) {
			cm_tidmap_set_bad(g->tidmap); /* fails when a lookup needs it */
			return 0;
		}
		for (const cm_jval *p = val->kids; p; p = p->next) {
			int64_t pid;
			if (key_int(g, offset, "thread_resource_map", p, &pid) < 0)
				return -1;
			cm_tidmap_begin_pid(g->tidmap, pid, p->type != CM_J_OBJ);
			if (p->type != CM_J_OBJ)
				continue;
			for (const cm_jval *t = p->kids; t; t = t->next) {
				int64_t id, tid = 0;
				int bad;
				if (key_int(g, offset, "thread_resource_map", t, &id) < 0)
					return -1;
				bad = map_value_int(t, &tid) < 0;
				cm_tidmap_add(g->tidmap, id, tid, bad);
			}
		}
	}
	return 0;
}

/* --------------------------------------------------------------- resolve */

void cm_gpu_resolve(cm_gpu *g, cm_int base_ns)
{
	g->base_ns = base_ns;
	g->linked = cm_hmap_new(8, sizeof(struct linked));
	g->uext = cm_hmap_new(8, 8);
	for (size_t i = 0; i < g->npairs; i++) {
		const struct pair *p = &g->pairs[i];
		const struct cm_ext_thread *t = cm_hmap_get(g->ext, &p->ext);
		if (t && t->found) {
			struct linked *l = cm_hmap_put(g->linked, &p->corr, NULL);
			l->pid = t->pid;
			l->tid = t->tid;
		}
		if (p->user && g->ua_dict && cm_hmap_get(g->ua, &p->ext))
			*(int64_t *)cm_hmap_put(g->uext, &p->corr, NULL) = p->ext;
	}
	g->st.linked_ext = 0;
	for (size_t i = 0; i < cm_hmap_slots(g->ext); i++) {
		const struct cm_ext_thread *t = cm_hmap_slot(g->ext, i, NULL);
		g->st.linked_ext += t && t->found;
	}
	g->st.linked_corr = cm_hmap_count(g->linked);
	/* only the correlation tables are needed from here on */
	free(g->pairs);
	g->pairs = NULL;
	g->npairs = g->cap = 0;
	cm_hmap_free(g->ext);
	g->ext = cm_hmap_new(8, sizeof(struct cm_ext_thread));
}

/* ------------------------------------------------------------ the rules */

/* The thread row of an API record (tidrule.h).  0, or -1 after a report;
 * *fell is set when no rule applied and the int32 id itself was taken. */
static int api_thread(const struct at *a, cm_int pid, cm_int corr, cm_int raw, cm_int *tid, int *fell)
{
	cm_gpu *g = a->g;
	int32_t id = cm_tid_int32(raw);
	int64_t t;
	int rc;
	if (corr >= INT64_MIN && corr <= INT64_MAX) {
		int64_t c = (int64_t)corr;
		const struct linked *l = cm_hmap_get(g->linked, &c);
		if (l && (cm_int)l->pid == pid) {
			*tid = l->tid;
			return 0;
		}
	}
	rc = pid < INT64_MIN || pid > INT64_MAX ? CM_TIDMAP_ABSENT
						: cm_tidmap_lookup(g->tidmap, (int64_t)pid, id, &t);
	switch (rc) {
	case CM_TIDMAP_FOUND: *tid = t; return 0;
	case CM_TIDMAP_ABSENT: *tid = id; *fell = 1; return 0;
	case CM_TIDMAP_BAD_MAP:
		return ev_error(g, a->index, a->offset,
				"thread_resource_map (or its entry for this process_id) is not an object");
	default:
		return ev_error(g, a->index, a->offset,
				"thread_resource_map entry for thread_id %d is not an integer", (int)id);
	}
}

/* Note an X event's extent (Python: min(min_ts, ts), max(max_end, ts + max(dur, 0))). */
static void extent(cm_gpu *g, double ts, double dur)
{
	g->min_ts = cm_py_min(g->min_ts, ts);
	g->max_end_ts = cm_py_max(g->max_end_ts, ts + cm_py_max(dur, 0.0));
	g->st.x_events++;
}

/* Remember the first start of a row key (dict.setdefault). */
static void setdefault(cm_hmap *m, int64_t key, cm_int ns)
{
	int created;
	struct first_ts *f = cm_hmap_put(m, &key, &created);
	if (created)
		f->ns = ns;
}

static void add_pair(cm_hmap *m, int64_t a, int64_t b)
{
	int64_t key[2] = {a, b};
	cm_hmap_put(m, key, NULL);
}

/* Begin an X event: {"ph":"X","cat":CAT,"name":NAME,"pid":PID,"tid":TID, */
static void x_head(cm_buf *b, const char *cat, const char *name, size_t nlen, cm_int pid, cm_int tid)
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

/* "ts":TS,"dur":DUR for START/END ns; returns the two doubles. */
static void x_times(cm_gpu *g, cm_buf *b, cm_int start, cm_int end, double *ts, double *dur)
{
	if (b) {
		cm_buf_lit(b, ",\"ts\":");
		*ts = cm_jw_us_of_ns(b, start - g->base_ns);
		cm_buf_lit(b, ",\"dur\":");
		*dur = cm_jw_us_of_ns(b, end - start);
	} else {
		*ts = cm_us_of_ns(start - g->base_ns);
		*dur = cm_us_of_ns(end - start);
	}
}

/* An ac2g flow event: ph "s" (from an API row) or "f" (into a GPU row). */
static int flow(cm_evout *eo, char ph, cm_int id, cm_int pid, cm_int tid, const char *ts, size_t tslen)
{
	cm_buf *b = &eo->buf;
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"");
	cm_buf_putc(b, ph);
	cm_buf_lit(b, "\",\"id\":");
	cm_jw_int(b, id);
	cm_buf_lit(b, ",\"pid\":");
	cm_jw_int(b, pid);
	cm_buf_lit(b, ",\"tid\":");
	cm_jw_int(b, cm_tid_export(tid));
	cm_buf_lit(b, ",\"ts\":");
	cm_buf_put(b, ts, tslen);
	if (ph == 'f')
		cm_buf_lit(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
	else
		cm_buf_lit(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
	return 0;
}

/* ---- args of GPU activity: an ordered dict with Python's overwrite rule ---- */

enum arg_kind { ARG_INT, ARG_STR, ARG_JVAL, ARG_PYTEXT };
struct arg {
	const char *key;
	size_t klen;
	int kind;
	cm_int i;
	const char *s; /* ARG_STR / ARG_PYTEXT bytes */
	size_t slen;
	const cm_jval *jv;
};
struct args {
	struct arg *v;
	size_t n, cap;
};

/* args[KEY] = ... : the slot for KEY, appended when new. */
static struct arg *arg_slot(struct args *A, const char *key, size_t klen)
{
	for (size_t i = 0; i < A->n; i++)
		if (A->v[i].klen == klen && !memcmp(A->v[i].key, key, klen))
			return &A->v[i];
	if (A->n == A->cap) {
		A->cap = A->cap ? A->cap * 2 : 16;
		A->v = cm_xrealloc(A->v, A->cap * sizeof *A->v);
	}
	A->v[A->n].key = key;
	A->v[A->n].klen = klen;
	return &A->v[A->n++];
}

static void arg_int(struct args *A, const char *key, cm_int v)
{
	struct arg *s = arg_slot(A, key, strlen(key));
	s->kind = ARG_INT;
	s->i = v;
}

static void arg_str(struct args *A, const char *key, const char *v)
{
	struct arg *s = arg_slot(A, key, strlen(key));
	s->kind = ARG_STR;
	s->s = v;
	s->slen = strlen(v);
}

/* A name from a small table, or the number itself (dict.get(k, k)). */
static void arg_named(struct args *A, const char *key, cm_int v, const char *const *names, int count)
{
	if (v >= 0 && v < count && names[(int)v])
		arg_str(A, key, names[(int)v]);
	else
		arg_int(A, key, v);
}

static const char *const memcpy_kind_names[] = {
	NULL, "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", NULL, "PtoP"};
static const char *const memory_kind_names[] = {
	"unknown", "pageable", "pinned", "device", "array", "managed", "device_static", "managed_static"};

/* The annotation's contribution to args (the reference's _annotation_to_args):
 * a string is decoded as JSON when it can be; an object spreads into args, a
 * list becomes its json.dumps text, anything else is stored as it is. */
static void annotation_args(cm_gpu *g, struct args *A, const cm_jval *ann, cm_buf *dumps)
{
	const cm_jval *dec;
	if (!ann || ann->type == CM_J_NULL)
		return;
	dec = ann->type == CM_J_STR ? cm_jval_parse_py(g->scratch, ann->s, ann->len) : ann;
	if (!dec) { /* not JSON: the string itself */
		struct arg *s = arg_slot(A, "annotation", 10);
		s->kind = ARG_JVAL;
		s->jv = ann;
		return;
	}
	if (dec->type == CM_J_ARR) {
		struct arg *s = arg_slot(A, "annotation", 10);
		dumps->len = 0;
		cm_jval_dumps_py(dumps, dec);
		s->kind = ARG_PYTEXT;
		s->s = dumps->p;
		s->slen = dumps->len;
	} else if (dec->type == CM_J_OBJ) {
		for (const cm_jval *k = dec->kids; k; k = k->next) {
			struct arg *s = arg_slot(A, k->key, k->klen);
			s->kind = ARG_JVAL;
			s->jv = k;
		}
	} else {
		struct arg *s = arg_slot(A, "annotation", 10);
		s->kind = ARG_JVAL;
		s->jv = dec;
	}
}

static void write_args(cm_buf *b, const struct args *A)
{
	cm_buf_lit(b, ",\"args\":{");
	for (size_t i = 0; i < A->n; i++) {
		const struct arg *s = &A->v[i];
		if (i)
			cm_buf_putc(b, ',');
		cm_jw_string(b, s->key, s->klen);
		cm_buf_putc(b, ':');
		switch (s->kind) {
		case ARG_INT: cm_jw_int(b, s->i); break;
		case ARG_STR:
		case ARG_PYTEXT: cm_jw_string(b, s->s, s->slen); break;
		default: cm_jval_write(b, s->jv); break;
		}
	}
	cm_buf_lit(b, "}}");
}

/* A runtime or driver API record (pass 2 when EO is NULL, else pass 3). */
static int api_event(const struct at *a, int driver, cm_evout *eo)
{
	cm_gpu *g = a->g;
	cm_int cbid, pid, corr, raw, tid = 0, start, end;
	const char *name;
	char fallback[64];
	int registered, fell = 0;
	double ts, dur;
	if (int_field(a, "cbid", 1, &cbid) < 0)
		return -1;
	name = cbid >= INT64_MIN && cbid <= INT64_MAX ? cm_cbid_name(driver, (int64_t)cbid) : NULL;
	if (!name) {
		memcpy(fallback, "cbid_", 5);
		cm_int_format(cbid, fallback + 5);
		name = fallback;
	}
	registered = cm_cbid_is_registered(driver, name);
	if (int_field(a, "process_id", 1, &pid) < 0 || int_field(a, "correlation_id", 1, &corr) < 0 ||
	    int_field(a, "thread_id", 1, &raw) < 0 || api_thread(a, pid, corr, raw, &tid, &fell) < 0)
		return -1;
	if (!registered)
		return 0;
	if (int_field(a, "start_ns", 1, &start) < 0 || int_field(a, "end_ns", 1, &end) < 0)
		return -1;
	if (fell && g->repair && pid >= INT64_MIN && pid <= INT64_MAX) {
		/* the thread map knows what the window did not */
		int64_t moved;
		if (cm_repair_tid(g->repair, (int64_t)pid, (int64_t)tid, 1, cm_int_to_double(start), eo != NULL,
				  &moved))
			tid = moved;
	}
	if (!eo) {
		int64_t pid64 = 0, tid64 = 0;
		if (to_i64(a, "process_id", pid, &pid64) < 0 || to_i64(a, "thread_id", tid, &tid64) < 0)
			return -1;
		setdefault(g->procs, pid64, start);
		add_pair(g->threads, pid64, tid64);
		x_times(g, NULL, start, end, &ts, &dur);
		extent(g, ts, dur);
		g->st.api_rows++;
		return 0;
	}
	if (cm_evout_next(eo) < 0)
		return -1;
	x_head(&eo->buf, driver ? "cuda_driver" : "cuda_runtime", name, strlen(name), pid, tid);
	{
		size_t ts_at = eo->buf.len + 6, ts_len; /* after ,"ts": */
		char tstext[48];
		x_times(g, &eo->buf, start, end, &ts, &dur);
		ts_len = (size_t)(strstr(eo->buf.p + ts_at, ",\"dur\":") - (eo->buf.p + ts_at));
		if (ts_len >= sizeof tstext)
			ts_len = sizeof tstext - 1;
		memcpy(tstext, eo->buf.p + ts_at, ts_len);
		cm_buf_lit(&eo->buf, ",\"args\":{\"cbid\":");
		cm_jw_int(&eo->buf, cbid);
		cm_buf_lit(&eo->buf, ",\"correlation\":");
		cm_jw_int(&eo->buf, corr);
		cm_buf_lit(&eo->buf, "}}");
		if (corr != 0 && cm_cbid_requires_flow(driver, name) &&
		    flow(eo, 's', corr, pid, tid, tstext, ts_len) < 0)
			return -1;
	}
	return 0;
}

/* kernel, gpu_memcpy, gpu_memset (pass 2 when EO is NULL, else pass 3). */
static int activity_event(const struct at *a, const char *kind, cm_evout *eo)
{
	cm_gpu *g = a->g;
	cm_int dev, ctx, stream, corr, start, end, graph, node;
	cm_int bytes, k1, k2, k3, flags;
	int is_memcpy = !strcmp(kind, "gpu_memcpy"), is_memset = !strcmp(kind, "gpu_memset");
	const cm_jval *namev;
	double ts, dur;
	if (int_field(a, "device_id", 1, &dev) < 0 || int_field(a, "stream_id", 1, &stream) < 0 ||
	    int_field(a, "start_ns", 1, &start) < 0 || int_field(a, "context_id", 1, &ctx) < 0 ||
	    int_field(a, "correlation_id", 1, &corr) < 0 || int_field(a, "end_ns", 1, &end) < 0 ||
	    !(namev = need(a, "name")) || int_field(a, "graph_id", 0, &graph) < 0 ||
	    int_field(a, "graph_node_id", 0, &node) < 0)
		return -1;
	if (is_memcpy && (int_field(a, "bytes", 1, &bytes) < 0 || int_field(a, "copy_kind", 1, &k1) < 0 ||
			  int_field(a, "src_kind", 1, &k2) < 0 || int_field(a, "dst_kind", 1, &k3) < 0 ||
			  int_field(a, "flags", 1, &flags) < 0))
		return -1;
	if (is_memset && (int_field(a, "bytes", 1, &bytes) < 0 || int_field(a, "value", 1, &k1) < 0 ||
			  int_field(a, "memory_kind", 1, &k2) < 0 || int_field(a, "flags", 1, &flags) < 0))
		return -1;
	if (!eo) {
		int64_t d64 = 0, s64 = 0, c64;
		if (to_i64(a, "device_id", dev, &d64) < 0 || to_i64(a, "stream_id", stream, &s64) < 0)
			return -1;
		setdefault(g->devices, d64, start);
		add_pair(g->streams, d64, s64);
		x_times(g, NULL, start, end, &ts, &dur);
		extent(g, ts, dur);
		if (corr >= INT64_MIN && corr <= INT64_MAX) {
			const int64_t *ext;
			c64 = (int64_t)corr;
			if ((ext = cm_hmap_get(g->uext, &c64))) {
				int64_t key[3] = {*ext, d64, s64};
				int created;
				struct span *sp = cm_hmap_put(g->spans, key, &created);
				if (created) {
					sp->start = start;
					sp->end = end;
				} else {
					sp->start = start < sp->start ? start : sp->start;
					sp->end = end > sp->end ? end : sp->end;
				}
			}
		}
		return 0;
	}
	{
		struct args A = {0};
		cm_buf dumps = {0};
		size_t ts_at, ts_len;
		char tstext[48];
		cm_arena_reset(g->scratch);
		g->text.len = 0;
		cm_jval_str_py(&g->text, namev);
		if (cm_evout_next(eo) < 0)
			return -1;
		x_head(&eo->buf, kind, g->text.p, g->text.len, dev, stream);
		ts_at = eo->buf.len + 6;
		x_times(g, &eo->buf, start, end, &ts, &dur);
		ts_len = (size_t)(strstr(eo->buf.p + ts_at, ",\"dur\":") - (eo->buf.p + ts_at));
		if (ts_len >= sizeof tstext)
			ts_len = sizeof tstext - 1;
		memcpy(tstext, eo->buf.p + ts_at, ts_len);
		arg_int(&A, "device", dev);
		arg_int(&A, "context", ctx);
		arg_int(&A, "stream", stream);
		arg_int(&A, "correlation", corr);
		if (graph)
			arg_int(&A, "graph id", graph);
		if (node)
			arg_int(&A, "graph node id", node);
		annotation_args(g, &A, cm_jval_get(a->ev, "annotation"), &dumps);
		if (is_memcpy) {
			arg_int(&A, "bytes", bytes);
			arg_named(&A, "copy kind", k1, memcpy_kind_names, 11);
			arg_named(&A, "src kind", k2, memory_kind_names, 8);
			arg_named(&A, "dst kind", k3, memory_kind_names, 8);
			arg_int(&A, "flags", flags);
		} else if (is_memset) {
			arg_int(&A, "bytes", bytes);
			arg_int(&A, "value", k1);
			arg_int(&A, "memory kind", k2);
			arg_int(&A, "flags", flags);
		}
		write_args(&eo->buf, &A);
		free(A.v);
		cm_buf_free(&dumps);
		if (corr != 0 && flow(eo, 'f', corr, dev, stream, tstext, ts_len) < 0)
			return -1;
	}
	return 0;
}

/* An overhead record; the trailing "Activity Buffer Request" is dropped. */
static int overhead_event(const struct at *a, cm_evout *eo)
{
	cm_gpu *g = a->g;
	const cm_jval *namev = cm_jval_get(a->ev, "name");
	cm_int start, end;
	double ts, dur;
	if (cm_jval_streq(namev, "Activity Buffer Request") && g->max_end > 0) {
		if (int_field(a, "start_ns", 0, &start) < 0)
			return -1;
		if (start > g->max_end)
			return 0;
	}
	if (!(namev = need(a, "name")) || int_field(a, "start_ns", 1, &start) < 0 ||
	    int_field(a, "end_ns", 1, &end) < 0)
		return -1;
	if (!eo) {
		g->need_overhead = 1;
		x_times(g, NULL, start, end, &ts, &dur);
		extent(g, ts, dur);
		return 0;
	}
	g->text.len = 0;
	cm_jval_str_py(&g->text, namev);
	if (cm_evout_next(eo) < 0)
		return -1;
	x_head(&eo->buf, "overhead", g->text.p, g->text.len, OVERHEAD_PID, 0);
	x_times(g, &eo->buf, start, end, &ts, &dur);
	cm_buf_lit(&eo->buf, ",\"args\":{}}");
	return 0;
}

/* The rules for one event: pass 2 (EO NULL) or pass 3. */
static int do_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset, cm_evout *eo)
{
	struct at a = {g, index, offset, ev};
	const cm_jval *kind = cm_jval_get(ev, "kind");
	if (!kind)
		return ev_error(g, index, offset, "missing field \"kind\"");
	if (kind->type == CM_J_ARR || kind->type == CM_J_OBJ)
		return ev_error(g, index, offset, "\"kind\" is not a string");
	if (kind->type != CM_J_STR)
		return 0;
	if (cm_jval_streq(kind, "kernel") || cm_jval_streq(kind, "gpu_memcpy") ||
	    cm_jval_streq(kind, "gpu_memset"))
		return activity_event(&a, kind->s, eo);
	if (cm_jval_streq(kind, "cuda_runtime"))
		return api_event(&a, 0, eo);
	if (cm_jval_streq(kind, "cuda_driver"))
		return api_event(&a, 1, eo);
	if (cm_jval_streq(kind, "overhead"))
		return overhead_event(&a, eo);
	return 0;
}

int cm_gpu_plan_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset)
{
	return do_event(g, index, ev, offset, NULL);
}

int cm_gpu_emit_event(cm_gpu *g, uint64_t index, const cm_jval *ev, int64_t offset, cm_evout *eo)
{
	return do_event(g, index, ev, offset, eo);
}

/* ------------------------------------------------------- sorted row tables */

/* Keys of M (KW 64-bit words each) sorted as tuples; caller frees. */
static int64_t *sorted_keys(const cm_hmap *m, int kw, size_t *n);

static int kw_cmp;
static int cmp_keys(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;
	for (int i = 0; i < kw_cmp; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

static int64_t *sorted_keys(const cm_hmap *m, int kw, size_t *n)
{
	int64_t *keys = cm_xmalloc((cm_hmap_count(m) + 1) * (size_t)kw * 8);
	size_t k = 0;
	for (size_t i = 0; i < cm_hmap_slots(m); i++) {
		const void *key;
		if (cm_hmap_slot(m, i, &key))
			memcpy(keys + k++ * (size_t)kw, key, (size_t)kw * 8);
	}
	kw_cmp = kw;
	qsort(keys, k, (size_t)kw * 8, cmp_keys);
	*n = k;
	return keys;
}

/* One metadata event; ARG_TEXT is a string value unless NULL, then ARG_INT. */
static int meta(cm_evout *eo, const char *name, cm_gpu *g, const cm_int *first_ns, cm_int pid, cm_int tid,
		const char *arg_key, const char *arg_text, cm_int arg_int)
{
	cm_buf *b = &eo->buf;
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"M\",\"name\":\"");
	cm_buf_puts(b, name);
	cm_buf_lit(b, "\",\"ts\":");
	if (first_ns)
		cm_jw_us_of_ns(b, *first_ns - g->base_ns);
	else
		cm_buf_lit(b, "0.0");
	cm_buf_lit(b, ",\"pid\":");
	cm_jw_int(b, pid);
	cm_buf_lit(b, ",\"tid\":");
	cm_jw_int(b, cm_tid_export(tid));
	cm_buf_lit(b, ",\"args\":{\"");
	cm_buf_puts(b, arg_key);
	cm_buf_lit(b, "\":");
	if (arg_text)
		cm_jw_string(b, arg_text, strlen(arg_text));
	else
		cm_jw_int(b, arg_int);
	cm_buf_lit(b, "}}");
	return 0;
}

int cm_gpu_write_metadata(cm_gpu *g, cm_evout *eo)
{
	size_t n;
	int64_t *k;
	char text[96];
	int rc = 0;

	k = sorted_keys(g->devices, 1, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct first_ts *f = cm_hmap_get(g->devices, &k[i]);
		snprintf(text, sizeof text, "GPU %lld", (long long)k[i]);
		rc = meta(eo, "process_name", g, &f->ns, k[i], 0, "name", "python", 0) ||
		     meta(eo, "process_labels", g, &f->ns, k[i], 0, "labels", text, 0) ||
		     meta(eo, "process_sort_index", g, &f->ns, k[i], 0, "sort_index", NULL,
			  (cm_int)GPU_SORT_BASE + k[i]);
	}
	free(k);
	k = sorted_keys(g->procs, 1, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct first_ts *f = cm_hmap_get(g->procs, &k[i]);
		rc = meta(eo, "process_name", g, &f->ns, k[i], 0, "name", "python", 0) ||
		     meta(eo, "process_labels", g, &f->ns, k[i], 0, "labels", "CPU", 0) ||
		     meta(eo, "process_sort_index", g, &f->ns, k[i], 0, "sort_index", NULL, k[i]);
	}
	free(k);
	k = sorted_keys(g->threads, 2, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		snprintf(text, sizeof text, "thread %lld", (long long)k[2 * i + 1]);
		rc = meta(eo, "thread_name", g, NULL, k[2 * i], k[2 * i + 1], "name", text, 0) ||
		     meta(eo, "thread_sort_index", g, NULL, k[2 * i], k[2 * i + 1], "sort_index", NULL,
			  k[2 * i + 1]);
	}
	free(k);
	k = sorted_keys(g->streams, 2, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		snprintf(text, sizeof text, "stream %lld ", (long long)k[2 * i + 1]);
		rc = meta(eo, "thread_name", g, NULL, k[2 * i], k[2 * i + 1], "name", text, 0) ||
		     meta(eo, "thread_sort_index", g, NULL, k[2 * i], k[2 * i + 1], "sort_index", NULL,
			  k[2 * i + 1]);
	}
	free(k);
	if (g->need_overhead && !rc)
		rc = meta(eo, "process_name", g, NULL, OVERHEAD_PID, 0, "name", "python", 0) ||
		     meta(eo, "process_labels", g, NULL, OVERHEAD_PID, 0, "labels", "Overhead", 0) ||
		     meta(eo, "process_sort_index", g, NULL, OVERHEAD_PID, 0, "sort_index", NULL,
			  OVERHEAD_SORT_INDEX) ||
		     meta(eo, "thread_name", g, NULL, OVERHEAD_PID, 0, "name", "thread 0", 0) ||
		     meta(eo, "thread_sort_index", g, NULL, OVERHEAD_PID, 0, "sort_index", NULL, 0);
	return rc ? -1 : 0;
}

/* ------------------------------------------------------------------ spans */

/* The ts and dur of a span: 1 ns wider on each side, as Kineto draws them. */
static void span_times(const cm_gpu *g, const struct span *sp, double *ts, double *dur)
{
	*ts = cm_py_max(cm_int_to_double(sp->start - g->base_ns) / 1000.0 - 0.001, 0.0);
	*dur = cm_py_max(cm_int_to_double(sp->end - sp->start) / 1000.0 + 0.002, 0.0);
}

void cm_gpu_plan_finish(cm_gpu *g)
{
	for (size_t i = 0; i < cm_hmap_slots(g->spans); i++) {
		const int64_t *key;
		const struct span *sp = cm_hmap_slot(g->spans, i, (const void **)&key);
		const struct ua_ent *u;
		double ts, dur;
		if (!sp || !(u = cm_hmap_get(g->ua, &key[0])) || !u->name)
			continue;
		span_times(g, sp, &ts, &dur);
		extent(g, ts, dur);
	}
}

void cm_gpu_extent(const cm_gpu *g, double *min_ts, double *max_end)
{
	*min_ts = g->min_ts;
	*max_end = g->max_end_ts;
}

int cm_gpu_write_spans(cm_gpu *g, cm_evout *eo)
{
	size_t n;
	int64_t *k = sorted_keys(g->spans, 3, &n);
	for (size_t i = 0; i < n; i++) {
		const struct span *sp = cm_hmap_get(g->spans, &k[3 * i]);
		const struct ua_ent *u = cm_hmap_get(g->ua, &k[3 * i]);
		double ts, dur;
		if (!u || !u->name)
			continue; /* the annotation's name is not a string */
		span_times(g, sp, &ts, &dur);
		if (cm_evout_next(eo) < 0) {
			free(k);
			return -1;
		}
		x_head(&eo->buf, "gpu_user_annotation", u->name, u->len, k[3 * i + 1], k[3 * i + 2]);
		cm_buf_lit(&eo->buf, ",\"ts\":");
		cm_jw_double(&eo->buf, ts);
		cm_buf_lit(&eo->buf, ",\"dur\":");
		cm_jw_double(&eo->buf, dur);
		cm_buf_lit(&eo->buf, ",\"args\":{\"External id\":");
		cm_jw_int(&eo->buf, k[3 * i]);
		cm_buf_lit(&eo->buf, "}}");
	}
	free(k);
	return 0;
}
