/* main.c - cuptimerge's command line: options into struct cm_options, then the engine. */
#include "config.h"
#include "base/diag.h"
#include "base/opool.h"
#include "base/optname.h"
#include "base/optnum.h"
#include "base/utf8.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/idmap.h"
#include "base/mergeopts.h"
#include "io/outfile.h"
#include "io/output.h"
#include "io/pgzip.h"
#include "merge.h"
#include "options.h"
#include "pftrace/pftrace.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read chunk: 1 MiB keeps yajl's per-call overhead invisible; tests set
 * tiny sizes (--buffer-size, CUPTIMERGE_BUFSIZE) to exercise chunk edges. */
#define DEFAULT_BUFSIZE (1u << 20)
/* Gzip level 1: at level 6, deflating the output took more CPU than the
 * whole merge (-o .gz at 1.56-1.60x the plain output's time on 16 cores);
 * level 1 gives a file about a third larger, and where the build has ISA-L
 * (io/pgzip.c) its deflate at about 8x the speed of zlib's level 1.  -z6 to
 * -z9 give smaller files, for archives. */
#define DEFAULT_GZIP_LEVEL 1

/* The output formats: the JSON text as it is written, or that text
 * transcoded to Perfetto's protobuf trace (pftrace/pftrace.h). */
enum { CM_FORMAT_JSON = 0, CM_FORMAT_PERFETTO = 1 };

/* -v: the gzip stream's waits under the transcoder's sink (CTX is the
 * output: output.h's cm_output_codec). */
static void pft_probe(void *ctx, double *wait, double *emit) { cm_output_gz_waits(ctx, wait, emit); }

/* --format=perfetto: pftrace.h's transcoder, put in the output path
 * (output.h), which names no format of its own. */
static void *pft_open(int (*sink)(void *ctx, const void *p, size_t n), void *ctx, const char *label, int threads)
{
	cm_pft *t = cm_pft_new(sink, ctx, label);
	cm_pft_threads(t, threads);
	cm_pft_set_probe(t, pft_probe);
	return t;
}
static int pft_write(void *t, const void *p, size_t n) { return cm_pft_write(t, p, n); }
static int pft_finish(void *t) { return cm_pft_finish(t); }
static void pft_free(void *t) { cm_pft_free(t); }
static const cm_output_codec perfetto = {pft_open, pft_write, pft_finish, pft_free};

static void usage(FILE *f)
{
	fputs("Usage: cuptimerge [OPTION]... -w WINDOW [-t MAP] [CPU_TRACE]\n"
	      "  or:  cuptimerge [OPTION]... -t MAP [TRACE]\n"
	      "  or:  cuptimerge [OPTION]... [--steps=A[-B] | --range=START,END] [TRACE]\n"
	      "Merge a CUPTI trace window into a PyTorch (Kineto) Chrome trace, and/or move\n"
	      "CUDA events of worker threads from opaque pthread ids to their kernel tids;\n"
	      "without either, copy a trace, cut to the steps or range asked for.\n"
	      "CPU_TRACE absent or '-' means standard input; gzip input is detected.\n"
	      "\n"
	      "  -w, --window=FILE      the trace window to merge (cuptimerge-window(5))\n"
	      "  -t, --thread-map=FILE  repair thread ids with this thread map\n"
	      "                         (cuptimerge-threadmap(5); a window also serves)\n"
	      "  -o, --output=FILE      write FILE instead of standard output: a file is\n"
	      "                         replaced atomically (a symlink's target), a device\n"
	      "                         or FIFO written through; gzip when FILE ends in .gz\n"
	      "  -z, --gzip[=LEVEL]     gzip the output (LEVEL 0-9, default 1)\n"
	      "      --sync             make the output durable: fsync it (and its\n"
	      "                         directory) before the run ends\n"
	      "      --format=FORMAT    json, or perfetto: Perfetto's protobuf trace\n"
	      "                         (default: perfetto when FILE ends in .pftrace\n"
	      "                         or .pftrace.gz, else json)\n"
	      "      --trace-name=NAME  set traceName (default: the -o FILE name)\n"
	      "      --now=SECONDS      clock for the base time of a trace without\n"
	      "                         baseTimeNanoseconds (default: the current time)\n"
	      "      --force            merge inputs that look as if they do not belong\n"
	      "                         together (other pids or times, GPU events already\n"
	      "                         in the trace, a window given as the trace)\n"
	      "      --clip             keep of the window only the API calls that start in\n"
	      "                         the CPU trace's span, and the GPU work they launched\n"
	      "      --steps=A[-B]      keep only the events of the steps A to B (by the\n"
	      "                         trace's ProfilerStep#N events), both sides cut alike\n"
	      "      --range=START,END  keep only the events in [START, END), trace us (the\n"
	      "                         trace's own ts values)\n"
	      "      --split=steps[:N]  one file a step (N steps a file), each complete and\n"
	      "                         as --steps writes it, named by -o 'DIR/NAME_%s.json.gz'\n"
	      "  -j, --jobs=N           worker threads (default: the CPUs available)\n"
	      "      --memory=SIZE      memory for the id tables (K, M, G; default 24M);\n"
	      "                         beyond it they live in $TMPDIR\n"
	      "  -q, --quiet            no warnings, no progress\n"
	      "  -v, --verbose          a summary on standard error\n"
	      "      --progress         show progress even when stderr is not a terminal\n"
	      "      --no-progress      never show progress\n"
	      "  -h, --help             show this help and exit\n"
	      "  -V, --version          show the version and exit\n"
	      "\n"
	      "Exit status: 0 success, 1 bad input data, 2 usage error, 3 I/O error.\n"
	      "See cuptimerge(1), cuptimerge-window(5) and cuptimerge-threadmap(5).\n",
	      f);
}

