/* cond.c - cm_cond (cond.h): a condition variable on a futex.
 *
 * A waiter, holding the mutex, reads seq and counts itself in waiters,
 * lets the mutex go and sleeps in FUTEX_WAIT while seq still holds what
 * it read.  A signal bumps seq and, when someone waits, wakes one sleeper
 * (FUTEX_WAKE); a broadcast wakes all.  No wake-up is lost: the predicate
 * changes under the mutex before the signal, so a waiter either saw it
 * changed before it read seq, or read seq before the bump and then finds
 * seq moved (FUTEX_WAIT returns at once) or is asleep and woken.  Nothing
 * here waits but the wait: the signal is an atomic add and, at most, one
 * system call (glibc's own may wait for the waiters woken before it, cond.h).
 * What the mutex orders (the data the predicate guards) it still orders:
 * the waiter takes the mutex again before it looks. */
#include "config.h"
#include "base/cond.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* CUPTIMERGE_COND=pthread: pthread_cond_t (-1 unread, 0 no, 1 yes). */
static int use_native(void)
{
#ifdef __linux__
	static int native = -1;
	int n = __atomic_load_n(&native, __ATOMIC_RELAXED);
	if (n < 0) {
		const char *e = getenv("CUPTIMERGE_COND");
		n = e && !strcmp(e, "pthread");
		__atomic_store_n(&native, n, __ATOMIC_RELAXED);
	}
	return n;
#else
	return 1;
#endif
}

void cm_cond_init(cm_cond *c)
{
	c->seq = 0;
	c->waiters = 0;
	c->native = use_native();
	if (c->native)
		pthread_cond_init(&c->c, NULL);
}

void cm_cond_destroy(cm_cond *c)
{
	if (c->native)
		pthread_cond_destroy(&c->c);
}

#ifdef __linux__
/* FUTEX_WAKE of up to N sleepers on C's word. */
static void wake(cm_cond *c, int n)
{
	__atomic_add_fetch(&c->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &c->seq, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}
#endif

void cm_cond_wait(cm_cond *c, pthread_mutex_t *mu)
{
#ifdef __linux__
	if (!c->native) {
		unsigned seen = __atomic_load_n(&c->seq, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&c->waiters, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(mu);
		/* (returns at once when seq moved since; EINTR: a spurious end) */
		syscall(SYS_futex, &c->seq, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
		pthread_mutex_lock(mu);
		__atomic_sub_fetch(&c->waiters, 1, __ATOMIC_SEQ_CST);
		return;
	}
#endif
	pthread_cond_wait(&c->c, mu);
}

void cm_cond_signal(cm_cond *c)
{
#ifdef __linux__
	if (!c->native) {
		wake(c, 1);
		return;
	}
#endif
	pthread_cond_signal(&c->c);
}

void cm_cond_broadcast(cm_cond *c)
{
#ifdef __linux__
	if (!c->native) {
		wake(c, INT_MAX);
		return;
	}
#endif
	pthread_cond_broadcast(&c->c);
}
