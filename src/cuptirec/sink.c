/* sink.c - buffered, optionally gzip-compressed output to the window file. */
#include "sink.h"
#include "opts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* 256 KiB: large enough that write(2) calls are rare next to the encoding work,
 * small next to the activity buffers the pool holds. */
#define CREC_SINK_BUFSZ (256u * 1024u)

struct crec_sink {
	int fd;
	int gzip;
	int err;              /* first errno (or -1 for a zlib failure), 0 if none */
	const char *what;     /* the operation that failed */
	char *path;
	unsigned char *buf;   /* bytes waiting for write(2) */
	size_t len;
	unsigned long long count;
	z_stream zs;
};

/* Write all of p[0..n) to the fd: crec_write_out (opts.h), which waits on
 * a non-blocking descriptor and makes a reader gone EPIPE, not SIGPIPE.
 * Returns 0, or -1 with the error recorded in S. */
static int crec_sink_flushbytes(crec_sink *s, const unsigned char *p, size_t n)
{
	int err = crec_write_out(s->fd, p, n);

	if (err) {
		s->err = err;
		s->what = "write";
		return -1;
	}
	return 0;
}

/* Write out the pending buffer.  Returns 0 or -1 (error recorded). */
static int crec_sink_drain(crec_sink *s)
{
	int rc = crec_sink_flushbytes(s, s->buf, s->len);
	s->len = 0;
	return rc;
}

/* Run deflate over IN[0..n) with FLUSH, sending full output buffers to the
 * fd.  Returns 0 or -1 (error recorded). */
static int crec_sink_deflate(crec_sink *s, const void *in, size_t n, int flush)
{
	int zr;

	s->zs.next_in = (Bytef *)in;
	s->zs.avail_in = (uInt)n;
	do {
		s->zs.next_out = s->buf + s->len;
		s->zs.avail_out = (uInt)(CREC_SINK_BUFSZ - s->len);
		zr = deflate(&s->zs, flush);
		if (zr == Z_STREAM_ERROR) {
			s->err = -1;
			s->what = "deflate";
			return -1;
		}
		s->len = CREC_SINK_BUFSZ - s->zs.avail_out;
		if (s->len == CREC_SINK_BUFSZ && crec_sink_drain(s))
			return -1;
	} while (s->zs.avail_in > 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

/* Open PATH for the window: crec_open_out_wait (opts.h), O_CREAT |
 * O_TRUNC, a FIFO's reader waited for WAIT seconds.  Returns the
 * descriptor, or -1 with the message (the path and why) in ERR. */
static int crec_sink_open_fd(const char *path, double wait, char *err, size_t errsz)
{
	int no_reader, fd = crec_open_out_wait(path, O_CREAT | O_TRUNC, wait, &no_reader);

	if (fd < 0 && no_reader)
		snprintf(err, errsz, "%s: a FIFO without a reader for %g s", path, wait);
	else if (fd < 0)
		snprintf(err, errsz, "%s: %s", path, strerror(errno));
	return fd;
}

crec_sink *crec_sink_open(const char *path, int gzip, char *err, size_t errsz)
{
	return crec_sink_open_wait(path, gzip, CREC_FIFO_WAIT_DEFAULT, err, errsz);
}

crec_sink *crec_sink_open_wait(const char *path, int gzip, double fifo_wait, char *err, size_t errsz)
{
	crec_sink *s = calloc(1, sizeof *s);

	if (!s || !(s->buf = malloc(CREC_SINK_BUFSZ)) || !(s->path = strdup(path))) {
		snprintf(err, errsz, "%s: out of memory", path);
		goto fail;
	}
	s->fd = crec_sink_open_fd(path, fifo_wait, err, errsz);
	if (s->fd < 0)
		goto fail;
	s->gzip = gzip;
	/* windowBits 15 + 16: a gzip wrapper instead of zlib's */
	if (gzip && deflateInit2(&s->zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		snprintf(err, errsz, "%s: cannot initialise zlib", path);
		close(s->fd);
		goto fail;
	}
	return s;
fail:
	if (s) {
		free(s->buf);
		free(s->path);
		free(s);
	}
	return NULL;
}

int crec_sink_write(crec_sink *s, const void *p, size_t n)
{
	if (s->err)
		return -1;
	s->count += n;
	if (s->gzip)
		return n ? crec_sink_deflate(s, p, n, Z_NO_FLUSH) : 0;
	if (n >= CREC_SINK_BUFSZ) {
		if (crec_sink_drain(s))
			return -1;
		return crec_sink_flushbytes(s, p, n);
	}
	if (CREC_SINK_BUFSZ - s->len < n && crec_sink_drain(s))
		return -1;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

unsigned long long crec_sink_count(const crec_sink *s)
{
	return s->count;
}

/* Free everything S owns (the fd must be closed already). */
static void crec_sink_free(crec_sink *s)
{
	if (s->gzip)
		deflateEnd(&s->zs);
	free(s->buf);
	free(s->path);
	free(s);
}

int crec_sink_close(crec_sink *s, char *err, size_t errsz)
{
	int rc = 0;

	if (!s->err && s->gzip)
		crec_sink_deflate(s, NULL, 0, Z_FINISH);
	if (!s->err)
		crec_sink_drain(s);
	if (close(s->fd) != 0 && !s->err) {
		s->err = errno;
		s->what = "close";
	}
	if (s->err) {
		snprintf(err, errsz, "%s: %s failed: %s", s->path, s->what,
			 s->err > 0 ? strerror(s->err) : "zlib error");
		rc = -1;
	}
	crec_sink_free(s);
	return rc;
}

void crec_sink_abandon(crec_sink *s)
{
	close(s->fd);
	crec_sink_free(s);
}