/* A count option's value, 0 to MAX, as optnum.h reads it; -1 when it is
 * no count. */
static long parse_count(const char *s, long max) { return cm_optnum_count(s, max); }

/* Parse a size: digits and an optional K, M or G (powers of 1024); 0 when it
 * is not one (or below 1 MiB, too little to be meant).  It starts with a
 * digit: strtoull would take a blank, a sign and "-1" as 2^64-1. */
static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;
	if (*s < '0' || *s > '9')
		return 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || v > (1ull << 40) >> shift || (v << shift) < (1u << 20))
		return 0;
	return (size_t)(v << shift);
}

/* --split: "steps" (one a file) or "steps:N".  0, or -1. */
static int parse_split(const char *s, unsigned long long *n)
{
	long v;
	if (strncmp(s, "steps", 5))
		return -1;
	if (!s[5]) {
		*n = 1;
		return 0;
	}
	if (s[5] != ':' || (v = cm_optnum_count(s + 6, LONG_MAX)) < 1)
		return -1;
	*n = (unsigned long long)v;
	return 0;
}

/* The -o pattern P of --split: one "%s" (the file's steps), "%%" for a
 * '%' of the name (as printf and cuptirec's -o write it; mergesplit.c
 * fills it in by the same rule), no other '%'; and the "%s" in the file's
 * name, not in a directory: the files' directory is made by no one, and
 * is checked before the input is read (split_dir_check), which a
 * directory a step names could not be.  NULL when P is such a pattern,
 * else what is wrong with it. */
static const char *split_pattern(const char *p)
{
	const char *s = NULL;
	if (!p)
		return "--split needs -o with one %s for the steps of each file, as -o 'DIR/NAME_%s.json.gz'";
	for (const char *c = p; *c; c++) {
		if (*c != '%')
			continue;
		if (c[1] == 's' && !s)
			s = c;
		else if (c[1] != '%')
			return c[1] == 's' ? "the --split pattern has more than one %s (write %% for a '%' of the name)"
					   : "the --split pattern has a '%' that is neither its %s nor %% (a '%' of the name)";
		c++;
	}
	if (!s)
		return "--split needs -o with one %s for the steps of each file, as -o 'DIR/NAME_%s.json.gz'";
	if (strchr(s, '/'))
		return "the --split pattern's %s must be in the file name, not in a directory (the directory is checked "
		       "before the input is read)";
	return NULL;
}

