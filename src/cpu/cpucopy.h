/* cpucopy.h - the output pass over the CPU trace: its text copied through,
 * the GPU side spliced in. */
#ifndef CM_CPUCOPY_H
#define CM_CPUCOPY_H

#include "base/opool.h"
#include "cpu/cpucut.h"
#include "cpu/cpuroute.h"
#include "cpu/cpuscan.h"
#include "io/input.h"
#include "json/evout.h"

typedef struct cm_cpucopy_hooks {
	/* Write the GPU metadata events (at the reference's insertion point:
	 * after the leading run of kept "M" events). */
	int (*insert)(void *ctx, cm_evout *eo);
	/* Write the events that follow the CPU events (window events, spans,
	 * the re-made profiler span events). */
	int (*append)(void *ctx, cm_evout *eo);
	void *ctx;
	/* When set, each kept element's text is handed here to be written
	 * (after cm_evout_next) instead of being copied as it is. */
	int (*element)(void *ctx, const char *text, size_t len, cm_evout *eo);
	/* The new traceName, or NULL to keep the input's. */
	const char *trace_name;
	/* When set, the JSON text of a top-level "deviceProperties" for a trace
	 * without devices: written in place of a "deviceProperties" that lists
	 * none, or, when the trace has none, as a new member before its first
	 * member other than "schemaVersion" (where Kineto writes it). */
	const char *devices;
	size_t devices_len;
	/* When set, asked for each element not dropped, in order (its index):
	 * 1 copy it, 0 leave it out (with its separator), -1 after a report. */
	int (*keep)(void *ctx, uint64_t index);
	/* When set (--split, with keep setting its ga and gb), the kept
	 * elements go to its outputs, not to EO, in runs (cpuroute.h); when
	 * the trace's layout is not at hand, to element instead. */
	cm_cpuroute *route;
	/* When set, keep's decisions are this cut's (cm_cpucut_keep, with
	 * route's ga and gb set from its own): the parts on threads make them
	 * themselves (cm_cpucut_part_keep), so that a cut's and a split's
	 * events are copied in parts too. */
	cm_cpucut *cut;
	/* Threads the copy may take (cpucopypar.c: the events past the
	 * metadata read and walked in parts, each on a thread, when the input
	 * can be read at offsets, no hook takes elements one by one, and a
	 * keep hook has its cut); 0 or 1: the one thread of the walk. */
	int threads;
	/* When set, the parts the events were copied in (0: the walk did
	 * them all) and on how many threads, for -v. */
	uint64_t *parts;
	int *parts_threads;
	/* When set, the parts' pool's figures are added to it (-v: whether the
	 * parts or the output they are handed to, in order, set the pace). */
	cm_opool_stats *parts_stats;
} cm_cpucopy_hooks;

/* Copy IN (already checked by cm_cpuscan_run into PLAN) to EO: every
 * top-level member and every kept event as its original text, the events
 * whose indexes PLAN lists dropped, the hooks' events spliced in, traceName
 * replaced or added, traceEvents added when the input has none.  Returns 0,
 * or -1 after reporting (or after the output failed). */
int cm_cpucopy_run(cm_input *in, const cm_cpuplan *plan, const cm_cpucopy_hooks *hooks, cm_evout *eo);

#endif
