/* launcher.c - cuptirec(1): run a command with the CUPTI collector or the thread recorder injected. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/fdio.h"
#include "base/optname.h"
#include "opts.h"
#include "pathpat.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif
/* Where `make install` puts the libraries; set by the build. */
#ifndef CUPTIREC_PKGLIBDIR
#define CUPTIREC_PKGLIBDIR "/usr/local/lib/cuptimerge"
#endif

/* Exit statuses of the launcher itself (mirrored in cuptirec(1) EXIT STATUS).
 * Once the command runs, its status is the launcher's: the launcher execs it. */
enum crec_lexit {
	CREC_LEXIT_USAGE = 2,    /* bad command line */
	CREC_LEXIT_SETUP = 125,  /* library not found or not loadable; --help not written;
				    -o names a standard descriptor that is closed */
	CREC_LEXIT_NOEXEC = 126, /* COMMAND found but could not be executed */
	CREC_LEXIT_NOTFOUND = 127, /* COMMAND not found */
};

static const char crec_usage[] =
	"Usage: cuptirec [OPTION]... -- COMMAND [ARG]...\n"
	"Run COMMAND with the CUPTI collector injected; each CUDA process writes a\n"
	"trace window for cuptimerge(1).\n"
	"\n"
	"  -o, --output=PATH      window file (default cuptirec_%p.json, .gz added with\n"
	"                         --gzip); %p is the pid, %n the window number, %h\n"
	"                         the host name, %r the rank (RANK, SLURM_PROCID or\n"
	"                         OMPI_COMM_WORLD_RANK; \"norank\" without one)\n"
	"  -z, --gzip             compress the window with gzip (a PATH ending in .gz\n"
	"                         is compressed without -z)\n"
	"  -a, --activities=LIST  kernel,memcpy,memset,runtime,driver,\n"
	"                         external_correlation,overhead,sync,cuda_event,\n"
	"                         default, all; -NAME removes one (default: default)\n"
	"  -d, --delay=S          start recording S seconds after CUDA initialises\n"
	"  -t, --duration=S       stop recording after S seconds\n"
	"      --buffers=N        activity buffers in the pool (default 16)\n"
	"      --buffer-size=SIZE bytes per buffer, K/M suffixes (default 4M)\n"
	"      --latency-timestamps  record when each kernel was queued and submitted\n"
	"                         (costs launch rate; off, as in torch.profiler)\n"
	"      --fifo-wait=S      wait S seconds at most for the reader of a FIFO\n"
	"                         given as -o, then warn (default 10; 0: no wait)\n"
	"  -T, --threads-only     do not use CUPTI: record every thread's pthread_self,\n"
	"                         gettid, name and lifetime into a thread map\n"
	"                         (default cuptirec_threads_%p.json)\n"
	"  -q, --quiet            no notes from the libraries (warnings stay)\n"
	"  -h, --help             show this help and exit\n"
	"  -V, --version          show the version and exit\n"
	"\n"
	"Exit status: COMMAND's; 2 usage error; 125 library not found or not\n"
	"loadable; 126 COMMAND not executable; 127 COMMAND not found.\n";

/* Print "cuptirec: MESSAGE" on stderr. */
__attribute__((format(printf, 1, 2))) static void crec_lerr(const char *fmt, ...)
{
	va_list ap;

	fputs("cuptirec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* After --help or --version: 0, or 125 (the launcher's own failure, as
 * env(1) has it) with a line saying why the text did not get out. */
static int stdout_done(void)
{
	int bad = ferror(stdout);
	if (fflush(stdout) == 0 && !bad)
		return 0;
	fprintf(stderr, "cuptirec: <stdout>: write error: %s\n", strerror(errno ? errno : EIO));
	return CREC_LEXIT_SETUP;
}

/* Report a usage error and exit 2. */
__attribute__((format(printf, 1, 2), noreturn)) static void crec_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cuptirec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'cuptirec --help' for more information.\n", stderr);
	exit(CREC_LEXIT_USAGE);
}

/* -o's directory, checked before COMMAND runs: each process writes its
 * window (or map) at its exit, maybe hours later, and a directory that is
 * not there, or an -o naming a directory, lost them all with only a warning
 * each (COMMAND's status unchanged).  TYPED is -o as given, ABS made
 * absolute.  A directory part with a '%' differs by process: not checked. */
