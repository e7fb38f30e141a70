/* window.c - the trace-window reader: docread over "events", plus the window's rules.
 *
 * The window can be larger than the CPU trace (a 1.5 GB window is realistic),
 * so it is never held: each element of "events" is handed on alone.  The
 * merge reads the window three times (see merge.c); the maps are only wanted
 * on the first pass. */
#include "config.h"
#include "gpu/window.h"
#include "base/diag.h"
#include "json/docread.h"
#include "exitcode.h"

#include <string.h>

/* The reader's state: the sink, and whether the document looks like a
 * Chrome trace rather than a window. */
struct wread {
	const cm_window_sink *sink;
	int trace_events; /* a top-level "traceEvents" member */
};

/* Only these two members matter to the merge; "traceEvents" is noted. */
static int wants(void *ctx, const char *key, size_t klen)
{
	struct wread *w = ctx;
	if (klen == 11 && !memcmp(key, "traceEvents", 11))
		w->trace_events = 1;
	return w->sink->member && ((klen == 16 && !memcmp(key, "user_annotations", 16)) ||
				   (klen == 19 && !memcmp(key, "thread_resource_map", 19)));
}

static int member(void *ctx, const char *key, size_t klen, const cm_jval *val, int64_t offset)
{
	struct wread *w = ctx;
	return w->sink->member(w->sink->ctx, key, val, offset);
}

static int element(void *ctx, uint64_t index, const cm_jval *el, int64_t offset)
{
	struct wread *w = ctx;
	return w->sink->event(w->sink->ctx, index, el, offset);
}

int cm_window_read(cm_input *in, const cm_window_sink *sink, const char *pass_label, int *trace_events)
{
	struct wread w = {sink, 0};
	cm_docread_sink ds = {
		.member = member, .wants_member = wants, .element = sink->event ? element : NULL, .ctx = &w,
	};
	int seen = 0;
	if (cm_docread_run(in, "events", "window", &ds, pass_label, &seen) < 0)
		return -1;
	if (!seen && w.trace_events)
		return cm_error(CM_EXIT_DATA, cm_input_name(in), -1,
				"window: no \"events\" member: this is a Chrome trace (\"traceEvents\"), not a trace "
				"window: are the window and the CPU trace swapped?"),
		       -1;
	if (!seen)
		return cm_error(CM_EXIT_DATA, cm_input_name(in), -1,
				"window: no \"events\" member (not a trace window?)"),
		       -1;
	if (trace_events)
		*trace_events = w.trace_events;
	return 0;
}
