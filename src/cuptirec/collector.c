/* collector.c - libcuptirec: record CUPTI activity of any CUDA process into trace windows.
 *
 * Design
 * ======
 *
 * Entry.  The library is loaded either by the CUDA driver, which dlopens the
 * file named in CUDA_INJECTION64_PATH and calls InitializeInjection() once, on
 * the thread of the first CUDA call, inside cuInit; or by the dynamic linker
 * (LD_PRELOAD, or an application linked with -lcuptirec).  In the second case
 * a constructor only points CUDA_INJECTION64_PATH at this very file when it is
 * unset, so initialisation still happens lazily at the first CUDA call and a
 * process that never uses CUDA pays nothing and writes nothing; when another
 * injection library is named there, the constructor initialises at once.  The
 * C API (cuptirec.h) initialises on first use.  Initialisation is idempotent.
 *
 * Subscriber.  We call cuptiSubscribe_v2 during initialisation.  CUPTI allows
 * one subscriber: holding it keeps torch's Kineto CPU-only (it logs that CUPTI
 * initialisation failed), which is the setup cuptimerge expects, a torch CPU
 * trace plus our window.  If someone else holds it we warn once and stay off.
 * The subscription's callbacks (runtime API entry, a few driver launch APIs)
 * only register the calling thread in the window's thread map, once per thread
 * and window (a thread-local generation number makes the repeat cost one
 * compare).
 *
 * Thread ids.  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
 * makes API records carry gettid() instead of the low 32 bits of
 * pthread_self(); it is process-global and set before any kind is enabled.
 * The thread map ("thread_resource_map": int32 of pthread_self -> gettid) is
 * still written, so a window stays correct when that call fails; while system
 * ids are on, keys that could be mistaken for a gettid are left out of it.
 *
 * Clocks.  CUPTI's default clock is CLOCK_REALTIME ns, the domain of a
 * torch.profiler trace's baseTimeNanoseconds, so records pass through as they
 * are.  A client that registered its own timestamp callback earlier (Kineto,
 * after a GPU-enabled profiler session in this process) leaves CUPTI on TSC
 * ticks: at window start we compare cuptiGetTimestamp() with CLOCK_REALTIME
 * and, when they differ by more than 100 ms, map every timestamp linearly
 * between calibration samples (clock.h).
 *
 * Memory.  Activity buffers come from a fixed pool (CUPTIREC_BUFFERS buffers
 * of CUPTIREC_BUFFER_SIZE bytes, default 16 x 4 MiB).  CUPTI's request callback
 * never blocks and never allocates beyond the pool: when it is empty it gets
 * NULL, CUPTI drops records and counts them, and we report that count
 * (cuptiActivityGetNumDroppedRecords) on stderr and as "dropped_records" in the
 * window.  Per-thread CUPTI buffers are turned off (unless asked for) so the
 * pool size, not the thread count, bounds memory.
 *
 * Threads.  The completion callback (CUPTI's worker thread, or whoever calls a
 * flush) only queues the buffer.  One writer thread, started at
 * initialisation with all signals blocked, encodes the records (encode.c)
 * straight into the window file (window.c, sink.c: plain or gzip) and puts the
 * buffer back into the pool.  Begin and end of a window are serialised by one
 * mutex and may come from the application (C API), the timer thread
 * (--delay/--duration) or the atexit handler.  Ending a window: disable the
 * kinds, cuptiActivityFlushAll(FORCED), queue a mark and wait (bounded by
 * CUPTIREC_EXIT_TIMEOUT) until the writer reaches it, then write the trailer
 * ("user_annotations", "thread_resource_map", "start_ns", "dropped_records",
 * "window_version", "device_properties", "source", "cuptirec") and close the
 * file.  The file is written in place, never via a
 * temporary name: a killed process leaves JSON without its closing bracket,
 * which readers report as truncated rather than take for a short window.
 *
 * Devices.  Kineto writes each device's cudaDeviceProp under
 * "deviceProperties", and the merge needs them for the occupancy of a kernel.
 * The collector must not link the CUDA runtime or driver, so it finds
 * cuDeviceGetAttribute and friends in the libcuda the process has loaded, and
 * reads the devices the window's records name when the window ends, after the
 * kinds are disabled (its own driver calls must not become records).  The
 * values are those cudaGetDeviceProperties reports, cached per process.
 *
 * Failure policy.  The host program comes first.  No function here exits,
 * aborts or blocks without a deadline; allocation failures and CUPTI or I/O
 * errors produce one "cuptirec: ..." warning on stderr and the collector turns
 * itself off (disables its activity kinds); the application's exit status is
 * never touched.  A forked child inherits a collector it cannot use: it stays
 * silent and writes nothing.
 *
 * Files.  This one holds the state, the options, initialisation, the timer,
 * exit and the C API; activity.c the CUPTI side (the kinds, the subscriber's
 * and the buffers' callbacks, the writer thread and the encoder's name hooks);
 * winctl.c the begin and end of a window; devquery.c the device properties;
 * collector.h what they share.
 */
