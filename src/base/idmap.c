/* idmap.c - dense ids in a mapped temporary file, sparse ones in a hash map.
 *
 * An array entry is the value and a presence byte after it, rounded up to
 * 8 bytes, so that values stay 8-aligned.
 * The file is sized and its blocks allocated once (posix_fallocate, so
 * that a full $TMPDIR is an error at that point, not a SIGBUS at a later
 * write) and mapped shared, so a value written through the mapping is in the
 * page cache and the file whether or not its page stays mapped; dropping
 * the mapping's pages loses nothing.  The mapping is watched against the
 * budget with the others (pages.c: the pages touched are counted, and all
 * dropped at once when they pass what the process's other memory leaves of
 * the budget).
 *
 * Tables that fit in memory stay there.  A fault on a shared file mapping
 * makes the block's page (and, before posix_fallocate, the block: 5,600 of
 * them, a fifth of the 500 MB pair's kernel time on the 2-core machine,
 * measured then); anonymous memory
 * with transparent huge pages takes a fault every 2 MB instead.  So when
 * the caller expects the tables of a run to fit in the budget all together
 * (cm_idmap_expect), they are anonymous mappings, aligned to 2 MB for the
 * huge pages, and never dropped; else they all go to files as above.  Should
 * the expectation fall short, a table that would pass the budget goes to a
 * file. */
#include "config.h"
#include "base/idmap.h"
#include "base/diag.h"
#include "base/hmap.h"
#include "base/exitcode.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The bytes the caller expects its tables to take (cm_idmap_expect), those
 * of the tables held in anonymous memory, and of every table made in
 * memory and in files, for -v; under tables_lock, so that a table's
 * check against the budget and its count go together. */
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t expected;
static size_t anon_bytes;
static uint64_t made_in_memory, made_in_files;
#define HUGE_PAGE ((size_t)2 << 20)

/* The entries put in a dense table, for cm_idmap_bytes, counted apart by
 * each thread that puts: the joins put from up to 16 threads at once, and
 * one counter that all of them added to went from CPU to CPU at every new
 * entry (the two walks of the 1 GB pair's joins took longer on 8 threads
 * than on 2, run AD in bench/RUNS.md).  A thread takes a stripe, on a
 * cache line of its own, at its first put; threads past PUT_STRIPES share,
 * so the adds stay atomic. */
#define PUT_STRIPES 16
struct put_stripe {
	uint64_t n;
	char pad[64 - sizeof(uint64_t)];
};

struct cm_idmap {
	size_t vsize, esize;
	int64_t lo, hi;
	/* dense */
	int fd;
	unsigned char *base;
	size_t size;
	cm_pages *pages;    /* its pages, watched against the budget */
	struct put_stripe *puts; /* PUT_STRIPES of them, 64-aligned in puts_mem */
	void *puts_mem;
	const cm_idkeys *keys; /* keyed: an entry a key, in the order of the ids */
	/* sparse */
	cm_hmap *h;
};

/* A key set: 64 ids a block, their bits and the number of keys in the
 * blocks before (filled in by freeze). */
struct key_block {
	uint64_t bits, rank;
};

struct cm_idkeys {
	int64_t lo, hi;
	uint64_t count;
	int frozen;
	/* dense */
	int fd;
	struct key_block *blocks;
	size_t size;
	cm_pages *pages;
	/* sparse */
	cm_hmap *h;
};

void cm_idmap_expect(uint64_t bytes)
{
	pthread_mutex_lock(&tables_lock);
	expected = bytes;
	pthread_mutex_unlock(&tables_lock);
}

/* SIZE bytes of anonymous memory, zero-filled, aligned to 2 MB when that
 * large, so that transparent huge pages cover it; NULL when none is had. */
