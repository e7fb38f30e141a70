/* threads.c - libcuptirec_threads: record every thread's ids, name and lifetime; write a thread map.
 *
 * Preloaded (LD_PRELOAD, usually by `cuptirec --threads-only`), this library
 * wraps pthread_create and records, for every thread the process runs, the
 * opaque id Kineto and CUPTI print (pthread_self), the kernel id (gettid), the
 * name and the start and end times (CLOCK_REALTIME ns, the clock of
 * torch.profiler's baseTimeNanoseconds).  At process exit it writes the THREAD
 * MAP file (version 1) that `cuptimerge -t` reads to move worker-thread CUDA
 * events back to their threads' rows, with a "source" naming the host, pid,
 * rank and time span of the process, the facts cuptimerge-batch pairs the map
 * with its process's trace by (the members of a trace window's "source").  It never touches CUPTI, so it works
 * while torch.profiler owns CUPTI, and it builds without CUDA.
 *
 * How.  The wrapper hands the real pthread_create (dlsym RTLD_NEXT) a
 * trampoline that records the new thread on the thread itself (so gettid and
 * pthread_self are its own), stores its table index in a pthread key, and
 * calls the user's start routine.  The key's destructor runs at thread exit
 * (return or pthread_exit) and records the end time and the name (set names
 * only: a name equal to the one the thread inherited from its creator is
 * omitted, the main thread's is always kept).  The main thread is recorded
 * when the library loads.  One entry per thread lifetime: a pthread_t reused
 * after a thread ended gets a second entry with a later, disjoint lifetime.
 *
 * Exit.  A process that started threads writes its map once (one that never
 * did has nothing to repair and writes nothing), by an atexit handler (also
 * run by the implicit exit(0) after the last thread of a process whose main
 * thread called pthread_exit) or by our _exit/_Exit wrappers (Python's os._exit, as
 * used by forked multiprocessing workers).  Threads still running then have
 * no end_ns; their names are read from /proc/self/task/TID/comm.  The file is
 * written to a temporary name and renamed, so readers never see half a map.
 * A killed process writes nothing.
 *
 * Fork.  A child starts a new table holding only the forking thread (now its
 * main thread) and writes its own map under its own pid at exit.  A vfork
 * child (posix_spawn) runs no fork handlers: a pid check makes it write
 * nothing.
 *
 * Memory: one entry (about 64 bytes) per thread lifetime, at most
 * CREC_THR_MAX; threads beyond that are counted and reported, not recorded.
 * Failures are reported once on stderr ("cuptirec: ...") and never change
 * what the program does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jbuf.h"
#include "opts.h"
#include "pathpat.h"
#include "base/fdio.h"

#define CREC_API __attribute__((visibility("default")))

/* The default file name, in the working directory. */
#define CREC_THR_DEFAULT_OUTPUT "cuptirec_threads_%p.json"
/* Thread lifetimes kept per process (64 MiB of entries at most). */
#define CREC_THR_MAX (1u << 20)
/* Linux thread names: 15 bytes and a NUL (TASK_COMM_LEN). */
#define CREC_COMM_LEN 16

typedef int (*crec_pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef void (*crec_exit_fn)(int);

struct crec_thr {
	uint64_t pthread;
	uint32_t tid;
	int is_main;
	int ended;
	uint64_t start_ns, end_ns;
	char inherited[CREC_COMM_LEN];  /* the name the thread started with */
	char name[CREC_COMM_LEN];       /* the name at its exit */
};

static struct {
	pthread_mutex_t mu;
	int inited;
	pid_t pid;
	uint64_t start_ns;  /* when recording began in this process: load, or the fork */
	pthread_key_t key;
	int have_key;
	struct crec_thr *t;
	size_t n, cap;
	unsigned long long lost;
	int written;
	int created;        /* this process started a thread through us */
	crec_pthread_create_fn real_create;
	crec_exit_fn real_exit, real_Exit;  /* looked up early: _exit may run in a vfork child */
} T = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Print "cuptirec: pid N: MESSAGE" on stderr in one write. */
__attribute__((format(printf, 1, 2))) static void crec_thr_warn(const char *fmt, ...)
{
	char line[PATH_MAX + 256];
	va_list ap;
	int n = snprintf(line, sizeof line, "cuptirec: pid %ld: ", (long)getpid());

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* stderr is gone: nothing to do */
	}
}

