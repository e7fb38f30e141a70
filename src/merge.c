/* merge.c - the engine: the window and the CPU trace, each parsed once, then the output.
 *
 * Design.  The reference merge loads both documents and edits a list; we
 * stream them, so the question is what must be known before each byte goes
 * out.  The output is the CPU trace with, in this order: its leading run of
 * "M" events, the GPU metadata, its other events, the window's events, the
 * gpu_user_annotation spans and three re-made profiler span events.  The GPU
 * metadata comes first but depends on everything: the thread rows of API
 * records are resolved through External ids that may sit anywhere in the CPU
 * trace, through correlation records anywhere in the window, and through the
 * window's thread_resource_map, which a streaming writer puts last.  So the
 * work goes in three phases:
 *
 *   1  both inputs are read side by side, each parsed once:
 *      W  the window (gpu/window.c): a splitter thread cuts "events" into
 *         batches, runs of events in the read chunks themselves (it finds
 *         where each ends and copies none: json/docsplit.c), workers
 *         check each event (json/jvalid.c),
 *         parse it and digest it into a typed record (gpu/gpurec.h) with every
 *         field the rules read already converted and checked; the records go
 *         to a temporary file, the external correlations to another;
 *      C1 the CPU trace (cpu/cpuscan.c, cpuparallel.c): the same cutting, workers check
 *         and replay each event in one pass (json/jvalid.c) into the scan's
 *         callbacks: base time, extent, dropped events, and the External-id
 *         candidates on disk;
 *      on a wide machine the two readers' workers are one crew (base/opool.h:
 *      a worker takes the block cut first, of either input: read_crew);
 *   2  the joins, on tables indexed by id (base/idmap.h: arrays in a mapped
 *      temporary file for ids that are counters, as CUPTI's and torch's are),
 *      each on several threads: External id -> CPU thread (cpu/cpuindex.c,
 *      the candidates), correlation -> thread and -> annotation
 *      (the annotations' ids, one External id in twelve, get tables packed
 *      over the set of them, an entry an annotation);
 *      then the plan reads the records (not JSON) for the rows, the time
 *      extent and the spans (for a window of version 2 also the operator
 *      and the user annotation of the CPU trace each API call was made in,
 *      and then, in a second walk, the spans Kineto draws of those
 *      annotations: gpu/gpuanns.c); crosscheck.c judges whether the two
 *      belong together;
 *   --  all input has now been read and checked: an error stops here, before
 *       a byte is written, so a bad input never leaves half a trace;
 *   3  the output: the CPU trace's text copied (cpu/cpucopy.c: the one pass
 *      that reads it again, as bytes, not parsed, by the layout the first
 *      phase's splitter noted of it, each top-level key and value and each
 *      event, whichever scan read it: json/doclayout.h) with the metadata
 *      spliced in; the events past the metadata in parts on threads, each
 *      read at its offset (cpu/cpucopypar.c, by the layout's marks);
 *      then worker threads render the records to text in window order
 *      (base/opool.c); then the spans and the span events; gzip output is
 *      deflated in blocks on the same number of threads (io/pgzip.c).  (The
 *      records were once rendered into a spool beside the copy; once the
 *      copy no longer parsed, writing the spool and reading it back cost more
 *      than the overlap gained.)
 *
 * The fast readers judge nothing they cannot judge exactly: a document whose
 * top level, element or member they will not take (bad JSON, a bad shape) is
 * read again from the start by the careful yajl reader (json/docread.c,
 * json/saxread.c), which finds the same fault and names its byte offset.
 * Worker threads never print: a block's error is held and printed by the
 * reading thread when the block's turn comes, once.
 *
 * Memory is the id tables (held in memory when a run's fit in --memory,
 * else file pages that are dropped when they pass what the rest leaves of
 * it: base/idmap.c), the rows, the annotation names and spans, a bounded
 * number of batches in flight (each holding its read chunk), and two
 * chunks an input read ahead
 * (io/inputahead.c: the read(2) copies off the cutting threads); never a
 * document or a record list.  So a run whose tables are in files stays
 * within about --memory, however large its inputs.
 * A pipe is spooled to $TMPDIR as it is read (io/inputraw.c): the CPU trace is
 * read twice (scanned, then copied), the window a second time only when the
 * careful reader has to explain it.  Times: the window's are unix-epoch ns and
 * become (t - baseTimeNanoseconds) / 1000.0 us, computed exactly as Python
 * does (jwrite.h); the CPU trace's numbers are never re-rounded: they are
 * copied. */
