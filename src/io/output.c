/* output.c - buffered, checked output of the merged trace: its bytes,
 * plain or gzip, through a transcoder when one is set, to the destination
 * that outfile.c opens (standard output, or -o FILE through a temporary
 * file), or to several outputs at once (a tee).
 *
 * Gzip output is deflated by pgzip.c in blocks on the -j worker threads
 * (one beside the merge with -j 1), pigz's way, and this file's write_all,
 * on the caller's thread, writes them in order (pgzip.c's essay says how).
 * The blocks do not depend on the number of threads, so neither do the
 * compressed bytes.
 *
 * From 4 jobs up the bytes, plain or compressed, go through a writing
 * thread (outwriter.c) instead of write_all: the callers copy them into
 * its buffers and go on while it pays write(2)'s copy, and with --sync
 * an -o file's write-back has a thread of its own (writeback.c).  A write
 * error found there is reported by the next call here, on the caller's
 * thread, as write_all would have. */
#include "config.h"
#include "io/output.h"
#include "io/outfile.h"
#include "io/pgzip.h"
#include "io/pgzcrew.h"
#include "io/outwriter.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 256 KiB: large enough that write(2) calls do not show in a profile. */
#define OUT_BUFSIZE (256u * 1024u)
/* Our own buffer's first size (own_room). */
#define OWN_FIRST (4u << 10)

/* One output: its destination, and the stages in front of it. */
struct cm_output {
	cm_outfile file; /* where the bytes land (outfile.h); unused by a tee */
	cm_pgz *pgz;     /* gzip output (pgzip.c), or NULL */
	const cm_output_codec *codec; /* --format=perfetto: the JSON text goes through it */
	void *pft;                    /* ... the transcoder, or NULL */
	unsigned char *buf; /* pending plain bytes: own_buf, or the writer's buffer */
	size_t len, cap;
	size_t most;        /* our own buffer's size at most, and the pieces written as they are */
	cm_owriter *aw;     /* the writing thread (outwriter.h), or NULL: write(2) here */
	unsigned char *own_buf; /* out->buf when it is ours: grown to need (own_room), or NULL */
	/* set by whichever thread writes (the caller, or the .pftrace codec's
	 * passer thread through pft_sink), read by the caller: atomic */
	atomic_int failed, pipe_closed;
	int finished;    /* cm_output_finish has run: every byte written (or failed) */
	int crew;        /* gzip blocks deflated, and written, by a crew's workers (crew_sink) */
	int sink_err;    /* ... the errno of a write there, for the caller to report */
	int is_tee;      /* the same bytes to each of tee[0..ntee) (--split's shared text) */
	cm_output **tee; /* the tee's outputs, not owned */
	size_t ntee;
};

static int flush_buf(cm_output *out, int finish);
static int write_bytes(cm_output *out, const void *data, size_t len);

/* The transcoder of the outputs opened next (cm_output_set_codec). */
static const cm_output_codec *output_codec;

void cm_output_set_codec(const cm_output_codec *codec) { output_codec = codec; }

/* --sync: the outputs opened next are made durable (cm_output_set_sync). */
static int output_sync;

void cm_output_set_sync(int on) { output_sync = on; }

/* The transcoder's sink: its protobuf goes out as the JSON would. */
static int pft_sink(void *ctx, const void *p, size_t n) { return write_bytes(ctx, p, n); }

void *cm_output_codec_state(const cm_output *out) { return out->pft; }

int cm_output_gz_waits(const cm_output *out, double *wait, double *emit)
{
	*wait = *emit = 0;
	if (out->pgz)
		cm_pgz_waits(out->pgz, wait, emit);
	return out->pgz != NULL;
}

int cm_output_pipe_closed(const cm_output *out)
{
	for (size_t i = 0; out->is_tee && i < out->ntee; i++)
		if (out->tee[i]->pipe_closed)
			return 1;
	return out->pipe_closed;
}

cm_output *cm_output_tee(cm_output *const *outs, size_t n)
{
	cm_output *out = cm_xcalloc(1, sizeof *out);
	out->is_tee = 1;
	out->tee = cm_xmalloc(n * sizeof *out->tee);
	memcpy(out->tee, outs, n * sizeof *out->tee);
	out->ntee = n;
	return out;
}

