/* inputraw.c - the raw bytes of an input's file: read(2), or its pages
 * mapped; a pipe's bytes teed to a spool on the first pass; the check that
 * a file is still the one opened; reads at offsets.
 *
 * A regular file is re-read from offset 0 at each pass; a pipe read in
 * several passes is teed, as it is read, into an unlinked temporary file
 * that the later passes read (input.c's rewind switches to it; a pass that
 * comes to its end goes on in the pipe, teeing again).  The copy
 * holds the raw (still compressed) bytes, so a gzip pipe costs only its
 * compressed size on disk.  What the bytes are (plain text, gzip, a byte
 * order mark) is the next stage's (inputdecode.c). */
#include "config.h"
#include "io/inputraw.h"
#include "io/input_int.h"
#include "io/inputbuf.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Why a pass fails when the file is not the one opened (the size, inode or
 * times moved, or a read at an offset came up short). */
#define CHANGED_MSG "the file changed while it was being read (it is read more than once); nothing was written"

/* Passes that read different texts would merge halves of two traces, so a
 * change (size, inode, change time: a same-length edit in place moves the
 * change time, and a writer cannot set it back) fails the run. */
int inputraw_check_unchanged(cm_input *in)
{
	struct stat st;
	if (!S_ISREG(in->st0.st_mode))
		return 0; /* a pipe: we read our own spool */
	if (fstat(in->fd, &st) < 0)
		return cm_fail(CM_EXIT_IO, in->name, -1, "cannot stat: %s", strerror(errno));
	if (st.st_size != in->st0.st_size || st.st_ino != in->st0.st_ino || st.st_dev != in->st0.st_dev ||
	    st.st_ctim.tv_sec != in->st0.st_ctim.tv_sec || st.st_ctim.tv_nsec != in->st0.st_ctim.tv_nsec ||
	    st.st_mtim.tv_sec != in->st0.st_mtim.tv_sec || st.st_mtim.tv_nsec != in->st0.st_mtim.tv_nsec)
		return cm_fail(CM_EXIT_IO, in->name, -1, CHANGED_MSG);
	return 0;
}

int inputraw_spool_create(cm_input *in)
{
	in->spool_fd = cm_temp_fd("spool");
	return in->spool_fd < 0 ? -1 : 0;
}

/* Mapped reading.  A regular file's plain text was read(2) into the
 * chunk buffers: the kernel's copy out of the page cache was a tenth of a
 * merge's CPU (8.6% on the 200 MB pair at -j 2, perf), paid twice for the
 * CPU trace, which is read twice.  Instead, after the first chunk (read as
 * ever: it tells plain text from gzip), each chunk's file pages are mapped
 * where its buffer's bytes lie (mmap MAP_FIXED over the buffer's own
 * mapping, populated at once, on the read-ahead thread when there is one),
 * so that everything else - holds, the buffers let go and reused, the
 * read-ahead ring - stays as it was, and memory too: a buffer holds at
 * most its chunk's pages, as it held its bytes.  The mapping is private
 * and writable, so a byte written to a chunk (a byte order mark moved off
 * the first) never reaches the file.  Only chunks of whole pages at page
 * offsets (reads of 64 KiB or more, a multiple of the page size), and
 * only up to the size the file had when opened: the end is read(2) as
 * before, which finds a file that grew; each mapping is followed by the
 * check that the file is unchanged, so an edit is reported as before.  A
 * file cut short after that check, while its pages are mapped, would make
 * a read of them a SIGBUS: that is reported as such a change and ends the
 * run (sigbus_exit).
 *
 * Measured, it pays on few CPUs only, so the merge asks for it with 3 jobs
 * or fewer (cm_input_map_default; CUPTIMERGE_MMAP, a benchmarking aid,
 * overrides): on the 16-core machine under taskset -c 0,1 the 1 GB pair
 * took 5.46-5.71 s mapped against 6.04-6.08 read, 10.4-10.9 CPU seconds
 * against 11.8; at -j 16 it took 1.95-2.00 s against 1.35-1.38, the
 * window's workers busy 7.2 s against 4.3-4.6 (bench/dev-readers.sh): each
 * buffer mapped anew must be unmapped from every CPU that ran a worker
 * that read it.  On this project's shared 2-core machine bench/cut-bench
 * on the 1.5 GB window took about as much CPU either way (perf samples,
 * three rounds: 3478 mapped, 3398 read). */
#define MAP_MIN (64u << 10)

static int map_default;

void cm_input_map_default(int on) { map_default = on; }

int inputraw_map_wanted(const cm_input *in)
{
	const char *e = getenv("CUPTIMERGE_MMAP");
	if (e && *e ? !strcmp(e, "0") : !map_default)
		return 0;
	return in->bufsize >= MAP_MIN && in->bufsize % inputbuf_page_size() == 0;
}

