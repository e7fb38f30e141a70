/* sink.c - buffered, optionally gzip-compressed output to the window file. */
#include "sink.h"
#include "opts.h"
#include "base/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* Write all of p[0..n) to the fd, retrying on EINTR and short writes.
 * Returns 0, or -1 with the error recorded in S.
 *
 * SIGPIPE is blocked on this thread while it writes: the window may be a
 * FIFO or the program's own standard output, whose reader can go away,
 * and the trailer is written on the program's thread (its exit, or
 * cuptirec_end), where the signal's default action killed the program
 * over its window.  The write fails with EPIPE instead, a warning like any
 * other; the signal it raised on this thread is taken back, unless one was
 * pending here already (the program's, left for it). */
static int crec_sink_flushbytes(crec_sink *s, const unsigned char *p, size_t n)
{
	static const struct timespec now = { 0, 0 };
	sigset_t sigpipe, old, pending;
	int err, had;

	if (!n)
		return 0;
	sigemptyset(&sigpipe);
	sigaddset(&sigpipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigpipe, &old);
	had = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	err = cm_write_all(s->fd, p, n);
	if (err == EPIPE && !had)
		sigtimedwait(&sigpipe, NULL, &now);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
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

/* Seconds from T0 to T1. */
static double crec_sink_secs(const struct timespec *t0, const struct timespec *t1)
{
	return (double)(t1->tv_sec - t0->tv_sec) + (double)(t1->tv_nsec - t0->tv_nsec) / 1e9;
}

/* Open PATH for the window by crec_open_out (opts.h), O_CREAT | O_TRUNC:
 * a regular file made or truncated in place, as before; a name of one of
 * the program's descriptors (/dev/stdout) that descriptor, duplicated, so
 * `>> log` keeps what it held; a device written through.  A FIFO is opened
 * without waiting, and while it has no reader (ENXIO) the open is tried
 * again, at most every 100 ms, for up to WAIT seconds: the window opens
 * at the program's CUDA start, often milliseconds after a reader was
 * started beside it (tests/gpu/run.sh's pool_exhaustion: a
 * single try lost the window, and the reader waited forever), while the
 * blocking open that `> PATH` does stopped the program for good when no
 * reader came.  Returns the descriptor, blocking (a full pipe waits for
 * its reader), or -1 with errno set; ENXIO after WAIT seconds is said as
 * such in ERR. */
static int crec_sink_open_fd(const char *path, double wait, char *err, size_t errsz)
{
	struct timespec t0, t1, nap = { 0, 1000000 };
	struct stat st;
	int fd, e;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = crec_open_out(path, O_CREAT | O_TRUNC);
		e = errno;
		if (fd >= 0)
			return fd;
		if (e != ENXIO || stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (crec_sink_secs(&t0, &t1) >= wait) {
			snprintf(err, errsz, "%s: a FIFO without a reader for %g s", path, wait);
			errno = e;
			return -1;
		}
		nanosleep(&nap, NULL);
		/* 1, 2, 4 ... ms, then every 100 ms: a reader started beside
		 * the program is found soon, one that never comes costs little */
		if (nap.tv_nsec < 100000000)
			nap.tv_nsec = nap.tv_nsec * 2 > 100000000 ? 100000000 : nap.tv_nsec * 2;
	}
	snprintf(err, errsz, "%s: %s", path, strerror(e));
	errno = e;
	return -1;
}

crec_sink *crec_sink_open(const char *path, int gzip, char *err, size_t errsz)
{
	return crec_sink_open_wait(path, gzip, CREC_SINK_FIFO_WAIT, err, errsz);
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