/* --split's files are opened as their steps come, after the first pass:
 * the pattern P's directory (its "%%" a '%') is checked now, as -o's file
 * is opened before any input is read.  0, or -1 after reporting (status
 * 3). */
static int split_dir_check(const char *p)
{
	const char *slash = strrchr(p, '/');
	char *dir, *d;
	int err;
	if (!slash)
		return 0; /* the working directory */
	dir = d = strndup(p, slash == p ? 1 : (size_t)(slash - p));
	if (!dir)
		return 0; /* found when the files are made */
	for (const char *c = dir; *c; c++) /* no %s in it: split_pattern */
		*d++ = *c == '%' ? *++c : *c;
	*d = 0;
	if ((err = cm_dir_writable(dir)))
		cm_error(CM_EXIT_IO, dir, -1, "cannot write the --split files in it: %s", strerror(err));
	free(dir);
	return err ? -1 : 0;
}

/* A usage error (reported, status 2) when --format (FORMAT, typed TYPED;
 * -1: none given) or -z (typed GZIP; NULL: none given) contradicts the
 * name OUT (NULL or "-": standard output, which has no name to say
 * anything): --format=perfetto into x.json, -z into x.pftrace.  The name
 * gave the format, and an explicit option silently won over it, leaving
 * protobuf in a .json for the next tool to choke on; cuptimerge-batch
 * refuses the same contradictions in its outputs' names.  A name that
 * says nothing (no .json, .pftrace or .gz at its end) takes either.  0
 * when nothing contradicts. */
static int format_check(const char *out, int format, const char *typed, const char *gzip)
{
	char msg[2 * PATH_MAX + 400];
	const char *says;
	if (!out || !strcmp(out, "-"))
		return 0;
	if (gzip && (cm_name_ends_with(out, ".json") || cm_name_ends_with(out, ".pftrace"))) {
		snprintf(msg, sizeof msg, "%s: the output %.*s is not named .gz, and would hold gzip (the name gives "
			 "the format: leave %s out, or name it %.*s.gz)", gzip, PATH_MAX, out, gzip, PATH_MAX, out);
		return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
	}
	if (format < 0 || !(says = cm_named_format(out)) || !strcmp(says, format == CM_FORMAT_PERFETTO ? "perfetto" : "json"))
		return 0;
	snprintf(msg, sizeof msg, "%s: the output %.*s is named for %s, and would hold %s (the name gives the "
		 "format: leave --format out, or rename the output)", typed, PATH_MAX, out,
		 format == CM_FORMAT_PERFETTO ? "JSON" : "Perfetto's protobuf",
		 format == CM_FORMAT_PERFETTO ? "Perfetto's protobuf" : "JSON");
	return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
}

/* A usage error (reported, status 2) when the output is one of the
 * inputs: the CPU trace CPU, the window WIN or the thread map MAP (each
 * NULL when not given; "-" is standard input), the same regular file by
 * any name (a symbolic or hard link).  The output is the -o file OUT, or
 * standard output (OUT NULL or "-"), which `>> FILE` may have opened on an
 * input, as cat(1) refuses it, or the descriptor OUT names (OUT_FD, not
 * -1: /dev/stdout).
 * The merge replaced the input once done (or appended to it as it read
 * it): -o naming the window lost the window, which nothing can make again;
 * cuptimerge-batch refuses a rank's output that is its input the same
 * way.  0 when none is (or OUT is not there yet). */
