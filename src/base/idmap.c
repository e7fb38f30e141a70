/* idmap.c - dense ids in a mapped temporary file, sparse ones in a hash map.
 *
 * An array entry is the value and a presence byte after it, rounded up to
 * 8 bytes, so that values stay 8-aligned.
 * The file is sized once (ftruncate: sparse, blocks only where ids were
 * put) and mapped shared, so a value written through the mapping is in the
 * page cache and the file whether or not its page stays mapped; dropping
 * the mapping's pages (MADV_DONTNEED) loses nothing.  A thread counts the
 * times it steps onto another page; when the count over all threads passes
 * the budget in pages, the whole mapping is dropped at once and faults back
 * in page by page as needed.  With ids walked in about increasing order
 * (the merge's case) a page is stepped onto about once, so the count is
 * close to the pages really touched. */
#include "config.h"
#include "base/idmap.h"
#include "base/diag.h"
#include "base/hmap.h"
#include "exitcode.h"
#include "io/tmpfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096u

struct cm_idmap {
	size_t vsize, esize;
	int64_t lo, hi;
	/* dense */
	int fd;
	unsigned char *base;
	size_t size;
	uint64_t budget_pages, steps; /* steps: page changes since the last drop */
	uint64_t put_count;
	/* sparse */
	cm_hmap *h;
};

cm_idmap *cm_idmap_new(size_t val_size, int64_t lo, int64_t hi, uint64_t count, size_t budget)
{
	cm_idmap *m = cm_xcalloc(1, sizeof *m);
	unsigned __int128 range = hi >= lo ? (unsigned __int128)((__int128)hi - lo) + 1 : 0;
	m->vsize = val_size;
	m->esize = (val_size + 1 + 7) & ~(size_t)7;
	m->lo = lo;
	m->hi = hi;
	m->fd = -1;
	if (range && range <= 16 * (unsigned __int128)count + 1024 &&
	    range * m->esize < ((unsigned __int128)1 << 46)) {
		m->size = (size_t)(range * m->esize);
		m->budget_pages = budget / PAGE ? budget / PAGE : 1;
		if ((m->fd = cm_temp_fd("ids")) < 0) {
			free(m);
			return NULL;
		}
		if (ftruncate(m->fd, (off_t)m->size) != 0 ||
		    (m->base = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0)) == MAP_FAILED) {
			cm_error(CM_EXIT_IO, NULL, -1, "cannot make a table in a temporary file: %s", strerror(errno));
			close(m->fd);
			free(m);
			return NULL;
		}
		return m;
	}
	m->h = cm_hmap_new(8, val_size);
	return m;
}

int cm_idmap_is_dense(const cm_idmap *m) { return m->base != NULL; }

/* The array entry of ID (in range), counting page steps. */
static unsigned char *entry(cm_idmap *m, int64_t id)
{
	static __thread uintptr_t last_page;
	unsigned char *e = m->base + (size_t)((uint64_t)id - (uint64_t)m->lo) * m->esize;
	uintptr_t page = (uintptr_t)e / PAGE;
	if (page != last_page) {
		last_page = page;
		if (__atomic_add_fetch(&m->steps, 1, __ATOMIC_RELAXED) > m->budget_pages) {
			__atomic_store_n(&m->steps, 0, __ATOMIC_RELAXED);
			madvise(m->base, m->size, MADV_DONTNEED);
		}
	}
	return e;
}

void *cm_idmap_get(cm_idmap *m, int64_t id)
{
	unsigned char *e;
	if (!m->base)
		return cm_hmap_get(m->h, &id);
	if (id < m->lo || id > m->hi)
		return NULL;
	e = entry(m, id);
	return e[m->vsize] ? e : NULL;
}

void *cm_idmap_put(cm_idmap *m, int64_t id, int *created)
{
	unsigned char *e;
	int fresh;
	void *v;
	if (!m->base) {
		v = cm_hmap_put(m->h, &id, &fresh);
	} else {
		e = entry(m, id);
		fresh = !e[m->vsize];
		e[m->vsize] = 1;
		v = e;
	}
	m->put_count += fresh;
	if (created)
		*created = fresh;
	return v;
}

/* An array's entries in order of id: FN for each one put, until it
 * returns non-zero, which this returns. */
static int dense_walk(cm_idmap *m, int (*fn)(void *ctx, int64_t id, void *val), void *ctx)
{
	int rc = 0;
	for (size_t off = 0; off < m->size && !rc; off += m->esize) {
		int64_t id = (int64_t)((uint64_t)m->lo + off / m->esize);
		unsigned char *e = entry(m, id);
		if (e[m->vsize])
			rc = fn(ctx, id, e);
	}
	return rc;
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

uint64_t cm_idmap_bytes(const cm_idmap *m)
{
	return m->base ? m->put_count * m->esize : cm_hmap_bytes(m->h);
}

void cm_idmap_free(cm_idmap *m)
{
	if (!m)
		return;
	if (m->base) {
		munmap(m->base, m->size);
		close(m->fd);
	}
	cm_hmap_free(m->h);
	free(m);
}
