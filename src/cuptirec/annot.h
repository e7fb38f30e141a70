/* annot.h - user-annotation names and the per-window thread map. */
#ifndef CREC_ANNOT_H
#define CREC_ANNOT_H

#include <stddef.h>
#include <stdint.h>
#include "jbuf.h"

/* User annotations.  Every push gets a fresh external id (CUSTOM1), so the
 * merge's per-id GPU span covers one annotated region, not all of them.  The
 * names a window needs are the ones pushed during it plus those still open
 * when it began.  Memory: interned names (at most max_names distinct, each cut
 * to CREC_ANNOT_NAME_MAX bytes), the open annotations, and at most max_window
 * (id, name) pairs per window; beyond that ids are still handed out but their
 * names are counted as lost. */
typedef struct crec_annot crec_annot;

/* The first annotation id.  Merges link any external correlation to the CPU
 * op with the same "External id", whatever its kind, and torch numbers its ops
 * from 1: starting at 2^40 keeps our ids clear of theirs, while staying exact
 * in a double (a trace viewer's number type). */
#define CREC_ANNOT_FIRST_ID (1ull << 40)

/* Longest annotation name kept, in bytes (cut at a UTF-8 boundary). */
#define CREC_ANNOT_NAME_MAX 1024

/* Returns NULL on ENOMEM or when a limit is 0. */
crec_annot *crec_annot_create(size_t max_names, size_t max_window);

/* Allocate the next id for NAME (NULL counts as ""), remember it as open and,
 * while a window is active, as used by the window.  Thread-safe.  Returns the
 * id (CREC_ANNOT_FIRST_ID, then counting up). */
uint64_t crec_annot_push(crec_annot *a, const char *name);

/* Forget the open annotation ID (popping an unknown id is harmless). */
void crec_annot_pop(crec_annot *a, uint64_t id);

/* Start a window: it uses every currently open annotation. */
void crec_annot_window_begin(crec_annot *a);

/* End the window: append its names as a JSON object {"id": "name", ...} to OUT
 * and forget them.  Returns the number of names lost to the limits. */
unsigned long long crec_annot_window_end(crec_annot *a, crec_jbuf *out);

void crec_annot_destroy(crec_annot *a);

/* The thread map of a window: opaque id (int32 of pthread_self's low 32 bits,
 * CUPTI's default thread id) -> gettid, for threads that called CUDA. */
typedef struct crec_tmap crec_tmap;

/* Room for CAP threads per window.  Returns NULL on ENOMEM or CAP 0. */
crec_tmap *crec_tmap_create(size_t cap);

/* Record OPAQUE -> TID.  Thread-safe.  Returns 0 when new or unchanged, 1 when
 * OPAQUE was mapped to another tid (a reused pthread_t: the newer one wins),
 * -1 when the map is full. */
int crec_tmap_add(crec_tmap *m, int32_t opaque, uint32_t tid);

/* Forget all entries (a new window). */
void crec_tmap_reset(crec_tmap *m);

/* Append {"PID": {"OPAQUE": TID, ...}} to OUT.  When SYSTEM_IDS (records carry
 * gettid), entries whose key lies in 1..PID_MAX are left out: a gettid in a
 * record could equal such a key and be remapped wrongly by a reader, and the
 * map is only a fallback then.  Returns the number of entries left out. */
size_t crec_tmap_write_json(crec_tmap *m, long pid, int system_ids, uint32_t pid_max, crec_jbuf *out);

/* Number of entries now. */
size_t crec_tmap_count(crec_tmap *m);

void crec_tmap_destroy(crec_tmap *m);

#endif