static int output_is_input(const char *out, int out_fd, const char *cpu, const char *win, const char *map)
{
	const char *path[] = {cpu, win, map}, *what[] = {"the CPU trace", "the window", "the thread map"};
	struct stat so, si;
	char msg[2 * PATH_MAX + 200], shown[PATH_MAX + 16];
	int std = !out || !strcmp(out, "-");
	/* -o /dev/stdout (/dev/fd/N) is written through that descriptor
	 * (outfile.c): over the input as it is read, as standard output is */
	int held = std ? 1 : out_fd;
	if ((held >= 0 ? fstat(held, &so) : stat(out, &so)) < 0 || !S_ISREG(so.st_mode))
		return 0;
	if (std)
		snprintf(shown, sizeof shown, "standard output");
	else
		snprintf(shown, sizeof shown, "-o %.*s", PATH_MAX, out);
	for (int i = 0; i < 3; i++) {
		int in = path[i] && !strcmp(path[i], "-");
		if (!path[i] || (in ? fstat(0, &si) : stat(path[i], &si)) < 0 || si.st_dev != so.st_dev ||
		    si.st_ino != so.st_ino)
			continue;
		snprintf(msg, sizeof msg, "%s is %s%s%.*s, which the output would %s: write to another file", shown,
			 what[i], in ? " (standard input)" : std || strcmp(out, path[i]) ? " " : "",
			 in || (!std && !strcmp(out, path[i])) ? 0 : PATH_MAX, in ? "" : path[i],
			 held >= 0 ? "write over as it is read" : "replace");
		return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
	}
	return 0;
}

/* Set *SLOT to ARG; a second -w, -t or -o is a usage error (-1), not a
 * silent replacement of the first. */
