/* pfbatch.h - a batch of elements encoded one element at a time
 * (pfbatch.c), for a writer that hands its elements over as it makes them
 * (pfinsert.c's encoders, the merge's render), some of them as their
 * value rather than their text. */
#ifndef CM_PFBATCH_H
#define CM_PFBATCH_H

#include "pftrace/pfevent.h"

/* A batch begins in OUT (its length a multiple of 8): its interning
 * starts over.  Returns where its records begin, for cm_pfbatch_close. */
size_t cm_pfbatch_open(cm_pfev *w, cm_buf *out);
/* The element S[0..N), at OFF in the document, as a record appended to
 * OUT; V, when not NULL, is its value as cm_jval_parse_py makes it of S
 * (numbers' has_iv as pfparse.c keeps them, or 0), taken instead of
 * parsing S (but with CUPTIMERGE_PFT_GENERIC).  0, or -1 after a report. */
int cm_pfbatch_elem(cm_pfev *w, const cm_jval *v, const char *s, size_t n, int64_t off, cm_buf *out);
/* The batch SEQ whose records began at AT in OUT ends: its slices and
 * tail appended, handed to the lanes' queue with LANES (else its taker
 * does: cm_pfbatch_put_lanes). */
void cm_pfbatch_close(cm_pfev *w, uint64_t seq, size_t at, cm_buf *out, int lanes);

#endif
