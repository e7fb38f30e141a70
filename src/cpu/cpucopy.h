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

/* The parts' kept elements encoded on the copy's threads instead of
 * written as text (a .pftrace output, src/mergepftcpu.c: cpu/ knows
 * nothing of its format).  A run of parts: BEGIN (the text before them
 * all written to the output), then each part on a worker, numbered
 * 0, 1, ... in order (PART, with that worker's encoder, made by ENC_NEW
 * before the run's first part, freed by ENC_FREE after its last), its
 * output handed on in order (HAND), then END.  Several runs may come
 * (a part too long to run walked between them), with text between. */
typedef struct cm_cpucopy_enc {
	void *ctx;
	/* 0, or -1 after a report */
	int (*begin)(void *ctx);
	void *(*enc_new)(void *ctx);
	void (*enc_free)(void *enc);
	/* Part PIECE: its N kept elements, the Ith the bytes [AB[2I],
	 * AB[2I+1]) of TEXT, which lies at offset OFF of the input named
	 * LABEL (for a refusal's message), encoded: what HAND takes appended
	 * to OUT (its length a multiple of 8 on entry, and left so).  0, or
	 * -1 after a report, -2 without one (the run failed already). */
	int (*part)(void *enc, uint64_t piece, const char *text, const uint64_t *ab, size_t n, const char *label,
		    uint64_t off, cm_buf *out);
	/* A part's output, P[0..N), in order: 0, or -1 after a report. */
	int (*hand)(void *ctx, const void *p, size_t n);
	/* After the run's last part (OK 1), or after it failed (OK 0: the
	 * output's writer stopped, its own failure reported now if it was
	 * one).  0, or -1. */
	int (*end)(void *ctx, int ok);
} cm_cpucopy_enc;

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
	/* When set (not with element or route), the parts' elements go to it
	 * encoded, not as text, and parts are run on one thread too (-j 1:
	 * the output's bytes depend on the parts, which do not depend on the
	 * threads). */
	const cm_cpucopy_enc *enc;
} cm_cpucopy_hooks;

/* Copy IN (already checked by cm_cpuscan_run into PLAN) to EO: every
 * top-level member and every kept event as its original text, the events
 * whose indexes PLAN lists dropped, the hooks' events spliced in, traceName
 * replaced or added, traceEvents added when the input has none.  Returns 0,
 * or -1 after reporting (or after the output failed). */
int cm_cpucopy_run(cm_input *in, const cm_cpuplan *plan, const cm_cpucopy_hooks *hooks, cm_evout *eo);

#endif
