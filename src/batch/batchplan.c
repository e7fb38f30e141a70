/* batchplan.c - the plan of cuptimerge-batch, one line per rank: its ranks
 * made, failed, printed, sharded and freed; and the files found in
 * directories (what each says of itself, batchscan.c), for batchpair.c to
 * pair.  A manifest, and the joblog's skips, are batchmanifest.c's. */
#include "config.h"
#include "batch/batchplan.h"
#include "batch/batchplan_int.h"
#include "batch/batchscan.h"
#include "base/diag.h"
#include "base/optname.h"
#include "base/exitcode.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* batchplan_int.h */
char *cm_bplan_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = cm_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	return cm_bplan_asprintf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

/* batchplan_int.h */
cm_brank *cm_bplan_add_rank(cm_bplan *p, const char *key)
{
	cm_brank *r;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->r = cm_xrealloc(p->r, p->cap * sizeof *p->r);
	}
	r = &p->r[p->n++];
	memset(r, 0, sizeof *r);
	r->key = cm_xstrdup(key);
	r->status = -1;
	return r;
}

/* batchplan_int.h */
void cm_bplan_fail(cm_brank *r, char *why)
{
	r->state = CM_BR_FAIL;
	free(r->why);
	r->why = why;
}

/* Append a found file PATH (taken) with FACTS (taken). */
static void add_found(cm_bplan *p, char *path, const cm_bfacts *facts)
{
	if (p->nf == p->capf) {
		p->capf = p->capf ? 2 * p->capf : 16;
		p->f = cm_xrealloc(p->f, p->capf * sizeof *p->f);
	}
	p->f[p->nf].path = path;
	p->f[p->nf].facts = *facts;
	p->f[p->nf].used = 0;
	p->nf++;
}

/* batchplan.h */
int cm_bplan_has_control(const char *name)
{
	for (; name && *name; name++)
		if ((unsigned char)*name < 0x20 || *name == 0x7f)
			return 1;
	return 0;
}

/* batchplan.h */
char *cm_bplan_shown(const char *name)
{
	char *shown = cm_xstrdup(name);
	for (char *c = shown; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return shown;
}

int cm_bplan_dir(cm_bplan *p, const char *dir, const char *outdir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort), scanned = 0;
	(void)outdir;
	if (n < 0)
		return cm_fail(CM_EXIT_IO, dir, -1, "cannot read the directory: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		struct stat st;
		cm_bfacts facts;
		char *path;
		if (name[0] == '.' || !(cm_name_ends_with(name, ".json") || cm_name_ends_with(name, ".json.gz")) ||
		    cm_name_ends_with(name, OUT_SUFFIX) || cm_name_ends_with(name, ".merged.json")) {
			free(ents[i]);
			continue;
		}
		if (cm_bplan_has_control(name)) {
			/* the joblog and the plan are TSV: a tab or a line break in
			 * a path would split its line, and the next run find no
			 * record of the rank (and merge it again) */
			char *shown = cm_bplan_shown(name);
			cm_bplan_fail(cm_bplan_add_rank(p, shown),
				      cm_xstrdup("its name holds a tab, a line break or another control character, which "
						 "the joblog cannot record: rename it"));
			free(shown);
			free(ents[i]);
			scanned++;
			continue;
		}
		path = join(dir, name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(path);
			free(ents[i]);
			continue;
		}
		scanned++;
		cm_bscan_head(path, &facts); /* a window's GPU events: counted if it is left over */
		if (facts.kind == CM_BK_MAP && facts.nprocs) {
			/* one entry per process; the last takes PATH, the others a copy */
			for (size_t k = 0; k < facts.nprocs; k++)
				add_found(p, k + 1 < facts.nprocs ? cm_xstrdup(path) : path, &facts.procs[k]);
			free(facts.procs);
			facts.procs = NULL;
			facts.nprocs = 0;
			cm_bfacts_free(&facts);
		} else {
			if (facts.kind == CM_BK_MAP)
				facts.pid = -1; /* a map of no process pairs with nothing */
			add_found(p, path, &facts);
		}
		free(ents[i]);
	}
	free(ents);
	/* "run/" for "run/traces run/windows": 0 merged and status 0 said
	 * nothing of the mistake */
	if (!scanned)
		cm_warn(dir, -1, "no trace, window or thread map in it (its subdirectories are not read)");
	return 0;
}

/* What to add to WHY, the damage of a window: a window cut short is what
 * a process killed before it closed its window leaves (cuptirec(1)). */
