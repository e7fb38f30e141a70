/* pfpass.c - the Perfetto transcoder's passer thread: the file's writes
 * (the output's sink: write(2), or the gzip compressor's queue) off the
 * sequential part's thread, which at -j 16 bounds the output (pfseg.c);
 * and, before them, the packets of each batch written from what the
 * sequential part worked out (pfseg.c's step 3), so that it only works
 * out what needs order.  A ring of buffers and batches, filled by
 * swapping: no byte is copied. */
#include "config.h"
#include "pftrace/pfpass.h"
#include "pftrace/pfevent.h"
#include "base/diag.h"

#include <pthread.h>
#include <stdlib.h>

/* Buffers queued at most. */
#define PASS_QUEUE 4

struct cm_pfpass {
	int (*sink)(void *ctx, const void *p, size_t n);
	void *ctx;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t put, take;
	cm_buf q[PASS_QUEUE]; /* queued (or being passed on), from head */
	struct cm_pfwrite w[PASS_QUEUE]; /* each one's batch to write first */
	int has_w[PASS_QUEUE];
	size_t head, n;
	int end, failed;
	cm_diag_slot slot; /* the sink's error, on this thread */
	double passed, wrote, waited;
};

/* The thread: the buffers passed on, in order, until the end. */
static void *pass_main(void *arg)
{
	cm_pfpass *p = arg;
	cm_diag_defer(&p->slot);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		cm_buf *b;
		while (!p->n && !p->end)
			pthread_cond_wait(&p->take, &p->mu);
		if (!p->n)
			break;
		b = &p->q[p->head];
		pthread_mutex_unlock(&p->mu);
		if (p->has_w[p->head] && !__atomic_load_n(&p->failed, __ATOMIC_ACQUIRE)) {
			double t0 = cm_now_s();
			cm_pfseg_write(&p->w[p->head], b);
			p->wrote += cm_now_s() - t0;
		}
		if (!__atomic_load_n(&p->failed, __ATOMIC_ACQUIRE)) {
			double t0 = cm_now_s();
			if (p->sink(p->ctx, b->p, b->len) < 0)
				__atomic_store_n(&p->failed, 1, __ATOMIC_RELEASE);
			p->passed += cm_now_s() - t0;
		}
		pthread_mutex_lock(&p->mu);
		b->len = 0;
		p->head = (p->head + 1) % PASS_QUEUE;
		p->n--;
		pthread_cond_signal(&p->put);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

cm_pfpass *cm_pfpass_new(int (*sink)(void *ctx, const void *p, size_t n), void *ctx)
{
	cm_pfpass *p = cm_xcalloc(1, sizeof *p);
	p->sink = sink;
	p->ctx = ctx;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->put, NULL);
	pthread_cond_init(&p->take, NULL);
	if (pthread_create(&p->th, NULL, pass_main, p)) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->put);
		pthread_cond_destroy(&p->take);
		free(p);
		return NULL;
	}
	return p;
}

/* cm_pfpass_put's and cm_pfpass_put_batch's work (W NULL: none). */
static int put(cm_pfpass *p, cm_buf *b, struct cm_pfwrite *w)
{
	double t = cm_now_s();
	cm_buf tmp;
	size_t k;
	pthread_mutex_lock(&p->mu);
	while (p->n == PASS_QUEUE)
		pthread_cond_wait(&p->put, &p->mu);
	p->waited += cm_now_s() - t;
	k = (p->head + p->n) % PASS_QUEUE;
	tmp = p->q[k];
	p->q[k] = *b; /* the slot's buffer, passed on, is filled next */
	*b = tmp;
	b->len = 0;
	p->has_w[k] = w != NULL;
	if (w) { /* and its batch's buffers, written */
		struct cm_pfwrite was = p->w[k];
		p->w[k] = *w;
		*w = was;
		w->rec.len = w->places.len = w->jobs.len = w->cvals.len = 0;
	}
	p->n++;
	pthread_cond_signal(&p->take);
	pthread_mutex_unlock(&p->mu);
	return __atomic_load_n(&p->failed, __ATOMIC_ACQUIRE) ? -1 : 0;
}

int cm_pfpass_put(cm_pfpass *p, cm_buf *b) { return put(p, b, NULL); }

int cm_pfpass_full(cm_pfpass *p)
{
	int full;
	pthread_mutex_lock(&p->mu);
	full = p->n == PASS_QUEUE;
	pthread_mutex_unlock(&p->mu);
	return full;
}

int cm_pfpass_put_batch(cm_pfpass *p, cm_buf *b, struct cm_pfwrite *w) { return put(p, b, w); }

int cm_pfpass_stop(cm_pfpass *p, double *passed, double *wrote, double *waited)
{
	int i, failed;
	if (!p)
		return 0;
	pthread_mutex_lock(&p->mu);
	p->end = 1;
	pthread_cond_signal(&p->take);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	cm_diag_settle(&p->slot);
	*passed += p->passed;
	*wrote += p->wrote;
	if (waited)
		*waited += p->waited;
	failed = p->failed;
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->put);
	pthread_cond_destroy(&p->take);
	for (i = 0; i < PASS_QUEUE; i++) {
		cm_buf_free(&p->q[i]);
		cm_pfwrite_free(&p->w[i]);
	}
	free(p);
	return failed ? -1 : 0;
}
