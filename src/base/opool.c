/* opool.c - the ordered pool: a ring of slots, filled in order by the
 * caller, run by whichever worker is free, emptied in order by a worker.
 *
 * Slot states go EMPTY -> QUEUED (the caller filled it) -> RUNNING -> DONE
 * -> EMPTY (its result went to the sink).  Workers take slots in ring
 * order, so the oldest queued block always runs first.
 *
 * Who drains.  The sink is often the costly serial part (the window's
 * records written to a temporary file took a third of the splitting
 * thread's time), and the caller is the one thread that cannot be
 * parallel: it cuts the document.  So the worker that finishes the oldest
 * block hands it to the sink, and every later block already done, while
 * the others go on working; one worker drains at a time (the draining
 * flag), so the sink still sees the results one by one and in order.  The
 * caller only fills slots and waits for free ones; or, when it helps (on
 * few cores, cm_opool_new's CALLER_HELPS), it runs the oldest queued block
 * instead of waiting, with a context of its own, and drains after it as a
 * worker does.  A worker never prints: the sink's errors are deferred like
 * the blocks' and settled by the caller.  Without threads the caller does
 * it all, as before.
 *
 * The crew, worker threads that several pools share (cm_opool_new_crew),
 * is ocrew.c: a scheduler over pools, apart from the ring it runs; the
 * two share opool_int.h. */
#define _GNU_SOURCE 1 /* sched_getaffinity, CPU_COUNT */
#include "config.h"
#include "base/opool_int.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

struct worker_arg {
	cm_opool *p;
	int i;
};

/* The block of slot S that began to run at SINCE is done: counted, in
 * all and in its class (under p->mu, or with no threads). */
static void ran(cm_opool *p, const struct slot *s, double since)
{
	double d = cm_now_s() - since;
	p->st.busy += d;
	p->st.blocks++;
	if (d > p->st.longest)
		p->st.longest = d;
	p->cst[s->cls].busy += d;
	p->cst[s->cls].blocks++;
}

/* The result of slot S, the oldest, was handed on in T seconds: counted,
 * in all and in its class, and the slot freed (under p->mu, or with no
 * threads). */
static void handed(cm_opool *p, struct slot *s, double t)
{
	p->st.sink += t;
	if (t > p->st.sink_longest)
		p->st.sink_longest = t;
	p->cst[s->cls].sink += t;
	s->state = EMPTY;
	p->tail++;
}

/* The oldest slot S is done: hand its result on (or note its failure).
 * On a worker thread (with the pool's lock released): errors go to the
 * pool's fail_diag for the caller; on the caller's own, they are printed. */
static void take_result(cm_opool *p, struct slot *s, int on_worker)
{
	if (p->failed) {
		cm_diag_drop(&s->diag); /* after the first failure: no fault of the run */
	} else if (s->rc < 0) {
		if (s->rc != -1)
			cm_diag_drop(&s->diag);
		else if (on_worker)
			p->fail_diag = s->diag; /* the first failure: the caller settles it */
		else
			cm_diag_settle(&s->diag);
		__atomic_store_n(&p->failed, s->rc, __ATOMIC_RELEASE); /* after fail_diag */
	} else {
		cm_diag_slot *was = on_worker ? cm_diag_defer_swap(&p->fail_diag) : NULL;
		int rc;
		pthread_mutex_lock(&p->sink_mu);
		p->sink_cls = s->cls;
		rc = p->sink(p->sctx, &s->out);
		pthread_mutex_unlock(&p->sink_mu);
		if (on_worker)
			cm_diag_defer_swap(was);
		if (rc < 0)
			__atomic_store_n(&p->failed, -1, __ATOMIC_RELEASE);
		else if (on_worker)
			cm_diag_drop(&p->fail_diag); /* a warning, not the run's failure */
	}
	memset(&s->diag, 0, sizeof s->diag);
}

/* A worker (holding p->mu) just finished a block: if no one is draining and
 * the oldest block is done, drain every done block from the oldest on.
 * Returns holding p->mu. */
static void drain_done(cm_opool *p)
{
	if (p->draining)
		return;
	p->draining = 1;
	while (p->tail != p->head && p->slots[p->tail % p->nslots].state == DONE) {
		struct slot *s = &p->slots[p->tail % p->nslots];
		double t = cm_now_s();
		pthread_mutex_unlock(p->mu);
		take_result(p, s, 1);
		pthread_mutex_lock(p->mu);
		handed(p, s, cm_now_s() - t);
		pthread_cond_broadcast(&p->done); /* the caller may wait for a slot */
	}
	p->draining = 0;
}

