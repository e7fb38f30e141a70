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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "annot.h"
#include "clock.h"
#include "cuptirec.h"
#include "devprops.h"
#include "encode.h"
#include "jbuf.h"
#include "opts.h"
#include "pathpat.h"
#include "pool.h"
#include "window.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

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
/* A foreign clock is calibrated over at least this much real time before the
 * first buffer is mapped (the TSC rate is then known to about 1e-6). */
#define CREC_CLOCK_MIN_SPAN_NS 50000000ull

struct crec_opts {
	char output[PATH_MAX];
	int gzip;
	int activities;
	double delay, duration;
	size_t bufsz, nbuf;
	int autostart;
	int quiet;
	double exit_timeout;
	int per_thread_buffers;
	int thread_callbacks;
	int latency_timestamps;
};

/* The collector's state: one per process. */
static struct {
	pthread_mutex_t ctl;          /* serialises init, begin, end, atexit */
	int inited;
	volatile int disabled;        /* set once; read without the lock */
	pid_t pid;
	char host[256];               /* crec_path_host's name, "" when unknown */
	long rank;                    /* crec_path_rank's rank, -1 when unknown */
	const char *rank_from;        /* the variable it came from, or NULL */
	struct crec_opts o;
	CUpti_SubscriberHandle sub;
	int system_ids;               /* CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM in effect */
	uint32_t pid_max;
	crec_pool *pool;
	crec_queue *q;
	crec_annot *annot;
	crec_tmap *tmap;
	/* the window being recorded; read by the writer thread */
	crec_window *win;
	char win_path[PATH_MAX];
	unsigned win_seq;
	uint64_t win_start_ns;
	unsigned long long win_misses0;
	crec_clock clock;
	crec_enc enc;
	crec_ctxmap ctxmap;           /* context -> device, kept across windows */
	int kinds_on;                 /* CUPTI kinds enabled now (mask of enum crec_act) */
	unsigned gen;                 /* window generation, for thread registration */
	unsigned long long dropped;   /* CUPTI's dropped count this window (atomic) */
	unsigned long long lost_items;/* buffers the queue could not take (atomic) */
	uint64_t mark;
	int write_failed;             /* writer side: output failed this window */
	int exiting;
	/* --delay / --duration timer */
	pthread_mutex_t tmu;
	pthread_cond_t tcv;
} G = {
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

__attribute__((format(printf, 1, 2))) static void crec_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	crec_vmsg(0, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2))) static void crec_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	crec_vmsg(1, fmt, ap);
	va_end(ap);
}

/* CUPTI's text for result R. */
static const char *crec_cupti_str(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

/* ---- small helpers ------------------------------------------------------ */

/* CLOCK_REALTIME in ns. */
static uint64_t crec_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A calibration pair: CUPTI's timestamp and the realtime at the same moment
 * (the midpoint of two realtime reads around it).  Returns 0 or -1. */
static int crec_clock_pair(uint64_t *cupti, uint64_t *real)
{
	uint64_t a = crec_real_ns(), b;

	if (cuptiGetTimestamp(cupti) != CUPTI_SUCCESS)
		return -1;
	b = crec_real_ns();
	*real = a + (b - a) / 2;
	return 0;
}

static uint32_t crec_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
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

/* Add the calling thread to the window's thread map, once per window. */
static void crec_register_thread(void)
{
	static __thread unsigned t_gen;
	unsigned g = __atomic_load_n(&G.gen, __ATOMIC_ACQUIRE);

	if (t_gen == g || !G.tmap)
		return;
	t_gen = g;
	/* Kineto's and CUPTI's opaque id: the low 32 bits of pthread_self, signed */
	crec_tmap_add(G.tmap, (int32_t)(uint32_t)(uintptr_t)pthread_self(), crec_gettid());
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
	o->per_thread_buffers = crec_env_flag("CUPTIREC_PER_THREAD_BUFFERS");
	v = getenv("CUPTIREC_THREAD_CALLBACKS");
	o->thread_callbacks = !(v && (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
				      !strcasecmp(v, "off")));
	o->latency_timestamps = crec_env_flag("CUPTIREC_LATENCY_TIMESTAMPS");
}

/* ---- names for the encoder ------------------------------------------------ */

static const char *crec_rt_names[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static const char *crec_drv_names[CUPTI_DRIVER_TRACE_CBID_SIZE];
/* Marks a cbid CUPTI has no name for, so it is asked once. */
static const char crec_noname[] = "";

/* crec_enc.api_name: CUPTI's callback name, cached per cbid (writer only). */
static const char *crec_api_name_cb(void *ud, int driver, uint32_t cbid)
{
	const char **tab = driver ? crec_drv_names : crec_rt_names;
	size_t n = driver ? CUPTI_DRIVER_TRACE_CBID_SIZE : CUPTI_RUNTIME_TRACE_CBID_SIZE;
	const char *nm = NULL;

	if (cbid < n && tab[cbid])
		return tab[cbid] == crec_noname ? NULL : tab[cbid];
	if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
				 &nm) != CUPTI_SUCCESS)
		nm = NULL;
	if (cbid < n)
		tab[cbid] = nm ? nm : crec_noname;
	return nm;
}