static void check_out_dir(const char *typed, const char *abs, int threads_only)
{
	const char *name = threads_only ? "cuptirec_threads_%p.json" : "cuptirec_%p.json";
	const char *slash = strrchr(abs, '/'), *tslash;
	size_t tlen = strlen(typed);
	struct stat st;
	char dir[PATH_MAX];
	int err;
	/* "-" is standard output to cuptimerge and cuptimerge-batch; here it
	 * made a file named "-" in the working directory, which the next
	 * `cuptimerge -w -` did not read */
	if (!strcmp(typed, "-"))
		crec_usage_error("-o -: each process writes a file of its own, not standard output; give a file name, "
				 "such as %s (./- for a file named -)", name);
	if (typed[tlen - 1] == '/' || (!strchr(abs, '%') && stat(abs, &st) == 0 && S_ISDIR(st.st_mode))) {
		while (tlen > 1 && typed[tlen - 1] == '/')
			tlen--;
		crec_usage_error("-o %s: a directory; give a file name in it, such as %.*s%s%s", typed, (int)tlen, typed,
				 tlen == 1 && typed[0] == '/' ? "" : "/", name);
	}
	if (!slash || memchr(abs, '%', (size_t)(slash - abs)))
		return;
	/* a device, a FIFO, or a name of a descriptor (/dev/stdout) is
	 * written through: nothing is made in its directory, and /dev, which
	 * only root may write, refused -o /dev/null to everyone else */
	if (!strchr(abs, '%') && ((stat(abs, &st) == 0 && !S_ISREG(st.st_mode)) || cm_path_names_fd(abs) >= 0))
		return;
	snprintf(dir, sizeof dir, "%.*s", slash == abs ? 1 : (int)(slash - abs), abs);
	if (!(err = cm_dir_writable(dir)))
		return;
	tslash = strrchr(typed, '/');
	if (tslash)
		crec_usage_error("-o %s: cannot write in %.*s: %s", typed, tslash == typed ? 1 : (int)(tslash - typed),
				 typed, strerror(err));
	crec_usage_error("-o %s: cannot write in the working directory: %s", typed, strerror(err));
}

/* -o /dev/stdout (or any name of a standard descriptor of ours) with that
 * descriptor closed: COMMAND inherits it closed, so each library's output
 * went nowhere, or into whatever file COMMAND put on that number, or (the
 * thread map's rename) replaced /dev/stdout itself as root; and COMMAND's
 * status 0.  Refused before COMMAND runs, as --help with standard output
 * closed is (one line, status 125).  A name with a '%' differs by process:
 * not checked. */
static void check_out_fd(const char *typed)
{
	int fd;
	if (strchr(typed, '%') || (fd = cm_path_names_fd(typed)) < 0 || fd > 2 ||
	    fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
		return;
	crec_lerr("-o %s: standard %s is closed", typed, fd == 0 ? "input" : fd == 1 ? "output" : "error");
	exit(CREC_LEXIT_SETUP);
}

/* setenv that cannot fail silently: out of memory is a setup failure. */
static void crec_setenv(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0) {
		crec_lerr("cannot set %s: %s", name, strerror(errno));
		exit(CREC_LEXIT_SETUP);
	}
}

/* Find library FILE: in $CUPTIREC_LIBDIR, in .libs/ beside this executable
 * (an uninstalled build tree), in the configured pkglibdir, or in
 * ../lib/cuptimerge beside the executable (a relocated install).  Returns 0
 * with the path in OUT, or -1 after listing the places tried. */
static int crec_find_lib(const char *file, char *out, size_t outsz)
{
	char exe[PATH_MAX], dirs[4][PATH_MAX + 32];
	const char *env = getenv("CUPTIREC_LIBDIR");
	ssize_t n;
	int nd = 0, i;
	char *slash;

	if (env && *env)
		snprintf(dirs[nd++], sizeof dirs[0], "%s", env);
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(dirs[nd++], sizeof dirs[0], "%s/.libs", exe);
	}
	snprintf(dirs[nd++], sizeof dirs[0], "%s", CUPTIREC_PKGLIBDIR);
	if (n > 0)
		snprintf(dirs[nd++], sizeof dirs[0], "%s/../lib/cuptimerge", exe);
	for (i = 0; i < nd; i++) {
		if ((size_t)snprintf(out, outsz, "%s/%s", dirs[i], file) < outsz && access(out, R_OK) == 0)
			return 0;
	}
	crec_lerr("%s not found; looked in:", file);
	for (i = 0; i < nd; i++)
		fprintf(stderr, "  %s\n", dirs[i]);
	crec_lerr("set CUPTIREC_LIBDIR to the directory that holds it");
	return -1;
}

/* The length of the first entry of the LD_PRELOAD list LIST when it is a
 * sanitizer runtime (libasan, libtsan, libhwasan, clang's libclang_rt.*),
 * else 0.  Such a runtime must be the first library loaded, ahead of ours. */
