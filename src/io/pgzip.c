/* pgzip.c - one gzip member deflated on several threads, pigz's way.
 *
 * zlib's deflate costs more per byte than the merge does (at level 6
 * several times as much), so one compressor thread, however well it
 * overlaps the merge, sets the pace of `-o out.json.gz`.  pigz (madler/pigz,
 * pigz.c, "Details of parallel compression implementation") shows how to
 * spread one gzip member over many cores without changing its format:
 *
 *   - The input is cut into blocks of CM_PGZ_BLOCK (128 KiB, pigz's default:
 *     large enough that the per-block costs, a dictionary load and a 4-5
 *     byte empty stored block, vanish; small enough that many blocks are in
 *     flight in little memory).
 *   - Each block is deflated on its own by a worker thread, as raw deflate
 *     (no wrapper), after deflateSetDictionary() with the last 32 KiB of the
 *     input before it, so matches reach back across the cut just as in one
 *     stream: the ratio stays within a fraction of a percent of gzip's.
 *   - Every block but the last ends with Z_SYNC_FLUSH: an empty stored block
 *     that brings the bit stream to a byte boundary without ending it, so the
 *     blocks' outputs are simply concatenated.  The last ends with Z_FINISH,
 *     which sets the final-block bit.
 *   - Each worker also computes its block's CRC-32; the caller's thread
 *     folds them together with crc32_combine() as it writes the blocks in
 *     order, then writes the trailer (CRC-32, length mod 2^32) after the
 *     10-byte header it wrote by hand before the first block (the same
 *     header zlib writes for deflateInit2(..., 15 + 16, ...), so the file
 *     does not depend on the thread count's path).
 *
 * Which deflate: zlib, or for levels 1 to 3 Intel's ISA-L where configure
 * found it, 8 times as fast at level 1 (deflater.c's essay has the
 * figures); each block is deflated by deflater.c, which keeps the layout
 * above for both.
 *
 * Order and memory.  Blocks live in a ring of 2 * threads slots (pigz keeps
 * a similar bound with its pools): the caller fills slot seq % nslots, hands
 * it to the workers (they take blocks in sequence order), and writes the
 * finished blocks in order from the oldest; when every slot is in flight it
 * waits for the oldest.  So memory is fixed, the workers always have a block
 * queued while the caller merges, and the output is written by one thread in
 * order, through the caller's sink: the same write(2) calls, the same error
 * reports and the same broken-pipe silence as the one-thread path.
 *
 * The dictionary of block N is copied into its slot, in front of the block,
 * when the caller starts to fill it: block N-1 is still in its own slot then
 * (it is not written, let alone refilled, before block N starts), and a copy
 * means no slot is ever read by a worker while the caller refills it.
 *
 * Waking.  A worker is woken for a block handed over only when the blocks
 * queued outnumber the workers awake (those not waiting for a block):
 * each of those takes the next queued block as its own is done, so a
 * block waits at most one block's deflate, and the workers awake grow
 * with the queue while the caller outpaces them.  The signal comes after
 * the unlock, so that the worker woken does not wake only to wait for the
 * lock.  Waking a worker for every block, as before, cost the caller a
 * futex call and often its CPU for each 128 KiB: the .pftrace's passer,
 * the thread that feeds a .pftrace.gz, lost its CPU 87-185 times a phase
 * (bench/dev-gz21.sh).  On 16 CPUs the 1 GB pair's .pftrace.gz took
 * 1.13-1.15 s this way against 1.17-1.20 s (BENCHMARKS.md, "sched25").
 *
 * A crew (pgzcrew.c) shares its workers among several such streams (the
 * files of --split): the same ring, filled here the same way, but the
 * crew's workers take the blocks and write them; pgzip_int.h has what
 * the two share, and the code below calls the crew's side where z->crew
 * is set.
 *
 * Workers never print and never exit: a failure (memory, zlib, ISA-L) is
 * recorded in the block and returned by the caller's next cm_pgz_write or
 * cm_pgz_finish, which writes nothing after it.  They run with every signal
 * blocked, so that the clean-up handlers of outfile.c run on the caller's
 * thread as before. */
#include "config.h"
#include "io/pgzip_int.h"
#include "base/diag.h" /* cm_now_s */

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h> /* crc32_combine */

