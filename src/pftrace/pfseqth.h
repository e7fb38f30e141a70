/* pfseqth.h - the Perfetto transcoder's sequential part on a thread of
 * its own (pfseqth.c): the pool's results, batch by batch, handed over in
 * order and worked through there. */
#ifndef CM_PFSEQTH_H
#define CM_PFSEQTH_H
#include "base/buf.h"

typedef struct cm_pfseqth cm_pfseqth;

/* A thread calling FN(CTX, buffer) for each buffer queued, in order; NULL
 * when no thread can be made.  FN returns 0, or -1 (after cm_error, held
 * on the thread and printed by cm_pfseqth_stop; or with nothing reported):
 * then the buffers after it are dropped unseen. */
cm_pfseqth *cm_pfseqth_new(int (*fn)(void *ctx, cm_buf *b), void *ctx);
/* Queue B (B gets back an empty buffer, one worked through already); may
 * wait for room (CM_PFSEQTH_QUEUE buffers).  0, or -1 once FN has failed. */
int cm_pfseqth_put(cm_pfseqth *s, cm_buf *b);
/* Buffers queued at most: the batches a pool's slots may have handed on
 * before the thread takes them, one more being worked through. */
#define CM_PFSEQTH_QUEUE 4
/* Work through what is queued, stop the thread and free S (NULL:
 * nothing); FN's error settled (printed when it is the run's first).  Adds
 * to *BUSY the seconds FN took, and to *IDLE those the thread waited for a
 * buffer.  0, or -1 when FN failed. */
int cm_pfseqth_stop(cm_pfseqth *s, double *busy, double *idle);
#endif
