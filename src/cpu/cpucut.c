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
#include "base/exitcode.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	k->nsteps = 0; /* --split: the steps the fold collects */
	k->notes_bad = 0;
}

static void fold_steps(cm_cpucut *k, const char *notes, size_t n);

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
	if (k->mode == CM_CPUCUT_SPLIT)
		fold_steps(k, notes, n);
	if (!k->notes && !(k->notes = cm_temp_file("cut")))
		return -1;
	if (fwrite(notes, 1, n, k->notes) != n)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	k->nnotes += n / CM_CPUCUT_REC;
	return 0;
}

/* One note. */
struct note {
	int kind, x, step;
	double ts, end;
	int64_t key;
};

static void unpack(const char *p, struct note *n)
{
	n->kind = (unsigned char)p[0] & ~(CM_CUTK_X | CM_CUTK_STEP);
	n->x = ((unsigned char)p[0] & CM_CUTK_X) != 0;
	n->step = ((unsigned char)p[0] & CM_CUTK_STEP) != 0;
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
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
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
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
	return 0;
}

/* The groups [*GA, *GB] whose ranges [TS, END] lies in (*GA > *GB: none).
 * A file's range of --split is one step's (or N's): an event that crosses
 * a step's boundary goes to both files.  The groups are sorted by lo, and
 * k->max_hi[g] is the largest hi of groups 0 to g: a binary search finds
 * the last group that starts early enough, and the walk back stops where
 * no group before can reach TS (a test of each group for each event was
 * 7% of a split's time in 60 files).  But first the group of the event
 * before, when it went to that one alone: the events come in time order,
 * most of them inside one step, and an event inside a group's own part
 * (k->inner: past the end of every group before it, before the start of
 * the next) is in that group alone.  The search was 0.9% of a split's
 * CPU (perf, 2 CPUs), all of it on the one thread that resolves the cut
 * and copies the trace, three times an event (the tables, the extent,
 * the copy). */
static void groups_of(const cm_cpucut *k, int *hint, double ts, double end, int *ga, int *gb)
{
	size_t lo = 0, hi = k->ngroups; /* the groups before hi start early enough */
	const double *in = k->inner + 2 * *hint;
	if (ts >= in[0] && (end > ts ? end <= in[1] : ts < in[1])) {
		*ga = *gb = *hint;
		return;
	}
	*ga = 1;
	*gb = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		double glo = k->groups[mid].lo;
		if (end > ts ? glo < end : glo <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t g = lo; g-- > 0;) {
		if (k->max_hi[g] <= ts)
			break;
		if (!cm_cpucut_in(k->groups[g].lo, k->groups[g].hi, ts, end))
			continue;
		if (*ga > *gb)
			*gb = (int)g;
		*ga = (int)g;
	}
	if (*ga == *gb)
		*hint = *ga;
}

/* The marks of a call: the groups it is kept in. */
struct call_mark { int32_t ga, gb; };

/* The tables: the calls' marks, the flows' spans. */
static void table_note(cm_cpucut *k, const struct note *n)
{
	if (n->kind == CM_CUTK_CALL) {
		int created, ga, gb;
		struct call_mark *m = cm_idmap_put(k->call_keep, n->key, &created);
		groups_of(k, &k->hint, n->ts, n->end, &ga, &gb);
		if (created || m->ga > m->gb) { /* a correlation twice: kept where either is */
			m->ga = ga;
			m->gb = gb;
		} else if (ga <= gb) {
			m->ga = ga < m->ga ? ga : m->ga;
			m->gb = gb > m->gb ? gb : m->gb;
		}
	} else if (n->kind == CM_CUTK_FLOW) {
		int created;
		struct flow_span *f = cm_idmap_put(k->flow_span, n->key, &created);
		if (created || n->ts < f->lo)
			f->lo = n->ts;
		if (created || n->ts > f->hi)
			f->hi = n->ts;
	}
}

/* The groups the event of note N goes to (the tables made). */
static void decide(const cm_cpucut *k, int *hint, const struct note *n, int *ga, int *gb)
{
	const struct call_mark *m;
	const struct flow_span *f;
	int a2, b2;
	switch (n->kind) {
	case CM_CUTK_ALWAYS:
		*ga = 0;
		*gb = (int)k->ngroups - 1;
		return;
	case CM_CUTK_WORK:
	case CM_CUTK_AC2G:
		m = k->call_keep ? cm_idmap_get(k->call_keep, n->key) : NULL;
		if (m) {
			*ga = m->ga;
			*gb = m->gb;
			return;
		}
		break;
	case CM_CUTK_FLOW:
		/* a flow goes to the files that hold all of it */
		f = cm_idmap_get(k->flow_span, n->key);
		*ga = 1;
		*gb = 0;
		if (!f)
			return;
		groups_of(k, hint, f->lo, f->lo, ga, gb);
		groups_of(k, hint, f->hi, f->hi, &a2, &b2);
		*ga = a2 > *ga ? a2 : *ga;
		*gb = b2 < *gb ? b2 : *gb;
		return;
	}
	groups_of(k, hint, n->ts, n->end, ga, gb);
}

