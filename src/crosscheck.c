/* crosscheck.c - refuse (or warn about) a window and a CPU trace that do not belong together.
 *
 * The merge takes any two valid documents, and a batch job that pairs the
 * wrong files (another rank's window, another run's, a full CPU+CUDA trace,
 * a trace merged before, the two files swapped) would get a plausible but
 * wrong trace and status 0.  What the passes learn anyway tells most of
 * these apart, at no extra read:
 *
 *   documents  a window has "events" and no "traceEvents", a trace the
 *              reverse; a CPU trace holds no GPU activity and none of the
 *              rows the merge writes (else every GPU event would be there
 *              twice);
 *   processes  the window's API records come from a process that has
 *              events in the trace;
 *   rank       the rank (and host) the window's "source" records is the one
 *              the trace's distributedInfo (and tensorboard name) records;
 *              read apart, but little: the trace up to "traceEvents", a
 *              plain window's last 64 KiB (batchtail.c; a gzip window or
 *              one from a pipe is not checked: its tail costs a full read);
 *   time       the window's events and the trace's overlap in time, both in
 *              trace microseconds on the base the merge itself uses (so a
 *              wrong --now for a trace without baseTimeNanoseconds shows).
 *
 * A refusal is status 1 with "(use --force to merge anyway)"; --force makes
 * it a warning.  What may be meant (most window events outside the trace's
 * span, CUDA API rows already in the trace) is a warning only.  The rules
 * stay loose on purpose: a window may hold more processes than the trace
 * (only none in common is refused), GPU work may run past the last CPU
 * event (only no overlap at all is refused), and a check without data (no
 * API records, no X events) passes. */
#include "config.h"
#include "crosscheck.h"
#include "base/diag.h"
#include "batch/batchscan.h"
#include "base/exitcode.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Report a refusal on FILE: an error, or with --force a warning.  Returns
 * CM_EXIT_DATA, or 0 with --force. */
