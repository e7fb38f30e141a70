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
 * A crew (cm_pgz_crew) serves several streams at once: the files of
 * --split, written one after another (the CPU trace's copy goes file by
 * file, in time order) or a few at a time.  With a worker a file, each
 * file's blocks were deflated on one thread while the others idled, and
 * a gzip split of the 1 GB pair took 1.74 times the plain merge's one
 * -o FILE.gz on 16 CPUs.  A crew's workers take the blocks of every
 * stream on it in the order they were handed over, so the file being
 * written has all of them.  Its streams keep 2 * threads slots each, like
 * a stream of their own, but a slot's buffers go back to the crew's pool
 * once its block is written (the input once the next block has copied
 * its dictionary): an idle file holds only the block it is filling, and
 * the 60 files of a split hold little more than one stream would.  The
 * bytes are the same: a block is deflated the same way by any worker.
 *
 * A crew's stream is written by its workers, not by the caller: the one
 * that finishes a block takes the stream's writing (one worker at a time,
 * under the stream's lock) and writes, in order, every finished block from
 * the oldest unwritten on, then lets go; a worker that finishes a block
 * while another writes leaves it to that one.  When the caller wrote them
 * (after handing each block over, what was done by then), the thread that
 * feeds the split (the copy's sink, the render's, each holding its pool's
 * lock) paid every write(2) of the files' 254 MB, and a file the copy
 * had left kept its last blocks, deflated, until it was written again:
 * the gzip split took 1.05-1.13 times the plain -o FILE.gz on 16 CPUs,
 * whose bytes a writing thread writes, and 20 MB more at the peak.  The
 * sink then runs on a worker: it keeps a write error for the caller
 * (output.c), who gets CM_PGZ_SINK from its next call.
 *
 * Workers never print and never exit: a failure (memory, zlib, ISA-L) is
 * recorded in the block and returned by the caller's next cm_pgz_write or
 * cm_pgz_finish, which writes nothing after it.  They run with every signal
 * blocked, so that the clean-up handlers of outfile.c run on the caller's
 * thread as before. */
#include "config.h"
#include "io/pgzip.h"
#include "io/deflater.h"
#include "base/diag.h" /* cm_now_s */

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h> /* crc32_combine */

/* deflate's window, the dictionary each block gets (deflater.h) */
#define DICT CM_DEFLATE_DICT

/* One block in a slot of the ring. */
struct job {
	cm_gzblock b;  /* its input and, once done, its deflated bytes */
	int done;      /* set (under mu) when b's out, crc and err are ready; cleared when written */
	int deflated;  /* a crew's block: set (under mu) with done, cleared when the slot is refilled */
	cm_pgz *owner; /* a crew's block: its stream, its number, the next in the crew's queue */
	uint64_t seq;
	struct job *next;
};

struct cm_pgz {
	int level;
	int threads;  /* workers wanted; 0: deflate on the caller's thread */
	int started;  /* workers running (0 until the first block is handed over) */
	cm_pgz_sink sink;
	void *ctx;
	struct job *ring;
	size_t nslots;
	/* sequence numbers: blocks written < taken by a worker <= handed over;
	 * the block being filled is number `submitted`, in ring[submitted % nslots] */
	uint64_t written, taken, submitted;
	int filling;  /* ring[submitted % nslots] holds the block being filled */
	pthread_mutex_t mu;
	pthread_cond_t work; /* a block was handed over, or quit */
	pthread_cond_t done; /* a block is done */
	int quit;
	pthread_t *th;
	cm_deflater **df; /* one per worker; df[threads] is the caller's own */
	int df_init;   /* how many of df are made */
	unsigned long crc; /* CRC-32 of the blocks written */
	uint64_t isize;    /* bytes in the blocks written */
	int header_done;
	int err;       /* sticky: the first error */
	cm_pgz_crew *crew; /* the workers it shares (cm_pgz_new_crew), or NULL */
	int busy;          /* ... blocks handed to the crew and not done (under mu) */
	int writing;       /* ... a worker is writing its finished blocks (under mu) */
	int werr;          /* ... the first error of a block written by a worker (under mu) */
};

/* What the crews of the run did, summed (cm_pgz_crew_stats; -v): seconds
 * as nanoseconds, added with __atomic. */