cm_pgz *cm_pgz_new(int level, int threads, cm_pgz_sink sink, void *ctx)
{
	cm_pgz *z = calloc(1, sizeof *z);
	if (!z)
		return NULL;
	z->level = level;
	z->threads = threads < 0 ? 0 : threads;
	/* a benchmarking aid: every block handed over wakes a worker, as before
	 * the essay's "Waking" (the bytes do not depend on it) */
	z->wake_all = getenv("CUPTIMERGE_GZIP_WAKE") && !strcmp(getenv("CUPTIMERGE_GZIP_WAKE"), "all");
	z->sink = sink;
	z->ctx = ctx;
	/* two slots a worker: one it deflates, one queued behind it, so no worker
	 * waits while the caller fills the next (and at least 2, so that block
	 * N-1 is never in the slot of block N) */
	z->nslots = 2 * (size_t)(z->threads ? z->threads : 1);
	z->ring = calloc(z->nslots, sizeof *z->ring);
	z->th = calloc((size_t)z->threads + 1, sizeof *z->th);
	z->df = calloc((size_t)z->threads + 1, sizeof *z->df);
	if (!z->ring || !z->th || !z->df) {
		free(z->ring);
		free(z->th);
		free(z->df);
		free(z);
		return NULL;
	}
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->work, NULL);
	pthread_cond_init(&z->done, NULL);
	return z;
}

/* What a worker is started with: the stream it serves and its own deflate
 * state (the struct is malloc'd; the worker frees it). */
struct worker_arg {
	cm_pgz *z;
	cm_deflater *df;
};

/* A worker: deflate the blocks handed over, in sequence order, until quit
 * (the block it has is finished first; queued ones are left).  Never prints,
 * never fails: a block's error travels in the block. */
static void *worker(void *arg)
{
	struct worker_arg wa = *(struct worker_arg *)arg;
	cm_pgz *z = wa.z;
	free(arg);
	pthread_mutex_lock(&z->mu);
	for (;;) {
		struct job *job;
		while (z->taken == z->submitted && !z->quit) {
			z->waiting++;
			pthread_cond_wait(&z->work, &z->mu);
			z->waiting--;
		}
		if (z->quit)
			break;
		job = &z->ring[z->taken++ % z->nslots];
		pthread_mutex_unlock(&z->mu);
		cm_deflate_block(wa.df, &job->b);
		pthread_mutex_lock(&z->mu);
		job->done = 1;
		pthread_cond_broadcast(&z->done);
	}
	pthread_mutex_unlock(&z->mu);
	return NULL;
}

/* Make df[i], the deflate state of worker I (or, I == threads, the
 * caller's own), for the stream's level.  0, or CM_PGZ_NOMEM. */
static int init_stream(cm_pgz *z, int i)
{
	if (!(z->df[i] = cm_deflater_new(z->level)))
		return CM_PGZ_NOMEM;
	z->df_init = i + 1;
	return CM_PGZ_OK;
}

/* Start the workers, once (on the first block handed over): their deflate
 * states first, here, so that a shortage is an error now; then the threads,
 * with every signal blocked.  When not even one thread can be made, blocks
 * are deflated on the caller's thread (threads becomes 0).  0, or
 * CM_PGZ_NOMEM. */
