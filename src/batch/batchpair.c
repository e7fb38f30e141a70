/* batchpair.c - the files found in directories paired into ranks
 * (cuptimerge-batch): each trace with the window that fits it, or else the
 * thread map, by what the files record of themselves (pid, host, rank, the
 * times: batchscan.c); then the windows and maps left over, each a rank of
 * its own that says why it was not merged.
 *
 * A pairing that fails says why in a way the user can act on: the nearest
 * file it refused and on what fact, the files that could not be read, a
 * damaged window, the candidates when several fit (to name in a manifest).
 * The ranks themselves, and the reading of the directories, are
 * batchplan.c's. */
#include "config.h"
#include "batch/batchplan.h"
#include "batch/batchplan_int.h"
#include "batch/batchscan.h"
#include "base/diag.h"
#include "base/optname.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* KEY of a file: its name without the directory and the trace suffixes. */
static char *key_of(const char *path)
{
	static const char *const suffixes[] = {".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json"};
	const char *base = strrchr(path, '/');
	char *k = cm_xstrdup(base ? base + 1 : path);
	for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
		if (cm_name_ends_with(k, suffixes[i]) && strlen(k) > strlen(suffixes[i])) {
			k[strlen(k) - strlen(suffixes[i])] = 0;
			break;
		}
	return k;
}

/* "pid 12, rank 3, host gpu01" - what a file says of itself, for messages. */
static char *describe(const cm_bfacts *f)
{
	char rank[32] = "", host[300] = "";
	if (f->pid < 0)
		return cm_xstrdup("no process");
	if (f->rank >= 0)
		snprintf(rank, sizeof rank, ", rank %" PRId64, f->rank);
	if (f->host)
		snprintf(host, sizeof host, ", host %.256s", f->host);
	return cm_bplan_asprintf("pid %" PRId64 "%s%s", f->pid, rank, host);
}

/* A trace's first CPU event may come a little before the window's start:
 * the profiler's own warm-up, or a window whose start_ns is only its first
 * record's.  Spans that far apart still fit; closer windows win (fits with no slack). */
#define SLACK_NS 1000000000LL

/* May window W hold the GPU work of trace T?  Each fact counts when both
 * files know it; times within SLACK nanoseconds (SLACK_NS to find the
 * candidates, 0 to prefer a window whose span holds the trace's start).
 * A trace's host is known only from a name in full tensorboard form
 * (batchread.c): pids repeat across nodes, so it must agree. */
static int fits(const cm_bfacts *t, const cm_bfacts *w, long long slack)
{
	if (t->pid != w->pid)
		return 0;
	if (t->host && w->host && strcmp(t->host, w->host))
		return 0;
	if (t->rank >= 0 && w->rank >= 0 && t->rank != w->rank)
		return 0;
	if (t->start_ns >= 0 && w->start_ns >= 0 && t->start_ns < w->start_ns - slack)
		return 0;
	if (t->start_ns >= 0 && w->end_ns >= 0 && t->start_ns > w->end_ns + slack)
		return 0;
	return 1;
}

/* The found entries of kind KIND that fit trace T: returns how many fit
 * within SLACK_NS, and, when exactly one does or exactly one of several fits
 * with no slack (its span holds the trace's start), sets *ONE to it and
 * returns 1. */
static size_t find_fits(const cm_bplan *p, const cm_bfacts *t, enum cm_bkind kind, size_t *one)
{
	size_t nfit = 0, ntight = 0, tight = 0;
	for (size_t j = 0; j < p->nf; j++)
		if (p->f[j].facts.kind == kind && !p->f[j].facts.damaged && fits(t, &p->f[j].facts, SLACK_NS)) {
			nfit++;
			*one = j;
			if (fits(t, &p->f[j].facts, 0)) {
				ntight++;
				tight = j;
			}
		}
	if (nfit > 1 && ntight == 1) {
		*one = tight;
		return 1;
	}
	return nfit;
}

