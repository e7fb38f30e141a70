/* check_threads.c - the thread recorder and the launcher, end to end (no GPU, no CUPTI). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

/* the unit tests' harness: CHECK_MAIN, the per-test directory */
#include "../unit/check_common.h"

#ifndef CREC_BUILDDIR
#define CREC_BUILDDIR "."
#endif
/* Under configure --enable-sanitizers with gcc: the shared ASan runtime.  The
 * recorder and threadprog are instrumented then, and ASan has to be the first
 * library loaded, so it is preloaded ahead of the recorder ("" otherwise). */
#ifndef CREC_ASAN_RUNTIME
#define CREC_ASAN_RUNTIME ""
#endif
static char asan_preload[] = "LD_PRELOAD=" CREC_ASAN_RUNTIME;
/* Environment for the launcher runs: the runtime preloaded, or nothing. */
static char *launcher_env[] = { asan_preload, NULL };
#define LAUNCHER_ENV (CREC_ASAN_RUNTIME[0] ? launcher_env : NULL)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, len = 0, r;
	char *p = malloc(cap);

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while ((r = fread(p + len, 1, cap - len - 1, f)) > 0) {
		len += r;
		if (cap - len < 2)
			p = realloc(p, cap *= 2);
	}
	fclose(f);
	p[len] = '\0';
	return p;
}

/* Run ARGV with environment additions ENV (NULL-terminated "K=V" list) and
 * stdout to OUT (stderr to OUT.err); sets *PID; returns the exit status. */
static int run(char *const argv[], char *const env[], const char *out, pid_t *pidp)
{
	pid_t pid = fork();
	int st, i;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char errpath[512];
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		snprintf(errpath, sizeof errpath, "%s.err", out);
		int fe = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fe, 2);
		for (i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(argv[0], argv);
		_exit(126);
	}
	if (pidp)
		*pidp = pid;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One line of threadprog's output. */
struct line {
	char role[16];
	long tid;
	unsigned long long pthread;
	char name[32];
	int running;   /* an "R role" line said it outlives the process */
};

static int read_lines(const char *path, struct line *ls, int max)
{
	char *text = slurp(path), *s = text, *nl;
	int n = 0, i;

	for (; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		ck_assert_ptr_nonnull(nl);
		*nl = '\0';
		if (s[0] == 'T') {
			ck_assert_int_lt(n, max);
			ck_assert_int_eq(sscanf(s, "T %15s %ld %llu %31s", ls[n].role, &ls[n].tid, &ls[n].pthread,
						ls[n].name), 4);
			ls[n].running = 0;
			n++;
		} else if (s[0] == 'R') {
			for (i = 0; i < n; i++)
				if (!strcmp(ls[i].role, s + 2))
					ls[i].running = 1;
		}
	}
	free(text);
	return n;
}

static yajl_val member(yajl_val o, const char *key)
{
	const char *path[] = { key, NULL };

	return yajl_tree_get(o, path, yajl_t_any);
}

/* The map's entry list for PID, checking the file's outer shape. */
static yajl_val map_entries(yajl_val map, pid_t pid)
{
	yajl_val ver = member(map, "thread_map_version"), procs = member(map, "processes"), list;
	char key[32];

	ck_assert(ver && YAJL_IS_INTEGER(ver) && YAJL_GET_INTEGER(ver) == 1);
	ck_assert(procs && YAJL_IS_OBJECT(procs));
	ck_assert_uint_eq(procs->u.object.len, 1);
	snprintf(key, sizeof key, "%ld", (long)pid);
	ck_assert_str_eq(procs->u.object.keys[0], key);
	list = procs->u.object.values[0];
	ck_assert(YAJL_IS_ARRAY(list));
	return list;
}

static long long ival(yajl_val o, const char *key)
{
	yajl_val v = member(o, key);

	ck_assert_msg(v && YAJL_IS_INTEGER(v), "%s missing or not an integer", key);
	return YAJL_GET_INTEGER(v);
}

