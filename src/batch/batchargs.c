/* batchargs.c - the merge options after cuptimerge-batch's "--", checked
 * before any rank runs (batchargs.h).
 *
 * The options after "--" go to every merge as they are (batchrun.c's
 * spawn), after the batch's own and before the rank's -w/-t, -o and trace.
 * What cuptimerge refuses there it refuses in every rank alike, and the
 * batch used to find out only by running them all: a run of 512 ranks
 * ended with 512 identical lines and status 4 (a second --steps, -o, a
 * --format that the outputs' names contradict).  Worse, -- --help made
 * every merge print its help and exit 0: "512 merged", and no file.  So
 * this stage reads the options as cuptimerge's getopt_long will (by its
 * own table, base/mergeopts.h: short clusters, abbreviated long names, a
 * value attached or in the next word), and refuses such a command line with one usage
 * line, before the plan is made (cm_bargs_check) or, for what the
 * outputs' names say, once it is (cm_bargs_outputs).  An option it does
 * not know is passed on untouched: the cuptimerge that --cuptimerge
 * names may be newer, and it says what it thinks of it. */
#include "config.h"
#include "batch/batchargs.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/mergeopts.h"
#include "base/optname.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One option of EXTRA as cuptimerge will take it: its key (what its
 * getopt_long returns for it, base/mergeopts.h; '@' for an operand), the
 * words as typed after the batch's "--" ("-- --steps=2", "-- --steps 2",
 * "-- -qz9", "-- -o x.json"), and its value (NULL: none). */
typedef struct mword {
	int key;
	char typed[160];
	const char *val;
	int at; /* its (first) word's index in EXTRA */
} mword;

/* The long option NAME (LEN bytes, after "--") as getopt_long resolves
 * it: the one of that exact name, else the one it is a prefix of, when
 * only one is; NULL when none or several. */
static const struct option *long_opt(const char *name, size_t len)
{
	const struct option *hit = NULL;
	for (const struct option *o = cm_merge_longopts; o->name; o++) {
		if (strncmp(o->name, name, len))
			continue;
		if (!o->name[len])
			return o;
		if (hit)
			return NULL; /* ambiguous: cuptimerge says so */
		hit = o;
	}
	return hit;
}

/* Read the N words EXTRA as cuptimerge's getopt_long will into *OUT (a
 * malloc'd array; its length returned): its options, and operands (a word
 * not starting with '-', "-", each word after "--").  Unknown options and clusters' unknown letters are left out. */
