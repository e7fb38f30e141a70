/* outq.c - the files of --split written on threads of their own (outq.h).
 *
 * A merge writes its one file on one thread: the copy's, then the render's
 * sink, each write(2) a copy into the page cache, about 0.3 s a GB on the
 * 16-core machine (the plain merge of the 1 GB pair: 1.6-1.7 s to
 * /dev/null, 2.3-2.6 s to a file), while the 16 renderers wait behind it.
 * A split's 60 files are 60 streams that need no order among them: here
 * each is handed to one of a few writer threads (file K to thread
 * K * THREADS / N: a stripe of files a thread), which writes its files'
 * bytes in the order they came, so the copies into the page cache of
 * different files go on at once, off the threads that make the bytes.
 * On the 16-core machine 4 writers took the copy of the 1 GB pair's CPU
 * trace to its 60 files from 0.66-0.70 s to 0.37-0.45 s (the plain
 * merge's copy to its one file: 0.49-0.57 s); its render did not gain
 * (BENCHMARKS.md).
 *
 * The caller's bytes are copied into a buffer of the file's (CUR_CAP; the
 * copy's pieces lie in the input's chunk, which the next read replaces,
 * and the render's in a buffer its pool fills again) and a full buffer
 * queued.  At most MAX_BYTES are queued or being written (and 2 * THREADS
 * + 4 buffers): the caller then waits for a writer, as it waited for
 * write(2) before.  So the memory is bounded: a buffer a file being
 * filled (CUR_CAP each), MAX_BYTES in flight, and a spare for each buffer
 * in flight, all of CUR_CAP.  A file's buffer that has had
 * nothing for a while (COLD bytes to the others) is queued as it is: a
 * split writes its files one after the other, and the 60 buffers of the
 * files done, each with the last bytes of its group, were 15 MB held to
 * the end.
 *
 * A writer's error is held in its slot (diag.h) and the run fails: the
 * next call of the caller's waits for the writers to be idle and settles
 * it, on the caller's thread (printed there, or handed to the slot that
 * thread defers to), one line as always; what was queued after it is
 * dropped.
 *
 * Why not one queue with outwriter.c's (2026-12, checked when both were
 * read for a merge): the two sit on either side of an output.  outwriter.c
 * is inside one cm_output, below its gzip and transcoder: one descriptor,
 * one producer that fills the writer's own buffers in place (no copy but
 * the one into them), a write(2) errno handed back for output.c to report.
 * This queue is above the outputs: many of them, a few threads each
 * owning a stripe, the caller's bytes copied (they live in buffers the
 * caller refills), a buffer gone cold sent early, one byte bound across
 * all the threads' rings, and cm_output_write called on the writer
 * threads, so that each file's gzip stream is fed from there (a --split
 * file is opened with one job: no outwriter.c under it).  What they share is
 * the 30-odd lines of a mutex, two conditions and a ring; one abstraction
 * for both would take a callback per buffer and an item type for either
 * shape, and read no simpler than the two. */
#include "config.h"
#include "io/outq.h"
#include "base/diag.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A file's buffer being filled, written once this full (write(2) calls of
 * this size cost about what the plain merge's do). */
#define CUR_CAP (256u << 10)
/* The writer threads at most (8 did no better than 4 on 16 CPUs). */
#define MAX_THREADS 8
/* A file's buffer that had nothing while this many bytes went to others
 * goes out as it is. */
#define COLD (2u << 20)
/* The bytes queued or being written, at most: a few buffers a thread. */
#define MAX_BYTES (4u << 20)

struct item {
	size_t k;
	char *p;
	size_t off, len, cap;
};

struct writer {
	cm_outq *q;
	pthread_t th;
	int started;
	struct item *ring; /* its queue: [tail, head), MAXQ long */
	size_t head, tail;
	pthread_cond_t work;
	cm_diag_slot diag;
};

struct cm_outq {
	cm_output *const *outs;
	size_t n;
	int nth;
	struct writer *w;
	pthread_mutex_t mu;
	pthread_cond_t space; /* a buffer written: the caller may queue, or find all idle */
	size_t inflight, max, inflight_bytes;
	int failed, stop, drop, settled;
	cm_buf *cur; /* each file's buffer being filled */
	cm_buf *cspare;   /* spare buffers (CUR_CAP) */
	size_t ncspare;
	uint64_t total;   /* the bytes given so far */
	uint64_t *last;   /* ... when each file's last came */
	size_t scan;      /* the next file looked at for a cold buffer */
};

