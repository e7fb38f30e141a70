/* pfpass.c - the Perfetto transcoder's passer thread: the file's writes
 * (the output's sink: write(2), or the gzip compressor's queue) off the
 * sequential part's thread, which at -j 16 bounds the output (pfseg.c);
 * and, before them, the packets of each batch written from what the
 * sequential part worked out (pfseg.c's step 3), so that it only works
 * out what needs order.  The buffers and batches go over by an ordered
 * handoff (base/handoff.c: swapped, no byte copied), a batch as the
 * buffer's auxiliary bytes.
 *
 * A batch's packets depend on that batch's cm_pfwrite alone, so they may
 * be written by the handoff's preparing threads (cm_pfpass_new's WRITERS),
 * several batches at once, the passer's own thread then only passing the
 * bytes on, in order: on 16 CPUs the one passer thread wrote the window's
 * packets in 0.19-0.25 s and passed a .pftrace.gz's bytes on in 0.23 s
 * more of a 0.45 s phase, and the sequential part waited for it
 * (BENCHMARKS.md, "pfpass21").  Since the sequential part got cheaper
 * (pfseq21) and the lanes (lanes23), two such threads gained nothing and
 * cost a little: the transcoder asks for none (pfpool.c's PFT_WRITERS),
 * and the passer writes the packets, or the sequential part does while the
 * passer is behind (pfseg.c's step 3). */
#include "config.h"
#include "pftrace/pfpass.h"
#include "pftrace/pfrecord.h"
#include "base/handoff.h"
#include "base/diag.h"

#include <stdint.h>
#include <stdlib.h>

/* Buffers queued at most (and one a writer thread); more with
 * CUPTIMERGE_PFT_PASS_QUEUE (a benchmarking aid, 1-32: bench/dev-knobs29.sh;
 * the bytes do not depend on it). */
#define PASS_QUEUE 4
#define PASS_QUEUE_MAX 32
/* -v: the phases of the buffers put and not yet passed on, a ring
 * indexed by their count (written before the put, read after the take:
 * the handoff's lock orders them); longer than the queue, so that an
 * entry is never rewritten while its buffer waits. */
#define PASS_PHQ 64
_Static_assert(PASS_PHQ > PASS_QUEUE_MAX + 8, "a phase is kept for every slot (8: the most writers)");

struct cm_pfpass {
	cm_handoff *h;
	int (*sink)(void *ctx, const void *p, size_t n);
	void *ctx;
	double passed, wrote; /* on the passer's thread, read once it is joined */
	/* -v (cm_pfpass_verbose) */
	int verbose;
	cm_pft_probe probe;
	unsigned char phq[PASS_PHQ];
	uint64_t nput, ntaken;
	struct cm_pfpass_phase ph[CM_PFPASS_PHASES];
};

/* The handoff's preparing work: B's batch W (NULL: none) written into
 * B, its time kept in W for pass_one (-v). */
static void write_one(void *arg, cm_buf *b, void *w)
{
	double t0 = cm_now_s();
	(void)arg;
	if (!w)
		return;
	cm_pfseg_write(w, b);
	((struct cm_pfwrite *)w)->wrote_s = cm_now_s() - t0;
}

/* The handoff's consumer: B's bytes (its batch W's packets written into
 * it already: write_one) passed on.  0, or -1 when the sink failed. */
static int pass_one(void *arg, cm_buf *b, void *w)
{
	cm_pfpass *p = arg;
	struct cm_pfpass_phase *ph = p->verbose ? &p->ph[p->phq[p->ntaken++ % PASS_PHQ]] : NULL;
	if (w) {
		p->wrote += ((struct cm_pfwrite *)w)->wrote_s;
		if (ph)
			ph->wrote += ((struct cm_pfwrite *)w)->wrote_s;
	}
	return cm_pfpass_call(p->sink, p->ctx, p->probe, b->p, b->len, ph, &p->passed) < 0 ? -1 : 0;
}

