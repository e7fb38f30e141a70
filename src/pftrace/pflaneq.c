/* pflaneq.c - the lanes (pflanes.c) placed batch after batch, shard by
 * shard, by whichever thread gets there: off the sequential part.
 *
 * A thread's lanes depend on its own slices in order, nothing else.  The
 * threads are shared out among CM_PF_SHARDS shards by a key the workers
 * work out from the pid and tid alone (cm_pflaneq_key), so a worker that
 * has encoded batch N can place that batch's slices of a shard as soon as
 * that shard has placed batch N - 1's: each shard is a chain of its own,
 * with no barrier between shards or batches.  The 16-core profile of
 * e3f5bff showed the other way, rounds of a crew in the sequential part
 * (a round a batch, every shard waited for), pacing the whole output.
 *
 * Who places.  A worker, its batch encoded, puts the batch's slices in
 * the ring (its place: the batch's number) and then places, shard by
 * shard, whatever is next in order of each shard it can lock at once
 * (pthread_mutex_trylock: a shard busy is being placed by another, which
 * goes on through the ring as far as it can).  The sequential part, before
 * it writes batch N's packets, locks every shard and places what is left
 * up to N: every batch up to N is in the ring by then (a batch reaches the
 * sink only after it and all before it were encoded), so nothing is
 * missed, and a batch a worker left for lack of the lock is placed then.
 * The ring holds a batch until every shard has placed it, so it needs a
 * place for every batch the pool may hold (cm_pflaneq_new's SLOTS); a put
 * whose place is still held waits, placing what it can (never at the sizes
 * pfpool.c asks for: a safety net).
 *
 * An entry of the ring may hold several batches' slices (cm_pflaneq_put_many:
 * the window's groups that one of the render's workers encoded, src/mergepft.c,
 * numbered by the render's piece, not by batch: pfinsert.c); each shard places
 * them in their order, as if they were one batch.
 *
 * The lanes are the same for any -j and any timing: each shard places its
 * slices in batch order, each batch's in the batch's order.  Whoever
 * places a shard's slices of a batch sets the shard's word of the batch's
 * MOVED (struct cm_pflaneq_sub) when one went off lane 0, so that the
 * sequential part looks for those in such shards alone (pfseg.c's step 2:
 * 23 of the 200M pair's 1.66 M slices).
 *
 * A merge's filter of ties (pflanetie.c, cm_pflaneq_set_ties): a batch
 * before UNTIL (the window's events' first) keeps the slices a call or a
 * span may tie with, one before SPANS (the spans' first) those a span may,
 * one after none; by the batch's number, so the same slices at any -j. */
#include "config.h"
#include "pftrace/pflaneq.h"
#include "pftrace/pftrack.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct lq_batch {
	uint64_t seq1; /* its number + 1 once it is in the ring (atomic); 0: none */
	const struct cm_pflaneq_sub *subs; /* its batches' slices: ONE, or MANY's */
	size_t nsub;
	struct cm_pflaneq_sub one;
	struct cm_pflaneq_sub *many; /* (cm_pflaneq_put_many's copy, its room kept) */
	size_t cap;
};

struct lq_shard {
	pthread_mutex_t mu;
	uint64_t next; /* the batch it places next */
	cm_pflanes *l;
	double busy;   /* seconds of placing (for -v) */
	char pad[64];
};

struct cm_pflaneq {
	size_t nring;
	struct lq_batch *ring;
	const int *stop; /* cm_pflaneq_set_stop's */
	/* cm_pflaneq_set_ties': the lanes keep the slices a call or a span
	 * may tie with for batches before UNTIL, those a span may tie with
	 * before SPANS (both atomic) */
	const cm_pfties *ties;
	uint64_t until, spans;
	struct lq_shard sh[CM_PF_SHARDS];
};

cm_pflaneq *cm_pflaneq_new(size_t slots)
{
	cm_pflaneq *q = cm_xcalloc(1, sizeof *q);
	int s;
	q->nring = slots + 1;
	q->ring = cm_xcalloc(q->nring, sizeof *q->ring);
	q->until = q->spans = UINT64_MAX;
	for (s = 0; s < CM_PF_SHARDS; s++) {
		pthread_mutex_init(&q->sh[s].mu, NULL);
		q->sh[s].l = cm_pflanes_new();
	}
	return q;
}

void cm_pflaneq_free(cm_pflaneq *q)
{
	int s;
	if (!q)
		return;
	for (s = 0; s < CM_PF_SHARDS; s++) {
		pthread_mutex_destroy(&q->sh[s].mu);
		cm_pflanes_free(q->sh[s].l);
	}
	for (size_t i = 0; i < q->nring; i++)
		free(q->ring[i].many);
	free(q->ring);
	free(q);
}

/* A 64-bit mix (splitmix64's finalizer). */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9u;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBu;
	return x ^ (x >> 31);
}