int cm_outq_threads(int jobs, size_t n)
{
	const char *env = getenv("CUPTIMERGE_SPLIT_WRITERS");
	long t = jobs / 4; /* none below -j 4: a writer thread on 2 CPUs added 16-20 MB at the peak */
	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);
		if (!*end && v >= 0)
			t = v;
	}
	t = t > MAX_THREADS ? MAX_THREADS : t;
	return (size_t)t > n ? (int)n : (int)t;
}

/* Buffer P of CAP bytes, written: a spare, or freed.  Holding q->mu. */
static void give_back(cm_outq *q, char *p, size_t cap)
{
	if (p && cap == CUR_CAP && q->ncspare < q->max)
		q->cspare[q->ncspare++] = (cm_buf){p, 0, cap};
	else
		free(p);
}

/* Writer thread W (ARG): write its ring's items in order through
 * cm_output_write, until stop with its ring empty; after a failure (or
 * with drop) items are only given back.  Its errors go to its diag slot
 * (the top of the file says why). */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	cm_outq *q = w->q;
	cm_diag_defer(&w->diag);
	cm_progress_thread_off();
	pthread_mutex_lock(&q->mu);
	for (;;) {
		struct item it;
		int rc = 0;
		while (w->head == w->tail && !q->stop)
			pthread_cond_wait(&w->work, &q->mu);
		if (w->head == w->tail)
			break;
		it = w->ring[w->tail % q->max];
		if (!q->failed && !q->drop) {
			pthread_mutex_unlock(&q->mu);
			rc = cm_output_write(q->outs[it.k], it.p + it.off, it.len - it.off);
			pthread_mutex_lock(&q->mu);
		}
		if (rc < 0)
			__atomic_store_n(&q->failed, 1, __ATOMIC_RELAXED);
		w->tail++;
		give_back(q, it.p, it.cap);
		q->inflight--;
		q->inflight_bytes -= it.len - it.off;
		pthread_cond_broadcast(&q->space);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

cm_outq *cm_outq_new(cm_output *const *outs, size_t n, int threads)
{
	cm_outq *q = cm_xcalloc(1, sizeof *q);
	q->outs = outs;
	q->n = n;
	q->max = 2 * (size_t)threads + 4;
	q->cur = cm_xcalloc(n, sizeof *q->cur);
	q->last = cm_xcalloc(n, sizeof *q->last);
	q->cspare = cm_xcalloc(q->max, sizeof *q->cspare);
	q->w = cm_xcalloc((size_t)threads, sizeof *q->w);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->space, NULL);
	for (int t = 0; t < threads; t++) {
		struct writer *w = &q->w[t];
		w->q = q;
		w->ring = cm_xcalloc(q->max, sizeof *w->ring);
		pthread_cond_init(&w->work, NULL);
		if (pthread_create(&w->th, NULL, writer_main, w) != 0) {
			pthread_cond_destroy(&w->work);
			free(w->ring);
			break;
		}
		w->started = 1;
		q->nth++;
	}
	if (!q->nth) {
		cm_outq_free(q, 0);
		return NULL;
	}
	return q;
}

int cm_outq_threads_of(const cm_outq *q) { return q->nth; }

/* The writers idle (everything queued written or dropped), then a
 * writer's error settled on this thread, once.  0, or -1 when the run has
 * failed. */
static int drain(cm_outq *q)
{
	int failed;
	pthread_mutex_lock(&q->mu);
	while (q->inflight)
		pthread_cond_wait(&q->space, &q->mu);
	failed = q->failed;
	pthread_mutex_unlock(&q->mu);
	if (failed && !q->settled) {
		q->settled = 1;
		for (int t = 0; t < q->nth; t++)
			cm_diag_settle(&q->w[t].diag);
	}
	return failed ? -1 : 0;
}

/* Queue LEN bytes of P (CAP bytes, taken) from OFF on for file K.  0, or
 * -1 after a report (a writer's). */