/* gethostname's name with '/' as '_', as the recorder writes it, into HOST. */
static void my_host(char *host, size_t n)
{
	size_t i;

	ck_assert_int_eq(gethostname(host, n), 0);
	host[n - 1] = '\0';
	for (i = 0; host[i]; i++)
		if (host[i] == '/')
			host[i] = '_';
}

/* The map's "source" (cuptimerge-threadmap(5)): this host, PID, RANK from
 * variable FROM (RANK < 0: neither member), a span within [T0, T1] that
 * holds every entry's start and end. */
static void check_source(yajl_val map, pid_t pid, long rank, const char *from, uint64_t t0, uint64_t t1)
{
	yajl_val src = member(map, "source"), h, r, rf, list = map_entries(map, pid);
	char host[256];
	long long start, end;
	size_t i;

	ck_assert_msg(src && YAJL_IS_OBJECT(src), "no \"source\" object");
	my_host(host, sizeof host);
	h = member(src, "host");
	ck_assert(h && YAJL_IS_STRING(h));
	ck_assert_str_eq(YAJL_GET_STRING(h), host);
	ck_assert_int_eq(ival(src, "pid"), pid);
	r = member(src, "rank");
	rf = member(src, "rank_from");
	if (rank < 0) {
		ck_assert_msg(r == NULL && rf == NULL, "a rank without RANK, SLURM_PROCID or OMPI_COMM_WORLD_RANK");
	} else {
		ck_assert_int_eq(ival(src, "rank"), rank);
		ck_assert(rf && YAJL_IS_STRING(rf));
		ck_assert_str_eq(YAJL_GET_STRING(rf), from);
	}
	start = ival(src, "start_ns");
	end = ival(src, "end_ns");
	ck_assert_uint_ge((uint64_t)start, t0);
	ck_assert_int_le(start, end);
	ck_assert_uint_le((uint64_t)end, t1);
	for (i = 0; i < list->u.array.len; i++) {
		yajl_val e = list->u.array.values[i];
		ck_assert_int_ge(ival(e, "start_ns"), start);
		ck_assert_int_le(ival(e, member(e, "end_ns") ? "end_ns" : "start_ns"), end);
	}
}

static const char *const modes[] = { "exit", "pthread_exit", "_exit" };

/* Run threadprog MODE under the preloaded recorder and check the map against
 * what each thread printed about itself. */
