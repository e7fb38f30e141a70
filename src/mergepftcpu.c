/* mergepftcpu.c - the CPU trace's parts encoded on the copy's threads
 * ("direct parts"): the copy's hook (cpu/cpucopy.h's cm_cpucopy_enc) for a
 * merge to .pftrace.
 *
 * The copy (cpu/cpucopypar.c) reads the CPU trace's events past the
 * metadata in parts, each on a worker, and knows from the layout where
 * each kept element begins and ends.  As text, the parts went in order to
 * the transcoder's one writer thread, which copied them into its chunks;
 * a worker then walked each chunk again (guessing where elements begin),
 * parsed and encoded its elements, and the sequential part put the
 * batches in order: on 16 CPUs the 1 GB pair's CPU events took 0.27-0.40 s
 * to .pftrace.gz against the .json.gz's 0.15-0.18 (issue 25).  Here each
 * part's kept elements are encoded by the worker that read them, a part a
 * batch (its strings interned anew), into the transcoder's buffers
 * (pftrace/pfinsert.c's direct path, as the window's groups are:
 * mergepft.c), the part's lanes put under its number; the copy's in-order
 * sink hands only the batches' references to the transcoder's sequential
 * part.  The text before the parts (the document's head, the metadata)
 * and after them (an element too long for a part, the array's end, the
 * members after it) still goes as text: the transcoder takes the parts'
 * batches as inserted between the two (cm_pft_insert_own_begin), so the
 * text after goes on as if they were not there, the walk having stopped
 * after an element (cpucopy_array_feed).  The parts' pieces are numbered
 * before the window's (its run begins after theirs ended), so the lanes
 * get the slices in the document's order, and the lanes keep the parts'
 * slices for the window's calls to tie with, as the text's.
 *
 * The bytes: the batches are the parts, cut at the layout's marks, which
 * do not depend on -j (the parts run at -j 1 too) nor on the read size;
 * not those of the same merge with the parts as text (a gzip input, a
 * pipe, CUPTIMERGE_PFT_PARTS=0): Perfetto shows the same
 * (tests/e2e/pfparts.sh).  A CPU event that cannot be written is refused
 * as CPUFILE:OFFSET (its offset in the CPU trace: the part knows it),
 * where the text's refusal names the output and the JSON text's offset.
 * CUPTIMERGE_PFT_PARTS=0, a testing aid, sends the parts as text (so
 * does CUPTIMERGE_PFT_TEXT=1, the window's events too);
 * CUPTIMERGE_PFT_DIRECT=0 each part's batch through the transcoder's pool
 * (the same bytes), as it does the window's. */
#include "config.h"
#include "mergepft.h"
#include "pftrace/pftrace.h"

#include <stdlib.h>
#include <string.h>

/* cm_cpucopy_enc's begin: the batches go in after the text so far. */
static int begin(void *ctx)
{
	cm_mergepft_parts *p = ctx;
	cm_pft_insert_direct(p->t, p->direct);
	return cm_pft_insert_own_begin(p->t);
}

/* cm_cpucopy_enc's enc_new and enc_free: a worker's encoder (made once
 * begin has said the path). */
static void *enc_new(void *ctx) { return cm_pft_enc_new(((cm_mergepft_parts *)ctx)->t); }
static void enc_free(void *enc) { cm_pft_enc_free(enc); }

/* cm_cpucopy_enc's part: the part's elements as one batch (none when it
 * kept none): OUT gets the batch's reference (the direct path, its lanes
 * put under the part's number by cm_pft_enc_end), else its records.  0,
 * -1 after a refusal, -2 when the run has failed already. */
static int part(void *ectx, uint64_t piece, const char *text, const uint64_t *ab, size_t n, const char *label,
		uint64_t off, cm_buf *out)
{
	cm_pft_enc *e = ectx;
	int rc;
	cm_pft_enc_begin(e, piece);
	cm_pft_enc_label(e, label);
	if (n) {
		if ((rc = cm_pft_enc_open(e, out)) < 0)
			return rc;
		for (size_t i = 0; i < n; i++)
			if (cm_pft_enc_text(e, text + ab[2 * i], (size_t)(ab[2 * i + 1] - ab[2 * i]),
					    (int64_t)(off + ab[2 * i]), out) < 0)
				return -1;
		if (cm_pft_enc_close(e, out) < 0)
			return -1;
	}
	return cm_pft_enc_end(e, out);
}

/* cm_cpucopy_enc's hand: a part's batch to the transcoder, in order (on
 * the direct path its reference: 8 bytes, cm_pft_enc_close's).  0, or -1. */
static int hand(void *ctx, const void *p, size_t n)
{
	cm_mergepft_parts *pp = ctx;
	if (!n)
		return 0;
	return cm_pft_insert_records(pp->t, p, pp->direct ? 8 : n) < 0 ? -1 : 0;
}

/* cm_cpucopy_enc's end: the text after goes on; or the run stopped. */
static int end(void *ctx, int ok)
{
	cm_mergepft_parts *p = ctx;
	if (ok)
		return cm_pft_insert_end(p->t);
	cm_pft_insert_abort(p->t);
	return -1;
}

int cm_mergepft_cpu_parts(const cm_evout *eo, cm_mergepft_parts *p)
{
	const char *env = getenv("CUPTIMERGE_PFT_PARTS"); /* a testing aid: the parts as text */
	/* (not with CUPTIMERGE_PFT_TEXT either: all of it as text) */
	if (!cm_mergepft_applies(eo) || (env && *env && !strcmp(env, "0")))
		return 0;
	p->t = cm_output_codec_state(eo->out);
	p->direct = cm_mergepft_direct();
	p->enc = (cm_cpucopy_enc){p, begin, enc_new, enc_free, part, hand, end};
	return 1;
}