static int enqueue(cm_outq *q, size_t k, char *p, size_t off, size_t len, size_t cap)
{
	struct writer *w = &q->w[k * (size_t)q->nth / q->n];
	pthread_mutex_lock(&q->mu);
	while ((q->inflight >= q->max || (q->inflight && q->inflight_bytes + (len - off) > MAX_BYTES)) &&
	       !q->failed)
		pthread_cond_wait(&q->space, &q->mu);
	if (q->failed) {
		give_back(q, p, cap);
		pthread_mutex_unlock(&q->mu);
		return drain(q);
	}
	w->ring[w->head++ % q->max] = (struct item){k, p, off, len, cap};
	q->inflight++;
	q->inflight_bytes += len - off;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

/* File K's buffer being filled, queued when it holds anything. */
static int queue_cur(cm_outq *q, size_t k)
{
	cm_buf c = q->cur[k];
	if (!c.len)
		return 0;
	memset(&q->cur[k], 0, sizeof q->cur[k]);
	return enqueue(q, k, c.p, 0, c.len, c.cap);
}

/* LEN bytes come for file K: one other file looked at (in turn), its
 * buffer queued when it has gone cold.  0, or -1 after a report. */
static int note(cm_outq *q, size_t k, size_t len)
{
	size_t j = q->scan++ % q->n;
	q->total += len;
	q->last[k] = q->total;
	if (j != k && q->cur[j].len && q->total - q->last[j] > COLD)
		return queue_cur(q, j);
	return 0;
}

int cm_outq_write(cm_outq *q, size_t k, const void *p, size_t len)
{
	const char *s = p;
	if (__atomic_load_n(&q->failed, __ATOMIC_RELAXED) || note(q, k, len) < 0)
		return drain(q);
	while (len) {
		cm_buf *c = &q->cur[k];
		size_t n;
		if (!c->p) {
			pthread_mutex_lock(&q->mu);
			if (q->ncspare)
				*c = q->cspare[--q->ncspare];
			pthread_mutex_unlock(&q->mu);
			if (!c->p)
				*c = (cm_buf){cm_xmalloc(CUR_CAP), 0, CUR_CAP};
			c->len = 0;
		}
		n = CUR_CAP - c->len < len ? CUR_CAP - c->len : len;
		memcpy(c->p + c->len, s, n);
		c->len += n;
		s += n;
		len -= n;
		if (c->len == CUR_CAP && queue_cur(q, k) < 0)
			return -1;
	}
	return 0;
}

int cm_outq_give(cm_outq *q, size_t k, cm_buf *b, size_t off)
{
	/* copied, not taken: the render's buffers, taken by the writers and
	 * handed back to other renderers, spread over every thread's malloc
	 * arena, each grown there again: the 1 GB pair's split at -j 16 by 4
	 * writers peaked at 177 MB against 109-111 MB without (the 16-core
	 * machine); the copy is a memcpy of the window's text on the
	 * render's sink */
	return b->len > off ? cm_outq_write(q, k, b->p + off, b->len - off) : 0;
}

int cm_outq_sync(cm_outq *q)
{
	for (size_t k = 0; k < q->n; k++)
		if (queue_cur(q, k) < 0)
			return -1;
	return drain(q);
}

int cm_outq_free(cm_outq *q, int ok)
{
	int rc = 0;
	if (!q)
		return 0;
	if (ok && q->nth)
		rc = cm_outq_sync(q);
	pthread_mutex_lock(&q->mu);
	q->drop = 1; /* a failed run: what is queued goes nowhere */
	q->stop = 1;
	for (int t = 0; t < q->nth; t++)
		pthread_cond_signal(&q->w[t].work);
	pthread_mutex_unlock(&q->mu);
	for (int t = 0; t < q->nth; t++) {
		pthread_join(q->w[t].th, NULL);
		pthread_cond_destroy(&q->w[t].work);
		free(q->w[t].ring);
	}
	if (q->failed && !q->settled) {
		q->settled = 1;
		rc = -1;
		for (int t = 0; t < q->nth; t++)
			cm_diag_settle(&q->w[t].diag);
	}
	for (size_t k = 0; k < q->n; k++)
		free(q->cur[k].p);
	for (size_t i = 0; i < q->ncspare; i++)
		free(q->cspare[i].p);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->space);
	free(q->cur);
	free(q->last);
	free(q->cspare);
	free(q->w);
	free(q);
	return rc;
}