/* "1 h 2 min", "3 min 20 s", "2.5 s": the gap NS, for messages. */
static char *gap(int64_t ns)
{
	int64_t sec = ns / 1000000000;
	if (sec >= 3600)
		return cm_bplan_asprintf("%" PRId64 " h %" PRId64 " min", sec / 3600, sec % 3600 / 60);
	if (sec >= 60)
		return cm_bplan_asprintf("%" PRId64 " min %" PRId64 " s", sec / 60, sec % 60);
	return cm_bplan_asprintf("%.1f s", (double)ns / 1e9);
}

/* Why window W does not fit trace T (fits() is 0): the first fact they
 * disagree on, said of the trace, for "refused: ..." (issue 28 P3). */
static char *refusal(const cm_bfacts *t, const cm_bfacts *w)
{
	char *g, *why;
	if (t->pid != w->pid)
		return cm_bplan_asprintf("the trace's pid is %" PRId64 ", the window's %" PRId64, t->pid, w->pid);
	if (t->host && w->host && strcmp(t->host, w->host))
		return cm_bplan_asprintf("the trace's name says host %s, the window records %s", t->host, w->host);
	if (t->rank >= 0 && w->rank >= 0 && t->rank != w->rank)
		return cm_bplan_asprintf("the trace's rank is %" PRId64 ", the window's %" PRId64, t->rank, w->rank);
	if (t->start_ns >= 0 && w->start_ns >= 0 && t->start_ns < w->start_ns - SLACK_NS) {
		g = gap(w->start_ns - t->start_ns);
		why = cm_bplan_asprintf("the trace starts %s before the window", g);
	} else {
		g = gap(t->start_ns - w->end_ns);
		why = cm_bplan_asprintf("the trace starts %s after the window ends (another run?)", g);
	}
	free(g);
	return why;
}

/* For found entry A (a trace, or a window) that nothing paired: "; nearest:
 * PATH (pid, rank, host), refused: WHY" naming the first unpaired entry of
 * the other kind that records the same pid, else the same rank; "" when
 * there is none.  Malloc'd.  Two failures that are one story ("no window
 * for this trace" and "no trace for this window" an hour apart) then say
 * so (P3). */
static char *near_note(const cm_bplan *p, const struct cm_bfound *a)
{
	enum cm_bkind other = a->facts.kind == CM_BK_TRACE ? CM_BK_WINDOW : CM_BK_TRACE;
	for (int pass = 0; pass < 2; pass++)
		for (size_t j = 0; j < p->nf; j++) {
			const struct cm_bfound *b = &p->f[j];
			const cm_bfacts *t = other == CM_BK_TRACE ? &b->facts : &a->facts;
			const cm_bfacts *w = other == CM_BK_TRACE ? &a->facts : &b->facts;
			char *d, *why, *note;
			if (b->facts.kind != other || b->used || b->facts.damaged || t->pid < 0)
				continue;
			if (pass == 0 ? t->pid != w->pid : t->rank < 0 || t->rank != w->rank)
				continue;
			d = describe(&b->facts);
			why = refusal(t, w);
			note = cm_bplan_asprintf("; nearest: %s (%s), refused: %s", b->path, d, why);
			free(d);
			free(why);
			return note;
		}
	return cm_xstrdup("");
}

/* The rank N a file name gives as "rankN" ("rank0_481.pt.trace.json",
 * "trace_rank0.json"), or -1. */
static int64_t name_rank(const char *path)
{
	const char *base = strrchr(path, '/'), *s;
	int64_t rank = -1;
	for (s = base ? base + 1 : path; (s = strstr(s, "rank")); s += 4)
		if (s[4] >= '0' && s[4] <= '9')
			rank = strtoll(s + 4, NULL, 10);
	return rank;
}

/* Trace T pairs with W on what the files record (pid, rank, time).  A rank
 * in T's name that disagrees with the rank they record is a weaker signal:
 * warn, do not refuse (issue 28 P1). */
static void warn_name_rank(const struct cm_bfound *t, const struct cm_bfound *w)
{
	int64_t n = name_rank(t->path), r = t->facts.rank >= 0 ? t->facts.rank : w->facts.rank;
	if (n >= 0 && r >= 0 && n != r)
		cm_warn(t->path, -1, "its name says rank %" PRId64 ", %s records rank %" PRId64
			": paired with %s on what the files record", n,
			t->facts.rank >= 0 ? "its distributedInfo" : "the window", r, w->path);
}

