/* output.c - buffered, checked output to stdout or to FILE via a temporary file.
 *
 * Gzip output is compressed by a second thread: deflate costs about as much
 * as the merge itself, so while the merge fills one buffer the compressor
 * works on the other (two buffers, one hand-over at a time).  The zlib
 * stream and the file descriptor belong to that thread until it is joined
 * in cm_output_close. */
#include "config.h"
#include "output.h"
#include "diag.h"
#include "exitcode.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* 256 KiB: large enough that write(2) calls do not show in a profile. */
#define OUT_BUFSIZE (256u * 1024u)

struct cm_output {
	int fd;
	char *path;     /* final name, or NULL for stdout */
	char *tmp_path; /* temporary name while writing */
	const char *shown; /* name for messages */
	int gzip;
	z_stream zs;
	unsigned char *buf; /* pending plain bytes */
	size_t len;
	unsigned char *zbuf; /* compressed bytes */
	int failed, pipe_closed;
	int spool; /* a temporary file of ours: no stdout rules */
	/* gzip: the compressor thread and the buffer it owns while job is set */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, job, quit;
	unsigned char *busy;
	size_t busy_len;
	cm_diag_slot comp_diag; /* the compressor's error, reported once joined */
};

static int flush_buf(cm_output *out, int finish);

int cm_output_pipe_closed(const cm_output *out) { return out->pipe_closed; }

int cm_temp_fd(const char *tag)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;
	snprintf(path, sizeof path, "%s/cuptimerge-%s.XXXXXX", dir && *dir ? dir : "/tmp", tag);
	fd = mkstemp(path);
	if (fd < 0)
		return cm_error(CM_EXIT_IO, path, -1, "cannot create a temporary file: %s", strerror(errno)), -1;
	unlink(path);
	return fd;
}

FILE *cm_temp_file(const char *tag)
{
	int fd = cm_temp_fd(tag);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w+b");
	if (fd >= 0 && !f) {
		cm_error(CM_EXIT_IO, NULL, -1, "cannot open a temporary file: %s", strerror(errno));
		close(fd);
	}
	return f;
}

cm_output *cm_output_open_spool(void)
{
	cm_output *out;
	int fd = cm_temp_fd("events");
	if (fd < 0)
		return NULL;
	out = cm_output_open(NULL, -1);
	if (!out) {
		close(fd);
		return NULL;
	}
	out->fd = fd;
	out->shown = "<temporary file>";
	out->spool = 1;
	return out;
}

int cm_output_spool_done(cm_output *out)
{
	int fd = out->fd;
	if (flush_buf(out, 1) < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		if (!out->failed)
			cm_error(CM_EXIT_IO, out->shown, -1, "cannot rewind: %s", strerror(errno));
		close(fd);
		fd = -1;
	}
	out->fd = -1;
	out->path = NULL;
	cm_output_close(out, 0);
	return fd;
}

