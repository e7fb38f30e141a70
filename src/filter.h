/* filter.h - a trace alone, without a window: copied, cut and repaired. */
#ifndef CM_FILTER_H
#define CM_FILTER_H

#include "options.h"
#include "io/output.h"
#include "repair/threadmap.h"

/* Copy the trace OPT->cpu_path to OUT: every top-level member and every
 * event as its text, but the events that --steps or --range cut
 * (OPT->cut), and through the repair stage with MAP (or not: NULL).  Two
 * passes (a pipe is spooled).  Closes OUT (opened before anything was
 * read, so that a bad -o is found first; nothing appears there on
 * failure).  With --split (OPT->split_n; MAP and OUT NULL) the copy goes
 * to a file for each group of steps, named by the -o pattern, opened once
 * the steps are known.  Returns an exit status. */
int cm_filter_run(const struct cm_options *opt, const cm_threadmap *map, cm_output *out);

#endif
