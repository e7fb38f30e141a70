/* extindex.h - the External-id index: what the CPU scan (cpuscan.c) records
 * for each External id the window links to.  The GPU side (gpuconv.h) makes
 * the map, ext id (int64) -> struct cm_ext_thread, and reads it back; the CPU
 * scan fills it in.  Neither pass needs the other's header for it.  Both
 * number threads in lists of the same kind (extindex.c).  It lives in base/,
 * below both the CPU and the GPU stage, which stand side by side. */
#ifndef CM_EXTINDEX_H
#define CM_EXTINDEX_H

#include <stdint.h>

/* The CPU-trace index entry for one External id the window links to: the
 * thread of the last cpu_op / user_annotation X event that carried the id,
 * as a number into the scan's list of threads (cm_cpuplan.ext_threads), 1
 * for the first; 0 while no event has.  A trace has millions of ids and a
 * few threads: an entry of 4 bytes, not 17, kept the 1 GB pair's index in
 * 34 MB of table where it took 135. */
struct cm_ext_thread {
	uint32_t thread;
};

/* A thread of the list. */
struct cm_ext_pt {
	int64_t pid, tid;
};

/* A list of threads, numbered from 1 in the order they were added: the CPU
 * scan's (the index's entries number it), an index part's, the threads the
 * correlations link to.  Zero-filled is empty. */
struct cm_hmap;
typedef struct cm_ext_threads {
	struct cm_ext_pt *v;
	uint32_t n, cap;
	struct cm_hmap *ix; /* (pid, tid) -> number */
} cm_ext_threads;

/* The number of (PID, TID) in L, added when new.  One thread at a time. */
uint32_t cm_ext_threads_number(cm_ext_threads *l, int64_t pid, int64_t tid);

/* Free L's memory; L is empty again. */
void cm_ext_threads_free(cm_ext_threads *l);

#endif
