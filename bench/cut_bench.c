/* cut_bench.c - how fast the splitter (src/json/docsplit.c) cuts a document
 * into batches, alone: its workers do nothing (or, with --touch, read each
 * element's bytes once, as a parser would).
 *
 * Usage: cut-bench [--jobs N] [--touch] [--bufsize BYTES] [--batch BYTES]
 *                  [--repeat R] FILE...
 * Each FILE is read as the merge reads it (io/input.c, read ahead on its own
 * thread), its array ("events" when the file's name holds "win", as a
 * window's does, else "traceEvents") cut by cm_docsplit_run, the batches handed
 * to a pool (base/opool.c) of N workers (default 4) that run nothing, so
 * that the cutting thread is the one that works.  Printed for each run: the
 * cutting thread's CPU seconds (CLOCK_THREAD_CPUTIME_ID: the machines this
 * runs on are shared, and time spent descheduled is no one's) and the part
 * of them in the kernel (getrusage: waking the workers, waiting), the wall
 * seconds, the elements, the batches, and the GB a CPU second (10^9 bytes
 * of document a second of the cutting thread's CPU).  Figures only; never a
 * timed assertion. */
#define _GNU_SOURCE 1 /* RUSAGE_THREAD */
#include "config.h"
#include "base/opool.h"
#include "io/input.h"
#include "json/docsplit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv_s(const struct timeval *tv) { return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6; }

struct run {
	cm_opool *pool;
	uint64_t elems, batches;
};

static int touch; /* --touch: the workers read the elements' bytes */
static volatile unsigned touched; /* their sum, so that the reads are not optimised away */

/* A worker: nothing, or a read of every byte of every element. */
static int work(void *wctx, const cm_buf *in, cm_buf *out)
{
	unsigned sum = 0;
	uint64_t n = 0;
	(void)wctx;
	cm_docsplit_elem e;
	for (size_t at = 0; cm_docsplit_next(in, &at, &e);) {
		n++;
		if (touch) {
			const unsigned char *t = (const unsigned char *)e.text;
			for (uint32_t i = 0; i < e.len; i++)
				sum += t[i];
		}
	}
	cm_buf_put(out, &n, sizeof n);
	touched += sum;
	return 0;
}

static int sink(void *sctx, cm_buf *out)
{
	struct run *r = sctx;
	uint64_t n;
	memcpy(&n, out->p, sizeof n);
	r->elems += n;
	return 0;
}

static int member(void *ctx, const char *key, size_t klen, const char *val, size_t vlen, int64_t end_offset)
{
	(void)ctx, (void)key, (void)klen, (void)val, (void)vlen, (void)end_offset;
	return 0;
}

static int batch(void *ctx, cm_buf *b)
{
	struct run *r = ctx;
	r->batches++;
	return cm_opool_put(r->pool, b) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	int jobs = 4, repeat = 1, a = 1;
	size_t bufsize = 1u << 20, batch_size = 256u << 10;
	for (; a < argc && argv[a][0] == '-' && argv[a][1] == '-'; a++) {
		if (!strcmp(argv[a], "--touch"))
			touch = 1;
		else if (!strcmp(argv[a], "--jobs") && a + 1 < argc)
			jobs = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--repeat") && a + 1 < argc)
			repeat = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--bufsize") && a + 1 < argc)
			bufsize = (size_t)strtoull(argv[++a], NULL, 0);
		else if (!strcmp(argv[a], "--batch") && a + 1 < argc)
			batch_size = (size_t)strtoull(argv[++a], NULL, 0);
		else
			break;
	}
	if (a >= argc) {
		fprintf(stderr, "usage: cut-bench [--jobs N] [--touch] [--bufsize BYTES] [--batch BYTES] "
				"[--repeat R] FILE...\n");
		return 2;
	}
	for (; a < argc; a++) {
		const char *key = strstr(argv[a], "win") ? "events" : "traceEvents";
		struct stat st;
		if (stat(argv[a], &st) < 0) {
			perror(argv[a]);
			return 3;
		}
		for (int r = 0; r < repeat; r++) {
			struct run run = {0};
			void **wctx = calloc((size_t)jobs, sizeof *wctx);
			cm_docsplit_sink ds = {.member = member, .batch = batch, .ctx = &run};
			cm_input *in = cm_input_open(argv[a], bufsize);
			double c0, w0, c1, w1;
			struct rusage ru0, ru1;
			int seen = 0, rc, prc;
			if (!in)
				return 3;
			cm_input_readahead(in, 1);
			run.pool = cm_opool_new(jobs, 0, work, wctx, sink, &run);
			cm_opool_set_done(run.pool, cm_docsplit_done);
			getrusage(RUSAGE_THREAD, &ru0);
			c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
			w0 = clock_s(CLOCK_MONOTONIC);
			rc = cm_docsplit_run(in, key, batch_size, &ds, NULL, &seen);
			c1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
			getrusage(RUSAGE_THREAD, &ru1);
			w1 = clock_s(CLOCK_MONOTONIC);
			prc = cm_opool_finish(run.pool);
			cm_input_close(in);
			free(wctx);
			if (rc != CM_DOCSPLIT_OK || prc != 0 || !seen) {
				fprintf(stderr, "cut-bench: %s: not cut (%d, %d)\n", argv[a], rc, prc);
				return 1;
			}
			printf("%s: cutter %.3f s CPU (%.3f in the kernel), %.3f s wall, %llu elements, %llu batches, "
			       "%.2f GB/s of CPU\n",
			       argv[a], c1 - c0, tv_s(&ru1.ru_stime) - tv_s(&ru0.ru_stime), w1 - w0,
			       (unsigned long long)run.elems, (unsigned long long)run.batches,
			       (double)st.st_size / 1e9 / (c1 - c0));
		}
	}
	return 0;
}
