/* pfseqth.c - the Perfetto transcoder's sequential part (pfseg.c's steps
 * 1 and 2: the records placed in order) on a thread of its own.
 *
 * The ordered pool (base/opool.c) hands each result to its sink on the
 * worker that finished the oldest block, one at a time.  On 16 CPUs
 * (BENCHMARKS.md, 2026-12-05) the .pftrace's sequential part ran 0.31-0.41
 * s of CPU in 0.49-0.67 s there, the pool's ring full behind it while the
 * workers idled: on a worker it shares the pool's lock with sixteen
 * others, moves from core to core with whichever worker drains (its
 * tables cold in each core's cache), and competes for the CPUs with the
 * render's threads.  Here it stays on one thread: the pool's sink only
 * swaps the batch's buffer into a short queue (no byte copied) and goes
 * back to work.  The order is the pool's, so the bytes are the same. */
#include "config.h"
#include "pftrace/pfseqth.h"
#include "base/diag.h"

#include <pthread.h>
#include <stdlib.h>

struct cm_pfseqth {
	int (*fn)(void *ctx, cm_buf *b);
	void *ctx;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t put, take;
	cm_buf q[CM_PFSEQTH_QUEUE]; /* queued (or being worked through), from head */
	size_t head, n;
	int end, failed;
	cm_diag_slot slot; /* FN's error, on this thread */
	double busy, idle;
};

/* The thread: the buffers worked through, in order, until the end. */
static void *seq_main(void *arg)
{
	cm_pfseqth *s = arg;
	cm_diag_defer(&s->slot);
	cm_progress_thread_off();
	pthread_mutex_lock(&s->mu);
	for (;;) {
		cm_buf *b;
		double t0 = cm_now_s();
		while (!s->n && !s->end)
			pthread_cond_wait(&s->take, &s->mu);
		s->idle += cm_now_s() - t0;
		if (!s->n)
			break;
		b = &s->q[s->head];
		pthread_mutex_unlock(&s->mu);
		if (!__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE)) {
			t0 = cm_now_s();
			if (s->fn(s->ctx, b) < 0)
				__atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
			s->busy += cm_now_s() - t0;
		}
		pthread_mutex_lock(&s->mu);
		b->len = 0;
		s->head = (s->head + 1) % CM_PFSEQTH_QUEUE;
		s->n--;
		pthread_cond_signal(&s->put);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

cm_pfseqth *cm_pfseqth_new(int (*fn)(void *ctx, cm_buf *b), void *ctx)
{
	cm_pfseqth *s = cm_xcalloc(1, sizeof *s);
	s->fn = fn;
	s->ctx = ctx;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->put, NULL);
	pthread_cond_init(&s->take, NULL);
	if (pthread_create(&s->th, NULL, seq_main, s)) {
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->put);
		pthread_cond_destroy(&s->take);
		free(s);
		return NULL;
	}
	return s;
}

int cm_pfseqth_put(cm_pfseqth *s, cm_buf *b)
{
	cm_buf tmp;
	size_t k;
	pthread_mutex_lock(&s->mu);
	while (s->n == CM_PFSEQTH_QUEUE)
		pthread_cond_wait(&s->put, &s->mu);
	k = (s->head + s->n) % CM_PFSEQTH_QUEUE;
	tmp = s->q[k];
	s->q[k] = *b; /* the slot's buffer, worked through, is filled next */
	*b = tmp;
	b->len = 0;
	s->n++;
	pthread_cond_signal(&s->take);
	pthread_mutex_unlock(&s->mu);
	return __atomic_load_n(&s->failed, __ATOMIC_ACQUIRE) ? -1 : 0;
}

int cm_pfseqth_stop(cm_pfseqth *s, double *busy, double *idle)
{
	int i, failed;
	if (!s)
		return 0;
	pthread_mutex_lock(&s->mu);
	s->end = 1;
	pthread_cond_signal(&s->take);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->th, NULL);
	cm_diag_settle(&s->slot);
	*busy += s->busy;
	*idle += s->idle;
	failed = s->failed;
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->put);
	pthread_cond_destroy(&s->take);
	for (i = 0; i < CM_PFSEQTH_QUEUE; i++)
		cm_buf_free(&s->q[i]);
	free(s);
	return failed ? -1 : 0;
}
