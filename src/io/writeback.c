/* writeback.c - write-back started behind the writer of an -o file, with --sync.
 *
 * -o FILE --sync promises a file that is on the disk before it takes
 * FILE's name (outfile.c: fsync, then link or rename); a plain -o FILE
 * promises only atomicity, and none of this runs for it (outfile.c).  Left
 * to the kernel, the pages of a 2.3 GB output stay dirty until that fsync
 * (its own write-back starts only once the dirty pages pass a share of
 * memory, dirty_background_ratio, far more than 2.3 GB on a machine of
 * 128 GB), which then wrote them all
 * while the run had nothing else to do: a second on the 16-core machine
 * (issue 30), where `> FILE`, which does not sync, was 1.4 times as fast.
 * So the writer hands each step of STEP bytes to the disk as soon as it is
 * written (sync_file_range(2), SYNC_FILE_RANGE_WRITE: start, do not wait),
 * and the disk writes while the merge renders the rest; the final fsync
 * waits only for the last steps and the file's metadata.
 *
 * The steps more than a lag (64 MiB) behind the writer are then waited for
 * (WAIT_BEFORE | WRITE | WAIT_AFTER, which also writes a page dirtied
 * again meanwhile), so a disk slower than the merge holds the writer
 * back once the lag is in flight, instead of leaving the whole output dirty in
 * memory for the kernel's throttling to find: the page cache of a merge
 * does not grow with its output (one among many ranks of a batch).  The
 * wait is on the thread that writes, which the renderers then wait for,
 * as a slow disk would stop them at the end anyway; the lag keeps a burst of
 * output from waiting for the disk at all.
 *
 * From 4 jobs up (output.c) all of this runs on a thread of its own
 * (cm_wback_thread): starting a step is not free (the kernel walks the
 * pages, allocates the blocks of delayed allocation and builds the
 * requests on the calling thread, and blocks when the disk's queue is
 * full), and the writer was the thread the renderers waited for.  The
 * writer then only counts, and waits only when the disk lags
 * CM_WBACK_HOLD lags (192 MiB) behind it: the dirty pages stay bounded
 * all the same.
 *
 * sync_file_range makes no promise about the metadata and the disk's
 * cache: it is only a head start, the fsync at the end still decides.
 * But its wait consumes a write-back error (the file's error cursor
 * advances, so fsync would not see it again): an error is returned for
 * the caller to report at once.  Without sync_file_range (not Linux) or
 * where the file system does not take it, the kernel's write-back is left
 * as it was. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sync_file_range */
#endif
#include "config.h"
#include "io/writeback.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>

/* 8 MiB a step: a call a few milliseconds of disk, large enough to cost
 * nothing, small enough that the last step's write at the end is short.
 * But a file smaller than a step (each of the 60 files of a --split of
 * the 200,000-op pair is 3 MB) would then have all of it left to its
 * fsync, all files at once at the end: 0.16 to 0.26 s from the first
 * fsync's start to the last one's end on the 2-core machine (strace -T),
 * 0.05 to 0.10 s with 1 MiB steps.  And the 1 GB pair's split makes 60
 * files of 39 MB, each of which would leave up to a step to the end.  So
 * a step is a 32nd of the file so far, between 1 MiB and 8 MiB: some 70
 * calls more for a large file (8 MiB steps from 256 MiB on), a head start
 * for a small one, and at most about 3% of a file left to its fsync.
 * 64 MiB in flight before the writer waits: on the 2-core machine, with
 * 16 MiB the writer spent 0.13 s in sync_file_range over the 200 MB
 * pair's 464 MB output, with 64 MiB 0.07 s, with 256 MiB 0.08 s; the
 * fsync at the end took 0.2 s without, 0.002-0.003 s with 64 MiB (strace
 * -T).  The 1 GB pair's 2.3 GB: fsync 0.19-0.39 s without (23 GB of
 * memory: the kernel had started), 0.01-0.02 s with, and 0.4-1.5 s in
 * sync_file_range, wall time on a machine loaded 5 times over. */
#define STEP CM_WBACK_STEP
#define MIN_STEP CM_WBACK_MIN

/* The step after POS bytes. */
static int64_t step_at(int64_t pos)
{
	int64_t s = pos / CM_WBACK_SHARE;
	return s < MIN_STEP ? MIN_STEP : s > STEP ? STEP : s;
}

void cm_wback_init(cm_wback *wb, int fd)
{
	const char *env = getenv("CUPTIMERGE_WRITEBACK");
	char *end;
	long long mib;
	wb->fd = fd;
	wb->pos = wb->queued = wb->waited = 0;
	wb->lag = CM_WBACK_LAG;
	wb->th = NULL;
	if (env && *env) {
		mib = strtoll(env, &end, 10);
		if (!*end && mib == 0)
			wb->fd = -1;
		else if (!*end && mib > 0 && mib < ((int64_t)1 << 40))
			wb->lag = (int64_t)mib << 20;
	}
#ifndef SYNC_FILE_RANGE_WRITE
	wb->fd = -1;
#endif
}

