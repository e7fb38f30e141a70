/* batchscan.c - a streaming look at a trace, a window or a thread map for
 * pairing (cuptimerge-batch): yajl's callbacks that keep the few facts
 * pairing needs, and what a thread map's entries tell once read.  The
 * read of a whole file (or a trace's head) through them, and what a file
 * that ends early tells, is batchread.c; the shortcut for a plain window,
 * its head and tail alone, is batchtail.c.  Apart because the callbacks
 * know the documents' shapes and nothing of files, and the read knows
 * files, gzip and the bounds of a value and nothing of the shapes. */
#include "config.h"
#include "batch/batchscan_int.h"
#include "base/diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

void bscan_facts_begin(cm_bfacts *f)
{
	memset(f, 0, sizeof *f);
	f->pid = f->rank = f->start_ns = f->end_ns = f->gpu_events = -1;
}

void bscan_begin(struct scan *s, cm_bfacts *f)
{
	memset(s, 0, sizeof *s);
	s->f = f;
	s->base = s->top_start = s->src_start = s->api_pid = s->meta_pid = s->cur = -1;
}

static int keyis(const struct scan *s, int d, const char *k)
{
	return s->depth >= d && !strcmp(s->key[d], k);
}

static void setkey(struct scan *s, const unsigned char *k, size_t n)
{
	if (s->depth < 1 || s->depth >= MAXDEPTH)
		return;
	if (n >= sizeof s->key[0])
		n = sizeof s->key[0] - 1; /* longer keys are none we look for */
	memcpy(s->key[s->depth], k, n);
	s->key[s->depth][n] = 0;
}

static int64_t num_i64(const char *t, size_t n, int *ok)
{
	char buf[64], *end;
	long long v;
	*ok = 0;
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, t, n);
	buf[n] = 0;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (*end || errno) /* 1.5e9: an integer written as a float */
		v = (long long)strtod(buf, &end);
	*ok = !*end;
	return v;
}

/* In a trace event or a window event: depth 3, inside the top-level array. */
static int in_event(const struct scan *s, const char *array)
{
	return s->depth == 3 && keyis(s, 1, array);
}

/* Is the value at hand one a thread map gives as a number or as a string:
 * a member of a "processes" entry, or of "meta"? */
static int in_map_number(const struct scan *s)
{
	return (s->depth == 4 && s->cur >= 0 && keyis(s, 1, "processes")) ||
	       (s->depth == 2 && keyis(s, 1, "meta"));
}

/* A number V in a thread map: an entry's start_ns or end_ns, or meta.pid. */
static void map_number(struct scan *s, int64_t v)
{
	if (!in_map_number(s))
		return;
	if (s->depth == 4) {
		if (keyis(s, 4, "start_ns"))
			s->e_start = v;
		else if (keyis(s, 4, "end_ns"))
			s->e_end = v;
	} else if (s->depth == 2 && keyis(s, 1, "meta") && keyis(s, 2, "pid"))
		s->meta_pid = v;
}

static int cb_number(void *ctx, const char *t, size_t n)
{
	struct scan *s = ctx;
	cm_bfacts *f = s->f;
	int ok;
	int64_t v = num_i64(t, n, &ok);
	if (!ok)
		return 1;
	if (s->depth == 1 && keyis(s, 1, "baseTimeNanoseconds"))
		s->base = v;
	else if (s->depth == 1 && keyis(s, 1, "start_ns"))
		s->top_start = v;
	else if (s->depth == 2 && keyis(s, 1, "distributedInfo") && keyis(s, 2, "rank"))
		f->rank = v;
	else if (s->depth == 2 && keyis(s, 1, "source")) {
		if (keyis(s, 2, "pid"))
			f->pid = v;
		else if (keyis(s, 2, "rank"))
			f->rank = v;
		else if (keyis(s, 2, "start_ns"))
			s->src_start = v;
		else if (keyis(s, 2, "end_ns"))
			f->end_ns = v;
	} else if (in_event(s, "traceEvents")) {
		if (keyis(s, 3, "pid"))
			s->ev_pid = v;
		else if (keyis(s, 3, "ts")) {
			char buf[64];
			memcpy(buf, t, n < 63 ? n : 63);
			buf[n < 63 ? n : 63] = 0;
			s->ev_ts = strtod(buf, NULL);
			s->have_ts = 1;
		}
	} else if (in_event(s, "events") && keyis(s, 3, "process_id"))
		s->ev_proc = v;
	else
		map_number(s, v);
	return 1;
}

