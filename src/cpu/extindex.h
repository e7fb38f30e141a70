/* extindex.h - the External-id index: what the CPU scan (cpuscan.c) records
 * for each External id the window links to.  The GPU side (gpuconv.h) makes
 * the map, ext id (int64) -> struct cm_ext_thread, and reads it back; the CPU
 * scan fills it in.  Neither pass needs the other's header for it. */
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

#endif
