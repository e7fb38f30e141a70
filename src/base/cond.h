/* cond.h - a condition variable whose signal never waits (cond.c).
 *
 * The pools' and streams' feeding threads (the CPU trace's cutting, the
 * copy's, the transcoder's writer, the .pftrace's passer) signal a worker
 * for each block they hand over.  glibc's pthread_cond_signal may wait in
 * that call until the waiters it woke before have run (its group switch,
 * __condvar_quiesce_and_switch_g1), and on a busy machine they wait for
 * a CPU, so the one thread a stage's order depends on sleeps behind the
 * workers it feeds.  cm_cond keeps pthread_cond_t's contract as this code
 * uses it (a wait is always in a loop over its predicate, which is
 * changed under the same mutex): a wait may end spuriously, a signal
 * wakes at least one waiter that began waiting before it, and a signal
 * or broadcast never waits.  On Linux it is a sequence number and a
 * futex; elsewhere, or with CUPTIMERGE_COND=pthread (a benchmarking aid,
 * read once), it is pthread_cond_t itself. */
#ifndef CM_COND_H
#define CM_COND_H

#include <pthread.h>

typedef struct cm_cond {
	unsigned seq;     /* bumped by every signal and broadcast: the futex word */
	unsigned waiters; /* threads between their wait's unlock and its lock again */
	int native;       /* pthread_cond_t below, not the futex */
	pthread_cond_t c;
} cm_cond;

void cm_cond_init(cm_cond *c);
void cm_cond_destroy(cm_cond *c);
/* Holding MU: let it go, wait for a signal (or not: callers loop over
 * their predicate), and take MU again. */
void cm_cond_wait(cm_cond *c, pthread_mutex_t *mu);
/* Wake one waiter (or more); the predicate changed under the mutex the
 * waiters use, before this call, which may be made holding it or not. */
void cm_cond_signal(cm_cond *c);
/* Wake every waiter. */
void cm_cond_broadcast(cm_cond *c);

#endif
