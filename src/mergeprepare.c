/* mergeprepare.c - a merge's phases 1 and 2: everything before the first
 * output byte.
 *
 * W (the window's one parse, into records) and C1 (the CPU trace's) side
 * by side, on a second thread or sharing one crew of workers; then the
 * joins, the range of a cut, the plan, and crosscheck.c's judgement that
 * the two inputs belong together (the design essay in merge.c).  A file of
 * its own because it is the half of the run that reads and may refuse:
 * every error of the input stops here, and what it leaves in struct merge
 * (the plan, the GPU side planned, the extent) is all that the output
 * (mergeout.c) reads. */
#include "config.h"
#include "merge_int.h"
#include "base/exitcode.h"
#include "base/idmap.h"
#include "cpu/cpuindex.h"
#include "crosscheck.h"
#include "gpu/window.h"
#include "mergepft.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

/* W's sinks (gpu/window.h): the window's events, top-level members and
 * batches handed to the GPU side's digest and scan. */
static int w_event(void *ctx, uint64_t index, const cm_jval *ev, int64_t offset)
{
	return cm_gpu_digest_event(((struct merge *)ctx)->gpu, index, ev, offset);
}
static int w_member(void *ctx, const char *key, const cm_jval *val, int64_t offset)
{
	return cm_gpu_scan_member(((struct merge *)ctx)->gpu, key, val, offset);
}
static int w_member_text(void *ctx, const char *key, const char *val, size_t vlen, int64_t offset)
{
	if (strcmp(key, "user_annotations"))
		return 1;
	return cm_gpu_scan_ua_text(((struct merge *)ctx)->gpu, val, vlen, offset);
}
static int w_batch_event(void *wctx, uint64_t index, const cm_jval *ev, int64_t offset, cm_buf *out)
{
	return cm_gpu_digest_batch_event(wctx, index, ev, offset, out);
}
static int w_collect(void *ctx, cm_buf *out)
{
	return cm_gpu_digest_collect(((struct merge *)ctx)->gpu, out);
}

/* The repair stage as the GPU stage's thread-id remap (cm_gpu_tid_remap),
 * and as the taker of the thread rows its metadata names. */
static int repair_tid(void *ctx, int64_t pid, int64_t tid, double abs_ns, int count, int64_t *out)
{
	return cm_repair_tid(ctx, pid, tid, 1, abs_ns, count, out);
}
static void repair_named(void *ctx, int64_t pid, int64_t tid) { cm_repair_named(ctx, pid, tid); }

/* The window's conversion as this run sets it up (made again when the
 * careful reader reads the window from the start). */
cm_gpu *mergeprepare_new_gpu(struct merge *m)
{
	cm_gpu *g = cm_gpu_new(cm_input_name(m->win));
	cm_gpu_set_join_threads(g, mergejobs_plan_threads(m->opt->jobs));
	if (m->repair)
		cm_gpu_set_tid_remap(g, repair_tid, m->repair);
	if (m->opt->clip)
		cm_gpu_set_cut(g, CM_CUT_START);
	else if (m->opt->cut || m->opt->split_n)
		cm_gpu_set_cut(g, CM_CUT_OVERLAP);
	return g;
}

/* W: the window's one parse.  The parallel reader does it; a window it will
 * not take (bad JSON, a bad shape) is read again, from a fresh start, by the
 * careful reader, which says what is wrong (or, should the two ever
 * disagree, reads it whole).  0, or -1 after a report. */
static int read_window(struct merge *m, int *trace_events)
{
	int n = m->crew ? cm_ocrew_workers(m->crew) : mergejobs_window_workers(m->opt->jobs), rc;
	cm_gpu_digest **d = cm_xcalloc((size_t)n, sizeof *d);
	cm_window_psink ps = {w_batch_event, w_collect, w_member, w_member_text, m, (void **)d, n,
			      !m->crew && mergejobs_window_caller_helps(m->opt->jobs), &m->win_stats, m->crew};
	cm_window_sink sink = {w_event, w_member, m};
	for (int i = 0; i < n; i++)
		d[i] = cm_gpu_digest_new(m->gpu);
	rc = m->opt->careful ? 1 : cm_window_read_parallel(m->win, &ps, "reading the window", trace_events);
	for (int i = 0; i < n; i++)
		cm_gpu_digest_free(d[i]);
	free(d);
	if (rc == 1) {
		m->win_careful = 1;
		if (cm_input_rewind(m->win) < 0)
			return -1;
		cm_gpu_free(m->gpu);
		m->gpu = mergeprepare_new_gpu(m);
		rc = cm_window_read(m->win, &sink, "reading the window", trace_events);
	}
	return rc < 0 ? -1 : cm_gpu_digest_finish(m->gpu);
}

