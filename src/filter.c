/* filter.c - a trace alone, without a window: copied, and cut (--steps,
 * --range) and repaired (-t) when asked.
 *
 * `cuptimerge [--steps=A-B | --range=S,E] [-t MAP] TRACE`: any Chrome
 * trace, a stock Kineto one (CPU and CUDA) included, goes through the merge
 * engine's CPU side with no window: the first pass (cpu/cpuscan.c) checks
 * it and, when cutting, notes each event and finds the steps; the range is
 * resolved (cpu/cpucut.c); the copy (cpu/cpucopy.c) writes every top-level
 * member as it was and the events kept, as the bytes they were (through the
 * repair stage with -t).  Nothing is added and nothing is made again: the
 * profiler's span events are events like the others here.  --split's files
 * are written by writer threads (io/outq.c), as a merge's split writes
 * them, but with -t (each event through its files' repair stages, written
 * here one at a time).  The trace is
 * read twice, so a pipe is spooled (io/inputraw.c); a repair without a cut
 * keeps its own one-pass path (repair/repairpass.c).  Other outputs of a
 * trace alone (a converter) can start from here: the copy's hooks see
 * every kept event. */
#include "config.h"
#include "filter.h"
#include "mergesplit.h"
#include "cpu/cpucopy.h"
#include "cpu/cpucut.h"
#include "cpu/cpuscan.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "io/input.h"
#include "repair/repair.h"

#include <stdlib.h>
#include <string.h>

/* The scan's workers: as the merge's, no more than its one cutting thread
 * feeds. */
#define SCAN_THREADS_MAX 16

_Static_assert(CM_CPUCUT_MAX_FILES <= CM_CPUROUTE_MAX, "a --split file a bit of the route's masks");

struct filter {
	const struct cm_options *opt;
	cm_cpucut cut;
	cm_repair *repair; /* -t, or NULL */
	cm_arena *arena;
	/* --split: a file a group of steps (cut.groups); the text they share
	 * (the top-level members, the array's brackets) goes to all of them
	 * through a tee, each event to the files of its groups */
	cm_output **outs;
	int *wrote;        /* a file has an event already (the next needs a comma) */
	size_t nouts;
	cm_cpuroute route; /* the events to the files in runs, from the layout */
	cm_repair **grepair; /* --split with -t: a repair stage a file (the rows it names are its own) */
};

/* --split after the careful scan (CUPTIMERGE_CAREFUL), or with -t: the
 * element in hand to the files of its groups (cut.ga to cut.gb), after what
 * all of them share so far, a comma between two (the careful path's files
 * have always been written so).  Else the copy routes runs of them, with
 * the input's separators (f->route). */
static int split_element(void *ctx, const char *text, size_t len, cm_evout *eo)
{
	struct filter *f = ctx;
	if (cm_evout_flush(eo) < 0)
		return -1;
	for (int g = f->cut.ga; g <= f->cut.gb; g++) {
		const char *t = text;
		size_t n = len;
		const cm_jval *ev;
		cm_buf b = {0};
		if (f->grepair) {
			cm_arena_reset(f->arena);
			if (cm_repair_event_text(f->grepair[g], f->arena, text, len, &ev)) {
				cm_jval_write(&b, ev);
				t = b.p;
				n = b.len;
			}
		}
		if ((f->wrote[g] && cm_output_write(f->outs[g], ",", 1) < 0) || cm_output_write(f->outs[g], t, n) < 0) {
			cm_buf_free(&b);
			return -1;
		}
		cm_buf_free(&b);
		f->wrote[g] = 1;
	}
	return 0;
}

/* --split: open a file for each group.  0, or -1 after a report (those
 * opened are closed, and none appears). */
static int split_open(struct filter *f)
{
	if (cm_split_open(f->opt->out_path, &f->cut, f->opt->gzip_level, f->opt->jobs, &f->outs, NULL) < 0)
		return -1;
	f->nouts = f->cut.ngroups;
	f->wrote = cm_xcalloc(f->nouts, sizeof *f->wrote);
	return 0;
}

/* --split: close the files, published when OK.  0, or -1 after a report. */
static int split_close(struct filter *f, int ok)
{
	int rc = cm_split_close(f->outs, f->nouts, NULL, 0, ok);
	free(f->wrote);
	f->outs = NULL;
	f->wrote = NULL;
	f->nouts = 0;
	return rc;
}

static int hook_none(void *ctx, cm_evout *eo)
{
	(void)ctx;
	(void)eo;
	return 0;
}

/* After the events: the names of the rows the repair moved events to;
 * --split by writer threads: every event they hold written, before the
 * text after the events goes to every file (through the tee).  (The copy
 * has handed its pieces on before the hook.) */
static int hook_append(void *ctx, cm_evout *eo)
{
	struct filter *f = ctx;
	if (f->route.q && cm_outq_sync(f->route.q) < 0)
		return -1;
	if (f->grepair) { /* each file names the rows its own events moved to */
		if (cm_evout_flush(eo) < 0)
			return -1;
		for (size_t g = 0; g < f->nouts; g++) {
			cm_evout geo = {f->outs[g], {0}, !f->wrote[g]};
			int rc = cm_repair_write_metadata(f->grepair[g], &geo) < 0 || cm_evout_flush(&geo) < 0 ? -1 : 0;
			cm_buf_free(&geo.buf);
			if (rc < 0)
				return -1;
			f->wrote[g] |= !geo.first;
		}
		return 0;
	}
	return f->repair ? cm_repair_write_metadata(f->repair, eo) : 0;
}

