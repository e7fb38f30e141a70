/* ocrew.c - the crew: worker threads that run the blocks of several
 * ordered pools (opool.c), the block queued first over all of them first.
 *
 * Why apart from the pool: the pool is a ring and its workers; the crew is
 * a scheduler over pools, used by the two readers of a merge that run side
 * by side (mergeprepare.c), so that neither's workers idle while the
 * other's are behind.  It runs a pool's blocks with the pool's own step
 * (cm_opool_run_next, opool_int.h), under one lock for every pool it serves
 * (the crew's, which a member pool takes for its own), so that a worker
 * sees every pool's queue at once.  With it, the testing aid that renices
 * a thread (cm_thread_nice_env, opool.h), which the crew's workers use. */
#define _GNU_SOURCE 1 /* syscall(SYS_gettid) */
#include "config.h"
#include "base/opool_int.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>

struct crew_arg {
	cm_ocrew *c;
	int i;
};

/* The crew's next block: of the pools that have one queued, the one
 * queued first (so each reader's blocks run at the pace its cutting
 * thread makes them, and neither waits behind the other's backlog); NULL
 * when none is queued.  Holding c->mu. */
static cm_opool *crew_pick(cm_ocrew *c)
{
	cm_opool *best = NULL;
	uint64_t best_seq = 0;
	for (int i = 0; i < c->npools; i++) {
		cm_opool *p = c->pools[i];
		struct slot *s = &p->slots[p->next % p->nslots];
		if (p->next != p->head && s->state == QUEUED && (!best || s->seq < best_seq)) {
			best = p;
			best_seq = s->seq;
		}
	}
	return best;
}

/* (opool.h) */
void cm_thread_nice_env(const char *name)
{
	const char *e = getenv(name);
	int n = e ? atoi(e) : 0;
	if (n >= 1 && n <= 19)
		(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), n);
}

/* The testing aid CUPTIMERGE_CREW_NICE=N (1-19): the crew's workers run at
 * that nice value, so that the cutting threads and the read-ahead threads,
 * fewer than the CPUs left them, win their CPUs back from the workers at
 * once (issue 30: on 16 CPUs a crew of 14 with two cutting and two
 * read-ahead threads, the window's cutting thread lost its CPU hundreds of
 * times a read). */
static void crew_nice(void) { cm_thread_nice_env("CUPTIMERGE_CREW_NICE"); }

static void *crew_worker(void *arg)
{
	struct crew_arg *ca = arg;
	cm_ocrew *c = ca->c;
	int i = ca->i;
	free(ca);
	cm_progress_thread_off();
	crew_nice();
	pthread_mutex_lock(&c->mu);
	for (;;) {
		cm_opool *p;
		double t = cm_now_s();
		while (!c->stop && !(p = crew_pick(c)))
			pthread_cond_wait(&c->work, &c->mu);
		if (c->stop)
			break;
		c->idle += cm_now_s() - t;
		cm_opool_run_next(p, p->wctx ? p->wctx[i] : NULL);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

cm_ocrew *cm_ocrew_new(int workers)
{
	cm_ocrew *c = cm_xcalloc(1, sizeof *c);
	c->nworkers = workers < 1 ? 1 : workers;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->work, NULL);
	c->th = cm_xcalloc((size_t)c->nworkers, sizeof *c->th);
	for (int i = 0; i < c->nworkers; i++) {
		struct crew_arg *ca = cm_xmalloc(sizeof *ca);
		ca->c = c;
		ca->i = i;
		if (pthread_create(&c->th[i], NULL, crew_worker, ca) != 0) {
			free(ca);
			break;
		}
		c->nthreads++;
	}
	if (!c->nthreads) {
		cm_ocrew_free(c);
		return NULL;
	}
	return c;
}

int cm_ocrew_workers(const cm_ocrew *c) { return c->nworkers; }

double cm_ocrew_idle(const cm_ocrew *c) { return c->idle; }

void cm_ocrew_free(cm_ocrew *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->mu);
	for (int i = 0; i < c->nthreads; i++)
		pthread_join(c->th[i], NULL);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->work);
	free(c->th);
	free(c);
}

cm_opool *cm_opool_new_crew(cm_ocrew *c, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx)
{
	cm_opool *p = cm_opool_new(1, 0, fn, wctx, sink, sctx);
	p->nworkers = c->nworkers;
	/* as cm_opool_new's ring for as many workers: each reader may have
	 * the whole crew once the other is done */
	free(p->slots);
	p->nslots = cm_opool_slots_for(p->nworkers, 0);
	p->slots = cm_xcalloc((size_t)p->nslots, sizeof *p->slots);
	p->nthreads = c->nthreads; /* the caller only fills slots and waits */
	p->crew = c;
	p->mu = &c->mu;
	p->work = &c->work;
	pthread_mutex_lock(&c->mu);
	if (c->npools == CREW_POOLS_MAX)
		abort(); /* a caller's bug: a fixed few readers share a crew */
	c->pools[c->npools++] = p;
	pthread_mutex_unlock(&c->mu);
	return p;
}
