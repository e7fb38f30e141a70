/* opool_int.h - what the ordered pool (opool.c) and the crew that runs
 * the blocks of several pools (ocrew.c) share: the pool's slots and state,
 * the crew's, and the two steps of the pool a crew's worker takes.  Not
 * for other modules: they see opool.h alone. */
#ifndef CM_OPOOL_INT_H
#define CM_OPOOL_INT_H

#include "base/opool.h"
#include "base/diag.h"

#include <pthread.h>
#include <stdint.h>

/* A slot's state (opool.c's head comment says how it goes). */
enum { EMPTY, QUEUED, RUNNING, DONE };

struct slot {
	int state, rc;
	int cls;      /* the class of its block (cm_opool_set_class), for -v */
	uint64_t seq; /* when queued, in the crew's count (a crew serves the oldest block first) */
	cm_buf in, out;
	cm_diag_slot diag; /* the block's error, from a worker thread */
};

struct cm_opool {
	cm_opool_fn fn;
	cm_opool_sink sink;
	void *sctx;
	void **wctx;
	int nworkers, nthreads, nslots;
	int caller_helps; /* the caller runs blocks too, as worker nworkers - 1 */
	struct slot *slots;
	size_t head;  /* next slot the caller fills (counts up; slot = head % nslots) */
	size_t tail;  /* next slot the caller drains */
	size_t next;  /* next slot a worker takes */
	int failed;   /* the first failing block's result (-1 or below), or 0 */
	int stop;
	int draining; /* a worker is handing results to the sink */
	cm_diag_slot fail_diag; /* the first failure's error, for the caller to settle */
	pthread_mutex_t own_mu, sink_mu; /* sink_mu: held around every sink call (cm_opool_lock) */
	pthread_cond_t own_work, done;
	/* the lock and the workers' signal: the pool's own, or its crew's
	 * (cm_opool_new_crew: one lock over every pool the crew serves, so
	 * that a worker can look at all of them at once) */
	pthread_mutex_t *mu;
	pthread_cond_t *work;
	cm_ocrew *crew;     /* the crew that runs this pool's blocks, or NULL (threads of its own) */
	pthread_t *th;
	cm_opool_stats st; /* this pool's figures (under mu) */
	double born;       /* cm_now_s() when it was made (-v: st.lived) */
	cm_opool_stats *st_out;
	/* the same by class (cm_opool_set_class): the caller's class for the
	 * blocks it puts next, and the figures of each */
	int cls;
	int sink_cls; /* the class of the result in the sink now (under sink_mu) */
	cm_opool_stats cst[CM_OPOOL_CLASSES];
	cm_opool_stats *cst_out;
	void (*done_fn)(cm_buf *in); /* cm_opool_set_done, or NULL */
};

/* A crew: worker threads that serve several pools (cm_ocrew_new).  Its
 * lock is every member pool's lock; POOLS are those attached now. */
#define CREW_POOLS_MAX 8
struct cm_ocrew {
	pthread_mutex_t mu;
	pthread_cond_t work;
	int nworkers, nthreads, stop;
	pthread_t *th;
	cm_opool *pools[CREW_POOLS_MAX];
	int npools;
	uint64_t seq;  /* blocks queued so far, all pools together */
	double idle;   /* seconds its workers waited for a block */
};

/* Run the oldest queued block of P (holding P's lock, which is released
 * while its function runs) with the worker context WCTX, then hand every
 * done block from the oldest on to the sink.  Returns holding the lock.
 * For a worker of the pool's own (opool.c) or of its crew (ocrew.c). */
void cm_opool_run_next(cm_opool *p, void *wctx);

/* The ring's slots for a pool of WORKERS, WANT asked for (0: none): the
 * same sizing for a pool of its own threads and a crew's pool. */
int cm_opool_slots_for(int workers, int want);

#endif