static void copystr(char *dst, size_t cap, const unsigned char *v, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = 0;
}

static int cb_string(void *ctx, const unsigned char *v, size_t n)
{
	struct scan *s = ctx;
	if (in_event(s, "traceEvents")) {
		if (keyis(s, 3, "ph"))
			copystr(s->ph, sizeof s->ph, v, n);
		else if (keyis(s, 3, "cat"))
			copystr(s->cat, sizeof s->cat, v, n);
	} else if (in_event(s, "events") && keyis(s, 3, "kind"))
		copystr(s->kind, sizeof s->kind, v, n);
	else if (s->depth == 2 && keyis(s, 1, "source") && keyis(s, 2, "host") && !s->f->host) {
		s->f->host = cm_xmalloc(n + 1);
		memcpy(s->f->host, v, n);
		s->f->host[n] = 0;
	} else if (in_map_number(s)) {
		/* a thread map's numbers may be strings holding a decimal integer */
		int ok;
		int64_t x = num_i64((const char *)v, n, &ok);
		if (ok)
			map_number(s, x);
	}
	return 1;
}

static int cb_scalar(void *ctx) { (void)ctx; return 1; }
static int cb_bool(void *ctx, int b) { (void)b; return cb_scalar(ctx); }

/* The index in s->mp of process PIDTEXT (a "processes" key), added when new;
 * -1 when the key is no decimal pid (cuptimerge -t refuses that map). */
static long map_process(struct scan *s, const char *pidtext)
{
	char *end;
	long long pid;
	if (!*pidtext || strspn(pidtext, "0123456789") != strlen(pidtext))
		return -1;
	pid = strtoll(pidtext, &end, 10);
	for (size_t i = 0; i < s->nmp; i++)
		if (s->mp[i].pid == pid)
			return (long)i; /* a repeated key: one process */
	if (s->nmp == s->capmp) {
		s->capmp = s->capmp ? 2 * s->capmp : 4;
		s->mp = cm_xrealloc(s->mp, s->capmp * sizeof *s->mp);
	}
	memset(&s->mp[s->nmp], 0, sizeof *s->mp);
	s->mp[s->nmp].pid = pid;
	s->mp[s->nmp].start = s->mp[s->nmp].end = -1;
	return (long)s->nmp++;
}

static int cb_open(struct scan *s)
{
	s->depth++;
	if (s->depth < MAXDEPTH)
		s->key[s->depth][0] = 0;
	if (s->depth == 1)
		return 1;
	if (s->depth == 2 && s->f->kind == CM_BK_OTHER) {
		if (keyis(s, 1, "traceEvents")) {
			s->f->kind = CM_BK_TRACE;
			if (s->head_only) {
				s->done = 1;
				s->depth--;
				return 0; /* the members before it are what was wanted */
			}
		}
		else if (keyis(s, 1, "events")) {
			s->f->kind = CM_BK_WINDOW;
			s->f->gpu_events = 0;
		}
	}
	if (s->depth == 2 && keyis(s, 1, "processes"))
		s->processes = 1;
	if (s->depth == 2 && keyis(s, 1, "threads"))
		s->threads = 1;
	if (s->depth == 3) {
		s->ph[0] = s->cat[0] = s->kind[0] = 0;
		s->ev_pid = s->ev_proc = -1;
		s->have_ts = 0;
		if (keyis(s, 1, "processes"))
			s->cur = map_process(s, s->key[2]);
	}
	if (s->depth == 4)
		s->e_start = s->e_end = -1;
	return 1;
}

static int cb_start_map(void *ctx) { return cb_open(ctx); }
static int cb_start_array(void *ctx) { return cb_open(ctx); }

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
	setkey(ctx, k, n);
	return 1;
}

static int is_cpu_cat(const char *c)
{
	return !strcmp(c, "cpu_op") || !strcmp(c, "user_annotation") || !strcmp(c, "python_function");
}

