/* opool.h - an ordered pool: blocks of work done by worker threads, their
 * results handed back in the order the blocks went in.
 *
 * The engine's stages are "the same function over many independent blocks,
 * the results concatenated in order" (render window records to text, check
 * and digest slices of a document).  The caller's thread feeds blocks; the
 * results go to a sink in order, from the workers; a fixed number of blocks
 * are in flight, so memory is bounded by (workers + 4) input and output
 * buffers.  With one worker the function and the sink run in the caller's
 * thread, and no thread is made. */
#ifndef CM_OPOOL_H
#define CM_OPOOL_H

#include <stdint.h>
#include "base/buf.h"

typedef struct cm_opool cm_opool;

/* A testing aid: this thread alone (Linux's setpriority on a thread id)
 * at the nice value the environment variable NAME gives, when it is 1 to
 * 19; otherwise nothing. */
void cm_thread_nice_env(const char *name);

/* The work: read IN, append the result to OUT (empty on entry).  WCTX is
 * the worker's own context (one per worker, from the array given to
 * cm_opool_new; nothing else touches it while the worker runs).  Returns 0,
 * or a negative result of the caller's choosing: -1 after cm_error, which
 * on a worker thread is held (diag.h) and printed by the caller's thread
 * when the block's turn comes, only if no earlier block failed; -2 or
 * below for a failure with no message. */
typedef int (*cm_opool_fn)(void *wctx, const cm_buf *in, cm_buf *out);

/* What to do with each result, in order: 0 to go on, -1 to stop.  With
 * worker threads it runs on one of them (one call at a time, with the
 * pool's lock held: cm_opool_lock), its errors deferred to the caller. */
typedef int (*cm_opool_sink)(void *sctx, cm_buf *out);

/* A pool of WORKERS threads (at least 1) running FN, worker i with
 * WCTX[i]; SINK receives the results.  With CALLER_HELPS (and WORKERS > 1)
 * the caller is the last of the WORKERS: WORKERS - 1 threads are made, and
 * the caller runs the oldest queued block itself, with WCTX[WORKERS - 1],
 * whenever it would otherwise wait (a full ring, cm_opool_finish); for few
 * cores, where a thread that only cuts the input and waits is a core's
 * share lost to the parsers.  Falls back to fewer threads (down to running
 * in the caller) when threads cannot be made. */
cm_opool *cm_opool_new(int workers, int caller_helps, cm_opool_fn fn, void **wctx, cm_opool_sink sink,
		       void *sctx);

/* As cm_opool_new (no caller's help), with SLOTS blocks in flight where
 * that is more than the default's (the workers and 4): for a sink that
 * may stall, so that the workers can run further ahead of it (the
 * .pftrace's window render, gpu/gpuwalk.c).  At most twice the workers
 * and 8, the room pftrace/'s lanes keep for a pool's blocks. */
cm_opool *cm_opool_new_ahead(int workers, int slots, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx);

/* A crew: WORKERS threads that run the blocks of several pools, the
 * block queued first (over all of them) first; for two readers that run
 * side by side, so that neither's workers idle while the other's are
 * behind (a fixed split of the threads between them left the window's
 * workers idle a quarter of the read while the CPU trace's never were).
 * NULL when no thread could be made.  Free it after every pool it served
 * has finished. */
typedef struct cm_ocrew cm_ocrew;
cm_ocrew *cm_ocrew_new(int workers);
void cm_ocrew_free(cm_ocrew *c);
/* Its WORKERS, and the seconds its workers waited for a block, all
 * together, so far (-v; read after the pools have finished). */
int cm_ocrew_workers(const cm_ocrew *c);
double cm_ocrew_idle(const cm_ocrew *c);

/* A pool as cm_opool_new's, its blocks run by the crew C: it makes no
 * thread, and WCTX has one context for each of C's workers (worker i
 * uses WCTX[i] for this pool's blocks; one block at a time).  The caller
 * only fills slots and waits (it never helps).  The pool's idle figure
 * stays 0: the crew's is cm_ocrew_idle.  At most 8 pools at once. */
cm_opool *cm_opool_new_crew(cm_ocrew *c, cm_opool_fn fn, void **wctx, cm_opool_sink sink, void *sctx);

