/* activity.c - the CUPTI side of the collector: the activity kinds, the
 * subscriber's and the buffers' callbacks, and the writer thread that encodes
 * each completed buffer into the window.  Apart from collector.c because these
 * run on CUPTI's threads, the application's and the writer's, not on the
 * control path that begins and ends windows (collector.c's design essay).
 */
/* dlsym(RTLD_DEFAULT) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "annot.h"
#include "clock.h"
#include "collector.h"
#include "encode.h"
#include "opts.h"
#include "pool.h"
#include "window.h"

/* A foreign clock is calibrated over at least this much real time before the
 * first buffer is mapped (the TSC rate is then known to about 1e-6). */
#define CREC_CLOCK_MIN_SPAN_NS 50000000ull

/* ---- names for the encoder ------------------------------------------------ */

static const char *crec_rt_names[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static const char *crec_drv_names[CUPTI_DRIVER_TRACE_CBID_SIZE];
/* Marks a cbid CUPTI has no name for, so it is asked once. */
static const char crec_noname[] = "";

const char *crec_api_name_cb(void *ud, int driver, uint32_t cbid)
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

const char *crec_demangle_cb(void *ud, const char *mangled)
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

int crec_callbacks(int on)
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

void crec_kinds_off(void)
{
	size_t i;
	int on = __atomic_exchange_n(&G.kinds_on, 0, __ATOMIC_ACQ_REL);

	for (i = 0; i < sizeof crec_kinds / sizeof crec_kinds[0]; i++)
		if (on & crec_kinds[i].act)
			cuptiActivityDisable(crec_kinds[i].kind);
	if (on & CREC_KIND_CONTEXT_ON)
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONTEXT);
}

int crec_kinds_on(int mask)
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

/* ---- CUPTI callbacks ------------------------------------------------------- */

void CUPTIAPI crec_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = G.pool ? crec_pool_get(G.pool) : NULL;

	*buffer = b;
	*size = b ? crec_pool_bufsize(G.pool) : 0;
	*max_records = 0;
}

void CUPTIAPI crec_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
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

static uint32_t crec_gettid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

void crec_register_thread(void)
{
	static __thread unsigned t_gen;
	unsigned g = __atomic_load_n(&G.gen, __ATOMIC_ACQUIRE);

	if (t_gen == g || !G.tmap)
		return;
	t_gen = g;
	/* Kineto's and CUPTI's opaque id: the low 32 bits of pthread_self, signed */
	crec_tmap_add(G.tmap, (int32_t)(uint32_t)(uintptr_t)pthread_self(), crec_gettid());
}

void CUPTIAPI crec_api_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
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

void *crec_writer_main(void *arg)
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
