/* mergesplit.c - --split=steps[:N] in a merge (-w, with or without -t): a
 * file a group of steps, written in the merge's one output pass.
 *
 * Each file is what `--steps A-B -o FILE` writes for its steps: the CPU
 * trace's text copied once and routed, event by event, to the files of the
 * groups that keep it (cpu/cpucut.c's rules, cpu/cpuroute.c's runs, as the
 * split of a trace alone does); the GPU side planned and rendered for each
 * group from the records it keeps (gpu/gpusplit.c), its metadata at the
 * same place of each file, its events, spans and profiler span events
 * after that file's CPU events; traceName the file's own name.  What every
 * file shares (the top-level members, deviceProperties, the array's
 * brackets) goes to all of them through a tee.  With -t each file has its
 * own repair stage, so that it names the rows its own events moved to. */
#include "config.h"
#include "mergesplit.h"
#include "base/diag.h"
#include "io/pgzcrew.h"
#include "json/jwrite.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cm_cut_of_options(cm_cpucut *cut, const struct cm_options *opt)
{
	if (opt->split_n) {
		cut->mode = CM_CPUCUT_SPLIT;
		cut->split_n = opt->split_n;
	} else if (opt->cut) {
		cut->mode = opt->cut == 1 ? CM_CPUCUT_STEPS : CM_CPUCUT_RANGE;
		cut->step_a = opt->steps_a;
		cut->step_b = opt->steps_b;
		cut->lo = opt->range_lo;
		cut->hi = opt->range_hi;
	}
}

/* The -o pattern with its %s replaced by LABEL and each "%%" by a '%'
 * (malloc'd); main.c has checked that it holds one %s and no other '%'. */
static char *split_name(const char *pattern, const char *label)
{
	char *s = cm_xmalloc(strlen(pattern) + strlen(label) + 1), *o = s;
	for (const char *c = pattern; *c; c++) {
		if (*c != '%') {
			*o++ = *c;
		} else if (*++c == 's') {
			memcpy(o, label, strlen(label));
			o += strlen(label);
		} else {
			*o++ = '%';
		}
	}
	*o = 0;
	return s;
}

/* The most plain bytes a file holds before writing them (output.h): 64
 * files at most, 4 MiB in all.  With the 256 KiB of other outputs, each
 * file grew its buffer to that and held it, with the last bytes of its
 * group, to the end: the plain split of the 200 MB pair peaked at 53 MB
 * against 40 MB so (-j 2), the CPU the same. */
#define SPLIT_BUFFER (64u << 10)

int cm_split_open(const char *pattern, const cm_cpucut *cut, int gzip_level, int jobs, cm_output ***outs,
		  char ***names)
{
	/* gzip: the files' blocks deflated by one crew of -j workers (pgzcrew.h).
	 * A worker a file deflated the file being written, as the CPU trace's
	 * copy goes file by file, on one thread: the gzip split of the 1 GB pair
	 * took 1.74 times the plain merge to one -o FILE.gz, whose blocks
	 * have -j workers, on 16 CPUs. */
	cm_pgz_crew *crew = gzip_level >= 0 && cut->ngroups > 1 ? cm_pgz_crew_new(gzip_level, jobs) : NULL;
	*outs = cm_xcalloc(cut->ngroups, sizeof **outs);
	if (names)
		*names = cm_xcalloc(cut->ngroups, sizeof **names);
	for (size_t g = 0; g < cut->ngroups; g++) {
		char *name = split_name(pattern, cut->groups[g].label);
		/* without a crew, one deflate stream a file on its own thread */
		(*outs)[g] = crew ? cm_output_open_crew(name, crew) : cm_output_open(name, gzip_level, 1);
		if ((*outs)[g])
			cm_output_set_buffer((*outs)[g], SPLIT_BUFFER);
		if (names)
			(*names)[g] = name;
		else
			free(name);
		if (!(*outs)[g]) {
			cm_split_close(*outs, g, names ? *names : NULL, cut->ngroups, 0);
			cm_pgz_crew_drop(crew);
			*outs = NULL;
			if (names)
				*names = NULL;
			return -1;
		}
	}
	cm_pgz_crew_drop(crew); /* the files hold it now */
	return 0;
}

int cm_split_writers(int jobs, size_t n, int gzip)
{
	/* the 1 GB pair's gzip split on 16 CPUs (4 writers): its copy took
	 * 0.43 s against the plain -o FILE.gz's 0.36 s, the copy's pieces
	 * copied into a writer's buffers and then into the crew's blocks */
	return gzip && !getenv("CUPTIMERGE_SPLIT_WRITERS") ? 0 : cm_outq_threads(jobs, n);
}

