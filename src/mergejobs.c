/* mergejobs.c - a merge's -j as the threads of each of its steps.
 *
 * The one place where -j is translated: the run and its stages ask here
 * for their counts, and hand them down as plain ints to the pools that
 * use them (opool.h), the readers' crew, pgzip and the copy.  It is a file
 * of its own because it is policy, not mechanism: each count carries the
 * measurement that set it, and these numbers change with each benchmark
 * where the run's code does not. */
#include "config.h"
#include "merge_int.h"
#include "io/pgzip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
int mergejobs_read_jobs(int jobs) { return jobs < READ_THREADS_MAX ? jobs : READ_THREADS_MAX; }
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
int mergejobs_window_workers(int jobs)
{
	if (read_workers_env(0))
		return read_workers_env(0);
	jobs = mergejobs_read_jobs(jobs);
	if (read_pool(jobs))
		return read_pool(jobs) - cpu_share(read_pool(jobs));
	return window_by_jobs(jobs);
}
int mergejobs_cpu_workers(int jobs)
{
	if (read_workers_env(1))
		return read_workers_env(1);
	jobs = mergejobs_read_jobs(jobs);
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
int mergejobs_read_crew(int jobs)
{
	const char *e = getenv("CUPTIMERGE_READ_WORKERS");
	int n;
	char end;
	if (e && sscanf(e, "%d%c", &n, &end) == 1 && n >= 1 && n <= 2 * READ_THREADS_MAX)
		return n;
	if (read_workers_env(0) || mergejobs_read_jobs(jobs) < 4 || mergejobs_cpu_workers(jobs) < 2)
		return 0;
	return mergejobs_window_workers(jobs) + mergejobs_cpu_workers(jobs);
}
/* With 2 or 3 jobs the window's cutting thread parses too (opool.h), when
 * it would wait for a free slot: a thread that only cut, beside two
 * parsers and the CPU trace's reader, made four on two cores, and the read
 * took 0.82 s of the 500 MB pair where one job a reader took 0.75. */
int mergejobs_window_caller_helps(int jobs) { return mergejobs_read_jobs(jobs) <= 3; }
int mergejobs_plan_threads(int jobs) { return jobs < PLAN_THREADS_MAX ? jobs : PLAN_THREADS_MAX; }
/* The copy of the CPU trace's events (cpu/cpucopypar.c): a thread a job.
 * Its parts cost less CPU than the walk on one thread with its read-ahead
 * thread (on 2 cores, 200 MB pair, -j 2, three rounds taking turns:
 * 0.04-0.06 CPU-s against 0.08-0.11; read(2) or mapped chunks handed
 * between threads, against a pread into the buffer that goes out).  The
 * testing aid CUPTIMERGE_COPY_THREADS sets it (1: the walk alone). */
int mergejobs_copy_threads(int jobs) { return mergejobs_plan_threads(jobs); }
/* With -o FILE.gz the deflate workers (io/pgzip.c, one a job) cost several
 * times what the render does a byte at zlib's levels: the render takes half
 * the jobs, so that it does not crowd them out.  ISA-L's deflate (levels
 * 1-3, the default among them, where the build has it) costs far less, and
 * the render keeps every job (on 2 cores that took the 500 MB pair's
 * -o .gz from 2.00 to 1.84 s).  A .pftrace's render on fewer threads than
 * the CPUs, to leave its sequential part and in-order thread a CPU, gained
 * nothing: on 16 CPUs (1 GB pair) 14, 12 and 10 took 1.97-2.26 s against
 * 16's 1.91-2.04 (BENCHMARKS.md, "Where the .pftrace's window phase
 * waits": its waits were the render's pool's, gpu/gpuwalk.c). */
int mergejobs_render_threads(const struct cm_options *opt)
{
	const char *version, *e = getenv("CUPTIMERGE_RENDER_THREADS");
	int zlib = opt->gzip_level >= 0 && strcmp(cm_pgz_engine(opt->gzip_level, &version), "ISA-L") != 0;
	int jobs = zlib ? (opt->jobs + 1) / 2 : opt->jobs;
	if (e && *e && atoi(e) >= 1) /* a testing aid (bench/dev-render16.sh) */
		jobs = atoi(e);
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
int mergejobs_readahead(const struct cm_options *opt)
{
	if (opt->readahead >= 0)
		return opt->readahead;
	return opt->jobs > 1 && opt->bufsize >= (64u << 10) ? READAHEAD_SLOTS : 0;
}
