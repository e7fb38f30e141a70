/* merge.c - the engine: passes over the window and the CPU trace, then the output.
 *
 * Design.  The reference merge loads both documents and edits a list; we
 * stream them, so the question is what must be known before each byte goes
 * out.  The output is the CPU trace with, in this order: its leading run of
 * "M" events, the GPU metadata, its other events, the window's events, the
 * gpu_user_annotation spans and three re-made profiler span events.  The GPU
 * metadata comes first but depends on everything: the thread rows of API
 * records are resolved through External ids that may sit anywhere in the CPU
 * trace, through correlation records anywhere in the window, and through the
 * window's thread_resource_map, which a streaming writer puts last.  So:
 *
 *   W1  window pass 1: external correlations (as compact (correlation, id)
 *       pairs), the maps, the end of the last real activity;
 *   C1  CPU pass 1 (cpuscan.c): check the trace; index the External ids the
 *       pairs name -> (pid, tid); base time; the CPU events' extent; which
 *       events are dropped and where the metadata goes;
 *       then the pairs become correlation -> thread and correlation ->
 *       user annotation tables, and the pairs are freed;
 *   W2  window pass 2: every event checked for what W3 will read; rows
 *       (devices, streams, processes, threads) and the time extent noted;
 *       annotation spans grown;
 *   --  all input has now been read and checked: an error stops here, before
 *       a byte is written, so a bad input never leaves half a trace; so
 *       does a pair that does not belong together (crosscheck.c: after C1
 *       the documents' shapes, after W2 the pids and time spans);
 *   C2  CPU pass 2 (cpucopy.c): copy the CPU text, splicing in the metadata
 *       and, at the end of traceEvents,
 *   W3  window pass 3: the window's events, then the spans and span events.
 *
 * Memory is the tables: pairs and index (freed before W2), correlation links,
 * rows and spans; never a document or a record list.  A pipe is re-read from
 * a spooled copy (input.c).  Times: the window's are unix-epoch ns and become
 * (t - baseTimeNanoseconds) / 1000.0 us, computed exactly as Python does
 * (jwrite.h); the CPU trace's numbers are never re-rounded: they are copied. */
#include "config.h"
#include "merge.h"
#include "cpu/cpucopy.h"
#include "cpu/cpuscan.h"
#include "crosscheck.h"
#include "base/diag.h"
#include "exitcode.h"
#include "gpu/gpuconv.h"
#include "io/input.h"
#include "io/output.h"
#include "repair/repair.h"
#include "repair/repairpass.h"
#include "repair/threadmap.h"
#include "gpu/window.h"
#include "gpu/winfast.h"

#include <math.h>
#include <pthread.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

struct merge {
	const struct cm_options *opt;
	cm_input *cpu, *win;
	cm_gpu *gpu;
	cm_cpuplan plan;
	double min_ts, max_end;
	cm_repair *repair;  /* -t: the thread-repair stage, or NULL */
	cm_arena *arena;    /* repair: the CPU event being looked at */
	int c1_rc;          /* result of the CPU scan */
	cm_diag_slot c1_diag; /* its error, when it ran on the second thread */
	/* W3 ahead of time: on a second thread, into a spool */
	int w3_threaded, w3_rc, w3_abort;
	cm_diag_slot w3_diag; /* its error, reported (or dropped) by w3_join */
	pthread_t w3_th;
	cm_input *win3;
	cm_evout w3_eo;
};

static int w1_event(void *ctx, uint64_t index, const cm_jval *ev, int64_t offset)
{
	return cm_gpu_scan_event(((struct merge *)ctx)->gpu, index, ev, offset);
}
static int w1_member(void *ctx, const char *key, const cm_jval *val, int64_t offset)
{
	return cm_gpu_scan_member(((struct merge *)ctx)->gpu, key, val, offset);
}
static int w2_event(void *ctx, uint64_t index, const cm_jval *ev, int64_t offset)
{
	return cm_gpu_plan_event(((struct merge *)ctx)->gpu, index, ev, offset);
}

struct w3 {
	struct merge *m;
	cm_evout *eo;
};
static int w3_event(void *ctx, uint64_t index, const cm_jval *ev, int64_t offset)
{
	struct w3 *w = ctx;
	if (__atomic_load_n(&w->m->w3_abort, __ATOMIC_RELAXED))
		return -1; /* pass 2 failed: nothing of this will be used */
	return cm_gpu_emit_event(w->m->gpu, index, ev, offset, w->eo);
}

