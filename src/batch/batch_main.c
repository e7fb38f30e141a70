/* batch_main.c - cuptimerge-batch's command line: options, then plan, skip, run, summary. */
#include "config.h"
#include "batch/batchargs.h"
#include "batch/batchplan.h"
#include "base/diag.h"
#include "base/opool.h"
#include "base/optname.h"
#include "base/optnum.h"
#include "base/exitcode.h"
#include "base/fdio.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fputs("Usage: cuptimerge-batch [OPTION]... DIR... [-- MERGE-OPTION...]\n"
	      "  or:  cuptimerge-batch [OPTION]... -m MANIFEST [-- MERGE-OPTION...]\n"
	      "Merge the CUPTI trace window of every rank into its PyTorch trace, or repair\n"
	      "the trace with its thread map: pair the traces with the windows and thread\n"
	      "maps found in DIRs (or listed in MANIFEST), then run cuptimerge on each pair,\n"
	      "several at a time, skipping ranks already merged.  The options after \"--\"\n"
	      "go to each cuptimerge (--force, -z9, ...).\n"
	      "\n"
	      "  -m, --manifest=FILE    the ranks from FILE (- for standard input): a TSV with\n"
	      "                         a header line and the columns key, cpu trace,\n"
	      "                         window or map, output\n"
	      "  -O, --output-dir=DIR   write KEY.merged.json.gz into DIR (default: merged/\n"
	      "                         in the first DIR, or beside the manifest; ./merged\n"
	      "                         for a manifest that is no regular file)\n"
	      "  -j, --jobs=N           run at most N merges at a time (default: the cores)\n"
	      "      --joblog=FILE      write the joblog to FILE (default: the output\n"
	      "                         directory's cuptimerge-batch.tsv)\n"
	      "      --shard=K/N        only the ranks K, K+N, K+2N... of the plan (0 <= K < N)\n"
	      "  -n, --dry-run          print the plan, run nothing\n"
	      "      --force            merge again ranks whose output is up to date\n"
	      "      --clip             pass --clip on to each merge: the window cut to the\n"
	      "                         trace's span (cuptimerge(1))\n"
	      "      --steps=A[-B], --range=START,END\n"
	      "                         pass the cut on to each rank (cuptimerge(1))\n"
	      "      --cuptimerge=PATH  the cuptimerge to run (default: the one beside this\n"
	      "                         program, else cuptimerge on PATH)\n"
	      "      --sync             make each output and the joblog durable: pass\n"
	      "                         --sync on to each merge (cuptimerge(1))\n"
	      "  -q, --quiet            no warnings, no progress\n"
	      "      --progress         show progress even when stderr is not a terminal\n"
	      "      --no-progress      never show progress\n"
	      "  -h, --help             show this help and exit\n"
	      "  -V, --version          show the version and exit\n"
	      "\n"
	      "Exit status: 0 every rank merged or skipped, 2 usage error, 3 I/O error,\n"
	      "4 a rank failed or could not be paired, 5 another run holds the joblog.\n"
	      "See cuptimerge-batch(1).\n",
	      f);
}

static char *dir_plus(const char *path, int is_dir, const char *name)
{
	char *d = cm_xstrdup(path), *s, *out;
	if (!is_dir) {
		if ((s = strrchr(d, '/')))
			s[s == d] = 0;
		else
			strcpy(d, ".");
	}
	out = cm_xmalloc(strlen(d) + strlen(name) + 2);
	sprintf(out, "%s%s%s", d, d[strlen(d) - 1] == '/' ? "" : "/", name);
	free(d);
	return out;
}

/* 1 when the manifest PATH is a regular file of a directory: not "-", a
 * pipe or a device, nor a name under /dev/ or /proc/ (/dev/stdin,
 * /dev/fd/63 of <(...): a descriptor's, whatever file it is open on). */