static void *map_anon(size_t size)
{
	size_t len = size >= HUGE_PAGE ? size + HUGE_PAGE : size, lead;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (len != size) {
		lead = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
		if (lead)
			munmap(p, lead);
		munmap(p + lead + size, len - lead - size);
		p += lead;
	}
#ifdef MADV_HUGEPAGE
	madvise(p, size, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
	return p;
}

/* A zero-filled SIZE-byte table: in anonymous memory when the run's tables
 * are expected to fit in the budget and this one does (*FD = -1, *PAGES =
 * NULL: nothing to watch), else in an unlinked temporary file, mapped
 * shared and watched against the budget.  0, or -1 after a report. */
static int map_table(size_t size, int *fd, void **base, cm_pages **pages)
{
	int rc;
	size_t budget;
	*fd = -1;
	*pages = NULL;
	pthread_mutex_lock(&tables_lock);
	budget = cm_pages_budget_bytes();
	if (expected && expected <= budget && anon_bytes + size <= budget && (*base = map_anon(size))) {
		anon_bytes += size;
		cm_pages_held(anon_bytes);
		made_in_memory += size;
		pthread_mutex_unlock(&tables_lock);
		cm_pages_measure();
		return 0;
	}
	made_in_files += size;
	pthread_mutex_unlock(&tables_lock);
	if ((*fd = cm_temp_fd("ids")) < 0)
		return -1;
	/* The file's blocks are all allocated now, not at the first write to
	 * each page: a write through a shared mapping that finds no space
	 * left in $TMPDIR is a SIGBUS, which kills the run without a word
	 * (F17).  Allocated here, a full $TMPDIR is an error like any other
	 * write's.  The cost is the whole table on disk where a sparse file
	 * took only the pages written: a table is made over a range of at
	 * most sixteen ids an id (a hash map beyond), and counters fill it. */
	if ((rc = posix_fallocate(*fd, 0, (off_t)size)) != 0 ||
	    (*base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)) == MAP_FAILED) {
		cm_error(CM_EXIT_IO, NULL, -1, "cannot make a table in a temporary file: %s",
			 strerror(rc ? rc : errno));
		close(*fd);
		return -1;
	}
	cm_pages_measure();
	*pages = cm_pages_watch(*base, size);
	return 0;
}

/* Undo map_table. */
static void unmap_table(int fd, void *base, size_t size, cm_pages *pages)
{
	cm_pages_unwatch(pages);
	munmap(base, size);
	if (fd >= 0) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&tables_lock);
	anon_bytes -= size;
	cm_pages_held(anon_bytes);
	pthread_mutex_unlock(&tables_lock);
}

void cm_idmap_table_bytes(uint64_t *in_memory, uint64_t *in_files, uint64_t *dropped)
{
	pthread_mutex_lock(&tables_lock);
	*in_memory = made_in_memory;
	*in_files = made_in_files;
	pthread_mutex_unlock(&tables_lock);
	*dropped = cm_pages_drops();
}

/* The put counts of a dense table, zero. */
static void new_stripes(cm_idmap *m)
{
	m->puts_mem = cm_xcalloc(PUT_STRIPES + 1, sizeof(struct put_stripe));
	m->puts = (struct put_stripe *)(((uintptr_t)m->puts_mem + 63) & ~(uintptr_t)63);
}

cm_idmap *cm_idmap_new(size_t val_size, int64_t lo, int64_t hi, uint64_t count)
{
	cm_idmap *m = cm_xcalloc(1, sizeof *m);
	unsigned __int128 range = hi >= lo ? (unsigned __int128)((__int128)hi - lo) + 1 : 0;
	m->vsize = val_size;
	m->esize = (size_t)cm_idmap_array_bytes(val_size, 0, 0);
	m->lo = lo;
	m->hi = hi;
	m->fd = -1;
	if (range && range <= 16 * (unsigned __int128)count + 1024 &&
	    range * m->esize < ((unsigned __int128)1 << 46)) {
		m->size = (size_t)(range * m->esize);
		if (map_table(m->size, &m->fd, (void **)&m->base, &m->pages) < 0) {
			free(m);
			return NULL;
		}
		new_stripes(m);
		return m;
	}
	m->h = cm_hmap_new(8, val_size);
	return m;
}

