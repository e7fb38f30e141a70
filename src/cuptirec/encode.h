/* encode.h - CUPTI activity records as trace-window events (JSON objects). */
#ifndef CREC_ENCODE_H
#define CREC_ENCODE_H

#include <stdint.h>
#include <cupti_activity.h>
#include "clock.h"
#include "jbuf.h"

/* Kinds of event the encoder counts separately (index into crec_enc.count). */
enum crec_ev {
	CREC_EV_KERNEL, CREC_EV_MEMCPY, CREC_EV_MEMSET, CREC_EV_RUNTIME, CREC_EV_DRIVER,
	CREC_EV_EXTCORR, CREC_EV_OVERHEAD, CREC_EV_SYNC, CREC_EV_EVENT,
	CREC_EV_NKINDS
};

/* Device ids the encoder tracks per window (CUPTI's deviceId, the CUDA device
 * ordinal); a larger id is written in events but left out of the set. */
#define CREC_MAX_DEVICES 256
/* Contexts the context -> device map holds; one per device is the rule, green
 * contexts and cuCtxCreate add a few.  A context beyond it gets no device. */
#define CREC_CTXMAP_CAP 256

/* Which device each CUDA context belongs to, learned from the records that
 * carry both ids (kernels, copies and sets, as Kineto learns it, and CONTEXT
 * records, which CUPTI dumps for every live context when the kind is enabled,
 * so that a synchronisation recorded before the context's first kernel
 * completes still finds its device): what a cuda_sync event, which names only
 * its context, needs for its device_id.  The first pair seen for a
 * context wins; a context id is never reused within a process, so the owner
 * keeps one map across windows.  Zero-initialised it is empty. */
typedef struct crec_ctxmap {
	uint32_t n;
	struct {
		uint32_t ctx, dev;
	} e[CREC_CTXMAP_CAP];
} crec_ctxmap;

/* Record that context CTX is on device DEV, unless CTX is known already or the
 * map is full. */
void crec_ctxmap_put(crec_ctxmap *m, uint32_t ctx, uint32_t dev);

/* The device of context CTX: 1 and *DEV set, or 0 when unknown. */
int crec_ctxmap_get(const crec_ctxmap *m, uint32_t ctx, uint32_t *dev);

/* The encoder's context.  It is used by one thread at a time (the writer). */
typedef struct crec_enc {
	/* Name of a runtime (DRIVER == 0) or driver (DRIVER == 1) callback id as
	 * CUPTI spells it ("cudaLaunchKernel_v7000"), or NULL when unknown.  The
	 * encoder drops a trailing "_v<digits>" as the reference merge does.  May
	 * itself be NULL: every API record is then named "cbid_<N>". */
	const char *(*api_name)(void *ud, int driver, uint32_t cbid);
	/* Demangled form of a kernel name, or NULL to keep the name as it is;
	 * the result must stay valid until the next call.  May be NULL. */
	const char *(*demangle)(void *ud, const char *mangled);
	void *ud;
	/* Clock map applied to every timestamp; NULL: timestamps are already
	 * CLOCK_REALTIME ns. */
	const crec_clock *clock;
	/* The context -> device map the encoder fills and reads (cuda_sync
	 * events get no device_id without one).  May be NULL. */
	crec_ctxmap *ctxmap;
	/* The devices the window's kernels, copies, sets and CONTEXT records
	 * name, for its "device_properties": bit D % 64 of devices[D / 64]. */
	uint64_t devices[CREC_MAX_DEVICES / 64];
	/* Counters, for the trailer and the tests. */
	unsigned long long count[CREC_EV_NKINDS];
	unsigned long long incomplete;  /* GPU records with a 0 start/end (forced flush) */
	unsigned long long unknown;     /* records of kinds we do not encode */
} crec_enc;

/* Append the event object for REC to OUT (no separator, no newline).
 * Returns 1 when an event was written, 0 when the record was skipped (a kind
 * we do not encode, or a GPU activity CUPTI never completed, as a forced flush
 * can deliver: start or end 0; or a CONTEXT record, which only feeds the
 * context -> device map).  Record layouts are CUDA 13.0's: Kernel10, Memcpy6,
 * Memset4, API, ExternalCorrelation, Overhead3, Synchronization2, CudaEvent2,
 * Context3. */
int crec_encode(crec_enc *e, const CUpti_Activity *rec, crec_jbuf *out);

/* The name CUPTI's overhead kind K has in Kineto's traces ("Activity Buffer
 * Request", ...); the reference merge recognises the trailing buffer request
 * by it.  Unknown kinds give "Unknown". */
const char *crec_overhead_name(uint32_t k);

#endif
