/* pgzcrew.c - one crew of deflate workers shared by several gzip streams:
 * the files of --split, each a gzip member of its own.
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
 * Against pgzip.c's one-stream ring, in short: one queue for the blocks of
 * every stream (not a stream's own workers taking its own sequence), the
 * slots' buffers lent from a pool (not a ring allocated for good), the
 * blocks written by the worker that finishes the next in order (not by
 * the caller), and a crew reference counted by its streams (the last to
 * go stops the workers).  What stays the same: a crew's stream is a cm_pgz
 * (pgzip_int.h) with the same ring of slots, filled by pgzip.c's
 * cm_pgz_write, its dictionary copied by pgzip.c's begin_block, its
 * header, blocks and trailer written by cm_pgz_emit, each block deflated
 * by deflater.c; pgzip.c calls the crew's side (pgzip_int.h) where z->crew
 * is set.
 *
 * Like pgzip.c's, the crew's workers never print and never exit, and run
 * with every signal blocked. */
#include "config.h"
#include "io/pgzip_int.h"
#include "base/diag.h" /* cm_now_s */

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

unsigned char *cm_pgz_crew_take_in(cm_pgz_crew *c)
{
	unsigned char *p = NULL;
	pthread_mutex_lock(&c->mu);
	if (c->nins)
		p = c->ins[--c->nins];
	pthread_mutex_unlock(&c->mu);
	return p ? p : malloc(DICT + CM_PGZ_BLOCK);
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
		rc = cm_pgz_emit(z, job);
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
		 * dictionary; else cm_pgz_crew_began gives it back then): a file the
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

/* Hand block JOB of crew stream Z to the crew (as pgzip.c's submit hands a
 * block to its own workers).  Waits while the crew has a block queued for each
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

int cm_pgz_crew_wait(cm_pgz *z, uint64_t more)
{
	int rc;
	pthread_mutex_lock(&z->mu);
	for (double t0 = 0;;) {
		if (z->crew->caller_writes) /* the testing aid: this thread writes */
			crew_write_ready(z);
		if (z->werr || z->submitted - z->written <= more) {
			if (t0 > 0) {
				double d = cm_now_s() - t0;
				add_s(&crew_totals.slot_ns, d);
				z->wait_s += d; /* (cm_pgz_waits: the caller's own) */
			}
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

int cm_pgz_crew_submit(cm_pgz *z, struct job *job)
{
	crew_push(z, job);
	/* the testing aid: what is done written here, as before */
	return z->crew->caller_writes ? cm_pgz_crew_wait(z, UINT64_MAX) : CM_PGZ_OK;
}

void cm_pgz_crew_began(cm_pgz *z, struct job *prev)
{
	unsigned char *give = NULL;
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
}

void cm_pgz_crew_forget(cm_pgz *z)
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
