/* writeback.h - write-back started behind the writer of an -o file with
 * --sync, so that the fsync(2) that ends the run finds little left to
 * write. */
#ifndef CM_WRITEBACK_H
#define CM_WRITEBACK_H

#include <stdint.h>

/* The write-back goes in steps of a CM_WBACK_SHARE-th of what is written,
 * at least CM_WBACK_MIN bytes and at most CM_WBACK_STEP, whole multiples
 * of CM_WBACK_MIN; the writer waits for those more than CM_WBACK_LAG
 * behind it (writeback.c says why). */
#define CM_WBACK_SHARE 32
#define CM_WBACK_MIN ((int64_t)1 << 20)
#define CM_WBACK_STEP ((int64_t)8 << 20)
#define CM_WBACK_LAG ((int64_t)64 << 20)
#define CM_WBACK_HOLD 3

/* Where a file's write-back stands: bytes [0, queued) have been handed to
 * the disk, [0, waited) are on it.  All zero: nothing written yet. */
typedef struct cm_wback {
	int fd;         /* the file, or -1: write-back left to the kernel */
	int64_t pos;    /* bytes written so far (the file is written in order) */
	int64_t queued; /* write-back started up to here */
	int64_t waited; /* and finished up to here */
	int64_t lag;    /* the writer waits for what lags more than this */
	struct cm_wback_th *th; /* cm_wback_thread: the thread that does it, or NULL */
} cm_wback;

/* Follow FD, a regular file opened for writing at offset 0, which only this
 * writer extends.  A FD of -1 (or a system without sync_file_range(2))
 * makes every later call do nothing, as does CUPTIMERGE_WRITEBACK=0; any
 * other number there is the lag in MiB (default CM_WBACK_LAG): a
 * benchmarking aid, so that one binary measures both ways in one run. */
void cm_wback_init(cm_wback *wb, int fd);

/* N more bytes were written at the end.  Starts the write-back of the
 * whole steps behind the writer and waits for the steps that lag too far
 * (writeback.c says how far), which bounds the dirty pages.  0, or an
 * errno: a write-back error, which the caller reports as a write error
 * (the wait consumed it: fsync will not report it again). */
int cm_wback_wrote(cm_wback *wb, uint64_t n);

/* Hand the write-back to a thread of its own (writeback.c says why), so
 * that cm_wback_wrote only counts: it waits only when the disk lags
 * CM_WBACK_HOLD times the lag behind the writer, and returns the thread's
 * write-back error, once.  Does nothing when there is nothing to follow
 * or no thread can be made (the writer then does it, as above). */
void cm_wback_thread(cm_wback *wb);

/* The output is complete or abandoned: stop following it (join the
 * thread).  0, or the errno of a write-back error not yet returned. */
int cm_wback_end(cm_wback *wb);

#endif
