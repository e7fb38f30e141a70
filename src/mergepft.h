/* mergepft.h - the merge's window events and spans handed to the
 * .pftrace transcoder as batches (mergepft.c). */
#ifndef CM_MERGEPFT_H
#define CM_MERGEPFT_H

#include "cpu/cpucopy.h"
#include "gpu/gpuconv.h"
#include "json/evout.h"

/* Whether EO's output is a .pftrace transcoder that takes the window's
 * events as batches (not --split's tee, not CUPTIMERGE_PFT_TEXT set). */
int cm_mergepft_applies(const cm_evout *eo);

/* Before the plan of G: when EO's output is a .pftrace transcoder (the
 * window's events as batches or as text, not --split's tee; the caller
 * leaves out a merge with a repair), every API call the plan reads noted
 * for its lanes (cm_pft_ties), so that they keep the CPU trace's slices a
 * call ties with. */
void cm_mergepft_ties(cm_gpu *g, const cm_evout *eo);
/* After the plan of G (cm_mergepft_ties before it): every span the output
 * will have noted for the lanes too, so that they keep the window's slices
 * a span ties with (a span begins at its first kernel's nanosecond), on THREADS threads.
 * 0, or -1 after a report. */
int cm_mergepft_ties_spans(const cm_gpu *g, const cm_evout *eo, int threads);

/* cm_gpu_write_events for such an output (cm_mergepft_applies): the
 * window's events rendered and encoded by JOBS threads, handed to the
 * transcoder after the text before them, and the spans after them too
 * where they can go along (in the same pool); then cm_mergepft_spans must
 * follow, nothing written between.  1 when the spans went along, 0 when
 * not, or -1 after a report (the transcoder then stopped). */
int cm_mergepft_events(const cm_gpu *g, cm_evout *eo, int jobs);
/* cm_gpu_write_spans after cm_mergepft_events, ALONG its result: the
 * spans (unless they went along) rendered and encoded by JOBS threads,
 * handed to the transcoder after the window's events; then the text after
 * them.  0, or -1 after a report. */
int cm_mergepft_spans(const cm_gpu *g, cm_evout *eo, int jobs, int along);

/* Whether a merge's batches go straight to the transcoder's sequential
 * part (pftrace.h's cm_pft_insert_direct): 1, but 0 with
 * CUPTIMERGE_PFT_DIRECT=0, a testing aid (each through its pool; the same
 * bytes), for the window's groups and the CPU trace's parts alike. */
int cm_mergepft_direct(void);

/* The copy's hook that encodes the CPU trace's parts on its threads
 * (mergepftcpu.c): ENC, for the hooks' enc, and what it needs. */
typedef struct cm_mergepft_parts {
	cm_cpucopy_enc enc;
	struct cm_pft *t;
	int direct; /* the batches straight to the sequential part (else through its pool) */
} cm_mergepft_parts;
/* When EO's output is a .pftrace transcoder that takes batches
 * (cm_mergepft_applies; the caller leaves out a merge with a repair,
 * whose events go one by one, and --split), *P set for it: 1; else 0
 * (CUPTIMERGE_PFT_PARTS=0 too). */
int cm_mergepft_cpu_parts(const cm_evout *eo, cm_mergepft_parts *p);

#endif