static uint64_t crec_thr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t crec_thr_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* The calling thread's name into BUF (CREC_COMM_LEN bytes; "" on failure). */
static void crec_thr_myname(char *buf)
{
	memset(buf, 0, CREC_COMM_LEN);
	if (prctl(PR_GET_NAME, buf) != 0)
		buf[0] = '\0';
	buf[CREC_COMM_LEN - 1] = '\0';
}

/* Thread TID's current name from /proc into BUF; returns 0 or -1. */
static int crec_thr_procname(uint32_t tid, char *buf)
{
	char path[64];
	ssize_t r;
	int fd;

	snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = read(fd, buf, CREC_COMM_LEN - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	if (r > 0 && buf[r - 1] == '\n')
		buf[r - 1] = '\0';
	return 0;
}

/* Append a record for the calling thread; returns its index + 1 (for the
 * key), or 0 when the table is full.  MAIN marks the process's main thread. */
static size_t crec_thr_add_self(int is_main)
{
	struct crec_thr e;
	size_t idx = 0;

	memset(&e, 0, sizeof e);
	e.pthread = (uint64_t)(uintptr_t)pthread_self();
	e.tid = crec_thr_gettid();
	e.is_main = is_main;
	e.start_ns = crec_thr_now();
	crec_thr_myname(e.inherited);
	pthread_mutex_lock(&T.mu);
	if (T.n == T.cap && T.cap < CREC_THR_MAX) {
		size_t nc = T.cap ? T.cap * 2 : 64;
		struct crec_thr *p = realloc(T.t, nc * sizeof *p);
		if (p) {
			T.t = p;
			T.cap = nc;
		}
	}
	if (T.n < T.cap) {
		T.t[T.n++] = e;
		idx = T.n;
	} else {
		T.lost++;
	}
	pthread_mutex_unlock(&T.mu);
	return idx;
}

/* pthread key destructor: the thread is exiting; record when and its name. */
static void crec_thr_exiting(void *v)
{
	size_t idx = (size_t)(uintptr_t)v;
	char name[CREC_COMM_LEN];
	uint64_t now = crec_thr_now();

	crec_thr_myname(name);
	pthread_mutex_lock(&T.mu);
	if (idx > 0 && idx <= T.n) {
		T.t[idx - 1].ended = 1;
		T.t[idx - 1].end_ns = now;
		memcpy(T.t[idx - 1].name, name, sizeof name);
	}
	pthread_mutex_unlock(&T.mu);
}

/* A small output buffer on the stack: the map is written without malloc, so
 * the _exit wrapper may run where malloc may not (a signal handler). */
struct crec_fout {
	int fd;
	int err;               /* errno of the first failure, or 0 */
	size_t len;
	char buf[4096];
};

/* Write out the buffered bytes, unless a write has failed (crec_write_out,
 * opts.h: write(2), poll and the signal mask alone, safe where the _exit
 * wrapper runs; a reader gone is EPIPE, not the program killed by
 * SIGPIPE in its exit). */
static void crec_fout_flush(struct crec_fout *f)
{
	if (!f->err)
		f->err = crec_write_out(f->fd, f->buf, f->len);
	f->len = 0;
}

/* Append p[0..n); N must not exceed the buffer. */
static void crec_fout_put(struct crec_fout *f, const char *p, size_t n)
{
	if (sizeof f->buf - f->len < n)
		crec_fout_flush(f);
	memcpy(f->buf + f->len, p, n);
	f->len += n;
}
#define crec_fout_lit(f, s) crec_fout_put((f), (s), sizeof(s) - 1)

/* Append one entry's JSON object.  Running threads get their current name
 * from /proc; the name is left out when it is empty or the inherited one
 * (except for the main thread). */
static void crec_thr_entry_json(struct crec_fout *f, const struct crec_thr *e)
{
	char name[CREC_COMM_LEN], esc[6 * CREC_COMM_LEN + 3], num[CREC_U64_DIGITS];

	if (e->ended)
		memcpy(name, e->name, sizeof name);
	else if (crec_thr_procname(e->tid, name) != 0)
		memcpy(name, e->inherited, sizeof name);
	crec_fout_lit(f, "{\"tid\": ");
	crec_fout_put(f, num, crec_json_u64_fixed(num, e->tid));
	crec_fout_lit(f, ", \"pthread\": ");
	crec_fout_put(f, num, crec_json_u64_fixed(num, e->pthread));
	if (name[0] && (e->is_main || strcmp(name, e->inherited) != 0)) {
		crec_fout_lit(f, ", \"name\": ");
		crec_fout_put(f, esc, crec_json_str_fixed(esc, name, strnlen(name, CREC_COMM_LEN - 1)));
	}
	crec_fout_lit(f, ", \"start_ns\": ");
	crec_fout_put(f, num, crec_json_u64_fixed(num, e->start_ns));
	if (e->ended) {
		crec_fout_lit(f, ", \"end_ns\": ");
		crec_fout_put(f, num, crec_json_u64_fixed(num, e->end_ns));
	}
	crec_fout_lit(f, "}");
}

/* Append `"source": {...}, ` for this process (cuptimerge-threadmap(5)): HOST
 * (NULL when unknown), pid, RANK (< 0: none) and FROM (its variable), and
 * the span from T.start_ns to END_NS.  The same members as a trace window's
 * "source", so that cuptimerge-batch reads both alike. */
static void crec_thr_source_json(struct crec_fout *f, const char *host, long rank, const char *from,
				 uint64_t end_ns)
{
	/* crec_path_host's name fits in 256 bytes; escaped, 6 bytes each at most */
	char esc[6 * 256 + 3], num[CREC_U64_DIGITS];

	crec_fout_lit(f, "\"source\": {");
	if (host && *host) {
		crec_fout_lit(f, "\"host\": ");
		crec_fout_put(f, esc, crec_json_str_fixed(esc, host, strnlen(host, 255)));
		crec_fout_lit(f, ", ");
	}
	crec_fout_lit(f, "\"pid\": ");
	crec_fout_put(f, num, crec_json_u64_fixed(num, (uint64_t)T.pid));
	if (rank >= 0) {
		crec_fout_lit(f, ", \"rank\": ");
		crec_fout_put(f, num, crec_json_u64_fixed(num, (uint64_t)rank));
		if (from) {
			crec_fout_lit(f, ", \"rank_from\": ");
			crec_fout_put(f, esc, crec_json_str_fixed(esc, from, strlen(from)));
		}
	}
	crec_fout_lit(f, ", \"start_ns\": ");
	crec_fout_put(f, num, crec_json_u64_fixed(num, T.start_ns));
	crec_fout_lit(f, ", \"end_ns\": ");
	crec_fout_put(f, num, crec_json_u64_fixed(num, end_ns));
	crec_fout_lit(f, "},\n ");
}

/* Take the table lock; with PATIENT wait for it, else try for about 100 ms
 * (the _exit wrapper may interrupt a holder on its own thread).  Returns 0
 * when held. */
static int crec_thr_lock(int patient)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	if (patient)
		return pthread_mutex_lock(&T.mu);
	for (i = 0; i < 100; i++) {
		if (pthread_mutex_trylock(&T.mu) == 0)
			return 0;
		nanosleep(&ms, NULL);
	}
	return -1;
}

