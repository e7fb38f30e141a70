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
	/* Counters, for the trailer and the tests. */
	unsigned long long count[CREC_EV_NKINDS];
	unsigned long long incomplete;  /* GPU records with a 0 start/end (forced flush) */
	unsigned long long unknown;     /* records of kinds we do not encode */
} crec_enc;

/* Append the event object for REC to OUT (no separator, no newline).
 * Returns 1 when an event was written, 0 when the record was skipped (a kind
 * we do not encode, or a GPU activity CUPTI never completed, as a forced flush
 * can deliver: start or end 0).  Record layouts are CUDA 13.0's: Kernel10,
 * Memcpy6, Memset4, API, ExternalCorrelation, Overhead3, Synchronization2,
 * CudaEvent2. */
int crec_encode(crec_enc *e, const CUpti_Activity *rec, crec_jbuf *out);

/* The name CUPTI's overhead kind K has in Kineto's traces ("Activity Buffer
 * Request", ...); the reference merge recognises the trailing buffer request
 * by it.  Unknown kinds give "Unknown". */
const char *crec_overhead_name(uint32_t k);

#endif
