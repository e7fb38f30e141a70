/* batchmanifest.c - a cuptimerge-batch plan from a manifest, and the ranks
 * a joblog says are done (resume). */
#include "config.h"
#include "batch/batchplan.h"
#include "batch/batchplan_int.h"
#include "batch/batchscan.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Split LINE at tabs into at most MAX fields; returns how many. */
static int split_tabs(char *line, char **fld, int max)
{
	int n = 0;
	fld[n++] = line;
	for (char *c = line; *c && n < max; c++)
		if (*c == '\t') {
			*c = 0;
			fld[n++] = c + 1;
		}
	return n;
}

/* A manifest's rank R whose window (facts W) records another rank than
 * its trace's distributedInfo, or another host than its trace's name in
 * tensorboard form, fails (issue 28 P4), as cuptimerge refuses it: the
 * window may be gzip, which the merge's own check cannot afford to read
 * to its end, and the plan has read it anyway. */
static void check_ranks(cm_brank *r, const cm_bfacts *w)
{
	static const char hint[] = "(to merge anyway, run the batch again with -- --force: cuptimerge-batch(1))";
	struct stat st;
	/* a trace that is no regular file (a FIFO) is not opened: only its merge reads it */
	int reg = stat(r->trace, &st) == 0 && S_ISREG(st.st_mode);
	int64_t rank = reg && w->rank >= 0 ? cm_bscan_rank(r->trace) : -1;
	char *host = w->host ? cm_bscan_name_host(r->trace, w->pid) : NULL;
	if (rank >= 0 && rank != w->rank)
		cm_bplan_fail(r, cm_bplan_asprintf("window %s records rank %" PRId64 "%s%s, the trace's distributedInfo rank %" PRId64
				       ": a window of another rank? %s",
				       r->window, w->rank, w->host ? " on " : "", w->host ? w->host : "", rank, hint));
	else if (host && strcmp(host, w->host))
		cm_bplan_fail(r, cm_bplan_asprintf("window %s records host %s, the trace's name host %s: a window of another node? %s",
				       r->window, w->host, host, hint));
	free(host);
}

/* A file that a rank reads: its device and inode, and which rank and
 * column, for outputs_not_inputs. */
struct input_file {
	dev_t dev;
	ino_t ino;
	size_t rank;
	int window;
};

