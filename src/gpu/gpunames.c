/* gpunames.c - the window's name table: each distinct record name kept
 * once, with its JSON text made once (gpunames.h says why and how far).
 *
 * An open-addressed hash table of entries whose bytes lie in chunks that
 * never move, so that an entry's name and JSON text stay where they are
 * while workers add others; the adding is under one lock, behind a cache
 * each worker thread keeps of the entries it has met (a kernel's name
 * comes again and again), so a thread takes the lock about once a name.
 * Packed records (gpurec.c) carry an entry's number. */
#include "config.h"
#include "gpu/gpunames.h"
#include "base/buf.h"
#include "base/diag.h"
#include "base/word.h"
#include "json/jwrite.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A hash of a name, eight bytes a step (names are a few hundred bytes). */
static uint64_t name_hash(const char *s, size_t n)
{
	uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		h ^= cm_load_le64(s + i);
		h *= UINT64_C(0xff51afd7ed558ccd);
		h ^= h >> 32;
	}
	if (i < n) {
		uint64_t w = 0;
		memcpy(&w, s + i, n - i);
		h ^= w;
		h *= UINT64_C(0xc4ceb9fe1a85ec53);
	}
	h ^= h >> 29;
	h *= UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 32);
}

struct name_ent {
	const char *raw, *json; /* in the table's chunks, which never move */
	uint32_t rawlen, jlen;
	uint64_t hash;
};

/* Storage: chunks of at least NAME_CHUNK bytes, linked by their first word. */
#define NAME_CHUNK (64u << 10)

struct cm_gpunames {
	pthread_mutex_t mu;
	struct name_ent *ents;
	uint32_t n, cap;
	uint32_t *slots; /* open addressing: entry number + 1, or 0 */
	uint32_t nslots; /* a power of two, at least twice n */
	char *chunk;     /* the chunk being filled */
	size_t used, size, bytes;
	cm_buf tmp;      /* a name's JSON text as it is made */
};

cm_gpunames *cm_gpunames_new(void)
{
	cm_gpunames *t = cm_xcalloc(1, sizeof *t);
	pthread_mutex_init(&t->mu, NULL);
	t->nslots = 64;
	t->slots = cm_xcalloc(t->nslots, sizeof *t->slots);
	return t;
}

void cm_gpunames_free(cm_gpunames *t)
{
	if (!t)
		return;
	while (t->chunk) {
		char *next;
		memcpy(&next, t->chunk, sizeof next);
		free(t->chunk);
		t->chunk = next;
	}
	free(t->ents);
	free(t->slots);
	cm_buf_free(&t->tmp);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* N bytes of T's storage. */
static char *name_store(cm_gpunames *t, const char *s, size_t n)
{
	char *p;
	if (t->size - t->used < n) {
		size_t size = n + sizeof(char *) > NAME_CHUNK ? n + sizeof(char *) : NAME_CHUNK;
		char *c = cm_xmalloc(size);
		memcpy(c, &t->chunk, sizeof t->chunk);
		t->chunk = c;
		t->used = sizeof(char *);
		t->size = size;
	}
	p = t->chunk + t->used;
	memcpy(p, s, n);
	t->used += n;
	t->bytes += n;
	return p;
}

/* The slot of S[0..N) of hash H in T: its entry number + 1, or 0 where it
 * would go. */
static uint32_t *name_slot(cm_gpunames *t, const char *s, size_t n, uint64_t h)
{
	for (uint32_t i = (uint32_t)h & (t->nslots - 1);; i = (i + 1) & (t->nslots - 1)) {
		const struct name_ent *e;
		if (!t->slots[i])
			return &t->slots[i];
		e = &t->ents[t->slots[i] - 1];
		if (e->hash == h && e->rawlen == n && !memcmp(e->raw, s, n))
			return &t->slots[i];
	}
}

/* A new entry for S[0..N), under the lock: its number, or -1 when T is full. */
static int64_t name_add(cm_gpunames *t, const char *s, size_t n, uint64_t h)
{
	struct name_ent *e;
	uint32_t *slot;
	t->tmp.len = 0;
	cm_jw_string(&t->tmp, s, n);
	if (t->n >= CM_GPUNAMES_MAX || t->bytes + n + t->tmp.len > CM_GPUNAMES_BYTES)
		return -1;
	if (2 * (t->n + 1) > t->nslots) { /* grow the slots, and place the entries again */
		free(t->slots);
		t->nslots *= 2;
		t->slots = cm_xcalloc(t->nslots, sizeof *t->slots);
		for (uint32_t k = 0; k < t->n; k++)
			*name_slot(t, t->ents[k].raw, t->ents[k].rawlen, t->ents[k].hash) = k + 1;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->ents = cm_xrealloc(t->ents, t->cap * sizeof *t->ents);
	}
	e = &t->ents[t->n];
	e->raw = name_store(t, s, n);
	e->rawlen = (uint32_t)n;
	e->json = name_store(t, t->tmp.p, t->tmp.len);
	e->jlen = (uint32_t)t->tmp.len;
	e->hash = h;
	slot = name_slot(t, s, n, h);
	*slot = ++t->n;
	return (int64_t)t->n - 1;
}

/* A thread's cache: direct-mapped by hash. */
#define CACHE_SLOTS 1024
struct cm_gpunames_cache {
	struct {
		uint64_t hash;
		const char *raw; /* the entry's bytes (NULL: empty) */
		uint32_t len, id;
	} s[CACHE_SLOTS];
};

cm_gpunames_cache *cm_gpunames_cache_new(void) { return cm_xcalloc(1, sizeof(cm_gpunames_cache)); }

void cm_gpunames_cache_free(cm_gpunames_cache *c) { free(c); }

int cm_gpunames_intern(cm_gpunames *t, cm_gpunames_cache *c, const char *s, size_t n, uint32_t *id)
{
	uint64_t h;
	int64_t k;
	uint32_t *slot;
	if (n > CM_GPUNAMES_LONG)
		return 0;
	h = name_hash(s, n);
	{
		__typeof__(c->s[0]) *cs = &c->s[h & (CACHE_SLOTS - 1)];
		if (cs->raw && cs->hash == h && cs->len == n && !memcmp(cs->raw, s, n)) {
			*id = cs->id;
			return 1;
		}
		pthread_mutex_lock(&t->mu);
		slot = name_slot(t, s, n, h);
		k = *slot ? (int64_t)*slot - 1 : name_add(t, s, n, h);
		if (k >= 0) {
			cs->hash = h;
			cs->raw = t->ents[k].raw;
			cs->len = (uint32_t)n;
			cs->id = (uint32_t)k;
		}
		pthread_mutex_unlock(&t->mu);
		if (k < 0)
			return 0;
		*id = (uint32_t)k;
		return 1;
	}
}

const char *cm_gpunames_json(const cm_gpunames *t, uint32_t id, size_t *len)
{
	if (!t || id >= t->n) { /* a record of another table: cannot happen */
		*len = 2;
		return "\"\"";
	}
	*len = t->ents[id].jlen;
	return t->ents[id].json;
}

size_t cm_gpunames_count(const cm_gpunames *t) { return t ? t->n : 0; }