/* W3 on the second thread, while the main one runs W2 and copies the CPU
 * trace: the window's events go to a spool that hook_append copies in. */
static void *w3_thread(void *arg)
{
	struct merge *m = arg;
	struct w3 w = {m, &m->w3_eo};
	cm_window_sink sink = {w3_event, NULL, &w};
	cm_progress_thread_off();
	cm_diag_defer(&m->w3_diag); /* W2 checks the same events: let it speak */
	m->w3_rc = cm_window_fast_read(m->win3, &sink, "writing the window events");
	if (m->w3_rc == 0)
		m->w3_rc = cm_evout_flush(&m->w3_eo);
	return NULL;
}

/* Start W3 ahead when it may: not with -t (the repair stage keeps counts
 * that W2 and W3 would share) and only when the window is a regular file
 * that W3 can open again by its name: not standard input (that would share
 * the main thread's file offset), not a pipe, named (a FIFO, /dev/fd/N from
 * a shell's <(...)) or not, whose bytes only the spool holds now.  Falls
 * back to W3 in its place on any trouble. */
static void w3_start(struct merge *m)
{
	if (m->repair || !cm_input_is_file(m->win))
		return;
	m->win3 = cm_input_open(m->opt->window_path, m->opt->bufsize);
	if (!m->win3)
		return;
	m->w3_eo.out = cm_output_open_spool();
	m->w3_eo.first = 1;
	if (m->w3_eo.out && pthread_create(&m->w3_th, NULL, w3_thread, m) == 0) {
		m->w3_threaded = 1;
		return;
	}
	if (m->w3_eo.out)
		cm_output_close(m->w3_eo.out, 0);
	m->w3_eo.out = NULL;
	cm_input_close(m->win3);
	m->win3 = NULL;
}

/* Wait for W3 (ABORT: tell it to stop first, and drop what it met: the run
 * has failed or ended already).  Without ABORT, W3's error, if any, is
 * reported here, unless one was already.  0, or -1 when it failed. */
static int w3_join(struct merge *m, int abort)
{
	if (!m->w3_threaded)
		return 0;
	if (abort)
		__atomic_store_n(&m->w3_abort, 1, __ATOMIC_RELAXED);
	pthread_join(m->w3_th, NULL);
	m->w3_threaded = 0;
	if (abort)
		cm_diag_drop(&m->w3_diag);
	else
		cm_diag_settle(&m->w3_diag);
	return m->w3_rc;
}

/* Copy the spooled window events into EO. */
static int w3_copy(struct merge *m, cm_evout *eo)
{
	int fd = cm_output_spool_done(m->w3_eo.out), first = 1;
	char buf[1 << 16];
	ssize_t n;
	m->w3_eo.out = NULL;
	if (fd < 0)
		return -1;
	if (cm_evout_flush(eo) < 0) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		if (first && !eo->first && cm_output_write(eo->out, ",", 1) < 0)
			break;
		if (first)
			eo->first = 0;
		first = 0;
		if (cm_output_write(eo->out, buf, (size_t)n) < 0)
			break;
	}
	close(fd);
	if (n < 0)
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno)), -1;
	return n == 0 ? 0 : -1;
}

/* Hook: the GPU metadata at the insertion point. */
static int hook_insert(void *ctx, cm_evout *eo)
{
	return cm_gpu_write_metadata(((struct merge *)ctx)->gpu, eo);
}