typedef char *(*crec_cxa_demangle_fn)(const char *, char *, size_t *, int *);

/* Demangled kernel names, keyed by the mangled text (not its address: a module
 * unloaded and another loaded may reuse it).  4096 slots, replaced on
 * collision, so memory stays bounded whatever the number of kernels. */
#define CREC_DM_SLOTS 4096
static struct crec_dm_slot {
	char *mangled;
	char *demangled;
} *crec_dm;
static crec_cxa_demangle_fn crec_cxa_demangle;
static int crec_dm_looked_up;

/* crec_enc.demangle: the C++ demangling of MANGLED through libstdc++'s
 * __cxa_demangle (found at run time, so a C program does not need libstdc++),
 * or NULL to keep the name.  Writer thread only. */
static const char *crec_demangle_cb(void *ud, const char *mangled)
{
	uint64_t h = 1469598103934665603ull;
	const char *s;
	struct crec_dm_slot *sl;
	char *dm, *mc;
	int status = 0;

	if (mangled[0] != '_' || mangled[1] != 'Z')
		return NULL;
	if (!crec_dm_looked_up) {
		crec_dm_looked_up = 1;
		crec_cxa_demangle = (crec_cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!crec_cxa_demangle) {
			void *h2 = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
			if (h2)
				crec_cxa_demangle = (crec_cxa_demangle_fn)dlsym(h2, "__cxa_demangle");
		}
		crec_dm = calloc(CREC_DM_SLOTS, sizeof *crec_dm);
	}
	if (!crec_cxa_demangle || !crec_dm)
		return NULL;
	for (s = mangled; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	sl = &crec_dm[h % CREC_DM_SLOTS];
	if (sl->mangled && strcmp(sl->mangled, mangled) == 0)
		return sl->demangled;
	dm = crec_cxa_demangle(mangled, NULL, NULL, &status);
	if (!dm || status != 0) {
		free(dm);
		return NULL;
	}
	mc = strdup(mangled);
	if (!mc) {
		free(dm);
		return NULL;
	}
	free(sl->mangled);
	free(sl->demangled);
	sl->mangled = mc;
	sl->demangled = dm;
	return dm;
}

/* ---- device properties ------------------------------------------------------ */

/* The driver functions devprops.h declares with plain ints. */
_Static_assert(sizeof(CUdevice) == sizeof(int), "CUdevice is not an int");
_Static_assert(sizeof(CUresult) == sizeof(int), "CUresult is not int-sized");
_Static_assert(sizeof(CUdevice_attribute) == sizeof(int), "CUdevice_attribute is not int-sized");

/* Check crec_devattrs against cuda.h once (a table cannot be checked at
 * compile time in C).  Returns 0, or -1 with a warning: a wrong number would
 * write one property under another's name. */
static int crec_devattrs_check(void)
{
	static const int want[CREC_DA_N] = {
		[CREC_DA_COMPUTE_MAJOR] = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
		[CREC_DA_COMPUTE_MINOR] = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
		[CREC_DA_MAX_THREADS_PER_BLOCK] = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
		[CREC_DA_MAX_THREADS_PER_MP] = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
		[CREC_DA_REGS_PER_BLOCK] = CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
		[CREC_DA_WARP_SIZE] = CU_DEVICE_ATTRIBUTE_WARP_SIZE,
		[CREC_DA_SHARED_MEM_PER_BLOCK] = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
		[CREC_DA_NUM_SMS] = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		[CREC_DA_REGS_PER_MP] = CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
		[CREC_DA_SHARED_MEM_PER_BLOCK_OPTIN] = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
		[CREC_DA_SHARED_MEM_PER_MP] = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
		[CREC_DA_RESERVED_SHARED_MEM_PER_BLOCK] = CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
		[CREC_DA_MAX_BLOCKS_PER_MP] = CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
	};
	int i;

	for (i = 0; i < CREC_DA_N; i++)
		if (crec_devattrs[i].cu_attribute != want[i]) {
			crec_warn("internal error: device attribute %s is %d, cuda.h says %d; "
				  "no device properties written", crec_devattrs[i].key,
				  crec_devattrs[i].cu_attribute, want[i]);
			return -1;
		}
	return 0;
}

/* Each device's properties, read once per process (they do not change).
 * Used by whoever ends a window, under G.ctl. */
static struct {
	int state;                    /* 0: not set up; 1: usable; -1: no driver */
	crec_cudrv drv;
	signed char read[CREC_MAX_DEVICES]; /* 0 not yet, 1 read, -1 failed */
	crec_devprops *p;             /* CREC_MAX_DEVICES of them */
} crec_dev;

/* Find the driver's functions in the libcuda the process has loaded (the
 * collector must not link it) and allocate the cache.  Returns 0 or -1. */
static int crec_dev_setup(void)
{
	void *h;

	if (crec_dev.state)
		return crec_dev.state > 0 ? 0 : -1;
	crec_dev.state = -1;
	if (crec_devattrs_check() != 0)
		return -1;
	h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		crec_note("cannot find libcuda.so.1; the window has no device properties");
		return -1;
	}
	crec_dev.drv.device_get = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
	crec_dev.drv.get_attribute = (int (*)(int *, int, int))dlsym(h, "cuDeviceGetAttribute");
	crec_dev.drv.get_name = (int (*)(char *, int, int))dlsym(h, "cuDeviceGetName");
	/* cuda.h maps cuDeviceTotalMem to the _v2 entry point (size_t bytes) */
	crec_dev.drv.total_mem = (int (*)(size_t *, int))dlsym(h, "cuDeviceTotalMem_v2");
	crec_dev.p = calloc(CREC_MAX_DEVICES, sizeof *crec_dev.p);
	if (!crec_dev.drv.device_get || !crec_dev.drv.get_attribute || !crec_dev.drv.get_name ||
	    !crec_dev.drv.total_mem || !crec_dev.p) {
		crec_note("cannot use libcuda's device queries; the window has no device properties");
		free(crec_dev.p);
		crec_dev.p = NULL;
		return -1;
	}
	crec_dev.state = 1;
	return 0;
}