static int set_once(const char **slot, const char *arg)
{
	if (*slot)
		return -1;
	*slot = arg;
	return 0;
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

int main(int argc, char **argv)
{
	struct cm_options opt;
	const char *env;
	int c, gzip_flag = 0, format = -1, out_fd = -1;
	char typed_format[128]; /* the last --format as typed, for format_check */
	const char *typed_gzip = NULL; /* the last -z as typed (argv's word: "-qz9", "--gzip=3") */
	long v;

	cm_diag_init("cuptimerge");
	/* before any file is opened: none may take a closed 0, 1 or 2 */
	if (cm_diag_stdfds() < 0)
		return cm_error(CM_EXIT_IO, "/dev/null", -1, "cannot open it onto a closed standard descriptor: %s",
				strerror(errno));
	opterr = 0; /* getopt would prefix argv[0]; we say "cuptimerge:" */
	memset(&opt, 0, sizeof opt);
	opt.gzip_level = -1;
	opt.progress = -1;
	opt.bufsize = DEFAULT_BUFSIZE;
	if ((env = getenv("CUPTIMERGE_BUFSIZE")) && *env) {
		if ((v = parse_count(env, 1L << 30)) < 1)
			return cm_usage_error(CM_EXIT_USAGE, "CUPTIMERGE_BUFSIZE is not a size in bytes", env);
		opt.bufsize = (size_t)v;
	}
	/* a testing aid: the output must not depend on which reader read */
	opt.careful = (env = getenv("CUPTIMERGE_CAREFUL")) && *env && strcmp(env, "0");
	/* a testing aid: the output must not depend on reading ahead */
	opt.readahead = (env = getenv("CUPTIMERGE_READAHEAD")) && *env ? strcmp(env, "0") != 0 : -1;
	if ((env = getenv("CUPTIMERGE_SPILL")) && *env) /* a testing aid: spill member values past this */
		opt.spill = (size_t)strtoull(env, NULL, 10);
	if ((env = getenv("CUPTIMERGE_SPAN_SLICE")) && *env) /* a testing aid: spans a block of their render */
		opt.span_slice = strtoull(env, NULL, 10);
	while ((c = getopt_long(argc, argv, ":" CM_MERGE_SHORTOPTS, cm_merge_longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (set_once(&opt.window_path, optarg) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "option given more than once", "-w/--window");
			break;
		case 't':
			if (set_once(&opt.map_path, optarg) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "option given more than once", "-t/--thread-map");
			break;
		case 'o':
			if (set_once(&opt.out_path, optarg) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "option given more than once", "-o/--output");
			break;
		case 'z':
			/* getopt's optional argument must be attached: "-z 6" is -z
			 * and an operand "6", which would be read as the trace; "-z
			 * 10" too, which is no level at all (the real trace was then
			 * "too many operands") */
			if (!optarg && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9' &&
			    strlen(argv[optind]) <= 3 && !argv[optind][strspn(argv[optind], "0123456789")]) {
				char msg[200];
				const char *a = argv[optind];
				if (!a[1])
					snprintf(msg, sizeof msg, "%s %s: a gzip level is written -z%s or --gzip=%s "
						 "(write ./%s for a file named %s)", argv[optind - 1], a, a, a, a, a);
				else
					snprintf(msg, sizeof msg, "%s %s: a gzip level is one digit, written -z9 or --gzip=9 "
						 "(write ./%s for a file named %s)", argv[optind - 1], a, a, a);
				return cm_usage_error(CM_EXIT_USAGE, msg, NULL);
			}
			gzip_flag = 1;
			typed_gzip = argv[optind - 1];
			opt.gzip_level = DEFAULT_GZIP_LEVEL;
			if (optarg && (v = parse_count(optarg, 9)) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "the gzip level must be 0 to 9", optarg);
			if (optarg)
				opt.gzip_level = (int)v;
			break;
		case CM_MOPT_TRACE_NAME: opt.trace_name = optarg; break;
		case CM_MOPT_NOW: {
			/* seconds since the epoch; the base is computed in 128-bit integers */
			if (cm_optnum_decimal(optarg, &opt.now) < 0 || fabs(opt.now) > 1e18)
				return cm_usage_error(CM_EXIT_USAGE, "--now needs a finite number of seconds", optarg);
			opt.have_now = 1;
			break;
		}
		case CM_MOPT_FORCE: opt.force = 1; break;
		case CM_MOPT_SYNC: cm_output_set_sync(1); break; /* every output opened from here on */
		case CM_MOPT_CLIP: opt.clip = 1; break;
		case CM_MOPT_STEPS:
			if (opt.cut || cm_optnum_steps(optarg, &opt.steps_a, &opt.steps_b) < 0)
				return cm_usage_error(CM_EXIT_USAGE,
						      opt.cut ? "--steps and --range: one of them, once"
							      : "--steps needs A or A-B, step numbers with A <= B",
						      optarg);
			opt.cut = 1;
			break;
		case CM_MOPT_RANGE:
			if (opt.cut || cm_optnum_range(optarg, &opt.range_lo, &opt.range_hi) < 0)
				return cm_usage_error(CM_EXIT_USAGE,
						      opt.cut ? "--steps and --range: one of them, once"
							      : "--range needs START,END: two numbers of microseconds, START < END",
						      optarg);
			opt.cut = 2;
			break;
		case CM_MOPT_SPLIT:
			if (opt.split_n)
				return cm_usage_error(CM_EXIT_USAGE, "option given more than once", "--split");
			if (parse_split(optarg, &opt.split_n) < 0)
				return cm_usage_error(CM_EXIT_USAGE, "--split needs steps or steps:N (N steps a file, 1 or more)",
						      optarg);
			break;
		case CM_MOPT_MEMORY:
			if (!(opt.memory = parse_size(optarg)))
				return cm_usage_error(CM_EXIT_USAGE, "--memory needs a size from 1M to 1024G (K, M or G)", optarg);
			break;
		case CM_MOPT_FORMAT:
			if (!strcmp(optarg, "json"))
				format = CM_FORMAT_JSON;
			else if (!strcmp(optarg, "perfetto"))
				format = CM_FORMAT_PERFETTO;
			else
				return cm_usage_error(CM_EXIT_USAGE, "--format needs json or perfetto", optarg);
			/* "--format=json", or "--format json" (two words), as typed */
			if (argv[optind - 1] == optarg && optind >= 2)
				snprintf(typed_format, sizeof typed_format, "%.60s %s", argv[optind - 2], optarg);
			else
				snprintf(typed_format, sizeof typed_format, "%.100s", argv[optind - 1]);
			break;
		case 'j':
			if ((v = parse_count(optarg, 4096)) < 1)
				return cm_usage_error(CM_EXIT_USAGE, "-j needs a number of threads from 1 to 4096", optarg);
			opt.jobs = (int)v;
			break;
		case 'q': opt.quiet = 1; break;
		case 'v': opt.verbose = 1; break;
		case CM_MOPT_PROGRESS: opt.progress = 1; break;
		case CM_MOPT_NO_PROGRESS: opt.progress = 0; break;
		case CM_MOPT_BUFSIZE:
			if ((v = parse_count(optarg, 1L << 30)) < 1)
				return cm_usage_error(CM_EXIT_USAGE, "--buffer-size needs a size in bytes", optarg);
			opt.bufsize = (size_t)v;
			break;
		case 'h': usage(stdout); return close_stdout();
		case 'V': {
			/* which deflate each gzip level gets: ISA-L is optional
			 * (configure --with-isal), and its bytes differ from zlib's */
			const char *ver, *eng = cm_pgz_engine(1, &ver);
			puts("cuptimerge (" PACKAGE_NAME ") " PACKAGE_VERSION); /* the three programs' format */
			printf("gzip levels 1-3: %s%s%s\n", eng, *ver ? " " : "", ver);
			eng = cm_pgz_engine(6, &ver);
			printf("gzip levels 0, 4-9: %s%s%s\n", eng, *ver ? " " : "", ver);
			return close_stdout();
		}
		default: { /* '?' or ':': name the option as typed (optname.c) */
			char name[64];
			const char *why = cm_optname(c, argv, cm_merge_longopts, name, sizeof name);
			return cm_usage_error(CM_EXIT_USAGE, why, name);
		}
		}
	}
	if (optind < argc - 1)
		return cm_usage_error(CM_EXIT_USAGE, "too many operands (one CPU trace at most)", argv[optind + 1]);
	opt.cpu_path = optind < argc ? argv[optind] : "-";
	/* a forgotten operand read the terminal, waiting for a trace typed in
	 * (gzip -d and zstd refuse a terminal as input); '-' still reads it */
	if (optind == argc && isatty(0))
		return cm_usage_error(CM_EXIT_USAGE,
				      "no trace given, and standard input is a terminal: give CPU_TRACE (or - to read the terminal)",
				      NULL);
	if (opt.split_n) {
		const char *why = split_pattern(opt.out_path);
		if (opt.cut || opt.clip)
			return cm_usage_error(CM_EXIT_USAGE,
					      "--split does not go with --steps, --range or --clip (each file is already "
					      "cut to its steps)",
					      NULL);
		if (why)
			return cm_usage_error(CM_EXIT_USAGE, why, opt.out_path);
	}
	/* a file may be named with a %s, but -o 'DIR/NAME_%s.json' without
	 * --split is almost surely a forgotten --split: say so, and go on */
	if (!opt.split_n && !opt.quiet && opt.out_path && strstr(opt.out_path, "%s"))
		cm_warn(opt.out_path, -1, "the name holds %%s, which only --split fills in: one file of this very name is written");
	if (opt.clip && opt.cut)
		return cm_usage_error(CM_EXIT_USAGE, "--clip and --steps/--range do not go together (those cut the window too)",
				      NULL);
	if (opt.clip && !opt.window_path)
		return cm_usage_error(CM_EXIT_USAGE, "--clip cuts a trace window: give one (-w WINDOW)", NULL);
	if ((opt.window_path && !strcmp(opt.window_path, "-") && !strcmp(opt.cpu_path, "-")) ||
	    (opt.map_path && !strcmp(opt.map_path, "-") && !strcmp(opt.cpu_path, "-")) ||
	    (opt.map_path && opt.window_path && !strcmp(opt.map_path, "-") && !strcmp(opt.window_path, "-")))
		return cm_usage_error(CM_EXIT_USAGE, "only one input can be standard input", NULL);
	/* an empty name names no file; found now, not after the whole merge
	 * (-o) nor as an I/O error on "" (the inputs) */
	if (opt.out_path && !*opt.out_path)
		return cm_usage_error(CM_EXIT_USAGE, "-o needs a file name ('-' for standard output)", NULL);
	if (opt.window_path && !*opt.window_path)
		return cm_usage_error(CM_EXIT_USAGE, "-w needs a file name ('-' for standard input)", NULL);
	if (opt.map_path && !*opt.map_path)
		return cm_usage_error(CM_EXIT_USAGE, "-t needs a file name ('-' for standard input)", NULL);
	if (!*opt.cpu_path)
		return cm_usage_error(CM_EXIT_USAGE, "an empty trace name: give a file, or '-' for standard input", NULL);
	/* traceName is written into the JSON as it is: text that is not UTF-8
	 * made output that no JSON reader (this one included) takes.  A merge
	 * names the trace after -o FILE unless --trace-name says otherwise. */
	if (opt.trace_name && *opt.trace_name && !cm_utf8_ok(opt.trace_name))
		return cm_usage_error(CM_EXIT_USAGE, "--trace-name must be UTF-8 text (it is written into the JSON)", NULL);
	/* -o a descriptor this process holds (/dev/stdout): outfile.c writes
	 * through it, as standard output, and it names no trace (mergeout.c) */
	if (opt.out_path && strcmp(opt.out_path, "-"))
		out_fd = cm_path_names_fd(opt.out_path);
	opt.out_held = out_fd >= 0;
	if (!(opt.trace_name && *opt.trace_name) && opt.window_path && opt.out_path && strcmp(opt.out_path, "-") &&
	    !opt.out_held && !cm_utf8_ok(opt.out_path))
		return cm_usage_error(CM_EXIT_USAGE,
				      "the -o name is not UTF-8, and traceName, which it gives by default, must be: give "
				      "--trace-name=NAME",
				      NULL);
	if (format_check(opt.out_path, format, typed_format, typed_gzip))
		return CM_EXIT_USAGE;
	if (!opt.split_n && output_is_input(opt.out_path, out_fd, opt.cpu_path, opt.window_path, opt.map_path))
		return CM_EXIT_USAGE;
	{ /* and no --split file may replace one (outfile.c checks each as it opens) */
		const char *path[] = {opt.cpu_path, opt.window_path, opt.map_path};
		static const char *const what[] = {"the CPU trace", "the window", "the thread map"};
		struct stat st;
		for (int i = 0; i < 3; i++)
			if (path[i] && (strcmp(path[i], "-") ? stat(path[i], &st) : fstat(0, &st)) == 0)
				cm_outfile_protect(&st, what[i]);
	}
	/* the command line is right: now the one thing of --split's output
	 * that can be known before the input is read */
	if (opt.split_n && split_dir_check(opt.out_path) < 0)
		return cm_diag_status();
	if (!gzip_flag && opt.out_path && cm_name_ends_with(opt.out_path, ".gz"))
		opt.gzip_level = DEFAULT_GZIP_LEVEL;
	/* the file name says the format unless --format does */
	if (format < 0)
		format = opt.out_path && cm_named_format(opt.out_path) && !strcmp(cm_named_format(opt.out_path), "perfetto")
				 ? CM_FORMAT_PERFETTO
				 : CM_FORMAT_JSON;
	opt.codec = format == CM_FORMAT_PERFETTO ? &perfetto : NULL;
	/* gzip or protobuf onto a terminal is bytes nobody can read, which can
	 * also set the terminal's modes astray: refused, as gzip(1) refuses
	 * it ("a pipe or -o FILE": `| cat` forces it); so is -o /dev/stdout
	 * (/dev/fd/N) on one, written through as standard output is.  Any
	 * other -o that leads to a terminal (/dev/tty, /dev/pts/N, a link) is
	 * found by io/output.c as it opens the output, still before any input
	 * is read: here, with the usage hint, the cases known without opening */
	if ((opt.gzip_level >= 0 || opt.codec) &&
	    (!opt.out_path || !strcmp(opt.out_path, "-") ? isatty(1) : out_fd >= 0 && isatty(out_fd)))
		return cm_usage_error(CM_EXIT_USAGE,
				      opt.codec ? "Perfetto's protobuf output is not written to a terminal: give -o FILE or a pipe"
						: "gzip output is not written to a terminal: give -o FILE or a pipe",
				      NULL);
	cm_pft_set_verbose(opt.verbose);
	if (!opt.memory)
		opt.memory = CM_MEMORY_DEFAULT;
	if (!opt.jobs)
		opt.jobs = cm_opool_cpus_available();
	if (opt.progress < 0)
		opt.progress = !opt.quiet && isatty(2);
	cm_progress_enable(opt.progress && !opt.quiet);

	/* A closed pipe shows up as EPIPE on write, which the engine treats as
	 * "the reader is done" (a quiet exit), instead of dying of SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	return cm_merge_run(&opt);
}
