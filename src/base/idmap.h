/* idmap.h - a map from 64-bit integer ids to fixed-size values, made for
 * ids that are counters: CUPTI correlation ids and torch External ids are
 * dense and mostly increasing.
 *
 * Dense ids get an array indexed by id, a few bytes an id where a hash map
 * costs dozens.  When all of a run's arrays fit in the memory budget they
 * are held in memory; else they are kept in unlinked temporary files in
 * $TMPDIR and mapped into memory: such a table costs disk and page cache,
 * not resident memory.  Resident pages of the files are dropped (they stay
 * in the file) whenever more of them may have been touched than the
 * process's other memory leaves of the budget, so its resident size stays
 * within about the budget however many ids there are.  Ids too sparse
 * for an array (a range more than sixteen times the count) get a hash map
 * (hmap.h) in memory instead, and ids known in advance as a set
 * (cm_idkeys: a torch trace's user annotations are about one External id
 * in twelve) get tables packed over it, an entry a key.  Either way the
 * interface is the same. */
#ifndef CM_IDMAP_H
#define CM_IDMAP_H

#include <stddef.h>
#include <stdint.h>
#include "base/pages.h" /* the budget the tables are held to */

typedef struct cm_idmap cm_idmap;

/* A map for VAL_SIZE-byte values of ids in [LO, HI] (COUNT of them, about).
 * The budget (cm_pages_budget) is the resident memory of all the arrays
 * alive at once.  Returns NULL after reporting (a temporary file that
 * cannot be made). */
cm_idmap *cm_idmap_new(size_t val_size, int64_t lo, int64_t hi, uint64_t count);

/* The value of ID, or NULL when it was never put (or lies outside [LO, HI]).
 * Safe to call from several threads at once while nothing puts. */
void *cm_idmap_get(cm_idmap *m, int64_t id);

/* Ask the cache for ID's entry ahead of a cm_idmap_get or cm_idmap_put of
 * it: a hint that never faults a page in and counts none (the array's
 * entries lie at random over many MB, and one lookup after another waits
 * on memory).  Nothing for a hash map or an id outside [LO, HI]. */
void cm_idmap_prefetch(const cm_idmap *m, int64_t id);

/* The value of ID (which must lie in [LO, HI]), zero-filled when new
 * (*CREATED, when CREATED is not NULL, says whether it was). */
void *cm_idmap_put(cm_idmap *m, int64_t id, int *created);

/* Call FN for each id put, in no particular order. */
void cm_idmap_each(cm_idmap *m, void (*fn)(void *ctx, int64_t id, void *val), void *ctx);

/* The same in increasing order of id (an array is walked in order; a hash
 * map's ids are sorted first).  FN returns 0 to go on, -1 to stop, which
 * this then returns. */
int cm_idmap_each_sorted(cm_idmap *m, int (*fn)(void *ctx, int64_t id, void *val), void *ctx);

/* The same for the ids of the SLICE-th of SLICES slices of the map (0 <=
 * SLICE < SLICES): the slices of an array are equal runs of it, so
 * different slices may be walked from several threads at once, FN writing
 * only the values it is given; a hash map is walked whole by slice 0. */
int cm_idmap_each_slice(cm_idmap *m, int slice, int slices, int (*fn)(void *ctx, int64_t id, void *val), void *ctx);

/* 1 when the map is an array (in memory or in a file), 0 for a hash map. */
int cm_idmap_is_dense(const cm_idmap *m);

/* The number of ids put. */
uint64_t cm_idmap_count(const cm_idmap *m);

/* Bytes of memory held (a hash map) or of file (an array). */
uint64_t cm_idmap_bytes(const cm_idmap *m);

void cm_idmap_free(cm_idmap *m);

/* The bytes of an array over the ids LO..HI of VAL_SIZE-byte values (0
 * when HI < LO), as cm_idmap_new would make it: for a caller's
 * cm_idmap_expect. */
static inline uint64_t cm_idmap_array_bytes(size_t val_size, int64_t lo, int64_t hi)
{
	return hi >= lo ? ((uint64_t)hi - (uint64_t)lo + 1) * ((val_size + 1 + 7) & ~(size_t)7) : 0;
}

/* The tables about to be made will take about BYTES (0: unknown): when
 * that is within the budget, the arrays made from now on are held in
 * memory, as long as they stay within it; else they go to files. */
void cm_idmap_expect(uint64_t bytes);

/* The bytes of all the arrays made so far by this process (maps and key
 * sets) that were held in memory and that went to files, and the times
 * the file pages were dropped, for -v. */
void cm_idmap_table_bytes(uint64_t *in_memory, uint64_t *in_files, uint64_t *dropped);

/* A set of ids, known before the tables over it are made: torch's user
 * annotations are about one External id in twelve, and an array indexed by
 * id would touch twelve entries for each one used.  The set is a bit an id
 * of [LO, HI] and a count of keys every 64 ids, 0.25 byte an id of the
 * range, in a mapped temporary file watched against the budget like the
 * tables; a range more than 128 times COUNT (the keys, about) gets a hash
 * map instead.  NULL after reporting. */
typedef struct cm_idkeys cm_idkeys;
cm_idkeys *cm_idkeys_new(int64_t lo, int64_t hi, uint64_t count);

/* Add ID (which must lie in [LO, HI]): 1 when it is new, 0 when it was
 * there.  Not after a table over the set has been made (that aborts). */
int cm_idkeys_add(cm_idkeys *k, int64_t id);

/* 1 when ID is in the set.  Safe from several threads while nothing adds. */
int cm_idkeys_has(const cm_idkeys *k, int64_t id);

/* The number of ids in the set. */
uint64_t cm_idkeys_count(const cm_idkeys *k);

/* Free the set (after every table made over it). */
void cm_idkeys_free(cm_idkeys *k);

/* A map for VAL_SIZE-byte values of exactly the ids of KEYS, which stops
 * growing (an entry a key, packed in the order of the ids; a hash map when
 * the set is one).  Gets of other ids give NULL; puts of them abort, a
 * caller's bug (a hash map does not check).  Otherwise a map like any
 * other; KEYS must outlive it. */
cm_idmap *cm_idmap_new_keyed(size_t val_size, cm_idkeys *keys);

#endif