/* X event N, kept in the groups GA to GB (GA <= GB): into the extent of
 * the kept X events, and each group's. */
static void note_extent(cm_cpucut *k, const struct note *n, int ga, int gb)
{
	k->kept_min = n->ts < k->kept_min ? n->ts : k->kept_min;
	k->kept_max = n->end > k->kept_max ? n->end : k->kept_max;
	for (int g = ga; k->group_min && g <= gb; g++) {
		k->group_min[g] = n->ts < k->group_min[g] ? n->ts : k->group_min[g];
		k->group_max[g] = n->end > k->group_max[g] ? n->end : k->group_max[g];
	}
}

/* The extent of the kept X events. */
static void extent_note(cm_cpucut *k, const struct note *n)
{
	int ga, gb;
	if (!n->x)
		return;
	decide(k, &k->hint, n, &ga, &gb);
	if (ga <= gb)
		note_extent(k, n, ga, gb);
}

/* --split: the steps found, (N, lo, hi) each, in a growing list. */
struct cm_cpucut_step { int64_t n; double lo, hi; };

static void step_note(cm_cpucut *k, const struct note *n)
{
	if (!n->step)
		return;
	if (k->nsteps == k->cap_steps) {
		k->cap_steps = k->cap_steps ? 2 * k->cap_steps : 64;
		k->steps = cm_xrealloc(k->steps, k->cap_steps * sizeof *k->steps);
	}
	k->steps[k->nsteps].n = n->key;
	k->steps[k->nsteps].lo = n->ts;
	k->steps[k->nsteps++].hi = n->end;
}

/* --split: the steps among the N bytes of NOTES (whole records), as
 * the fold takes them in, so that the groups are made without a pass
 * over the notes (one on the thread that resolves the cut, which the
 * joins wait for: 0.04-0.09 s of the 200 MB pair's split on 2 CPUs). */
static void fold_steps(cm_cpucut *k, const char *notes, size_t n)
{
	for (size_t i = 0; i + CM_CPUCUT_REC <= n; i += CM_CPUCUT_REC)
		if ((unsigned char)notes[i] & CM_CUTK_STEP) {
			struct note nt;
			unpack(notes + i, &nt);
			step_note(k, &nt);
		}
}

static int by_step(const void *a, const void *b)
{
	const struct cm_cpucut_step *x = a, *y = b;
	return x->n < y->n ? -1 : x->n > y->n;
}