/* dladdr, pthread_setname_np */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "annot.h"
#include "collector.h"
#include "cuptirec.h"
#include "opts.h"
#include "pathpat.h"
#include "pool.h"

/* The only symbols the module exports (see -export-symbols-regex). */
#define CREC_API __attribute__((visibility("default")))
int InitializeInjection(void) CREC_API;

/* Defaults; the reasons are in the design essay and cuptirec(1). */
#define CREC_DEFAULT_OUTPUT "cuptirec_%p.json"
#define CREC_DEFAULT_BUFSZ (4u << 20)
#define CREC_DEFAULT_NBUF 16
#define CREC_DEFAULT_EXIT_TIMEOUT 30.0
/* Distinct annotation names kept, and (id, name) pairs per window. */
#define CREC_ANNOT_MAX_NAMES 65536
#define CREC_ANNOT_MAX_WINDOW (1u << 20)
/* Threads in one window's thread map. */
#define CREC_TMAP_CAP 65536

/* The collector's state (collector.h). */
struct crec_state G = {
	.rank = -1,
	.ctl = PTHREAD_MUTEX_INITIALIZER,
	.tmu = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- messages ---------------------------------------------------------- */

/* Print "cuptirec: pid N: MESSAGE" on stderr.  NOTE messages are silenced
 * by CUPTIREC_QUIET; warnings never are. */
static void crec_vmsg(int note, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (note && G.o.quiet)
		return;
	n = snprintf(line, sizeof line, "cuptirec: pid %ld: ", (long)getpid());
	if (n < 0 || (size_t)n >= sizeof line)
		return;
	vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	/* one write(2): lines from several processes of a job do not interleave */
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* nothing sensible to do when stderr is gone */
	}
}

__attribute__((format(printf, 1, 2))) void crec_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	crec_vmsg(0, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2))) void crec_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	crec_vmsg(1, fmt, ap);
	va_end(ap);
}

const char *crec_cupti_str(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

/* ---- small helpers ------------------------------------------------------ */

uint64_t crec_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int crec_clock_pair(uint64_t *cupti, uint64_t *real)
{
	uint64_t a = crec_real_ns(), b;

	if (cuptiGetTimestamp(cupti) != CUPTI_SUCCESS)
		return -1;
	b = crec_real_ns();
	*real = a + (b - a) / 2;
	return 0;
}

/* The kernel's pid_max: the largest value a gettid can take. */
static uint32_t crec_read_pid_max(void)
{
	unsigned long v = 4194304; /* the 64-bit kernel's ceiling */
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 4194304;
		fclose(f);
	}
	return (uint32_t)v;
}

/* ---- options ------------------------------------------------------------- */

/* Fill O from the CUPTIREC_* environment; bad values are warned about and
 * replaced by the defaults. */