/* qsort's and bsearch's order of input_file: by device, then inode. */
static int input_cmp(const void *a, const void *b)
{
	const struct input_file *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Fail each rank of P whose output is the cpu trace or the window of a
 * rank (its own, or another's), however the paths were typed: its merge
 * would replace that input with its output (cuptimerge keeps no copy),
 * and the trace was lost to a manifest line that named it twice.  And one
 * whose output names a descriptor (/dev/stdout): no file is made.  Sorted
 * by inode, not rank against rank: a manifest may hold thousands. */
static void outputs_not_inputs(cm_bplan *p)
{
	struct input_file *in = cm_xmalloc((2 * p->n + 1) * sizeof *in), key, *hit;
	size_t n = 0;
	struct stat st;
	for (size_t i = 0; i < p->n; i++)
		for (int w = 0; w < 2; w++) {
			const char *path = w ? p->r[i].window : p->r[i].trace;
			if (path && stat(path, &st) == 0)
				in[n++] = (struct input_file){st.st_dev, st.st_ino, i, w};
		}
	qsort(in, n, sizeof *in, input_cmp);
	for (size_t i = 0; i < p->n; i++) {
		cm_brank *r = &p->r[i];
		/* /dev/stdout, /dev/fd/N: the merge writes through its own
		 * descriptor (cuptimerge(1)), which is /dev/null for stdout, the
		 * batch's record of its messages for stderr, or one that merges
		 * running at once would all write into */
		if (r->state != CM_BR_FAIL && r->output && cm_path_names_fd(r->output) >= 0)
			cm_bplan_fail(r, cm_bplan_asprintf("the output %s names a descriptor, not a file: each merge "
							   "runs with its own (give a file's name)", r->output));
		if (r->state == CM_BR_FAIL || !r->output || stat(r->output, &st) < 0)
			continue; /* an output not yet made is no input */
		key.dev = st.st_dev;
		key.ino = st.st_ino;
		if (!(hit = bsearch(&key, in, n, sizeof *in, input_cmp)))
			continue;
		if (hit->rank == i)
			cm_bplan_fail(r, cm_bplan_asprintf("the output is its own %s: the merge would replace it",
							   hit->window ? "window" : "cpu trace"));
		else
			cm_bplan_fail(r, cm_bplan_asprintf("the output is key %s's %s: the merge would replace it",
							   p->r[hit->rank].key, hit->window ? "window" : "cpu trace"));
	}
	free(in);
}

/* The longest manifest line read: four paths and a key, with room to spare. */
#define MANIFEST_LINE_MAX 65536
/* The longest joblog line read: a manifest's line and what the run adds
 * (status, times, the merge's last line of stderr: 4 KiB, batchrun.c).  A
 * longer one is passed over: it is no record of a merged rank (a failed
 * rank's reason may repeat its paths, and a joblog the batch wrote holds
 * such lines), and it is not kept in memory whole. */
#define JOBLOG_LINE_MAX (2 * MANIFEST_LINE_MAX)

/* The next line of F into *LINE (*CAP bytes, grown), with its line break,
 * NUL-terminated: its length, or -1 at the end or on a read error
 * (ferror).  A line of more than MAX bytes before its line break gives -3,
 * and a NUL byte -2 when NUL_BAD (else it is kept as any byte); both leave
 * the rest of the line unread.  Why not getline(3): a file that is no text
 * (-m /dev/zero) was one line growing until memory ran out. */
static ssize_t bounded_line(FILE *f, char **line, size_t *cap, size_t max, int nul_bad)
{
	size_t n = 0;
	int c;
	while ((c = getc(f)) != EOF) {
		if (c == 0 && nul_bad)
			return -2;
		if (c != '\n' && n >= max)
			return -3;
		if (n + 2 > *cap) {
			*cap = *cap ? 2 * *cap : 256;
			*line = cm_xrealloc(*line, *cap);
		}
		(*line)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (!n)
		return -1;
	(*line)[n] = 0;
	return (ssize_t)n;
}

/* The next line of the manifest F, as bounded_line reads it, longer than
 * MANIFEST_LINE_MAX or with a NUL byte reported (PATH, LINENO: a usage
 * error, as a malformed manifest is) and giving -2.  A file of NUL bytes
 * was once a header line and no ranks, status 0. */
static ssize_t manifest_line(FILE *f, char **line, size_t *cap, const char *path, long lineno)
{
	ssize_t n = bounded_line(f, line, cap, MANIFEST_LINE_MAX, 1);
	if (n == -2)
		cm_error(CM_EXIT_USAGE, path, -1, "line %ld: a NUL byte: not a manifest (a text file)", lineno);
	else if (n == -3)
		cm_error(CM_EXIT_USAGE, path, -1, "line %ld: longer than %d bytes: not a manifest", lineno,
			 MANIFEST_LINE_MAX);
	return n < -1 ? -2 : n;
}

int cm_bplan_manifest(cm_bplan *p, const char *path, const char *outdir)
{
	int std = !strcmp(path, "-"); /* issue 28 P13: "-" is standard input */
	FILE *f = std ? stdin : fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;
	int header = 0; /* the header line was seen */
	if (!f)
		return cm_fail(CM_EXIT_IO, path, -1, "cannot open: %s", strerror(errno));
	if (std)
		path = "<stdin>"; /* for messages */
	while ((len = manifest_line(f, &line, &cap, path, lineno + 1)) >= 0) {
		char *fld[5];
		int n;
		cm_brank *r;
		struct stat st;
		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue; /* blank lines, comments */
		n = split_tabs(line, fld, 5);
		if (!header) {
			/* the header, which is not read; but a first line whose
			 * trace and window are files is a rank whose header was
			 * left out, and was lost in silence */
			header = 1;
			if (n >= 3 && *fld[1] && *fld[2] && stat(fld[1], &st) == 0 && stat(fld[2], &st) == 0) {
				cm_error(CM_EXIT_USAGE, path, -1,
					 "line %ld: a rank (its cpu trace and window are files), where the header line "
					 "goes: start the manifest with a header (key, cpu trace, window or map, output)",
					 lineno);
				free(line);
				fclose(f);
				return -1;
			}
			continue;
		}
		if (n < 3 || n > 4 || !*fld[0]) {
			cm_error(CM_EXIT_USAGE, path, -1,
				 "line %ld: want key, cpu trace, window or map, output (output may be empty)",
				 lineno);
			free(line);
			fclose(f);
			return -1;
		}
		r = cm_bplan_add_rank(p, fld[0]);
		r->trace = cm_xstrdup(fld[1]);
		r->window = cm_xstrdup(fld[2]);
		r->output = n == 4 && *fld[3] ? cm_xstrdup(fld[3]) : cm_bplan_asprintf("%s/%s" OUT_SUFFIX, outdir, fld[0]);
		if (cm_bplan_has_control(r->key) || cm_bplan_has_control(r->trace) || cm_bplan_has_control(r->window) ||
		    cm_bplan_has_control(r->output)) {
			/* a file's name in a directory fails so (batchplan.c); the
			 * paths are logged shown, the joblog's lines whole */
			char **slot[] = {&r->key, &r->trace, &r->window, &r->output};
			for (size_t k = 0; k < sizeof slot / sizeof *slot; k++) {
				char *shown = cm_bplan_shown(*slot[k]);
				free(*slot[k]);
				*slot[k] = shown;
			}
			cm_bplan_fail(r, cm_xstrdup("a path of it holds a tab, a line break or another control character, "
						    "which the joblog cannot record: rename it"));
		} else if (!strcmp(r->output, "-"))
			/* cuptimerge -o - writes standard output, which is
			 * /dev/null for each merge: the rank was found out only
			 * after its merge, as one that "made no output" */
			cm_bplan_fail(r, cm_xstrdup("the output - means standard output, not a file: each merge runs "
						    "with its own (give a file's name)"));
		else if (stat(r->trace, &st) < 0)
			cm_bplan_fail(r, cm_bplan_asprintf("cpu trace %s: %s", r->trace, strerror(errno)));
		else if (stat(r->window, &st) < 0)
			cm_bplan_fail(r, cm_bplan_asprintf("window %s: %s", r->window, strerror(errno)));
		else if (!S_ISREG(st.st_mode))
			/* a FIFO (or a device) is read once: the plan's look
			 * took what its writer wrote, and the merge then waited
			 * for a writer that had gone, for ever.  Only its merge
			 * reads it, as a window (-w), as a trace that is no
			 * regular file (check_ranks) */
			r->map = 0;
		else {
			cm_bfacts wf;
			cm_bscan_head(r->window, &wf);
			if (wf.kind == CM_BK_BAD || wf.damaged)
				cm_bplan_fail(r, cm_bplan_asprintf("window %s: %s%s", r->window, wf.why,
						       wf.damaged ? cm_bplan_damage_hint(wf.why) : ""));
			else if (wf.kind == CM_BK_WINDOW && !p->merge_force)
				check_ranks(r, &wf);
			r->map = wf.kind == CM_BK_OTHER || wf.kind == CM_BK_MAP;
			cm_bfacts_free(&wf);
		}
	}
	free(line);
	if (len == -2) {
		fclose(f);
		return -1;
	}
	if (ferror(f)) {
		fclose(f);
		return cm_fail(CM_EXIT_IO, path, -1, "cannot read: %s", strerror(errno));
	}
	fclose(f);
	for (size_t i = 0; i < p->n; i++)
		for (size_t j = 0; j < i; j++)
			if (p->r[i].state != CM_BR_FAIL && p->r[j].output && !strcmp(p->r[i].output, p->r[j].output))
				cm_bplan_fail(&p->r[i], cm_bplan_asprintf("the output is also key %s's", p->r[j].key));
	outputs_not_inputs(p);
	return 0;
}

static int newer(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec > b->st_mtim.tv_sec ||
	       (a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec > b->st_mtim.tv_nsec);
}

/* 1 when the joblog has a line for the output SO (OUTPUT as this run
 * names it) whose exit status is 0 (the last such line counts).  A line is
 * for it when the file it names is the same file, device and inode, however
 * either run typed the path (issue 28 P5: x/traces, ./x/traces and
 * /abs/x/traces merged every rank again); a line whose file is gone is
 * compared as text. */
static int logged_ok(char **outs, char **stats, size_t n, const char *output, const struct stat *so)
{
	int ok = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat sl;
		int same = stat(outs[i], &sl) == 0 ? sl.st_dev == so->st_dev && sl.st_ino == so->st_ino
						   : !strcmp(outs[i], output);
		if (same)
			ok = !strcmp(stats[i], "0");
	}
	return ok;
}

void cm_bplan_skips(cm_bplan *p, const char *joblog, int force)
{
	FILE *f;
	char *line = NULL, **outs = NULL, **stats = NULL;
	size_t cap = 0, n = 0, ncap = 0;
	ssize_t len;
	if (force || !(f = fopen(joblog, "r")))
		return;
	while ((len = bounded_line(f, &line, &cap, JOBLOG_LINE_MAX, 0)) != -1) {
		char *fld[9];
		int c;
		if (len == -3) { /* passed over, to its end */
			while ((c = getc(f)) != EOF && c != '\n')
				;
			continue;
		}
		while (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (split_tabs(line, fld, 9) < 5 || !strcmp(fld[0], "key"))
			continue;
		if (n == ncap) {
			ncap = ncap ? 2 * ncap : 16;
			outs = cm_xrealloc(outs, ncap * sizeof *outs);
			stats = cm_xrealloc(stats, ncap * sizeof *stats);
		}
		outs[n] = cm_xstrdup(fld[3]);
		stats[n++] = cm_xstrdup(fld[4]);
	}
	free(line);
	fclose(f);
	for (size_t i = 0; i < p->n; i++) {
		cm_brank *r = &p->r[i];
		struct stat so, st, sw;
		if (r->state != CM_BR_RUN || stat(r->output, &so) < 0 || so.st_size == 0 ||
		    stat(r->trace, &st) < 0 || stat(r->window, &sw) < 0)
			continue;
		if (newer(&so, &st) && newer(&so, &sw) && logged_ok(outs, stats, n, r->output, &so))
			r->state = CM_BR_DONE;
	}
	for (size_t i = 0; i < n; i++) {
		free(outs[i]);
		free(stats[i]);
	}
	free(outs);
	free(stats);
}