static int read_words(char *const *extra, int n, mword **out)
{
	/* a word is one entry, but a cluster an entry a letter ("-qqvh"):
	 * room for a word's length of them */
	size_t cap = 1;
	for (int i = 0; i < n; i++)
		cap += strlen(extra[i]) + 1;
	mword *w = cm_xmalloc(cap * sizeof *w);
	int k = 0, opts = 1;
	for (int i = 0; i < n; i++) {
		const char *a = extra[i];
		if (opts && !strcmp(a, "--")) {
			opts = 0;
			continue;
		}
		if (!opts || a[0] != '-' || !a[1]) {
			w[k].at = i;
			w[k].key = '@';
			snprintf(w[k].typed, sizeof w[k].typed, "-- %s", a);
			w[k++].val = a;
			continue;
		}
		if (a[1] == '-') { /* --name, --name=value, --name value */
			const char *eq = strchr(a, '=');
			int at = i;
			const struct option *o = long_opt(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
			const char *val = eq ? eq + 1 : NULL;
			if (o && o->has_arg == required_argument && !eq && i + 1 < n)
				val = extra[++i];
			if (!o)
				continue;
			w[k].at = at;
			w[k].key = o->val;
			if (eq || !val)
				snprintf(w[k].typed, sizeof w[k].typed, "-- %s", a);
			else
				snprintf(w[k].typed, sizeof w[k].typed, "-- %s %s", a, val);
			w[k++].val = val;
			continue;
		}
		int first = i; /* (a value may take the next word) */
		for (const char *c = a + 1; *c; c++) { /* a cluster: -qz9, -qo FILE */
			const char *val = NULL, *s = *c != ':' ? strchr(CM_MERGE_SHORTOPTS, *c) : NULL;
			int arg = !s || s[1] != ':' ? no_argument : s[2] == ':' ? optional_argument : required_argument;
			w[k].at = first;
			if (!s) {
				continue; /* unknown: cuptimerge says so */
			} else if (arg == required_argument) { /* the rest of the word, or the next one */
				val = c[1] ? c + 1 : i + 1 < n ? extra[++i] : NULL;
				if (c[1] || !val)
					snprintf(w[k].typed, sizeof w[k].typed, "-- %s", a);
				else
					snprintf(w[k].typed, sizeof w[k].typed, "-- %s %s", a, val);
			} else if (arg == optional_argument) { /* -z: its level only attached */
				val = c[1] ? c + 1 : NULL;
				snprintf(w[k].typed, sizeof w[k].typed, "-- %s", a);
			} else {
				snprintf(w[k].typed, sizeof w[k].typed, "-- %s", a);
			}
			w[k].key = *c;
			w[k++].val = val;
			if (val)
				break;
		}
	}
	*out = w;
	return k;
}

/* The first of the K words W with key KEY, or NULL; with LAST, the last. */
static const mword *find(const mword *w, int k, int key, int last)
{
	const mword *hit = NULL;
	for (int i = 0; i < k; i++)
		if (w[i].key == key) {
			hit = &w[i];
			if (!last)
				break;
		}
	return hit;
}

/* A usage error saying MSG (one line, and the --help hint): CM_EXIT_USAGE. */
static int refuse(const char *msg)
{
	return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
}

/* The check of cm_bargs_check on the K words W; the message written into
 * MSG (LEN bytes).  0 when none fails. */
static int check_words(const mword *w, int k, const char *clip, const char *cut, int manifest, char *msg, size_t len)
{
	/* the cuts in cuptimerge's order (the batch's own come first in its
	 * command line): as typed, and whether each is a --clip */
	struct {
		const char *typed;
		int clip;
	} cuts[4];
	int ncut = 0, nclip = 0, nstep = 0;
	const char *a = NULL, *b = NULL;
	const mword *f;
	for (int i = 0; i < k; i++) {
		const char *t = w[i].typed;
		switch (w[i].key) {
		case '@':
			snprintf(msg, len, "%s: an operand; the batch gives each merge its trace (the directories go "
				 "before --, merge options after it)", t);
			return refuse(msg);
		case 'o': case 'w': case 't':
			snprintf(msg, len, "%s: the batch gives each merge its %s", t,
				 w[i].key == 'o' ? "-o (-O or a manifest names the outputs)"
						 : "-w or -t (the window or thread map paired with its trace)");
			return refuse(msg);
		case CM_MOPT_SPLIT:
			snprintf(msg, len, "%s: the batch writes one output a rank (split a merged trace with "
				 "cuptimerge --split)", t);
			return refuse(msg);
		case 'h': case 'V':
			snprintf(msg, len, "%s: each merge would print it and merge nothing (run cuptimerge %s)", t,
				 w[i].key == 'h' ? "--help" : "--version");
			return refuse(msg);
		}
	}
	if (clip)
		cuts[ncut].typed = clip, cuts[ncut++].clip = 1;
	if (cut)
		cuts[ncut].typed = cut, cuts[ncut++].clip = 0;
	for (int i = 0; i < k && ncut < 4; i++)
		if (w[i].key == CM_MOPT_CLIP || w[i].key == CM_MOPT_STEPS || w[i].key == CM_MOPT_RANGE)
			cuts[ncut].typed = w[i].typed, cuts[ncut++].clip = w[i].key == CM_MOPT_CLIP;
	for (int i = 0; i < ncut; i++) {
		nclip += cuts[i].clip;
		nstep += !cuts[i].clip;
	}
	/* cuptimerge takes one --steps or --range, and no --clip with it
	 * (--clip twice is --clip): name the first two that clash */
	if (nstep > 1 || (nstep && nclip)) {
		int ia = -1, ib = -1;
		for (int i = 0; i < ncut; i++) {
			if (nstep > 1 ? cuts[i].clip : ia >= 0 && cuts[i].clip == cuts[ia].clip)
				continue; /* two cuts; else the first --clip and the cut */
			if (ia < 0)
				ia = i;
			else if (ib < 0)
				ib = i;
		}
		a = cuts[ia].typed;
		b = cuts[ib].typed;
		snprintf(msg, len, "%s and %s: %s", a, b,
			 nstep > 1 ? "--steps and --range: one of them, once"
				   : "--clip and --steps/--range do not go together (those cut the window too)");
		return refuse(msg);
	}
	/* the directories' outputs are all KEY.merged.json.gz: said before
	 * they are read (a manifest's are checked once it is) */
	if ((f = find(w, k, CM_MOPT_FORMAT, 1)) && !manifest && f->val && !strcmp(f->val, "perfetto")) {
		snprintf(msg, len, "%s: the outputs are named KEY.merged.json.gz, and would hold Perfetto's "
			 "protobuf (in a manifest, an output named .pftrace or .pftrace.gz is written so)", f->typed);
		return refuse(msg);
	}
	return 0;
}

int cm_bargs_check(char *const *extra, int n, const char *clip, const char *cut, int manifest)
{
	mword *w;
	char msg[600];
	int k = read_words(extra, n, &w), rc = check_words(w, k, clip, cut, manifest, msg, sizeof msg);
	free(w);
	return rc;
}

int cm_bargs_outputs(const cm_bplan *p, char *const *extra, int n)
{
	char msg[PATH_MAX + 400];
	mword *w;
	int k = read_words(extra, n, &w), rc = 0;
	/* the last --format wins in cuptimerge; any -z asks for gzip */
	const mword *f = find(w, k, CM_MOPT_FORMAT, 1), *z = find(w, k, 'z', 0);
	const char *format = f ? f->val : NULL;
	for (size_t i = 0; i < p->n && !rc; i++) {
		const char *out = p->r[i].output, *says = out ? cm_named_format(out) : NULL;
		if (z && out && !cm_name_ends_with(out, ".gz")) {
			snprintf(msg, sizeof msg, "%s: the output %.*s is not named .gz, and would hold "
				 "gzip (the name of an output gives its format: leave -z out, or name it .gz)", z->typed,
				 PATH_MAX, out);
			rc = refuse(msg);
			break;
		}
		if (!format || !says || !strcmp(says, format) || (strcmp(format, "json") && strcmp(format, "perfetto")))
			continue;
		snprintf(msg, sizeof msg, "%s: the output %.*s is named for %s, and would hold %s (the name of an "
			 "output gives its format: leave --format out)", f->typed, PATH_MAX, out,
			 !strcmp(says, "json") ? "JSON" : "Perfetto's protobuf",
			 !strcmp(says, "json") ? "Perfetto's protobuf" : "JSON");
		rc = refuse(msg);
	}
	free(w);
	return rc;
}

int cm_bargs_drop(char **extra, int n, const char *name)
{
	const struct option *o = long_opt(name, strlen(name));
	mword *w;
	int k = read_words(extra, n, &w), m = 0;
	char *drop = cm_xcalloc((size_t)n + 1, 1);
	for (int i = 0; i < k; i++)
		if (o && w[i].key == o->val && !w[i].val)
			drop[w[i].at] = 1;
	for (int i = 0; i < n; i++)
		if (!drop[i])
			extra[m++] = extra[i];
	free(drop);
	free(w);
	return m;
}

int cm_bargs_has(char *const *extra, int n, const char *name)
{
	const struct option *o = long_opt(name, strlen(name));
	mword *w;
	int k = read_words(extra, n, &w), has = o && find(w, k, o->val, 0) != NULL;
	free(w);
	return has;
}