/* Hook: after the CPU events: W3, the spans, and the profiler span events. */
static int hook_append(void *ctx, cm_evout *eo)
{
	struct merge *m = ctx;
	struct w3 w = {m, eo};
	cm_window_sink sink = {w3_event, NULL, &w};
	cm_buf *b = &eo->buf;
	if (m->win3) {
		if (w3_join(m, 0) < 0 || w3_copy(m, eo) < 0)
			return -1;
	} else if (cm_input_rewind(m->win) < 0 ||
		   cm_window_fast_read(m->win, &sink, "writing the window events") < 0) {
		return -1;
	}
	if (cm_gpu_write_spans(m->gpu, eo) < 0)
		return -1;
	if (m->repair && cm_repair_write_metadata(m->repair, eo) < 0)
		return -1;
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\","
		      "\"tid\":\"PyTorch Profiler\",\"ts\":");
	cm_jw_double(b, m->min_ts);
	cm_buf_lit(b, ",\"dur\":");
	cm_jw_double(b, cm_py_max(m->max_end - m->min_ts, 0.0));
	cm_buf_lit(b, ",\"args\":{\"Op count\":0}}");
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Iteration Start: PyTorch Profiler\","
		      "\"pid\":\"Traces\",\"tid\":\"Trace PyTorch Profiler\",\"ts\":");
	cm_jw_double(b, m->min_ts);
	cm_buf_putc(b, '}');
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\",\"pid\":\"\",\"tid\":\"\",\"ts\":");
	cm_jw_double(b, m->max_end + 0.001);
	cm_buf_putc(b, '}');
	return 0;
}

/* Hook (with -t): a CPU event through the repair stage. */
static int hook_element(void *ctx, const char *text, size_t len, cm_evout *eo)
{
	struct merge *m = ctx;
	const cm_jval *ev;
	cm_arena_reset(m->arena);
	if (cm_evout_next(eo) < 0)
		return -1;
	if (cm_repair_event_text(m->repair, m->arena, text, len, &ev))
		cm_jval_write(&eo->buf, ev);
	else
		cm_buf_put(&eo->buf, text, len);
	return 0;
}

/* C1 on the second thread: the CPU scan, with the index candidates kept on
 * disk until W1 has named the ids it needs. */
static void *c1_thread(void *arg)
{
	struct merge *m = arg;
	cm_progress_thread_off();
	cm_diag_defer(&m->c1_diag); /* W1 may fail at the same time: one line */
	m->c1_rc = cm_cpuscan_run(m->cpu, NULL, &m->plan);
	return NULL;
}

/* Everything before the first output byte: W1 and C1 (side by side when a
 * second thread can be had), the index, resolve, W2.  Returns 0 or an exit
 * status. */
static int prepare(struct merge *m)
{
	const struct cm_options *opt = m->opt;
	cm_window_sink s1 = {w1_event, w1_member, m}, s2 = {w2_event, NULL, m};
	cm_int base;
	double wmin, wmax;
	pthread_t th;
	int threaded = pthread_create(&th, NULL, c1_thread, m) == 0, w1_rc, win_trace_events = 0, status;

	w1_rc = cm_window_read(m->win, &s1, "reading the window", &win_trace_events);
	if (threaded) {
		pthread_join(th, NULL);
		cm_diag_settle(&m->c1_diag); /* after W1's own error, if any */
	} else
		m->c1_rc = cm_cpuscan_run(m->cpu, NULL, &m->plan);
	if (w1_rc < 0 || m->c1_rc < 0 ||
	    cm_cpuscan_apply_index(m->cpu, &m->plan, cm_gpu_linked_ext(m->gpu)) < 0)
		return cm_diag_status();
	if ((status = cm_crosscheck_documents(opt, cm_input_name(m->cpu), cm_input_name(m->win), &m->plan,
					      win_trace_events)))
		return status;
	if (m->plan.has_base) {
		base = m->plan.base_ns;
	} else {
		double now = opt->have_now ? opt->now : (double)time(NULL);
		base = cm_cpuscan_default_base(now);
	}
	if (cm_gpu_resolve(m->gpu, base) < 0)
		return cm_diag_status();
	w3_start(m);
	if (m->repair)
		cm_repair_set_base(m->repair, base);
	cm_gpu_set_cpu_span(m->gpu, m->plan.min_ts, m->plan.max_end);
	if (cm_input_rewind(m->win) < 0 || cm_window_fast_read(m->win, &s2, "checking the window") < 0)
		return cm_diag_status();
	cm_gpu_plan_finish(m->gpu);
	if ((status = cm_crosscheck_match(opt, cm_input_name(m->cpu), cm_input_name(m->win), &m->plan, m->gpu)))
		return status;
	cm_gpu_extent(m->gpu, &wmin, &wmax);
	/* Python's min()/max() over the CPU events, then the window's */
	m->min_ts = cm_py_min(m->plan.min_ts, wmin);
	m->max_end = cm_py_max(m->plan.max_end, wmax);
	if (m->repair)
		cm_gpu_mark_named(m->gpu, m->repair);
	if (!isfinite(m->min_ts))
		return cm_error(CM_EXIT_DATA, NULL, -1,
				"the merged trace would contain no duration (\"X\") events");
	return 0;
}