#include "config.h"
#include "merge.h"
#include "cpu/cpucopy.h"
#include "cpu/cpucut.h"
#include "cpu/cpuindex.h"
#include "cpu/cpuscan.h"
#include "crosscheck.h"
#include "base/diag.h"
#include "base/idmap.h"
#include "base/exitcode.h"
#include "gpu/gpuconv.h"
#include "io/input.h"
#include "io/output.h"
#include "json/evout.h"
#include "io/pgzip.h"
#include "repair/repair.h"
#include "repair/repairpass.h"
#include "filter.h"
#include "mergesplit.h"
#include "mergepft.h"
#include "repair/threadmap.h"
#include "gpu/window.h"
#include "json/docsplit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
	cm_cpucut cut;      /* --steps, --range, --split: the CPU side's cut (cpucut.h) */
	cm_msplit split;    /* --split: the files and each one's GPU side (mergesplit.h) */
	const cm_threadmap *map; /* -t */
	cm_int base_ns;     /* the base time, once known (the split's repair stages take it) */
	double min_ts, max_end;
	cm_repair *repair;  /* -t: the thread-repair stage, or NULL */
	cm_arena *arena;    /* repair: the CPU event being looked at */
	int c1_rc;          /* result of the CPU scan */
	int c1_done;        /* ... set (atomic) when it ran on the second thread and ended */
	int win_careful;    /* the window was read again by the careful reader */
	cm_diag_slot c1_diag; /* its error, when it ran on the second thread */
	/* when each step ended, for -v (seconds since the start) */
	double t0, t_window, t_cpu, t_linked, t_indexed, t_joins, t_plan, t_copied, t_render;
	/* and the CPU seconds of all threads by then, from both reads' end on */
	double c_read, c_linked, c_indexed, c_joins, c_plan, c_copied, c_render;
	/* and how the first phase's threads spent it (-v) */
	cm_opool_stats win_stats;
	double win_waited, cpu_waited; /* the cutting threads waited for their reads */
	cm_ocrew *crew;     /* the read workers both readers share (read_crew), or NULL */
	int crew_n;         /* its workers, and the time they waited for a block (-v) */
	double crew_idle;
	uint64_t copy_parts; /* the parts the CPU trace's events were copied in (cpucopypar.c), */
	int copy_threads;    /* ... on how many threads */
};

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

/* How many threads each step takes of the JOBS it may use.  The first
 * phase: each reader has its own thread that cuts its input, and workers
 * that parse the pieces.  With one job each reader parses in its own
 * thread.  With 2 or 3, the CPU trace still does, and the window, which is
 * larger and costs more a byte, gets two workers: with one, it went on
 * alone on one core for the last 1.8 s of the 1 GB pair's read once the
 * CPU trace was done (2 cores: the read ended at 3.2 s instead of 4.0).
 * Beyond, the CPU trace gets two workers in five (two at least) and the
 * window one a job, as long as the workers leave the CPUs room for the
 * cutting threads: more threads than CPUs slow them down:
 * the scheduler gives each runnable thread its share, and a cutting thread
 * that loses its CPU for a while stops all its workers.  On the 16-core
 * machine (1 GB pair) 16 window workers and 6 of the CPU trace's, beside
 * the two cutting threads and their read-ahead threads, read the window
 * in 0.90-0.99 s, its cutting thread working 0.71-0.80 s of it where its
 * cutting took 0.41-0.45 s of CPU; at -j 8 (13 threads on 16 CPUs) the
 * window took 0.52 s, its cutting thread working 0.49 s.  So when the
 * workers would be more than the CPUs this process may run on less two
 * (the cutting threads), they are that many, seven in ten for the window:
 * its workers are busy about 2.2 times the CPU trace's (6.5 s against
 * 2.9 s at -j 16), so an even split left the window's read going on alone
 * after the CPU trace's was done.  On the 16-core machine (1 GB pair, one
 * call, rows taking turns, 2026-12-03 23:00 UTC) 10 and 4 took 1.44-1.50 s
 * against 1.52-1.64 for 16 and 6 and 1.67-1.87 for 7 and 6 (an even split
 * of 13; an earlier call on another of those machines had 7 and 6 at
 * 1.35-1.38 s against 1.51-1.68: machines differ, the same call decides).
 * Taking jobs rather than CPUs as the bound was worse where jobs are fewer
 * than the CPUs: -j 8 with 3 and 3 took 3.03 s where 8 and 3 took 2.00,
 * -j 12 with 5 and 5 2.02 s against 1.65.  The testing aid
 * CUPTIMERGE_READ_WORKERS
 * (W,C) sets both, for measuring other splits with one binary.  The pools
 * of the later steps come one at a time and take every job.  Measured on
 * that machine
 * with the 1 GB pair: 16 threads render it in 0.35 s where 8 took 0.5
 * (since the workers write the output, opool.c), for 10 MB more peak
 * memory; 16 plan it in 0.10-0.11 s where 8 took 0.12-0.15, and apply the
 * index in 0.02 s against 0.035 (run AE), for 2-3 MB.  Every pool keeps
 * its blocks in memory, so a thread that gains no time only costs memory. */