/* Write the thread map once (later calls do nothing); only the process that
 * recorded the table writes it.  PATIENT: see crec_thr_lock. */
static void crec_thr_write_map(int patient)
{
	char pattern[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 32], host[256], num[CREC_U64_DIGITS];
	char real[PATH_MAX];
	const char *v = getenv("CUPTIREC_THREADS_OUTPUT"), *rank_from, *target;
	crec_path_vars pv;
	struct crec_fout f;
	struct stat st;
	size_t i, n;
	double wait;
	int ok, direct, no_reader = 0;

	/* a process that never started a thread has nothing to repair: writing
	 * nothing keeps shells and helpers of a job from littering maps */
	if (!T.inited || getpid() != T.pid || !__atomic_load_n(&T.created, __ATOMIC_ACQUIRE) ||
	    crec_thr_lock(patient) != 0)
		return;
	if (T.written) {
		pthread_mutex_unlock(&T.mu);
		return;
	}
	T.written = 1;
	if (v && *v && crec_path_check(v)) {
		crec_thr_warn("CUPTIREC_THREADS_OUTPUT=%s: %s; using the default name", v, crec_path_check(v));
		v = NULL;
	}
	if (crec_fifo_wait_env(&wait))
		crec_thr_warn("CUPTIREC_FIFO_WAIT=%s is not a number of seconds; using %g", getenv("CUPTIREC_FIFO_WAIT"),
			      wait);
	snprintf(pattern, sizeof pattern, "%s", v && *v ? v : CREC_THR_DEFAULT_OUTPUT);
	pv.pid = (long)T.pid;
	pv.seq = 0;
	pv.host = crec_path_host(host, sizeof host) == 0 ? host : NULL;
	pv.rank = crec_path_rank(&rank_from);
	if (crec_path_expand(pattern, &pv, path, sizeof path)) {
		pthread_mutex_unlock(&T.mu);
		crec_thr_warn("%s: output path too long; no thread map written", pattern);
		return;
	}
	/* A regular file (or none) is replaced by a rename, so that readers
	 * never see half a map; a symbolic link is followed, and the file it
	 * names replaced (the link stays).  Anything else there (a device, a
	 * FIFO, a terminal) is written through, as `> PATH` would: the rename
	 * replaced /dev/full or /dev/stdout itself with a regular file (as
	 * root).  A FIFO without a reader is waited for, CUPTIREC_FIFO_WAIT
	 * seconds at most (as the window's is), then an error, not a process
	 * that hangs in its exit.  /dev/stdout (a name of a descriptor of ours) is
	 * written through that descriptor: with it closed, stat found
	 * nothing, and the rename replaced the link /dev/stdout itself. */
	direct = cm_path_names_fd(path) >= 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode));
	target = !direct && stat(path, &st) == 0 && realpath(path, real) ? real : path;
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", target, (long)T.pid);
	f.len = 0;
	f.err = 0;
	if (direct) {
		f.fd = crec_open_out_wait(path, 0, wait, &no_reader);
	} else {
		f.fd = crec_fd_above_std(open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
	}
	if (f.fd < 0)
		f.err = errno;
	if (!f.err) {
		crec_fout_lit(&f, "{\"thread_map_version\": 1,\n ");
		/* the span ends now: every entry below started before it */
		crec_thr_source_json(&f, pv.host, pv.rank, rank_from, crec_thr_now());
		crec_fout_lit(&f, "\"processes\": {\n  \"");
		crec_fout_put(&f, num, crec_json_u64_fixed(num, (uint64_t)T.pid));
		crec_fout_lit(&f, "\": [");
		for (i = 0; i < T.n; i++) {
			if (i)
				crec_fout_lit(&f, ",\n   ");
			else
				crec_fout_lit(&f, "\n   ");
			crec_thr_entry_json(&f, &T.t[i]);
		}
		crec_fout_lit(&f, "]\n }}\n");
		crec_fout_flush(&f);
		if (close(f.fd) != 0 && !f.err)
			f.err = errno;
		if (!direct && !f.err && rename(tmp, target) != 0)
			f.err = errno;
		if (!direct && f.err)
			unlink(tmp);
	}
	n = T.n;
	ok = !f.err;
	pthread_mutex_unlock(&T.mu);
	if (!ok && no_reader)
		crec_thr_warn("cannot write the thread map %s: a FIFO without a reader for %g s", path, wait);
	else if (!ok)
		crec_thr_warn("cannot write the thread map %s: %s", path, strerror(f.err));
	else if (!crec_env_flag("CUPTIREC_QUIET"))
		crec_thr_warn("thread map of %zu threads written to %s", n, path);
	if (T.lost)
		crec_thr_warn("%llu threads not recorded (more than %u)", T.lost, CREC_THR_MAX);
}