static int manifest_is_file(const char *path)
{
	struct stat st;
	return strcmp(path, "-") && strncmp(path, "/dev/", 5) && strncmp(path, "/proc/", 6) &&
	       stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The cuptimerge to run: beside this program's own file, else on PATH.  A
 * malloc'd path; NULL when none is found. */
static char *find_cuptimerge(void)
{
	char self[PATH_MAX], *s;
	const char *path = getenv("PATH");
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 16);
	if (n > 0) {
		self[n] = 0;
		if ((s = strrchr(self, '/'))) {
			strcpy(s + 1, "cuptimerge");
			if (access(self, X_OK) == 0)
				return cm_xstrdup(self);
		}
	}
	for (const char *p = path ? path : ""; *p;) {
		size_t len = strcspn(p, ":");
		char *cand = cm_xmalloc(len + 16);
		snprintf(cand, len + 16, "%.*s/cuptimerge", (int)len, len ? p : ".");
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		p += len + (p[len] == ':');
	}
	return NULL;
}

/* A value of --steps (STEPS) or --range, checked as cuptimerge checks it
 * (optnum.h): 0, or -1. */
static int cut_value(int steps, const char *s)
{
	unsigned long long a, b;
	double lo, hi;
	return steps ? cm_optnum_steps(s, &a, &b) : cm_optnum_range(s, &lo, &hi);
}

/* 1 when the directory ARGV[I] is one of ARGV[FROM..I-1] (the same device
 * and inode: "dir dir/.", a symlink to it, an overlapping glob), said in a
 * warning; its files, listed twice, would make every rank's window
 * "ambiguous" and every trace a rank twice.  0 otherwise, or when it cannot
 * be stat'ed (its reading says why). */
static int same_dir_before(char **argv, int from, int i)
{
	struct stat st, prev;
	if (stat(argv[i], &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	for (int j = from; j < i; j++)
		if (stat(argv[j], &prev) == 0 && S_ISDIR(prev.st_mode) && prev.st_dev == st.st_dev &&
		    prev.st_ino == st.st_ino) {
			cm_warn(argv[i], -1, "the same directory as %s: read once", argv[j]);
			return 1;
		}
	return 0;
}

/* Set *SLOT to ARG; -1 when it was set already (a second -m, -O or
 * --joblog is a usage error, not a silent replacement of the first). */
static int set_once(const char **slot, const char *arg)
{
	if (*slot)
		return -1;
	*slot = arg;
	return 0;
}

/* 1 after a usage error when the directory D (or NULL), given as WHAT,
 * holds a control character (batchplan.h); else 0. */
static int control_name(const char *what, const char *d)
{
	char *shown, *msg;
	if (!cm_bplan_has_control(d))
		return 0;
	shown = cm_bplan_shown(d);
	msg = cm_xmalloc(strlen(shown) + 200);
	sprintf(msg, "%s %s: its name holds a tab, a line break or another control character, which the joblog cannot "
		"record: rename it", what, shown);
	cm_usage_error(CM_EXIT_USAGE, msg, NULL);
	free(msg);
	free(shown);
	return 1;
}

/* A usage error (reported; status 2) when the joblog JOBLOG is no regular
 * file or names a descriptor (/dev/stdout), or a file the run reads or
 * writes otherwise: the manifest MANIFEST (or NULL), a rank's cpu trace,
 * window or output in plan P.  The joblog is rewritten from
 * its first byte, and --joblog naming a trace lost it.  0 when it is
 * none, or is not there yet. */
static int joblog_clash(const cm_bplan *p, const char *joblog, const char *manifest)
{
	static const char *const what[] = {"cpu trace", "window", "output"};
	struct stat sj, st;
	char msg[400];
	/* --joblog=/dev/stdout (/dev/fd/N, a link to one) names a descriptor
	 * the shell opened: reopened by name, `>> log` lost log's lines to the
	 * rewrite, and a pipe cannot be read back for the skips */
	if (cm_path_names_fd(joblog) >= 0) {
		snprintf(msg, sizeof msg, "the joblog %.200s names a descriptor, not a file (it is read, rewritten and "
			 "locked: give a file's name)", joblog);
		return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
	}
	if (stat(joblog, &sj) < 0)
		return 0;
	/* it is read to its end, then rewritten and locked: /dev/full and
	 * /dev/zero read zeros for ever (the batch grew until the kernel
	 * killed it), /dev/null took no lock and kept nothing */
	if (!S_ISREG(sj.st_mode)) {
		snprintf(msg, sizeof msg, "the joblog %.200s is not a regular file (it is read, rewritten and locked: "
			 "give a file's name)", joblog);
		return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
	}
	if (manifest && stat(manifest, &st) == 0 && st.st_dev == sj.st_dev && st.st_ino == sj.st_ino) {
		snprintf(msg, sizeof msg, "the joblog %.200s is the manifest, which it would replace", joblog);
		return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
	}
	for (size_t i = 0; i < p->n; i++) {
		const char *path[] = {p->r[i].trace, p->r[i].window, p->r[i].output};
		for (int k = 0; k < 3; k++)
			if (path[k] && stat(path[k], &st) == 0 && st.st_dev == sj.st_dev && st.st_ino == sj.st_ino) {
				snprintf(msg, sizeof msg, "the joblog %.200s is key %.100s's %s, which it would replace",
					 joblog, p->r[i].key, what[k]);
				return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
			}
	}
	return 0;
}

/* "K/N", 0 <= K < N <= 1000000: the shard --shard names. */
static int parse_shard(const char *s, unsigned long *k, unsigned long *n)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	*k = strtoul(s, &end, 10);
	if (*end != '/' || end[1] < '0' || end[1] > '9')
		return -1;
	*n = strtoul(end + 1, &end, 10);
	return *end || *n < 1 || *n > 1000000 || *k >= *n ? -1 : 0;
}

/* After a stop: "; WHAT: k1 k2 ..." on stderr, the keys of the ranks
 * interrupted (RAN 1) or not started (RAN 0), the first 10 and a count of
 * the rest; nothing when there are none. */
static void keys_line(const cm_bplan *p, const char *what, int ran)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++) {
		const cm_brank *r = &p->r[i];
		if (ran ? !r->interrupted : r->ran || r->state != CM_BR_RUN)
			continue;
		if (n == 0)
			fprintf(stderr, "; %s: %s", what, r->key);
		else if (n < 10)
			fprintf(stderr, " %s", r->key);
		n++;
	}
	if (n > 10)
		fprintf(stderr, " ... (%zu in all)", n);
}

