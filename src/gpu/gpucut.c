/* gpucut.c - cutting the window's events to a span of the CPU trace
 * (--clip, --steps, --range): which records the plan and the render keep.
 *
 * The rule follows the launching call.  An API call (runtime or driver) is
 * kept by its own times: with --clip when it starts within the span, with
 * --steps and --range when it overlaps it, as the CPU events are.  GPU work
 * (kernels, copies, sets) and syncs are kept when the API call of their
 * correlation is, even when they run past the span's end (stock Kineto
 * keeps such work too), so that an ac2g flow is always kept whole or cut
 * whole.  GPU work and syncs whose call the window lacks are kept by their
 * own times (overlapping the span; a sync under --clip: starting in it),
 * and so are overhead records (overlapping it).
 *
 * A call's record and its work's may come in any order in the window (CUPTI
 * hands them over in different buffers), and the span is known only once
 * the CPU trace has been read.  So the digest notes each API call's
 * correlation and times (24 bytes) in a temporary file as the window is
 * read; once the span is known, that file (not the window) is read once
 * into a table correlation -> kept or cut (an id table, base/idmap.h, held
 * within --memory like the others), which the plan and the render look up
 * from any thread. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/tmpfile.h"
#include "json/jwrite.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NOTE_BYTES 24 /* correlation, start, end: int64 each */
#define KEPT 1
#define CUT 2

void cm_gpu_set_cut(cm_gpu *g, enum cm_gpu_cut mode) { g->cut = (int)mode; }

void gpu_cut_note_api(struct cm_gpu_digest *d, const cm_gpurec *r)
{
	const cm_int *v = r->v;
	int64_t note[3];
	/* a call without times (an unregistered name whose fields are bad)
	 * gets no note: its work is then kept by its own times */
	if (!d->g->cut || !(r->flags & CM_REC_SPAN))
		return;
	if (v[CM_RA_CORR] < INT64_MIN || v[CM_RA_CORR] > INT64_MAX || v[CM_RA_START] < INT64_MIN ||
	    v[CM_RA_START] > INT64_MAX || v[CM_RA_END] < INT64_MIN || v[CM_RA_END] > INT64_MAX)
		return;
	note[0] = (int64_t)v[CM_RA_CORR];
	note[1] = (int64_t)v[CM_RA_START];
	note[2] = (int64_t)v[CM_RA_END];
	cm_buf_put(&d->apis, note, sizeof note);
}

int gpu_cut_collect(cm_gpu *g, const char *p, size_t n)
{
	if (!n)
		return 0;
	if (!g->cut_apis && !(g->cut_apis = cm_temp_file("cut")))
		return -1;
	if (fwrite(p, 1, n, g->cut_apis) != n)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	g->cut_napis += n / NOTE_BYTES;
	return 0;
}

/* Whether [START, END] ns lies in the span as MODE reads it: starting in it
 * (CM_CUT_START: the closed span of --clip) or overlapping it (the
 * half-open range of --steps and --range, as the CPU events are judged,
 * cpucut.h; --clip's work without a call and its overhead: the same test).
 * Times are the output's (trace us). */
static int in_span(const cm_gpu *g, int mode, cm_int start, cm_int end)
{
	double ts = cm_jw_us_double(start - g->base_ns), dur = cm_jw_us_double(end - start);
	if (mode == CM_CUT_START)
		return ts >= g->cut_lo && ts <= g->cut_hi;
	if (dur > 0)
		return ts < g->cut_hi && ts + dur > g->cut_lo;
	return ts >= g->cut_lo && ts < g->cut_hi;
}

int cm_gpu_cut_span(cm_gpu *g, double lo, double hi)
{
	char buf[NOTE_BYTES * 1024];
	size_t got;
	g->cut_lo = lo;
	g->cut_hi = hi;
	if (!g->cut || !g->cut_napis)
		return 0;
	if (!(g->cut_keep = cm_idmap_new(1, g->win.api_lo, g->win.api_hi, g->win.api_n)))
		return -1;
	if (fflush(g->cut_apis) != 0 || fseek(g->cut_apis, 0, SEEK_SET) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
	while ((got = fread(buf, 1, sizeof buf, g->cut_apis)) > 0) {
		for (size_t i = 0; i + NOTE_BYTES <= got; i += NOTE_BYTES) {
			int64_t note[3];
			unsigned char *k;
			memcpy(note, buf + i, sizeof note);
			k = cm_idmap_put(g->cut_keep, note[0], NULL);
			/* a correlation id twice (never seen from CUPTI): kept if either is */
			if (*k != KEPT)
				*k = in_span(g, g->cut, note[1], note[2]) ? KEPT : CUT;
		}
	}
	if (ferror(g->cut_apis))
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
	fclose(g->cut_apis); /* the table has it all */
	g->cut_apis = NULL;
	return 0;
}

static int call_mark(const cm_gpu *g, cm_int corr)
{
	const unsigned char *k;
	if (!g->cut_keep || corr < INT64_MIN || corr > INT64_MAX)
		return 0;
	k = cm_idmap_get(g->cut_keep, (int64_t)corr);
	return k ? *k : 0;
}

int gpu_cut_keep(const cm_gpu *g, const cm_gpurec *r)
{
	const cm_int *v = r->v;
	int mark;
	if (!g->cut)
		return 1;
	switch (r->kind) {
	case CM_REC_RUNTIME:
	case CM_REC_DRIVER:
		return (r->flags & CM_REC_SPAN) && in_span(g, g->cut, v[CM_RA_START], v[CM_RA_END]);
	case CM_REC_KERNEL:
	case CM_REC_MEMCPY:
	case CM_REC_MEMSET:
		mark = call_mark(g, v[CM_RG_CORR]);
		return mark ? mark == KEPT : in_span(g, CM_CUT_OVERLAP, v[CM_RG_START], v[CM_RG_END]);
	case CM_REC_SYNC:
		mark = call_mark(g, v[CM_RS_CORR]);
		return mark ? mark == KEPT : in_span(g, g->cut, v[CM_RS_START], v[CM_RS_END]);
	case CM_REC_OVERHEAD:
		return in_span(g, CM_CUT_OVERLAP, v[CM_RO_START], v[CM_RO_END]);
	}
	return 1; /* a cuda_event record: never drawn, read for the syncs after it */
}