/* ------------------------------------------------------------ key sets
 *
 * A user annotation's External id is about one in twelve: an array
 * indexed by id over their range touched every page of it (the spans'
 * table, 56 bytes an entry, was 236 MB of file pages for the 1 GB pair's
 * 336,334 annotations, each page faulted in and zero-filled, then dropped
 * and faulted again as the budget came round).  Over a set known in
 * advance the entries can be packed: entry i is the key of rank i, found
 * from the block's count of keys before it and a popcount within. */

/* Rank of ID in K (the number of keys below it), or -1 when ID is not a key. */
static int64_t key_rank(const cm_idkeys *k, int64_t id)
{
	uint64_t at = (uint64_t)id - (uint64_t)k->lo;
	const struct key_block *b;
	uint64_t bit;
	if (id < k->lo || id > k->hi)
		return -1;
	b = &k->blocks[at / 64];
	cm_pages_touch(k->pages, b);
	bit = (uint64_t)1 << (at % 64);
	if (!(b->bits & bit))
		return -1;
	return (int64_t)(b->rank + (uint64_t)__builtin_popcountll(b->bits & (bit - 1)));
}

cm_idkeys *cm_idkeys_new(int64_t lo, int64_t hi, uint64_t count)
{
	cm_idkeys *k = cm_xcalloc(1, sizeof *k);
	unsigned __int128 range = hi >= lo ? (unsigned __int128)((__int128)hi - lo) + 1 : 0;
	k->lo = lo;
	k->hi = hi;
	k->fd = -1;
	/* a block (16 bytes) for 64 ids: denser than a hash map's 2 slots
	 * of 16 bytes a key while the range is within 128 times the count */
	if (range && range <= 128 * (unsigned __int128)count + 1024 &&
	    range / 64 * sizeof(struct key_block) < ((unsigned __int128)1 << 46)) {
		k->size = (size_t)((range + 63) / 64) * sizeof(struct key_block);
		if (map_table(k->size, &k->fd, (void **)&k->blocks, &k->pages) < 0) {
			free(k);
			return NULL;
		}
		return k;
	}
	k->h = cm_hmap_new(8, 0);
	return k;
}

int cm_idkeys_add(cm_idkeys *k, int64_t id)
{
	int created;
	if (k->frozen)
		abort(); /* a table over the set is made: it may not grow */
	if (k->blocks) {
		uint64_t at = (uint64_t)id - (uint64_t)k->lo, bit = (uint64_t)1 << (at % 64);
		struct key_block *b = &k->blocks[at / 64];
		cm_pages_touch(k->pages, b);
		if (b->bits & bit)
			return 0;
		b->bits |= bit;
	} else {
		cm_hmap_put(k->h, &id, &created);
		if (!created)
			return 0;
	}
	k->count++;
	return 1;
}

int cm_idkeys_has(const cm_idkeys *k, int64_t id)
{
	/* a rank before the set is frozen is wrong, but not its sign */
	return k->blocks ? key_rank(k, id) >= 0 : cm_hmap_get(k->h, &id) != NULL;
}

uint64_t cm_idkeys_count(const cm_idkeys *k) { return k->count; }

void cm_idkeys_free(cm_idkeys *k)
{
	if (!k)
		return;
	if (k->blocks)
		unmap_table(k->fd, k->blocks, k->size, k->pages);
	cm_hmap_free(k->h);
	free(k);
}

/* The blocks' counts of the keys before them, once, when the first table
 * over the set is made. */
static void freeze(cm_idkeys *k)
{
	uint64_t rank = 0;
	if (k->frozen)
		return;
	k->frozen = 1;
	for (size_t i = 0; i < k->size / sizeof *k->blocks; i++) {
		cm_pages_touch(k->pages, &k->blocks[i]);
		k->blocks[i].rank = rank;
		rank += (uint64_t)__builtin_popcountll(k->blocks[i].bits);
	}
}