cm_output *cm_output_open(const char *path, int gzip_level)
{
	cm_output *out = calloc(1, sizeof *out);
	if (!out)
		return cm_error(CM_EXIT_IO, NULL, -1, "out of memory"), NULL;
	out->buf = malloc(OUT_BUFSIZE);
	out->zbuf = malloc(OUT_BUFSIZE);
	out->busy = malloc(OUT_BUFSIZE);
	pthread_mutex_init(&out->mu, NULL);
	pthread_cond_init(&out->cv, NULL);
	if (!out->buf || !out->zbuf || !out->busy)
		goto nomem;
	if (!path || !strcmp(path, "-")) {
		out->fd = 1;
		out->shown = "<stdout>";
	} else {
		size_t n = strlen(path) + sizeof ".tmpXXXXXX";
		mode_t mask;
		out->path = strdup(path);
		out->tmp_path = malloc(n);
		if (!out->path || !out->tmp_path)
			goto nomem;
		snprintf(out->tmp_path, n, "%s.tmpXXXXXX", path);
		out->shown = out->path;
		out->fd = mkstemp(out->tmp_path);
		if (out->fd < 0) {
			cm_error(CM_EXIT_IO, path, -1, "cannot create a temporary file beside it: %s",
				 strerror(errno));
			free(out->tmp_path);
			out->tmp_path = NULL;
			cm_output_close(out, 0);
			return NULL;
		}
		/* mkstemp makes 0600; give the file the mode a plain create would */
		mask = umask(0);
		umask(mask);
		fchmod(out->fd, 0666 & ~mask);
	}
	if (gzip_level >= 0) {
		out->gzip = 1;
		/* 15 + 16: gzip wrapper; memLevel 8 is zlib's default */
		if (deflateInit2(&out->zs, gzip_level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			goto nomem;
	}
	return out;
nomem:
	cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
	cm_output_close(out, 0);
	return NULL;
}

/* write(2) all of P, retrying short writes.  Returns 0 or -1 (reported). */
static int write_all(cm_output *out, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(out->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			out->failed = 1;
			if (errno == EPIPE && !out->path) {
				out->pipe_closed = 1; /* the reader is gone: not our error to report */
				return -1;
			}
			cm_error(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(errno));
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Deflate DATA[0..LEN) and write what comes out; FINISH ends the gzip
 * stream.  Runs on the compressor thread, or on the main one once that is
 * joined.  Returns 0 or -1. */
static int deflate_out(cm_output *out, unsigned char *data, size_t len, int finish)
{
	out->zs.next_in = data;
	out->zs.avail_in = (uInt)len;
	for (;;) {
		int rc;
		out->zs.next_out = out->zbuf;
		out->zs.avail_out = OUT_BUFSIZE;
		rc = deflate(&out->zs, finish ? Z_FINISH : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR) {
			out->failed = 1;
			return cm_error(CM_EXIT_IO, out->shown, -1, "deflate failed"), -1;
		}
		if (write_all(out, out->zbuf, OUT_BUFSIZE - out->zs.avail_out) < 0)
			return -1;
		if (finish ? rc == Z_STREAM_END : out->zs.avail_in == 0)
			break;
	}
	return 0;
}

/* The compressor thread: deflate each buffer handed over until told to quit. */
static void *compressor(void *arg)
{
	cm_output *out = arg;
	cm_diag_defer(&out->comp_diag); /* the main thread reports it, once */
	pthread_mutex_lock(&out->mu);
	for (;;) {
		while (!out->job && !out->quit)
			pthread_cond_wait(&out->cv, &out->mu);
		if (!out->job)
			break;
		pthread_mutex_unlock(&out->mu);
		if (!out->failed)
			deflate_out(out, out->busy, out->busy_len, 0);
		pthread_mutex_lock(&out->mu);
		out->job = 0;
		pthread_cond_broadcast(&out->cv);
	}
	pthread_mutex_unlock(&out->mu);
	return NULL;
}

/* Wait until the compressor has no buffer (then out->failed is current). */
static void wait_idle(cm_output *out)
{
	pthread_mutex_lock(&out->mu);
	while (out->job)
		pthread_cond_wait(&out->cv, &out->mu);
	pthread_mutex_unlock(&out->mu);
}

/* Stop and join the compressor (it finishes the buffer it has), then report
 * its error, if any (unless the run has reported one already). */
static void stop_compressor(cm_output *out)
{
	if (!out->started)
		return;
	pthread_mutex_lock(&out->mu);
	out->quit = 1;
	pthread_cond_broadcast(&out->cv);
	pthread_mutex_unlock(&out->mu);
	pthread_join(out->th, NULL);
	out->started = 0;
	cm_diag_settle(&out->comp_diag);
}

/* Push the pending bytes out, through deflate when gzip.  FINISH ends the
 * gzip stream.  Returns 0 or -1. */
static int flush_buf(cm_output *out, int finish)
{
	unsigned char *t;
	int rc;
	if (out->failed)
		return -1;
	if (!out->gzip) {
		rc = write_all(out, out->buf, out->len);
		out->len = 0;
		return rc;
	}
	if (finish) {
		stop_compressor(out);
		rc = out->failed ? -1 : deflate_out(out, out->buf, out->len, 1);
		out->len = 0;
		return rc;
	}
	if (!out->started) {
		if (pthread_create(&out->th, NULL, compressor, out) != 0) {
			rc = deflate_out(out, out->buf, out->len, 0); /* no thread: do it here */
			out->len = 0;
			return rc;
		}
		out->started = 1;
	}
	wait_idle(out);
	if (out->failed)
		return -1;
	/* hand this buffer over, fill the other */
	t = out->busy;
	out->busy = out->buf;
	out->buf = t;
	pthread_mutex_lock(&out->mu);
	out->busy_len = out->len;
	out->job = 1;
	pthread_cond_broadcast(&out->cv);
	pthread_mutex_unlock(&out->mu);
	out->len = 0;
	return 0;
}

int cm_output_write(cm_output *out, const void *data, size_t len)
{
	const unsigned char *p = data;
	if (out->failed)
		return -1;
	while (len) {
		size_t room = OUT_BUFSIZE - out->len, n = len < room ? len : room;
		memcpy(out->buf + out->len, p, n);
		out->len += n;
		p += n;
		len -= n;
		if (out->len == OUT_BUFSIZE && flush_buf(out, 0) < 0)
			return -1;
	}
	return 0;
}

int cm_output_close(cm_output *out, int ok)
{
	int rc = 0;
	if (!out)
		return -1;
	if (ok && !out->failed && flush_buf(out, 1) < 0)
		ok = 0;
	stop_compressor(out); /* a failed run: let it drop its buffer */
	if (out->failed)
		ok = 0;
	if (out->gzip)
		deflateEnd(&out->zs);
	if (out->path) {
		if (out->fd >= 0) {
			if (ok && fsync(out->fd) < 0 && errno != EINVAL && errno != EROFS) {
				cm_error(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(errno));
				ok = 0;
			}
			if (close(out->fd) < 0 && ok) {
				cm_error(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(errno));
				ok = 0;
			}
		}
		if (out->tmp_path) {
			if (ok && rename(out->tmp_path, out->path) < 0) {
				cm_error(CM_EXIT_IO, out->shown, -1, "cannot rename %s to it: %s", out->tmp_path,
					 strerror(errno));
				ok = 0;
			}
			if (!ok)
				unlink(out->tmp_path);
		}
	} else if (out->spool) {
		if (out->fd >= 0)
			close(out->fd);
	} else if (ok) {
		/* stdout: a late EIO/ENOSPC shows up here; check it (jq does the same) */
		if (close(1) < 0 && errno != EINTR) {
			if (errno == EPIPE)
				out->pipe_closed = 1;
			else
				cm_error(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(errno));
			ok = 0;
		}
	}
	rc = ok ? 0 : out->pipe_closed ? 1 : -1;
	free(out->path);
	free(out->tmp_path);
	free(out->buf);
	free(out->zbuf);
	free(out->busy);
	pthread_mutex_destroy(&out->mu);
	pthread_cond_destroy(&out->cv);
	free(out);
	return rc;
}

/* Hand the buffer to the output once it is this big. */
#define EVOUT_FLUSH (1u << 20)

int cm_evout_flush(cm_evout *eo)
{
	int rc = cm_output_write(eo->out, eo->buf.p, eo->buf.len);
	eo->buf.len = 0;
	return rc;
}

int cm_evout_next(cm_evout *eo)
{
	if (eo->buf.len >= EVOUT_FLUSH && cm_evout_flush(eo) < 0)
		return -1;
	if (eo->first)
		eo->first = 0;
	else
		cm_buf_putc(&eo->buf, ',');
	return 0;
}

int cm_evout_meta(cm_evout *eo, const char *name, const char *ts_text, cm_int pid, cm_int tid,
		  const char *arg_key, const char *arg_text, cm_int arg_int)
{
	cm_buf *b = &eo->buf;
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"M\",\"name\":");
	cm_jw_string(b, name, strlen(name));
	cm_buf_lit(b, ",\"ts\":");
	cm_buf_puts(b, ts_text);
	cm_buf_lit(b, ",\"pid\":");
	cm_jw_int(b, pid);
	cm_buf_lit(b, ",\"tid\":");
	cm_jw_int(b, tid);
	cm_buf_lit(b, ",\"args\":{");
	cm_jw_string(b, arg_key, strlen(arg_key));
	cm_buf_putc(b, ':');
	if (arg_text)
		cm_jw_string(b, arg_text, strlen(arg_text));
	else
		cm_jw_int(b, arg_int);
	cm_buf_lit(b, "}}");
	return 0;
}
