/* gpunames.h - the window's name table (gpunames.c). */
#ifndef CM_GPUNAMES_H
#define CM_GPUNAMES_H

#include <stddef.h>
#include <stdint.h>

/* The window's name table: each distinct record name kept once, so that a
 * record holds the number of its name where it held the name's bytes (a
 * kernel's name is most of its record: 65% of the records' bytes of
 * gen_trace's windows, 17 names among 35,000 kernels), and the render
 * writes the name's JSON text made once.  Bounded: names longer than
 * CM_GPUNAMES_LONG bytes, and every name once the table holds
 * CM_GPUNAMES_MAX names or CM_GPUNAMES_BYTES bytes, stay in their records.
 * Worker threads add names at once (a lock, behind a cache of their own);
 * the entries are read only once the window has been read. */
#define CM_GPUNAMES_LONG 4096
#define CM_GPUNAMES_MAX (1u << 16)
#define CM_GPUNAMES_BYTES (4u << 20)
typedef struct cm_gpunames cm_gpunames;
typedef struct cm_gpunames_cache cm_gpunames_cache;
cm_gpunames *cm_gpunames_new(void);
void cm_gpunames_free(cm_gpunames *t);
/* A thread's cache of the entries it has used (one a thread: not shared). */
cm_gpunames_cache *cm_gpunames_cache_new(void);
void cm_gpunames_cache_free(cm_gpunames_cache *c);
/* The entry of S[0..N) in T, added when new: 1 with *ID, or 0 when the
 * name stays in its record (too long, or T full).  Safe from several
 * threads, each with its own cache C. */
int cm_gpunames_intern(cm_gpunames *t, cm_gpunames_cache *c, const char *s, size_t n, uint32_t *id);
/* Entry ID's name as a JSON string (quoted, escaped as cm_jw_string
 * escapes it), in *LEN bytes; for readers once no name is being added. */
const char *cm_gpunames_json(const cm_gpunames *t, uint32_t id, size_t *len);
/* How many names T holds, and their bytes (for -v). */
size_t cm_gpunames_count(const cm_gpunames *t);

#endif