static int by_time(const void *a, const void *b)
{
	const struct cm_cpucut_group *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* --split: the files' groups, N steps each, named after their first and
 * last steps (a step number twice: one step, its extent both).  0, or -1
 * after a report. */
static int split_groups(cm_cpucut *k, const char *file)
{
	size_t distinct = 0, steps_n;
	struct cm_cpucut_step *steps_v;
	/* the steps the fold collected; the notes read for them where none
	 * were (notes that came another way) */
	if (!k->nsteps && each_note(k, step_note) < 0)
		return -1;
	steps_v = k->steps;
	steps_n = k->nsteps;
	if (!steps_n)
		return cm_fail(CM_EXIT_DATA, file, -1,
				"the trace has no ProfilerStep#N events, which --split=steps splits it by");
	qsort(steps_v, steps_n, sizeof *steps_v, by_step);
	for (size_t i = 0; i < steps_n; i++) { /* one entry a step number */
		if (distinct && steps_v[distinct - 1].n == steps_v[i].n) {
			struct cm_cpucut_step *d = &steps_v[distinct - 1];
			d->lo = steps_v[i].lo < d->lo ? steps_v[i].lo : d->lo;
			d->hi = steps_v[i].hi > d->hi ? steps_v[i].hi : d->hi;
		} else {
			steps_v[distinct++] = steps_v[i];
		}
	}
	k->ngroups = (distinct + k->split_n - 1) / k->split_n;
	if (k->ngroups > CM_CPUCUT_MAX_FILES) {
		cm_error(CM_EXIT_DATA, file, -1,
			 "%zu steps make %zu files, more than %d at once: give --split=steps:N with a larger N, "
			 "or --steps", distinct, k->ngroups, CM_CPUCUT_MAX_FILES);
		k->ngroups = 0;
		return -1;
	}
	k->groups = cm_xcalloc(k->ngroups, sizeof *k->groups);
	for (size_t g = 0; g < k->ngroups; g++) {
		struct cm_cpucut_group *gr = &k->groups[g];
		size_t a = g * k->split_n, b = a + k->split_n < distinct ? a + k->split_n - 1 : distinct - 1;
		gr->lo = steps_v[a].lo;
		gr->hi = steps_v[a].hi;
		for (size_t i = a + 1; i <= b; i++) {
			gr->lo = steps_v[i].lo < gr->lo ? steps_v[i].lo : gr->lo;
			gr->hi = steps_v[i].hi > gr->hi ? steps_v[i].hi : gr->hi;
		}
		if (a == b)
			snprintf(gr->label, sizeof gr->label, "%lld", (long long)steps_v[a].n);
		else
			snprintf(gr->label, sizeof gr->label, "%lld-%lld", (long long)steps_v[a].n, (long long)steps_v[b].n);
	}
	free(k->steps);
	k->steps = NULL;
	k->nsteps = k->cap_steps = 0;
	qsort(k->groups, k->ngroups, sizeof *k->groups, by_time);
	return 0;
}

int cm_cpucut_resolve(cm_cpucut *k, const char *file)
{
	if (k->mode == CM_CPUCUT_STEPS) {
		if (!k->steps_any)
			return cm_fail(CM_EXIT_DATA, file, -1,
					"the trace has no ProfilerStep#N events, which --steps selects by "
					"(use --range)");
		if (!k->steps_found)
			return cm_fail(CM_EXIT_DATA, file, -1,
					"the trace has no ProfilerStep#N event with N from %" PRIu64 " to %" PRIu64,
					k->step_a, k->step_b);
		k->lo = k->step_lo;
		k->hi = k->step_hi;
	}
	if (k->mode == CM_CPUCUT_SPLIT) {
		if (split_groups(k, file) < 0)
			return -1;
	} else {
		k->groups = cm_xcalloc(1, sizeof *k->groups);
		k->ngroups = 1;
		k->groups[0].lo = k->lo;
		k->groups[0].hi = k->hi;
	}
	k->max_hi = cm_xmalloc(k->ngroups * sizeof *k->max_hi);
	k->inner = cm_xmalloc(2 * k->ngroups * sizeof *k->inner);
	for (size_t g = 0; g < k->ngroups; g++)
		k->max_hi[g] = g && k->max_hi[g - 1] > k->groups[g].hi ? k->max_hi[g - 1] : k->groups[g].hi;
	/* a group's own part: from its lo, or the end of the last group
	 * before it that ends later, to its hi, or the start of the next */
	for (size_t g = 0; g < k->ngroups; g++) {
		double a = k->groups[g].lo, b = k->groups[g].hi;
		if (g && k->max_hi[g - 1] > a)
			a = k->max_hi[g - 1];
		if (g + 1 < k->ngroups && k->groups[g + 1].lo < b)
			b = k->groups[g + 1].lo;
		k->inner[2 * g] = a;
		k->inner[2 * g + 1] = b;
	}
	k->hint = 0;
	if (k->calls && !(k->call_keep = cm_idmap_new(sizeof(struct call_mark), k->call_lo, k->call_hi, k->calls)))
		return -1;
	if (k->flows && !(k->flow_span = cm_idmap_new(sizeof(struct flow_span), k->flow_lo, k->flow_hi, k->flows)))
		return -1;
	if ((k->calls || k->flows) && each_note(k, table_note) < 0)
		return -1;
	k->kept_min = INFINITY;
	k->kept_max = -INFINITY;
	if (k->mode == CM_CPUCUT_SPLIT) {
		k->group_min = cm_xmalloc(k->ngroups * sizeof *k->group_min);
		k->group_max = cm_xmalloc(k->ngroups * sizeof *k->group_max);
		for (size_t g = 0; g < k->ngroups; g++) {
			k->group_min[g] = INFINITY;
			k->group_max[g] = -INFINITY;
		}
	}
	/* --split: each file's extent is found as the copy asks about each
	 * element (cm_cpucut_keep), for only the files' ends need it; a pass
	 * here was on the thread the joins wait for */
	if (k->mode != CM_CPUCUT_SPLIT && each_note(k, extent_note) < 0)
		return -1;
	k->next = 0;
	k->buf_len = k->buf_pos = 0;
	if (k->notes && fseek(k->notes, 0, SEEK_SET) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
	return 0;
}

int cm_cpucut_keep(cm_cpucut *k, uint64_t index)
{
	struct note n;
	int keep;
	/* the notes of the elements passed over (dropped ones) are skipped */
	for (;;) {
		if (k->buf_pos == k->buf_len) {
			if (k->notes_bad)
				return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: a seek failed");
			if (!k->buf)
				k->buf = cm_xmalloc(READ_BUF);
			k->buf_len = k->notes ? fread(k->buf, 1, READ_BUF, k->notes) : 0;
			k->buf_pos = 0;
			if (k->buf_len < CM_CPUCUT_REC)
				return cm_fail(CM_EXIT_IO, NULL, -1, "a temporary file was cut short");
		}
		if (k->next == index)
			break;
		k->next++;
		k->buf_pos += CM_CPUCUT_REC;
	}
	unpack(k->buf + k->buf_pos, &n);
	k->buf_pos += CM_CPUCUT_REC;
	k->next++;
	decide(k, &k->hint, &n, &k->ga, &k->gb);
	keep = k->ga <= k->gb;
	if (k->mode == CM_CPUCUT_SPLIT && n.x && keep)
		note_extent(k, &n, k->ga, k->gb);
	k->kept += keep;
	k->cut += !keep;
	return keep;
}

void cm_cpucut_seek(cm_cpucut *k, uint64_t index)
{
	/* the records before INDEX in the buffer, or none: then read from
	 * INDEX's (a pass over records of the parts' elements was a read of
	 * 25 bytes an element on the walk's thread) */
	if (index >= k->next && (index - k->next) * CM_CPUCUT_REC <= k->buf_len - k->buf_pos)
		return;
	k->next = index;
	k->buf_len = k->buf_pos = 0;
	if (k->notes && fseeko(k->notes, (off_t)(index * CM_CPUCUT_REC), SEEK_SET) != 0)
		k->notes_bad = 1; /* cm_cpucut_keep reports it */
}

int cm_cpucut_parts_ok(const cm_cpucut *k, uint64_t events)
{
	return k->notes && !k->notes_bad && k->nnotes == events && k->ngroups > 0 &&
	       k->ngroups <= CM_CPUCUT_MAX_FILES;
}

int cm_cpucut_part_read(const cm_cpucut *k, cm_cpucut_part *p, uint64_t from, uint64_t to)
{
	size_t n = (size_t)((to - from) * CM_CPUCUT_REC);
	uint64_t off = from * CM_CPUCUT_REC;
	char *q;
	p->from = from;
	p->to = to;
	p->kept = p->cut = 0;
	p->kept_min = INFINITY;
	p->kept_max = -INFINITY;
	for (size_t g = 0; g < k->ngroups; g++) {
		p->group_min[g] = INFINITY;
		p->group_max[g] = -INFINITY;
	}
	cm_buf_grow(&p->notes, n);
	q = p->notes.p;
	while (n) {
		ssize_t got = pread(fileno(k->notes), q, n, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s",
				       got < 0 ? strerror(errno) : "it was cut short");
		q += got;
		n -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

int cm_cpucut_part_keep(const cm_cpucut *k, cm_cpucut_part *p, uint64_t index, int *ga, int *gb)
{
	struct note n;
	int keep;
	unpack(p->notes.p + (index - p->from) * CM_CPUCUT_REC, &n);
	decide(k, &p->hint, &n, ga, gb);
	keep = *ga <= *gb;
	/* as cm_cpucut_keep's, into the part's own extents */
	if (k->mode == CM_CPUCUT_SPLIT && n.x && keep) {
		p->kept_min = n.ts < p->kept_min ? n.ts : p->kept_min;
		p->kept_max = n.end > p->kept_max ? n.end : p->kept_max;
		for (int g = *ga; g <= *gb; g++) {
			p->group_min[g] = n.ts < p->group_min[g] ? n.ts : p->group_min[g];
			p->group_max[g] = n.end > p->group_max[g] ? n.end : p->group_max[g];
		}
	}
	p->kept += keep;
	p->cut += !keep;
	return keep;
}

void cm_cpucut_part_fold(cm_cpucut *k, const cm_cpucut_part *p)
{
	/* the earlier elements' first, as one walk would have taken them:
	 * of two equal values (0 and -0) the first seen stays */
	k->kept_min = p->kept_min < k->kept_min ? p->kept_min : k->kept_min;
	k->kept_max = p->kept_max > k->kept_max ? p->kept_max : k->kept_max;
	for (size_t g = 0; k->group_min && g < k->ngroups; g++) {
		k->group_min[g] = p->group_min[g] < k->group_min[g] ? p->group_min[g] : k->group_min[g];
		k->group_max[g] = p->group_max[g] > k->group_max[g] ? p->group_max[g] : k->group_max[g];
	}
	k->kept += p->kept;
	k->cut += p->cut;
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
	free(k->groups);
	k->groups = NULL;
	free(k->max_hi);
	k->max_hi = NULL;
	free(k->inner);
	k->inner = NULL;
	free(k->group_min);
	free(k->group_max);
	k->group_min = k->group_max = NULL;
	k->ngroups = 0;
	free(k->steps);
	k->steps = NULL;
	free(k->buf);
	k->buf = NULL;
}