/* Append the "device_properties" array for the devices the window's records
 * named (ENC->devices) to B.  Returns the number of devices written; 0 means
 * nothing was appended.  Call with no activity kind enabled: the driver calls
 * must not become records of the window.  Caller holds G.ctl. */
static size_t crec_device_properties(const crec_enc *enc, crec_jbuf *b)
{
	const crec_devprops *list[CREC_MAX_DEVICES];
	uint32_t d;
	size_t n = 0;

	for (d = 0; d < CREC_MAX_DEVICES; d++) {
		if (!(enc->devices[d / 64] & (1ull << (d % 64))))
			continue;
		if (crec_dev_setup() != 0)
			return 0;
		if (!crec_dev.read[d]) {
			crec_dev.read[d] = crec_devprops_read(&crec_dev.drv, d, &crec_dev.p[d]) == 0 ? 1 : -1;
			if (crec_dev.read[d] < 0)
				crec_note("cannot read the properties of device %u; the window has none for it",
					  (unsigned)d);
		}
		if (crec_dev.read[d] > 0)
			list[n++] = &crec_dev.p[d];
	}
	if (n)
		crec_devprops_json(b, list, n);
	return n;
}

/* ---- CUPTI kinds ---------------------------------------------------------- */

static const struct {
	int act;
	CUpti_ActivityKind kind;
} crec_kinds[] = {
	{ CREC_ACT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL },
	{ CREC_ACT_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY },
	{ CREC_ACT_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET },
	{ CREC_ACT_RUNTIME, CUPTI_ACTIVITY_KIND_RUNTIME },
	{ CREC_ACT_DRIVER, CUPTI_ACTIVITY_KIND_DRIVER },
	{ CREC_ACT_EXTCORR, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION },
	{ CREC_ACT_OVERHEAD, CUPTI_ACTIVITY_KIND_OVERHEAD },
	{ CREC_ACT_SYNC, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION },
	{ CREC_ACT_EVENT, CUPTI_ACTIVITY_KIND_CUDA_EVENT },
};

