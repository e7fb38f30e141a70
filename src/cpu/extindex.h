/* extindex.h - the External-id index: what the CPU scan (cpuscan.c) records
 * for each External id the window links to.  The GPU side (gpuconv.h) makes
 * the map, ext id (int64) -> struct cm_ext_thread, and reads it back; the CPU
 * scan fills it in.  Neither pass needs the other's header for it. */
#ifndef CM_EXTINDEX_H
#define CM_EXTINDEX_H

#include <stdint.h>

/* The CPU-trace index entry for one External id the window links to. */
struct cm_ext_thread {
	int64_t pid, tid;
	uint8_t found; /* a cpu_op / user_annotation X event carried the id */
};

#endif
