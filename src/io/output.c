/* output.c - buffered, checked output to stdout or to FILE via a temporary file.
 *
 * What -o FILE does depends on what FILE is, as a Unix user expects of a
 * tool that writes a file (cuptimerge(1), FILES):
 *   - absent or a regular file: the output is written to a temporary file in
 *     FILE's directory and only a complete one takes FILE's name (rename(2)
 *     is atomic), so a failed or interrupted run never leaves half a trace
 *     and never clobbers the old one;
 *   - a symbolic link: followed; the file it names is replaced as above, in
 *     that file's directory, and the link stays;
 *   - a character or block device, a FIFO, anything else that is not a
 *     directory: opened and written through, as `> FILE` would; replacing
 *     it would turn /dev/null into a regular file;
 *   - a directory: an error, found when the output is opened, which the
 *     engine does before it reads any input.
 * The temporary file has no name while it is written: Linux's O_TMPFILE
 * makes an unnamed inode in the directory, and linkat(2) through
 * /proc/self/fd gives it FILE's name at the end (or a temporary name, then
 * rename(2), when FILE exists: linkat cannot replace); without /proc, linkat
 * by the descriptor itself (AT_EMPTY_PATH), where the kernel allows it.
 * Whatever kills the run, even SIGKILL, the kernel then frees the inode and
 * nothing is left.  Where O_TMPFILE is not supported (older kernels, some
 * file systems) or the file could not be named either way, it is made with
 * a name, .FILE.cuptimerge-XXXXXX, which SIGINT, SIGTERM, SIGHUP and exit()
 * remove; only SIGKILL or a crash can leave it (README and cuptimerge(1)
 * say so).
 *
 * Atomic is not durable: by default the finished file is named without
 * fsync(2), as gzip, zstd, cp and sort -o leave theirs, so a power cut soon
 * after the run may lose a file that a crash of the run never could.
 * Durability is --sync's (cm_output_set_sync, gzip's --synchronous): the
 * file's write-back started as it is written (writeback.c), fsync before
 * it is named, and fsync of its directory after, so that the name too
 * survives a power cut.  Paying for it on every run cost the 2.3 GB output
 * of the 1 GB pair a second on the 16-core machine, whose disk takes less
 * than the merge makes (issue 30).  Without it, the file is closed (a
 * checked close: where close(2) reports a delayed write error, NFS and some
 * FUSE file systems, it comes before the name) and named; nothing of
 * writeback.c runs.
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
#include "io/outname.h"
#include "base/tmpfile.h"
#include "io/pgzip.h"
#include "io/writeback.h"
#include "io/outwriter.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 256 KiB: large enough that write(2) calls do not show in a profile. */
#define OUT_BUFSIZE (256u * 1024u)
/* Where the bytes go (see the top of the file). */
enum out_kind {
	OUT_NONE,    /* not open (an -o that failed to open): nothing to close */
	OUT_STDOUT,  /* file descriptor 1 */
	OUT_DIRECT,  /* -o a device or FIFO: written through */
	OUT_UNNAMED, /* -o a file: an O_TMPFILE inode, linked to target at the end
		      (through /proc/self/fd, or by its descriptor: flink) */
	OUT_NAMED,   /* -o a file: the named temporary tmp_path, renamed at the end */
	OUT_TEE,     /* the same bytes to each of tee[0..ntee) (--split's shared text) */
};