/* The maker of a --split file's repair stage (-t; cm_msplit_plan): the
 * run's map, its base time. */
static cm_repair *split_repair(void *ctx)
{
	struct merge *m = ctx;
	cm_repair *r = cm_repair_new(m->map);
	cm_repair_set_base(r, m->base_ns);
	return r;
}

/* C1: the CPU trace's one parse, by the parallel scan (or, with the testing
 * aid CUPTIMERGE_CAREFUL, by the careful one).  m->c1_rc: 0, or -1 after a
 * report; and when it ended, and how long its cutting thread waited for
 * its reads, for -v. */
static void cpu_scan(struct merge *m)
{
	cm_cpucut *cut = m->opt->cut || m->opt->split_n ? &m->cut : NULL;
	if (m->crew)
		m->c1_rc = cm_cpuscan_run_crew(m->cpu, &m->plan, m->crew, cut);
	else
		m->c1_rc = cm_cpuscan_run_cut(m->cpu, &m->plan,
					      m->opt->careful ? 0 : mergejobs_cpu_workers(m->opt->jobs), cut);
	m->t_cpu = cm_now_s() - m->t0;
	m->cpu_waited = cm_input_waited(m->cpu);
}

/* C1 on the second thread: the CPU scan, with the index candidates kept on
 * disk until W has named the ids it needs. */