#define READ_THREADS_MAX 16
#define PLAN_THREADS_MAX 16
#define RENDER_THREADS_MAX 16
static int read_jobs(int jobs) { return jobs < READ_THREADS_MAX ? jobs : READ_THREADS_MAX; }
/* CUPTIMERGE_READ_WORKERS "W,C": the window's and the CPU trace's workers
 * (each 1 to READ_THREADS_MAX), or 0 when unset or not of that form. */
static int read_workers_env(int which)
{
	const char *e = getenv("CUPTIMERGE_READ_WORKERS");
	int w, c;
	char end;
	if (!e || sscanf(e, "%d,%d%c", &w, &c, &end) != 2 || w < 1 || c < 1 || w > READ_THREADS_MAX ||
	    c > READ_THREADS_MAX)
		return 0;
	return which ? c : w;
}
/* The workers of each reader by the rule for JOBS alone (see above). */
static int window_by_jobs(int jobs) { return jobs <= 3 ? (jobs > 1 ? 2 : 1) : jobs; }
static int cpu_by_jobs(int jobs)
{
	int two_in_five = jobs - (3 * jobs + 4) / 5;
	return jobs <= 3 ? 1 : two_in_five > 2 ? two_in_five : 2;
}
/* From 4 jobs on, the workers of both readers together when those would
 * crowd out the cutting threads (see above), else 0. */
static int read_pool(int jobs)
{
	int room = cm_opool_cpus_available() - 2;
	if (room < 3) /* on few CPUs: as with 2 or 3 jobs, two for the window, one for the CPU trace */
		room = 3;
	return jobs >= 4 && window_by_jobs(jobs) + cpu_by_jobs(jobs) > room ? room : 0;
}
/* The CPU trace's share of a POOL of read workers: three in ten, one at
 * least (see above). */
static int cpu_share(int pool)
{
	int c = (3 * pool + 5) / 10;
	return c > 0 ? c : 1;
}
static int window_workers(int jobs)
{
	if (read_workers_env(0))
		return read_workers_env(0);
	jobs = read_jobs(jobs);
	if (read_pool(jobs))
		return read_pool(jobs) - cpu_share(read_pool(jobs));
	return window_by_jobs(jobs);
}
static int cpu_workers(int jobs)
{
	if (read_workers_env(1))
		return read_workers_env(1);
	jobs = read_jobs(jobs);
	if (read_pool(jobs))
		return cpu_share(read_pool(jobs));
	return cpu_by_jobs(jobs);
}
/* From 4 jobs on, the two readers' workers are one crew (opool.h), as
 * many as the rules above give both: each worker takes the block cut
 * first, of either input, so the split no longer has to guess how the
 * work divides (on the 16-core machine the 10 + 4 split's window workers
 * idled 2.3 s while the CPU trace's cutting thread waited 0.5 s for its 4
 * busy ones, 1 GB pair, -j 16).  On that machine (one call, rows taking
 * turns) the crew of 14 read the pair in 0.68-0.69 s and merged it in
 * 1.23-1.26 s, against 0.85-0.88 and 1.41-1.47 s for the pools apart
 * (10 + 4); crews of 12 and 16 took 1.31-1.38 and 1.45-1.47 s: 12 leave
 * the workers short, 16 take the cutting threads' CPUs.  Not where the
 * CPU trace would have one
 * worker (on 6 CPUs or fewer): that one runs in its cutting thread, with
 * no hand-over, and a crew would only add a thread to too many (on 2
 * CPUs, -j 16, the 200 MB pair took 1.76-2.19 CPU-s against 1.67-1.86).
 * The testing aid CUPTIMERGE_READ_WORKERS "W,C" keeps the two pools
 * apart; "N" makes the crew N. */
static int read_crew(int jobs)
{
	const char *e = getenv("CUPTIMERGE_READ_WORKERS");
	int n;
	char end;
	if (e && sscanf(e, "%d%c", &n, &end) == 1 && n >= 1 && n <= 2 * READ_THREADS_MAX)
		return n;
	if (read_workers_env(0) || read_jobs(jobs) < 4 || cpu_workers(jobs) < 2)
		return 0;
	return window_workers(jobs) + cpu_workers(jobs);
}
/* With 2 or 3 jobs the window's cutting thread parses too (opool.h), when
 * it would wait for a free slot: a thread that only cut, beside two
 * parsers and the CPU trace's reader, made four on two cores, and the read
 * took 0.82 s of the 500 MB pair where one job a reader took 0.75. */