static int pgz_sink(void *ctx, const unsigned char *p, size_t n);
static int crew_sink(void *ctx, const unsigned char *p, size_t n);

/* From 4 jobs, the writing thread, and with --sync the write-back's
 * (outwriter.h; without --sync out->file.wb follows nothing: no thread). */
static void start_threads(cm_output *out, int threads)
{
	size_t unit;
	if ((out->aw = cm_owriter_start(out->file.fd, &out->file.wb, threads, &unit))) {
		out->buf = cm_owriter_buf(out->aw);
		out->cap = unit; /* the writer's buffers replace ours */
	}
}

/* cm_output_open, or cm_output_open_crew with CREW (then gzip at its
 * level, THREADS 1). */
static cm_output *open_output(const char *path, int gzip_level, int threads, cm_pgz_crew *crew);

cm_output *cm_output_open(const char *path, int gzip_level, int threads)
{
	return open_output(path, gzip_level, threads, NULL);
}

cm_output *cm_output_open_crew(const char *path, cm_pgz_crew *crew)
{
	return open_output(path, -1, 1, crew); /* the level is the crew's */
}

/* The deflate workers of a gzip output of THREADS jobs: one a job, or
 * CUPTIMERGE_GZIP_THREADS (1-64), a benchmarking aid (bench/dev-ahead17.sh:
 * a .pftrace.gz deflates a quarter of the JSON's bytes, so its render may
 * want the CPUs more).  The blocks, so the bytes, do not depend on it. */
static int deflate_threads(int threads)
{
	const char *e = getenv("CUPTIMERGE_GZIP_THREADS");
	if (e && *e && atoi(e) >= 1 && atoi(e) <= 64)
		return atoi(e);
	return threads < 1 ? 1 : threads;
}

static cm_output *open_output(const char *path, int gzip_level, int threads, cm_pgz_crew *crew)
{
	cm_output *out = calloc(1, sizeof *out);
	if (!out)
		return cm_error(CM_EXIT_IO, NULL, -1, "out of memory"), NULL;
	out->most = OUT_BUFSIZE;
	if (cm_outfile_open(&out->file, path, output_sync) < 0) {
		cm_output_close(out, 0);
		return NULL;
	}
	/* gzip or protobuf onto a terminal is bytes nobody can read, which can
	 * set the terminal's modes astray: main.c refuses standard output on
	 * one with a usage hint; this is every other way of naming one, which
	 * went through as any device does (-o /dev/tty, /dev/pts/N, a link to
	 * one called x.pftrace, a file of --split), found as the output opens:
	 * for -o before any input is read (merge.c), for --split's files once
	 * the steps are known (none of them is then left).  On the descriptor,
	 * not the name: what the name leads to is what gets the bytes. */
	if ((crew || gzip_level >= 0 || output_codec) && isatty(out->file.fd)) {
		cm_error(CM_EXIT_USAGE, out->file.shown, -1,
			 "%s output is not written to a terminal: give -o FILE or a pipe",
			 output_codec ? "Perfetto's protobuf" : "gzip");
		cm_output_close(out, 0);
		return NULL;
	}
	start_threads(out, threads);
	out->crew = crew != NULL;
	if (crew ? !(out->pgz = cm_pgz_new_crew(crew, crew_sink, out))
		 : gzip_level >= 0 && !(out->pgz = cm_pgz_new(gzip_level, deflate_threads(threads), pgz_sink, out))) {
		cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
		cm_output_close(out, 0);
		return NULL;
	}
	if ((out->codec = output_codec))
		out->pft = out->codec->open(pft_sink, out, out->file.shown, threads);
	return out;
}

/* A write (or its write-back) failed with ERR: report it, unless it is a
 * closed pipe (the reader is gone: not our error to report).  -1. */
static int write_failed(cm_output *out, int err)
{
	out->failed = 1;
	if (err == EPIPE && (out->file.kind == CM_OUTFILE_STDOUT || out->file.kind == CM_OUTFILE_HELD ||
			      out->file.kind == CM_OUTFILE_DIRECT))
		out->pipe_closed = 1;
	else
		cm_error(CM_EXIT_IO, out->file.shown, -1, "write error: %s", strerror(err));
	return -1;
}