/* The calls the reference monitor leaves out: frequent, cheap and useless on
 * a timeline (torch calls cudaGetDevice around nearly every op). */
static const CUpti_CallbackId crec_noisy_runtime[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020,
};
static const CUpti_CallbackId crec_noisy_driver[] = {
	CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
	CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
	CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
};

/* Driver calls whose entry registers the thread: launches and copies of
 * programs (Triton, JAX) that bypass the runtime.  The whole driver domain
 * would cost a callback for every runtime call's driver calls. */
static const CUpti_CallbackId crec_cb_driver[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
	CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
};

/* Turn the thread-registration callbacks on or off.  Returns 0 or -1. */
static int crec_callbacks(int on)
{
	CUptiResult r;
	size_t i;

	if (!G.o.thread_callbacks)
		return 0;
	r = cuptiEnableDomain(on, G.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	for (i = 0; r == CUPTI_SUCCESS && i < sizeof crec_cb_driver / sizeof crec_cb_driver[0]; i++)
		r = cuptiEnableCallback(on, G.sub, CUPTI_CB_DOMAIN_DRIVER_API, crec_cb_driver[i]);
	if (r != CUPTI_SUCCESS && on) {
		crec_warn("cannot enable CUPTI callbacks: %s; the thread map stays empty", crec_cupti_str(r));
		return -1;
	}
	return 0;
}

/* G.kinds_on's bit for CUPTI_ACTIVITY_KIND_CONTEXT, which no group names: it
 * is on while synchronisation is recorded, for the context -> device map. */
#define CREC_KIND_CONTEXT_ON (1 << 30)

/* Disable every kind we enabled.  Safe from any thread; errors ignored (we
 * are stopping anyway). */
static void crec_kinds_off(void)
{
	size_t i;
	int on = __atomic_exchange_n(&G.kinds_on, 0, __ATOMIC_ACQ_REL);

	for (i = 0; i < sizeof crec_kinds / sizeof crec_kinds[0]; i++)
		if (on & crec_kinds[i].act)
			cuptiActivityDisable(crec_kinds[i].kind);
	if (on & CREC_KIND_CONTEXT_ON)
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONTEXT);
}

/* Enable the kinds in MASK and silence the noisy callback ids.  Returns 0,
 * or -1 after a warning (kinds enabled so far are disabled again). */
static int crec_kinds_on(int mask)
{
	CUptiResult r;
	size_t i;

	for (i = 0; i < sizeof crec_kinds / sizeof crec_kinds[0]; i++) {
		if (!(mask & crec_kinds[i].act))
			continue;
		r = cuptiActivityEnable(crec_kinds[i].kind);
		if (r != CUPTI_SUCCESS) {
			crec_warn("cannot enable CUPTI activity kind %d: %s", (int)crec_kinds[i].kind,
				  crec_cupti_str(r));
			crec_kinds_off();
			return -1;
		}
		__atomic_or_fetch(&G.kinds_on, crec_kinds[i].act, __ATOMIC_ACQ_REL);
	}
	/* A cuda_sync record names its context, not its device.  CONTEXT
	 * records (one per context: the live ones dumped now, new ones as they
	 * are created) tell the encoder which device a context is on before any
	 * kernel of it completes.  Without them the map is learned from kernels
	 * and copies alone, as Kineto learns it. */
	if (mask & CREC_ACT_SYNC) {
		r = cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_CONTEXT);
		if (r == CUPTI_SUCCESS)
			__atomic_or_fetch(&G.kinds_on, CREC_KIND_CONTEXT_ON, __ATOMIC_ACQ_REL);
		else
			crec_note("cannot record CUDA contexts (%s); a synchronisation may lack its device",
				  crec_cupti_str(r));
	}
	/* per-cbid switches exist only once the kind is enabled; failures only
	 * mean more records */
	if (mask & CREC_ACT_RUNTIME)
		for (i = 0; i < sizeof crec_noisy_runtime / sizeof crec_noisy_runtime[0]; i++)
			cuptiActivityEnableRuntimeApi(crec_noisy_runtime[i], 0);
	if (mask & CREC_ACT_DRIVER)
		for (i = 0; i < sizeof crec_noisy_driver / sizeof crec_noisy_driver[0]; i++)
			cuptiActivityEnableDriverApi(crec_noisy_driver[i], 0);
	return 0;
}

