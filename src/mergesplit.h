/* mergesplit.h - --split=steps[:N] in a merge: a file a group of steps,
 * each what --steps of its steps writes; and what the split of a trace
 * alone (filter.c) shares with it: the cut the options ask for, the
 * opening and closing of a split's files. */
#ifndef CM_MERGESPLIT_H
#define CM_MERGESPLIT_H

#include "options.h"
#include "cpu/cpucut.h"
#include "cpu/cpuroute.h"
#include "gpu/gpuconv.h"
#include "io/output.h"
#include "json/evout.h"
#include "repair/repair.h"

/* Set CUT's mode and range (CUT zeroed) from what OPT asks for: --split,
 * else --steps or --range, else none (CM_CPUCUT_NONE). */
void cm_cut_of_options(cm_cpucut *cut, const struct cm_options *opt);

/* Open a file for each group of CUT (resolved), named by PATTERN with its
 * %s replaced by the group's label, into *OUTS (and the names into *NAMES
 * when NAMES is not NULL); gzip at GZIP_LEVEL (>= 0), deflated by JOBS
 * threads that all the files share.  0, or -1 after a report (those
 * opened are dropped, and none appears). */
int cm_split_open(const char *pattern, const cm_cpucut *cut, int gzip_level, int jobs, cm_output ***outs,
		  char ***names);
/* The writer threads for the N files of a split at -j JOBS (io/outq.h):
 * cm_outq_threads', but none for GZIP files unless
 * CUPTIMERGE_SPLIT_WRITERS says so (their bytes go into the deflate
 * crew's blocks, a copy, as the plain merge's -o FILE.gz does; a writer
 * thread only added a hop).  */
int cm_split_writers(int jobs, size_t n, int gzip);
/* Close the N files of OUTS, published when OK (the first failure drops
 * the rest), and free OUTS and the NNAMES NAMES (or NULL).  0, or -1 after
 * a report (or when not OK). */
int cm_split_close(cm_output **outs, size_t n, char **names, size_t nnames, int ok);

typedef struct cm_msplit {
	/* the caller's */
	cm_gpu *gpu;
	cm_cpucut *cut;      /* resolved, CM_CPUCUT_SPLIT */
	cm_output **outs;    /* a file a group, once open */
	int gzip;            /* the files are gzip (their writer threads: cm_split_writers) */
	cm_cpuroute route;   /* the CPU events to them */
	/* cm_msplit_plan's */
	size_t n;
	double *lo, *hi;     /* the groups' ranges */
	double *min_ts, *max_end; /* each file's profiler span (the window's part until cm_msplit_append) */
	cm_evout *eo;        /* a writer a file, for its own events */
	cm_repair **repair;  /* -t: a repair stage a file, or NULL */
	cm_arena *arena;     /* the event in hand (repair) */
	struct cm_gpu_split_stats st; /* -v */
	double ends_s;       /* -v: the wall seconds of the files' spans and ends (cm_msplit_append) */
} cm_msplit;

/* After the CPU trace's groups are resolved and the window resolved (in
 * place of cm_gpu_cut_span and cm_gpu_plan): deal the window's records to
 * the groups and plan each, on JOBS threads; each file's profiler span;
 * with NEW_REPAIR (RCTX), a repair stage for each file.  0, or -1 after a
 * report. */
int cm_msplit_plan(cm_msplit *s, int jobs, cm_repair *(*new_repair)(void *), void *rctx);
/* The copy's hooks (cpucopy.h), SHARED being the copy's writer (the tee):
 * each file's GPU metadata; each file's window events, spans, repaired
 * rows' names and profiler span events (RENDER_JOBS threads); a CPU event
 * (TEXT, LEN) one at a time to the files of its groups (cut->ga to gb),
 * through each file's repair stage.  0, or -1 after a report. */
int cm_msplit_insert(cm_msplit *s, cm_evout *shared);
int cm_msplit_append(cm_msplit *s, cm_evout *shared, int render_jobs);
int cm_msplit_element(cm_msplit *s, const char *text, size_t len, cm_evout *shared);
/* The three profiler span events the merge writes last (its span
 * [MIN_TS, MAX_END], trace us: "PyTorch Profiler (0)", "Iteration Start",
 * "Record Window End"), each through cm_evout_next.  0, or -1. */
int cm_span_events(cm_evout *eo, double min_ts, double max_end);
/* Before the files are closed: the writer threads stopped, what they hold
 * written when OK (else dropped).  0, or -1 after a report. */
int cm_msplit_finish(cm_msplit *s, int ok);
/* -v: where the split's plan went, and its files' spans and ends (one
 * line). */
void cm_msplit_verbose(const cm_msplit *s);
/* The repair stages' reports (one line a file). */
void cm_msplit_report(const cm_msplit *s);
void cm_msplit_free(cm_msplit *s);

#endif
