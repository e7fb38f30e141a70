/* collector.h - the collector's state and what its files share: collector.c
 * (lifetime, options, C API), activity.c (CUPTI's callbacks, the writer
 * thread), winctl.c (a window's begin and end), devquery.c (device
 * properties).  Internal to libcuptirec; the design essay is collector.c's.
 */
#ifndef CREC_COLLECTOR_H
#define CREC_COLLECTOR_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cupti.h>

#include "annot.h"
#include "clock.h"
#include "encode.h"
#include "jbuf.h"
#include "pool.h"
#include "window.h"

struct crec_opts {
	char output[PATH_MAX];
	int gzip;
	int activities;
	double delay, duration;
	size_t bufsz, nbuf;
	int autostart;
	int quiet;
	double exit_timeout;
	double fifo_wait;             /* CUPTIREC_FIFO_WAIT: a FIFO's reader, seconds */
	int per_thread_buffers;
	int thread_callbacks;
	int latency_timestamps;
};

/* The collector's state: one per process. */
struct crec_state {
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
};

/* Defined in collector.c. */
extern struct crec_state G;

/* ---- collector.c ---------------------------------------------------------- */

/* Print "cuptirec: pid N: MESSAGE" on stderr.  crec_note's messages are
 * silenced by CUPTIREC_QUIET; crec_warn's never are. */
__attribute__((format(printf, 1, 2))) void crec_warn(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void crec_note(const char *fmt, ...);

/* CUPTI's text for result R. */
const char *crec_cupti_str(CUptiResult r);

/* CLOCK_REALTIME in ns. */
uint64_t crec_real_ns(void);

/* A calibration pair: CUPTI's timestamp and the realtime at the same moment
 * (the midpoint of two realtime reads around it).  Returns 0 or -1. */
int crec_clock_pair(uint64_t *cupti, uint64_t *real);

/* Turn the collector off for good after a failure: one warning (WHY), kinds
 * disabled.  Any thread. */
void crec_disable(const char *why);

/* ---- activity.c ----------------------------------------------------------- */

/* crec_enc.api_name: CUPTI's callback name, cached per cbid (writer only). */
const char *crec_api_name_cb(void *ud, int driver, uint32_t cbid);

/* crec_enc.demangle: the C++ demangling of MANGLED through libstdc++'s
 * __cxa_demangle (found at run time, so a C program does not need libstdc++),
 * or NULL to keep the name.  Writer thread only. */
const char *crec_demangle_cb(void *ud, const char *mangled);

/* Turn the thread-registration callbacks on or off.  Returns 0 or -1. */
int crec_callbacks(int on);

/* Disable every kind we enabled.  Safe from any thread; errors ignored (we
 * are stopping anyway). */
void crec_kinds_off(void);

/* Enable the kinds in MASK and silence the noisy callback ids.  Returns 0,
 * or -1 after a warning (kinds enabled so far are disabled again). */
int crec_kinds_on(int mask);

/* CUpti_BuffersCallbackRequestFunc: a pool buffer, or NULL (CUPTI drops and
 * counts) when the pool is exhausted.  Never blocks. */
void CUPTIAPI crec_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);

/* CUpti_BuffersCallbackCompleteFunc: queue the buffer for the writer.
 * Called from CUPTI's thread or from a thread inside cuptiActivityFlushAll. */
void CUPTIAPI crec_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				    size_t valid);

/* Add the calling thread to the window's thread map, once per window. */
void crec_register_thread(void);

/* The subscriber callback: register the thread at API entry; flush before a
 * cudaDeviceReset destroys the context's pending records. */
void CUPTIAPI crec_api_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				const void *data);

/* The writer: encode queued buffers into the current window, recycle them,
 * acknowledge marks.  Runs until the process ends. */
void *crec_writer_main(void *arg);

/* ---- winctl.c ------------------------------------------------------------- */

/* Begin a window written to PATTERN (NULL: the configured one).  Caller
 * holds G.ctl.  Returns 0 or -1 (after a warning). */
int crec_begin_locked(const char *pattern);

/* End the current window: stop, flush, drain the writer, write the trailer.
 * Caller holds G.ctl.  Returns 0, or -1 when there was no window or the file
 * could not be completed (after a warning). */
int crec_end_locked(void);

/* ---- devquery.c ----------------------------------------------------------- */

/* Append the "device_properties" array for the devices the window's records
 * named (ENC->devices) to B.  Returns the number of devices written; 0 means
 * nothing was appended.  Call with no activity kind enabled: the driver calls
 * must not become records of the window.  Caller holds G.ctl. */
size_t crec_device_properties(const crec_enc *enc, crec_jbuf *b);

#endif