static int refuse(const struct cm_options *opt, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(const struct cm_options *opt, const char *file, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (opt->force) {
		cm_warn(file, -1, "%s (merged anyway: --force)", msg);
		return 0;
	}
	return cm_error(CM_EXIT_DATA, file, -1, "%s (use --force to merge anyway)", msg);
}

int cm_crosscheck_documents(const struct cm_options *opt, const char *cpu, const char *win, const cm_cpuplan *plan,
			    int win_trace_events)
{
	if (win_trace_events &&
	    refuse(opt, win, "window: it has a \"traceEvents\" member, as a Chrome trace has: not a trace window?"))
		return CM_EXIT_DATA;
	if (plan->has_window_events && !plan->has_events &&
	    refuse(opt, cpu,
		   "a trace window (top-level \"events\", no \"traceEvents\"), not a Chrome trace: "
		   "are the window and the CPU trace swapped?"))
		return CM_EXIT_DATA;
	if (plan->merge_rows && plan->gpu_events) {
		if (refuse(opt, cpu,
			   "already merged (it holds the GPU rows cuptimerge writes and %" PRIu64
			   " GPU events): merging again would duplicate them",
			   plan->gpu_events))
			return CM_EXIT_DATA;
	} else if (plan->merge_rows) {
		if (refuse(opt, cpu,
			   "already merged (it holds the GPU rows cuptimerge writes): merging again would duplicate "
			   "its CUDA API events"))
			return CM_EXIT_DATA;
	} else if (plan->gpu_events) {
		if (refuse(opt, cpu,
			   "it already holds %" PRIu64 " GPU events (kernel, gpu_memcpy, gpu_memset): "
			   "a full CPU+CUDA trace? Merging would duplicate them",
			   plan->gpu_events))
			return CM_EXIT_DATA;
	} else if (plan->api_events) {
		cm_warn(cpu, -1,
			"it already holds %" PRIu64 " CUDA API events (cuda_runtime, cuda_driver), as torch records "
			"them with ProfilerActivity.CPU: the merged trace may show those calls twice",
			plan->api_events);
	}
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* "pid N", or "pids A, B, C" (the smallest three, then ", ... (N in all)")
 * for the int64 keys of M, into BUF. */
static void pid_list(const cm_hmap *m, char *buf, size_t size)
{
	size_t n = cm_hmap_count(m), k = 0, len;
	int64_t *v = cm_xmalloc((n + 1) * sizeof *v);
	for (size_t i = 0; i < cm_hmap_slots(m); i++) {
		const void *key;
		if (cm_hmap_slot(m, i, &key))
			memcpy(&v[k++], key, 8);
	}
	qsort(v, k, sizeof *v, cmp_i64);
	len = (size_t)snprintf(buf, size, "pid%s", k == 1 ? "" : "s");
	for (size_t i = 0; i < k && i < 3 && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s %" PRId64, i ? "," : "", v[i]);
	if (k > 3 && len < size)
		snprintf(buf + len, size - len, ", ... (%zu in all)", k);
	free(v);
}

/* Issue 28 P4: a window whose "source" records another rank than the
 * trace's distributedInfo, or another host than the trace's name in
 * tensorboard_trace_handler's form, merged with status 0.  Both files must
 * be regular files, and the window plain with its "source" at its end.
 * Returns 0 or CM_EXIT_DATA, as refuse(). */
static int check_rank(const struct cm_options *opt, const char *cpu, const char *win)
{
	struct stat sc, sw;
	cm_bfacts wf;
	int64_t rank = -1;
	char *host = NULL;
	int rc = 0;
	if (stat(cpu, &sc) < 0 || !S_ISREG(sc.st_mode) || stat(win, &sw) < 0 || !S_ISREG(sw.st_mode))
		return 0;
	if (cm_bscan_tail(win, &wf) == 0) {
		if (wf.rank >= 0)
			rank = cm_bscan_rank(cpu);
		if (wf.host)
			host = cm_bscan_name_host(cpu, wf.pid);
		if (rank >= 0 && rank != wf.rank)
			rc = refuse(opt, win,
				    "its \"source\" records rank %" PRId64 "%s%s, the CPU trace's distributedInfo rank %" PRId64
				    ": a window of another rank?",
				    wf.rank, wf.host ? " on " : "", wf.host ? wf.host : "", rank);
		else if (host && strcmp(host, wf.host))
			rc = refuse(opt, win,
				    "its \"source\" records host %s, the CPU trace's name host %s: a window of another node?",
				    wf.host, host);
	}
	free(host);
	cm_bfacts_free(&wf);
	return rc;
}

int cm_crosscheck_match(const struct cm_options *opt, const char *cpu, const char *win, const cm_cpuplan *plan,
			const cm_gpu *g)
{
	const cm_hmap *procs = cm_gpu_processes(g);
	double wmin, wmax, cmin, cmax;
	uint64_t events, outside;

	/* processes: only when both sides name some, and the trace's are all known */
	if (cm_hmap_count(procs) && plan->pids && cm_hmap_count(plan->pids) && !plan->pids_overflow) {
		int common = 0;
		for (size_t i = 0; i < cm_hmap_slots(procs) && !common; i++) {
			const void *key;
			common = cm_hmap_slot(procs, i, &key) && cm_hmap_get(plan->pids, key);
		}
		if (!common) {
			char wp[160], cp[160];
			pid_list(procs, wp, sizeof wp);
			pid_list(plan->pids, cp, sizeof cp);
			if (refuse(opt, win,
				   "the window's API records come from %s, which %s no events in the CPU trace (%s): "
				   "a window of another process or rank?",
				   wp, cm_hmap_count(procs) == 1 ? "has" : "have", cp))
				return CM_EXIT_DATA;
		}
	}

	if (check_rank(opt, cpu, win))
		return CM_EXIT_DATA;

	/* time: both spans as the merge computes them for the profiler span;
	 * the trace's own profiler span ("PyTorch Profiler (0)") counts too,
	 * since it covers the whole recording: a worker thread's API calls
	 * can come before the first operator (F24); the warning below measures
	 * against the same span (mergeprepare.c hands it to the plan) */
	cm_gpu_extent_uncut(g, &wmin, &wmax); /* a window cut to nothing is still judged */
	if (!isfinite(plan->min_ts) || !isfinite(wmin))
		return 0;
	cmin = cm_py_min(plan->min_ts, plan->prof_min_ts);
	cmax = cm_py_max(plan->max_end, plan->prof_max_end);
	if (wmax < cmin || wmin > cmax)
		return refuse(opt, win,
			      "the window's events (ts %.3f to %.3f us) and the CPU trace's (ts %.3f to %.3f us) "
			      "do not overlap: not the same run?%s",
			      wmin, wmax, cmin, cmax,
			      plan->has_base ? ""
			      : opt->have_now ? " The trace has no baseTimeNanoseconds: is --now right?"
					      : " The trace has no baseTimeNanoseconds and the base came from the clock: "
						"pass --now with the time of the recording");
	cm_gpu_overlap(g, &events, &outside);
	if (outside > events / 2)
		cm_warn(win, -1,
			"%" PRIu64 " of %" PRIu64 " window events lie outside the CPU trace's time span "
			"(ts %.3f to %.3f us): the merged trace stretches beyond it",
			outside, events, cmin, cmax);
	return 0;
}
