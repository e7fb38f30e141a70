/* winfast.h - the later passes over a trace window that pass 1 has checked. */
#ifndef CM_WINFAST_H
#define CM_WINFAST_H

#include "io/input.h"
#include "gpu/window.h"

/* Hand every element of "events" of IN to SINK->event (SINK->member is not
 * used), like cm_window_read but without yajl: the text was checked by a
 * cm_window_read pass, so elements are found with jscan.h and built with the
 * small parser of jval.h, several times faster.  A window that no longer
 * looks like the one checked is an error ("changed between passes").
 * Returns 0, or -1 after reporting. */
int cm_window_fast_read(cm_input *in, const cm_window_sink *sink, const char *label);

#endif
