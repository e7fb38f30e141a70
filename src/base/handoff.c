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
 * for a buffer is woken) and joins it.
 *
 * A preparing stage (cm_handoff_new_prep): a few threads more take the
 * buffers as they are put, in put order, and prepare each in its slot
 * (marked ready after); the consumer takes the oldest slot only once it
 * is ready.  Slots are numbered by puts (nput, nprep: taken by a
 * preparing thread), so a slot is never the producer's, a preparing
 * thread's and the consumer's at once: the producer fills only a free
 * slot, a preparing thread only one put and not yet taken, the consumer
 * only one ready.  Once failed, the preparing threads mark the slots
 * ready unseen. */
#include "config.h"
#include "base/handoff.h"
#include "base/diag.h"

#include <pthread.h>
#include <stdint.h>
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
	/* the preparing stage (none: npth 0) */
	cm_handoff_prep prep;
	int npth;
	pthread_t *pth;
	pthread_cond_t work;       /* a buffer put (or the end), for the preparing threads */
	unsigned char *ready;      /* a slot's buffer is prepared */
	uint64_t nput, nprep;      /* buffers put, and taken by a preparing thread */
};

/* Slot K's auxiliary bytes. */
static void *aux_at(cm_handoff *h, size_t k) { return h->aux + k * h->aux_size; }
/* ... as put with its buffer: NULL when none were. */
static void *slot_aux(cm_handoff *h, size_t k) { return h->has_aux[k] ? aux_at(h, k) : NULL; }

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
		while (!(h->n && (!h->npth || h->ready[h->head])) && !(h->end && !h->n))
			pthread_cond_wait(&h->more, &h->mu);
		h->st.idle += cm_now_s() - t0;
		if (!h->n)
			break;
		k = h->head;
		h->ready[k] = 0;
		drop = h->failed;
		pthread_mutex_unlock(&h->mu);
		if (!drop) { /* (slot K is the consumer's: puts fill the others) */
			t0 = cm_now_s();
			if (h->prep && !h->npth) /* (no preparing thread could be made) */
				h->prep(h->ctx, &h->q[k], slot_aux(h, k));
			rc = h->fn(h->ctx, &h->q[k], slot_aux(h, k));
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

/* A preparing thread: the buffers put prepared in their slots, in put
 * order, until the end; once failed, marked ready unseen. */
static void *prep_main(void *arg)
{
	cm_handoff *h = arg;
	cm_progress_thread_off();
	pthread_mutex_lock(&h->mu);
	for (;;) {
		size_t k;
		int drop;
		while (h->nprep == h->nput && !h->end)
			pthread_cond_wait(&h->work, &h->mu);
		if (h->nprep == h->nput)
			break;
		k = (size_t)(h->nprep++ % h->slots);
		drop = h->failed;
		pthread_mutex_unlock(&h->mu);
		if (!drop) /* (slot K is this thread's until it is ready) */
			h->prep(h->ctx, &h->q[k], slot_aux(h, k));
		pthread_mutex_lock(&h->mu);
		h->ready[k] = 1;
		if (k == h->head) /* (the consumer waits only for the oldest) */
			pthread_cond_signal(&h->more);
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
	pthread_cond_destroy(&h->work);
	free(h->pth);
	free(h->ready);
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
	return cm_handoff_new_prep(slots, 0, NULL, fn, ctx, aux_size, aux_free);
}

cm_handoff *cm_handoff_new_prep(size_t slots, int preppers, cm_handoff_prep prep, cm_handoff_fn fn, void *ctx,
				size_t aux_size, void (*aux_free)(void *aux))
{
	cm_handoff *h = cm_xcalloc(1, sizeof *h);
	h->fn = fn;
	h->prep = prep;
	h->ctx = ctx;
	h->slots = slots ? slots : 1;
	h->aux_size = aux_size;
	h->aux_free = aux_free;
	h->q = cm_xcalloc(h->slots, sizeof *h->q);
	h->aux = cm_xcalloc(h->slots, aux_size ? aux_size : 1);
	h->has_aux = cm_xcalloc(h->slots, 1);
	h->ready = cm_xcalloc(h->slots, 1);
	h->pth = cm_xcalloc(preppers > 0 && prep ? (size_t)preppers : 1, sizeof *h->pth);
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->room, NULL);
	pthread_cond_init(&h->more, NULL);
	pthread_cond_init(&h->work, NULL);
	if (pthread_create(&h->th, NULL, handoff_main, h)) {
		handoff_free(h);
		return NULL;
	}
	/* (before the first put: the consumer reads npth only under the lock) */
	pthread_mutex_lock(&h->mu);
	while (prep && h->npth < preppers && pthread_create(&h->pth[h->npth], NULL, prep_main, h) == 0)
		h->npth++;
	pthread_mutex_unlock(&h->mu);
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
	h->nput++;
	if (h->npth)
		pthread_cond_signal(&h->work);
	else
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
	pthread_cond_broadcast(&h->work);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->th, NULL); /* (after every slot was prepared and worked through) */
	for (int i = 0; i < h->npth; i++)
		pthread_join(h->pth[i], NULL);
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