START_TEST(test_thread_map)
{
	const char *mode = modes[_i];
	char prog[512], lib[512], out[300], mapp[300], envp[600], envo[400], err[256];
	char *argv[] = { prog, (char *)mode, NULL };
	char *env[] = { envp, envo, NULL };
	struct line ls[16];
	uint64_t t0 = now_ns(), t1;
	yajl_val map, list;
	pid_t pid;
	int n, i, j, rc;
	char *text;

	snprintf(prog, sizeof prog, "%s/tests/cuptirec/threadprog", CREC_BUILDDIR);
	snprintf(lib, sizeof lib, "%s/.libs/libcuptirec_threads.so", CREC_BUILDDIR);
	snprintf(envp, sizeof envp, "LD_PRELOAD=%s%s%s", CREC_ASAN_RUNTIME, CREC_ASAN_RUNTIME[0] ? " " : "", lib);
	snprintf(envo, sizeof envo, "CUPTIREC_THREADS_OUTPUT=%s/map_%%p.json", check_tmpdir);
	snprintf(out, sizeof out, "%s/out.txt", check_tmpdir);
	/* the test may itself run under srun or mpirun */
	unsetenv("RANK");
	unsetenv("SLURM_PROCID");
	unsetenv("OMPI_COMM_WORLD_RANK");
	rc = run(argv, env, out, &pid);
	t1 = now_ns();
	ck_assert_int_eq(rc, 0);
	n = read_lines(out, ls, 16);
	ck_assert_int_eq(n, 8);
	snprintf(mapp, sizeof mapp, "%s/map_%ld.json", check_tmpdir, (long)pid);
	text = slurp(mapp);
	map = yajl_tree_parse(text, err, sizeof err);
	ck_assert_msg(map != NULL, "map is not JSON: %s", err);
	list = map_entries(map, pid);
	/* one entry per thread lifetime, nothing else */
	ck_assert_uint_eq(list->u.array.len, (size_t)n);
	check_source(map, pid, -1, NULL, t0, t1);
	for (i = 0; i < n; i++) {
		yajl_val e = NULL, nm, end;
		int found = 0;
		for (j = 0; j < (int)list->u.array.len; j++) {
			if (ival(list->u.array.values[j], "tid") == ls[i].tid) {
				e = list->u.array.values[j];
				found++;
			}
		}
		ck_assert_msg(found == 1, "thread %s (tid %ld) found %d times", ls[i].role, ls[i].tid, found);
		/* "pthread" is unsigned 64-bit: compare the number's text */
		{
			yajl_val p = member(e, "pthread");
			char want[32];
			ck_assert(p && YAJL_IS_NUMBER(p));
			snprintf(want, sizeof want, "%llu", ls[i].pthread);
			ck_assert_str_eq(YAJL_GET_NUMBER(p), want);
		}
		nm = member(e, "name");
		if (!strcmp(ls[i].role, "main")) {
			ck_assert_int_eq(ls[i].tid, pid);
			ck_assert(nm && YAJL_IS_STRING(nm));
			ck_assert_str_eq(YAJL_GET_STRING(nm), "threadprog");
		} else if (strcmp(ls[i].name, "-") != 0) {
			ck_assert_msg(nm && YAJL_IS_STRING(nm), "%s lacks its name", ls[i].role);
			ck_assert_str_eq(YAJL_GET_STRING(nm), ls[i].name);
		} else {
			ck_assert_msg(nm == NULL, "%s has a name it never set", ls[i].role);
		}
		ck_assert_uint_ge((uint64_t)ival(e, "start_ns"), t0);
		ck_assert_uint_le((uint64_t)ival(e, "start_ns"), t1);
		end = member(e, "end_ns");
		/* ended threads have an end; the main thread ends only by
		 * pthread_exit; the sleeper outlives the process */
		if (ls[i].running || (!strcmp(ls[i].role, "main") && strcmp(mode, "pthread_exit") != 0)) {
			ck_assert_msg(end == NULL, "%s should have no end_ns", ls[i].role);
		} else {
			ck_assert_msg(end != NULL, "%s lacks end_ns", ls[i].role);
			ck_assert_int_ge(ival(e, "end_ns"), ival(e, "start_ns"));
			ck_assert_uint_le((uint64_t)ival(e, "end_ns"), t1);
		}
	}
	/* lifetimes of entries sharing a pthread_t are disjoint */
	for (i = 0; i < (int)list->u.array.len; i++) {
		for (j = 0; j < (int)list->u.array.len; j++) {
			yajl_val a = list->u.array.values[i], b = list->u.array.values[j];
			if (i == j || strcmp(YAJL_GET_NUMBER(member(a, "pthread")), YAJL_GET_NUMBER(member(b, "pthread"))))
				continue;
			if (ival(a, "start_ns") < ival(b, "start_ns")) {
				ck_assert_msg(member(a, "end_ns") && ival(a, "end_ns") <= ival(b, "start_ns"),
					      "overlapping lifetimes for one pthread_t");
			}
		}
	}
	yajl_tree_free(map);
	free(text);
}
END_TEST