#ifdef SYNC_FILE_RANGE_WRITE
/* sync_file_range over [FROM, TO) with FLAGS.  0, 1 when the file does not
 * take it (stop trying), or -1 with errno (a write-back error). */
static int range(int fd, int64_t from, int64_t to, unsigned flags)
{
	int rc;
	do
		rc = sync_file_range(fd, from, to - from, flags);
	while (rc < 0 && errno == EINTR);
	if (rc < 0 && (errno == ENOSYS || errno == EINVAL || errno == ESPIPE || errno == EOPNOTSUPP))
		return 1;
	return rc < 0 ? -1 : 0;
}
#endif

/* The write-back thread (cm_wback_thread): the writer only counts, under
 * MU; the thread starts the steps and waits for the lagging ones, as the
 * writer did, with MU released. */
struct cm_wback_th {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t more; /* the writer wrote (or stops): for the thread */
	pthread_cond_t less; /* the thread finished a step or failed: for the writer */
	int64_t pos;         /* what the writer wrote: the thread copies it to wb->pos */
	int64_t waited;      /* wb->waited, as the writer may read it */
	int stop;
	int err;             /* a write-back error for the writer to return, once */
	int done;            /* the thread stopped (an error, or the file does not take it) */
};

static int wrote_inline(cm_wback *wb, uint64_t n);

int cm_wback_wrote(cm_wback *wb, uint64_t n)
{
	struct cm_wback_th *t = wb->th;
	int err;
	if (!t)
		return wrote_inline(wb, n);
	pthread_mutex_lock(&t->mu);
	t->pos += (int64_t)n;
	pthread_cond_signal(&t->more);
	/* the disk lags too far: hold the writer, as the inline wait does */
	while (!t->done && t->pos - t->waited > CM_WBACK_HOLD * wb->lag)
		pthread_cond_wait(&t->less, &t->mu);
	err = t->err;
	t->err = 0;
	pthread_mutex_unlock(&t->mu);
	return err;
}

/* The thread: follow t->pos with wrote_inline's steps, MU released while
 * it calls the kernel (wb->queued and ->waited are written here only, and
 * read by the writer under MU). */
static void *wback_main(void *arg)
{
	cm_wback *wb = arg;
	struct cm_wback_th *t = wb->th;
	pthread_mutex_lock(&t->mu);
	for (;;) {
		int64_t pos = t->pos, upto = pos / MIN_STEP * MIN_STEP, n;
		int err;
		if (t->stop)
			break;
		if (upto - wb->queued < step_at(pos)) {
			pthread_cond_wait(&t->more, &t->mu);
			continue;
		}
		pthread_mutex_unlock(&t->mu);
		n = pos - wb->pos;
		err = wrote_inline(wb, (uint64_t)n);
		pthread_mutex_lock(&t->mu);
		t->waited = wb->waited;
		if (err || wb->fd < 0) {
			t->err = err;
			t->done = 1;
		}
		pthread_cond_broadcast(&t->less);
		if (t->done)
			break;
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

void cm_wback_thread(cm_wback *wb)
{
	struct cm_wback_th *t;
	if (wb->fd < 0 || wb->th || !(t = calloc(1, sizeof *t)))
		return;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->more, NULL);
	pthread_cond_init(&t->less, NULL);
	t->pos = wb->pos;
	wb->th = t;
	if (pthread_create(&t->th, NULL, wback_main, wb) != 0) {
		wb->th = NULL;
		pthread_mutex_destroy(&t->mu);
		pthread_cond_destroy(&t->more);
		pthread_cond_destroy(&t->less);
		free(t);
	}
}

int cm_wback_end(cm_wback *wb)
{
	struct cm_wback_th *t = wb->th;
	int err;
	if (!t)
		return 0;
	pthread_mutex_lock(&t->mu);
	t->stop = 1;
	pthread_cond_signal(&t->more);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);
	err = t->err;
	wb->pos = t->pos;
	wb->th = NULL;
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->more);
	pthread_cond_destroy(&t->less);
	free(t);
	return err;
}

/* cm_wback_wrote on the writer's thread, or the write-back thread's step. */
static int wrote_inline(cm_wback *wb, uint64_t n)
{
#ifdef SYNC_FILE_RANGE_WRITE
	int64_t upto;
	int rc;
	if (wb->fd < 0)
		return 0;
	wb->pos += (int64_t)n;
	upto = wb->pos / MIN_STEP * MIN_STEP; /* whole MiBs only: the last one is still being filled */
	if (upto - wb->queued < step_at(wb->pos))
		return 0;
	rc = range(wb->fd, wb->queued, upto, SYNC_FILE_RANGE_WRITE);
	if (rc == 0)
		wb->queued = upto;
	if (rc == 0 && wb->queued - wb->waited > wb->lag) {
		rc = range(wb->fd, wb->waited, wb->queued - wb->lag,
			   SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
		if (rc == 0)
			wb->waited = wb->queued - wb->lag;
	}
	if (rc > 0)
		wb->fd = -1;
	return rc < 0 ? errno : 0;
#else
	(void)wb;
	(void)n;
	return 0;
#endif
}