/* Run the oldest queued block of P (holding P's lock, which is released
 * while FN runs) with the worker context WCTX; then drain.  Returns
 * holding the lock. */
void cm_opool_run_next(cm_opool *p, void *wctx)
{
	double t1 = cm_now_s();
	struct slot *s = &p->slots[p->next++ % p->nslots];
	s->state = RUNNING;
	pthread_mutex_unlock(p->mu);
	s->out.len = 0;
	cm_diag_defer(&s->diag);
	s->rc = __atomic_load_n(&p->failed, __ATOMIC_RELAXED) ? -1 : p->fn(wctx, &s->in, &s->out);
	if (p->done_fn)
		p->done_fn(&s->in);
	cm_diag_defer(NULL);
	pthread_mutex_lock(p->mu);
	ran(p, s, t1);
	s->state = DONE;
	drain_done(p);
}

static void *worker(void *arg)
{
	struct worker_arg *wa = arg;
	cm_opool *p = wa->p;
	void *wctx = p->wctx ? p->wctx[wa->i] : NULL;
	free(wa);
	cm_progress_thread_off();
	pthread_mutex_lock(p->mu);
	for (;;) {
		double t = cm_now_s();
		while (!p->stop && (p->next == p->head || p->slots[p->next % p->nslots].state != QUEUED))
			pthread_cond_wait(p->work, p->mu);
		if (p->stop)
			break;
		t = cm_now_s() - t;
		p->st.idle += t;
		p->cst[p->slots[p->next % p->nslots].cls].idle += t; /* (the block that ended the wait) */
		cm_opool_run_next(p, wctx);
	}
	pthread_mutex_unlock(p->mu);
	return NULL;
}

/* The slots of a pool of WORKERS: a slot per worker and a few more, so
 * that a slow block does not stall the others; not twice the workers,
 * which on a big machine costs memory (every slot keeps its buffers) and
 * gained nothing measured then.  CUPTIMERGE_POOL_SLOTS, a testing aid
 * (bench/dev-pfcpu10.sh measures the .pftrace's pool with more on 16
 * CPUs), asks for more: at most twice the workers and 8, the ring the
 * .pftrace's lanes keep for the pool's batches (pfstream.c, pflaneq.c);
 * so does WANT (cm_opool_new_ahead's, 0: none). */
int cm_opool_slots_for(int workers, int want)
{
	int n = workers + (workers < 4 ? workers : 4);
	const char *env = getenv("CUPTIMERGE_POOL_SLOTS");
	if (env && *env && atoi(env) > want)
		want = atoi(env);
	if (want > 2 * workers + 8)
		want = 2 * workers + 8;
	return want > n ? want : n;
}