static void crec_thr_atexit(void)
{
	crec_thr_write_map(1);
}

/* Fork handlers: hold the table lock across fork so the child gets a
 * consistent copy, then restart the child's table with its one thread. */
static void crec_thr_prepare(void)
{
	pthread_mutex_lock(&T.mu);
}

static void crec_thr_parent(void)
{
	pthread_mutex_unlock(&T.mu);
}

static void crec_thr_child(void)
{
	size_t idx;

	pthread_mutex_init(&T.mu, NULL);
	T.pid = getpid();
	T.start_ns = crec_thr_now();
	T.n = 0;
	T.lost = 0;
	T.written = 0;
	T.created = 0;
	idx = crec_thr_add_self(1);
	if (T.have_key)
		pthread_setspecific(T.key, (void *)(uintptr_t)idx);
}

/* Set up once, on the first wrapper call or at load: resolve the real
 * pthread_create, create the key, record the main thread, register the exit
 * and fork handlers. */
static void crec_thr_init_once(void)
{
	size_t idx;

	T.real_create = (crec_pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	T.real_exit = (crec_exit_fn)dlsym(RTLD_NEXT, "_exit");
	T.real_Exit = (crec_exit_fn)dlsym(RTLD_NEXT, "_Exit");
	T.pid = getpid();
	T.start_ns = crec_thr_now(); /* before the main thread's entry: the span holds it */
	T.have_key = pthread_key_create(&T.key, crec_thr_exiting) == 0;
	/* the loading thread is the main thread unless another library's
	 * constructor started threads first and one of them got here */
	idx = crec_thr_add_self(crec_thr_gettid() == (uint32_t)T.pid);
	if (T.have_key)
		pthread_setspecific(T.key, (void *)(uintptr_t)idx);
	pthread_atfork(crec_thr_prepare, crec_thr_parent, crec_thr_child);
	atexit(crec_thr_atexit);
	T.inited = 1;
	if (!T.have_key)
		crec_thr_warn("cannot create a thread key; thread end times are not recorded");
}

static pthread_once_t crec_thr_once = PTHREAD_ONCE_INIT;

__attribute__((constructor)) static void crec_thr_ctor(void)
{
	pthread_once(&crec_thr_once, crec_thr_init_once);
}

struct crec_tramp {
	void *(*fn)(void *);
	void *arg;
};

/* The start routine given to the real pthread_create: record this thread,
 * then run the caller's routine. */
static void *crec_thr_trampoline(void *p)
{
	struct crec_tramp tr = *(struct crec_tramp *)p;
	size_t idx;

	free(p);
	idx = crec_thr_add_self(0);
	if (T.have_key && idx)
		pthread_setspecific(T.key, (void *)(uintptr_t)idx);
	return tr.fn(tr.arg);
}

/* The wrapper.  Behaves as pthread_create; only when the trampoline's small
 * allocation fails is the thread started unrecorded. */
CREC_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct crec_tramp *tr;
	int rc;

	pthread_once(&crec_thr_once, crec_thr_init_once);
	if (!T.real_create)
		return EAGAIN;
	tr = malloc(sizeof *tr);
	if (!tr)
		return T.real_create(thread, attr, fn, arg);
	tr->fn = fn;
	tr->arg = arg;
	rc = T.real_create(thread, attr, crec_thr_trampoline, tr);
	if (rc != 0)
		free(tr);
	else
		__atomic_store_n(&T.created, 1, __ATOMIC_RELEASE);
	return rc;
}

/* _exit and _Exit skip atexit handlers: write the map first, then exit
 * through F (the C library's function), or the system call when unknown. */
static void crec_thr_real_exit(crec_exit_fn f, int status) __attribute__((noreturn));
static void crec_thr_real_exit(crec_exit_fn f, int status)
{
	if (f)
		f(status);
	syscall(SYS_exit_group, status);
	for (;;)
		pause();
}

CREC_API void _exit(int status)
{
	crec_thr_write_map(0);
	crec_thr_real_exit(T.real_exit, status);
}

CREC_API void _Exit(int status)
{
	crec_thr_write_map(0);
	crec_thr_real_exit(T.real_Exit, status);
}