/* Closing files on threads of their own, in two rounds.  The first
 * finishes each file (cm_output_finish: its last buffer written, its gzip
 * stream ended, its last blocks deflated and written); the second, only
 * when every file was finished, closes and names each, with --sync after
 * an fsync of the file and then of its directory (io/output.c; without
 * --sync nothing is synced); else drops them all.  In one round a file
 * that failed at its end (its last write: a full disk) left the files
 * closed beside it named, a failed run's files on disk.  60 syncs one
 * after the other were 0.32 s of a split of the 200,000-op pair's merge
 * when every close synced (BENCHMARKS.md), the disk idle between them.  A
 * thread takes every CLOSE_THREADS-th file; its error waits in its slot,
 * printed by the caller once all are joined (one line: the first
 * file's). */
#define CLOSE_THREADS 16
struct closer {
	cm_output **outs;
	size_t n, first;
	int close, ok, rc; /* close: the second round, files closed with OK */
	cm_diag_slot diag;
};

/* One closer's files, a round's work on each. */
static void close_files(struct closer *c)
{
	for (size_t g = c->first; g < c->n; g += CLOSE_THREADS)
		if (c->close ? cm_output_close(c->outs[g], c->ok && c->rc == 0) != 0
			     : c->rc == 0 && cm_output_finish(c->outs[g]) != 0)
			c->rc = -1;
}

static void *close_some(void *arg)
{
	struct closer *c = arg;
	cm_diag_defer(&c->diag);
	close_files(c);
	return NULL;
}

/* A round over OUTS[0..N): CLOSE 0 finishes the files, 1 closes them
 * with OK; on threads when OK and there are several.  0, or -1 after a
 * report. */
static int close_round(cm_output **outs, size_t n, int close, int ok)
{
	struct closer c[CLOSE_THREADS];
	pthread_t th[CLOSE_THREADS];
	int started[CLOSE_THREADS] = {0}, rc = 0;
	memset(c, 0, sizeof c);
	for (size_t t = 0; t < CLOSE_THREADS && t < n; t++) {
		c[t] = (struct closer){outs, n, t, close, ok, 0, {0}};
		/* a failed run closes at once: nothing to finish */
		started[t] = ok && n > 1 && pthread_create(&th[t], NULL, close_some, &c[t]) == 0;
		if (!started[t]) {
			cm_diag_slot *was = cm_diag_defer_swap(&c[t].diag);
			close_files(&c[t]);
			cm_diag_defer_swap(was);
		}
	}
	for (size_t t = 0; t < CLOSE_THREADS && t < n; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		if (cm_diag_settle(&c[t].diag) || c[t].rc)
			rc = -1;
	}
	return rc;
}

int cm_split_close(cm_output **outs, size_t n, char **names, size_t nnames, int ok)
{
	int rc = 0;
	if (ok && close_round(outs, n, 0, 1) < 0)
		ok = 0; /* a file could not be finished: none is named */
	if (close_round(outs, n, 1, ok) < 0)
		rc = -1;
	for (size_t g = 0; names && g < nnames; g++)
		free(names[g]);
	free(names);
	free(outs);
	return ok ? rc : -1;
}

/* A file's repair stage as the taker of the thread rows its GPU metadata
 * names (cm_gpu_each_named_thread). */
static void repair_named(void *ctx, int64_t pid, int64_t tid) { cm_repair_named(ctx, pid, tid); }

int cm_msplit_plan(cm_msplit *s, int jobs, cm_repair *(*new_repair)(void *), void *rctx)
{
	const cm_cpucut *cut = s->cut;
	size_t n = cut->ngroups;
	s->n = n;
	s->lo = cm_xmalloc(n * sizeof *s->lo);
	s->hi = cm_xmalloc(n * sizeof *s->hi);
	s->min_ts = cm_xmalloc(n * sizeof *s->min_ts);
	s->max_end = cm_xmalloc(n * sizeof *s->max_end);
	s->eo = cm_xcalloc(n, sizeof *s->eo);
	for (size_t k = 0; k < n; k++) {
		s->lo[k] = cut->groups[k].lo;
		s->hi[k] = cut->groups[k].hi;
	}
	if (new_repair) {
		s->repair = cm_xcalloc(n, sizeof *s->repair);
		for (size_t k = 0; k < n; k++)
			s->repair[k] = new_repair(rctx);
	}
	s->route.writers = cm_split_writers(jobs, n, s->gzip); /* made at the first write (cpuroute.c) */
	if (cm_gpu_split(s->gpu, s->lo, s->hi, n, jobs) < 0)
		return -1;
	for (size_t k = 0; s->repair && k < n; k++)
		cm_gpu_split_set_remap_ctx(s->gpu, (int)k, s->repair[k]);
	/* the groups side by side, each on one thread */
	if (cm_gpu_split_plan(s->gpu, jobs) < 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		double wmin, wmax;
		if (cm_gpu_split_select(s->gpu, (int)k) < 0)
			return -1;
		cm_gpu_extent(s->gpu, &wmin, &wmax);
		/* the window's part of the file's profiler span (the CPU events'
		 * is known once copied: cm_msplit_append) */
		s->min_ts[k] = wmin;
		s->max_end[k] = wmax;
		if (s->repair)
			cm_gpu_each_named_thread(s->gpu, repair_named, s->repair[k]);
	}
	cm_gpu_split_totals(s->gpu);
	cm_gpu_split_stats(s->gpu, &s->st);
	return 0;
}

