/* outwriter.c - the output's writing thread (outwriter.h).
 *
 * write(2) of a 2.3 GB output into the page cache is about 0.6 s of one
 * thread on the 16-core machine (issue 30): the kernel copies the bytes
 * and takes the file's lock for each call, so more threads writing at
 * known offsets would only queue on that lock.  What can be had is the
 * overlap: the thread that makes the output (the CPU trace's copy, the
 * render's draining worker) hands full buffers to this thread and goes
 * on, paying a memcpy into the buffer instead of the kernel's copy and
 * its bookkeeping; this thread pays for write(2) and, for an -o file,
 * tells the write-back (writeback.c) as the writer did.  A ring of NBUF
 * buffers, filled in order by the one caller at a time (the output's own
 * callers are serial), written in order here.
 *
 * The thread never prints: a failed write's errno is kept, nothing more is
 * written, and the caller's next put or drain returns it, once, for the
 * output to report on the caller's thread as its own write would have. */
#include "config.h"
#include "io/outwriter.h"
#include "base/diag.h"
#include "base/fdio.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The buffers' size, and all of them together.  1000 KiB, not 1 MiB:
 * writes of a power of two at its own alignment get the page cache's
 * large folios, and on the 2-core machine (a VM, whose free memory goes
 * back to the host) writing into them was sometimes many times as slow:
 * dd of 460 MB with bs=1M took 0.5-12.6 s (1.7-5.3 s of system time),
 * bs=4M 0.15-1.7 s, bs=1000K 0.26-0.57 s, every time; the merge with
 * 1 MiB buffers spent half its CPU in the kernel's copy (perf), with
 * 1000 KiB 3-4%, as without the thread. */
#define UNIT ((size_t)1000 << 10)
#define HELD ((size_t)4000 << 10)
/* The jobs from which the writing and write-back threads are made. */
#define THREADS_JOBS 4

struct cm_owriter {
	int fd;
	cm_wback *wb;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t filled; /* a buffer was handed over, or stop */
	pthread_cond_t freed;  /* a buffer was written, or the thread failed */
	unsigned char **buf;
	size_t *len, unit;
	int nbuf;
	uint64_t head; /* buffers handed over (buffer head % nbuf is the caller's) */
	uint64_t tail; /* buffers written */
	int stop;      /* the thread is to end (what is not written is dropped) */
	int err;       /* the failed write's errno, or 0 */
	int failed;    /* the thread stopped on it */
};

/* The writing thread of W (ARG): write the buffers handed over, oldest
 * first, until stop (what is left is dropped) or a failed write, whose
 * errno it keeps for the caller (the top of the file says why). */
static void *writer_main(void *arg)
{
	cm_owriter *w = arg;
	cm_progress_thread_off();
	pthread_mutex_lock(&w->mu);
	for (;;) {
		size_t i, n;
		int err;
		while (w->tail == w->head && !w->stop)
			pthread_cond_wait(&w->filled, &w->mu);
		if (w->stop)
			break;
		i = (size_t)(w->tail % (uint64_t)w->nbuf);
		n = w->len[i];
		pthread_mutex_unlock(&w->mu);
		err = cm_write_all(w->fd, w->buf[i], n);
		if (!err && w->wb)
			err = cm_wback_wrote(w->wb, n);
		pthread_mutex_lock(&w->mu);
		w->tail++;
		if (err) {
			w->err = err;
			w->failed = 1;
		}
		pthread_cond_broadcast(&w->freed);
		if (err)
			break;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* An environment knob of the benchmarks: "0" or "1" forces the choice,
 * anything else (or none) leaves DEFLT. */
static int knob(const char *name, int deflt)
{
	const char *v = getenv(name);
	return v && !strcmp(v, "0") ? 0 : v && !strcmp(v, "1") ? 1 : deflt;
}

/* With 4 jobs or more, a writing thread and, for an -o file with --sync
 * (WB follows one: outfile.c), a write-back thread; with fewer, every core
 * is busy making the output already, and a thread more would only add its
 * switching and the copy.  The writing
 * thread only where write(2) copies: a file (an -o file, or standard
 * output redirected to one), a pipe or a socket; not a device such as
 * /dev/null, where nothing is copied.  A failure to make either thread
 * leaves the work where it was. */
cm_owriter *cm_owriter_start(int fd, cm_wback *wb, int threads, size_t *unit)
{
	const char *env = getenv("CUPTIMERGE_WRITE_UNIT");
	struct stat st;
	int copies;
	cm_owriter *w = NULL;
	*unit = UNIT;
	if (fstat(fd, &st) < 0)
		return NULL;
	if (env && atol(env) >= 4 && atol(env) <= 65536)
		*unit = (size_t)atol(env) << 10;
	if (knob("CUPTIMERGE_WBTHREAD", threads >= THREADS_JOBS))
		cm_wback_thread(wb);
	copies = S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
	if (knob("CUPTIMERGE_WRITER", threads >= THREADS_JOBS && copies))
		w = cm_owriter_new(fd, wb, *unit, (int)(HELD / *unit));
	return w;
}

cm_owriter *cm_owriter_new(int fd, cm_wback *wb, size_t unit, int nbuf)
{
	cm_owriter *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->fd = fd;
	w->wb = wb;
	w->unit = unit;
	w->nbuf = nbuf < 2 ? 2 : nbuf;
	w->buf = calloc((size_t)w->nbuf, sizeof *w->buf);
	w->len = calloc((size_t)w->nbuf, sizeof *w->len);
	if (!w->buf || !w->len)
		goto fail;
	for (int i = 0; i < w->nbuf; i++)
		if (!(w->buf[i] = malloc(unit)))
			goto fail;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->filled, NULL);
	pthread_cond_init(&w->freed, NULL);
	if (pthread_create(&w->th, NULL, writer_main, w) == 0)
		return w;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->filled);
	pthread_cond_destroy(&w->freed);
fail:
	for (int i = 0; w->buf && i < w->nbuf; i++)
		free(w->buf[i]);
	free(w->buf);
	free(w->len);
	free(w);
	return NULL;
}

unsigned char *cm_owriter_buf(cm_owriter *w)
{
	return w->buf[w->head % (uint64_t)w->nbuf];
}

/* Under MU: the thread's error, once. */
static int take_err(cm_owriter *w)
{
	int err = w->err;
	w->err = 0;
	return err;
}

int cm_owriter_put(cm_owriter *w, size_t len)
{
	int err;
	pthread_mutex_lock(&w->mu);
	if (len && !w->failed) {
		w->len[w->head % (uint64_t)w->nbuf] = len;
		w->head++;
		pthread_cond_signal(&w->filled);
	}
	/* the next buffer must be out of the thread's hands */
	while (w->head - w->tail >= (uint64_t)w->nbuf && !w->failed)
		pthread_cond_wait(&w->freed, &w->mu);
	err = take_err(w);
	pthread_mutex_unlock(&w->mu);
	return err;
}

int cm_owriter_drain(cm_owriter *w)
{
	int err;
	pthread_mutex_lock(&w->mu);
	while (w->tail != w->head && !w->failed)
		pthread_cond_wait(&w->freed, &w->mu);
	err = take_err(w);
	pthread_mutex_unlock(&w->mu);
	return err;
}

void cm_owriter_free(cm_owriter *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->filled);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->filled);
	pthread_cond_destroy(&w->freed);
	for (int i = 0; i < w->nbuf; i++)
		free(w->buf[i]);
	free(w->buf);
	free(w->len);
	free(w);
}
