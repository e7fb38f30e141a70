/* batchscan.c - a streaming look at a trace, a window or a thread map for
 * pairing (cuptimerge-batch): yajl's callbacks that keep the few facts
 * pairing needs, the read of a whole file (or a trace's head) through them,
 * and what a file that ends early or is a thread map tells.  The shortcut
 * for a plain window, its head and tail alone, is batchtail.c. */
#include "config.h"
#include "batch/batchscan_int.h"
#include "batch/batchtok.h"
#include "base/diag.h"
#include "json/docsplit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

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

static void set_bad(cm_bfacts *f, const char *fmt, const char *arg)
{
	char buf[512];
	snprintf(buf, sizeof buf, fmt, arg);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	f->kind = CM_BK_BAD;
	free(f->why);
	f->why = cm_xstrdup(buf);
}

/* The host of a file named as torch's tensorboard_trace_handler names it,
 * "{host}_{pid}.{ms}.pt.trace.json[.gz]" in full, when PID matches; else
 * NULL.  A name is no record: the pairing trusts it less than what the
 * files hold (batchpair.c). */
static char *host_from_name(const char *path, int64_t pid)
{
	const char *base = strrchr(path, '/');
	char *name, *p, *us;
	char want[32];
	base = base ? base + 1 : path;
	name = cm_xstrdup(base);
	if (!(p = strstr(name, ".pt.trace.json")))
		goto none;
	*p = 0;
	/* ".{ms}" is required: without it, "rank0_481.pt.trace.json" (a name a
	 * training script chose) would give the host "rank0" (issue 28 P1) */
	if (!(p = strrchr(name, '.')) || !p[1] || strspn(p + 1, "0123456789") != strlen(p + 1))
		goto none;
	*p = 0;
	snprintf(want, sizeof want, "%lld", (long long)pid);
	if (!(us = strrchr(name, '_')) || us == name || strcmp(us + 1, want))
		goto none;
	*us = 0;
	return name;
none:
	free(name);
	return NULL;
}

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
static void map_facts(struct scan *s, cm_bfacts *f)
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

/* F is a file that cannot be read to its end, for the reason WHY (a
 * format with %s, ARG).  When it began as a window (its first container
 * "events") or is named as cuptirec names windows (cuptirec_*, not
 * cuptirec_threads_*), it is a damaged window: a window when the pid of an
 * API record is known (it can be paired, and its rank told what is wrong),
 * else a bad file marked damaged, for the failure of a trace left without
 * a window; otherwise a bad file, as before. */
static void set_damaged(cm_bfacts *f, const struct scan *s, const char *path, const char *fmt, const char *arg)
{
	const char *base = strrchr(path, '/');
	int window = f->kind == CM_BK_WINDOW;
	base = base ? base + 1 : path;
	if (!window && f->kind == CM_BK_OTHER && !strncmp(base, "cuptirec_", 9) &&
	    strncmp(base, "cuptirec_threads_", 17))
		window = 1;
	set_bad(f, fmt, arg);
	if (!window)
		return;
	f->damaged = 1;
	if (s->api_pid >= 0 && f->pid < 0) {
		f->kind = CM_BK_WINDOW;
		f->pid = s->api_pid;
		f->rank = -1;     /* its "source", if any, was read whole: */
		free(f->host);    /* without it, no rank nor host */
		f->host = NULL;
	}
}

static void scan_stream(const char *path, cm_bfacts *f, int head_only);

void cm_bscan_full(const char *path, cm_bfacts *f)
{
	scan_stream(path, f, 0);
}

int64_t cm_bscan_rank(const char *path)
{
	cm_bfacts f;
	int64_t rank;
	scan_stream(path, &f, 1);
	rank = f.kind == CM_BK_TRACE ? f.rank : -1;
	cm_bfacts_free(&f);
	return rank;
}

char *cm_bscan_name_host(const char *path, int64_t pid)
{
	return host_from_name(path, pid);
}

