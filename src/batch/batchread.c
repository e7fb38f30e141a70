/* batchread.c - pairing's streaming read (cuptimerge-batch): a whole
 * file, gzip or plain, or a trace's head, read through the scan's
 * callbacks (batchscan.c) in growing blocks of whole tokens, each value
 * held to the bounds every reader of cuptimerge keeps; and what a file
 * that cannot be read to its end tells (a damaged window, or a bad file).
 * Apart from the callbacks: this is the file and its faults, they are the
 * documents' shapes. */
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

/* F is a bad file (CM_BK_BAD), for the reason FMT with %s, ARG, on one
 * line (control characters made spaces). */
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
		bscan_map_facts(&s, f);
	}
out:
	bounds_end(&b);
	free(s.mp);
	cm_spillbuf_free(&p.pending);
	yajl_free(p.h);
	free(buf);
	gzclose(gz);
}
