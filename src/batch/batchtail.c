/* batchtail.c - pairing's shortcut for a plain window (issue 28 P7): its
 * head and its last 64 KiB read, not the whole file; what cannot be taken
 * so goes to the streaming scan (batchread.c). */
#include "config.h"
#include "batch/batchscan_int.h"
#include "base/diag.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The tail of a plain window holds its "source" (cuptirec writes it last,
 * and only "cuptirec" after it): 64 KiB is ample. */
#define TAIL_CHUNK (64u << 10)

/* Issue 28 P7: planning read every window in full (1.4 s for two 118 MB
 * windows, as long as a merge's first pass).  Pairing needs only what
 * "source" says, and a plain window is a file we can seek in: read its
 * head, to know it is a window ('{' and "events" first), and its last 64
 * KiB, for the last "source": {...} and a closing '}' (a window cut short
 * has none: it is read in full, and found damaged).  Fills *F as the full
 * scan would, but for gpu_events (-1: not counted); returns 0, or -1 when
 * the file is gzip, not seekable, not so shaped, or has no "source" with
 * a pid: then the caller reads it in full. */
static int scan_tail(const char *path, cm_bfacts *f)
{
	char head[64], *tail = NULL, *src, *open_, *close_, *doc;
	struct scan s;
	struct stat st;
	yajl_handle h;
	size_t n, len;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 32)
		goto out;
	if ((got = pread(fd, head, sizeof head - 1, 0)) < 16)
		goto out;
	head[got] = 0;
	n = strspn(head, " \t\r\n");
	if (head[n] != '{' || strncmp(head + n + 1 + strspn(head + n + 1, " \t\r\n"), "\"events\"", 8))
		goto out; /* gzip (0x1f 0x8b), a trace, a map: the full scan */
	len = st.st_size > (off_t)TAIL_CHUNK ? TAIL_CHUNK : (size_t)st.st_size;
	tail = cm_xmalloc(len + 1);
	if ((got = pread(fd, tail, len, st.st_size - (off_t)len)) != (ssize_t)len)
		goto out;
	tail[len] = 0;
	/* the document must end here: '}' then blanks */
	for (n = len; n > 0 && strchr(" \t\r\n", tail[n - 1]); n--)
		;
	if (n == 0 || tail[n - 1] != '}')
		goto out;
	/* the last "source" member, an object without nested ones, after the
	 * last NUL byte if any (strstr would stop there) */
	for (open_ = tail + len; open_ > tail && open_[-1]; open_--)
		;
	for (src = NULL; (open_ = strstr(open_, "\"source\"")); open_++)
		src = open_;
	if (!src)
		goto out;
	open_ = src + 8;
	open_ += strspn(open_, " \t\r\n");
	if (*open_++ != ':')
		goto out;
	open_ += strspn(open_, " \t\r\n");
	if (*open_ != '{' || !(close_ = strchr(open_, '}')) || memchr(open_ + 1, '{', (size_t)(close_ - open_ - 1)))
		goto out;
	/* parse {"source": {...}} with the full scan's callbacks */
	bscan_begin(&s, f);
	doc = cm_xmalloc((size_t)(close_ - open_) + 16);
	len = (size_t)sprintf(doc, "{\"source\":%.*s}", (int)(close_ - open_ + 1), open_);
	h = yajl_alloc(&bscan_callbacks, NULL, &s);
	if (yajl_parse(h, (unsigned char *)doc, len) == yajl_status_ok && yajl_complete_parse(h) == yajl_status_ok &&
	    f->pid >= 0) {
		f->kind = CM_BK_WINDOW;
		f->start_ns = s.src_start;
		f->gpu_events = -1;
		rc = 0;
	}
	yajl_free(h);
	free(doc);
	if (rc < 0) { /* start again from nothing */
		free(f->host);
		f->host = NULL;
		f->pid = f->rank = f->start_ns = f->end_ns = -1;
	}
out:
	free(tail);
	close(fd);
	return rc;
}

void cm_bscan(const char *path, cm_bfacts *f)
{
	cm_bscan_head(path, f);
	if (f->kind == CM_BK_WINDOW && f->gpu_events < 0) {
		cm_bfacts_free(f);
		cm_bscan_full(path, f);
	}
}

void cm_bscan_head(const char *path, cm_bfacts *f)
{
	bscan_facts_begin(f);
	if (scan_tail(path, f) < 0)
		cm_bscan_full(path, f);
}

int cm_bscan_tail(const char *path, cm_bfacts *f)
{
	bscan_facts_begin(f);
	return scan_tail(path, f);
}