/* write(2) all of P (cm_write_all) and start its write-back
 * (writeback.c).  Returns 0 or -1 (reported). */
static int write_all(cm_output *out, const unsigned char *p, size_t n)
{
	int err = cm_write_all(out->file.fd, p, n);
	if (!err)
		err = cm_wback_wrote(&out->file.wb, n);
	return err ? write_failed(out, err) : 0;
}

/* Write the buffer's plain bytes, or hand them to the writing thread (its
 * next buffer becomes ours); with FINISH, wait until that thread has
 * written all.  0 or -1. */
static int hand_over(cm_output *out, int finish)
{
	int rc;
	if (!out->aw) {
		rc = write_all(out, out->buf, out->len);
		out->len = 0;
		return rc;
	}
	rc = cm_owriter_put(out->aw, out->len);
	out->buf = cm_owriter_buf(out->aw);
	out->len = 0;
	if (rc == 0 && finish)
		rc = cm_owriter_drain(out->aw);
	return rc ? write_failed(out, rc) : 0;
}

void cm_output_set_buffer(cm_output *out, size_t most)
{
	if (!out->own_buf && most >= OWN_FIRST && most <= OUT_BUFSIZE)
		out->most = most;
}

/* Room for N more plain bytes in our own buffer (none with a writing
 * thread, whose buffers we fill): it is made at the first byte and grown,
 * doubling from OWN_FIRST, up to out->most, as the bytes pending need.
 * A gzip output never has one (pgzip.c keeps its blocks; its sink writes);
 * a --split file keeps the small pieces between its big ones: the 60
 * files of a split each held 256 KiB from their opening to the end, 15.7
 * MB.  0, or -1 after reporting (out of memory). */
static int own_room(cm_output *out, size_t n)
{
	size_t cap = out->cap ? out->cap : OWN_FIRST;
	unsigned char *p;
	if (out->aw || out->cap - out->len >= n || out->cap == out->most)
		return 0;
	while (cap < out->most && cap - out->len < n)
		cap *= 2;
	if (!(p = realloc(out->own_buf, cap))) {
		out->failed = 1;
		return cm_error(CM_EXIT_IO, NULL, -1, "out of memory"), -1;
	}
	out->buf = out->own_buf = p;
	out->cap = cap;
	return 0;
}

/* Append N plain bytes at P to the buffer, handing it on whenever full
 * (out->most, or the writing thread's buffer).  0 or -1. */
static int put_plain(cm_output *out, const unsigned char *p, size_t n)
{
	while (n) {
		size_t room, k;
		if (own_room(out, n) < 0)
			return -1;
		room = out->cap - out->len;
		k = n < room ? n : room;
		memcpy(out->buf + out->len, p, k);
		out->len += k;
		p += k;
		n -= k;
		if (out->len == out->cap && (out->aw || out->cap == out->most) && hand_over(out, 0) < 0)
			return -1;
	}
	return 0;
}

/* pgzip's sink: write the compressed bytes (on the caller's thread, so
 * write_all reports as it does for plain output).  0 or -1. */
static int pgz_sink(void *ctx, const unsigned char *p, size_t n)
{
	cm_output *out = ctx;
	return out->aw ? put_plain(out, p, n) : write_all(out, p, n);
}

/* The sink of a crew's stream, on the worker that writes the stream's
 * blocks (pgzcrew.c: one at a time, in order): what pgz_sink does, but a
 * failed write only noted in sink_err, for the caller's thread to report
 * (pgz_failed), the workers never printing.  The caller reads sink_err
 * after pgzip has returned CM_PGZ_SINK, which it learns under the
 * stream's lock.  0 or -1. */
static int crew_sink(void *ctx, const unsigned char *p, size_t n)
{
	cm_output *out = ctx;
	int err = 0;
	if (!out->aw) {
		if (!(err = cm_write_all(out->file.fd, p, n)))
			err = cm_wback_wrote(&out->file.wb, n);
	}
	while (out->aw && n && !err) { /* put_plain, its hand_over's errno kept */
		size_t room = out->cap - out->len, k = n < room ? n : room;
		memcpy(out->buf + out->len, p, k);
		out->len += k;
		p += k;
		n -= k;
		if (out->len == out->cap) {
			err = cm_owriter_put(out->aw, out->len);
			out->buf = cm_owriter_buf(out->aw);
			out->len = 0;
		}
	}
	if (!err)
		return 0;
	out->sink_err = err;
	return -1;
}