/* The key of a pid or tid V as the track's key depends on it (pftrack.c's
 * cm_pf_id): a number in 1..2^32-1 (a float cut to its integer part)
 * itself; one outside it, 0, or a V that is missing or no number or
 * string OUTSIDE (a pid's OUTSIDE is 0, a tid's the pid: a tid 0 is the
 * pid's main thread there); a string ("" too) a hash of its bytes with the
 * top bit set; 1 for one beyond a double's range (the sink refuses it). */
static uint64_t id_key(const cm_jval *v, uint64_t outside)
{
	int64_t x;
	if (v && v->type == CM_J_NUM) {
		/* the value kept as it was parsed (pfparse.c), of an integer
		 * literal as small_int reads it; one of 19 digits is beyond
		 * 2^32 either way */
		if (v->has_iv == CM_PF_IV_INT)
			x = v->iv < 0 || v->iv > UINT32_MAX ? 0 : v->iv;
		else if (small_int(v->s, v->len, &x))
			x = x < 0 || x > UINT32_MAX ? 0 : x;
		else if (cm_pf_num_id(v->s, v->len, &x) < 0)
			return 1;
		return x ? (uint64_t)x : outside;
	}
	if (v && v->type == CM_J_STR)
		return cm_pf_hash(v->s, v->len, 0x5157) | (uint64_t)1 << 63;
	return outside;
}

uint64_t cm_pflaneq_key(const cm_jval *pid, const cm_jval *tid)
{
	uint64_t p = id_key(pid, 0), t, k;
	if (p >> 63) {
		/* a string pid: a tid outside 0..2^32-1 is its number shown
		 * (STRING_ID_SHOWN and up, counted in order, not known here):
		 * those tids and every tid that may be one share a key */
		uint64_t shown = p ^ 0x7f4a7c15u;
		t = id_key(tid, shown);
		/* and a tid of the pid's string is the pid's main thread */
		if ((t < ((uint64_t)1 << 32) && t >= STRING_ID_SHOWN) || t == p)
			t = shown;
	} else {
		t = id_key(tid, p); /* outside: the pid shown */
	}
	k = mix(p * 0x9E3779B97F4A7C15u ^ t);
	return k ? k : 1;
}

uint64_t cm_pflaneq_key_ints(int64_t pid, int64_t tid)
{
	/* id_key's of an integer: itself in 1..2^32-1, else the outside (a
	 * pid's 0, a tid's the pid); never a string's (the top bit) */
	uint64_t p = pid < 0 || pid > UINT32_MAX ? 0 : (uint64_t)pid;
	uint64_t t = tid <= 0 || tid > UINT32_MAX ? p : (uint64_t)tid;
	uint64_t k = mix(p * 0x9E3779B97F4A7C15u ^ t);
	return k ? k : 1;
}

/* Place shard S's jobs of the ring from its next batch on, as far as the
 * ring goes and (UPTO not UINT64_MAX) through batch UPTO; the shard's
 * lock held. */
static void place_from(cm_pflaneq *q, int s, uint64_t upto)
{
	struct lq_shard *sh = &q->sh[s];
	double t = 0;
	int timed = 0;
	while (sh->next <= upto) {
		const struct lq_batch *b = &q->ring[sh->next % q->nring];
		uint32_t i;
		if (__atomic_load_n(&b->seq1, __ATOMIC_ACQUIRE) != sh->next + 1)
			break;
		if (!timed)
			t = cm_now_s(), timed = 1;
		/* the slices that may tie with a call to come kept up to the
		 * window's (a batch's number: the same at any -j) */
		if (q->ties)
			cm_pflanes_ties(sh->l, q->ties,
					sh->next < __atomic_load_n(&q->until, __ATOMIC_RELAXED)   ? CM_PFTIES_CALL | CM_PFTIES_SPAN
					: sh->next < __atomic_load_n(&q->spans, __ATOMIC_RELAXED) ? CM_PFTIES_SPAN
												   : 0);
		for (size_t k = 0; k < b->nsub; k++) {
			const struct cm_pflaneq_sub *u = &b->subs[k];
			unsigned off0 = 0; /* (a lane other than 0 given) */
			for (i = u->start[s]; i < u->start[s + 1]; i++)
				off0 |= u->jobs[i].lane = cm_pflanes_place(sh->l, u->jobs[i].key, u->jobs[i].b, u->jobs[i].e);
			if (off0 && u->moved) /* (the shard's own word: no other thread writes it) */
				u->moved[s] = 1;
		}
		/* release: whoever sees the count (cm_pflaneq_wait) sees the lanes */
		__atomic_store_n(&sh->next, sh->next + 1, __ATOMIC_RELEASE);
	}
	if (timed)
		sh->busy += cm_now_s() - t;
}

void cm_pflaneq_set_stop(cm_pflaneq *q, const int *stop) { q->stop = stop; }

void cm_pflaneq_set_ties(cm_pflaneq *q, const cm_pfties *f) { q->ties = f; }