static struct {
	uint64_t threads, blocks, busy_ns, write_ns, idle_ns, room_ns, slot_ns;
} crew_totals;

/* Add S seconds (as nanoseconds) to the total at *T. */
static void add_s(uint64_t *t, double s) { __atomic_add_fetch(t, (uint64_t)(s * 1e9), __ATOMIC_RELAXED); }

/* Buffers of a crew's pool, at most this many of each kind a worker. */
#define POOL_PER_WORKER 2

struct cm_pgz_crew {
	int level, threads, refs;
	int caller_writes;        /* CUPTIMERGE_CREW_WRITE=0: the caller writes its streams' blocks */
	pthread_mutex_t mu;
	pthread_cond_t work;      /* a block queued, or quit */
	pthread_cond_t room;      /* a block taken from the queue */
	struct job *head, *tail;  /* the blocks queued, of every stream, in the order handed over */
	int queued;               /* ... how many: at most threads (crew_push waits) */
	int quit;
	pthread_t *th;
	cm_deflater **df;         /* one a worker */
	int df_init;
	unsigned char **ins, **outs; /* the pool: input slots, output buffers (CM_DEFLATE_OUT_FIRST) */
	size_t nins, nouts, cap;
};

cm_pgz *cm_pgz_new(int level, int threads, cm_pgz_sink sink, void *ctx)
{
	cm_pgz *z = calloc(1, sizeof *z);
	if (!z)
		return NULL;
	z->level = level;
	z->threads = threads < 0 ? 0 : threads;
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
		while (z->taken == z->submitted && !z->quit)
			pthread_cond_wait(&z->work, &z->mu);
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

/* Give P back to crew C's pool (an input slot when IN, else an output
 * buffer of CM_DEFLATE_OUT_FIRST bytes), or free it when the pool has
 * enough.  NULL is fine. */
static void pool_give(cm_pgz_crew *c, unsigned char *p, int in)
{
	int kept = 0;
	if (!p)
		return;
	pthread_mutex_lock(&c->mu);
	if (in && c->nins < c->cap)
		c->ins[c->nins++] = p, kept = 1;
	else if (!in && c->nouts < c->cap)
		c->outs[c->nouts++] = p, kept = 1;
	pthread_mutex_unlock(&c->mu);
	if (!kept)
		free(p);
}

/* An input slot (DICT + CM_PGZ_BLOCK bytes) from crew C's pool, or a new
 * one; NULL when memory ran out. */
static unsigned char *pool_take_in(cm_pgz_crew *c)
{
	unsigned char *p = NULL;
	pthread_mutex_lock(&c->mu);
	if (c->nins)
		p = c->ins[--c->nins];
	pthread_mutex_unlock(&c->mu);
	return p ? p : malloc(DICT + CM_PGZ_BLOCK);
}

/* The gzip header zlib writes for deflateInit2(level, ..., 15 + 16, ...):
 * no name, no time, XFL 2 for level 9 and 4 for levels 0 and 1, OS 3 (Unix). */
static void gzip_header(unsigned char h[10], int level)
{
	static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
	memcpy(h, head, sizeof head);
	h[8] = level == 9 ? 2 : level < 2 ? 4 : 0;
}

/* Write JOB, the oldest unwritten block of Z, to the sink: the header
 * first when none is written yet, the trailer after the last block.  On
 * the one thread that writes Z's blocks at the time (the caller's, or a
 * crew's worker that holds Z's writing).  CM_PGZ_OK, the block's own
 * error, or CM_PGZ_SINK. */
static int emit(cm_pgz *z, struct job *job)
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

/* Block SEQ of crew stream Z has a successor that has begun (copied its
 * dictionary from SEQ's input).  Holding z->mu. */
static int next_began(const cm_pgz *z, uint64_t seq) { return seq + 1 < z->submitted + (uint64_t)z->filling; }

/* Crew stream Z's finished blocks written, in order, from the oldest, by
 * this worker, unless another one is at it (it then writes the blocks this
 * one finished too, before it lets go).  Each written block's output
 * buffer goes back to the pool.  Holding z->mu (let go while writing).
 * The first error stops the writing and waits in werr for the caller. */
static void crew_write_ready(cm_pgz *z)
{
	double t0;
	if (z->writing)
		return;
	z->writing = 1;
	while (!z->werr && z->written < z->submitted) {
		struct job *job = &z->ring[z->written % z->nslots];
		int rc;
		if (!job->done)
			break;
		pthread_mutex_unlock(&z->mu);
		t0 = cm_now_s();
		rc = emit(z, job);
		add_s(&crew_totals.write_ns, cm_now_s() - t0);
		pthread_mutex_lock(&z->mu);
		job->done = 0;
		z->written++;
		if (job->b.out_size == CM_DEFLATE_OUT_FIRST)
			pool_give(z->crew, job->b.out, 0);
		else
			free(job->b.out);
		job->b.out = NULL;
		job->b.out_size = 0;
		if (rc != CM_PGZ_OK)
			z->werr = rc;
		pthread_cond_broadcast(&z->done);
	}
	z->writing = 0;
}

/* What a crew's worker is started with: its crew and its own deflate
 * state (the struct is malloc'd; the worker frees it). */
struct crew_arg {
	cm_pgz_crew *c;
	cm_deflater *df;
};

/* A crew's worker: deflate the blocks queued, of any stream, in the order
 * they were handed over, until quit (which comes when no stream is left);
 * each block's stream is told under its own lock, and its blocks that are
 * next in order written there and then (crew_write_ready), so that no
 * thread that feeds the crew waits on write(2), and a block's output goes
 * back to the pool as soon as it is written.  An output buffer comes from
 * the pool where it has one. */
static void *crew_worker(void *arg)
{
	struct crew_arg ca = *(struct crew_arg *)arg;
	cm_pgz_crew *c = ca.c;
	double idle = 0, busy = 0, t0;
	uint64_t blocks = 0;
	free(arg);
	pthread_mutex_lock(&c->mu);
	for (;;) {
		struct job *job;
		cm_pgz *z;
		unsigned char *in = NULL;
		t0 = cm_now_s();
		while (!c->head && !c->quit)
			pthread_cond_wait(&c->work, &c->mu);
		if (blocks) /* not the wait for the first: the crew is made before the plan */
			idle += cm_now_s() - t0;
		if (!c->head)
			break;
		job = c->head;
		if (!(c->head = job->next))
			c->tail = NULL;
		c->queued--;
		pthread_cond_signal(&c->room);
		if (!job->b.out && c->nouts) {
			job->b.out = c->outs[--c->nouts];
			job->b.out_size = CM_DEFLATE_OUT_FIRST;
		}
		pthread_mutex_unlock(&c->mu);
		z = job->owner; /* not touched once told: it may be freed then */
		t0 = cm_now_s();
		cm_deflate_block(ca.df, &job->b);
		busy += cm_now_s() - t0;
		blocks++;
		pthread_mutex_lock(&z->mu);
		/* its input back once the next block has begun (copied its
		 * dictionary; else begin_block gives it back then): a file the
		 * copy has left holds only the block it is filling */
		job->deflated = 1;
		if (next_began(z, job->seq)) {
			in = job->b.in;
			job->b.in = NULL;
		}
		job->done = 1;
		z->busy--;
		if (!c->caller_writes)
			crew_write_ready(z);
		pthread_cond_broadcast(&z->done);
		pthread_mutex_unlock(&z->mu);
		pool_give(c, in, 1);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	add_s(&crew_totals.idle_ns, idle);
	add_s(&crew_totals.busy_ns, busy);
	__atomic_add_fetch(&crew_totals.blocks, blocks, __ATOMIC_RELAXED);
	return NULL;
}

/* Hand block JOB of crew stream Z to the crew (as submit hands a block to
 * its own workers).  Waits while the crew has a block queued for each
 * worker: so the blocks in flight, of all its streams, are at most twice
 * its threads, as one stream of its own has (2 * threads slots each, a
 * stream had the crew's 16 workers fill 32 slots of each file being
 * written on 2 CPUs: 117 MB at the peak against 75 MB with a worker a
 * file). */
static void crew_push(cm_pgz *z, struct job *job)
{
	cm_pgz_crew *c = z->crew;
	job->owner = z;
	job->next = NULL;
	job->seq = z->submitted;
	pthread_mutex_lock(&z->mu);
	z->busy++;
	z->submitted++;
	z->filling = 0;
	pthread_mutex_unlock(&z->mu);
	pthread_mutex_lock(&c->mu);
	if (c->queued >= c->threads) {
		double t0 = cm_now_s();
		while (c->queued >= c->threads)
			pthread_cond_wait(&c->room, &c->mu);
		add_s(&crew_totals.room_ns, cm_now_s() - t0);
	}
	c->queued++;
	if (c->tail)
		c->tail->next = job;
	else
		c->head = job;
	c->tail = job;
	pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&c->mu);
}

/* Crew stream Z: wait while MORE blocks are handed over and not written
 * (0: until all are written), then take up a worker's error.  0 or the
 * error (sticky). */
static int crew_wait(cm_pgz *z, uint64_t more)
{
	int rc;
	pthread_mutex_lock(&z->mu);
	for (double t0 = 0;;) {
		if (z->crew->caller_writes) /* the testing aid: this thread writes */
			crew_write_ready(z);
		if (z->werr || z->submitted - z->written <= more) {
			if (t0 > 0)
				add_s(&crew_totals.slot_ns, cm_now_s() - t0);
			break;
		}
		if (t0 == 0)
			t0 = cm_now_s();
		pthread_cond_wait(&z->done, &z->mu);
	}
	rc = z->werr;
	pthread_mutex_unlock(&z->mu);
	return rc ? (z->err = rc) : CM_PGZ_OK;
}

/* Wait for the oldest unwritten block (WAIT 0: only take it if it is done),
 * and write it (emit).  Not for a crew's stream, whose workers write.
 * CM_PGZ_OK (1 when WAIT is 0 and it is not done yet), or an error
 * (sticky). */
static int write_oldest(cm_pgz *z, int wait)
{
	struct job *job = &z->ring[z->written % z->nslots];
	int rc;
	pthread_mutex_lock(&z->mu);
	while (wait && !job->done)
		pthread_cond_wait(&z->done, &z->mu);
	if (!job->done) {
		pthread_mutex_unlock(&z->mu);
		return 1;
	}
	job->done = 0;
	pthread_mutex_unlock(&z->mu);
	z->written++;
	if ((rc = emit(z, job)) != CM_PGZ_OK)
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
	if (z->crew) {
		crew_push(z, job);
		/* the testing aid: what is done written here, as before */
		return z->crew->caller_writes ? crew_wait(z, UINT64_MAX) : CM_PGZ_OK;
	}
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
	pthread_cond_signal(&z->work);
	pthread_mutex_unlock(&z->mu);
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
	unsigned char *give = NULL;
	int rc;
	if (z->crew) {
		if ((rc = crew_wait(z, z->nslots - 1)) != CM_PGZ_OK)
			return rc;
	} else {
		while (z->submitted - z->written >= z->nslots)
			if ((rc = write_oldest(z, 1)) != CM_PGZ_OK)
				return rc;
	}
	job = &z->ring[z->submitted % z->nslots];
	if (!job->b.in && !(job->b.in = z->crew ? pool_take_in(z->crew) : malloc(DICT + CM_PGZ_BLOCK)))
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
	if (!z->crew) {
		z->filling = 1;
		return CM_PGZ_OK;
	}
	/* the input of the block before goes back now if it is deflated, else
	 * its worker gives it back (next_began) */
	pthread_mutex_lock(&z->mu);
	z->filling = 1;
	if (prev && prev->deflated) {
		give = prev->b.in;
		prev->b.in = NULL;
	}
	pthread_mutex_unlock(&z->mu);
	pool_give(z->crew, give, 1);
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
		return crew_wait(z, 0);
	while (z->written < z->submitted)
		if ((rc = write_oldest(z, 1)) != CM_PGZ_OK)
			return rc;
	return CM_PGZ_OK;
}
static void crew_forget(cm_pgz *z);

void cm_pgz_free(cm_pgz *z)
{
	size_t i;
	int t;
	if (!z)
		return;
	if (z->crew) {
		crew_forget(z);
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

/* Crew stream Z is being freed: its blocks still queued leave the queue,
 * and those being deflated, and a worker writing its blocks, are waited
 * for. */
static void crew_forget(cm_pgz *z)
{
	cm_pgz_crew *c = z->crew;
	struct job **pp = &c->head;
	int dropped = 0;
	pthread_mutex_lock(&c->mu);
	c->tail = NULL;
	while (*pp) {
		if ((*pp)->owner == z) {
			*pp = (*pp)->next;
			dropped++;
			c->queued--;
			pthread_cond_broadcast(&c->room);
		} else {
			c->tail = *pp;
			pp = &(*pp)->next;
		}
	}
	pthread_mutex_unlock(&c->mu);
	pthread_mutex_lock(&z->mu);
	z->busy -= dropped;
	while (z->busy || z->writing)
		pthread_cond_wait(&z->done, &z->mu);
	pthread_mutex_unlock(&z->mu);
}

/* Stop crew C's workers, join them, free C. */
static void crew_free(cm_pgz_crew *c)
{
	pthread_mutex_lock(&c->mu);
	c->quit = 1;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->mu);
	for (int t = 0; t < c->threads; t++)
		pthread_join(c->th[t], NULL);
	for (int t = 0; t < c->df_init; t++)
		cm_deflater_free(c->df[t]);
	for (size_t i = 0; i < c->nins; i++)
		free(c->ins[i]);
	for (size_t i = 0; i < c->nouts; i++)
		free(c->outs[i]);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->room);
	free(c->ins);
	free(c->outs);
	free(c->th);
	free(c->df);
	free(c);
}

cm_pgz_crew *cm_pgz_crew_new(int level, int threads)
{
	cm_pgz_crew *c;
	sigset_t all, saved;
	if (threads < 1 || !(c = calloc(1, sizeof *c)))
		return NULL;
	c->level = level;
	c->refs = 1;
	/* a benchmarking aid: the blocks written by the thread that hands
	 * them over, after it does, as before (cuptimerge(1)) */
	c->caller_writes = getenv("CUPTIMERGE_CREW_WRITE") && !strcmp(getenv("CUPTIMERGE_CREW_WRITE"), "0");
	c->cap = POOL_PER_WORKER * (size_t)threads;
	c->th = calloc((size_t)threads, sizeof *c->th);
	c->df = calloc((size_t)threads, sizeof *c->df);
	c->ins = calloc(c->cap, sizeof *c->ins);
	c->outs = calloc(c->cap, sizeof *c->outs);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->room, NULL);
	while (c->th && c->df && c->ins && c->outs && c->df_init < threads &&
	       (c->df[c->df_init] = cm_deflater_new(level)))
		c->df_init++;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	while (c->threads < c->df_init) {
		struct crew_arg *ca = malloc(sizeof *ca);
		if (!ca)
			break;
		*ca = (struct crew_arg){c, c->df[c->threads]};
		if (pthread_create(&c->th[c->threads], NULL, crew_worker, ca) != 0) {
			free(ca);
			break;
		}
		c->threads++;
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (!c->threads) { /* none: each stream gets workers of its own */
		crew_free(c);
		return NULL;
	}
	__atomic_add_fetch(&crew_totals.threads, (uint64_t)c->threads, __ATOMIC_RELAXED);
	return c;
}

void cm_pgz_crew_drop(cm_pgz_crew *c)
{
	int last;
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->mu);
	if (last)
		crew_free(c);
}

