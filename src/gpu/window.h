/* window.h - stream a trace window (cuptimerge-window(5)): each element of
 * "events" is handed over as a small in-memory value, one at a time. */
#ifndef CM_WINDOW_H
#define CM_WINDOW_H

#include <stdint.h>
#include "base/opool.h"
#include "io/input.h"
#include "json/jval.h"

typedef struct cm_window_sink {
	/* One element of "events" (an object), its index and the offset just past
	 * it.  Return 0 to go on, -1 after reporting an error. */
	int (*event)(void *ctx, uint64_t index, const cm_jval *ev, int64_t offset);
	/* A top-level member other than "events", when members are wanted (NULL
	 * otherwise): "user_annotations", "thread_resource_map" (each at most
	 * once), "window_version", "device_properties" (each time it appears);
	 * others are skipped.  Return 0 or -1 like event. */
	int (*member)(void *ctx, const char *key, const cm_jval *val, int64_t offset);
	void *ctx;
} cm_window_sink;

/* Read the whole window IN, calling SINK.  Checks the shape: a top-level
 * object with an "events" array of objects, each member at most once (a
 * Chrome trace, with "traceEvents" and no "events", is named as such).
 * TRACE_EVENTS, when not NULL, is set to 1 when the window also has a
 * top-level "traceEvents", as a Chrome trace has (else 0).  Returns 0, or -1
 * after reporting the error. */
int cm_window_read(cm_input *in, const cm_window_sink *sink, const char *pass_label, int *trace_events);

/* The same reading, cut into batches of events that WORKERS threads check
 * and parse side by side (docsplit.h, jvalid.h), each batch's events
 * handed to EVENT on a worker, with that worker's context WCTX[i] and an
 * output buffer (then EVENT with EV NULL: the batch is done); COLLECT then receives each batch's output on the calling
 * thread, in window order.  Members go to SINK->member on the calling
 * thread.  Returns 0; -1 after reporting an error (I/O, or one an EVENT or
 * COLLECT callback reported); or 1 when the window is not one this reader
 * accepts (bad JSON, a bad shape), without a word: the caller reads it again
 * with cm_window_read, which says what is wrong. */
typedef struct cm_window_psink {
	int (*event)(void *wctx, uint64_t index, const cm_jval *ev, int64_t offset, cm_buf *out);
	int (*collect)(void *ctx, cm_buf *out);
	int (*member)(void *ctx, const char *key, const cm_jval *val, int64_t offset);
	/* Optional: a wanted member as its text (validated), before it is
	 * built: 0 when taken, 1 to have it built and given to member, -1 after
	 * a report. */
	int (*member_text)(void *ctx, const char *key, const char *val, size_t vlen, int64_t offset);
	void *ctx;
	void **wctx;
	int workers;
	int caller_helps; /* the calling thread is the last worker (opool.h) */
	cm_opool_stats *stats; /* the pool's figures are added here (NULL: not wanted) */
	cm_ocrew *crew; /* when not NULL: the blocks run on this crew, WORKERS its size (opool.h) */
} cm_window_psink;

int cm_window_read_parallel(cm_input *in, const cm_window_psink *sink, const char *label, int *trace_events);

#endif