/* Turn the collector off for good after a failure: one warning (WHY), kinds
 * disabled.  Any thread. */
static void crec_disable(const char *why)
{
	if (__atomic_exchange_n(&G.disabled, 1, __ATOMIC_ACQ_REL))
		return;
	crec_warn("%s; collector disabled", why);
	if (G.sub)
		crec_kinds_off();
}

/* ---- CUPTI callbacks ------------------------------------------------------- */

/* CUpti_BuffersCallbackRequestFunc: a pool buffer, or NULL (CUPTI drops and
 * counts) when the pool is exhausted.  Never blocks. */
static void CUPTIAPI crec_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = G.pool ? crec_pool_get(G.pool) : NULL;

	*buffer = b;
	*size = b ? crec_pool_bufsize(G.pool) : 0;
	*max_records = 0;
}

/* CUpti_BuffersCallbackCompleteFunc: queue the buffer for the writer.
 * Called from CUPTI's thread or from a thread inside cuptiActivityFlushAll. */
static void CUPTIAPI crec_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
					   size_t valid)
{
	crec_item it = { .kind = CREC_ITEM_BUFFER, .buf = buffer, .valid = valid };
	size_t dropped = 0;

	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		__atomic_add_fetch(&G.dropped, dropped, __ATOMIC_RELAXED);
	if (!buffer)
		return;
	if (valid == 0 || getpid() != G.pid || crec_queue_push(G.q, &it) != 0) {
		if (valid)
			__atomic_add_fetch(&G.lost_items, 1, __ATOMIC_RELAXED);
		crec_pool_put(G.pool, buffer);
	}
}

/* The subscriber callback: register the thread at API entry; flush before a
 * cudaDeviceReset destroys the context's pending records. */
static void CUPTIAPI crec_api_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				       const void *data)
{
	const CUpti_CallbackData *cd = data;

	if ((dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API) || !cd ||
	    cd->callbackSite != CUPTI_API_ENTER)
		return;
	crec_register_thread();
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020)
		cuptiActivityFlushAll(0);
}

/* ---- the writer thread -------------------------------------------------------- */

/* crec_next_fn over CUPTI's own buffer format. */
static int crec_cupti_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	CUptiResult r = cuptiActivityGetNextRecord(buf, valid, rec);

	if (r == CUPTI_SUCCESS)
		return 1;
	if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
		return 0;
	return -1;
}

/* Take a calibration sample for a foreign clock before a buffer is encoded;
 * the first time, wait (on this thread only) until the samples span
 * CREC_CLOCK_MIN_SPAN_NS of real time. */
static void crec_writer_calibrate(void)
{
	uint64_t c, r, span;
	struct timespec ts;

	if (!G.clock.foreign || crec_clock_pair(&c, &r))
		return;
	crec_clock_sample(&G.clock, c, r);
	span = crec_clock_span_ns(&G.clock);
	if (span < CREC_CLOCK_MIN_SPAN_NS) {
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(CREC_CLOCK_MIN_SPAN_NS - span);
		nanosleep(&ts, NULL);
		if (crec_clock_pair(&c, &r) == 0)
			crec_clock_sample(&G.clock, c, r);
	}
}

/* The writer: encode queued buffers into the current window, recycle them,
 * acknowledge marks.  Runs until the process ends. */
static void *crec_writer_main(void *arg)
{
	crec_item it;
	crec_window *w;

	for (;;) {
		if (crec_queue_pop(G.q, &it, NULL) != 0)
			continue;
		if (it.kind == CREC_ITEM_QUIT)
			break;
		if (it.kind == CREC_ITEM_MARK) {
			crec_queue_ack(G.q, it.mark);
			continue;
		}
		w = __atomic_load_n(&G.win, __ATOMIC_ACQUIRE);
		if (w && !G.write_failed) {
			crec_writer_calibrate();
			if (crec_window_add_buffer(w, &G.enc, it.buf, it.valid, crec_cupti_next) < 0) {
				char why[PATH_MAX + 64];
				G.write_failed = 1;
				snprintf(why, sizeof why, "writing %s failed", G.win_path);
				crec_disable(why);
			}
		}
		crec_pool_put(G.pool, it.buf);
	}
	return NULL;
}

/* ---- windows ------------------------------------------------------------------- */

static int crec_end_locked(void);

/* Begin a window written to PATTERN (NULL: the configured one).  Caller
 * holds G.ctl.  Returns 0 or -1 (after a warning). */