static void *c1_thread(void *arg)
{
	struct merge *m = arg;
	cm_progress_thread_off();
	cm_diag_defer(&m->c1_diag); /* W may fail at the same time: one line */
	cpu_scan(m);
	__atomic_store_n(&m->c1_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The user annotations' table (cm_gpu_ua_table) on a thread of its own,
 * beside the CPU trace's index: 0.02-0.03 s of the 1 GB pair's joins on
 * one thread otherwise. */
struct ua_job {
	cm_gpu *gpu;
	cm_diag_slot diag;
};

static void *ua_thread(void *arg)
{
	struct ua_job *j = arg;
	cm_progress_thread_off();
	cm_diag_defer(&j->diag);
	cm_gpu_ua_table(j->gpu);
	return NULL;
}

/* --steps, --range, --split: the range (or the groups) resolved on a
 * thread of its own beside the CPU trace's index, which reads nothing of
 * it (cpucut.c reads the notes of every CPU event twice: 0.11 s of the 1 GB
 * pair's split on 16 CPUs, the other threads idle).  Its error, held, is
 * the run's first, as when it ran before the index. */
struct resolve_job {
	struct merge *m;
	int rc;
	cm_diag_slot diag;
};

static void *resolve_thread(void *arg)
{
	struct resolve_job *j = arg;
	cm_progress_thread_off();
	cm_diag_defer(&j->diag);
	j->rc = cm_cpucut_resolve(&j->m->cut, cm_input_name(j->m->cpu));
	return NULL;
}

/* Everything before the first output byte, phases 1 and 2: W and C1 (side by
 * side when a second thread can be had), the index, resolve, the plan.  Returns 0 or an exit
 * status. */
int mergeprepare_run(struct merge *m)
{
	const struct cm_options *opt = m->opt;
	cm_int base;
	double wmin, wmax;
	pthread_t th, ua_th, r_th;
	struct ua_job ua_job = {0};
	struct resolve_job rj = {m, 0, {0}};
	cm_diag_slot index_diag = {0}, *held = NULL;
	int r_threaded = 0;
	cm_diag_slot early_diag = {0};
	int early, early_ok = 0;
	int threaded, w1_rc, win_trace_events = 0, status, ua_threaded;
	uint64_t win_size, cpu_size;

	if (!opt->careful && mergejobs_read_crew(opt->jobs))
		m->crew = cm_ocrew_new(mergejobs_read_crew(opt->jobs));
	/* the sizes taken before C1 starts: its scan may rewind the CPU trace
	 * (a pipe's copy read again after an error), which sets its size */
	win_size = cm_input_raw_size(m->win);
	cpu_size = cm_input_raw_size(m->cpu);
	threaded = pthread_create(&th, NULL, c1_thread, m) == 0;

	/* one progress line for the run: the window's read, then the copy of
	 * the CPU trace (the CPU trace's read runs beside the window's) */
	if (win_size && cpu_size) {
		cm_progress_job(win_size + cpu_size);
		cm_progress_stage(0, win_size);
	}
	w1_rc = read_window(m, &win_trace_events);
	m->t_window = cm_now_s() - m->t0;
	m->win_waited = cm_input_waited(m->win);
	/* the window's External ids linked while the CPU trace is still
	 * being read (on 16 CPUs at -j 8 its read ended 0.6 s after the
	 * window's), the walk's errors held until the scan's are settled, so
	 * that the first fault is still the one reported; the walk reads the
	 * window's pairs only, and the scan makes no id table meanwhile */
	early = threaded && w1_rc == 0 && !__atomic_load_n(&m->c1_done, __ATOMIC_ACQUIRE);
	if (early) {
		cm_diag_slot *was = cm_diag_defer_swap(&early_diag);
		early_ok = cm_gpu_linked_ext(m->gpu) != NULL;
		cm_diag_defer_swap(was);
	}
	if (threaded) {
		pthread_join(th, NULL);
		cm_diag_settle(&m->c1_diag); /* after W's own error, if any */
	} else {
		cpu_scan(m);
	}
	if (m->crew) { /* both readers are done with it */
		m->crew_n = cm_ocrew_workers(m->crew);
		m->crew_idle = cm_ocrew_idle(m->crew);
		cm_ocrew_free(m->crew);
		m->crew = NULL;
	}
	m->c_read = cm_process_cpu_s();
	/* a window of version 2 takes the External ids of its API calls from
	 * the operators they were made in, when it has no CUSTOM0 records */
	if (w1_rc < 0 || m->c1_rc < 0 || cm_gpu_check_ids(m->gpu, m->plan.ext_signs) < 0) {
		cm_diag_drop(&early_diag);
		return cm_diag_status();
	}
	if ((early && (cm_diag_settle(&early_diag) || !early_ok)) || !cm_gpu_linked_ext(m->gpu))
		return cm_diag_status();
	/* --steps, --range: the range (the steps were found by the CPU scan) */
	if (opt->cut || opt->split_n) {
		r_threaded = opt->jobs > 1 && pthread_create(&r_th, NULL, resolve_thread, &rj) == 0;
		if (!r_threaded && cm_cpucut_resolve(&m->cut, cm_input_name(m->cpu)) < 0)
			return cm_diag_status();
	}
	m->t_linked = cm_now_s() - m->t0;
	m->c_linked = cm_process_cpu_s();
	/* the user annotations' table beside the index, which for a window
	 * of version 1 makes no table (the order the tables are made in
	 * stays the same: it decides which are held in memory) */
	ua_job.gpu = m->gpu;
	ua_threaded = opt->jobs > 1 && cm_gpu_version(m->gpu) < 2 &&
		      pthread_create(&ua_th, NULL, ua_thread, &ua_job) == 0;
	if (r_threaded) /* the index's errors held until the resolve's are settled */
		held = cm_diag_defer_swap(&index_diag);
	status = cm_cpuindex_apply(m->cpu, &m->plan, cm_gpu_linked_ext(m->gpu),
				   cm_gpu_version(m->gpu) >= 2 ? cm_gpu_add_cpu_op : NULL, cm_gpu_add_cpu_ann, m->gpu,
				   mergejobs_plan_threads(m->opt->jobs)) < 0 ||
		 cm_gpu_cpu_ops_done(m->gpu) < 0;
	if (r_threaded) {
		cm_diag_defer_swap(held);
		pthread_join(r_th, NULL);
		if (cm_diag_settle(&rj.diag) || rj.rc < 0) {
			cm_diag_drop(&index_diag);
			status = 1;
		} else {
			status |= cm_diag_settle(&index_diag) != 0;
		}
	}
	if (ua_threaded) {
		pthread_join(ua_th, NULL);
		status |= cm_diag_settle(&ua_job.diag) != 0; /* after the index's own error, if any */
	}
	if (status)
		return cm_diag_status();
	m->t_indexed = cm_now_s() - m->t0;
	m->c_indexed = cm_process_cpu_s();
	/* the kernels' device properties: the window's, else the CPU trace's */
	if (m->plan.devprops == CM_DEVPROPS_LISTED)
		cm_gpu_set_cpu_devices(m->gpu, &m->plan.devices);
	/* the rows it names and its program's name, for Kineto's metadata */
	cm_gpu_set_cpu_meta(m->gpu, m->plan.meta, m->plan.has_prog ? m->plan.prog_name.p ? m->plan.prog_name.p : "" : NULL,
			    m->plan.prog_name.len);
	if ((status = cm_crosscheck_documents(opt, cm_input_name(m->cpu), cm_input_name(m->win), &m->plan,
					      win_trace_events)))
		return status;
	if (m->plan.has_base) {
		base = m->plan.base_ns;
	} else {
		double now = opt->have_now ? opt->now : (double)time(NULL);
		base = cm_cpuscan_default_base(now);
	}
	if (!cm_gpu_time_ok(base)) /* with --force, past crosscheck's refusal of an odd base */
		return cm_error(CM_EXIT_DATA, cm_input_name(m->cpu), -1,
				"\"baseTimeNanoseconds\" lies 2^126 ns or more from 0, beyond the times cuptimerge takes");
	if (cm_gpu_resolve(m->gpu, base, m->plan.ext_threads.v, m->plan.indexed) < 0)
		return cm_diag_status();
	m->t_joins = cm_now_s() - m->t0;
	m->c_joins = cm_process_cpu_s();
	if (m->repair)
		cm_repair_set_base(m->repair, base);
	/* the trace's span with its own profiler span (crosscheck.c) */
	cm_gpu_set_cpu_span(m->gpu, cm_py_min(m->plan.min_ts, m->plan.prof_min_ts),
			    cm_py_max(m->plan.max_end, m->plan.prof_max_end));
	/* --clip: the window cut to the CPU trace's span, the profiler's own
	 * span event taken in (it ends after the last operator); --steps and
	 * --range: to their range */
	/* a .pftrace's lanes told each API call the plan reads (mergepft.c) */
	if (m->pft_ties)
		cm_mergepft_ties(m->gpu, m->pft_ties);
	if (opt->split_n) {
		/* --split: the records dealt to the files' groups, each planned */
		m->split.gpu = m->gpu;
		m->split.cut = &m->cut;
		m->split.gzip = m->opt->gzip_level >= 0;
		m->base_ns = base;
		if (cm_msplit_plan(&m->split, mergejobs_plan_threads(opt->jobs), m->repair ? split_repair : NULL, m) < 0)
			return cm_diag_status();
	} else if (opt->cut ? cm_gpu_cut_span(m->gpu, m->cut.lo, m->cut.hi) < 0
			    : cm_gpu_cut_span(m->gpu, cm_py_min(m->plan.min_ts, m->plan.prof_min_ts),
					      cm_py_max(m->plan.max_end, m->plan.prof_max_end)) < 0) {
		return cm_diag_status();
	} else if (cm_gpu_plan(m->gpu, mergejobs_plan_threads(opt->jobs)) < 0 ||
		   (m->pft_ties && cm_mergepft_ties_spans(m->gpu, m->pft_ties, mergejobs_plan_threads(opt->jobs)) < 0)) {
		return cm_diag_status();
	}
	m->t_plan = cm_now_s() - m->t0;
	m->c_plan = cm_process_cpu_s();
	if ((status = cm_crosscheck_match(opt, cm_input_name(m->cpu), cm_input_name(m->win), &m->plan, m->gpu)))
		return status;
	cm_gpu_extent(m->gpu, &wmin, &wmax);
	/* Python's min()/max() over the CPU events, then the window's (when
	 * cutting, over what is kept) */
	m->min_ts = cm_py_min(opt->cut ? m->cut.kept_min : m->plan.min_ts, wmin);
	m->max_end = cm_py_max(opt->cut ? m->cut.kept_max : m->plan.max_end, wmax);
	if (opt->split_n) /* each file's span is its own (cm_msplit_plan) */
		return 0;
	if (opt->cut && !isfinite(m->min_ts)) /* the trace named, as --steps' refusals name it */
		return cm_error(CM_EXIT_DATA, cm_input_name(m->cpu), -1,
				"no duration (\"X\") event lies in the range %.3f to %.3f us: nothing to keep",
				m->cut.lo, m->cut.hi);
	if (m->repair)
		cm_gpu_each_named_thread(m->gpu, repair_named, m->repair);
	if (!isfinite(m->min_ts))
		return cm_error(CM_EXIT_DATA, NULL, -1,
				"the merged trace would contain no duration (\"X\") events");
	return 0;
}
