/* pool.c - the activity buffer pool and the writer thread's work queue. */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct crec_pool {
	pthread_mutex_t mu;
	size_t nbuf, bufsz;
	size_t allocated;          /* buffers created so far (<= nbuf) */
	size_t nfree;              /* entries in free_list */
	size_t in_use;
	uint8_t **free_list;       /* nbuf slots */
	uint8_t **all;             /* every buffer created, for destroy */
	unsigned long long misses;
};

crec_pool *crec_pool_create(size_t nbuf, size_t bufsz)
{
	crec_pool *p;

	if (nbuf == 0 || bufsz < 1024)
		return NULL;
	p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->free_list = calloc(nbuf, sizeof *p->free_list);
	p->all = calloc(nbuf, sizeof *p->all);
	if (!p->free_list || !p->all) {
		free(p->free_list);
		free(p->all);
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	p->nbuf = nbuf;
	/* CUPTI wants 8-byte alignment; round the size down to a multiple too */
	p->bufsz = bufsz & ~(size_t)7;
	return p;
}

uint8_t *crec_pool_get(crec_pool *p)
{
	uint8_t *b = NULL;
	void *mem;

	pthread_mutex_lock(&p->mu);
	if (p->nfree > 0) {
		b = p->free_list[--p->nfree];
	} else if (p->allocated < p->nbuf) {
		/* allocate under the lock: rare (at most nbuf times) and keeps the
		 * bound exact when CUPTI asks from several threads at once */
		if (posix_memalign(&mem, 8, p->bufsz) == 0) {
			b = mem;
			p->all[p->allocated++] = b;
		}
	}
	if (b)
		p->in_use++;
	else
		p->misses++;
	pthread_mutex_unlock(&p->mu);
	return b;
}

void crec_pool_put(crec_pool *p, uint8_t *buf)
{
	pthread_mutex_lock(&p->mu);
	/* nfree < allocated always holds for a buffer that came from the pool */
	if (p->nfree < p->nbuf)
		p->free_list[p->nfree++] = buf;
	if (p->in_use > 0)
		p->in_use--;
	pthread_mutex_unlock(&p->mu);
}

size_t crec_pool_bufsize(const crec_pool *p)
{
	return p->bufsz;
}

unsigned long long crec_pool_misses(crec_pool *p)
{
	unsigned long long m;

	pthread_mutex_lock(&p->mu);
	m = p->misses;
	pthread_mutex_unlock(&p->mu);
	return m;
}

size_t crec_pool_in_use(crec_pool *p)
{
	size_t n;

	pthread_mutex_lock(&p->mu);
	n = p->in_use;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void crec_pool_destroy(crec_pool *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->allocated; i++)
		free(p->all[i]);
	free(p->all);
	free(p->free_list);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

struct crec_queue {
	pthread_mutex_t mu;
	pthread_cond_t nonempty;   /* signalled on push */
	pthread_cond_t acked;      /* signalled on ack */
	size_t cap, head, len;
	uint64_t acked_mark;
	crec_item *items;
};

crec_queue *crec_queue_create(size_t cap)
{
	crec_queue *q = calloc(1, sizeof *q);
	pthread_condattr_t ca;

	if (!q || cap == 0 || !(q->items = calloc(cap, sizeof *q->items))) {
		free(q);
		return NULL;
	}
	q->cap = cap;
	pthread_mutex_init(&q->mu, NULL);
	/* deadlines are CLOCK_MONOTONIC: a wall-clock step must not stall exit */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->nonempty, &ca);
	pthread_cond_init(&q->acked, &ca);
	pthread_condattr_destroy(&ca);
	return q;
}

int crec_queue_push(crec_queue *q, const crec_item *it)
{
	int rc = -1;

	pthread_mutex_lock(&q->mu);
	if (q->len < q->cap) {
		q->items[(q->head + q->len) % q->cap] = *it;
		q->len++;
		rc = 0;
		pthread_cond_signal(&q->nonempty);
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

int crec_queue_pop(crec_queue *q, crec_item *it, const struct timespec *deadline)
{
	int rc = 0;

	pthread_mutex_lock(&q->mu);
	while (q->len == 0 && rc == 0) {
		if (deadline)
			rc = pthread_cond_timedwait(&q->nonempty, &q->mu, deadline);
		else
			rc = pthread_cond_wait(&q->nonempty, &q->mu);
		if (rc == ETIMEDOUT && q->len > 0)
			rc = 0;
	}
	if (q->len > 0) {
		*it = q->items[q->head];
		q->head = (q->head + 1) % q->cap;
		q->len--;
		rc = 0;
	} else {
		rc = -1;
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

void crec_queue_ack(crec_queue *q, uint64_t m)
{
	pthread_mutex_lock(&q->mu);
	if (m > q->acked_mark)
		q->acked_mark = m;
	pthread_cond_broadcast(&q->acked);
	pthread_mutex_unlock(&q->mu);
}

int crec_queue_wait_mark(crec_queue *q, uint64_t m, const struct timespec *deadline)
{
	int rc = 0;

	pthread_mutex_lock(&q->mu);
	while (q->acked_mark < m && rc == 0)
		rc = pthread_cond_timedwait(&q->acked, &q->mu, deadline);
	rc = q->acked_mark >= m ? 0 : -1;
	pthread_mutex_unlock(&q->mu);
	return rc;
}

void crec_queue_destroy(crec_queue *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->nonempty);
	pthread_cond_destroy(&q->acked);
	free(q->items);
	free(q);
}

void crec_deadline(struct timespec *deadline, double seconds)
{
	long long ns;

	clock_gettime(CLOCK_MONOTONIC, deadline);
	if (seconds < 0)
		seconds = 0;
	if (seconds > 1e9)
		seconds = 1e9;
	ns = (long long)(seconds * 1e9) + deadline->tv_nsec;
	deadline->tv_sec += (time_t)(ns / 1000000000LL);
	deadline->tv_nsec = (long)(ns % 1000000000LL);
}