static int hook_keep(void *ctx, uint64_t index)
{
	struct filter *f = ctx;
	int rc = cm_cpucut_keep(&f->cut, index);
	f->route.ga = f->cut.ga;
	f->route.gb = f->cut.gb;
	return rc;
}

/* With -t: an event through the repair stage. */
static int hook_element(void *ctx, const char *text, size_t len, cm_evout *eo)
{
	struct filter *f = ctx;
	return cm_repair_write_text(f->repair, f->arena, text, len, eo);
}

int cm_filter_run(const struct cm_options *opt, const cm_threadmap *map, cm_output *out)
{
	struct filter f;
	cm_cpuplan plan;
	cm_input *in;
	cm_evout eo = {0};
	int status = 0, ok, rc, piped;
	memset(&f, 0, sizeof f);
	memset(&plan, 0, sizeof plan);
	f.opt = opt;
	eo.out = out;
	if (!(in = cm_input_open_rewindable(opt->cpu_path, opt->bufsize))) {
		if (out)
			cm_output_close(out, 0);
		return cm_diag_status();
	}
	cm_cut_of_options(&f.cut, opt);
	if (map) {
		f.repair = cm_repair_new(map);
		f.arena = cm_arena_new();
	}
	cm_progress_job(2 * cm_input_raw_size(in));
	cm_progress_stage(0, cm_input_raw_size(in));
	if (cm_cpuscan_run_cut(in, &plan, opt->careful ? 0 : opt->jobs < SCAN_THREADS_MAX ? opt->jobs : SCAN_THREADS_MAX,
			       f.cut.mode ? &f.cut : NULL) < 0 ||
	    (f.cut.mode && cm_cpucut_resolve(&f.cut, cm_input_name(in)) < 0) ||
	    (opt->split_n && (split_open(&f) < 0 || !(eo.out = out = cm_output_tee(f.outs, f.nouts))))) {
		status = cm_diag_status();
		if (out)
			cm_output_close(out, 0);
		if (f.nouts)
			split_close(&f, 0);
	} else {
		cm_cpucopy_hooks hooks;
		f.route.outs = f.outs;
		f.route.nouts = f.nouts;
		f.route.shared = &eo;
		/* the files by writer threads, made at the first write (cpuroute.c),
		 * where the copy routes runs of events (not one at a time: with -t,
		 * or after the careful scan) */
		if (opt->split_n && !f.repair && !plan.careful)
			f.route.writers = cm_split_writers(opt->jobs, f.nouts, opt->gzip_level >= 0);
		if (opt->split_n && f.repair) { /* each event through its files' repairs, one at a time */
			f.route.whole = 1;
			f.grepair = cm_xcalloc(f.nouts, sizeof *f.grepair);
			for (size_t g = 0; g < f.nouts; g++) {
				f.grepair[g] = cm_repair_new(map);
				if (plan.has_base)
					cm_repair_set_base(f.grepair[g], plan.base_ns);
			}
		}
		hooks = (cm_cpucopy_hooks){.insert = hook_none, .append = hook_append, .ctx = &f,
					  .element = opt->split_n ? split_element : f.repair ? hook_element : NULL,
					  .keep = f.cut.mode ? hook_keep : NULL, .cut = f.cut.mode ? &f.cut : NULL,
					  .route = opt->split_n ? &f.route : NULL,
					  /* the events in parts on threads (cpucopypar.c) */
					  .threads = opt->jobs < SCAN_THREADS_MAX ? opt->jobs : SCAN_THREADS_MAX,
					  .trace_name = opt->trace_name && *opt->trace_name ? opt->trace_name : NULL};
		/* nothing is made again here: the profiler's span events stay */
		plan.ndropped = 0;
		if (f.repair && plan.has_base)
			cm_repair_set_base(f.repair, plan.base_ns);
		eo.first = 1;
		cm_progress_stage(cm_input_raw_size(in), cm_input_raw_size(in));
		ok = cm_input_rewind(in) == 0 && cm_cpucopy_run(in, &plan, &hooks, &eo) == 0 && cm_evout_flush(&eo) == 0;
		/* the writer threads stopped before the files close (what they
		 * hold written when OK, else dropped) */
		if (cm_outq_free(f.route.q, ok) < 0)
			ok = 0;
		f.route.q = NULL;
		piped = cm_output_pipe_closed(out);
		rc = cm_output_close(out, ok);
		if (opt->split_n && split_close(&f, ok && rc == 0) < 0)
			rc = -1;
		if (piped || rc == 1)
			status = CM_EXIT_OK;
		else if (!ok || rc < 0)
			status = cm_diag_status() ? cm_diag_status() : CM_EXIT_IO;
	}
	cm_progress_clear();
	if (!status && opt->verbose && f.cut.mode)
		cm_warn(NULL, -1, "cut to %.3f-%.3f us: %llu events kept, %llu cut", f.cut.lo, f.cut.hi,
			(unsigned long long)f.cut.kept, (unsigned long long)f.cut.cut);
	if (!status && f.repair && !f.grepair)
		cm_repair_report(f.repair);
	for (size_t g = 0; f.grepair && g < f.cut.ngroups; g++) {
		if (!status)
			cm_repair_report(f.grepair[g]);
		cm_repair_free(f.grepair[g]);
	}
	free(f.grepair);
	cm_buf_free(&eo.buf);
	cm_repair_free(f.repair);
	cm_arena_free(f.arena);
	cm_cpuplan_free(&plan);
	cm_cpucut_free(&f.cut);
	cm_input_close(in);
	return status;
}