int cm_pfpass_call(int (*sink)(void *ctx, const void *p, size_t n), void *ctx, cm_pft_probe probe, const void *p,
		   size_t n, struct cm_pfpass_phase *ph, double *passed)
{
	double t0 = cm_now_s(), t1, w0 = 0, e0 = 0, w1, e1, c0 = 0;
	unsigned long v0 = 0, i0 = 0, v1, i1;
	int rc;
	if (ph) {
		c0 = cm_thread_cpu_s();
		cm_thread_switches(&v0, &i0);
		if (probe)
			probe(ctx, &w0, &e0);
	}
	rc = sink(ctx, p, n);
	t1 = cm_now_s();
	*passed += t1 - t0;
	if (ph) {
		ph->passed += t1 - t0;
		ph->passed_cpu += cm_thread_cpu_s() - c0;
		cm_thread_switches(&v1, &i1);
		ph->vsw += v1 - v0;
		ph->isw += i1 - i0;
		ph->last = t1;
		ph->bufs++;
		if (probe) {
			probe(ctx, &w1, &e1);
			ph->sink_wait += w1 - w0;
			ph->sink_emit += e1 - e0;
		}
	}
	return rc;
}

/* A slot's batch freed (cm_handoff_new's AUX_FREE). */
static void batch_free(void *w) { cm_pfwrite_free(w); }

cm_pfpass *cm_pfpass_new(int (*sink)(void *ctx, const void *p, size_t n), void *ctx, int writers)
{
	cm_pfpass *p = cm_xcalloc(1, sizeof *p);
	const char *env = getenv("CUPTIMERGE_PFT_WRITERS");
	size_t queue = PASS_QUEUE;
	if (env && *env && atoi(env) >= 0 && atoi(env) <= 8)
		writers = atoi(env);
	if ((env = getenv("CUPTIMERGE_PFT_PASS_QUEUE")) && *env && atoi(env) >= 1 && atoi(env) <= PASS_QUEUE_MAX)
		queue = (size_t)atoi(env);
	writers = writers < 0 ? 0 : writers > 8 ? 8 : writers;
	p->sink = sink;
	p->ctx = ctx;
	if (!(p->h = cm_handoff_new_prep(queue + (size_t)writers, writers, write_one, pass_one, p,
					 sizeof(struct cm_pfwrite), batch_free))) {
		free(p);
		return NULL;
	}
	return p;
}

void cm_pfpass_verbose(cm_pfpass *p, cm_pft_probe probe)
{
	p->verbose = 1;
	p->probe = probe;
}

/* The handoff's put of B (and W, or NULL) of phase PH: counted, with -v,
 * in PH.  0 or -1. */
static int put(cm_pfpass *p, cm_buf *b, struct cm_pfwrite *w, int ph)
{
	double t0;
	int rc;
	if (!p->verbose)
		return cm_handoff_put(p->h, b, w);
	ph = ph < 0 || ph >= CM_PFPASS_PHASES ? 0 : ph;
	p->phq[p->nput % PASS_PHQ] = (unsigned char)ph;
	t0 = cm_now_s();
	rc = cm_handoff_put(p->h, b, w);
	p->ph[ph].put_wait += cm_now_s() - t0;
	if (rc == 0)
		p->nput++;
	return rc;
}

int cm_pfpass_put(cm_pfpass *p, cm_buf *b, int ph) { return put(p, b, NULL, ph); }

int cm_pfpass_full(cm_pfpass *p) { return cm_handoff_full(p->h); }

int cm_pfpass_put_batch(cm_pfpass *p, cm_buf *b, struct cm_pfwrite *w, int ph)
{
	if (put(p, b, w, ph) < 0)
		return -1;
	w->rec.len = w->lanes.len = w->cvals.len = 0; /* a batch written: emptied */
	return 0;
}

int cm_pfpass_stop(cm_pfpass *p, double *passed, double *wrote, double *waited, struct cm_pfpass_phase *ph)
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
	for (int i = 0; ph && p->verbose && i < CM_PFPASS_PHASES; i++) {
		ph[i].wrote += p->ph[i].wrote;
		ph[i].passed += p->ph[i].passed;
		ph[i].passed_cpu += p->ph[i].passed_cpu;
		ph[i].sink_wait += p->ph[i].sink_wait;
		ph[i].sink_emit += p->ph[i].sink_emit;
		ph[i].put_wait += p->ph[i].put_wait;
		ph[i].bufs += p->ph[i].bufs;
		ph[i].vsw += p->ph[i].vsw;
		ph[i].isw += p->ph[i].isw;
		if (p->ph[i].last > ph[i].last)
			ph[i].last = p->ph[i].last;
	}
	free(p);
	return rc;
}