static int is_gpu_kind(const char *k)
{
	return !strcmp(k, "kernel") || !strcmp(k, "gpu_memcpy") || !strcmp(k, "gpu_memset");
}

static int cb_close(void *ctx)
{
	struct scan *s = ctx;
	cm_bfacts *f = s->f;
	if (in_event(s, "traceEvents") && !strcmp(s->ph, "X") && s->ev_pid >= 0 && s->have_ts &&
	    is_cpu_cat(s->cat)) {
		f->pid = s->ev_pid;
		if (s->base >= 0)
			f->start_ns = s->base + (int64_t)(s->ev_ts * 1000.0);
		s->done = 1;
		s->depth--;
		return 0; /* all a trace can tell cheaply: stop reading */
	}
	if (s->depth == 4 && s->cur >= 0 && keyis(s, 1, "processes")) {
		/* an entry of a thread map: widen its process's span */
		struct mproc *m = &s->mp[s->cur];
		m->entries++;
		if (s->e_start < 0)
			m->start_open = 1;
		else if (m->start < 0 || s->e_start < m->start)
			m->start = s->e_start;
		if (s->e_end < 0)
			m->end_open = 1;
		else if (s->e_end > m->end)
			m->end = s->e_end;
	}
	if (s->depth == 3 && keyis(s, 1, "processes"))
		s->cur = -1;
	if (in_event(s, "events")) {
		if (is_gpu_kind(s->kind))
			f->gpu_events++;
		else if (s->api_pid < 0 && s->ev_proc >= 0 &&
			 (!strcmp(s->kind, "cuda_runtime") || !strcmp(s->kind, "cuda_driver")))
			s->api_pid = s->ev_proc;
	}
	s->depth--;
	return 1;
}

const yajl_callbacks bscan_callbacks = {
	NULL, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_close, cb_start_array, cb_close,
};

/* A process of the map in F: PID, and the span its entries give (-1: open
 * or none).  The map's "source" speaks for its own pid, and its host for
 * every process: a map keyed by pid alone holds the processes of one host. */
static void add_proc(cm_bfacts *f, int64_t pid, const struct mproc *m)
{
	cm_bfacts *p;
	f->procs = cm_xrealloc(f->procs, (f->nprocs + 1) * sizeof *f->procs);
	p = &f->procs[f->nprocs++];
	memset(p, 0, sizeof *p);
	p->kind = CM_BK_MAP;
	p->pid = pid;
	p->rank = p->gpu_events = -1;
	p->host = f->host ? cm_xstrdup(f->host) : NULL;
	p->start_ns = m && m->entries && !m->start_open ? m->start : -1;
	p->end_ns = m && m->entries && !m->end_open ? m->end : -1;
	if (f->pid >= 0 && f->pid == pid) {
		p->rank = f->rank;
		if (f->start_ns >= 0)
			p->start_ns = f->start_ns;
		if (f->end_ns >= 0)
			p->end_ns = f->end_ns;
	}
}

/* A file that is neither trace nor window: a thread map when it has
 * "processes" (one process per key) or "threads" with "meta.pid" (that
 * process); a "threads" without a pid applies to every process, so nothing
 * pairs it: F->why says so. */
void bscan_map_facts(struct scan *s, cm_bfacts *f)
{
	int seen = 0;
	if (!s->processes && !s->threads)
		return;
	if (s->processes) {
		for (size_t i = 0; i < s->nmp; i++)
			add_proc(f, s->mp[i].pid, &s->mp[i]);
		seen = 1;
	}
	if (s->threads && s->meta_pid >= 0) {
		for (size_t i = 0; i < f->nprocs; i++)
			if (f->procs[i].pid == s->meta_pid)
				goto have;
		add_proc(f, s->meta_pid, NULL);
	have:
		seen = 1;
	}
	if (seen)
		f->kind = CM_BK_MAP;
	else
		f->why = cm_xstrdup("a thread map without \"meta.pid\" applies to every process: pair it in a manifest");
}

void cm_bfacts_free(cm_bfacts *f)
{
	for (size_t i = 0; i < f->nprocs; i++)
		cm_bfacts_free(&f->procs[i]);
	free(f->procs);
	free(f->host);
	free(f->why);
	f->procs = NULL;
	f->nprocs = 0;
	f->host = f->why = NULL;
}