/* The bounds of one value (json/docsplit.h), over the text as it is read:
 * an element or key over 16 MiB, a top-level member's value over 256 MiB,
 * is refused at its first byte, as every reader of cuptimerge refuses it.
 * Why: yajl holds a token cut by a read's end, and reads it again from
 * its first byte with every read, so a window of one endless string (a
 * small gzip file that inflates to gigabytes of 'a', or a named pipe, as
 * a manifest's window was read then) was held whole, and scanned in time
 * that grew with its square.  Which array is the document's is known
 * only once its first container is open ("traceEvents" for a trace,
 * "events" for a window: the scan's kind), so there is a watcher for each
 * until then; the one that matches the kind speaks, as the merge of the
 * file so taken would.  A file of neither kind (a thread map) has no
 * array: both watchers judge its values alike. */
struct bounds {
	cm_docsplit_rec *trace, *window; /* NULL once the kind rules it out */
};

/* B watches a document from its first byte. */
static void bounds_begin(struct bounds *b)
{
	b->trace = cm_docsplit_watch_new("traceEvents");
	b->window = cm_docsplit_watch_new("events");
}

/* B's watchers are freed. */
static void bounds_end(struct bounds *b)
{
	cm_docsplit_watch_free(b->trace);
	cm_docsplit_watch_free(b->window);
	b->trace = b->window = NULL;
}

/* Where the text B's watchers were given ends, for btok_feed: inside a
 * string or not (cm_docsplit_watch_in_string), -1 when neither watches. */
static int bounds_end_state(const struct bounds *b)
{
	int st = b->trace ? cm_docsplit_watch_in_string(b->trace) : -1;
	return st >= 0 || !b->window ? st : cm_docsplit_watch_in_string(b->window);
}

/* The text S[0..N) at text offset BASE, which yajl has read (so the kind
 * in F counts every container opened before its end): 0, or 1 when a
 * value passed its bound, F then a damaged or bad file (set_damaged) that
 * says which value and where it began. */
static int bounds_feed(struct bounds *b, cm_bfacts *f, const struct scan *s, const char *path, const char *text,
		       size_t n, uint64_t base)
{
	cm_docsplit_rec **keep[2] = {&b->trace, &b->window};
	char msg[200], why[240];
	int64_t at;
	if (f->kind == CM_BK_TRACE && b->window) { /* one watcher from here on */
		cm_docsplit_watch_free(b->window);
		b->window = NULL;
	} else if (f->kind == CM_BK_WINDOW && b->trace) {
		cm_docsplit_watch_free(b->trace);
		b->trace = NULL;
	}
	for (int k = 0; k < 2; k++)
		if (*keep[k] && cm_docsplit_watch_feed(*keep[k], text, n, base, msg, sizeof msg, &at)) {
			snprintf(why, sizeof why, "byte %lld: %s", (long long)at, msg);
			set_damaged(f, s, path, "%s", why);
			return 1;
		}
	return 0;
}

/* The testing aid CUPTIMERGE_PLAN_READ: the streaming scan's reads that
 * many bytes (1 to SCAN_CHUNK_MAX; the first at least 3, a byte order
 * mark's length), so that a test cuts a document at every byte
 * (tests/e2e/batchfaults.sh); 0 when unset. */
static size_t plan_read_size(void)
{
	const char *e = getenv("CUPTIMERGE_PLAN_READ");
	unsigned long long v = e && *e ? strtoull(e, NULL, 10) : 0;
	return v <= SCAN_CHUNK_MAX ? (size_t)v : 0;
}

/* The streaming scan of cm_bscan_full; HEAD_ONLY: stop where a trace's
 * "traceEvents" begins.  The reads grow from SCAN_CHUNK to SCAN_CHUNK_MAX
 * (doubling): a trace's head is read in a block or two.  yajl gets whole
 * tokens (batchtok.h), and the bounds are judged on each read before yajl
 * parses it, as the merge's careful reader judges them. */