static int crec_begin_locked(const char *pattern)
{
	char err[PATH_MAX + 128];
	crec_path_vars pv;
	uint64_t c, r;
	crec_window *w;

	if (G.disabled || G.exiting)
		return -1;
	if (G.win)
		crec_end_locked();
	if (!pattern)
		pattern = G.o.output;
	if (crec_path_check(pattern)) {
		crec_warn("%s: %s", pattern, crec_path_check(pattern));
		return -1;
	}
	pv.pid = (long)G.pid;
	pv.seq = G.win_seq;
	pv.host = G.host;
	pv.rank = G.rank;
	if (crec_path_expand(pattern, &pv, G.win_path, sizeof G.win_path)) {
		crec_warn("%s: output path too long", pattern);
		return -1;
	}
	w = crec_window_open(G.win_path, G.o.gzip, err, sizeof err);
	if (!w) {
		crec_warn("cannot create the window file %s", err);
		return -1;
	}
	if (crec_clock_pair(&c, &r) == 0) {
		crec_clock_init(&G.clock, c, r);
	} else {
		r = crec_real_ns();
		crec_clock_init(&G.clock, r, r);
	}
	if (G.clock.foreign)
		crec_note("CUPTI's clock is not CLOCK_REALTIME (another profiler changed it); "
			  "timestamps are mapped to it");
	memset(&G.enc, 0, sizeof G.enc);
	G.enc.api_name = crec_api_name_cb;
	G.enc.demangle = crec_demangle_cb;
	G.enc.clock = &G.clock;
	G.enc.ctxmap = &G.ctxmap;
	G.write_failed = 0;
	__atomic_store_n(&G.dropped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&G.lost_items, 0, __ATOMIC_RELAXED);
	G.win_misses0 = crec_pool_misses(G.pool);
	crec_annot_window_begin(G.annot);
	crec_tmap_reset(G.tmap);
	__atomic_add_fetch(&G.gen, 1, __ATOMIC_ACQ_REL);
	crec_register_thread();
	G.win_start_ns = crec_real_ns();
	__atomic_store_n(&G.win, w, __ATOMIC_RELEASE);
	crec_callbacks(1);
	if (crec_kinds_on(G.o.activities) != 0) {
		crec_end_locked();
		crec_disable("cannot enable CUPTI activity recording");
		return -1;
	}
	crec_note("recording to %s", G.win_path);
	return 0;
}

/* Append the "cuptirec" member (producer facts, counters) to B. */
static void crec_extra_json(crec_jbuf *b, unsigned long long misses, unsigned long long ann_lost,
			    size_t tmap_skipped)
{
	static const char *const names[CREC_EV_NKINDS] = {
		"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
		"external_correlation", "overhead", "cuda_sync", "cuda_event",
	};
	int i;

	crec_jbuf_lit(b, "\"cuptirec\": {\"version\": \"" PACKAGE_VERSION "\", \"thread_id_type\": ");
	if (G.system_ids)
		crec_jbuf_lit(b, "\"system\"");
	else
		crec_jbuf_lit(b, "\"default\"");
	crec_jbuf_lit(b, ", \"clock\": ");
	if (G.clock.foreign)
		crec_jbuf_lit(b, "\"mapped\"");
	else
		crec_jbuf_lit(b, "\"cupti-realtime\"");
	crec_jbuf_lit(b, ", \"events\": {");
	for (i = 0; i < CREC_EV_NKINDS; i++) {
		if (i)
			crec_jbuf_lit(b, ", ");
		crec_jbuf_lit(b, "\"");
		crec_jbuf_puts(b, names[i]);
		crec_jbuf_lit(b, "\": ");
		crec_jbuf_u64(b, G.enc.count[i]);
	}
	crec_jbuf_lit(b, "}, \"incomplete_records\": ");
	crec_jbuf_u64(b, G.enc.incomplete);
	crec_jbuf_lit(b, ", \"pool_misses\": ");
	crec_jbuf_u64(b, misses);
	crec_jbuf_lit(b, ", \"annotation_names_lost\": ");
	crec_jbuf_u64(b, ann_lost);
	crec_jbuf_lit(b, ", \"thread_map_entries_omitted\": ");
	crec_jbuf_u64(b, tmap_skipped);
	crec_jbuf_lit(b, "}");
}