/* SIGBUS: a mapped input file was cut short under us (see above). */
static void sigbus_exit(int sig)
{
	static const char msg[] = "cuptimerge: an input file was cut short while it was being read "
				  "(it changed during the run)\n";
	(void)sig;
	if (write(2, msg, sizeof msg - 1) < 0) {
		/* nothing more to be done */
	}
	_exit(CM_EXIT_IO);
}

static pthread_once_t sigbus_once = PTHREAD_ONCE_INIT;
static void sigbus_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sigbus_exit;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* in->raw's bytes writable again when they are a file's pages (inputraw_map_chunk),
 * and the file position where read(2) goes on.  0, or -1 after reporting. */
static int ensure_writable(cm_input *in)
{
	struct chunkbuf *b = inputbuf_of(in->raw);
	if (b->mapped == 2) {
		if (mmap(in->raw, in->raw_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory (mmap: %s)", strerror(errno));
		b->mapped = 1;
	}
	if (in->fd_behind) {
		if (lseek(in->fd, (off_t)in->raw_done, SEEK_SET) < 0)
			return cm_fail(CM_EXIT_IO, in->name, -1, "cannot seek: %s", strerror(errno));
		in->fd_behind = 0;
	}
	return 0;
}

ssize_t inputraw_read(cm_input *in, size_t at, size_t want)
{
	ssize_t n;
	if (in->raw_eof)
		return 0;
	if (ensure_writable(in) < 0)
		return -1;
	do
		n = read(in->fd, in->raw + at, want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return cm_fail(CM_EXIT_IO, in->name, -1, "read error: %s", strerror(errno));
	if (n == 0 && in->pipe_fd >= 0) { /* the spool ends: on in the pipe, teed as on the first pass */
		in->spool_fd = in->fd;    /* read to its end: the copy goes on there */
		in->fd = in->pipe_fd;
		in->own_fd = in->pipe_own;
		in->pipe_fd = -1;
		in->teeing = 1;
		return inputraw_read(in, at, want);
	}
	if (n == 0) {
		in->raw_eof = 1;
		return in->teeing || inputraw_check_unchanged(in) == 0 ? 0 : -1;
	}
	in->raw_done += (uint64_t)n;
	if (in->teeing) {
		int err;
		if (in->spool_fd < 0 && inputraw_spool_create(in) < 0)
			return -1;
		if ((err = cm_write_all(in->spool_fd, in->raw + at, (size_t)n)) != 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write the spool file for %s: %s", in->name,
				       strerror(err));
	}
	return n;
}

ssize_t inputraw_map_chunk(cm_input *in)
{
	struct chunkbuf *b = inputbuf_of(in->raw);
	uint64_t off = in->raw_done;
	size_t len;
	if (!in->map_ok || in->teeing || !b->mapped || in->raw_eof || off % inputbuf_page_size() != 0 ||
	    off >= in->raw_size)
		return inputraw_read(in, 0, in->bufsize);
	len = in->raw_size - off < in->bufsize ? (size_t)(in->raw_size - off) : in->bufsize;
	pthread_once(&sigbus_once, sigbus_install);
	/* read-only: populating a writable private mapping would copy every page */
	if (mmap(in->raw, len, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, in->fd, (off_t)off) == MAP_FAILED)
		return cm_fail(CM_EXIT_IO, in->name, -1, "cannot map: %s", strerror(errno));
	b->mapped = 2;
	in->fd_behind = 1;
	if (inputraw_check_unchanged(in) < 0)
		return -1;
	in->raw_done += len;
	return (ssize_t)len;
}

/* Reading at offsets (cpu/cpucopypar.c), beside the passes. */

int cm_input_can_pread(const cm_input *in)
{
	struct stat st;
	return in->sniffed && !in->gzip && !in->teeing && in->pipe_fd < 0 && in->bom_done && fstat(in->fd, &st) == 0 &&
	       S_ISREG(st.st_mode);
}

int cm_input_pread(cm_input *in, void *buf, size_t n, uint64_t off)
{
	/* a plain text's offsets are the file's (a byte order mark counted: inputdecode.c) */
	ssize_t got = cm_pread_all(in->fd, buf, n, off);
	if (got < 0)
		return cm_fail(CM_EXIT_IO, in->name, -1, "read error: %s", strerror(errno));
	if ((size_t)got < n)
		return cm_fail(CM_EXIT_IO, in->name, -1, CHANGED_MSG);
	return 0;
}

uint64_t cm_input_text_size(const cm_input *in)
{
	struct stat st;
	return fstat(in->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

int cm_input_pass_check(cm_input *in) { return inputraw_check_unchanged(in); }