struct cm_output {
	int fd;
	enum out_kind kind;
	char *path;     /* the -o name as given (for messages), or NULL */
	char *target;   /* OUT_UNNAMED, OUT_NAMED: PATH with its symlinks followed */
	char *tmp_path; /* OUT_NAMED: the temporary name while writing */
	int flink;      /* OUT_UNNAMED: named by linkat(fd, "", AT_EMPTY_PATH), not /proc */
	int replaces;   /* OUT_UNNAMED, OUT_NAMED: target is a regular file, old_st its status */
	struct stat old_st;
	const char *shown; /* name for messages */
	cm_pgz *pgz;  /* gzip output (pgzip.c), or NULL */
	const cm_output_codec *codec; /* --format=perfetto: the JSON text goes through it */
	void *pft;                    /* ... the transcoder, or NULL */
	unsigned char *buf; /* pending plain bytes: OUT_BUFSIZE, or the writer's buffer */
	size_t len, cap;
	cm_owriter *aw;     /* the writing thread (outwriter.h), or NULL: write(2) here */
	unsigned char *own_buf; /* out->buf when it is ours */
	int failed, pipe_closed;
	cm_output **tee; /* OUT_TEE: the outputs, not owned */
	size_t ntee;
	cm_wback wb; /* OUT_UNNAMED, OUT_NAMED with --sync: the write-back behind the writer */
	int sync;    /* --sync (cm_output_set_sync) when it was opened */
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

int cm_output_pipe_closed(const cm_output *out)
{
	for (size_t i = 0; out->kind == OUT_TEE && i < out->ntee; i++)
		if (out->tee[i]->pipe_closed)
			return 1;
	return out->pipe_closed;
}

cm_output *cm_output_tee(cm_output *const *outs, size_t n)
{
	cm_output *out = cm_xcalloc(1, sizeof *out);
	out->kind = OUT_TEE;
	out->fd = -1;
	out->tee = cm_xmalloc(n * sizeof *out->tee);
	memcpy(out->tee, outs, n * sizeof *out->tee);
	out->ntee = n;
	return out;
}

/* The one temporary name an -o run can have in FILE's directory (OUT_NAMED),
 * for the signal handler and exit() to remove: one -o output per process.
 * The name is written only while doomed_set is 0, so the handler never
 * reads half of it. */
static char doomed_path[PATH_MAX];
static volatile sig_atomic_t doomed_set;

/* The signals that end a run from outside and that we clean up after. */
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* atexit: remove the temporary name (exit(3) when memory ran out). */
static void remove_doomed(void)
{
	if (doomed_set)
		unlink(doomed_path);
	doomed_set = 0;
}

/* SIGINT, SIGTERM, SIGHUP: remove the temporary name, then die of the
 * signal (SA_RESETHAND restored the default; the signal is blocked while
 * this runs, so the raise takes effect on return), so the parent sees it. */
static void on_fatal_signal(int sig)
{
	int saved = errno;
	if (doomed_set)
		unlink(doomed_path); /* async-signal-safe */
	doomed_set = 0;
	raise(sig);
	errno = saved;
}

/* Block (BLOCK 1) or restore the fatal signals on this thread around a step
 * that must not be cut in two (a name made and recorded, link and rename). */
static void hold_signals(int block, sigset_t *saved)
{
	sigset_t set;
	size_t i;
	if (!block) {
		pthread_sigmask(SIG_SETMASK, saved, NULL);
		return;
	}
	sigemptyset(&set);
	for (i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
		sigaddset(&set, fatal_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, saved);
}

/* Install the clean-up, once: the handlers (not over a signal the caller
 * ignores, as nohup does: that one stays ignored) and the atexit hook. */
static void install_cleanup(void)
{
	static int done;
	struct sigaction sa, old;
	size_t i;
	if (done)
		return;
	done = 1;
	atexit(remove_doomed);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
		sigaddset(&sa.sa_mask, fatal_signals[i]);
	for (i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
		if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(fatal_signals[i], &sa, NULL);
}

/* Open the file -o writes while the run lasts: unnamed in TARGET's
 * directory, else under cm_out_temp_name(TARGET).  0, or -1 after reporting. */
static int open_temp(cm_output *out)
{
	char *dir = cm_out_dir_of(out->target);
	sigset_t saved;
	mode_t mask;
	int fd;
	if (!dir)
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	fd = cm_temp_unnamed(dir, 0);
	if (fd >= 0) {
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		/* linkat will name it through /proc; without /proc (a chroot, a
		 * sandbox), by its descriptor where the kernel lets us (F26) */
		if (access(proc, F_OK) == 0 || (out->flink = cm_out_can_flink(fd, dir))) {
			free(dir);
			out->fd = fd;
			out->kind = OUT_UNNAMED;
			cm_wback_init(&out->wb, out->sync ? fd : -1);
			if (out->replaces)
				cm_out_keep_attrs(fd, &out->old_st);
			return 0;
		}
		close(fd); /* it could never be named; make a named one */
	}
	free(dir);
	if (fd == -1) {
		return cm_fail(CM_EXIT_IO, out->shown, -1, "cannot create a temporary file beside it: %s",
				strerror(errno));
	}
	if (!(out->tmp_path = cm_out_temp_name(out->target)))
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	install_cleanup();
	/* made and recorded in one step: a signal between would leave it */
	hold_signals(1, &saved);
	fd = mkstemp(out->tmp_path);
	if (fd >= 0 && strlen(out->tmp_path) < sizeof doomed_path) {
		strcpy(doomed_path, out->tmp_path);
		doomed_set = 1;
	}
	hold_signals(0, &saved);
	if (fd < 0) {
		cm_error(CM_EXIT_IO, out->shown, -1, "cannot create a temporary file beside it: %s", strerror(errno));
		free(out->tmp_path);
		out->tmp_path = NULL;
		return -1;
	}
	out->fd = fd;
	out->kind = OUT_NAMED;
	cm_wback_init(&out->wb, out->sync ? fd : -1);
	/* mkstemp makes 0600; give the file the old file's mode, or the one a
	 * plain create would */
	if (out->replaces) {
		cm_out_keep_attrs(fd, &out->old_st);
		return 0;
	}
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	return 0;
}

/* Open PATH, which exists and is neither a regular file nor a directory, to
 * write through it.  1 when opened, 0 when it turned out to be a regular
 * file after all (replaced meanwhile: the caller goes the atomic way), -1
 * after reporting. */
static int open_direct(cm_output *out)
{
	struct stat st;
	/* blocks on a FIFO until it has a reader, as `> FIFO` does */
	int fd = open(out->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return cm_fail(CM_EXIT_IO, out->shown, -1, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	out->fd = fd;
	out->kind = OUT_DIRECT;
	return 1;
}

/* Open -o PATH for OUT by the rules at the top.  0, or -1 after reporting. */
static int open_path(cm_output *out, const char *path)
{
	struct stat st;
	int rc;
	if (!(out->path = strdup(path)))
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	out->shown = out->path;
	if (!*path) /* main.c refuses it; say so rather than make "./.cuptimerge-" */
		return cm_fail(CM_EXIT_IO, NULL, -1, "the output file name is empty");
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return cm_fail(CM_EXIT_IO, out->shown, -1, "is a directory");
		if ((rc = open_direct(out)) != 0)
			return rc < 0 ? -1 : 0;
	}
	if (!(out->target = cm_out_follow_links(path)))
		return cm_fail(CM_EXIT_IO, out->shown, -1, "cannot follow the symbolic link: %s", strerror(errno));
	/* the file that will be replaced, if any: its owner and mode are kept */
	out->replaces = lstat(out->target, &out->old_st) == 0 && S_ISREG(out->old_st.st_mode);
	if (out->replaces && cm_out_check_replaceable(out->target, &out->old_st, out->shown) < 0)
		return -1;
	return open_temp(out);
}

static int pgz_sink(void *ctx, const unsigned char *p, size_t n);

/* From 4 jobs, the writing thread, and with --sync the write-back's
 * (outwriter.h; without --sync out->wb follows nothing: no thread). */
static void start_threads(cm_output *out, int threads)
{
	size_t unit;
	if (out->kind == OUT_NONE || out->kind == OUT_TEE)
		return;
	if ((out->aw = cm_owriter_start(out->fd, &out->wb, threads, &unit))) {
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

static cm_output *open_output(const char *path, int gzip_level, int threads, cm_pgz_crew *crew)
{
	cm_output *out = calloc(1, sizeof *out);
	if (!out)
		return cm_error(CM_EXIT_IO, NULL, -1, "out of memory"), NULL;
	out->fd = -1;
	out->sync = output_sync;
	cm_wback_init(&out->wb, -1);
	out->buf = out->own_buf = malloc(OUT_BUFSIZE);
	out->cap = OUT_BUFSIZE;
	if (!out->buf)
		goto nomem;
	if (!path || !strcmp(path, "-")) {
		out->fd = 1;
		out->kind = OUT_STDOUT;
		out->shown = "<stdout>";
	} else if (open_path(out, path) < 0) {
		cm_output_close(out, 0);
		return NULL;
	}
	start_threads(out, threads);
	if (crew ? !(out->pgz = cm_pgz_new_crew(crew, pgz_sink, out))
		 : gzip_level >= 0 && !(out->pgz = cm_pgz_new(gzip_level, threads < 1 ? 1 : threads, pgz_sink, out)))
		goto nomem;
	if ((out->codec = output_codec))
		out->pft = out->codec->open(pft_sink, out, out->shown, threads);
	return out;
nomem:
	cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
	cm_output_close(out, 0);
	return NULL;
}

/* A write (or its write-back) failed with ERR: report it, unless it is a
 * closed pipe (the reader is gone: not our error to report).  -1. */
static int write_failed(cm_output *out, int err)
{
	out->failed = 1;
	if (err == EPIPE && (out->kind == OUT_STDOUT || out->kind == OUT_DIRECT))
		out->pipe_closed = 1;
	else
		cm_error(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(err));
	return -1;
}

/* write(2) all of P, retrying short writes, and start its write-back
 * (writeback.c).  Returns 0 or -1 (reported). */
static int write_all(cm_output *out, const unsigned char *p, size_t n)
{
	size_t len = n;
	int err;
	while (n) {
		ssize_t w = write(out->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return write_failed(out, errno);
		p += w;
		n -= (size_t)w;
	}
	if ((err = cm_wback_wrote(&out->wb, len)) != 0)
		return write_failed(out, err);
	return 0;
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

/* Append N plain bytes at P to the buffer, handing it on whenever full.
 * 0 or -1. */
static int put_plain(cm_output *out, const unsigned char *p, size_t n)
{
	while (n) {
		size_t room = out->cap - out->len, k = n < room ? n : room;
		memcpy(out->buf + out->len, p, k);
		out->len += k;
		p += k;
		n -= k;
		if (out->len == out->cap && hand_over(out, 0) < 0)
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

/* After pgzip returned RC (not CM_PGZ_OK): the run has failed; report what
 * the sink has not reported already.  Returns -1. */
static int pgz_failed(cm_output *out, int rc)
{
	if (!out->failed) { /* CM_PGZ_SINK comes from write_all, which set it */
		if (rc == CM_PGZ_NOMEM)
			cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
		else
			cm_error(CM_EXIT_IO, out->shown, -1, "deflate failed");
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
	if (out->pft && out->codec->write(out->pft, data, len) < 0)
		return out->failed = 1, -1;
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
	if (out->kind == OUT_TEE) {
		for (size_t i = 0; i < out->ntee; i++)
			if (cm_output_write(out->tee[i], data, len) < 0)
				return out->failed = 1, -1;
		return 0;
	}
	if (out->pgz) /* it has buffers of its own: no copy into ours */
		return (rc = cm_pgz_write(out->pgz, data, len)) == CM_PGZ_OK ? 0 : pgz_failed(out, rc);
	if (len >= OUT_BUFSIZE && !out->aw) {
		/* a large piece (the merge hands over its 1 MiB blocks) goes out
		 * as it is, after what is buffered: a copy into the buffer first
		 * cost a memcpy of the whole output */
		if (out->len && flush_buf(out, 0) < 0)
			return -1;
		return write_all(out, p, len);
	}
	return put_plain(out, p, len);
}

/* Give the finished unnamed file (OUT_UNNAMED) the name out->target:
 * linkat(2) through /proc/self/fd makes the name when there is none; when
 * there is one, linkat cannot replace it, so the file gets a fresh
 * temporary name that rename(2) then moves over it atomically.  The fatal
 * signals wait meanwhile, so that name cannot be left behind by them.
 * 0, or -1 after reporting. */
static int publish_unnamed(cm_output *out)
{
	char *tmp;
	sigset_t saved;
	int tries, linked = 0, rc = -1;
	if (cm_out_link(out->fd, out->flink, out->target) == 0)
		return 0;
	if (errno != EEXIST)
		return cm_fail(CM_EXIT_IO, out->shown, -1, "cannot give the finished file its name: %s",
				strerror(errno));
	if (!(tmp = cm_out_temp_name(out->target)))
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	hold_signals(1, &saved);
	for (tries = 0; tries < 100 && !linked; tries++) { /* a clash is a 1 in 62^6 chance */
		cm_out_fill_x(tmp);
		if (cm_out_link(out->fd, out->flink, tmp) == 0)
			linked = 1;
		else if (errno != EEXIST)
			break;
	}
	if (!linked) {
		cm_error(CM_EXIT_IO, out->shown, -1, "cannot give the finished file a temporary name: %s",
			 strerror(errno));
	} else if (rename(tmp, out->target) < 0) {
		cm_error(CM_EXIT_IO, out->shown, -1, "cannot rename %s to it: %s", tmp, strerror(errno));
		unlink(tmp);
	} else {
		rc = 0;
	}
	hold_signals(0, &saved);
	free(tmp);
	return rc;
}

/* With --sync, after the name: fsync the directory of out->target, so
 * that the name survives a power cut as the data does (link and rename
 * change only the directory, which the file's fsync does not write).
 * EINVAL: a file system that cannot sync a directory; EROFS: nothing to
 * sync.  0, or -1 after reporting (the file has its name and is complete;
 * only its durability failed). */
static int sync_dir(cm_output *out)
{
	char *dir = cm_out_dir_of(out->target);
	int fd, rc = 0;
	if (!dir)
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (fsync(fd) < 0 && errno != EINVAL && errno != EROFS)) {
		cm_error(CM_EXIT_IO, out->shown, -1, "cannot sync its directory %s: %s", dir, strerror(errno));
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

/* With --sync: fsync OUT's descriptor (standard output only when it is a
 * regular file or a block device: a pipe or a terminal keeps nothing).
 * EINVAL: a FIFO or a device without a cache; EROFS: nothing to sync.
 * 0, or -1 after reporting. */
static int sync_fd(cm_output *out)
{
	struct stat st;
	if (!out->sync)
		return 0;
	if (out->kind == OUT_STDOUT && (fstat(out->fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))))
		return 0;
	if (fsync(out->fd) < 0 && errno != EINVAL && errno != EROFS)
		return cm_fail(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(errno));
	return 0;
}

/* Close the finished unnamed file (OUT_UNNAMED) and name it: the close is
 * checked before the name (a delayed write error that close(2) reports
 * must not leave a named file), so it is named by a second descriptor,
 * which no longer has anything to report.  0, or -1 after reporting (the
 * inode then goes with its last descriptor). */
static int close_unnamed(cm_output *out)
{
	int fd = dup(out->fd), rc = 0;
	if (fd < 0)
		cm_error(CM_EXIT_IO, out->shown, -1, "cannot give the finished file its name: %s", strerror(errno));
	if (close(out->fd) < 0 && fd >= 0) {
		cm_error(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(errno));
		close(fd);
		fd = -1;
	}
	out->fd = fd;
	if (fd < 0)
		return -1;
	if (publish_unnamed(out) < 0)
		rc = -1;
	close(fd); /* its data was checked by the first close */
	return rc;
}

int cm_output_close(cm_output *out, int ok)
{
	int rc = 0;
	if (!out)
		return -1;
	if (ok && !out->failed && out->pft && out->codec->finish(out->pft) < 0)
		ok = 0, out->failed = 1;
	if (out->pft)
		out->codec->free(out->pft);
	out->pft = NULL;
	if (out->kind == OUT_TEE) { /* the outputs are closed by their owner */
		rc = out->failed ? -1 : 0;
		free(out->tee);
		free(out);
		return rc;
	}
	if (ok && !out->failed && flush_buf(out, 1) < 0)
		ok = 0;
	cm_pgz_free(out->pgz); /* a failed run: its workers drop their blocks */
	out->pgz = NULL;
	cm_owriter_free(out->aw); /* drained when OK; else what is left is dropped */
	out->aw = NULL;
	if ((rc = cm_wback_end(&out->wb)) != 0 && ok && !out->failed)
		write_failed(out, rc);
	rc = 0;
	if (out->failed)
		ok = 0;
	switch (out->kind) {
	case OUT_NONE:
	case OUT_TEE:
		break;
	case OUT_STDOUT:
		if (ok && sync_fd(out) < 0)
			ok = 0;
		/* a late EIO/ENOSPC shows up at close; check it (jq does the same) */
		if (ok && close(1) < 0 && errno != EINTR) {
			if (errno == EPIPE)
				out->pipe_closed = 1;
			else
				cm_error(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(errno));
			ok = 0;
		}
		break;
	case OUT_DIRECT:
	case OUT_UNNAMED:
	case OUT_NAMED:
		if (out->fd < 0)
			break; /* the open failed */
		if (ok && sync_fd(out) < 0)
			ok = 0;
		if (ok && out->kind == OUT_UNNAMED) {
			/* checked close, then the name (close_unnamed) */
			if (close_unnamed(out) < 0)
				ok = 0;
			else if (out->sync && sync_dir(out) < 0)
				ok = 0;
			break;
		}
		if (close(out->fd) < 0 && ok) {
			cm_error(CM_EXIT_IO, out->shown, -1, "write error: %s", strerror(errno));
			ok = 0;
		}
		if (out->kind == OUT_NAMED) {
			sigset_t saved;
			hold_signals(1, &saved);
			if (ok && rename(out->tmp_path, out->target) < 0) {
				cm_error(CM_EXIT_IO, out->shown, -1, "cannot rename %s to it: %s", out->tmp_path,
					 strerror(errno));
				ok = 0;
			}
			if (!ok)
				unlink(out->tmp_path);
			doomed_set = 0;
			hold_signals(0, &saved);
			if (ok && out->sync && sync_dir(out) < 0)
				ok = 0;
		}
		break;
	}
	rc = ok ? 0 : out->pipe_closed ? 1 : -1;
	free(out->path);
	free(out->target);
	free(out->tmp_path);
	free(out->own_buf);
	free(out);
	return rc;
}
