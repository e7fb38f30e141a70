/* pfcrew.c - the crew of threads that places the lanes' shards of each
 * batch (pfbatch.c): made once, with the first batch that needs it, and
 * kept to the end.  A thread made per shard and batch cost more than the
 * placing: 2,400 threads made for the 160 batches of a 167 MB merge at
 * -j 16, about 0.1 s of the sink's thread.  Member 0 is the caller's
 * thread (the sink's); cm_pfcrew_go runs the others once each, and the
 * caller goes on with its own work until cm_pfcrew_wait. */
#include "config.h"
#include "pftrace/pfevent.h"

#include <pthread.h>
#include <stdlib.h>

struct cm_pfcrew {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned gen;    /* a round begins: the members run */
	int pending;     /* members still running this round */
	int stop, n;     /* n: members, the caller's included */
	double busy;     /* seconds the members ran FN, summed (for -v) */
	cm_pfcrew_fn fn;
	void *arg;
	pthread_t th[CM_PF_SHARDS];
	struct member {
		struct cm_pfcrew *crew;
		int k;
	} m[CM_PF_SHARDS];
};

/* A member's thread: FN once a round, until the crew stops. */
static void *member_main(void *arg)
{
	struct member *m = arg;
	struct cm_pfcrew *w = m->crew;
	unsigned seen = 0;
	double t;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->gen == seen && !w->stop)
			pthread_cond_wait(&w->go, &w->mu);
		if (w->stop)
			break;
		seen = w->gen;
		pthread_mutex_unlock(&w->mu);
		t = cm_now_s();
		w->fn(w->arg, m->k);
		t = cm_now_s() - t;
		pthread_mutex_lock(&w->mu);
		w->busy += t;
		if (--w->pending == 0)
			pthread_cond_signal(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct cm_pfcrew *cm_pfcrew_new(int n, cm_pfcrew_fn fn, void *arg)
{
	struct cm_pfcrew *w = cm_xcalloc(1, sizeof *w);
	int k;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->go, NULL);
	pthread_cond_init(&w->done, NULL);
	w->fn = fn;
	w->arg = arg;
	w->n = 1;
	for (k = 1; k < n && k < CM_PF_SHARDS; k++) {
		w->m[k].crew = w;
		w->m[k].k = k;
		if (pthread_create(&w->th[k], NULL, member_main, &w->m[k]))
			break;
		w->n++;
	}
	if (w->n == 1) {
		cm_pfcrew_free(w);
		return NULL;
	}
	return w;
}

int cm_pfcrew_size(const struct cm_pfcrew *w) { return w->n; }

double cm_pfcrew_busy(struct cm_pfcrew *w)
{
	double b;
	pthread_mutex_lock(&w->mu);
	b = w->busy;
	pthread_mutex_unlock(&w->mu);
	return b;
}

void cm_pfcrew_go(struct cm_pfcrew *w)
{
	pthread_mutex_lock(&w->mu);
	w->gen++;
	w->pending = w->n - 1;
	pthread_cond_broadcast(&w->go);
	pthread_mutex_unlock(&w->mu);
}

void cm_pfcrew_wait(struct cm_pfcrew *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->pending)
		pthread_cond_wait(&w->done, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void cm_pfcrew_free(struct cm_pfcrew *w)
{
	int k;
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->go);
	pthread_mutex_unlock(&w->mu);
	for (k = 1; k < w->n; k++)
		pthread_join(w->th[k], NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->go);
	pthread_cond_destroy(&w->done);
	free(w);
}