/* End the current window: stop, flush, drain the writer, write the trailer.
 * Caller holds G.ctl.  Returns 0, or -1 when there was no window or the file
 * could not be completed (after a warning). */
static int crec_end_locked(void)
{
	crec_jbuf ann = { 0 }, tmap = { 0 }, extra = { 0 }, props = { 0 };
	struct timespec dl;
	crec_trailer t;
	crec_source src;
	crec_window *w = G.win;
	char err[PATH_MAX + 128];
	unsigned long long misses, ann_lost, dropped, lost;
	size_t d = 0, skipped;
	crec_item mk = { .kind = CREC_ITEM_MARK };
	CUptiResult r;
	int rc;

	if (!w)
		return -1;
	crec_callbacks(0);
	crec_kinds_off();
	/* the end of the span recorded: GPU work launched before may end later */
	src.end_ns = crec_real_ns();
	r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS)
		crec_warn("flushing CUPTI's buffers failed: %s; the window may lack records", crec_cupti_str(r));
	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &d) == CUPTI_SUCCESS && d)
		__atomic_add_fetch(&G.dropped, d, __ATOMIC_RELAXED);
	mk.mark = ++G.mark;
	crec_deadline(&dl, G.o.exit_timeout);
	if (crec_queue_push(G.q, &mk) != 0 || crec_queue_wait_mark(G.q, mk.mark, &dl) != 0) {
		/* the writer still owns W: leave it (and the file incomplete) */
		crec_warn("the writer did not finish within %g s; %s is left incomplete "
			  "(raise CUPTIREC_EXIT_TIMEOUT)", G.o.exit_timeout, G.win_path);
		__atomic_store_n(&G.disabled, 1, __ATOMIC_RELEASE);
		return -1;
	}
	__atomic_store_n(&G.win, NULL, __ATOMIC_RELEASE);
	misses = crec_pool_misses(G.pool) - G.win_misses0;
	dropped = __atomic_load_n(&G.dropped, __ATOMIC_RELAXED);
	lost = __atomic_load_n(&G.lost_items, __ATOMIC_RELAXED);
	ann_lost = crec_annot_window_end(G.annot, &ann);
	skipped = crec_tmap_write_json(G.tmap, (long)G.pid, G.system_ids, G.pid_max, &tmap);
	crec_extra_json(&extra, misses, ann_lost, skipped);
	/* the kinds are off since crec_kinds_off above */
	if (crec_device_properties(&G.enc, &props))
		crec_jbuf_put(&props, "", 1);
	crec_jbuf_put(&ann, "", 1);  /* NUL-terminate the texts */
	crec_jbuf_put(&tmap, "", 1);
	crec_jbuf_put(&extra, "", 1);
	t.user_annotations = ann.failed ? NULL : ann.p;
	t.thread_resource_map = tmap.failed ? NULL : tmap.p;
	t.extra = extra.failed ? NULL : extra.p;
	t.start_ns = G.win_start_ns;
	t.dropped_records = dropped;
	/* the launch members, Kineto's copy and set names, cuda_sync device ids
	 * and device_properties (cuptimerge-window(5)) */
	t.window_version = 2;
	t.device_properties = props.len && !props.failed ? props.p : NULL;
	src.host = G.host;
	src.pid = (long)G.pid;
	src.rank = G.rank;
	src.rank_from = G.rank_from;
	src.start_ns = G.win_start_ns;
	t.source = &src;
	{
		unsigned long long nev = crec_window_events(w);
		rc = crec_window_close(w, &t, err, sizeof err);
		if (rc != 0)
			crec_warn("the window file is incomplete: %s", err);
		else
			crec_note("%s: %llu events (%llu kernels, %llu runtime, %llu driver), %llu dropped",
				  G.win_path, nev, G.enc.count[CREC_EV_KERNEL], G.enc.count[CREC_EV_RUNTIME],
				  G.enc.count[CREC_EV_DRIVER], dropped);
	}
	if (dropped || lost)
		crec_warn("%llu activity records dropped (buffer pool empty %llu times); "
			  "raise CUPTIREC_BUFFERS or CUPTIREC_BUFFER_SIZE", dropped + lost, misses);
	if (ann_lost)
		crec_warn("%llu annotation names not kept (limits reached)", ann_lost);
	crec_jbuf_free(&ann);
	crec_jbuf_free(&tmap);
	crec_jbuf_free(&extra);
	crec_jbuf_free(&props);
	G.win_seq++;
	return rc;
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