/* Before group K's own bytes: what all files share so far, and the runs
 * of CPU events pending.  Its evout, its "first" as the route knows it. */
static cm_evout *group_begin(cm_msplit *s, size_t k)
{
	cm_evout *eo = &s->eo[k];
	eo->out = s->outs[k];
	eo->first = !s->route.next[k];
	return eo;
}

/* After group K's own bytes: the next CPU event gets a comma of its own
 * when something went out (never joined to a separator before it).  The
 * bytes go out here when DIRECT, else through the writer threads when
 * there are any.  A file's bytes are written here (DIRECT, and by the
 * evout itself: cm_evout_next of more than a MiB, the spans' render) only
 * while its writer holds none of them: after cm_outq_sync, until more
 * are queued.  (Through the writer, the metadata and the spans of all 60
 * files each took a file's buffer, held to the end: 15 MB.) */
static int group_end(cm_msplit *s, size_t k, int direct)
{
	cm_evout *eo = &s->eo[k];
	cm_outq *q = direct ? NULL : cm_cpuroute_queue(&s->route);
	int rc;
	if (!eo->first)
		s->route.next[k] = UINT64_MAX;
	if (!q)
		return cm_evout_flush(eo);
	rc = eo->buf.len ? cm_outq_write(q, k, eo->buf.p, eo->buf.len) : 0;
	eo->buf.len = 0;
	return rc;
}

/* Everything the writer threads hold written (before bytes written here).
 * 0 or -1. */
static int sync_all(cm_msplit *s)
{
	return s->route.q ? cm_outq_sync(s->route.q) : 0;
}

/* Flush what is pending before a group's own bytes (the shared text, the
 * CPU events' pieces), all of it written.  0 or -1. */
static int shared_flush(cm_msplit *s, cm_evout *shared)
{
	if (sync_all(s) < 0 || cm_evout_flush(shared) < 0 || cm_cpuroute_flush(&s->route) < 0)
		return -1;
	return sync_all(s);
}

int cm_msplit_insert(cm_msplit *s, cm_evout *shared)
{
	if (shared_flush(s, shared) < 0)
		return -1;
	for (size_t k = 0; k < s->n; k++) {
		cm_evout *eo = group_begin(s, k);
		if (cm_gpu_split_select(s->gpu, (int)k) < 0 || cm_gpu_write_metadata(s->gpu, eo) < 0 ||
		    group_end(s, k, 1) < 0)
			return -1;
	}
	return cm_gpu_split_select(s->gpu, -1);
}

int cm_span_events(cm_evout *eo, double min_ts, double max_end)
{
	cm_buf *b = &eo->buf;
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\","
		      "\"tid\":\"PyTorch Profiler\",\"ts\":");
	cm_jw_double(b, min_ts);
	cm_buf_lit(b, ",\"dur\":");
	cm_jw_double(b, cm_py_max(max_end - min_ts, 0.0));
	cm_buf_lit(b, ",\"args\":{\"Op count\":0}}");
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Iteration Start: PyTorch Profiler\","
		      "\"pid\":\"Traces\",\"tid\":\"Trace PyTorch Profiler\",\"ts\":");
	cm_jw_double(b, min_ts);
	cm_buf_putc(b, '}');
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\",\"pid\":\"\",\"tid\":\"\",\"ts\":");
	cm_jw_double(b, max_end + 0.001);
	cm_buf_putc(b, '}');
	return 0;
}

/* The end of file K after its spans, EO its writer: the profiler span
 * events, and the bytes out, to file K itself (the writer threads are
 * idle).  On the spans' threads (cm_gpu_split_write_spans), a file each:
 * it touches only file K's.  0, or -1 after a report. */
static int file_end(void *ctx, size_t k, cm_evout *eo)
{
	cm_msplit *s = ctx;
	return cm_span_events(eo, s->min_ts[k], s->max_end[k]) < 0 || group_end(s, k, 1) < 0 ? -1 : 0;
}

