/* outwriter.h - a thread of its own that writes an output's bytes, in
 * order, from a few buffers the producers fill: the copy into the page
 * cache (or the pipe) off the threads that make the output. */
#ifndef CM_OUTWRITER_H
#define CM_OUTWRITER_H

#include <stddef.h>
#include "io/writeback.h"

typedef struct cm_owriter cm_owriter;

/* A writer of FD (which stays the caller's) with NBUF buffers of UNIT
 * bytes (NBUF at least 2), telling WB (NULL: none) of each write.  NULL
 * when the buffers or the thread cannot be had: the caller writes itself. */
cm_owriter *cm_owriter_new(int fd, cm_wback *wb, size_t unit, int nbuf);

/* The threads an output of FD gets with THREADS jobs (outwriter.c says
 * which, and cuptimerge(1), ENVIRONMENT, how to choose): the write-back of
 * WB on a thread (cm_wback_thread), and a writer returned with its buffers'
 * size in *UNIT, or NULL. */
cm_owriter *cm_owriter_start(int fd, cm_wback *wb, int threads, size_t *unit);

/* The buffer the caller fills next: UNIT bytes. */
unsigned char *cm_owriter_buf(cm_owriter *w);

/* Hand over the first LEN bytes of the buffer cm_owriter_buf gave (LEN may
 * be 0: then only the check), to be written after those handed over
 * before; waits while every buffer is in the thread's hands.  0, or the
 * errno of the thread's failed write (or write-back: cm_wback_wrote),
 * returned once: nothing is written after it. */
int cm_owriter_put(cm_owriter *w, size_t len);

/* Wait until all that was handed over is written.  0, or an errno as
 * cm_owriter_put. */
int cm_owriter_drain(cm_owriter *w);

/* Stop the thread (what is not yet written is dropped: drain first to
 * keep it) and free W.  NULL is allowed. */
void cm_owriter_free(cm_owriter *w);

#endif
