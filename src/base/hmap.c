/* hmap.c - linear-probing hash map over fixed-size byte keys. */
#include "config.h"
#include "base/hmap.h"
#include "base/diag.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cm_hmap {
	size_t ksize, vsize, esize; /* entry = key then value */
	size_t cap, count;          /* cap: a power of two */
	unsigned char *used;
	unsigned char *ent;
};

cm_hmap *cm_hmap_new(size_t key_size, size_t val_size)
{
	cm_hmap *m = cm_xcalloc(1, sizeof *m);
	m->ksize = key_size;
	m->vsize = val_size;
	m->esize = (key_size + val_size + 7) & ~(size_t)7;
	m->cap = 16;
	m->used = cm_xcalloc(m->cap, 1);
	m->ent = cm_xcalloc(m->cap, m->esize);
	return m;
}

/* splitmix64's finaliser over the key's 64-bit words. */
static uint64_t hash_key(const void *key, size_t ksize)
{
	uint64_t h = 0x9E3779B97F4A7C15ull, w;
	for (size_t i = 0; i < ksize; i += 8) {
		memcpy(&w, (const char *)key + i, 8);
		h ^= w;
		h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
		h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
		h ^= h >> 31;
	}
	return h;
}

/* Whether the keys at A and B (KSIZE bytes, a multiple of 8, as hash_key
 * reads them) are the same: a word at a time, inline (a call to memcmp a
 * probe was most of a lookup's cost: the External-id threads, the
 * window's streams, the names). */
static inline int key_eq(const unsigned char *a, const unsigned char *b, size_t ksize)
{
	uint64_t x, y, d = 0;
	for (size_t i = 0; i < ksize; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
	}
	return !d;
}

/* The slot holding KEY, or the empty slot where it would go. */
static size_t find(const cm_hmap *m, const void *key)
{
	size_t mask = m->cap - 1, i = (size_t)hash_key(key, m->ksize) & mask;
	while (m->used[i] && !key_eq(m->ent + i * m->esize, key, m->ksize))
		i = (i + 1) & mask;
	return i;
}

void *cm_hmap_get(const cm_hmap *m, const void *key)
{
	size_t i = find(m, key);
	return m->used[i] ? m->ent + i * m->esize + m->ksize : NULL;
}

/* Double the table (load stays below 3/4). */
static void grow(cm_hmap *m)
{
	cm_hmap old = *m;
	m->cap *= 2;
	m->used = cm_xcalloc(m->cap, 1);
	m->ent = cm_xcalloc(m->cap, m->esize);
	for (size_t i = 0; i < old.cap; i++) {
		if (old.used[i]) {
			size_t j = find(m, old.ent + i * old.esize);
			m->used[j] = 1;
			memcpy(m->ent + j * m->esize, old.ent + i * old.esize, m->esize);
		}
	}
	free(old.used);
	free(old.ent);
}

void *cm_hmap_put(cm_hmap *m, const void *key, int *created)
{
	size_t i;
	if ((m->count + 1) * 4 > m->cap * 3)
		grow(m);
	i = find(m, key);
	if (created)
		*created = !m->used[i];
	if (!m->used[i]) {
		m->used[i] = 1;
		memcpy(m->ent + i * m->esize, key, m->ksize);
		memset(m->ent + i * m->esize + m->ksize, 0, m->esize - m->ksize);
		m->count++;
	}
	return m->ent + i * m->esize + m->ksize;
}

size_t cm_hmap_count(const cm_hmap *m) { return m->count; }
size_t cm_hmap_slots(const cm_hmap *m) { return m->cap; }
size_t cm_hmap_bytes(const cm_hmap *m) { return m->cap * (m->esize + 1); }

void *cm_hmap_slot(const cm_hmap *m, size_t i, const void **key)
{
	if (!m->used[i])
		return NULL;
	if (key)
		*key = m->ent + i * m->esize;
	return m->ent + i * m->esize + m->ksize;
}

void cm_hmap_free(cm_hmap *m)
{
	if (!m)
		return;
	free(m->used);
	free(m->ent);
	free(m);
}