static int window_caller_helps(int jobs) { return read_jobs(jobs) <= 3; }
static int plan_threads(int jobs) { return jobs < PLAN_THREADS_MAX ? jobs : PLAN_THREADS_MAX; }
/* The copy of the CPU trace's events (cpu/cpucopypar.c): a thread a job.
 * Its parts cost less CPU than the walk on one thread with its read-ahead
 * thread (on 2 cores, 200 MB pair, -j 2, three rounds taking turns:
 * 0.04-0.06 CPU-s against 0.08-0.11; read(2) or mapped chunks handed
 * between threads, against a pread into the buffer that goes out).  The
 * testing aid CUPTIMERGE_COPY_THREADS sets it (1: the walk alone). */
static int copy_threads(int jobs) { return plan_threads(jobs); }
/* With -o FILE.gz the deflate workers (io/pgzip.c, one a job) cost several
 * times what the render does a byte at zlib's levels: the render takes half
 * the jobs, so that it does not crowd them out.  ISA-L's deflate (levels
 * 1-3, the default among them, where the build has it) costs far less, and
 * the render keeps every job (on 2 cores that took the 500 MB pair's
 * -o .gz from 2.00 to 1.84 s). */
static int render_threads(const struct cm_options *opt)
{
	const char *version;
	int zlib = opt->gzip_level >= 0 && strcmp(cm_pgz_engine(opt->gzip_level, &version), "ISA-L") != 0;
	int jobs = zlib ? (opt->jobs + 1) / 2 : opt->jobs;
	return jobs < RENDER_THREADS_MAX ? jobs : RENDER_THREADS_MAX;
}

/* The chunks in each input's read-ahead ring (io/inputahead.c): two, one chunk
 * read ahead of the one handed out.  On 16 CPUs (1 GB pair) the window's
 * cutting thread waited 0.11-0.12 s of its 0.65 s read for its reads, the
 * CPU trace's 0.08-0.09 s; rings of 4 and 8 (three and seven chunks
 * ahead) cut those waits to 0.07-0.08 and 0.05 s, but not the read's
 * time nor the run's (one call, two rounds taking turns: 2 slots 1.02,
 * 1.09 s; 4: 1.12, 1.11, 1.00; 8: 1.06, 1.12), for 2.5 and 6.5 MB more
 * peak RSS (bench/dev-eng8.sh, 2026-12-04).  The testing aid
 * CUPTIMERGE_READAHEAD_SLOTS measures them. */
#define READAHEAD_SLOTS 2

/* Whether the inputs read ahead (io/inputahead.c): with a second job, the
 * read(2) copies leave the threads that cut the inputs, which the first
 * phase waits on.  Not for chunks under 64 KiB (the testing aid that reads
 * a byte or a few at a time): a hand-over between threads a chunk would
 * cost more than the chunk, and the chunks are the same with it or not. */
static int readahead(const struct cm_options *opt)
{
	if (opt->readahead >= 0)
		return opt->readahead;
	return opt->jobs > 1 && opt->bufsize >= (64u << 10) ? READAHEAD_SLOTS : 0;
}

/* The repair stage as the GPU stage's thread-id remap (cm_gpu_tid_remap),
 * and as the taker of the thread rows its metadata names. */
static int repair_tid(void *ctx, int64_t pid, int64_t tid, double abs_ns, int count, int64_t *out)
{
	return cm_repair_tid(ctx, pid, tid, 1, abs_ns, count, out);
}
static void repair_named(void *ctx, int64_t pid, int64_t tid) { cm_repair_named(ctx, pid, tid); }

/* The CPU seconds of all the process's threads so far (-v). */

/* The window's conversion as this run sets it up (made again when the
 * careful reader reads the window from the start). */
static cm_gpu *new_gpu(struct merge *m)
{
	cm_gpu *g = cm_gpu_new(cm_input_name(m->win));
	cm_gpu_set_join_threads(g, plan_threads(m->opt->jobs));
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
	int n = m->crew ? cm_ocrew_workers(m->crew) : window_workers(m->opt->jobs), rc;
	cm_gpu_digest **d = cm_xcalloc((size_t)n, sizeof *d);
	cm_window_psink ps = {w_batch_event, w_collect, w_member, w_member_text, m, (void **)d, n,
			      !m->crew && window_caller_helps(m->opt->jobs), &m->win_stats, m->crew};
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
		m->gpu = new_gpu(m);
		rc = cm_window_read(m->win, &sink, "reading the window", trace_events);
	}
	return rc < 0 ? -1 : cm_gpu_digest_finish(m->gpu);
}