static int start_workers(cm_pgz *z)
{
	sigset_t all, saved;
	int i, made = 0;
	z->started = 1;
	for (i = 0; i < z->threads; i++)
		if (init_stream(z, i) != CM_PGZ_OK)
			return CM_PGZ_NOMEM;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	for (i = 0; i < z->threads; i++) {
		struct worker_arg *wa = malloc(sizeof *wa);
		if (!wa)
			break;
		wa->z = z;
		wa->df = z->df[i];
		if (pthread_create(&z->th[i], NULL, worker, wa) != 0) {
			free(wa);
			break;
		}
		made++;
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	z->threads = made; /* fewer is fine; none: the caller deflates */
	return CM_PGZ_OK;
}

/* The gzip header zlib writes for deflateInit2(level, ..., 15 + 16, ...):
 * no name, no time, XFL 2 for level 9 and 4 for levels 0 and 1, OS 3 (Unix). */
static void gzip_header(unsigned char h[10], int level)
{
	static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
	memcpy(h, head, sizeof head);
	h[8] = level == 9 ? 2 : level < 2 ? 4 : 0;
}

int cm_pgz_emit(cm_pgz *z, struct job *job)
{
	unsigned char b[10];
	if (job->b.err)
		return job->b.err;
	if (!z->header_done) {
		gzip_header(b, z->level);
		if (z->sink(z->ctx, b, 10) < 0)
			return CM_PGZ_SINK;
		z->header_done = 1;
	}
	if (z->sink(z->ctx, job->b.out, job->b.out_len) < 0)
		return CM_PGZ_SINK;
	z->crc = crc32_combine(z->crc, job->b.crc, (z_off_t)job->b.len);
	z->isize += job->b.len;
	if (job->b.last) {
		unsigned long v = z->crc;
		int i;
		for (i = 0; i < 4; i++, v >>= 8)
			b[i] = (unsigned char)v;
		for (v = (unsigned long)(z->isize & 0xffffffffu); i < 8; i++, v >>= 8)
			b[i] = (unsigned char)v;
		if (z->sink(z->ctx, b, 8) < 0)
			return CM_PGZ_SINK;
	}
	return CM_PGZ_OK;
}

/* Wait for the oldest unwritten block (WAIT 0: only take it if it is done),
 * and write it (cm_pgz_emit).  Not for a crew's stream, whose workers write.
 * CM_PGZ_OK (1 when WAIT is 0 and it is not done yet), or an error
 * (sticky). */
static int write_oldest(cm_pgz *z, int wait)
{
	struct job *job = &z->ring[z->written % z->nslots];
	double t0;
	int rc;
	pthread_mutex_lock(&z->mu);
	if (wait && !job->done) {
		t0 = cm_now_s();
		while (!job->done)
			pthread_cond_wait(&z->done, &z->mu);
		z->wait_s += cm_now_s() - t0;
	}
	if (!job->done) {
		pthread_mutex_unlock(&z->mu);
		return 1;
	}
	job->done = 0;
	pthread_mutex_unlock(&z->mu);
	z->written++;
	t0 = cm_now_s();
	rc = cm_pgz_emit(z, job);
	z->emit_s += cm_now_s() - t0;
	if (rc != CM_PGZ_OK)
		return z->err = rc;
	return CM_PGZ_OK;
}

/* Hand the block being filled over: to the workers, or deflate it here when
 * there are none (no workers started and this is the last block: a small
 * output starts no thread at all).  Then write what is done (a crew's
 * workers write their own).  0 or an error. */
static int submit(cm_pgz *z, int last)
{
	struct job *job = &z->ring[z->submitted % z->nslots];
	int rc;
	job->b.last = last;
	if (z->crew)
		return cm_pgz_crew_submit(z, job);
	z->filling = 0;
	if (!z->started && !last && z->threads && (rc = start_workers(z)) != CM_PGZ_OK)
		return z->err = rc;
	if (!z->started || !z->threads) {
		/* the caller's own stream, after the workers' */
		if (z->df_init <= z->threads && (rc = init_stream(z, z->threads)) != CM_PGZ_OK)
			return z->err = rc;
		cm_deflate_block(z->df[z->threads], &job->b);
		job->done = 1; /* no worker can see it: none runs */
		z->submitted++;
		z->taken++;
		return write_oldest(z, 1);
	}
	pthread_mutex_lock(&z->mu);
	z->submitted++;
	if (z->wake_all) { /* (CUPTIMERGE_GZIP_WAKE=all: the way before) */
		pthread_cond_signal(&z->work);
		pthread_mutex_unlock(&z->mu);
	} else { /* the essay's "Waking" */
		int wake = z->waiting > 0 && z->submitted - z->taken > (uint64_t)(z->threads - z->waiting);
		pthread_mutex_unlock(&z->mu);
		if (wake)
			pthread_cond_signal(&z->work);
	}
	/* write what is done already, without waiting */
	while (z->written < z->submitted && (rc = write_oldest(z, 0)) != 1)
		if (rc != CM_PGZ_OK)
			return rc;
	return CM_PGZ_OK;
}

/* Make ring[submitted % nslots] the block being filled: wait for (and
 * write, or with a crew have written) the oldest block while every slot is
 * in flight, allocate the slot's input on first use, and copy the
 * dictionary in (the last DICT bytes of the block before, which is still
 * in its slot).  0 or an error. */
static int begin_block(cm_pgz *z)
{
	struct job *job, *prev = NULL;
	int rc;
	if (z->crew) {
		if ((rc = cm_pgz_crew_wait(z, z->nslots - 1)) != CM_PGZ_OK)
			return rc;
	} else {
		while (z->submitted - z->written >= z->nslots)
			if ((rc = write_oldest(z, 1)) != CM_PGZ_OK)
				return rc;
	}
	job = &z->ring[z->submitted % z->nslots];
	if (!job->b.in && !(job->b.in = z->crew ? cm_pgz_crew_take_in(z->crew) : malloc(DICT + CM_PGZ_BLOCK)))
		return z->err = CM_PGZ_NOMEM;
	job->b.len = 0;
	job->b.dict = 0;
	job->deflated = 0;
	if (z->submitted > 0) {
		prev = &z->ring[(z->submitted - 1) % z->nslots];
		/* the block before is full (only the last one is not) */
		job->b.dict = prev->b.len < DICT ? prev->b.len : DICT;
		memcpy(job->b.in + DICT - job->b.dict, prev->b.in + DICT + prev->b.len - job->b.dict, job->b.dict);
	}
	if (z->crew)
		cm_pgz_crew_began(z, prev);
	else
		z->filling = 1;
	return CM_PGZ_OK;
}

int cm_pgz_write(cm_pgz *z, const void *data, size_t len)
{
	const unsigned char *p = data;
	int rc;
	if (z->err)
		return z->err;
	while (len) {
		struct job *job;
		size_t n;
		if (!z->filling && (rc = begin_block(z)) != CM_PGZ_OK)
			return rc;
		job = &z->ring[z->submitted % z->nslots];
		/* a full block is handed over only when more input comes, so that
		 * the last block is never an empty one */
		if (job->b.len == CM_PGZ_BLOCK) {
			if ((rc = submit(z, 0)) != CM_PGZ_OK)
				return rc;
			continue;
		}
		n = CM_PGZ_BLOCK - job->b.len < len ? CM_PGZ_BLOCK - job->b.len : len;
		memcpy(job->b.in + DICT + job->b.len, p, n);
		job->b.len += n;
		p += n;
		len -= n;
	}
	return CM_PGZ_OK;
}

int cm_pgz_finish(cm_pgz *z)
{
	int rc;
	if (z->err)
		return z->err;
	/* no input at all: an empty last block, so the member is still whole */
	if (!z->filling && (rc = begin_block(z)) != CM_PGZ_OK)
		return rc;
	if ((rc = submit(z, 1)) != CM_PGZ_OK)
		return rc;
	if (z->crew)
		return cm_pgz_crew_wait(z, 0);
	while (z->written < z->submitted)
		if ((rc = write_oldest(z, 1)) != CM_PGZ_OK)
			return rc;
	return CM_PGZ_OK;
}
void cm_pgz_waits(const cm_pgz *z, double *wait, double *emit)
{
	*wait = z->wait_s;
	*emit = z->emit_s;
}

void cm_pgz_free(cm_pgz *z)
{
	size_t i;
	int t;
	if (!z)
		return;
	if (z->crew) {
		cm_pgz_crew_forget(z);
	} else if (z->started) {
		pthread_mutex_lock(&z->mu);
		z->quit = 1;
		pthread_cond_broadcast(&z->work);
		pthread_mutex_unlock(&z->mu);
		for (t = 0; t < z->threads; t++)
			pthread_join(z->th[t], NULL);
	}
	for (t = 0; t < z->df_init; t++)
		cm_deflater_free(z->df[t]);
	for (i = 0; i < z->nslots; i++) {
		free(z->ring[i].b.in);
		free(z->ring[i].b.out);
	}
	pthread_mutex_destroy(&z->mu);
	pthread_cond_destroy(&z->work);
	pthread_cond_destroy(&z->done);
	free(z->ring);
	free(z->th);
	free(z->df);
	cm_pgz_crew_drop(z->crew);
	free(z);
}