int cm_merge_run(const struct cm_options *opt)
{
	struct merge m;
	cm_evout eo = {0};
	cm_threadmap *map = NULL;
	int status, rc;
	memset(&m, 0, sizeof m);
	m.opt = opt;
	cm_diag_set_quiet(opt->quiet);
	/* The output first, before any input is read: a -o that cannot be
	 * written (a directory, a missing one) fails now, not after the merge.
	 * Nothing is written to it before all input has been checked. */
	eo.out = cm_output_open(opt->out_path, opt->gzip_level);
	if (!eo.out)
		return cm_diag_status();
	if (opt->map_path && !(map = cm_threadmap_load(opt->map_path, opt->bufsize))) {
		cm_output_close(eo.out, 0);
		return cm_diag_status();
	}
	if (!opt->window_path) {
		status = cm_repairpass_run(opt, map, eo.out);
		cm_threadmap_free(map);
		return status;
	}
	m.win = cm_input_open_rewindable(opt->window_path, opt->bufsize);
	m.cpu = m.win ? cm_input_open_rewindable(opt->cpu_path, opt->bufsize) : NULL;
	if (!m.cpu) {
		cm_output_close(eo.out, 0);
		cm_input_close(m.win);
		cm_threadmap_free(map);
		return cm_diag_status();
	}
	m.gpu = cm_gpu_new(cm_input_name(m.win));
	if (map) {
		m.repair = cm_repair_new(map);
		m.arena = cm_arena_new();
		cm_gpu_set_repair(m.gpu, m.repair);
	}

	status = prepare(&m);
	if (status) {
		w3_join(&m, 1);
		cm_output_close(eo.out, 0); /* nothing was written: no file appears */
	} else {
		cm_cpucopy_hooks hooks = {hook_insert, hook_append, &m, m.repair ? hook_element : NULL, NULL};
		int ok, piped;
		hooks.trace_name = opt->trace_name && *opt->trace_name ? opt->trace_name
				   : opt->out_path && strcmp(opt->out_path, "-") ? opt->out_path
										  : NULL;
		eo.first = 1;
		ok = cm_input_rewind(m.cpu) == 0 && cm_cpucopy_run(m.cpu, &m.plan, &hooks, &eo) == 0 &&
		     cm_evout_flush(&eo) == 0;
		piped = cm_output_pipe_closed(eo.out);
		rc = cm_output_close(eo.out, ok);
		if (piped || rc == 1)
			status = CM_EXIT_OK; /* the reader went away: quiet, as pigz and pv do */
		else if (!ok || rc < 0)
			status = cm_diag_status() ? cm_diag_status() : CM_EXIT_IO;
	}
	cm_progress_clear();
	if (!status && opt->verbose) {
		struct cm_gpu_stats st;
		cm_gpu_stats(m.gpu, &st);
		cm_warn(NULL, -1,
			"merged %llu window events into %llu CPU events: %llu external correlations, "
			"%llu External ids found in the CPU trace, %llu correlations linked to CPU threads; "
			"tables: External id index %.1f MB, correlation links, rows and spans %.1f MB",
			(unsigned long long)st.events, (unsigned long long)m.plan.events, (unsigned long long)st.pairs,
			(unsigned long long)st.linked_ext, (unsigned long long)st.linked_corr,
			(double)st.index_bytes / 1e6, (double)st.table_bytes / 1e6);
	}
	if (!status && m.repair)
		cm_repair_report(m.repair);
	w3_join(&m, 1); /* the output failed before W3 was needed */
	if (m.w3_eo.out)
		cm_output_close(m.w3_eo.out, 0);
	cm_buf_free(&m.w3_eo.buf);
	cm_input_close(m.win3);
	cm_buf_free(&eo.buf);
	cm_repair_free(m.repair);
	cm_arena_free(m.arena);
	cm_threadmap_free(map);
	cm_cpuplan_free(&m.plan);
	cm_gpu_free(m.gpu);
	cm_input_close(m.cpu);
	cm_input_close(m.win);
	return status;
}