/* Close standard output after --help or --version: 0, or CM_EXIT_IO after
 * saying why (a full disk, a closed pipe's EIO), as a merge's output is. */
static int close_stdout(void)
{
	int bad = ferror(stdout);
	if (fclose(stdout) == 0 && !bad)
		return CM_EXIT_OK;
	return cm_error(CM_EXIT_IO, "<stdout>", -1, "write error: %s", strerror(errno ? errno : EIO));
}

enum { OPT_JOBLOG = 256, OPT_FORCE, OPT_CUPTIMERGE, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_SHARD, OPT_CLIP, OPT_STEPS, OPT_RANGE,
       OPT_SYNC };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"manifest", required_argument, NULL, 'm'},
		{"output-dir", required_argument, NULL, 'O'},
		{"jobs", required_argument, NULL, 'j'},
		{"joblog", required_argument, NULL, OPT_JOBLOG},
		{"shard", required_argument, NULL, OPT_SHARD},
		{"dry-run", no_argument, NULL, 'n'},
		{"force", no_argument, NULL, OPT_FORCE},
		{"clip", no_argument, NULL, OPT_CLIP},
		{"steps", required_argument, NULL, OPT_STEPS},
		{"range", required_argument, NULL, OPT_RANGE},
		{"sync", no_argument, NULL, OPT_SYNC},
		{"cuptimerge", required_argument, NULL, OPT_CUPTIMERGE},
		{"quiet", no_argument, NULL, 'q'},
		{"progress", no_argument, NULL, OPT_PROGRESS},
		{"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *merge_args[2] = {NULL, NULL}, *all_args[3] = {NULL, NULL, NULL};
	char cut_opt[256 + 16]; /* --steps=... or --range=..., passed on */
	const char *manifest = NULL, *outdir_opt = NULL, *joblog_opt = NULL, *cm_opt = NULL;
	char *outdir, *joblog, *cuptimerge = NULL;
	unsigned long shard_k = 0, shard_n = 0;
	int c, jobs = 0, dry = 0, force = 0, quiet = 0, prog = -1, sync = 0, status = CM_EXIT_OK, logfd = -1, stopsig = 0;
	size_t merged = 0, skipped = 0, nogpu = 0, notrace = 0, failed = 0, interrupted = 0, notstarted = 0;
	cm_bplan plan;
	struct stat cst;
	char **extra = NULL;
	int nextra = 0;
	double t0 = cm_now_s();

	cm_diag_init("cuptimerge-batch");
	/* before any file is opened: none may take a closed 0, 1 or 2 */
	if (cm_diag_stdfds() < 0)
		return cm_error(CM_EXIT_IO, "/dev/null", -1, "cannot open it onto a closed standard descriptor: %s",
				strerror(errno));
	/* everything after the first "--" goes to each merge (issue 28 P6):
	 * cut it off before getopt, which would take it for operands */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			extra = argv + i + 1;
			nextra = argc - i - 1;
			argc = i;
			argv[i] = NULL;
			break;
		}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:O:j:nqhV", longopts, NULL)) != -1) {
		switch (c) {
		/* what names an input or an output, or which ranks run, once: a
		 * second one would read as "this too", not as a replacement
		 * (the common rule, the last one wins, is for the rest) */
		case 'm':
			if (set_once(&manifest, optarg) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "option given more than once", "-m/--manifest");
			break;
		case 'O':
			if (set_once(&outdir_opt, optarg) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "option given more than once", "-O/--output-dir");
			break;
		case 'j': {
			long v = cm_optnum_count(optarg, 4096);
			if (v < 1)
				return cm_usage_error(CM_EXIT_USAGE, "-j needs a number of jobs, 1 to 4096", optarg);
			jobs = (int)v;
			break;
		}
		case OPT_JOBLOG:
			if (set_once(&joblog_opt, optarg) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "option given more than once", "--joblog");
			break;
		case OPT_SHARD:
			if (shard_n)
				return cm_usage_error(CM_EXIT_USAGE, "option given more than once", "--shard");
			if (parse_shard(optarg, &shard_k, &shard_n) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "--shard needs K/N, with 0 <= K < N", optarg);
			break;
		case 'n': dry = 1; break;
		case OPT_FORCE: force = 1; break;
		case OPT_CLIP: merge_args[0] = "--clip"; break;
		case OPT_STEPS:
		case OPT_RANGE:
			/* checked here, so that a bad value is one line, not a failure a rank */
			if (all_args[0] || strlen(optarg) > 256 || cut_value(c == OPT_STEPS, optarg) < 0)
				return cm_usage_error(CM_EXIT_USAGE,
						      all_args[0] ? "--steps and --range: one of them, once"
						      : c == OPT_STEPS ? "--steps needs A or A-B, step numbers with A <= B"
								       : "--range needs START,END: two numbers, START < END",
						      optarg);
			snprintf(cut_opt, sizeof cut_opt, "--%s=%s", c == OPT_STEPS ? "steps" : "range", optarg);
			all_args[0] = cut_opt;
			break;
		case OPT_SYNC: sync = 1; break;
		case OPT_CUPTIMERGE: cm_opt = optarg; break;
		case 'q': quiet = 1; break;
		case OPT_PROGRESS: prog = 1; break;
		case OPT_NO_PROGRESS: prog = 0; break;
		case 'h': usage(stdout); return close_stdout();
		case 'V': puts("cuptimerge-batch (" PACKAGE_NAME ") " PACKAGE_VERSION); return close_stdout();
		default: { /* '?' or ':': name the option as typed (optname.c) */
			char name[64];
			const char *why = cm_optname(c, argv, longopts, name, sizeof name);
			return cm_usage_error(CM_EXIT_USAGE, why, name);
		}
		}
	}
	if (!manifest && optind == argc)
		return cm_usage_error(CM_EXIT_USAGE, "nothing to do: give directories, or a manifest (-m FILE)", NULL);
	if (manifest && optind < argc)
		return cm_usage_error(CM_EXIT_USAGE, "a manifest or directories, not both", argv[optind]);
	/* an empty name names nothing: said now, not as an I/O error on "" */
	if (outdir_opt && !*outdir_opt)
		return cm_usage_error(CM_EXIT_USAGE, "-O needs a directory name", NULL);
	if (joblog_opt && !*joblog_opt)
		return cm_usage_error(CM_EXIT_USAGE, "--joblog needs a file name", NULL);
	if (cm_opt && !*cm_opt)
		return cm_usage_error(CM_EXIT_USAGE, "--cuptimerge needs a file name", NULL);
	if (manifest && !*manifest)
		return cm_usage_error(CM_EXIT_USAGE, "-m needs a file name ('-' for standard input)", NULL);
	for (int i = optind; i < argc; i++)
		if (!*argv[i])
			return cm_usage_error(CM_EXIT_USAGE, "an empty directory name", NULL);
	/* every path of the joblog's lines (a TSV) starts with a DIR or the
	 * -O: a tab or a line break in one split every line, and the next run
	 * found no rank done; a file of such a name fails its rank
	 * (batchplan.c), a directory of one would fail them all */
	if (control_name("-O", outdir_opt))
		return CM_EXIT_USAGE;
	for (int i = optind; i < argc; i++) {
		struct stat st;
		if (control_name("DIR", argv[i]))
			return CM_EXIT_USAGE;
		/* "-" reads standard input in cuptimerge and in -m: here it
		 * was "cannot read the directory" */
		if (!strcmp(argv[i], "-") && stat("-", &st) < 0)
			return cm_usage_error(CM_EXIT_USAGE,
					      "DIR -: a directory, not standard input; a manifest on standard input is -m -",
					      NULL);
	}
	/* what every merge would refuse, or what would merge nothing, said
	 * once now rather than as each rank's failure (batchargs.c) */
	if (cm_bargs_check(extra, nextra, merge_args[0], all_args[0], manifest != NULL))
		return CM_EXIT_USAGE;
	/* -- --clip is the batch's --clip: to the merges with a window only
	 * (a thread map's merge refuses it, and each such rank failed) */
	if (cm_bargs_has(extra, nextra, "clip")) {
		merge_args[0] = "--clip";
		nextra = cm_bargs_drop(extra, nextra, "clip");
	}
	if (jobs == 0)
		jobs = cm_opool_cpus_available();
	/* --sync: every merge's output (its --sync), and what the batch writes */
	if (sync)
		all_args[all_args[0] ? 1 : 0] = "--sync";
	cm_brun_set_sync(sync);
	cm_diag_set_quiet(quiet);
	cm_progress_enable(!quiet && (prog < 0 ? isatty(2) : prog));
	/* beside the manifest only when it is a file: "-", /dev/stdin, a pipe
	 * or <(...) has no directory of its own (/dev/merged/, issue 28 P13):
	 * ./merged then */
	if (outdir_opt)
		outdir = cm_xstrdup(outdir_opt);
	else if (manifest && !manifest_is_file(manifest))
		outdir = cm_xstrdup("merged");
	else
		outdir = dir_plus(manifest ? manifest : argv[optind], !manifest, "merged");
	joblog = joblog_opt ? cm_xstrdup(joblog_opt) : dir_plus(outdir, 1, "cuptimerge-batch.tsv");

	memset(&plan, 0, sizeof plan);
	/* the batch's --clip, --steps or --range (all_args[0] may be --sync) */
	plan.window_cut = merge_args[0] || all_args[0] == cut_opt;
	plan.window_cut |= cm_bargs_has(extra, nextra, "clip") || cm_bargs_has(extra, nextra, "steps") ||
			   cm_bargs_has(extra, nextra, "range");
	plan.merge_force = cm_bargs_has(extra, nextra, "force");
	if (manifest) {
		if (cm_bplan_manifest(&plan, manifest, outdir) < 0)
			status = cm_diag_status();
	} else {
		for (int i = optind; i < argc; i++) {
			if (same_dir_before(argv, optind, i))
				continue;
			if (cm_bplan_dir(&plan, argv[i], outdir) < 0)
				status = CM_EXIT_IO;
		}
		cm_bplan_pair(&plan, outdir);
	}
	cm_bplan_outputs_apart(&plan);
	if (!status)
		status = cm_bargs_outputs(&plan, extra, nextra);
	if (!status)
		status = joblog_clash(&plan, joblog, manifest);
	if (status)
		goto out;
	if (shard_n)
		cm_bplan_shard(&plan, shard_k, shard_n);
	/* the cuptimerge to run, found before the joblog is made and locked */
	if (!dry && !(cuptimerge = cm_opt ? cm_xstrdup(cm_opt) : find_cuptimerge())) {
		status = cm_error(CM_EXIT_IO, NULL, -1, "cannot find cuptimerge beside this program or on PATH (use --cuptimerge)");
		goto out;
	}
	if (!dry && access(cuptimerge, X_OK) < 0) {
		status = cm_error(CM_EXIT_IO, cuptimerge, -1, "cannot run: %s", strerror(errno));
		goto out;
	}
	/* a directory passes access(X_OK), and every rank failed with 127 */
	if (!dry && stat(cuptimerge, &cst) == 0 && S_ISDIR(cst.st_mode)) {
		status = cm_error(CM_EXIT_IO, cuptimerge, -1, "cannot run: %s", strerror(EISDIR));
		goto out;
	}
	/* one run at a time per joblog, locked before the skips read it */
	if (!dry && (logfd = cm_bjoblog_lock(joblog)) < 0) {
		status = cm_diag_status();
		goto out;
	}
	cm_bplan_skips(&plan, joblog, force);
	for (size_t i = 0; i < plan.n; i++) {
		failed += plan.r[i].state == CM_BR_FAIL;
		skipped += plan.r[i].state == CM_BR_DONE;
		nogpu += plan.r[i].state == CM_BR_NOGPU;
		notrace += plan.r[i].state == CM_BR_NOTRACE;
	}
	if (dry) {
		errno = 0; /* a write of the plan that failed says why (ENOSPC, EIO) */
		cm_bplan_print(&plan, stdout);
		if (fflush(stdout) || ferror(stdout))
			status = cm_error(CM_EXIT_IO, "<stdout>", -1, "cannot write the plan: %s",
					  strerror(errno ? errno : EIO));
		else
			status = failed ? CM_EXIT_RANKS : CM_EXIT_OK;
		goto out;
	}
	/* what cannot run is said before anything runs */
	for (size_t i = 0; i < plan.n; i++)
		if (plan.r[i].state == CM_BR_FAIL)
			fprintf(stderr, "cuptimerge-batch: %s: %s\n", plan.r[i].key, plan.r[i].why);
	stopsig = cm_brun(&plan, cuptimerge, extra, nextra, merge_args, all_args, jobs, joblog, logfd);
	logfd = -1; /* closed by cm_brun */
	if (stopsig < 0) {
		status = CM_EXIT_IO;
		goto out;
	}
	for (size_t i = 0; i < plan.n; i++) {
		cm_brank *r = &plan.r[i];
		if (!r->ran) {
			notstarted += stopsig > 0 && r->state == CM_BR_RUN;
			continue;
		}
		if (r->status == 0)
			merged++;
		else if (r->interrupted)
			interrupted++; /* said below, with the signal: not a failure of its own */
		else {
			failed++;
			fprintf(stderr, "cuptimerge-batch: %s: exit %d: %s\n", r->key, r->status, r->msg);
		}
	}
	fprintf(stderr, "cuptimerge-batch: %zu merged, %zu skipped, %zu failed", merged, skipped, failed);
	if (nogpu)
		fprintf(stderr, ", %zu without GPU work", nogpu);
	if (notrace)
		fprintf(stderr, ", %zu thread map%s without a trace", notrace, notrace == 1 ? "" : "s");
	if (stopsig > 0)
		fprintf(stderr, ", %zu interrupted, %zu not started", interrupted, notstarted);
	fprintf(stderr, ", %.1f s\n", cm_now_s() - t0);
	if (failed) {
		fputs("cuptimerge-batch: failed:", stderr);
		for (size_t i = 0; i < plan.n; i++)
			if (plan.r[i].state == CM_BR_FAIL || (plan.r[i].ran && plan.r[i].status && !plan.r[i].interrupted))
				fprintf(stderr, " %s", plan.r[i].key);
		fputc('\n', stderr);
		status = CM_EXIT_RANKS;
	}
	if (stopsig > 0) {
		/* passed on, waited for, recorded: say what finished and what was
		 * stopped (issue 28 P8: Slurm's time limit is a SIGTERM, and the
		 * user reads the job's stderr), then die of it, as the shell
		 * expects of a command a signal stopped (status 128 + N) */
		sigset_t set;
		fprintf(stderr, "cuptimerge-batch: stopped by %s: %zu merged before it", cm_bsig_name(stopsig), merged);
		keys_line(&plan, "interrupted", 1);
		keys_line(&plan, "not started", 0);
		fprintf(stderr, "; the joblog records every rank, and the same command resumes the rest\n");
		fflush(stderr);
		signal(stopsig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, stopsig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(stopsig);
		status = 128 + stopsig; /* not reached */
	}
out:
	if (logfd >= 0)
		close(logfd);
	cm_bplan_free(&plan);
	free(outdir);
	free(joblog);
	free(cuptimerge);
	return status;
}