static void crec_load_opts(struct crec_opts *o)
{
	const char *v;
	char bad[64];
	int m;

	memset(o, 0, sizeof *o);
	o->quiet = crec_env_flag("CUPTIREC_QUIET");
	o->gzip = crec_env_flag("CUPTIREC_GZIP");
	v = getenv("CUPTIREC_OUTPUT");
	if (v && *v && crec_path_check(v)) {
		crec_warn("CUPTIREC_OUTPUT=%s: %s; using the default name", v, crec_path_check(v));
		v = NULL;
	}
	if (v && *v && strlen(v) < sizeof o->output)
		strcpy(o->output, v);
	else
		snprintf(o->output, sizeof o->output, "%s%s", CREC_DEFAULT_OUTPUT, o->gzip ? ".gz" : "");
	o->activities = CREC_ACT_DEFAULT;
	v = getenv("CUPTIREC_ACTIVITIES");
	if (v && *v) {
		m = crec_parse_activities(v, bad, sizeof bad);
		if (m < 0)
			crec_warn("CUPTIREC_ACTIVITIES: unknown activity '%s'; recording the default set", bad);
		else
			o->activities = m;
	}
	v = getenv("CUPTIREC_DELAY");
	if (v && *v && crec_parse_seconds(v, &o->delay))
		crec_warn("CUPTIREC_DELAY=%s is not a number of seconds; ignored", v);
	v = getenv("CUPTIREC_DURATION");
	if (v && *v && crec_parse_seconds(v, &o->duration))
		crec_warn("CUPTIREC_DURATION=%s is not a number of seconds; ignored", v);
	o->bufsz = CREC_DEFAULT_BUFSZ;
	v = getenv("CUPTIREC_BUFFER_SIZE");
	if (v && *v && (crec_parse_size(v, &o->bufsz) || o->bufsz < 65536)) {
		crec_warn("CUPTIREC_BUFFER_SIZE=%s: need at least 64K; using 4M", v);
		o->bufsz = CREC_DEFAULT_BUFSZ;
	}
	o->nbuf = CREC_DEFAULT_NBUF;
	v = getenv("CUPTIREC_BUFFERS");
	if (v && *v && (crec_parse_size(v, &o->nbuf) || o->nbuf < 2 || o->nbuf > 65536)) {
		crec_warn("CUPTIREC_BUFFERS=%s: need 2..65536; using %d", v, CREC_DEFAULT_NBUF);
		o->nbuf = CREC_DEFAULT_NBUF;
	}
	v = getenv("CUPTIREC_AUTOSTART");
	o->autostart = !(v && (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
			       !strcasecmp(v, "off")));
	o->exit_timeout = CREC_DEFAULT_EXIT_TIMEOUT;
	v = getenv("CUPTIREC_EXIT_TIMEOUT");
	if (v && *v && crec_parse_seconds(v, &o->exit_timeout))
		crec_warn("CUPTIREC_EXIT_TIMEOUT=%s is not a number of seconds; using 30", v);
	if (crec_fifo_wait_env(&o->fifo_wait))
		crec_warn("CUPTIREC_FIFO_WAIT=%s is not a number of seconds; using %g", getenv("CUPTIREC_FIFO_WAIT"),
			  o->fifo_wait);
	o->per_thread_buffers = crec_env_flag("CUPTIREC_PER_THREAD_BUFFERS");
	v = getenv("CUPTIREC_THREAD_CALLBACKS");
	o->thread_callbacks = !(v && (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
				      !strcasecmp(v, "off")));
	o->latency_timestamps = crec_env_flag("CUPTIREC_LATENCY_TIMESTAMPS");
}

void crec_disable(const char *why)
{
	if (__atomic_exchange_n(&G.disabled, 1, __ATOMIC_ACQ_REL))
		return;
	crec_warn("%s; collector disabled", why);
	if (G.sub)
		crec_kinds_off();
}

/* ---- timer, exit, fork ----------------------------------------------------------- */

/* Sleep on the timer condition until SECONDS have passed or the process is
 * exiting.  Returns 1 when the time has come, 0 when exiting. */
static int crec_timer_wait(double seconds)
{
	struct timespec dl;
	int done = 0;

	crec_deadline(&dl, seconds);
	pthread_mutex_lock(&G.tmu);
	while (!G.exiting && !done)
		done = pthread_cond_timedwait(&G.tcv, &G.tmu, &dl) == ETIMEDOUT;
	done = !G.exiting;
	pthread_mutex_unlock(&G.tmu);
	return done;
}

/* The --delay / --duration thread: start the automatic window after the
 * delay, end it after the duration. */
static void *crec_timer_main(void *arg)
{
	int began = 0;

	if (G.o.delay > 0 && !crec_timer_wait(G.o.delay))
		return NULL;
	if (G.o.delay > 0 && G.o.autostart) {
		pthread_mutex_lock(&G.ctl);
		began = crec_begin_locked(NULL) == 0;
		pthread_mutex_unlock(&G.ctl);
	} else {
		began = 1;
	}
	if (began && G.o.duration > 0 && crec_timer_wait(G.o.duration)) {
		pthread_mutex_lock(&G.ctl);
		if (G.win) {
			crec_end_locked();
			crec_note("--duration reached; recording stopped");
		}
		pthread_mutex_unlock(&G.ctl);
	}
	return NULL;
}

