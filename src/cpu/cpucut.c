/* cpucut.c - cutting the CPU trace's events to a range of time (--steps,
 * --range): the notes of the first pass, the range and the tables made
 * from them, and the copy's decision for each event.
 *
 * The first pass (cpuscan.c) sees every event; when cutting, it notes each
 * one in order (25 bytes: a kind, its times, a key) in a temporary file,
 * and the extent of the ProfilerStep#N events that --steps asks for.  Once
 * it is done the range is known, and the notes (not the trace) are read
 * once for what the copy's decisions depend on beyond the event itself:
 * whether the call of each correlation is kept (GPU work in the trace, as
 * a stock Kineto trace has it, goes with its launching call, even past the
 * range's end; so does an ac2g flow) and the times of every event of each
 * flow id (a flow is kept only when all of it is in the range: never cut
 * in two).  Both are id tables (base/idmap.h), within --memory.  The copy
 * then reads the notes again, in step with the elements it copies.
 *
 * The rules: metadata ("M") is always kept, and so are events without a
 * number for ts; an event with a duration is kept when it overlaps the
 * half-open range [lo, hi) (kept whole: never cut mid-slice), an instant
 * when it falls in it.  Two flows of different categories that share an
 * id (not ac2g) are judged as one: kept only when both are in the range,
 * so that still none is cut in two. */
#include "config.h"
#include "cpu/cpucut.h"
#include "base/diag.h"
#include "exitcode.h"
#include "io/tmpfile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KEPT 1
#define CUT 2
#define READ_BUF (CM_CPUCUT_REC * 4096)

struct flow_span { double lo, hi; };

void cm_cpucut_reset(cm_cpucut *k)
{
	if (k->notes)
		fclose(k->notes);
	k->notes = NULL;
	k->nnotes = 0;
	k->steps_any = k->steps_found = 0;
	k->step_lo = INFINITY;
	k->step_hi = -INFINITY;
	k->call_lo = k->flow_lo = INT64_MAX;
	k->call_hi = k->flow_hi = INT64_MIN;
	k->calls = k->flows = k->works = 0;
}

int cm_cpucut_fold(cm_cpucut *k, const cm_cpucut *part, const char *notes, size_t n)
{
	if (part) {
		k->steps_any += part->steps_any;
		k->steps_found += part->steps_found;
		k->step_lo = part->step_lo < k->step_lo ? part->step_lo : k->step_lo;
		k->step_hi = part->step_hi > k->step_hi ? part->step_hi : k->step_hi;
		k->call_lo = part->call_lo < k->call_lo ? part->call_lo : k->call_lo;
		k->call_hi = part->call_hi > k->call_hi ? part->call_hi : k->call_hi;
		k->flow_lo = part->flow_lo < k->flow_lo ? part->flow_lo : k->flow_lo;
		k->flow_hi = part->flow_hi > k->flow_hi ? part->flow_hi : k->flow_hi;
		k->calls += part->calls;
		k->flows += part->flows;
		k->works += part->works;
	}
	if (!n)
		return 0;
	if (!k->notes && !(k->notes = cm_temp_file("cut")))
		return -1;
	if (fwrite(notes, 1, n, k->notes) != n)
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno)), -1;
	k->nnotes += n / CM_CPUCUT_REC;
	return 0;
}

/* One note. */
struct note {
	int kind, x;
	double ts, end;
	int64_t key;
};

static void unpack(const char *p, struct note *n)
{
	n->kind = (unsigned char)p[0] & ~CM_CUTK_X;
	n->x = ((unsigned char)p[0] & CM_CUTK_X) != 0;
	memcpy(&n->ts, p + 1, 8);
	memcpy(&n->end, p + 9, 8);
	memcpy(&n->key, p + 17, 8);
}

/* Read the notes from the start, a buffer at a time: FN for each.  0, or
 * -1 after a report. */
static int each_note(cm_cpucut *k, void (*fn)(cm_cpucut *k, const struct note *n))
{
	char *buf;
	size_t got;
	if (!k->notes)
		return 0;
	if (fflush(k->notes) != 0 || fseek(k->notes, 0, SEEK_SET) != 0)
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno)), -1;
	buf = cm_xmalloc(READ_BUF);
	while ((got = fread(buf, 1, READ_BUF, k->notes)) > 0) {
		for (size_t i = 0; i + CM_CPUCUT_REC <= got; i += CM_CPUCUT_REC) {
			struct note n;
			unpack(buf + i, &n);
			fn(k, &n);
		}
	}
	free(buf);
	if (ferror(k->notes))
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno)), -1;
	return 0;
}