/* Names of the files in check_tmpdir starting with PREFIX. */
static int count_files(const char *prefix)
{
	DIR *d = opendir(check_tmpdir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

START_TEST(test_launcher_threads_only)
{
	char tool[512], prog[512], opath[400], out[300], mapp[400], err[256];
	char *argv[] = { tool, "--threads-only", "-q", "-o", opath, "--", prog, "exit", NULL };
	yajl_val map;
	pid_t pid;
	char *text;

	snprintf(tool, sizeof tool, "%s/cuptirec", CREC_BUILDDIR);
	snprintf(prog, sizeof prog, "%s/tests/cuptirec/threadprog", CREC_BUILDDIR);
	snprintf(opath, sizeof opath, "%s/threads_%%p.json", check_tmpdir);
	snprintf(out, sizeof out, "%s/out.txt", check_tmpdir);
	/* the launcher execs: the pid it was started as is the program's */
	ck_assert_int_eq(run(argv, LAUNCHER_ENV, out, &pid), 0);
	snprintf(mapp, sizeof mapp, "%s/threads_%ld.json", check_tmpdir, (long)pid);
	text = slurp(mapp);
	map = yajl_tree_parse(text, err, sizeof err);
	ck_assert_msg(map != NULL, "%s", err);
	ck_assert_uint_eq(map_entries(map, pid)->u.array.len, 8);
	yajl_tree_free(map);
	free(text);
	ck_assert_int_eq(count_files("threads_"), 1);
}
END_TEST

/* The map at PATH exists and its "source" is as check_source wants, written
 * between T0 and now. */
static void check_map_source(const char *path, pid_t pid, long rank, const char *from, uint64_t t0)
{
	char err[256], *text;
	yajl_val map;

	ck_assert_msg(access(path, R_OK) == 0, "no %s", path);
	text = slurp(path);
	map = yajl_tree_parse(text, err, sizeof err);
	ck_assert_msg(map != NULL, "%s: %s", path, err);
	check_source(map, pid, rank, from, t0, now_ns());
	yajl_tree_free(map);
	free(text);
}

/* -o with %h and %r (issue 9): the host as gethostname gives it, the rank
 * from RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK, "norank" without one; the
 * map's "source" says the same */
START_TEST(test_launcher_host_rank)
{
	char tool[512], prog[512], opath[400], out[300], mapp[600], host[256];
	char *argv[] = { tool, "-T", "-q", "-o", opath, "--", prog, "exit", NULL };
	char slurm[] = "SLURM_PROCID=12", rank[] = "RANK=3";
	/* under --enable-sanitizers the ASan runtime goes first (LAUNCHER_ENV) */
	char *env_none[] = { CREC_ASAN_RUNTIME[0] ? asan_preload : NULL, NULL };
	char *env_slurm[] = { slurm, CREC_ASAN_RUNTIME[0] ? asan_preload : NULL, NULL };
	char *env_both[] = { slurm, rank, CREC_ASAN_RUNTIME[0] ? asan_preload : NULL, NULL };
	uint64_t t0;
	pid_t pid;

	snprintf(tool, sizeof tool, "%s/cuptirec", CREC_BUILDDIR);
	snprintf(prog, sizeof prog, "%s/tests/cuptirec/threadprog", CREC_BUILDDIR);
	snprintf(opath, sizeof opath, "%s/t_%%h_%%r_%%p.json", check_tmpdir);
	snprintf(out, sizeof out, "%s/out.txt", check_tmpdir);
	my_host(host, sizeof host);
	/* the test may itself run under srun or mpirun */
	unsetenv("RANK");
	unsetenv("SLURM_PROCID");
	unsetenv("OMPI_COMM_WORLD_RANK");
	t0 = now_ns();
	ck_assert_int_eq(run(argv, env_none, out, &pid), 0);
	snprintf(mapp, sizeof mapp, "%s/t_%s_norank_%ld.json", check_tmpdir, host, (long)pid);
	check_map_source(mapp, pid, -1, NULL, t0);
	t0 = now_ns();
	ck_assert_int_eq(run(argv, env_slurm, out, &pid), 0);
	snprintf(mapp, sizeof mapp, "%s/t_%s_12_%ld.json", check_tmpdir, host, (long)pid);
	check_map_source(mapp, pid, 12, "SLURM_PROCID", t0);
	/* RANK comes first */
	t0 = now_ns();
	ck_assert_int_eq(run(argv, env_both, out, &pid), 0);
	snprintf(mapp, sizeof mapp, "%s/t_%s_3_%ld.json", check_tmpdir, host, (long)pid);
	check_map_source(mapp, pid, 3, "RANK", t0);
	ck_assert_int_eq(count_files("t_"), 3);
}
END_TEST

START_TEST(test_launcher_status_and_quiet_processes)
{
	char tool[512], opath[400], out[300];
	char *sh_argv[] = { tool, "-T", "-o", opath, "--", "/bin/sh", "-c", "exit 7", NULL };
	char *true_argv[] = { tool, "-T", "-o", opath, "--", "/bin/true", NULL };

	snprintf(tool, sizeof tool, "%s/cuptirec", CREC_BUILDDIR);
	snprintf(opath, sizeof opath, "%s/n_%%p.json", check_tmpdir);
	snprintf(out, sizeof out, "%s/out.txt", check_tmpdir);
	/* the command's exit status is the launcher's */
	ck_assert_int_eq(run(sh_argv, LAUNCHER_ENV, out, NULL), 7);
	/* processes that start no thread leave no map */
	ck_assert_int_eq(run(true_argv, LAUNCHER_ENV, out, NULL), 0);
	ck_assert_int_eq(count_files("n_"), 0);
}
END_TEST

START_TEST(test_launcher_usage)
{
	static const char *const cases[][8] = {
		{ NULL },                                          /* no command */
		{ "--threads-only", "--gzip", "--", "/bin/true", NULL },
		{ "--threads-only", "--latency-timestamps", "--", "/bin/true", NULL },
		{ "-o", "bad_%q.json", "--", "/bin/true", NULL },
		{ "-o", "bad_%R.json", "--", "/bin/true", NULL },
		{ "--activities", "kernel,nonsense", "--", "/bin/true", NULL },
		{ "--delay", "soon", "--", "/bin/true", NULL },
		{ "--duration", "0", "--", "/bin/true", NULL },
		{ "--fifo-wait", "soon", "--", "/bin/true", NULL },
		{ "-T", "--fifo-wait=-1", "--", "/bin/true", NULL },
		{ "--no-such-option", "--", "/bin/true", NULL },
		{ "-T", "-o", "map.json.gz", "--", "/bin/true", NULL },   /* plain map, .gz name */
	};
	char tool[512], out[300], *argv[10], *text, errp[320];
	size_t c;
	int i;

	snprintf(tool, sizeof tool, "%s/cuptirec", CREC_BUILDDIR);
	snprintf(out, sizeof out, "%s/out.txt", check_tmpdir);
	snprintf(errp, sizeof errp, "%s.err", out);
	for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		argv[0] = tool;
		for (i = 0; cases[c][i]; i++)
			argv[i + 1] = (char *)cases[c][i];
		argv[i + 1] = NULL;
		ck_assert_msg(run(argv, NULL, out, NULL) == 2, "case %zu: not a usage error", c);
		text = slurp(errp);
		ck_assert_msg(strncmp(text, "cuptirec: ", 10) == 0, "case %zu: message '%s'", c, text);
		free(text);
	}
	argv[0] = tool;
	argv[1] = "-T";
	argv[2] = "--";
	argv[3] = "/nonexistent/command";
	argv[4] = NULL;
	ck_assert_int_eq(run(argv, NULL, out, NULL), 127);
	argv[3] = check_tmpdir;   /* a directory: found, not executable */
	ck_assert_int_eq(run(argv, NULL, out, NULL), 126);
}
END_TEST

/* ---- where the map goes: a FIFO, a pipe (src/cuptirec/opts.c's
 * crec_open_out_wait and crec_write_out, the window's sink's rules) ---- */

/* Start threadprog MODE under the recorder, its map to MAP (a path; with
 * FD3 >= 0, that descriptor is the program's 3), more settings in ENV
 * (NULL-ended), stdout to out.txt, stderr to out.txt.err; SIGPIPE at its
 * default, as in most programs.  Returns the pid, not waited for. */
static pid_t spawn_map(const char *mode, const char *map, int fd3, char *const env[])
{
	char prog[512], lib[512], envp[600], envo[600], out[300], errp[320];
	pid_t pid;
	int i;

	snprintf(prog, sizeof prog, "%s/tests/cuptirec/threadprog", CREC_BUILDDIR);
	snprintf(lib, sizeof lib, "%s/.libs/libcuptirec_threads.so", CREC_BUILDDIR);
	snprintf(envp, sizeof envp, "LD_PRELOAD=%s%s%s", CREC_ASAN_RUNTIME, CREC_ASAN_RUNTIME[0] ? " " : "", lib);
	snprintf(envo, sizeof envo, "CUPTIREC_THREADS_OUTPUT=%s", map);
	snprintf(out, sizeof out, "%s/out.txt", check_tmpdir);
	snprintf(errp, sizeof errp, "%s.err", out);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *argv[] = { prog, (char *)mode, NULL };
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 || (fd3 >= 0 && fd3 != 3 && dup2(fd3, 3) < 0))
			_exit(125);
		signal(SIGPIPE, SIG_DFL);
		putenv(envp);
		putenv(envo);
		unsetenv("CUPTIREC_FIFO_WAIT");
		for (i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(argv[0], argv);
		_exit(126);
	}
	return pid;
}