/* Mark entry J used, and with it the other processes of its file. */
static void mark_used(cm_bplan *p, size_t j)
{
	size_t a = j, b = j;
	while (a > 0 && !strcmp(p->f[a - 1].path, p->f[j].path))
		a--;
	while (b + 1 < p->nf && !strcmp(p->f[b + 1].path, p->f[j].path))
		b++;
	for (size_t k = a; k <= b; k++)
		p->f[k].used = 1;
}

/* "a window", "a thread map" or "a window or thread map" (HAVE: bit 1
 * windows, bit 2 maps were found), for the message of a trace with none. */
static const char *wanted(int have)
{
	return have == 2 ? "thread map" : have == 3 ? "window or thread map" : "window";
}

/* "no trace, skipped (thread map of pid 5000, rank 0, host node0)", or "of
 * pids 5000, 5001" for a map of several processes: its entries A..B. */
static char *unpaired_map(const cm_bplan *p, size_t a, size_t b)
{
	char *d, *more;
	if (a == b) {
		char *one = describe(&p->f[a].facts);
		d = cm_bplan_asprintf("no trace, skipped (thread map of %s)", one);
		free(one);
		return d;
	}
	d = cm_bplan_asprintf("pids %" PRId64, p->f[a].facts.pid);
	for (size_t k = a + 1; k <= b; k++) {
		more = cm_bplan_asprintf("%s, %" PRId64, d, p->f[k].facts.pid);
		free(d);
		d = more;
	}
	more = cm_bplan_asprintf("no trace, skipped (thread map of %s)", d);
	free(d);
	return more;
}

/* 1 when found entry F could not be read at all (not opened, a read
 * error): it may have been a window or a map (F25), unlike a file that was
 * read and is not JSON. */
static int unreadable(const struct cm_bfound *f)
{
	return f->facts.kind == CM_BK_BAD && f->facts.why &&
	       (!strncmp(f->facts.why, "cannot ", 7) || f->facts.damaged);
}

/* The damaged window (batchscan.h) that holds trace T's pid and fits it
 * otherwise, when there is exactly one: its index in P->f, else -1. */
static long damaged_fit(const cm_bplan *p, const cm_bfacts *t)
{
	long one = -1;
	for (size_t j = 0; j < p->nf; j++)
		if (p->f[j].facts.kind == CM_BK_WINDOW && p->f[j].facts.damaged && fits(t, &p->f[j].facts, SLACK_NS)) {
			if (one >= 0)
				return -1;
			one = (long)j;
		}
	return one;
}

/* For a trace that nothing fits: "; not read, maybe its window: A (WHY),
 * B (WHY), ..." naming the first two files that could not be read, so the
 * rank's failure names the cause (F25: an unreadable window showed only as
 * "no window for this trace"); "" when every file was read.  Malloc'd. */
static char *unread_note(const cm_bplan *p, const char *what)
{
	char *note = cm_xstrdup(""), *more;
	size_t k = 0;
	for (size_t j = 0; j < p->nf; j++) {
		if (!unreadable(&p->f[j]))
			continue;
		if (k == 2)
			more = cm_bplan_asprintf("%s, ...", note);
		else
			more = cm_bplan_asprintf("%s%s%s%s%s (%s)", note, k ? ", " : "; not read, maybe its ", k ? "" : what,
					 k ? "" : ": ", p->f[j].path, p->f[j].facts.why);
		free(note);
		note = more;
		if (k++ == 2)
			break;
	}
	return note;
}