/* After pgzip returned RC (not CM_PGZ_OK): the run has failed; report what
 * the sink has not reported already.  Returns -1. */
static int pgz_failed(cm_output *out, int rc)
{
	if (rc == CM_PGZ_SINK && out->sink_err && !out->failed) /* crew_sink's */
		return write_failed(out, out->sink_err);
	if (!out->failed) { /* CM_PGZ_SINK comes from write_all, which set it */
		if (rc == CM_PGZ_NOMEM)
			cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
		else
			cm_error(CM_EXIT_IO, out->file.shown, -1, "deflate failed");
	}
	out->failed = 1;
	return -1;
}

/* Push the pending bytes out (to pgzip when gzip, which FINISH ends).
 * Returns 0 or -1. */
static int flush_buf(cm_output *out, int finish)
{
	int rc;
	if (out->failed)
		return -1;
	if (out->pgz) { /* cm_output_write hands it everything at once */
		rc = finish ? cm_pgz_finish(out->pgz) : CM_PGZ_OK;
		if (rc != CM_PGZ_OK)
			return pgz_failed(out, rc);
		if (!finish || !out->aw)
			return 0; /* the sink wrote it, or put it in the buffer */
	}
	return hand_over(out, finish);
}

int cm_output_write(cm_output *out, const void *data, size_t len)
{
	if (out->failed)
		return -1;
	if (out->pft && out->codec->write(out->pft, data, len) < 0) {
		out->failed = 1;
		return -1;
	}
	return out->pft ? 0 : write_bytes(out, data, len);
}

/* Append LEN bytes of the output's own format (the caller's JSON, or the
 * transcoder's protobuf).  0 or -1. */
static int write_bytes(cm_output *out, const void *data, size_t len)
{
	const unsigned char *p = data;
	int rc;
	if (out->failed)
		return -1;
	if (out->is_tee) {
		for (size_t i = 0; i < out->ntee; i++)
			if (cm_output_write(out->tee[i], data, len) < 0) {
				out->failed = 1;
				return -1;
			}
		return 0;
	}
	if (out->pgz) /* it has buffers of its own: no copy into ours */
		return (rc = cm_pgz_write(out->pgz, data, len)) == CM_PGZ_OK ? 0 : pgz_failed(out, rc);
	if (len >= out->most && !out->aw) {
		/* a large piece (the merge hands over its 1 MiB blocks) goes out
		 * as it is, after what is buffered: a copy into the buffer first
		 * cost a memcpy of the whole output */
		if (out->len && flush_buf(out, 0) < 0)
			return -1;
		return write_all(out, p, len);
	}
	return put_plain(out, p, len);
}

int cm_output_finish(cm_output *out)
{
	if (out->finished)
		return out->failed ? -1 : 0;
	out->finished = 1;
	if (!out->failed && out->pft && out->codec->finish(out->pft) < 0)
		out->failed = 1;
	if (!out->failed && !out->is_tee)
		flush_buf(out, 1);
	return out->failed ? -1 : 0;
}

int cm_output_close(cm_output *out, int ok)
{
	int rc = 0;
	if (!out)
		return -1;
	if (ok && cm_output_finish(out) < 0)
		ok = 0;
	if (out->pft)
		out->codec->free(out->pft);
	out->pft = NULL;
	if (out->is_tee) { /* the outputs are closed by their owner */
		rc = out->failed ? -1 : 0;
		free(out->tee);
		free(out);
		return rc;
	}
	cm_pgz_free(out->pgz); /* a failed run: its workers drop their blocks */
	out->pgz = NULL;
	cm_owriter_free(out->aw); /* drained when OK; else what is left is dropped */
	out->aw = NULL;
	if ((rc = cm_outfile_close(&out->file, ok && !out->failed)) == 1)
		out->pipe_closed = 1; /* standard output's close found the reader gone */
	rc = rc == 0 ? 0 : out->pipe_closed ? 1 : -1;
	free(out->own_buf);
	free(out);
	return rc;
}