const char *cm_bplan_damage_hint(const char *why)
{
	return !strncmp(why, "truncated", 9) || !strncmp(why, "empty", 5)
		       ? " (a process killed before its window was closed leaves it so: cuptirec(1))"
		       : "";
}

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

void cm_bplan_print(const cm_bplan *p, FILE *f)
{
	for (size_t i = 0; i < p->n; i++) {
		const cm_brank *r = &p->r[i];
		const char *what = r->state == CM_BR_RUN    ? (r->map ? "repair" : "merge")
				   : r->state == CM_BR_DONE ? "up to date, skipped"
							    : r->why;
		fprintf(f, "%s\t%s\t%s\t%s\t%s%s\n", r->key, or_dash(r->trace), or_dash(r->window),
			or_dash(r->output), r->state == CM_BR_FAIL ? "FAIL: " : "", what);
	}
}

/* An output of the plan by the file it names (CANON, malloc'd), and its
 * rank. */
struct out_name {
	char *canon;
	size_t rank;
};

/* qsort's order of out_name: by name, then by rank (the first rank of a
 * name keeps it). */
static int out_cmp(const void *a, const void *b)
{
	const struct out_name *x = a, *y = b;
	int c = strcmp(x->canon, y->canon);
	return c ? c : x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* PATH without its empty and "." components ("out//./a" is "out/a";
 * ".." is kept: it means another directory where a link leads away);
 * malloc'd. */
static char *lexical(const char *path)
{
	char *out = cm_xmalloc(strlen(path) + 2), *o = out;
	const char *c = path;
	if (*c == '/')
		*o++ = '/';
	while (*c) {
		size_t len;
		while (*c == '/')
			c++;
		len = strcspn(c, "/");
		if (len && !(len == 1 && *c == '.')) {
			if (o > out && o[-1] != '/')
				*o++ = '/';
			memcpy(o, c, len);
			o += len;
		}
		c += len;
	}
	*o = 0;
	return out;
}

/* PATH as the file it names: the real path of the file, else of its
 * directory and its name, else PATH's own components (its directory is
 * made by the run); malloc'd. */
static char *canon_path(const char *path)
{
	char real[PATH_MAX], *norm, *slash, *out;
	/* relative to the working directory, which the batch does not leave */
	if (path[0] != '/' && realpath(".", real)) {
		char *abs = cm_bplan_asprintf("%s/%s", real, path);
		norm = lexical(abs);
		free(abs);
	} else {
		norm = lexical(path);
	}
	slash = strrchr(norm, '/');
	if (realpath(norm, real)) {
		free(norm);
		return cm_xstrdup(real);
	}
	if (slash && slash != norm && slash[1]) {
		*slash = 0;
		if (realpath(norm, real)) {
			out = cm_bplan_asprintf("%s/%s", real, slash + 1);
			free(norm);
			return out;
		}
		*slash = '/';
	}
	return norm;
}

void cm_bplan_outputs_apart(cm_bplan *p)
{
	struct out_name *o = cm_xmalloc((p->n + 1) * sizeof *o);
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->r[i].output && p->r[i].state != CM_BR_FAIL)
			o[n++] = (struct out_name){canon_path(p->r[i].output), i};
	qsort(o, n, sizeof *o, out_cmp);
	for (size_t i = 1, first = 0; i < n; i++) {
		if (strcmp(o[i].canon, o[first].canon)) {
			first = i; /* a name's first rank keeps it */
			continue;
		}
		cm_bplan_fail(&p->r[o[i].rank], cm_bplan_asprintf("the output is key %s's output too: two merges would "
								  "write it, and the second replace the first",
								  p->r[o[first].rank].key));
	}
	for (size_t i = 0; i < n; i++)
		free(o[i].canon);
	free(o);
}

static void free_rank(cm_brank *r)
{
	free(r->key);
	free(r->trace);
	free(r->window);
	free(r->output);
	free(r->why);
	free(r->msg);
}

void cm_bplan_shard(cm_bplan *p, size_t k, size_t n)
{
	size_t kept = 0;
	for (size_t i = 0; i < p->n; i++)
		if (i % n == k)
			p->r[kept++] = p->r[i];
		else
			free_rank(&p->r[i]);
	p->n = kept;
}

void cm_bplan_free(cm_bplan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free_rank(&p->r[i]);
	free(p->r);
	memset(p, 0, sizeof *p);
}
