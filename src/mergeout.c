/* mergeout.c - a merge's phase 3: the output.
 *
 * The CPU trace's text copied (cpu/cpucopy.c, by the layout phase 1 noted)
 * with the GPU side spliced in through the copy's hooks: the metadata at
 * the insertion point, then after the CPU events the window's events, the
 * spans and the profiler span events (to a .pftrace, the window's events
 * and the spans as batches: mergepft.c); with -t each CPU event through
 * the repair stage; with --split each file's GPU side (mergesplit.c).  A file of its
 * own because it runs only once all input has been read and checked
 * (mergeprepare.c): it reads the plan and writes, and its hooks are called
 * from inside the copy. */
#include "config.h"
#include "merge_int.h"
#include "base/exitcode.h"
#include "base/pages.h"
#include "cpu/cpucopy.h"
#include "io/output.h"
#include "mergepft.h"

#include <string.h>

/* Hook: the GPU metadata at the insertion point. */
static int hook_insert(void *ctx, cm_evout *eo)
{
	return cm_gpu_write_metadata(((struct merge *)ctx)->gpu, eo);
}

/* Hook: after the CPU events: the window's events, the spans (to a
 * .pftrace, both as batches), and the profiler span events. */
static int hook_append(void *ctx, cm_evout *eo)
{
	struct merge *m = ctx;
	int jobs = mergejobs_render_threads(m->opt);
	/* to a .pftrace, the window's events and the spans go to the
	 * transcoder as batches (mergepft.c), but not with a repair's remap
	 * (rendered on one thread) */
	int pft = !m->repair && cm_mergepft_applies(eo), along = 0;
	m->t_copied = cm_now_s() - m->t0;
	m->c_copied = cm_process_cpu_s();
	if ((pft ? (along = cm_mergepft_events(m->gpu, eo, jobs)) : cm_gpu_write_events(m->gpu, eo, jobs)) < 0)
		return -1;
	m->t_render = cm_now_s() - m->t0;
	m->c_render = cm_process_cpu_s();
	if ((pft ? cm_mergepft_spans(m->gpu, eo, jobs, along) : cm_gpu_write_spans(m->gpu, eo, jobs)) < 0)
		return -1;
	if (m->repair && cm_repair_write_metadata(m->repair, eo) < 0)
		return -1;
	return cm_span_events(eo, m->min_ts, m->max_end);
}

/* Hook (--steps, --range, --split): whether CPU event INDEX is kept (and
 * in which files). */
static int hook_keep(void *ctx, uint64_t index)
{
	struct merge *m = ctx;
	int rc = cm_cpucut_keep(&m->cut, index);
	m->split.route.ga = m->cut.ga;
	m->split.route.gb = m->cut.gb;
	return rc;
}

/* Hooks (--split): each file's GPU side, its CPU events one at a time. */
static int split_insert(void *ctx, cm_evout *eo) { return cm_msplit_insert(&((struct merge *)ctx)->split, eo); }
static int split_append(void *ctx, cm_evout *eo)
{
	struct merge *m = ctx;
	int rc;
	m->t_copied = cm_now_s() - m->t0;
	m->c_copied = cm_process_cpu_s();
	rc = cm_msplit_append(&m->split, eo, mergejobs_render_threads(m->opt));
	m->t_render = cm_now_s() - m->t0;
	m->c_render = cm_process_cpu_s();
	return rc;
}
static int split_element(void *ctx, const char *text, size_t len, cm_evout *eo)
{
	return cm_msplit_element(&((struct merge *)ctx)->split, text, len, eo);
}

/* Hook (with -t): a CPU event through the repair stage. */
static int hook_element(void *ctx, const char *text, size_t len, cm_evout *eo)
{
	struct merge *m = ctx;
	return cm_repair_write_text(m->repair, m->arena, text, len, eo);
}

/* The copy with the hooks above (merge_int.h). */
int mergeout_write(struct merge *m, cm_evout *eo, char **split_names)
{
	const struct cm_options *opt = m->opt;
	int status = 0, rc;
	cm_cpucopy_hooks hooks = {.insert = hook_insert, .append = hook_append, .ctx = m,
				  .element = m->repair ? hook_element : NULL,
				  .keep = opt->cut ? hook_keep : NULL, .cut = opt->cut ? &m->cut : NULL,
				  .threads = mergejobs_copy_threads(opt->jobs),
				  .parts = &m->copy_parts, .parts_threads = &m->copy_threads,
				  .parts_stats = &m->copy_stats};
	cm_mergepft_parts parts;
	int ok, piped;
	/* named after the -o file; a descriptor's name (/dev/stdout, written
	 * through as standard output is: outfile.c) names none, as "-" */
	hooks.trace_name = opt->trace_name && *opt->trace_name ? opt->trace_name
			   : opt->out_path && strcmp(opt->out_path, "-") && !opt->out_held ? opt->out_path
											   : NULL;
	if (opt->split_n) {
		/* each file named after itself, as --steps -o FILE names it */
		m->split.route.outs = m->split.outs;
		m->split.route.nouts = m->cut.ngroups;
		m->split.route.shared = eo;
		m->split.route.names = hooks.trace_name == opt->out_path ? split_names : NULL;
		m->split.route.whole = m->repair != NULL; /* each event through the files' repairs */
		m->split.arena = cm_arena_new();
		hooks.insert = split_insert;
		hooks.append = split_append;
		hooks.element = split_element;
		hooks.keep = hook_keep;
		hooks.cut = &m->cut;
		hooks.route = &m->split.route;
	}
	/* to a .pftrace, the CPU trace's parts encoded on the copy's
	 * threads (mergepftcpu.c), but not a repair's, whose events go one
	 * by one, nor --split's */
	if (!m->repair && !opt->split_n && cm_mergepft_cpu_parts(eo, &parts)) {
		hooks.enc = &parts.enc;
		m->copy_encoded = 1;
	}
	/* a window of version 2 lends its devices to a trace without */
	if (m->plan.devprops != CM_DEVPROPS_LISTED)
		hooks.devices = cm_gpu_devices_text(m->gpu, &hooks.devices_len);
	eo->first = 1;
	cm_progress_stage(cm_input_raw_size(m->win), cm_input_raw_size(m->cpu));
	/* the pages the plan left: the copy reads no table, and the
	 * output phase's buffers would come on top of them */
	cm_pages_drop();
	ok = cm_input_rewind(m->cpu) == 0 &&
	     cm_cpucopy_run(m->cpu, &m->plan, &hooks, eo) == 0 &&
	     cm_evout_flush(eo) == 0;
	if (opt->split_n && cm_msplit_finish(&m->split, ok) < 0) /* its writer threads, before the closes */
		ok = 0;
	/* the output finished before the close, -v or not (one path), so
	 * that -v reads the gzip stream's waits, its end's included (a
	 * failed finish fails the close below as it would have) */
	if (ok && !opt->split_n && cm_output_finish(eo->out) == 0 && opt->verbose)
		m->gz = cm_output_gz_waits(eo->out, &m->gz_wait, &m->gz_emit);
	piped = cm_output_pipe_closed(eo->out);
	rc = cm_output_close(eo->out, ok);
	if (opt->split_n && cm_split_close(m->split.outs, m->cut.ngroups, split_names, m->cut.ngroups,
					   ok && rc == 0) < 0)
		rc = -1;
	if (piped || rc == 1)
		status = CM_EXIT_OK; /* the reader went away: quiet, as pigz and pv do */
	else if (!ok || rc < 0)
		status = cm_diag_status() ? cm_diag_status() : CM_EXIT_IO;
	return status;
}
