/* handoff.c - an ordered handoff: one producer's buffers worked through,
 * in order, by one consumer thread (the .pftrace's sequential part, handed
 * the pool's batches; its passer, handed the protobuf to write).
 *
 * Swapped buffers: a put exchanges the producer's buffer with the one in
 * the free slot, which the consumer emptied (its room kept), so no byte is
 * copied and, after the first SLOTS puts, nothing is allocated either; a
 * slot's auxiliary bytes (the passer's batch to write) go the same way.
 *
 * Bounded: at most SLOTS buffers are in flight (the one being worked
 * through counts), so memory stays a few buffers however far the
 * producer runs ahead, and a producer faster than the consumer waits for
 * room (the -v figure "waited") rather than queueing the whole output.
 *
 * Failure, either side, without a deadlock: a consumer that fails marks
 * the handoff failed and goes on taking the queued buffers, dropped
 * unseen, so that a put waiting for room wakes; the puts from then on
 * return -1 at once, and its error is held on its thread (diag.h) and
 * printed when the producer finishes.  A producer that fails aborts: the
 * same mark, set from its side, wakes a put waiting.  Either way the
 * producer ends with cm_handoff_finish, which ends the thread (its wait
 * for a buffer is woken) and joins it. */
#include "config.h"
#include "base/handoff.h"
#include "base/diag.h"

#include <pthread.h>
#include <stdlib.h>

struct cm_handoff {
	cm_handoff_fn fn;
	void *ctx;
	size_t slots, aux_size;
	void (*aux_free)(void *aux);
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t room, more; /* a slot freed; a buffer put (or the end) */
	cm_buf *q;                 /* the slots: queued (or being worked through) from head */
	unsigned char *aux;        /* each slot's AUX_SIZE bytes */
	unsigned char *has_aux;    /* whether they were put with its buffer */
	size_t head, n;
	int end;                   /* the producer finished: no more puts */
	int failed;                /* the consumer failed, or the producer aborted */
	cm_diag_slot slot;         /* the consumer's error, on its thread */
	cm_handoff_stats st;       /* busy, idle: the consumer's; waited: the producer's */
};

/* Slot K's auxiliary bytes. */
static void *aux_at(cm_handoff *h, size_t k) { return h->aux + k * h->aux_size; }

/* The consumer's thread: the buffers worked through, in order, until the
 * end; once failed, those queued are taken unseen. */
static void *handoff_main(void *arg)
{
	cm_handoff *h = arg;
	cm_diag_defer(&h->slot);
	cm_progress_thread_off();
	pthread_mutex_lock(&h->mu);
	for (;;) {
		double t0 = cm_now_s();
		size_t k;
		int drop, rc = 0;
		while (!h->n && !h->end)
			pthread_cond_wait(&h->more, &h->mu);
		h->st.idle += cm_now_s() - t0;
		if (!h->n)
			break;
		k = h->head;
		drop = h->failed;
		pthread_mutex_unlock(&h->mu);
		if (!drop) { /* (slot K is the consumer's: puts fill the others) */
			t0 = cm_now_s();
			rc = h->fn(h->ctx, &h->q[k], h->has_aux[k] ? aux_at(h, k) : NULL);
			h->st.busy += cm_now_s() - t0;
		}
		pthread_mutex_lock(&h->mu);
		if (rc < 0)
			h->failed = 1;
		h->q[k].len = 0;
		h->head = (h->head + 1) % h->slots;
		h->n--;
		pthread_cond_signal(&h->room);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* H's locks, buffers and bytes freed, and H. */
static void handoff_free(cm_handoff *h)
{
	size_t k;
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->room);
	pthread_cond_destroy(&h->more);
	for (k = 0; k < h->slots; k++) {
		cm_buf_free(&h->q[k]);
		if (h->aux_free)
			h->aux_free(aux_at(h, k));
	}
	free(h->q);
	free(h->aux);
	free(h->has_aux);
	free(h);
}

cm_handoff *cm_handoff_new(size_t slots, cm_handoff_fn fn, void *ctx, size_t aux_size, void (*aux_free)(void *aux))
{
	cm_handoff *h = cm_xcalloc(1, sizeof *h);
	h->fn = fn;
	h->ctx = ctx;
	h->slots = slots ? slots : 1;
	h->aux_size = aux_size;
	h->aux_free = aux_free;
	h->q = cm_xcalloc(h->slots, sizeof *h->q);
	h->aux = cm_xcalloc(h->slots, aux_size ? aux_size : 1);
	h->has_aux = cm_xcalloc(h->slots, 1);
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->room, NULL);
	pthread_cond_init(&h->more, NULL);
	if (pthread_create(&h->th, NULL, handoff_main, h)) {
		handoff_free(h);
		return NULL;
	}
	return h;
}

int cm_handoff_put(cm_handoff *h, cm_buf *b, void *aux)
{
	double t0 = cm_now_s();
	cm_buf tmp;
	size_t k, i;
	pthread_mutex_lock(&h->mu);
	while (h->n == h->slots && !h->failed)
		pthread_cond_wait(&h->room, &h->mu);
	h->st.waited += cm_now_s() - t0;
	if (h->failed) {
		pthread_mutex_unlock(&h->mu);
		return -1;
	}
	k = (h->head + h->n) % h->slots;
	tmp = h->q[k];
	h->q[k] = *b; /* the slot's buffer, worked through, is filled next */
	*b = tmp;
	b->len = 0;
	h->has_aux[k] = aux != NULL;
	for (i = 0; aux && i < h->aux_size; i++) { /* (a few hundred bytes at most) */
		unsigned char *x = aux_at(h, k), c = x[i];
		x[i] = ((unsigned char *)aux)[i];
		((unsigned char *)aux)[i] = c;
	}
	h->n++;
	pthread_cond_signal(&h->more);
	pthread_mutex_unlock(&h->mu);
	return 0;
}

int cm_handoff_full(cm_handoff *h)
{
	int full;
	pthread_mutex_lock(&h->mu);
	full = h->n == h->slots;
	pthread_mutex_unlock(&h->mu);
	return full;
}

void cm_handoff_abort(cm_handoff *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->failed = 1;
	pthread_cond_broadcast(&h->room); /* (a put of another thread's) */
	pthread_mutex_unlock(&h->mu);
}

int cm_handoff_finish(cm_handoff *h, cm_handoff_stats *st)
{
	int failed;
	if (!h)
		return 0;
	pthread_mutex_lock(&h->mu);
	h->end = 1;
	pthread_cond_signal(&h->more);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->th, NULL);
	cm_diag_settle(&h->slot);
	if (st) {
		st->busy += h->st.busy;
		st->idle += h->st.idle;
		st->waited += h->st.waited;
	}
	failed = h->failed;
	handoff_free(h);
	return failed ? -1 : 0;
}