cm_idmap *cm_idmap_new_keyed(size_t val_size, cm_idkeys *keys)
{
	cm_idmap *m;
	freeze(keys);
	if (!keys->blocks || !keys->count)
		return cm_idmap_new(val_size, 1, 0, 0); /* a hash map */
	m = cm_xcalloc(1, sizeof *m);
	m->vsize = val_size;
	m->esize = (size_t)cm_idmap_array_bytes(val_size, 0, 0);
	m->lo = keys->lo;
	m->hi = keys->hi;
	m->keys = keys;
	m->size = (size_t)keys->count * m->esize;
	if (map_table(m->size, &m->fd, (void **)&m->base, &m->pages) < 0) {
		free(m);
		return NULL;
	}
	new_stripes(m);
	return m;
}

int cm_idmap_is_dense(const cm_idmap *m) { return m->base != NULL; }

/* The array entry at index I, its page marked as touched. */
static unsigned char *entry_at(cm_idmap *m, size_t i)
{
	unsigned char *e = m->base + i * m->esize;
	cm_pages_touch(m->pages, e);
	return e;
}

/* The array entry of ID (in range), or NULL for an id that is not a key of
 * a keyed map. */
static unsigned char *entry(cm_idmap *m, int64_t id)
{
	int64_t rank;
	if (!m->keys)
		return entry_at(m, (size_t)((uint64_t)id - (uint64_t)m->lo));
	rank = key_rank(m->keys, id);
	return rank < 0 ? NULL : entry_at(m, (size_t)rank);
}

void *cm_idmap_get(cm_idmap *m, int64_t id)
{
	unsigned char *e;
	if (!m->base)
		return cm_hmap_get(m->h, &id);
	if (id < m->lo || id > m->hi || !(e = entry(m, id)))
		return NULL;
	return e[m->vsize] ? e : NULL;
}

void cm_idmap_prefetch(const cm_idmap *m, int64_t id)
{
	if (m->base && !m->keys && id >= m->lo && id <= m->hi)
		__builtin_prefetch(m->base + (size_t)((uint64_t)id - (uint64_t)m->lo) * m->esize);
}

/* This thread's stripe of the put counts: given out in turn at its first
 * put. */
static unsigned put_stripe(void)
{
	static unsigned next;
	static __thread unsigned mine; /* its stripe + 1 */
	if (!mine)
		mine = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % PUT_STRIPES + 1;
	return mine - 1;
}

void *cm_idmap_put(cm_idmap *m, int64_t id, int *created)
{
	unsigned char *e;
	int fresh;
	void *v;
	if (!m->base) {
		v = cm_hmap_put(m->h, &id, &fresh);
	} else {
		if (!(e = entry(m, id)))
			abort(); /* not a key of the map's set: the caller's bug */
		fresh = !e[m->vsize];
		e[m->vsize] = 1;
		v = e;
	}
	if (fresh && m->base) /* the joins put from several threads (different ids) */
		__atomic_add_fetch(&m->puts[put_stripe()].n, 1, __ATOMIC_RELAXED);
	if (created)
		*created = fresh;
	return v;
}

/* FN for each entry put of an array, in increasing id, those of the SLICE-th
 * of SLICES equal slices of it (of its entries, or of a keyed map's key
 * blocks).  FN's first result other than 0. */