cm_pgz *cm_pgz_new_crew(cm_pgz_crew *crew, cm_pgz_sink sink, void *ctx)
{
	cm_pgz *z = cm_pgz_new(crew->level, crew->threads, sink, ctx);
	if (!z)
		return NULL;
	z->crew = crew;
	z->started = 1; /* never starts workers of its own */
	pthread_mutex_lock(&crew->mu);
	crew->refs++;
	pthread_mutex_unlock(&crew->mu);
	return z;
}

void cm_pgz_crew_stats(struct cm_pgz_crew_stats *st)
{
	st->threads = (int)__atomic_load_n(&crew_totals.threads, __ATOMIC_RELAXED);
	st->blocks = __atomic_load_n(&crew_totals.blocks, __ATOMIC_RELAXED);
	st->busy = (double)__atomic_load_n(&crew_totals.busy_ns, __ATOMIC_RELAXED) / 1e9;
	st->writing = (double)__atomic_load_n(&crew_totals.write_ns, __ATOMIC_RELAXED) / 1e9;
	st->idle = (double)__atomic_load_n(&crew_totals.idle_ns, __ATOMIC_RELAXED) / 1e9;
	st->room = (double)__atomic_load_n(&crew_totals.room_ns, __ATOMIC_RELAXED) / 1e9;
	st->slots = (double)__atomic_load_n(&crew_totals.slot_ns, __ATOMIC_RELAXED) / 1e9;
}
