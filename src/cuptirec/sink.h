/* sink.h - the window file: buffered write(2), optionally gzip, sticky errors. */
#ifndef CREC_SINK_H
#define CREC_SINK_H

#include <stddef.h>

typedef struct crec_sink crec_sink;

/* Open PATH for a window, mode 0666 & ~umask, close-on-exec, above 2
 * (crec_open_out, opts.h): a regular file is created or truncated; a name
 * of one of the program's descriptors (/dev/stdout, /dev/fd/N, a link to
 * one) is that descriptor, duplicated, written after what it holds (`>>
 * log` appends; closed, EBADF); a device is written through; a FIFO
 * without a reader is waited for CREC_FIFO_WAIT_DEFAULT seconds at most
 * (opts.h), then an error, never an open that waits forever.  With GZIP the bytes are
 * written as one gzip member (deflate level 1: the writer must keep up
 * with CUPTI).  Plain output goes through our own buffer and write(2),
 * never stdio, so a forked child's exit cannot flush a copy of it.  Returns
 * the sink, or NULL with a message (naming the path and why) in ERR. */
crec_sink *crec_sink_open(const char *path, int gzip, char *err, size_t errsz);

/* crec_sink_open, waiting FIFO_WAIT seconds for a FIFO's reader
 * (CUPTIREC_FIFO_WAIT, or the tests' short waits). */
crec_sink *crec_sink_open_wait(const char *path, int gzip, double fifo_wait, char *err, size_t errsz);

/* Append N bytes.  Returns 0, or -1 once any write has failed (sticky: later
 * calls do nothing and fail too).  A reader gone is EPIPE, not SIGPIPE; a
 * non-blocking descriptor (the program's standard output, O_NONBLOCK) is
 * waited on for room as a blocking one would be, without a time limit. */
int crec_sink_write(crec_sink *s, const void *p, size_t n);

/* Bytes accepted so far (before compression). */
unsigned long long crec_sink_count(const crec_sink *s);

/* Flush, finish the gzip member, close and free.  Returns 0, or -1 with a
 * message in ERR when anything failed since the open (the file then is
 * incomplete, which readers report as truncated). */
int crec_sink_close(crec_sink *s, char *err, size_t errsz);

/* Close and free without flushing or finishing: the file stays truncated,
 * as after a kill.  Used when the writer has to give up. */
void crec_sink_abandon(crec_sink *s);

#endif