void cm_bplan_pair(cm_bplan *p, const char *outdir)
{
	size_t first = p->n;
	int have = 0;
	for (size_t j = 0; j < p->nf; j++)
		have |= p->f[j].facts.kind == CM_BK_WINDOW ? 1 : p->f[j].facts.kind == CM_BK_MAP ? 2 : 0;
	for (size_t i = 0; i < p->nf; i++) {
		struct cm_bfound *t = &p->f[i];
		enum cm_bkind kind = CM_BK_WINDOW;
		cm_brank *r;
		char *key;
		size_t nfit = 0, w = 0;
		if (t->facts.kind == CM_BK_BAD && strstr(t->path, ".pt.trace.json")) {
			key = key_of(t->path);
			r = cm_bplan_add_rank(p, key);
			free(key);
			r->trace = cm_xstrdup(t->path);
			cm_bplan_fail(r, cm_bplan_asprintf("unreadable trace: %s", t->facts.why));
			continue;
		}
		if (t->facts.damaged && t->facts.kind == CM_BK_BAD)
			cm_warn(t->path, -1, "%s: a damaged window (no API record tells its pid), ignored", t->facts.why);
		else if (unreadable(t))
			cm_warn(t->path, -1, "%s: unreadable, ignored (a window or thread map in it cannot be paired)",
				t->facts.why);
		else if (t->facts.kind == CM_BK_BAD)
			cm_warn(t->path, -1, "%s: not a trace, a window or a thread map, ignored", t->facts.why);
		if (t->facts.kind == CM_BK_OTHER && t->facts.why)
			cm_warn(t->path, -1, "%s", t->facts.why);
		if (t->facts.kind != CM_BK_TRACE)
			continue;
		key = key_of(t->path);
		r = cm_bplan_add_rank(p, key);
		r->trace = cm_xstrdup(t->path);
		r->output = cm_bplan_asprintf("%s/%s" OUT_SUFFIX, outdir, key);
		free(key);
		if (t->facts.pid < 0) {
			cm_bplan_fail(r, cm_bplan_asprintf("no CPU event with a pid in the trace: cannot pair it"));
			continue;
		}
		/* a window first: its merge repairs the threads too; else a map */
		if (!(nfit = find_fits(p, &t->facts, CM_BK_WINDOW, &w))) {
			kind = CM_BK_MAP;
			nfit = find_fits(p, &t->facts, CM_BK_MAP, &w);
		}
		if (nfit == 1)
			warn_name_rank(t, &p->f[w]);
		if (nfit == 1) {
			t->used = 1; /* paired: no near miss of a window left over */
			r->window = cm_xstrdup(p->f[w].path);
			r->map = kind == CM_BK_MAP;
			mark_used(p, w);
			/* the window's merge puts the threads right: a map of this
			 * process is not left over */
			for (size_t j = 0; kind == CM_BK_WINDOW && j < p->nf; j++)
				if (p->f[j].facts.kind == CM_BK_MAP && fits(&t->facts, &p->f[j].facts, SLACK_NS))
					mark_used(p, j);
		} else {
			char *d = describe(&t->facts);
			long dw = nfit ? -1 : damaged_fit(p, &t->facts);
			if (dw >= 0) {
				/* its window, cut short: say so, not "no window" (P2) */
				r->window = cm_xstrdup(p->f[dw].path);
				mark_used(p, (size_t)dw);
				cm_bplan_fail(r, cm_bplan_asprintf("its window is damaged: %s%s", p->f[dw].facts.why,
						       cm_bplan_damage_hint(p->f[dw].facts.why)));
			} else if (nfit == 0) {
				char *note = unread_note(p, wanted(have)), *near = near_note(p, t);
				cm_bplan_fail(r, cm_bplan_asprintf("no %s for this trace (%s)%s%s", wanted(have), d, near, note));
				free(near);
				free(note);
			} else {
				/* name the first two, so the user can write the manifest line */
				const char *names[2] = {"", ""};
				size_t k = 0;
				for (size_t j = 0; j < p->nf; j++)
					if (p->f[j].facts.kind == kind && fits(&t->facts, &p->f[j].facts, SLACK_NS)) {
						if (k < 2)
							names[k++] = p->f[j].path;
						mark_used(p, j); /* reported here, not again as unpaired */
					}
				cm_bplan_fail(r, cm_bplan_asprintf("%zu %s fit this trace (%s): %s, %s%s: ambiguous, name the pair in a manifest",
						       nfit, kind == CM_BK_MAP ? "thread maps" : "windows", d, names[0],
						       names[1], nfit > 2 ? ", ..." : ""));
			}
			free(d);
		}
	}
	/* a window that fits several traces (a process whose profiler wrote
	 * a trace per cycle, or a pid used again) was paired with each: every
	 * output then held all of its GPU work.  With the window cut to each
	 * trace (--clip, --steps, --range) that is right; else refused. */
	for (size_t i = first; i < p->n && !p->window_cut; i++) {
		cm_brank *a = &p->r[i];
		const char *names[2] = {NULL, NULL};
		size_t n = 0;
		char *why;
		if (a->map || !a->window || a->state != CM_BR_RUN)
			continue;
		for (size_t j = first; j < p->n; j++)
			if (!p->r[j].map && p->r[j].window && p->r[j].state == CM_BR_RUN &&
			    !strcmp(p->r[j].window, a->window) && n++ < 2)
				names[n - 1] = p->r[j].trace;
		if (n < 2)
			continue;
		why = cm_bplan_asprintf("the window %s fits %zu traces (%s, %s%s): merged with each, every output would hold "
					"all its GPU work: give --clip (each trace keeps the window's part in its span), or "
					"name the pairs in a manifest",
					a->window, n, names[0], names[1], n > 2 ? ", ..." : "");
		for (size_t j = p->n; j-- > first;)
			if (!p->r[j].map && p->r[j].window && p->r[j].state == CM_BR_RUN && j != i &&
			    !strcmp(p->r[j].window, a->window))
				cm_bplan_fail(&p->r[j], cm_xstrdup(why));
		cm_bplan_fail(a, why);
	}
	/* two traces of the same name in two directories would share an output */
	for (size_t i = first; i < p->n; i++)
		for (size_t j = first; j < i; j++)
			if (!strcmp(p->r[i].key, p->r[j].key) && p->r[i].state != CM_BR_FAIL)
				cm_bplan_fail(&p->r[i], cm_bplan_asprintf("the key is also %s's: rename one", p->r[j].trace));
	/* the windows and maps left, in the order found: a map once, whichever
	 * of its processes are left */
	for (size_t j = 0; j < p->nf; j++) {
		struct cm_bfound *w = &p->f[j];
		cm_brank *r;
		char *key, *d;
		size_t last = j;
		if (w->facts.kind == CM_BK_MAP) {
			while (last + 1 < p->nf && !strcmp(p->f[last + 1].path, w->path))
				last++;
			if (!w->used) {
				key = key_of(w->path);
				r = cm_bplan_add_rank(p, key);
				free(key);
				r->window = cm_xstrdup(w->path);
				r->map = 1;
				r->state = CM_BR_NOTRACE;
				r->why = unpaired_map(p, j, last);
			}
			j = last;
			continue;
		}
		if (w->facts.kind != CM_BK_WINDOW || w->used)
			continue;
		if (w->facts.gpu_events < 0) {
			/* read from its tail: count its GPU work now, in full (a
			 * launcher's window is small), which finds damage too */
			cm_bfacts full;
			cm_bscan_full(w->path, &full);
			if (full.kind == CM_BK_WINDOW)
				w->facts.gpu_events = full.gpu_events;
			if (full.damaged) {
				w->facts.damaged = 1;
				free(w->facts.why);
				w->facts.why = full.why;
				full.why = NULL;
			}
			cm_bfacts_free(&full);
		}
		key = key_of(w->path);
		r = cm_bplan_add_rank(p, key);
		free(key);
		r->window = cm_xstrdup(w->path);
		d = describe(&w->facts);
		if (w->facts.damaged)
			cm_bplan_fail(r, cm_bplan_asprintf("a damaged window (%s) and no trace for it: %s%s", d, w->facts.why,
					       cm_bplan_damage_hint(w->facts.why)));
		else if (w->facts.gpu_events == 0) {
			r->state = CM_BR_NOGPU;
			r->why = cm_bplan_asprintf("no GPU work, skipped (%s)", d);
		} else {
			char *near = near_note(p, w);
			cm_bplan_fail(r, cm_bplan_asprintf("no trace for this window (%s, %" PRId64 " GPU events)%s", d,
					       w->facts.gpu_events, near));
			free(near);
		}
		free(d);
	}
	for (size_t j = 0; j < p->nf; j++) {
		free(p->f[j].path);
		cm_bfacts_free(&p->f[j].facts);
	}
	free(p->f);
	p->f = NULL;
	p->nf = p->capf = 0;
}