static int dense_walk_slice(cm_idmap *m, int slice, int slices, int (*fn)(void *ctx, int64_t id, void *val),
			    void *ctx)
{
	const cm_idkeys *k = m->keys;
	int rc = 0;
	size_t n, from, to;
	if (!k) {
		n = m->size / m->esize;
		from = (size_t)((unsigned __int128)n * (unsigned)slice / (unsigned)slices);
		to = (size_t)((unsigned __int128)n * (unsigned)(slice + 1) / (unsigned)slices);
		for (size_t i = from; i < to && !rc; i++) {
			unsigned char *e = entry_at(m, i);
			if (e[m->vsize])
				rc = fn(ctx, (int64_t)((uint64_t)m->lo + i), e);
		}
		return rc;
	}
	/* a keyed map: the keys in order, block by block, are its entries'
	 * (a block's rank: the entries before it) */
	n = k->size / sizeof *k->blocks;
	from = (size_t)((unsigned __int128)n * (unsigned)slice / (unsigned)slices);
	to = (size_t)((unsigned __int128)n * (unsigned)(slice + 1) / (unsigned)slices);
	if (from < to)
		cm_pages_touch(k->pages, &k->blocks[from]);
	for (size_t bi = from, i = from < to ? (size_t)k->blocks[from].rank : 0; bi < to && !rc; bi++) {
		uint64_t bits;
		cm_pages_touch(k->pages, &k->blocks[bi]);
		for (bits = k->blocks[bi].bits; bits && !rc; bits &= bits - 1, i++) {
			unsigned char *e = entry_at(m, i);
			if (e[m->vsize])
				rc = fn(ctx, (int64_t)((uint64_t)k->lo + 64 * bi + (uint64_t)__builtin_ctzll(bits)), e);
		}
	}
	return rc;
}

/* An array's entries in order of id: FN for each one put, until it
 * returns non-zero, which this returns. */
static int dense_walk(cm_idmap *m, int (*fn)(void *ctx, int64_t id, void *val), void *ctx)
{
	return dense_walk_slice(m, 0, 1, fn, ctx);
}

int cm_idmap_each_slice(cm_idmap *m, int slice, int slices, int (*fn)(void *ctx, int64_t id, void *val), void *ctx)
{
	if (m->base)
		return dense_walk_slice(m, slice, slices, fn, ctx);
	return slice == 0 ? cm_idmap_each_sorted(m, fn, ctx) : 0;
}

struct each_fn {
	void (*fn)(void *ctx, int64_t id, void *val);
	void *ctx;
};

static int each_one(void *ctx, int64_t id, void *val)
{
	struct each_fn *f = ctx;
	f->fn(f->ctx, id, val);
	return 0;
}

void cm_idmap_each(cm_idmap *m, void (*fn)(void *ctx, int64_t id, void *val), void *ctx)
{
	struct each_fn f = {fn, ctx};
	if (m->base) {
		dense_walk(m, each_one, &f);
		return;
	}
	for (size_t i = 0; i < cm_hmap_slots(m->h); i++) {
		const void *key;
		void *v = cm_hmap_slot(m->h, i, &key);
		if (v) {
			int64_t id;
			memcpy(&id, key, 8);
			fn(ctx, id, v);
		}
	}
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int cm_idmap_each_sorted(cm_idmap *m, int (*fn)(void *ctx, int64_t id, void *val), void *ctx)
{
	int64_t *ids;
	size_t n = 0;
	int rc = 0;
	if (m->base)
		return dense_walk(m, fn, ctx);
	ids = cm_xmalloc((cm_hmap_count(m->h) + 1) * sizeof *ids);
	for (size_t i = 0; i < cm_hmap_slots(m->h); i++) {
		const void *key;
		if (cm_hmap_slot(m->h, i, &key))
			memcpy(&ids[n++], key, 8);
	}
	qsort(ids, n, sizeof *ids, cmp_id);
	for (size_t i = 0; i < n && !rc; i++)
		rc = fn(ctx, ids[i], cm_hmap_get(m->h, &ids[i]));
	free(ids);
	return rc;
}

uint64_t cm_idmap_count(const cm_idmap *m)
{
	uint64_t n = 0;
	if (!m->base)
		return cm_hmap_count(m->h);
	for (int i = 0; i < PUT_STRIPES; i++)
		n += __atomic_load_n(&m->puts[i].n, __ATOMIC_RELAXED);
	return n;
}

uint64_t cm_idmap_bytes(const cm_idmap *m)
{
	if (!m->base)
		return cm_hmap_bytes(m->h);
	return cm_idmap_count(m) * m->esize;
}

void cm_idmap_free(cm_idmap *m)
{
	if (!m)
		return;
	if (m->base)
		unmap_table(m->fd, m->base, m->size, m->pages);
	cm_hmap_free(m->h);
	free(m->puts_mem);
	free(m);
}
