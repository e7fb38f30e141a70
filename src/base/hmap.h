/* hmap.h - an open-addressing hash map with fixed-size keys and values: the
 * compact tables of the merge (External id -> thread, correlation -> thread,
 * rows seen, annotation spans).  Keys are compared bytewise; callers zero any
 * padding. */
#ifndef CM_HMAP_H
#define CM_HMAP_H

#include <stddef.h>

typedef struct cm_hmap cm_hmap;

/* A new empty map for KEY_SIZE-byte keys (a multiple of 8) and VAL_SIZE-byte
 * values. */
cm_hmap *cm_hmap_new(size_t key_size, size_t val_size);

/* The value stored under KEY, or NULL.  Valid until the next put. */
void *cm_hmap_get(const cm_hmap *m, const void *key);

/* The value under KEY, inserting a zero-filled one (and setting *created to 1
 * when CREATED is not NULL) if KEY is new.  Valid until the next put. */
void *cm_hmap_put(cm_hmap *m, const void *key, int *created);

size_t cm_hmap_count(const cm_hmap *m);

/* Iterate: slots 0 .. cm_hmap_slots()-1; cm_hmap_slot returns the value of a
 * used slot (and its key in *key), or NULL for an empty one. */
size_t cm_hmap_slots(const cm_hmap *m);
void *cm_hmap_slot(const cm_hmap *m, size_t i, const void **key);

/* Bytes held (for memory reports). */
size_t cm_hmap_bytes(const cm_hmap *m);

void cm_hmap_free(cm_hmap *m);

#endif
