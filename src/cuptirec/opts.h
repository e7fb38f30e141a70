/* opts.h - option values shared by the launcher and the libraries (no CUPTI). */
#ifndef CREC_OPTS_H
#define CREC_OPTS_H

#include <stddef.h>

/* Activity groups a user can name in --activities / CUPTIREC_ACTIVITIES. */
enum crec_act {
	CREC_ACT_KERNEL = 1 << 0,   /* "kernel": concurrent kernel records */
	CREC_ACT_MEMCPY = 1 << 1,   /* "memcpy" */
	CREC_ACT_MEMSET = 1 << 2,   /* "memset" */
	CREC_ACT_RUNTIME = 1 << 3,  /* "runtime": CUDA runtime API calls */
	CREC_ACT_DRIVER = 1 << 4,   /* "driver": CUDA driver API calls */
	CREC_ACT_EXTCORR = 1 << 5,  /* "external_correlation" */
	CREC_ACT_OVERHEAD = 1 << 6, /* "overhead" */
	CREC_ACT_SYNC = 1 << 7,     /* "sync": synchronization records */
	CREC_ACT_EVENT = 1 << 8,    /* "cuda_event": cudaEventRecord records */
};

/* What is recorded when nothing is named: what the merge uses. */
#define CREC_ACT_DEFAULT (CREC_ACT_KERNEL | CREC_ACT_MEMCPY | CREC_ACT_MEMSET | CREC_ACT_RUNTIME | \
			  CREC_ACT_DRIVER | CREC_ACT_EXTCORR | CREC_ACT_OVERHEAD)
#define CREC_ACT_ALL (CREC_ACT_DEFAULT | CREC_ACT_SYNC | CREC_ACT_EVENT)

/* Parse a comma-separated LIST of group names ("default" and "all" allowed;
 * a leading '-' removes a group: "default,-driver").  Returns the mask, or -1
 * with the offending name copied into BAD (BADSZ bytes) when a name is
 * unknown. */
int crec_parse_activities(const char *list, char *bad, size_t badsz);

/* Parse a non-negative number of seconds ("2", "0.5"; as cuptimerge reads
 * numbers, base/optnum.h: no blank, no "+", hex or "inf").  Returns 0 and sets
 * *OUT, or -1. */
int crec_parse_seconds(const char *s, double *out);

/* Parse a byte count with an optional K/M/G suffix (powers of 1024).  Returns
 * 0 and sets *OUT, or -1. */
int crec_parse_size(const char *s, size_t *out);

/* Is the environment variable NAME set to a true value (1, yes, true, on)? */
int crec_env_flag(const char *name);

/* FD, a file the libraries just opened for writing, moved above 2 (F20):
 * they run inside the user's program, which may have closed its standard
 * error (`2>&-`, a daemon), and a window or thread map that took the
 * number 2 would get everything the program writes there.  The libraries
 * must not open the program's standard descriptors for it, so the file
 * moves instead (close-on-exec, as opened).  Returns the new descriptor, or
 * FD itself when it was above 2 already; -1 with errno set (FD closed). */
int crec_fd_above_std(int fd);

/* Open PATH to write the libraries' output through it, as `> PATH` would,
 * with FLAGS added (O_CREAT | O_TRUNC for the window, 0 for a thread map
 * written through a device or FIFO), mode 0666 & ~umask, above 2 and
 * close-on-exec, but without two of a shell's ways to fail the program:
 *   - a FIFO without a reader is ENXIO, not an open that waits for one
 *     (in the program's exit, or its CUDA start; both outputs try again
 *     for a bounded while, crec_open_out_wait below);
 *   - a name of the program's own descriptor (/dev/stdout, /dev/fd/1:
 *     cm_path_names_fd) is that descriptor, duplicated, its output going
 *     on after the program's (no truncation), and EBADF when the program
 *     has closed it: reopened, it was whatever file the program had put
 *     on that number since.
 * Returns the descriptor, or -1 with errno set. */
int crec_open_out(const char *path, int flags);

/* How long the libraries' output waits for a FIFO's reader, in seconds,
 * when CUPTIREC_FIFO_WAIT (cuptirec --fifo-wait) does not say: the window's
 * at the program's CUDA start, the thread map's in its exit. */
#define CREC_FIFO_WAIT_DEFAULT 10.0

/* CUPTIREC_FIFO_WAIT's seconds into *OUT (crec_parse_seconds: "0.5"; 0 is
 * one try): 0, with CREC_FIFO_WAIT_DEFAULT when it is unset or empty; -1
 * with the default when it is not a number of seconds, for the caller to
 * warn about in its own words (a library must not fail its program). */
int crec_fifo_wait_env(double *out);

/* crec_open_out(PATH, FLAGS), tried again while PATH is a FIFO without a
 * reader (ENXIO), after 1, 2, 4 ... ms, then every 100 ms, for WAIT
 * seconds at most: the window opens at the program's CUDA start and the
 * thread map in its exit, often milliseconds after a reader was started
 * beside the program (tests/gpu/run.sh's pool_exhaustion: a single try
 * lost the window, and the reader waited forever), while the blocking
 * open that `> PATH` does stopped the program for good when no reader
 * came.  Returns the descriptor, or -1 with errno set, and *NO_READER
 * (when not NULL) 1 when that was ENXIO of a FIFO after WAIT seconds.
 * No malloc: the thread map's _exit wrapper may run in a signal handler. */
int crec_open_out_wait(const char *path, int flags, double wait, int *no_reader);

/* Write all N bytes at P to FD, the libraries' output (cm_write_all:
 * EINTR, short writes, a non-blocking descriptor waited on), with SIGPIPE
 * blocked on the calling thread while it writes: the output may be a FIFO
 * or the program's own standard output, whose reader can go away, and
 * the window's trailer and the thread map are written on the program's
 * threads (in its exit), where the signal's default action killed the
 * program over its trace.  A reader gone is EPIPE instead, for the caller
 * to warn about; the SIGPIPE that write raised is taken back, unless one
 * was pending on the thread already (the program's, left for it).
 * Returns 0 or the errno of the write that failed.  No malloc. */
int crec_write_out(int fd, const void *p, size_t n);

#endif