void cm_pflaneq_ties_until(cm_pflaneq *q, uint64_t seq) { __atomic_store_n(&q->until, seq, __ATOMIC_RELAXED); }

void cm_pflaneq_ties_spans(cm_pflaneq *q, uint64_t seq) { __atomic_store_n(&q->spans, seq, __ATOMIC_RELAXED); }

/* 1 once every shard has placed batch SEQ (or SEQ is none: ~0). */
static int placed(cm_pflaneq *q, uint64_t seq)
{
	for (int s = 0; s < CM_PF_SHARDS; s++)
		if (__atomic_load_n(&q->sh[s].next, __ATOMIC_ACQUIRE) <= seq)
			return 0;
	return 1;
}

/* The place of batch SEQ in the ring, once its last batch is placed by
 * every shard (at once at the sizes asked for); while it is not, what can
 * be is placed here, then the thread sleeps a little.  NULL when the run
 * has stopped (cm_pflaneq_set_stop): the batch is not needed. */
static struct lq_batch *place_for(cm_pflaneq *q, uint64_t seq)
{
	while (seq >= q->nring && !placed(q, seq - q->nring)) {
		struct timespec ts = {0, 50000};
		if (q->stop && __atomic_load_n(q->stop, __ATOMIC_ACQUIRE))
			return NULL;
		for (int s = 0; s < CM_PF_SHARDS; s++)
			if (!pthread_mutex_trylock(&q->sh[s].mu)) {
				place_from(q, s, UINT64_MAX);
				pthread_mutex_unlock(&q->sh[s].mu);
			}
		if (!placed(q, seq - q->nring))
			nanosleep(&ts, NULL);
	}
	return &q->ring[seq % q->nring];
}

/* Batch SEQ (B, its place, filled) in the ring, and placed where this
 * thread can. */
static void publish(cm_pflaneq *q, uint64_t seq, struct lq_batch *b)
{
	int s;
	__atomic_store_n(&b->seq1, seq + 1, __ATOMIC_RELEASE);
	/* each shard this batch is next for and no one holds, and on */
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* (the batch seen before the lock tried: see below) */
	for (s = 0; s < CM_PF_SHARDS; s++) {
		struct lq_shard *sh = &q->sh[s];
		while (!pthread_mutex_trylock(&sh->mu)) {
			uint64_t next;
			place_from(q, s, UINT64_MAX);
			pthread_mutex_unlock(&sh->mu);
			/* a batch put while this thread held the lock, by a thread
			 * whose trylock failed, is this one's to place: looked for
			 * after the unlock (the fences: that thread's batch or this
			 * one's unlock is seen by the other), else the sink would */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			next = __atomic_load_n(&sh->next, __ATOMIC_ACQUIRE);
			if (__atomic_load_n(&q->ring[next % q->nring].seq1, __ATOMIC_ACQUIRE) != next + 1)
				break;
		}
	}
}

void cm_pflaneq_put(cm_pflaneq *q, uint64_t seq, struct cm_pflaneq_job *jobs, const uint32_t *start,
		    uint32_t *moved)
{
	struct lq_batch *b = place_for(q, seq);
	if (!b)
		return;
	b->one.jobs = jobs;
	memcpy(b->one.start, start, sizeof b->one.start);
	b->one.moved = moved;
	b->subs = &b->one;
	b->nsub = 1;
	publish(q, seq, b);
}

void cm_pflaneq_put_many(cm_pflaneq *q, uint64_t seq, const struct cm_pflaneq_sub *subs, size_t n)
{
	struct lq_batch *b = place_for(q, seq);
	if (!b)
		return;
	if (n > b->cap) {
		b->many = cm_xrealloc(b->many, n * sizeof *b->many);
		b->cap = n;
	}
	if (n)
		memcpy(b->many, subs, n * sizeof *subs);
	b->subs = b->many;
	b->nsub = n;
	publish(q, seq, b);
}

void cm_pflaneq_wait(cm_pflaneq *q, uint64_t seq)
{
	int s;
	for (s = 0; s < CM_PF_SHARDS; s++) {
		struct lq_shard *sh = &q->sh[s];
		if (__atomic_load_n(&sh->next, __ATOMIC_ACQUIRE) > seq)
			continue; /* (it only grows; what it placed is seen once the lock is taken) */
		pthread_mutex_lock(&sh->mu);
		place_from(q, s, seq);
		pthread_mutex_unlock(&sh->mu);
	}
}

double cm_pflaneq_busy(cm_pflaneq *q, double *most)
{
	double b = 0;
	int s;
	*most = 0;
	for (s = 0; s < CM_PF_SHARDS; s++) {
		pthread_mutex_lock(&q->sh[s].mu);
		b += q->sh[s].busy;
		if (q->sh[s].busy > *most)
			*most = q->sh[s].busy;
		pthread_mutex_unlock(&q->sh[s].mu);
	}
	return b;
}