static size_t crec_sanitizer_first(const char *list)
{
	static const char *const runtimes[] = { "libasan", "libtsan", "libhwasan", "libclang_rt." };
	size_t n = strcspn(list, ": "), i;
	const char *base = list;

	for (i = 0; i < n; i++)
		if (list[i] == '/')
			base = list + i + 1;
	for (i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++)
		if (!strncmp(base, runtimes[i], strlen(runtimes[i])))
			return n;
	return 0;
}

/* Make a relative path pattern absolute against the current directory, so
 * a COMMAND that changes directory still writes where the user meant.
 * Returns 0, or -1 when it does not fit. */
static int crec_absolute(const char *pattern, char *out, size_t outsz)
{
	char cwd[PATH_MAX];
	size_t i, o = 0, n;

	if (pattern[0] == '/' || !getcwd(cwd, sizeof cwd))
		return (size_t)snprintf(out, outsz, "%s", pattern) < outsz ? 0 : -1;
	/* a '%' in the directory name must not read as a pattern sequence */
	n = strlen(cwd);
	for (i = 0; i < n; i++) {
		if (o + 3 >= outsz)
			return -1;
		if (cwd[i] == '%')
			out[o++] = '%';
		out[o++] = cwd[i];
	}
	return (size_t)snprintf(out + o, outsz - o, "/%s", pattern) < outsz - o ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "activities", required_argument, NULL, 'a' },
		{ "delay", required_argument, NULL, 'd' },
		{ "duration", required_argument, NULL, 't' },
		{ "buffers", required_argument, NULL, 'B' },
		{ "buffer-size", required_argument, NULL, 'S' },
		{ "latency-timestamps", no_argument, NULL, 'L' },
		{ "fifo-wait", required_argument, NULL, 'F' },
		{ "threads-only", no_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *activities = NULL, *delay = NULL, *duration = NULL;
	const char *buffers = NULL, *bufsize = NULL, *fifo_wait = NULL, *msg;
	char lib[PATH_MAX + 64], abs_out[PATH_MAX], bad[64], *preload;
	int gzip = 0, threads_only = 0, quiet = 0, latency = 0, c;
	double secs;
	size_t sz;
	void *h;

	opterr = 0;
	/* '+': options end at COMMAND, whose own options are not ours */
	while ((c = getopt_long(argc, argv, "+:o:za:d:t:TqhV", longopts, NULL)) != -1) {
		switch (c) {
		/* -o names the output, -a the activities: a second one would
		 * read as "this too", so it is refused; the other options are
		 * settings, and the last one wins (cuptirec(1)) */
		case 'o':
			if (output)
				crec_usage_error("option given more than once: -o/--output");
			output = optarg;
			break;
		case 'z': gzip = 1; break;
		case 'a':
			if (activities)
				crec_usage_error("option given more than once: -a/--activities (give one list: -a kernel,memcpy)");
			activities = optarg;
			break;
		case 'd': delay = optarg; break;
		case 't': duration = optarg; break;
		case 'B': buffers = optarg; break;
		case 'S': bufsize = optarg; break;
		case 'L': latency = 1; break;
		case 'F': fifo_wait = optarg; break;
		case 'T': threads_only = 1; break;
		case 'q': quiet = 1; break;
		case 'h':
			fputs(crec_usage, stdout);
			return stdout_done();
		case 'V':
			puts("cuptirec (cuptimerge) " PACKAGE_VERSION);
			return stdout_done();
		default: { /* '?' or ':': name the option as typed (optname.c) */
			char name[64];
			const char *why = cm_optname(c, argv, longopts, name, sizeof name);
			crec_usage_error("%s: %s", why, name);
		}
		}
	}
	if (optind >= argc)
		crec_usage_error("no COMMAND given");
	if (output && (msg = crec_path_check(output)))
		crec_usage_error("-o %s: %s", output, msg);
	if (activities && crec_parse_activities(activities, bad, sizeof bad) < 0)
		crec_usage_error("--activities: unknown activity '%s'", bad);
	if (activities && crec_parse_activities(activities, bad, sizeof bad) == 0)
		crec_usage_error("--activities: the list selects nothing");
	if (delay && crec_parse_seconds(delay, &secs))
		crec_usage_error("--delay %s: not a number of seconds", delay);
	if (duration && (crec_parse_seconds(duration, &secs) || secs <= 0))
		crec_usage_error("--duration %s: not a positive number of seconds", duration);
	if (fifo_wait && crec_parse_seconds(fifo_wait, &secs))
		crec_usage_error("--fifo-wait %s: not a number of seconds", fifo_wait);
	if (buffers && (crec_parse_size(buffers, &sz) || sz < 2 || sz > 65536))
		crec_usage_error("--buffers %s: need a count from 2 to 65536", buffers);
	/* two messages: "need at least 64K" for "1Q" sent the user the wrong way */
	if (bufsize && crec_parse_size(bufsize, &sz))
		crec_usage_error("--buffer-size %s: not a size (digits and an optional K, M or G)", bufsize);
	if (bufsize && sz < 65536)
		crec_usage_error("--buffer-size %s: need at least 64K", bufsize);
	if (threads_only && (gzip || activities || delay || duration || buffers || bufsize || latency))
		crec_usage_error("--threads-only records no CUPTI activity: --gzip, --activities, --delay, "
				 "--duration, --latency-timestamps and the buffer options do not apply");
	if (threads_only && output && crec_path_is_gz(output))
		crec_usage_error("-o %s: --threads-only writes a plain JSON thread map; a name ending in .gz "
				 "would say gzip", output);
	/* the name gives the format, as in cuptimerge -o: -z wrote gzip into
	 * a window named .json, which every reader but ours takes for text */
	if (gzip && output && strlen(output) >= 5 && !strcmp(output + strlen(output) - 5, ".json"))
		crec_usage_error("-o %s: -z would write gzip into a name that says plain JSON; leave -z out, or name it "
				 "%s.gz", output, output);
	if (output && crec_absolute(output, abs_out, sizeof abs_out))
		crec_usage_error("-o %s: path too long", output);
	if (output)
		check_out_dir(output, abs_out, threads_only);
	if (output)
		check_out_fd(output);
	if (quiet)
		crec_setenv("CUPTIREC_QUIET", "1");
	/* both libraries' -o: the window's and the thread map's */
	if (fifo_wait)
		crec_setenv("CUPTIREC_FIFO_WAIT", fifo_wait);

	if (threads_only) {
		const char *old = getenv("LD_PRELOAD");
		if (crec_find_lib("libcuptirec_threads.so", lib, sizeof lib))
			return CREC_LEXIT_SETUP;
		if (output)
			crec_setenv("CUPTIREC_THREADS_OUTPUT", abs_out);
		/* first in the list: our pthread_create must win over any other;
		 * only a sanitizer runtime stays ahead (ASan refuses to run
		 * otherwise, and its pthread_create calls ours) */
		if (old && *old) {
			size_t keep = crec_sanitizer_first(old);
			preload = malloc(strlen(lib) + strlen(old) + 3);
			if (!preload) {
				crec_lerr("out of memory");
				return CREC_LEXIT_SETUP;
			}
			if (keep)
				sprintf(preload, "%.*s:%s%s%s", (int)keep, old, lib, old[keep] ? ":" : "",
					old[keep] ? old + keep + 1 : "");
			else
				sprintf(preload, "%s:%s", lib, old);
			crec_setenv("LD_PRELOAD", preload);
			free(preload);
		} else {
			crec_setenv("LD_PRELOAD", lib);
		}
	} else {
		const char *old = getenv("CUDA_INJECTION64_PATH");
		if (crec_find_lib("libcuptirec.so", lib, sizeof lib))
			return CREC_LEXIT_SETUP;
		if (old && *old && strcmp(old, lib) != 0)
			crec_lerr("replacing CUDA_INJECTION64_PATH=%s (one injection library at a time)", old);
		/* set before the probe: the library's constructor then sees itself
		 * named and does nothing in this process */
		crec_setenv("CUDA_INJECTION64_PATH", lib);
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			crec_lerr("cannot load the collector: %s", dlerror());
			crec_lerr("put the directory of libcupti.so on LD_LIBRARY_PATH");
			return CREC_LEXIT_SETUP;
		}
		if (output)
			crec_setenv("CUPTIREC_OUTPUT", abs_out);
		if (gzip)
			crec_setenv("CUPTIREC_GZIP", "1");
		if (activities)
			crec_setenv("CUPTIREC_ACTIVITIES", activities);
		if (delay)
			crec_setenv("CUPTIREC_DELAY", delay);
		if (duration)
			crec_setenv("CUPTIREC_DURATION", duration);
		if (buffers)
			crec_setenv("CUPTIREC_BUFFERS", buffers);
		if (bufsize)
			crec_setenv("CUPTIREC_BUFFER_SIZE", bufsize);
		if (latency)
			crec_setenv("CUPTIREC_LATENCY_TIMESTAMPS", "1");
	}
	fflush(NULL);
	execvp(argv[optind], argv + optind);
	c = errno;
	crec_lerr("%s: %s", argv[optind], strerror(c));
	return c == ENOENT ? CREC_LEXIT_NOTFOUND : CREC_LEXIT_NOEXEC;
}
