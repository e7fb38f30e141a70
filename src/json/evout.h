/* evout.h - the writer of a trace's traceEvents elements: a buffer in front
 * of an output (io/output.h) that puts the commas between elements, and the
 * metadata ("M") events every stage writes.  JSON text, so json/'s; the
 * output below it only moves bytes. */
#ifndef CM_EVOUT_H
#define CM_EVOUT_H

#include <stddef.h>
#include "base/buf.h"
#include "base/pyval.h"
#include "io/output.h"

/* The writer of traceEvents elements: a buffer in front of an output that
 * puts the commas between elements. */
typedef struct cm_evout {
	cm_output *out;
	cm_buf buf;
	int first; /* no element written yet */
} cm_evout;

/* Begin an element: write the separating comma (none before the first),
 * and pass the buffer on once it holds 1 MiB.  Returns 0, or -1 when the
 * output failed (already reported, or the pipe closed). */
int cm_evout_next(cm_evout *eo);

/* Write N bytes of whole elements, each with a comma in front (the first
 * one's dropped when nothing was written before), as the worker threads
 * that render elements make them: after what the buffer holds, straight
 * to the output.  0, or -1 as cm_evout_next. */
int cm_evout_elements(cm_evout *eo, const char *p, size_t n);

/* Write a metadata ("M") event {"ph":"M","name":NAME,"ts":TS_TEXT,"pid":PID,
 * "tid":TID,"args":{ARG_KEY:V}}, V being the string ARG_TEXT, or the integer
 * ARG_INT when ARG_TEXT is NULL.  TS_TEXT is written as it is.  0 or -1. */
int cm_evout_meta(cm_evout *eo, const char *name, const char *ts_text, cm_int pid, cm_int tid,
		  const char *arg_key, const char *arg_text, cm_int arg_int);

/* Pass everything buffered on.  Returns 0 or -1. */
int cm_evout_flush(cm_evout *eo);

#endif