int cm_msplit_append(cm_msplit *s, cm_evout *shared, int render_jobs)
{
	/* the profiler span of --steps: the kept CPU X events' (found as they
	 * were copied, cpucut.c), then the window's */
	for (size_t k = 0; k < s->n; k++) {
		s->min_ts[k] = cm_py_min(s->cut->group_min[k], s->min_ts[k]);
		s->max_end[k] = cm_py_max(s->cut->group_max[k], s->max_end[k]);
	}
	if (shared_flush(s, shared) < 0)
		return -1;
	/* the window's events of every file in one walk (the files are apart,
	 * so each gets its own in order whatever comes between), but with -t,
	 * where each file's repair stage moves its own rows */
	for (size_t k = 0; !s->repair && k < s->n; k++)
		group_begin(s, k);
	if (!s->repair && cm_gpu_split_write_events(s->gpu, s->eo, cm_cpuroute_queue(&s->route), render_jobs) < 0)
		return -1;
	/* the rest of each file partly written here (the spans' render) */
	if (sync_all(s) < 0)
		return -1;
	s->ends_s = cm_now_s();
	if (!s->repair) { /* the files side by side */
		int rc = cm_gpu_split_write_spans(s->gpu, s->eo, render_jobs, file_end, s);
		s->ends_s = cm_now_s() - s->ends_s;
		return rc;
	}
	for (size_t k = 0; k < s->n; k++) {
		cm_evout *eo = s->repair ? group_begin(s, k) : &s->eo[k];
		if (cm_gpu_split_select(s->gpu, (int)k) < 0 ||
		    (s->repair && cm_gpu_write_events(s->gpu, eo, render_jobs) < 0) ||
		    cm_gpu_write_spans(s->gpu, eo, render_jobs) < 0 ||
		    (s->repair && cm_repair_write_metadata(s->repair[k], eo) < 0) ||
		    cm_span_events(eo, s->min_ts[k], s->max_end[k]) < 0 || group_end(s, k, 1) < 0)
			return -1;
	}
	s->ends_s = cm_now_s() - s->ends_s;
	return cm_gpu_split_select(s->gpu, -1);
}

int cm_msplit_element(cm_msplit *s, const char *text, size_t len, cm_evout *shared)
{
	if (s->route.q ? cm_cpuroute_shared(&s->route) < 0 : cm_evout_flush(shared) < 0)
		return -1;
	for (int k = s->cut->ga; k <= s->cut->gb; k++) {
		cm_evout *eo = group_begin(s, (size_t)k);
		if (cm_repair_write_text(s->repair ? s->repair[k] : NULL, s->arena, text, len, eo) < 0 ||
		    group_end(s, (size_t)k, 0) < 0)
			return -1;
	}
	return 0;
}

void cm_msplit_verbose(const cm_msplit *s)
{
	const struct cm_gpu_split_stats *st = &s->st;
	cm_warn(NULL, -1,
		"split: plan: the API calls' groups %.3f s (%.3f s of CPU), the records dealt %.3f s (%.3f s of "
		"CPU; their fold, in order, %.3f s), the groups planned %.3f s (%.3f s of CPU); the files' "
		"spans and ends %.3f s",
		st->marks, st->marks_cpu, st->deal, st->deal_cpu, st->fold, st->groups, st->groups_cpu, s->ends_s);
	if (s->gzip) {
		/* the gzip files' compressor threads (pgzcrew.c's crew): whether
		 * they kept up, and what their writes cost them */
		struct cm_pgz_crew_stats cs;
		cm_pgz_crew_stats(&cs);
		if (cs.threads)
			cm_warn(NULL, -1,
				"split: gzip: %d compressor threads deflated %llu blocks, busy %.2f s and writing "
				"%.2f s, idle %.2f s; the threads feeding them waited %.2f s for a free thread and "
				"%.2f s for a file's blocks to be written",
				cs.threads, (unsigned long long)cs.blocks, cs.busy, cs.writing, cs.idle, cs.room,
				cs.slots);
	}
}

void cm_msplit_report(const cm_msplit *s)
{
	for (size_t k = 0; s->repair && k < s->n; k++)
		cm_repair_report(s->repair[k]);
}

int cm_msplit_finish(cm_msplit *s, int ok)
{
	int rc = cm_outq_free(s->route.q, ok);
	s->route.q = NULL;
	return rc;
}

void cm_msplit_free(cm_msplit *s)
{
	cm_outq_free(s->route.q, 0);
	for (size_t k = 0; s->repair && k < s->n; k++)
		cm_repair_free(s->repair[k]);
	for (size_t k = 0; s->eo && k < s->n; k++)
		cm_buf_free(&s->eo[k].buf);
	free(s->repair);
	free(s->eo);
	free(s->lo);
	free(s->hi);
	free(s->min_ts);
	free(s->max_end);
	cm_arena_free(s->arena);
	memset(s, 0, sizeof *s);
}