/* Wait for PID; its exit status, or 128 + the signal that killed it. */
static int reap(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* What the program said on its stderr (out.txt.err), malloc'd. */
static char *said(void)
{
	char errp[320];

	snprintf(errp, sizeof errp, "%s/out.txt.err", check_tmpdir);
	return slurp(errp);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* All of FD until its end, slowly (a pause after each 512 bytes), from
 * offset SKIP of what comes: returned NUL-ended, malloc'd. */
static char *read_slowly_from(int fd, size_t skip)
{
	struct timespec slow = { 0, 2000000 };
	size_t cap = 1 << 16, len = 0;
	char *p = malloc(cap);
	ssize_t k;

	for (;;) {
		if (cap - len < 1024)
			p = realloc(p, cap *= 2);
		k = read(fd, p + len, 512);
		if (k < 0 && errno == EINTR)
			continue;
		ck_assert_int_ge(k, 0);
		if (k == 0)
			break;
		len += (size_t)k;
		nanosleep(&slow, NULL);
	}
	p[len] = '\0';
	ck_assert_uint_ge(len, skip);
	memmove(p, p + skip, len - skip + 1);
	return p;
}

/* TEXT is threadprog exit's map of PID: 7 threads joined and the sleeper
 * (main waits for the sleeper's lines before its exit). */
static void map_ok(const char *text, pid_t pid)
{
	char err[256];
	yajl_val map = yajl_tree_parse(text, err, sizeof err);
	size_t n;

	ck_assert_msg(map != NULL, "not a map: %s: %.200s", err, text);
	n = map_entries(map, pid)->u.array.len;
	ck_assert_msg(n == 8, "%zu threads", n);
	yajl_tree_free(map);
}

/* A FIFO whose reader opens it 0.3 s after the program wrote its map (one
 * started beside the program, late): waited for, CUPTIREC_FIFO_WAIT
 * seconds at most, and the reader gets the map.  It was given up at once
 * ("No such device or address"), the map lost. */
START_TEST(test_map_fifo_late_reader)
{
	char fifo[300], wait5[] = "CUPTIREC_FIFO_WAIT=5", *env[] = { wait5, NULL }, *text;
	struct timespec late = { 0, 300000000 };
	pid_t pid;
	int rfd;

	snprintf(fifo, sizeof fifo, "%s/fifo", check_tmpdir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	pid = spawn_map("exit", fifo, -1, env);
	nanosleep(&late, NULL);
	/* not blocking: the program, waiting for a reader, finds this one;
	 * the map (a few hundred bytes) fits in the pipe, and its end is
	 * read once the program has exited */
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rfd, 0);
	ck_assert_int_eq(reap(pid), 0);
	ck_assert_int_eq(fcntl(rfd, F_SETFL, 0), 0);
	text = read_slowly_from(rfd, 0);
	close(rfd);
	map_ok(text, pid);
	free(text);
}
END_TEST

/* A FIFO that no reader opens: after CUPTIREC_FIFO_WAIT seconds a warning
 * saying so, the program's own status, nothing replaced. */
START_TEST(test_map_fifo_without_reader)
{
	char fifo[300], want[400], wait[] = "CUPTIREC_FIFO_WAIT=0.5", *env[] = { wait, NULL }, *text;
	struct stat st;
	double t0 = mono_s(), waited;

	snprintf(fifo, sizeof fifo, "%s/fifo", check_tmpdir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(reap(spawn_map("exit", fifo, -1, env)), 0);
	waited = mono_s() - t0;
	text = said();
	snprintf(want, sizeof want, "cannot write the thread map %s: a FIFO without a reader for 0.5 s", fifo);
	ck_assert_msg(strstr(text, want), "said: %s", text);
	ck_assert_msg(waited >= 0.5 && waited < 5, "waited %g s", waited);
	ck_assert_int_eq(stat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	free(text);
}
END_TEST

/* A reader gone before the map is written (a pipe whose read end is
 * closed): a warning, EPIPE, and the program's own status, in each way a
 * program exits.  SIGPIPE, at its default, killed it (status 141). */
START_TEST(test_map_reader_gone)
{
	const char *mode = modes[_i];
	char *text;
	int p[2], rc;

	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	rc = reap(spawn_map(mode, "/dev/fd/3", p[1], NULL));
	close(p[1]);
	text = said();
	ck_assert_msg(rc == 0, "%s: status %d (141: SIGPIPE), said: %s", mode, rc, text);
	ck_assert_msg(strstr(text, "cannot write the thread map /dev/fd/3: Broken pipe"), "%s: said: %s", mode,
		      text);
	free(text);
}
END_TEST

/* The map's descriptor non-blocking (O_NONBLOCK on a pipe the program
 * shares with its parent) and its pipe full, the reader late and slow:
 * the map waits for room (poll), as through a blocking pipe, and comes
 * whole after what the pipe held.  It failed with EAGAIN ("Resource
 * temporarily unavailable"), the map lost. */
START_TEST(test_map_nonblocking)
{
	static char fill[4096];
	struct timespec late = { 0, 300000000 };
	char *text;
	pid_t pid;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	memset(fill, 'x', sizeof fill);
	ck_assert_int_eq(write(p[1], fill, sizeof fill), (ssize_t)sizeof fill);
	pid = spawn_map("exit", "/dev/fd/3", p[1], NULL);
	close(p[1]);
	nanosleep(&late, NULL);
	text = read_slowly_from(p[0], sizeof fill);
	close(p[0]);
	ck_assert_int_eq(reap(pid), 0);
	map_ok(text, pid);
	free(text);
}
END_TEST

/* CUPTIREC_FIFO_WAIT that is not a number of seconds: one line saying so,
 * the default kept, the map written. */
START_TEST(test_map_fifo_wait_bad)
{
	char map[300], bad[] = "CUPTIREC_FIFO_WAIT=soon", *env[] = { bad, NULL }, *text;

	snprintf(map, sizeof map, "%s/map.json", check_tmpdir);
	ck_assert_int_eq(reap(spawn_map("exit", map, -1, env)), 0);
	text = said();
	ck_assert_msg(strstr(text, ": CUPTIREC_FIFO_WAIT=soon is not a number of seconds; using 10\n"), "said: %s",
		      text);
	free(text);
	ck_assert_int_eq(access(map, R_OK), 0);
}
END_TEST

static Suite *threads_suite(void)
{
	Suite *s = suite_create("cuptirec_threads");
	TCase *tc = tcase_create("recorder");

	tcase_add_checked_fixture(tc, check_tmpdir_setup, check_tmpdir_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_thread_map, 0, (int)(sizeof modes / sizeof modes[0]));
	tcase_add_test(tc, test_launcher_threads_only);
	tcase_add_test(tc, test_launcher_host_rank);
	tcase_add_test(tc, test_launcher_status_and_quiet_processes);
	tcase_add_test(tc, test_launcher_usage);
	suite_add_tcase(s, tc);
	tc = tcase_create("output");
	tcase_add_checked_fixture(tc, check_tmpdir_setup, check_tmpdir_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_map_fifo_late_reader);
	tcase_add_test(tc, test_map_fifo_without_reader);
	tcase_add_loop_test(tc, test_map_reader_gone, 0, (int)(sizeof modes / sizeof modes[0]));
	tcase_add_test(tc, test_map_nonblocking);
	tcase_add_test(tc, test_map_fifo_wait_bad);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(threads_suite)
