/* window.h - stream a trace window (cuptimerge-window(5)): each element of
 * "events" is handed over as a small in-memory value, one at a time. */
#ifndef CM_WINDOW_H
#define CM_WINDOW_H

#include <stdint.h>
#include "io/input.h"
#include "json/jval.h"

typedef struct cm_window_sink {
	/* One element of "events" (an object), its index and the offset just past
	 * it.  Return 0 to go on, -1 after reporting an error. */
	int (*event)(void *ctx, uint64_t index, const cm_jval *ev, int64_t offset);
	/* A top-level member other than "events", when members are wanted (NULL
	 * otherwise): "user_annotations", "thread_resource_map"; others are
	 * skipped.  Return 0 or -1 like event. */
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

#endif