/* cm_opool_new's and cm_opool_new_ahead's: SLOTS asked for (0: none). */
static cm_opool *pool_new(int workers, int caller_helps, int slots, cm_opool_fn fn, void **wctx,
			  cm_opool_sink sink, void *sctx)
{
	cm_opool *p = cm_xcalloc(1, sizeof *p);
	int threads;
	p->fn = fn;
	p->sink = sink;
	p->sctx = sctx;
	p->wctx = wctx;
	p->nworkers = workers < 1 ? 1 : workers;
	p->nslots = cm_opool_slots_for(p->nworkers, slots);
	p->born = cm_now_s();
	p->slots = cm_xcalloc((size_t)p->nslots, sizeof *p->slots);
	pthread_mutex_init(&p->own_mu, NULL);
	pthread_mutex_init(&p->sink_mu, NULL);
	pthread_cond_init(&p->own_work, NULL);
	p->mu = &p->own_mu;
	p->work = &p->own_work;
	pthread_cond_init(&p->done, NULL);
	p->caller_helps = caller_helps && p->nworkers > 1;
	threads = p->nworkers - p->caller_helps;
	if (threads > 1 || p->caller_helps) {
		p->th = cm_xcalloc((size_t)threads, sizeof *p->th);
		for (int i = 0; i < threads; i++) {
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
	if (!p->nthreads)
		p->caller_helps = 0; /* no thread could be made: the caller does it all, with wctx[0] */
	return p;
}

cm_opool *cm_opool_new(int workers, int caller_helps, cm_opool_fn fn, void **wctx, cm_opool_sink sink,
		       void *sctx)
{
	return pool_new(workers, caller_helps, 0, fn, wctx, sink, sctx);
}

cm_opool *cm_opool_new_ahead(int workers, int slots, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx)
{
	return pool_new(workers, 0, slots, fn, wctx, sink, sctx);
}
/* The caller (holding p->mu) runs the oldest queued block itself, with the
 * last worker's context, then drains as a worker would (its errors go to
 * fail_diag, settled by the caller's next call).  1 when it ran one, 0 when
 * none was queued.  Returns holding p->mu. */
static int caller_run(cm_opool *p)
{
	struct slot *s;
	cm_diag_slot *was;
	double t;
	if (!p->caller_helps || p->next == p->head || p->slots[p->next % p->nslots].state != QUEUED)
		return 0;
	t = cm_now_s();
	s = &p->slots[p->next++ % p->nslots];
	s->state = RUNNING;
	pthread_mutex_unlock(p->mu);
	s->out.len = 0;
	was = cm_diag_defer_swap(&s->diag); /* the caller may defer its own errors: kept */
	s->rc = __atomic_load_n(&p->failed, __ATOMIC_RELAXED) ? -1
		: p->fn(p->wctx ? p->wctx[p->nworkers - 1] : NULL, &s->in, &s->out);
	if (p->done_fn)
		p->done_fn(&s->in);
	cm_diag_defer_swap(was);
	pthread_mutex_lock(p->mu);
	ran(p, s, t);
	s->state = DONE;
	drain_done(p);
	return 1;
}

/* The caller (holding p->mu) waits for a block to be drained. */
static void caller_wait(cm_opool *p)
{
	double t = cm_now_s();
	pthread_cond_wait(&p->done, p->mu);
	t = cm_now_s() - t;
	p->st.waited += t;
	p->cst[p->cls].waited += t;
}

/* Without threads: the caller hands the oldest result on.  1 when one was
 * handed over, 0 when none is queued. */
static int drain_one(cm_opool *p)
{
	struct slot *s;
	double t;
	if (p->tail == p->head)
		return 0;
	s = &p->slots[p->tail % p->nslots];
	t = cm_now_s();
	take_result(p, s, 0);
	handed(p, s, cm_now_s() - t);
	return 1;
}

/* On the caller's thread, once the pool has failed: print the failure's
 * error (settling it again prints nothing: diag.h keeps the first). */
static int settle(cm_opool *p)
{
	if (p->failed)
		cm_diag_settle(&p->fail_diag);
	return p->failed;
}

int cm_opool_put(cm_opool *p, cm_buf *in)
{
	struct slot *s;
	cm_buf t;
	if (!p->nthreads) {
		while (drain_one(p))
			;
	} else {
		/* the slot to fill must be free: the workers drain; a caller
		 * that helps runs a queued block rather than wait */
		pthread_mutex_lock(p->mu);
		while (p->head - p->tail >= (size_t)p->nslots)
			if (!caller_run(p))
				caller_wait(p);
		pthread_mutex_unlock(p->mu);
	}
	if (__atomic_load_n(&p->failed, __ATOMIC_ACQUIRE)) /* then fail_diag is written */
		return settle(p);
	s = &p->slots[p->head % p->nslots];
	t = s->in;
	s->in = *in;
	t.len = 0;
	*in = t;
	s->cls = p->cls; /* (before the workers can see it: under mu below) */
	if (!p->nthreads) {
		double t0 = cm_now_s();
		s->out.len = 0;
		s->rc = p->failed ? -1 : p->fn(p->wctx ? p->wctx[0] : NULL, &s->in, &s->out);
		if (p->done_fn)
			p->done_fn(&s->in);
		ran(p, s, t0);
		s->state = DONE;
		p->head++;
		drain_one(p);
	} else {
		pthread_mutex_lock(p->mu);
		s->state = QUEUED;
		if (p->crew)
			s->seq = p->crew->seq++;
		p->head++;
		pthread_cond_signal(p->work);
		pthread_mutex_unlock(p->mu);
	}
	return p->nthreads ? 0 : p->failed;
}

int cm_opool_finish(cm_opool *p)
{
	int rc;
	if (p->nthreads) {
		pthread_mutex_lock(p->mu);
		while (p->tail != p->head) /* every block drained */
			if (!caller_run(p))
				caller_wait(p);
		if (p->crew) { /* the crew goes on; the pool leaves it */
			cm_ocrew *c = p->crew;
			for (int i = 0; i < c->npools; i++)
				if (c->pools[i] == p)
					c->pools[i] = c->pools[--c->npools];
			pthread_mutex_unlock(p->mu);
		} else {
			p->stop = 1;
			pthread_cond_broadcast(p->work);
			pthread_mutex_unlock(p->mu);
			for (int i = 0; i < p->nthreads; i++)
				pthread_join(p->th[i], NULL);
		}
	}
	while (drain_one(p))
		;
	rc = settle(p);
	if (p->st_out) {
		p->st_out->waited += p->st.waited;
		p->st_out->idle += p->st.idle;
		p->st_out->busy += p->st.busy;
		p->st_out->sink += p->st.sink;
		p->st_out->blocks += p->st.blocks;
		if (p->st.longest > p->st_out->longest)
			p->st_out->longest = p->st.longest;
		if (p->st.sink_longest > p->st_out->sink_longest)
			p->st_out->sink_longest = p->st.sink_longest;
		p->st_out->lived += cm_now_s() - p->born;
	}
	for (int k = 0; p->cst_out && k < CM_OPOOL_CLASSES; k++) {
		p->cst_out[k].waited += p->cst[k].waited;
		p->cst_out[k].idle += p->cst[k].idle;
		p->cst_out[k].busy += p->cst[k].busy;
		p->cst_out[k].sink += p->cst[k].sink;
		p->cst_out[k].blocks += p->cst[k].blocks;
	}
	for (int i = 0; i < p->nslots; i++) {
		cm_buf_free(&p->slots[i].in);
		cm_buf_free(&p->slots[i].out);
	}
	pthread_mutex_destroy(&p->own_mu);
	pthread_mutex_destroy(&p->sink_mu);
	pthread_cond_destroy(&p->own_work);
	pthread_cond_destroy(&p->done);
	free(p->slots);
	free(p->th);
	free(p);
	return rc;
}

/* cm_opool_run_each's work and sink: the block holds the part's number. */
struct run_each {
	int (*fn)(void *part);
	unsigned char *parts;
	size_t size;
};

static int run_one(void *wctx, const cm_buf *in, cm_buf *out)
{
	const struct run_each *r = wctx;
	int i;
	(void)out;
	memcpy(&i, in->p, sizeof i);
	return r->fn(r->parts + (size_t)i * r->size);
}

static int run_none(void *sctx, cm_buf *out)
{
	(void)sctx;
	(void)out;
	return 0;
}

int cm_opool_run_each(int n, int (*fn)(void *part), void *parts, size_t size)
{
	struct run_each r = {fn, parts, size};
	void **ctx = cm_xcalloc((size_t)(n > 0 ? n : 1), sizeof *ctx);
	cm_opool *p;
	cm_buf b = {0};
	int rc = 0, frc;
	for (int i = 0; i < n; i++)
		ctx[i] = &r;
	p = cm_opool_new(n > 0 ? n : 1, 0, run_one, ctx, run_none, NULL);
	for (int i = 0; i < n && rc == 0; i++) {
		cm_buf_put(&b, &i, sizeof i);
		rc = cm_opool_put(p, &b);
	}
	frc = cm_opool_finish(p);
	cm_buf_free(&b);
	free(ctx);
	return rc < 0 ? rc : frc;
}

void cm_opool_set_stats(cm_opool *p, cm_opool_stats *st) { p->st_out = st; }

void cm_opool_set_class_stats(cm_opool *p, cm_opool_stats *st) { p->cst_out = st; }

int cm_opool_sink_class(const cm_opool *p) { return p->sink_cls; }

void cm_opool_set_class(cm_opool *p, int cls)
{
	if (cls >= 0 && cls < CM_OPOOL_CLASSES)
		p->cls = cls;
}

void cm_opool_set_done(cm_opool *p, void (*done)(cm_buf *in)) { p->done_fn = done; }

void cm_opool_lock(cm_opool *p) { pthread_mutex_lock(&p->sink_mu); }
void cm_opool_unlock(cm_opool *p) { pthread_mutex_unlock(&p->sink_mu); }

int cm_opool_cpus_available(void)
{
	cpu_set_t set;
	long n;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}
