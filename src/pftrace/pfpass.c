/* pfpass.c - the Perfetto transcoder's passer thread: the file's writes
 * (the output's sink: write(2), or the gzip compressor's queue) off the
 * sequential part's thread, which at -j 16 bounds the output (pfseg.c);
 * and, before them, the packets of each batch written from what the
 * sequential part worked out (pfseg.c's step 3), so that it only works
 * out what needs order.  The buffers and batches go over by an ordered
 * handoff (base/handoff.c: swapped, no byte copied), a batch as the
 * buffer's auxiliary bytes. */
#include "config.h"
#include "pftrace/pfpass.h"
#include "pftrace/pfevent.h"
#include "base/handoff.h"
#include "base/diag.h"

#include <stdlib.h>

/* Buffers queued at most. */
#define PASS_QUEUE 4

struct cm_pfpass {
	cm_handoff *h;
	int (*sink)(void *ctx, const void *p, size_t n);
	void *ctx;
	double passed, wrote; /* on the passer's thread, read once it is joined */
};

/* The handoff's consumer: B's batch W (NULL: none) written into B, then
 * B's bytes passed on.  0, or -1 when the sink failed. */
static int pass_one(void *arg, cm_buf *b, void *w)
{
	cm_pfpass *p = arg;
	double t0 = cm_now_s(), t1;
	int rc;
	if (w) {
		cm_pfseg_write(w, b);
		t1 = cm_now_s();
		p->wrote += t1 - t0;
		t0 = t1;
	}
	rc = p->sink(p->ctx, b->p, b->len);
	p->passed += cm_now_s() - t0;
	return rc < 0 ? -1 : 0;
}

/* A slot's batch freed (cm_handoff_new's AUX_FREE). */
static void batch_free(void *w) { cm_pfwrite_free(w); }

cm_pfpass *cm_pfpass_new(int (*sink)(void *ctx, const void *p, size_t n), void *ctx)
{
	cm_pfpass *p = cm_xcalloc(1, sizeof *p);
	p->sink = sink;
	p->ctx = ctx;
	if (!(p->h = cm_handoff_new(PASS_QUEUE, pass_one, p, sizeof(struct cm_pfwrite), batch_free))) {
		free(p);
		return NULL;
	}
	return p;
}

int cm_pfpass_put(cm_pfpass *p, cm_buf *b) { return cm_handoff_put(p->h, b, NULL); }

int cm_pfpass_full(cm_pfpass *p) { return cm_handoff_full(p->h); }

int cm_pfpass_put_batch(cm_pfpass *p, cm_buf *b, struct cm_pfwrite *w)
{
	if (cm_handoff_put(p->h, b, w) < 0)
		return -1;
	w->rec.len = w->places.len = w->jobs.len = w->cvals.len = 0; /* a batch written: emptied */
	return 0;
}

int cm_pfpass_stop(cm_pfpass *p, double *passed, double *wrote, double *waited)
{
	cm_handoff_stats st = {0};
	int rc;
	if (!p)
		return 0;
	rc = cm_handoff_finish(p->h, &st);
	*passed += p->passed;
	*wrote += p->wrote;
	if (waited)
		*waited += st.waited;
	free(p);
	return rc;
}
