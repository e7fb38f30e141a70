/* pflaneq.h - the lanes placed off the sequential part (pflaneq.c): the
 * slices a worker sends after its batch's records (struct cm_pflaneq_job,
 * struct cm_pfbatch_tail) and the queue that places them on their
 * threads' lanes, shard by shard, on whichever thread gets there first.
 * Its callers are the workers (pfbatch.c, pfinsert.c's encoders), the
 * sequential part that waits for them (pfseg.c) and the front that makes
 * the queue (pfstream.c); the encoder's state (pfevent.h) only points at
 * it.  Private to src/pftrace. */
#ifndef CM_PFLANEQ_H
#define CM_PFLANEQ_H

#include "pftrace/pfintern.h"
#include "json/jval.h"

#include <stddef.h>
#include <stdint.h>

/* A slice for the lanes, as a worker sends it: its thread's key, its
 * times, its record's place in the batch (bytes from its first record:
 * pfseg.c finds the record by it); LANE placed. */
struct cm_pflaneq_job {
	uint64_t key;
	int64_t b, e;
	uint32_t at, lane;
};

/* What a worker appends to a batch's records (pfbatch.c): first, aligned
 * to 8 bytes, its slices of non-zero duration by shard (each shard's in
 * the batch's order); then this. */
struct cm_pfbatch_tail {
	uint64_t seq;      /* the batch's number (0, 1, ...) */
	uint32_t rec_len;  /* the records' bytes, from the start */
	uint32_t njobs;
	uint32_t nruns;    /* the runs of records before the slices (pfrecord.h's struct cm_pfrun) */
	uint32_t start[CM_PF_SHARDS + 1]; /* each shard's slices */
	/* each shard's slices: one placed off lane 0 (struct cm_pflaneq_sub's,
	 * set by whoever placed them; 0 until then) */
	uint32_t moved[CM_PF_SHARDS];
};

/* A batch's slices as the lanes' queue takes them: JOBS, each shard's
 * [START[s], START[s + 1]) (as in cm_pfbatch_tail). */
struct cm_pflaneq_sub {
	struct cm_pflaneq_job *jobs;
	uint32_t start[CM_PF_SHARDS + 1];
	/* MOVED[s] set (not NULL) once a slice of shard s is placed off
	 * lane 0 (cm_pfbatch_tail's moved: the sequential part then looks
	 * for them in that shard's slices alone) */
	uint32_t *moved;
};

typedef struct cm_pflaneq cm_pflaneq;
/* The lanes of every thread, in CM_PF_SHARDS shards, for batches of
 * which at most SLOTS are in flight (taken by the pool, not yet by its
 * sink). */
cm_pflaneq *cm_pflaneq_new(size_t slots);
void cm_pflaneq_free(cm_pflaneq *q);
/* The key of the thread of an event of PID and TID: the same for every
 * event of a thread track (pftrack.c's keys), from them alone; two
 * threads that share one (a hash's collision, or a tid outside 0..2^32-1
 * of a string pid) share their lanes, which gives more lanes, still each
 * nested. */
uint64_t cm_pflaneq_key(const cm_jval *pid, const cm_jval *tid);
/* cm_pflaneq_key of a pid and a tid that are integers kept as parsed
 * (CM_PF_IV_INT) or read by small_int, PID and TID their values: the
 * same key, with nothing read again (pfbatch.c has read them for the
 * record: the text read twice was 12 M instructions of the 50,000-op
 * pair, BENCHMARKS.md "pfcpu11"). */
uint64_t cm_pflaneq_key_ints(int64_t pid, int64_t tid);
/* The shard of a thread's KEY (inline: a worker asks it twice a slice). */
static inline unsigned cm_pflaneq_shard(uint64_t key)
{
	return (unsigned)(key >> 59) % CM_PF_SHARDS;
}
/* Batch SEQ's slices JOBS (START: each shard's, as in cm_pfbatch_tail),
 * given to the lanes: placed now where this thread can (a shard no other
 * thread holds, SEQ or an earlier batch next for it), else later by
 * another; MOVED (or NULL) as struct cm_pflaneq_sub's, zeroed by the
 * caller.  JOBS and MOVED stay put until cm_pflaneq_wait(SEQ) has
 * returned. */
void cm_pflaneq_put(cm_pflaneq *q, uint64_t seq, struct cm_pflaneq_job *jobs, const uint32_t *start,
		    uint32_t *moved);
/* As cm_pflaneq_put, for the slices of N batches SUBS[0..N) (none: N 0)
 * under one number SEQ, placed in their order (SUBS is copied; their jobs
 * stay put until cm_pflaneq_wait(SEQ) has returned). */
void cm_pflaneq_put_many(cm_pflaneq *q, uint64_t seq, const struct cm_pflaneq_sub *subs, size_t n);
/* Once *STOP is set (the run failed: pfstream.c's dropping), a put that
 * would wait for its place in the ring returns at once, its slices never
 * placed. */
void cm_pflaneq_set_stop(cm_pflaneq *q, const int *stop);
/* Before any batch is put: the lanes keep the slices that pass F (the
 * merge's runtime calls' filter, pflanetie.c; not copied) of every batch
 * from then on, until cm_pflaneq_ties_until says otherwise. */
void cm_pflaneq_set_ties(cm_pflaneq *q, const cm_pfties *f);
/* The lanes keep no slice for its ties from batch SEQ on (the merge's
 * window's first): before that batch is put.  Any thread (atomic). */
void cm_pflaneq_ties_until(cm_pflaneq *q, uint64_t seq);
/* The lanes keep no slice for its ties from batch SEQ on (the merge's
 * spans' first; from the window's first they keep only those a span may
 * tie with): before that batch is put.  Any thread (atomic). */
void cm_pflaneq_ties_spans(cm_pflaneq *q, uint64_t seq);
/* Return once every batch up to SEQ (all put by then) has its lanes,
 * placing what is left here. */
void cm_pflaneq_wait(cm_pflaneq *q, uint64_t seq);
/* Seconds spent placing, summed over the shards, and in *MOST those of
 * the busiest shard (for -v: a shard is a chain, placed in order, so on
 * many CPUs its seconds bound the phases its slices come in). */
double cm_pflaneq_busy(cm_pflaneq *q, double *most);

#endif