/* Queue the block in IN: the pool takes its bytes (IN is left empty, ready
 * for the next block).  May wait for a free slot.  Returns 0, or the result
 * of the first block (in order) whose FN failed, or -1 when SINK failed
 * (its error printed now, on the caller's thread); blocks after it are not
 * run or their results dropped.  A failure may be returned by a later call
 * than the one that queued its block. */
int cm_opool_put(cm_opool *p, cm_buf *in);

/* Wait for every queued block, hand over the remaining results, stop the
 * workers and free the pool.  Returns 0, or -1 as cm_opool_put. */
int cm_opool_finish(cm_opool *p);

/* FN(part i) for each of the N parts of SIZE bytes each at PARTS, on N
 * worker threads (a block each, no result: work split into parts up
 * front, such as the joins' walks).  Returns 0, or the result of the first
 * part (in order) whose FN failed, its error printed once, as cm_opool_put
 * says. */
int cm_opool_run_each(int n, int (*fn)(void *part), void *parts, size_t size);

/* Where a pool's time went, for -v: seconds, summed over its threads.
 * WAITED: the caller waited for a free slot (the workers or the sink were
 * behind); IDLE: workers waited for a block (the caller was behind); BUSY:
 * blocks run (the caller's included when it helps); SINK: results handed
 * on, one at a time.  cm_opool_finish adds the pool's figures. */
typedef struct cm_opool_stats {
	double waited, idle, busy, sink;
	uint64_t blocks;
	/* the longest block's run and the longest hand-on of one result, and
	 * the seconds from the pool's start to its finish (-v: a slow block
	 * holds up the ring, whose slots the workers cannot pass) */
	double longest, sink_longest, lived;
	/* not the pool's: what the caller's thread spent cutting the input
	 * into the blocks, in CPU seconds of that thread, and the text bytes
	 * it cut (json/docsplit.c adds them; -v says how fast it cut) */
	double cut;
	uint64_t cut_bytes;
	/* and that thread's CPU seconds over the whole read (the cutting,
	 * handing the blocks on, its reads), and how many times the
	 * scheduler took its CPU from it while it could run (-v: a cutting
	 * thread that waits for a CPU holds up all its workers) */
	double cut_ran;
	uint64_t cut_preempted;
} cm_opool_stats;

/* Have cm_opool_finish add this pool's figures to *ST (NULL: none). */
void cm_opool_set_stats(cm_opool *p, cm_opool_stats *st);

/* The same figures split by the blocks' class, for a caller whose blocks
 * come in phases (the .pftrace's: the text before the inserted batches,
 * those, the text after; pfstream.c): cm_opool_set_class says the class
 * of the blocks the caller puts next (0 at first, the caller's thread
 * only; classes 0 to CM_OPOOL_CLASSES - 1, others ignored), and
 * cm_opool_finish adds each class's figures to ST[class] (an array of
 * CM_OPOOL_CLASSES; NULL: none).  A block's BUSY, SINK and BLOCKS go to
 * its class; a worker's IDLE to the class of the block that ended its
 * wait; the caller's WAITED to the class it had set.  The classes' sums
 * are the pool's figures. */
#define CM_OPOOL_CLASSES 4
void cm_opool_set_class_stats(cm_opool *p, cm_opool_stats *st);
void cm_opool_set_class(cm_opool *p, int cls);
/* In the sink: the class of the block whose result it has now. */
int cm_opool_sink_class(const cm_opool *p);

/* Have DONE(IN) called for every block put, on the thread that ran it, as
 * soon as FN returned, or in FN's place for a block not run because an
 * earlier one failed: so that what a block holds (the splitter's batches
 * hold the input's chunks, json/docsplit.h) is let go exactly once, while
 * the pool still runs.  Set it before the first cm_opool_put. */
void cm_opool_set_done(cm_opool *p, void (*done)(cm_buf *in));

/* Hold off the sink while the caller's thread touches what the sink
 * touches (the window's top-level members and its digest share tables). */
void cm_opool_lock(cm_opool *p);
void cm_opool_unlock(cm_opool *p);

/* The CPUs this process may run on (its affinity mask, as taskset, cpusets
 * and Slurm set it; else the CPUs online): the default number of threads. */
int cm_opool_cpus_available(void);

#endif