/* The tables: the calls' marks, the flows' spans. */
static void table_note(cm_cpucut *k, const struct note *n)
{
	if (n->kind == CM_CUTK_CALL) {
		unsigned char *m = cm_idmap_put(k->call_keep, n->key, NULL);
		if (*m != KEPT) /* a correlation twice: kept if either is */
			*m = cm_cpucut_in(k->lo, k->hi, n->ts, n->end) ? KEPT : CUT;
	} else if (n->kind == CM_CUTK_FLOW) {
		int created;
		struct flow_span *f = cm_idmap_put(k->flow_span, n->key, &created);
		if (created || n->ts < f->lo)
			f->lo = n->ts;
		if (created || n->ts > f->hi)
			f->hi = n->ts;
	}
}

/* Whether the event of note N is kept (the tables made). */
static int decide(const cm_cpucut *k, const struct note *n)
{
	const unsigned char *m;
	const struct flow_span *f;
	switch (n->kind) {
	case CM_CUTK_ALWAYS: return 1;
	case CM_CUTK_WORK:
	case CM_CUTK_AC2G:
		m = k->call_keep ? cm_idmap_get(k->call_keep, n->key) : NULL;
		if (m)
			return *m == KEPT;
		return cm_cpucut_in(k->lo, k->hi, n->ts, n->end);
	case CM_CUTK_FLOW:
		f = cm_idmap_get(k->flow_span, n->key);
		return f && cm_cpucut_in(k->lo, k->hi, f->lo, f->lo) && cm_cpucut_in(k->lo, k->hi, f->hi, f->hi);
	default: return cm_cpucut_in(k->lo, k->hi, n->ts, n->end);
	}
}

/* The extent of the kept X events. */
static void extent_note(cm_cpucut *k, const struct note *n)
{
	if (!n->x || !decide(k, n))
		return;
	k->kept_min = n->ts < k->kept_min ? n->ts : k->kept_min;
	k->kept_max = n->end > k->kept_max ? n->end : k->kept_max;
}

int cm_cpucut_resolve(cm_cpucut *k, const char *file, size_t budget)
{
	if (k->mode == CM_CPUCUT_STEPS) {
		if (!k->steps_any)
			return cm_error(CM_EXIT_DATA, file, -1,
					"the trace has no ProfilerStep#N events, which --steps selects by "
					"(use --range)"), -1;
		if (!k->steps_found)
			return cm_error(CM_EXIT_DATA, file, -1,
					"the trace has no ProfilerStep#N event with N from %" PRIu64 " to %" PRIu64,
					k->step_a, k->step_b), -1;
		k->lo = k->step_lo;
		k->hi = k->step_hi;
	}
	if (k->calls && !(k->call_keep = cm_idmap_new(1, k->call_lo, k->call_hi, k->calls, budget)))
		return -1;
	if (k->flows && !(k->flow_span = cm_idmap_new(sizeof(struct flow_span), k->flow_lo, k->flow_hi, k->flows, budget)))
		return -1;
	if ((k->calls || k->flows) && each_note(k, table_note) < 0)
		return -1;
	k->kept_min = INFINITY;
	k->kept_max = -INFINITY;
	if (each_note(k, extent_note) < 0)
		return -1;
	k->next = 0;
	k->buf_len = k->buf_pos = 0;
	if (k->notes && fseek(k->notes, 0, SEEK_SET) != 0)
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno)), -1;
	return 0;
}

int cm_cpucut_keep(cm_cpucut *k, uint64_t index)
{
	struct note n;
	int keep;
	/* the notes of the elements passed over (dropped ones) are skipped */
	for (;;) {
		if (k->buf_pos == k->buf_len) {
			if (!k->buf)
				k->buf = cm_xmalloc(READ_BUF);
			k->buf_len = k->notes ? fread(k->buf, 1, READ_BUF, k->notes) : 0;
			k->buf_pos = 0;
			if (k->buf_len < CM_CPUCUT_REC)
				return cm_error(CM_EXIT_IO, NULL, -1, "a temporary file was cut short"), -1;
		}
		if (k->next == index)
			break;
		k->next++;
		k->buf_pos += CM_CPUCUT_REC;
	}
	unpack(k->buf + k->buf_pos, &n);
	k->buf_pos += CM_CPUCUT_REC;
	k->next++;
	keep = decide(k, &n);
	k->kept += keep;
	k->cut += !keep;
	return keep;
}

void cm_cpucut_free(cm_cpucut *k)
{
	if (!k)
		return;
	if (k->notes)
		fclose(k->notes);
	k->notes = NULL;
	cm_idmap_free(k->call_keep);
	cm_idmap_free(k->flow_span);
	k->call_keep = k->flow_span = NULL;
	free(k->buf);
	k->buf = NULL;
}
