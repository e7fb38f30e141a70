/* tidrule.h - which thread row a CUDA API record belongs on.
 *
 * CUPTI reports the thread of an API record as an opaque id: by default the
 * low 32 bits of pthread_self(), which Kineto writes as abs((int32)id).  The
 * reference merge resolves it in this order:
 *   1. the record's correlation id is linked (through an External id) to a
 *      CPU op of the same process: the op's thread;
 *   2. the window's thread_resource_map has (pid, int32 id): that thread id;
 *   3. the int32 id itself;
 * and every thread id is written as abs(tid), except INT64_MIN, written 0. */
#ifndef CM_TIDRULE_H
#define CM_TIDRULE_H

#include <stdint.h>
#include "base/pyval.h"

/* The thread id as the trace shows it: 0 for INT64_MIN, else abs(TID). */
static inline cm_int cm_tid_export(cm_int tid)
{
	if (tid == (cm_int)INT64_MIN)
		return 0;
	return tid < 0 ? -tid : tid;
}

/* The signed int32 of the low 32 bits of RAW (Python: c_int32(raw & 0xFFFFFFFF)). */
static inline int32_t cm_tid_int32(cm_int raw)
{
	return (int32_t)(uint32_t)(unsigned __int128)raw;
}

/* ---- the window's thread_resource_map: {pid: {int32 id: tid}} ---- */
typedef struct cm_tidmap cm_tidmap;

/* Outcome of a lookup. */
enum cm_tidmap_rc {
	CM_TIDMAP_FOUND = 0,
	CM_TIDMAP_ABSENT = 1,     /* not in the map: use the int32 id */
	CM_TIDMAP_BAD_MAP = -1,   /* the map (or this pid's entry) is not an object */
	CM_TIDMAP_BAD_VALUE = -2, /* the entry is not an integer (int() raises) */
};

cm_tidmap *cm_tidmap_new(void);
void cm_tidmap_free(cm_tidmap *m);

/* The whole map is not an object (lookups fail, as .get() would). */
void cm_tidmap_set_bad(cm_tidmap *m);
/* Start the entries of PID (a later start for the same pid replaces the
 * earlier entries, as a repeated dict key does); BAD: the value is not an
 * object. */
void cm_tidmap_begin_pid(cm_tidmap *m, int64_t pid, int bad);
/* Add (current pid, ID) -> TID; BAD: the value is not an integer. */
void cm_tidmap_add(cm_tidmap *m, int64_t id, int64_t tid, int bad);

/* Look up (PID, ID).  Returns a cm_tidmap_rc; *tid is set when FOUND. */
int cm_tidmap_lookup(const cm_tidmap *m, int64_t pid, int64_t id, int64_t *tid);

/* Number of (pid, id) entries. */
uint64_t cm_tidmap_count(const cm_tidmap *m);

#endif
