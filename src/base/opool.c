/* opool.c - the ordered pool: a ring of slots, filled in order by the
 * caller, run by whichever worker is free, emptied in order by the caller.
 *
 * Slot states go EMPTY -> QUEUED (the caller filled it) -> RUNNING -> DONE
 * -> EMPTY (the caller passed the result to the sink).  Workers take slots
 * in ring order, so the oldest queued block always runs first and the
 * caller never waits long for the slot it must drain next. */
#define _GNU_SOURCE 1 /* sched_getaffinity, CPU_COUNT */
#include "config.h"
#include "base/opool.h"
#include "base/diag.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

enum { EMPTY, QUEUED, RUNNING, DONE };

struct slot {
	int state, rc;
	cm_buf in, out;
	cm_diag_slot diag; /* the block's error, from a worker thread */
};

struct cm_opool {
	cm_opool_fn fn;
	cm_opool_sink sink;
	void *sctx;
	void **wctx;
	int nworkers, nthreads, nslots;
	struct slot *slots;
	size_t head;  /* next slot the caller fills (counts up; slot = head % nslots) */
	size_t tail;  /* next slot the caller drains */
	size_t next;  /* next slot a worker takes */
	int failed;   /* the first failing block's result (-1 or below), or 0 */
	int stop;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	pthread_t *th;
};

struct worker_arg {
	cm_opool *p;
	int i;
};

static void *worker(void *arg)
{
	struct worker_arg *wa = arg;
	cm_opool *p = wa->p;
	void *wctx = p->wctx ? p->wctx[wa->i] : NULL;
	free(wa);
	cm_progress_thread_off();
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct slot *s;
		while (!p->stop && (p->next == p->head || p->slots[p->next % p->nslots].state != QUEUED))
			pthread_cond_wait(&p->work, &p->mu);
		if (p->stop)
			break;
		s = &p->slots[p->next++ % p->nslots];
		s->state = RUNNING;
		pthread_mutex_unlock(&p->mu);
		s->out.len = 0;
		cm_diag_defer(&s->diag);
		s->rc = __atomic_load_n(&p->failed, __ATOMIC_RELAXED) ? -1 : p->fn(wctx, &s->in, &s->out);
		cm_diag_defer(NULL);
		pthread_mutex_lock(&p->mu);
		s->state = DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

cm_opool *cm_opool_new(int workers, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx)
{
	cm_opool *p = cm_xcalloc(1, sizeof *p);
	p->fn = fn;
	p->sink = sink;
	p->sctx = sctx;
	p->wctx = wctx;
	p->nworkers = workers < 1 ? 1 : workers;
	/* a slot per worker and a few more, so that a slow block does not
	 * stall the others: not twice the workers, which on a big machine
	 * costs memory (every slot keeps its buffers) and gains nothing */
	p->nslots = p->nworkers + (p->nworkers < 4 ? p->nworkers : 4);
	p->slots = cm_xcalloc((size_t)p->nslots, sizeof *p->slots);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	if (p->nworkers > 1) {
		p->th = cm_xcalloc((size_t)p->nworkers, sizeof *p->th);
		for (int i = 0; i < p->nworkers; i++) {
			struct worker_arg *wa = cm_xmalloc(sizeof *wa);
			wa->p = p;
			wa->i = i;
			if (pthread_create(&p->th[i], NULL, worker, wa) != 0) {
				free(wa);
				break;
			}
			p->nthreads++;
		}
	}
	return p;
}

/* Hand the oldest result to the sink (waiting for it when WAIT); 1 when one
 * was handed over, 0 when none was ready (or none is queued). */
static int drain_one(cm_opool *p, int wait)
{
	struct slot *s;
	int rc;
	if (p->tail == p->head)
		return 0;
	s = &p->slots[p->tail % p->nslots];
	if (p->nthreads) {
		pthread_mutex_lock(&p->mu);
		while (wait && s->state != DONE)
			pthread_cond_wait(&p->done, &p->mu);
		rc = s->state == DONE;
		pthread_mutex_unlock(&p->mu);
		if (!rc)
			return 0;
	}
	if (p->failed) {
		cm_diag_drop(&s->diag); /* after the first failure: no fault of the run */
	} else if (s->rc < 0) {
		if (s->rc == -1)
			cm_diag_settle(&s->diag);
		else
			cm_diag_drop(&s->diag);
		__atomic_store_n(&p->failed, s->rc, __ATOMIC_RELAXED);
	} else if (p->sink(p->sctx, &s->out) < 0) {
		__atomic_store_n(&p->failed, -1, __ATOMIC_RELAXED);
	}
	memset(&s->diag, 0, sizeof s->diag);
	s->state = EMPTY;
	p->tail++;
	return 1;
}

int cm_opool_put(cm_opool *p, cm_buf *in)
{
	struct slot *s;
	cm_buf t;
	if (p->failed)
		return p->failed;
	/* the slot to fill must be free: drain the oldest until it is */
	while (p->head - p->tail >= (size_t)p->nslots)
		drain_one(p, 1);
	while (drain_one(p, 0)) /* and hand on whatever else is ready */
		;
	s = &p->slots[p->head % p->nslots];
	t = s->in;
	s->in = *in;
	t.len = 0;
	*in = t;
	if (!p->nthreads) {
		s->out.len = 0;
		s->rc = p->failed ? -1 : p->fn(p->wctx ? p->wctx[0] : NULL, &s->in, &s->out);
		s->state = DONE;
		p->head++;
		drain_one(p, 1);
	} else {
		pthread_mutex_lock(&p->mu);
		s->state = QUEUED;
		p->head++;
		pthread_cond_signal(&p->work);
		pthread_mutex_unlock(&p->mu);
	}
	return p->failed;
}

int cm_opool_finish(cm_opool *p)
{
	int rc;
	while (drain_one(p, 1))
		;
	if (p->nthreads) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_broadcast(&p->work);
		pthread_mutex_unlock(&p->mu);
		for (int i = 0; i < p->nthreads; i++)
			pthread_join(p->th[i], NULL);
	}
	rc = p->failed;
	for (int i = 0; i < p->nslots; i++) {
		cm_buf_free(&p->slots[i].in);
		cm_buf_free(&p->slots[i].out);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p->slots);
	free(p->th);
	free(p);
	return rc;
}

int cm_cpus_available(void)
{
	cpu_set_t set;
	long n;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}