/* Hook: the GPU metadata at the insertion point. */
static int hook_insert(void *ctx, cm_evout *eo)
{
	return cm_gpu_write_metadata(((struct merge *)ctx)->gpu, eo);
}

/* Hook: after the CPU events: the window's events, the spans, and the
 * profiler span events. */
static int hook_append(void *ctx, cm_evout *eo)
{
	struct merge *m = ctx;
	m->t_copied = cm_now_s() - m->t0;
	m->c_copied = cm_process_cpu_s();
	/* to a .pftrace, the window's events go to the transcoder as batches
	 * (mergepft.c), but not with a repair's remap (rendered on one thread) */
	if ((!m->repair && cm_mergepft_applies(eo) ? cm_mergepft_events(m->gpu, eo, render_threads(m->opt))
						   : cm_gpu_write_events(m->gpu, eo, render_threads(m->opt))) < 0)
		return -1;
	m->t_render = cm_now_s() - m->t0;
	m->c_render = cm_process_cpu_s();
	if (cm_gpu_write_spans(m->gpu, eo, render_threads(m->opt)) < 0)
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
	rc = cm_msplit_append(&m->split, eo, render_threads(m->opt));
	m->t_render = cm_now_s() - m->t0;
	m->c_render = cm_process_cpu_s();
	return rc;
}
static int split_element(void *ctx, const char *text, size_t len, cm_evout *eo)
{
	return cm_msplit_element(&((struct merge *)ctx)->split, text, len, eo);
}
static cm_repair *split_repair(void *ctx)
{
	struct merge *m = ctx;
	cm_repair *r = cm_repair_new(m->map);
	cm_repair_set_base(r, m->base_ns);
	return r;
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
		m->c1_rc = cm_cpuscan_run_cut(m->cpu, &m->plan, m->opt->careful ? 0 : cpu_workers(m->opt->jobs), cut);
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
static int prepare(struct merge *m)
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

	if (!opt->careful && read_crew(opt->jobs))
		m->crew = cm_ocrew_new(read_crew(opt->jobs));
	threaded = pthread_create(&th, NULL, c1_thread, m) == 0;

	/* one progress line for the run: the window's read, then the copy of
	 * the CPU trace (the CPU trace's read runs beside the window's) */
	if (cm_input_raw_size(m->win) && cm_input_raw_size(m->cpu)) {
		cm_progress_job(cm_input_raw_size(m->win) + cm_input_raw_size(m->cpu));
		cm_progress_stage(0, cm_input_raw_size(m->win));
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
				   plan_threads(m->opt->jobs)) < 0 ||
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
	if (opt->split_n) {
		/* --split: the records dealt to the files' groups, each planned */
		m->split.gpu = m->gpu;
		m->split.cut = &m->cut;
		m->split.gzip = m->opt->gzip_level >= 0;
		m->base_ns = base;
		if (cm_msplit_plan(&m->split, plan_threads(opt->jobs), m->repair ? split_repair : NULL, m) < 0)
			return cm_diag_status();
	} else if (opt->cut ? cm_gpu_cut_span(m->gpu, m->cut.lo, m->cut.hi) < 0
			    : cm_gpu_cut_span(m->gpu, cm_py_min(m->plan.min_ts, m->plan.prof_min_ts),
					      cm_py_max(m->plan.max_end, m->plan.prof_max_end)) < 0) {
		return cm_diag_status();
	} else if (cm_gpu_plan(m->gpu, plan_threads(opt->jobs)) < 0) {
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

/* For -v: how long a reader's cutting thread worked of the READ seconds its
 * input took (from the start): what it did not spend waiting for a slot
 * (SLOT) or for its chunks (READS).  It cut the whole time, or parsed where
 * it helps its workers (window_caller_helps); a thread that worked nearly
 * all of READ set the read's pace (issue 30: 1.3 GB/s of window). */
static double worked(double read, double slot, double reads)
{
	double w = read - slot - reads;
	return w > 0 ? w : 0;
}

/* -v: what the merge did and where its time went, on stderr (silenced by
 * -q, as warnings are): one line of counts and tables, one of the cut, one
 * of times, one of the first phase's threads. */
static void report(const struct merge *m)
{
	struct cm_gpu_stats st;
	uint64_t in_memory, in_files, dropped;
	char tables[128];
	cm_gpu_stats(m->gpu, &st);
	cm_idmap_table_bytes(&in_memory, &in_files, &dropped);
	if (st.dense_tables)
		snprintf(tables, sizeof tables,
			 "arrays, %.1f MB in memory and %.1f MB in $TMPDIR (their pages dropped %llu times)",
			 (double)in_memory / 1e6, (double)in_files / 1e6, (unsigned long long)dropped);
	else
		snprintf(tables, sizeof tables, "hash maps");
	cm_warn(NULL, -1,
		"merged %llu window events into %llu CPU events: %llu external correlations, "
		"%llu External ids found in the CPU trace, %llu correlations linked to CPU threads; "
		"tables: External id index %.1f MB, correlation links, rows and spans %.1f MB; "
		"read by: window %s, CPU trace %s; id tables: %s",
		(unsigned long long)st.events, (unsigned long long)m->plan.events, (unsigned long long)st.pairs,
		(unsigned long long)st.linked_ext, (unsigned long long)st.linked_corr,
		(double)st.index_bytes / 1e6, (double)st.table_bytes / 1e6,
		m->win_careful ? "careful" : "parallel", m->plan.careful ? "careful" : "parallel",
		tables);
	if (m->opt->split_n)
		cm_msplit_verbose(&m->split);
	if (m->opt->cut)
		cm_warn(NULL, -1, "cut to %.3f-%.3f us: %llu CPU events kept, %llu cut", m->cut.lo, m->cut.hi,
			(unsigned long long)m->cut.kept, (unsigned long long)m->cut.cut);
	/* where the time went: the steps of the design essay, as seconds
	 * since the start when each ended */
	cm_warn(NULL, -1,
		"time: window read %.2f s, CPU trace read %.2f s, joins %.2f s (External ids linked %.2f s, "
		"index applied %.2f s), plan %.2f s, CPU events copied %.2f s, window events rendered %.2f s, "
		"output done %.2f s",
		m->t_window, m->t_cpu, m->t_joins, m->t_linked, m->t_indexed, m->t_plan, m->t_copied, m->t_render,
		cm_now_s() - m->t0);
	/* the steps after the read in CPU seconds, all threads together:
	 * against the wall time a step took, how many threads it kept busy
	 * (a step that took as much CPU as wall time ran on one) */
	cm_warn(NULL, -1,
		"CPU after the read: External ids linked %.2f s, index applied %.2f s, the rest of the joins %.2f s, "
		"plan %.2f s, CPU events copied %.2f s, window events rendered %.2f s, the rest %.2f s",
		m->c_linked - m->c_read, m->c_indexed - m->c_linked, m->c_joins - m->c_indexed, m->c_plan - m->c_joins,
		m->c_copied - m->c_plan, m->c_render - m->c_copied, cm_process_cpu_s() - m->c_render);
	/* the copy: on how many threads, in how many parts (cpucopypar.c) */
	cm_warn(NULL, -1, "copy: the CPU trace's events in %llu parts on %d threads",
		(unsigned long long)m->copy_parts, m->copy_parts ? m->copy_threads : 1);
	/* the first phase's threads, summed: a cutting thread that waited
	 * for slots had workers (or the results' sink) behind it; idle
	 * workers had the cutting thread behind them; a cutting thread
	 * that waited for its chunks had the reads behind it */
	if (!m->win_careful && !m->plan.careful && m->crew_n)
		cm_warn(NULL, -1,
			"threads: %d read workers shared by both inputs, idle %.2f s; window: %llu blocks, workers "
			"busy %.2f s, results handed on %.2f s, the cutting thread waited %.2f s for a slot and "
			"%.2f s for its reads and worked %.2f s; CPU trace: %llu blocks, workers busy %.2f s, "
			"results handed on %.2f s, the cutting thread waited %.2f s for a slot and %.2f s for its "
			"reads and worked %.2f s",
			m->crew_n, m->crew_idle, (unsigned long long)m->win_stats.blocks, m->win_stats.busy,
			m->win_stats.sink, m->win_stats.waited, m->win_waited,
			worked(m->t_window, m->win_stats.waited, m->win_waited),
			(unsigned long long)m->plan.read_stats.blocks, m->plan.read_stats.busy,
			m->plan.read_stats.sink, m->plan.read_stats.waited, m->cpu_waited,
			worked(m->t_cpu, m->plan.read_stats.waited, m->cpu_waited));
	else if (!m->win_careful && !m->plan.careful)
		cm_warn(NULL, -1,
			"threads: window: %llu blocks, workers busy %.2f s and idle %.2f s, results handed on "
			"%.2f s, the cutting thread waited %.2f s for a slot and %.2f s for its reads and worked "
			"%.2f s; CPU trace: %llu blocks, workers busy %.2f s and idle %.2f s, results handed on "
			"%.2f s, the cutting thread waited %.2f s for a slot and %.2f s for its reads and worked "
			"%.2f s",
			(unsigned long long)m->win_stats.blocks, m->win_stats.busy, m->win_stats.idle,
			m->win_stats.sink, m->win_stats.waited, m->win_waited,
			worked(m->t_window, m->win_stats.waited, m->win_waited),
			(unsigned long long)m->plan.read_stats.blocks, m->plan.read_stats.busy,
			m->plan.read_stats.idle, m->plan.read_stats.sink, m->plan.read_stats.waited, m->cpu_waited,
			worked(m->t_cpu, m->plan.read_stats.waited, m->cpu_waited));
	/* how fast each cutting thread cut, in its own CPU time (not the
	 * sink's, which may parse): the read cannot go faster (issue 30) */
	if (!m->win_careful && !m->plan.careful && m->win_stats.cut > 0 && m->plan.read_stats.cut > 0)
		cm_warn(NULL, -1,
			"cut: window %.2f GB in %.2f s of its cutting thread's CPU (%.2f GB/s; the thread ran %.2f s "
			"of CPU in all and lost its CPU %llu times while it could run), CPU trace %.2f GB in %.2f s "
			"(%.2f GB/s; %.2f s, %llu times)",
			(double)m->win_stats.cut_bytes / 1e9, m->win_stats.cut,
			(double)m->win_stats.cut_bytes / 1e9 / m->win_stats.cut, m->win_stats.cut_ran,
			(unsigned long long)m->win_stats.cut_preempted, (double)m->plan.read_stats.cut_bytes / 1e9,
			m->plan.read_stats.cut, (double)m->plan.read_stats.cut_bytes / 1e9 / m->plan.read_stats.cut,
			m->plan.read_stats.cut_ran, (unsigned long long)m->plan.read_stats.cut_preempted);
}

int cm_merge_run(const struct cm_options *opt)
{
	struct merge m;
	cm_evout eo = {0};
	cm_threadmap *map = NULL;
	char **split_names = NULL;
	int status, rc;
	memset(&m, 0, sizeof m);
	m.opt = opt;
	m.t0 = cm_now_s();
	cm_diag_set_quiet(opt->quiet);
	/* the format of every output, and the testing aids, to the stages
	 * they steer (options.h) */
	cm_output_set_codec(opt->codec);
	cm_pages_budget(opt->memory); /* --memory: every id table's and mapping's */
	if (opt->spill)
		cm_docsplit_set_spill(opt->spill);
	if (opt->span_slice)
		cm_gpu_set_span_slice(opt->span_slice);
	if (opt->split_n && !opt->window_path && !opt->map_path)
		return cm_filter_run(opt, NULL, NULL); /* its files are opened once the steps are known */
	/* The output first, before any input is read: a -o that cannot be
	 * written (a directory, a missing one) fails now, not after the merge.
	 * Nothing is written to it before all input has been checked.  (The
	 * files of --split are named after the steps: opened once they are
	 * known, after all input has been checked.) */
	eo.out = opt->split_n ? NULL : cm_output_open(opt->out_path, opt->gzip_level, opt->jobs);
	if (!eo.out && !opt->split_n)
		return cm_diag_status();
	if (opt->map_path && !(map = cm_threadmap_load(opt->map_path, opt->bufsize))) {
		if (eo.out)
			cm_output_close(eo.out, 0);
		return cm_diag_status();
	}
	m.map = map;
	if (!opt->window_path) {
		/* a trace alone: a repair in its one pass, else copied and cut */
		if (map && !opt->cut && !opt->split_n)
			status = cm_repairpass_run(opt->cpu_path, opt->bufsize, opt->trace_name, map, eo.out);
		else
			status = cm_filter_run(opt, map, eo.out);
		cm_threadmap_free(map);
		return status;
	}
	cm_input_map_default(read_jobs(opt->jobs) <= 3); /* io/inputraw.c: it pays on few CPUs only */
	m.win = cm_input_open_rewindable(opt->window_path, opt->bufsize);
	m.cpu = m.win ? cm_input_open_rewindable(opt->cpu_path, opt->bufsize) : NULL;
	if (!m.cpu) {
		cm_output_close(eo.out, 0);
		cm_input_close(m.win);
		cm_threadmap_free(map);
		return cm_diag_status();
	}
	cm_input_readahead(m.win, readahead(opt));
	cm_input_readahead(m.cpu, readahead(opt));
	if (map) {
		m.repair = cm_repair_new(map);
		m.arena = cm_arena_new();
	}
	m.gpu = new_gpu(&m);
	if (opt->split_n) {
		m.cut.mode = CM_CPUCUT_SPLIT;
		m.cut.split_n = opt->split_n;
	} else if (opt->cut) {
		m.cut.mode = opt->cut == 1 ? CM_CPUCUT_STEPS : CM_CPUCUT_RANGE;
		m.cut.step_a = opt->steps_a;
		m.cut.step_b = opt->steps_b;
		m.cut.lo = opt->range_lo;
		m.cut.hi = opt->range_hi;
	}

	status = prepare(&m);
	/* --split: the files, now that the steps are known (none appears
	 * unless all are written) */
	if (!status && opt->split_n &&
	    (cm_split_open(opt->out_path, &m.cut, opt->gzip_level, opt->jobs, &m.split.outs, &split_names) < 0 ||
	     !(eo.out = cm_output_tee(m.split.outs, m.cut.ngroups))))
		status = cm_diag_status();
	if (status) {
		if (eo.out)
			cm_output_close(eo.out, 0); /* nothing was written: no file appears */
		if (m.split.outs)
			cm_split_close(m.split.outs, m.cut.ngroups, split_names, m.cut.ngroups, 0);
		m.split.outs = NULL;
	} else {
		cm_cpucopy_hooks hooks = {.insert = hook_insert, .append = hook_append, .ctx = &m,
					  .element = m.repair ? hook_element : NULL,
					  .keep = opt->cut ? hook_keep : NULL, .cut = opt->cut ? &m.cut : NULL,
					  .threads = copy_threads(opt->jobs),
					  .parts = &m.copy_parts, .parts_threads = &m.copy_threads};
		int ok, piped;
		hooks.trace_name = opt->trace_name && *opt->trace_name ? opt->trace_name
				   : opt->out_path && strcmp(opt->out_path, "-") ? opt->out_path
										  : NULL;
		if (opt->split_n) {
			/* each file named after itself, as --steps -o FILE names it */
			m.split.route.outs = m.split.outs;
			m.split.route.nouts = m.cut.ngroups;
			m.split.route.shared = &eo;
			m.split.route.names = hooks.trace_name == opt->out_path ? split_names : NULL;
			m.split.route.whole = m.repair != NULL; /* each event through the files' repairs */
			m.split.arena = cm_arena_new();
			hooks.insert = split_insert;
			hooks.append = split_append;
			hooks.element = split_element;
			hooks.keep = hook_keep;
			hooks.cut = &m.cut;
			hooks.route = &m.split.route;
		}
		/* a window of version 2 lends its devices to a trace without */
		if (m.plan.devprops != CM_DEVPROPS_LISTED)
			hooks.devices = cm_gpu_devices_text(m.gpu, &hooks.devices_len);
		eo.first = 1;
		cm_progress_stage(cm_input_raw_size(m.win), cm_input_raw_size(m.cpu));
		/* the pages the plan left: the copy reads no table, and the
		 * output phase's buffers would come on top of them */
		cm_pages_drop();
		ok = cm_input_rewind(m.cpu) == 0 &&
		     cm_cpucopy_run(m.cpu, &m.plan, &hooks, &eo) == 0 &&
		     cm_evout_flush(&eo) == 0;
		if (opt->split_n && cm_msplit_finish(&m.split, ok) < 0) /* its writer threads, before the closes */
			ok = 0;
		piped = cm_output_pipe_closed(eo.out);
		rc = cm_output_close(eo.out, ok);
		if (opt->split_n && cm_split_close(m.split.outs, m.cut.ngroups, split_names, m.cut.ngroups,
						   ok && rc == 0) < 0)
			rc = -1;
		split_names = NULL;
		if (piped || rc == 1)
			status = CM_EXIT_OK; /* the reader went away: quiet, as pigz and pv do */
		else if (!ok || rc < 0)
			status = cm_diag_status() ? cm_diag_status() : CM_EXIT_IO;
	}
	cm_progress_clear();
	if (!status && opt->verbose)
		report(&m);
	if (!status && m.repair && !opt->split_n)
		cm_repair_report(m.repair);
	if (!status && opt->split_n)
		cm_msplit_report(&m.split);
	cm_msplit_free(&m.split);
	cm_buf_free(&eo.buf);
	cm_repair_free(m.repair);
	cm_arena_free(m.arena);
	cm_threadmap_free(map);
	cm_cpuplan_free(&m.plan);
	cm_cpucut_free(&m.cut);
	cm_gpu_free(m.gpu);
	cm_input_close(m.cpu);
	cm_input_close(m.win);
	return status;
}