static void scan_stream(const char *path, cm_bfacts *f, int head_only)
{
	struct scan s;
	struct bounds b;
	unsigned char *buf;
	size_t fixed = plan_read_size(), cap = fixed ? (fixed > 3 ? fixed : 3) : SCAN_CHUNK;
	gzFile gz;
	struct btok p = {0};
	int n, rc = BTOK_OK, stopped = 0, first = 1;
	long long off = 0; /* bytes of text parsed before this chunk */
	char where[96];

	bscan_facts_begin(f);
	bscan_begin(&s, f);
	s.head_only = head_only;
	if (!(gz = gzopen(path, "rb"))) {
		set_bad(f, "cannot open: %s", strerror(errno));
		return;
	}
	gzbuffer(gz, SCAN_CHUNK);
	buf = cm_xmalloc(SCAN_CHUNK_MAX);
	p.h = yajl_alloc(&bscan_callbacks, NULL, &s);
	bounds_begin(&b);
	p.spill_at = (size_t)cm_docsplit_watch_elem_max(b.trace);
	while ((n = gzread(gz, buf, (unsigned)cap)) > 0) {
		/* a leading UTF-8 byte order mark, which the merge skips (io/inputdecode.c) */
		int bom = first && n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0;
		const char *t = (const char *)buf + bom;
		size_t len = (size_t)(n - bom);
		uint64_t at = (uint64_t)(off + bom);
		first = 0;
		if (fixed)
			cap = fixed;
		else if (cap < SCAN_CHUNK_MAX)
			cap *= 2;
		/* a value past its bound is named before a fault after its
		 * first byte, as the merge names it */
		if (bounds_feed(&b, f, &s, path, t, len, at))
			goto out;
		if ((rc = btok_feed(&p, t, len, at, bounds_end_state(&b))) != BTOK_OK)
			break;
		off += n;
	}
	if (rc == BTOK_OK && n == 0) { /* the last token, when the read ended well */
		int err;
		gzerror(gz, &err);
		if (!err)
			rc = btok_flush(&p);
	}
	if (rc == BTOK_STOP)
		stopped = 1;
	if (rc == BTOK_ERROR) {
		snprintf(where, sizeof where, "%llu", (unsigned long long)p.err_at);
		set_damaged(f, &s, path, "not JSON at byte %s", where);
		goto out;
	}
	if (rc == BTOK_SPILL) {
		set_bad(f, "cannot hold a long value: %s", "its temporary file failed");
		goto out;
	}
	if (!stopped) {
		int err;
		const char *msg = gzerror(gz, &err);
		if (n < 0 || err) {
			size_t pl = strlen(path);
			/* zlib's message starts with the path, which the caller names */
			if (err != Z_ERRNO && !strncmp(msg, path, pl) && !strncmp(msg + pl, ": ", 2))
				msg += pl + 2;
			snprintf(where, sizeof where, "%lld", off);
			if (err == Z_ERRNO)
				set_bad(f, "cannot read: %s", strerror(errno));
			else if (err == Z_BUF_ERROR) /* zlib's "unexpected end of file" */
				set_damaged(f, &s, path, "truncated gzip data, after byte %s of text", where);
			else
				set_damaged(f, &s, path, "cannot read: %s", msg);
			goto out;
		}
		if (yajl_complete_parse(p.h) != yajl_status_ok) {
			snprintf(where, sizeof where, "%lld", off);
			if (off == 0)
				set_damaged(f, &s, path, "empty%s", "");
			else
				set_damaged(f, &s, path, "truncated JSON: the text ends inside the document at byte %s",
					    where);
			goto out;
		}
	}
	if (f->kind == CM_BK_WINDOW) {
		if (f->pid < 0)
			f->pid = s.api_pid;
		f->start_ns = s.src_start >= 0 ? s.src_start : s.top_start;
	} else if (f->kind == CM_BK_TRACE && f->pid >= 0)
		f->host = host_from_name(path, f->pid);
	else if (f->kind == CM_BK_OTHER) {
		f->start_ns = s.src_start;
		map_facts(&s, f);
	}
out:
	bounds_end(&b);
	free(s.mp);
	cm_spillbuf_free(&p.pending);
	yajl_free(p.h);
	free(buf);
	gzclose(gz);
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