/* atexit: finish the open window.  Does nothing in a forked child. */
static void crec_atexit(void)
{
	if (getpid() != G.pid)
		return;
	pthread_mutex_lock(&G.tmu);
	G.exiting = 1;
	pthread_cond_broadcast(&G.tcv);
	pthread_mutex_unlock(&G.tmu);
	pthread_mutex_lock(&G.ctl);
	if (G.win)
		crec_end_locked();
	pthread_mutex_unlock(&G.ctl);
}

/* Start a thread running FN with every signal blocked (the application's
 * handlers must not run on our threads).  Returns 0 or -1. */
static int crec_spawn(void *(*fn)(void *), const char *name)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t t;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &at, fn, NULL);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	pthread_setname_np(t, name);
	return 0;
}

/* Initialise: options, subscriber, thread-id type, pool, writer, callbacks,
 * atexit, and the automatic window.  Caller holds G.ctl.  HOW says who asked,
 * for the messages. */
static void crec_init_locked(const char *how)
{
	CUpti_SubscriberParams sp;
	char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
	pthread_condattr_t ca;
	CUptiResult r;
	uint8_t zero = 0;
	size_t zsz = sizeof zero;

	G.pid = getpid();
	__atomic_store_n(&G.inited, 1, __ATOMIC_RELEASE);
	crec_load_opts(&G.o);
	/* who we are, for %h / %r and the window's "source": read once, before
	 * the program's threads could change the environment */
	if (crec_path_host(G.host, sizeof G.host) != 0)
		G.host[0] = '\0';
	G.rank = crec_path_rank(&G.rank_from);
	G.pid_max = crec_read_pid_max();
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&G.tcv, &ca);
	pthread_condattr_destroy(&ca);

	memset(&sp, 0, sizeof sp);
	sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	sp.subscriberName = "cuptirec";
	sp.oldSubscriberName = old;
	sp.oldSubscriberSize = sizeof old - 1;
	r = cuptiSubscribe_v2(&G.sub, crec_api_callback, NULL, &sp);
	if (r != CUPTI_SUCCESS) {
		char why[256];
		G.sub = NULL;
		snprintf(why, sizeof why, "cannot subscribe to CUPTI (%s%s%s)", crec_cupti_str(r),
			 old[0] ? "; held by " : "", old);
		crec_disable(why);
		return;
	}
	r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	G.system_ids = r == CUPTI_SUCCESS;
	if (!G.system_ids)
		crec_warn("cannot make CUPTI record gettid() thread ids (%s); the thread map is used instead",
			  crec_cupti_str(r));
	/* queued and submitted times of kernels; CUPTI wants this before CUDA
	 * initialises, which is when the driver calls InitializeInjection.  Off
	 * by default, as in Kineto: it adds to every launch. */
	if (G.o.latency_timestamps && (r = cuptiActivityEnableLatencyTimestamps(1)) != CUPTI_SUCCESS)
		crec_warn("cannot collect kernels' queued and submitted times (%s)", crec_cupti_str(r));
	if (!G.o.per_thread_buffers &&
	    (r = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &zsz, &zero)) !=
		    CUPTI_SUCCESS)
		crec_note("cannot turn off per-thread activity buffers (%s)", crec_cupti_str(r));
	G.pool = crec_pool_create(G.o.nbuf, G.o.bufsz);
	/* every queued item is a pool buffer or a mark, and marks are waited for
	 * one at a time: nbuf + 2 slots can never overflow */
	G.q = crec_queue_create(G.o.nbuf + 2);
	G.annot = crec_annot_create(CREC_ANNOT_MAX_NAMES, CREC_ANNOT_MAX_WINDOW);
	G.tmap = crec_tmap_create(CREC_TMAP_CAP);
	if (!G.pool || !G.q || !G.annot || !G.tmap) {
		crec_disable("out of memory");
		return;
	}
	if (crec_spawn(crec_writer_main, "cuptirec-writer") != 0) {
		crec_disable("cannot start the writer thread");
		return;
	}
	r = cuptiActivityRegisterCallbacks(crec_buffer_requested, crec_buffer_completed);
	if (r != CUPTI_SUCCESS) {
		char why[256];
		snprintf(why, sizeof why, "cannot register CUPTI buffer callbacks: %s", crec_cupti_str(r));
		crec_disable(why);
		return;
	}
	atexit(crec_atexit);
	crec_note("collector loaded (%s)", how);
	if (G.o.autostart && G.o.delay <= 0)
		crec_begin_locked(NULL);
	if ((G.o.delay > 0 && G.o.autostart) || G.o.duration > 0)
		if (crec_spawn(crec_timer_main, "cuptirec-timer") != 0)
			crec_warn("cannot start the --delay/--duration timer; recording from now on");
}

