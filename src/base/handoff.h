/* handoff.h - an ordered handoff (handoff.c): buffers put by one producer
 * and worked through, in the order they were put, by one consumer thread
 * of their own, through a bounded queue of slots whose buffers are
 * swapped, never copied. */
#ifndef CM_HANDOFF_H
#define CM_HANDOFF_H

#include <stddef.h>
#include "base/buf.h"

typedef struct cm_handoff cm_handoff;

/* The consumer: called on the handoff's thread with each buffer B in the
 * order it was put, one call at a time; AUX is what was put with it (a
 * slot's AUX_SIZE bytes, cm_handoff_new), NULL when nothing was.  B and
 * AUX are the consumer's until it returns (B's bytes are dropped then, its
 * room kept).  Returns 0, or -1 (after cm_error, held on the thread and
 * printed by cm_handoff_finish; or with nothing reported): then the
 * buffers after B are dropped unseen and puts fail. */
typedef int (*cm_handoff_fn)(void *ctx, cm_buf *b, void *aux);

/* For -v: seconds, added to by cm_handoff_finish. */
typedef struct cm_handoff_stats {
	double busy;   /* the consumer's, in FN */
	double idle;   /* the consumer's, waiting for a buffer to be put */
	double waited; /* the producer's, in cm_handoff_put waiting for room */
} cm_handoff_stats;

/* A handoff of SLOTS buffers (at least 1: the one being worked through
 * counts) to a thread calling FN(CTX, ...) for each; each slot also holds
 * AUX_SIZE bytes (0: none) put with its buffer, zeroed at first and freed
 * by AUX_FREE (NULL: nothing to free) when the handoff is.  NULL when no
 * thread can be made (nothing then is made). */
cm_handoff *cm_handoff_new(size_t slots, cm_handoff_fn fn, void *ctx, size_t aux_size, void (*aux_free)(void *aux));

/* A work on a buffer before its turn: PREP(CTX, B, AUX) with a buffer
 * put and what was put with it (NULL: nothing), on one of a handoff's
 * preparing threads, any number of buffers at once, in no order; it
 * cannot fail. */
typedef void (*cm_handoff_prep)(void *ctx, cm_buf *b, void *aux);

/* As cm_handoff_new, with PREPPERS more threads (0: none, as
 * cm_handoff_new) that run PREP on each buffer as soon as it is put, so
 * that FN, in order, gets it prepared: for a consumer whose work is mostly
 * per buffer (the .pftrace's passer, writing a batch's packets before it
 * passes them on).  Make SLOTS at least PREPPERS more than the buffers
 * wanted in the queue.  NULL as cm_handoff_new; fewer preparing threads
 * than asked for when not all could be made, and with none (PREPPERS 0
 * too) PREP runs on the consumer's thread, just before FN. */
cm_handoff *cm_handoff_new_prep(size_t slots, int preppers, cm_handoff_prep prep, cm_handoff_fn fn, void *ctx,
				size_t aux_size, void (*aux_free)(void *aux));

/* The producer (one thread at a time): queue B and, AUX not NULL, the
 * AUX_SIZE bytes at AUX with it.  B gets back the emptied buffer of a slot
 * worked through already (its room kept, length 0) and AUX that slot's
 * bytes (as the consumer left them: the caller empties what needs it).
 * Waits while all the slots are taken.  0; or -1, nothing queued and B and
 * AUX untouched, once the consumer has failed or the handoff was aborted. */
int cm_handoff_put(cm_handoff *h, cm_buf *b, void *aux);

/* 1 when a put would wait now (every slot taken), else 0. */
int cm_handoff_full(cm_handoff *h);

/* Stop at once, from any thread (the producer's side failed): the buffers
 * queued and not begun are dropped unseen, a put waiting returns -1, as
 * do the puts after.  What the consumer is working through finishes.
 * Then cm_handoff_finish as ever.  H NULL: nothing. */
void cm_handoff_abort(cm_handoff *h);

/* The end, on the producer's thread: the buffers queued worked through
 * (unless the handoff failed), the thread joined and H freed (NULL:
 * nothing, 0); the consumer's error settled (cm_diag_settle: printed when
 * it is the run's first).  ST not NULL: the seconds added to it.  0, or -1
 * when the consumer failed or the handoff was aborted. */
int cm_handoff_finish(cm_handoff *h, cm_handoff_stats *st);

#endif