/* Initialise once; returns 0 when the collector is usable in this process. */
static int crec_ensure_init(const char *how)
{
	int ok;

	/* a forked child must not touch a lock another thread may have held */
	if (__atomic_load_n(&G.inited, __ATOMIC_ACQUIRE) && getpid() != G.pid)
		return -1;
	pthread_mutex_lock(&G.ctl);
	if (!G.inited)
		crec_init_locked(how);
	ok = !G.disabled && getpid() == G.pid;
	pthread_mutex_unlock(&G.ctl);
	return ok ? 0 : -1;
}

/* Called by the CUDA driver (CUDA_INJECTION64_PATH) during cuInit, on the
 * thread of the first CUDA call.  Returns 1 (success) whatever happens: a
 * collector that failed has said so and must not fail CUDA. */
int InitializeInjection(void)
{
	crec_ensure_init("CUDA_INJECTION64_PATH");
	return 1;
}

/* Load-time hook for LD_PRELOAD and -lcuptirec: make the driver call
 * InitializeInjection at the first CUDA call (lazy, so non-CUDA processes pay
 * nothing), or initialise now when another injection library is set. */
__attribute__((constructor)) static void crec_ctor(void)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	struct stat a, b;
	Dl_info di;

	if (!dladdr((void *)crec_ctor, &di) || !di.dli_fname)
		return;
	if (!inj || !*inj) {
		setenv("CUDA_INJECTION64_PATH", di.dli_fname, 0);
		return;
	}
	if (stat(inj, &a) == 0 && stat(di.dli_fname, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return;  /* the driver will call us */
	crec_ensure_init("LD_PRELOAD, beside another injection library");
}

/* ---- the C API (cuptirec.h) ----------------------------------------------- */

CREC_API int cuptirec_begin_window(const char *path)
{
	int rc;

	if (crec_ensure_init("cuptirec_begin_window") != 0)
		return -1;
	pthread_mutex_lock(&G.ctl);
	rc = crec_begin_locked(path);
	pthread_mutex_unlock(&G.ctl);
	return rc;
}

CREC_API int cuptirec_end_window(void)
{
	int rc;

	if (crec_ensure_init("cuptirec_end_window") != 0)
		return -1;
	pthread_mutex_lock(&G.ctl);
	rc = crec_end_locked();
	pthread_mutex_unlock(&G.ctl);
	return rc;
}

CREC_API int cuptirec_recording(void)
{
	return getpid() == G.pid && __atomic_load_n(&G.win, __ATOMIC_ACQUIRE) != NULL && !G.disabled;
}

/* Annotations this thread pushed through us (so a pop never pops Kineto's). */
static __thread unsigned crec_t_annot_depth;

CREC_API uint64_t cuptirec_push_annotation(const char *name)
{
	uint64_t id;

	if (crec_ensure_init("cuptirec_push_annotation") != 0)
		return 0;
	id = crec_annot_push(G.annot, name);
	if (cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, id) != CUPTI_SUCCESS) {
		crec_annot_pop(G.annot, id);
		return 0;
	}
	crec_t_annot_depth++;
	return id;
}

CREC_API int cuptirec_pop_annotation(void)
{
	uint64_t id = 0;

	if (crec_t_annot_depth == 0 || getpid() != G.pid)
		return -1;
	crec_t_annot_depth--;
	if (cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &id) != CUPTI_SUCCESS)
		return -1;
	crec_annot_pop(G.annot, id);
	return 0;
}

CREC_API int cuptirec_push_external_id(uint64_t id)
{
	if (crec_ensure_init("cuptirec_push_external_id") != 0)
		return -1;
	return cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) ==
			       CUPTI_SUCCESS ? 0 : -1;
}

CREC_API int cuptirec_pop_external_id(uint64_t *id)
{
	uint64_t v = 0;

	if (getpid() != G.pid || !G.sub)
		return -1;
	if (cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &v) != CUPTI_SUCCESS)
		return -1;
	if (id)
		*id = v;
	return 0;
}
