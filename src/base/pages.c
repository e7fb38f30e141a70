/* pages.c - the memory budget (--memory) and the watcher of the mappings
 * that are held to it: the id tables in temporary files (idmap.c), the
 * operator index's runs (gpu/opindex.c) and the window's records read
 * back.
 *
 * A bitmap per mapping (cm_pages), a bit a page, marks the pages touched
 * since the last drop; when the number of them over all mappings passes
 * the budget in pages, every mapping is dropped at once (MADV_DONTNEED:
 * they are shared file mappings, so nothing is lost), the bitmaps cleared,
 * and pages fault back in one by one as needed.  So the count is the pages
 * really touched, whatever the order of the ids and however many tables
 * are used at once.  (An earlier version counted the steps from one page
 * to another, in one counter for all tables: the joins, which go from
 * table to table at every id, dropped every table thousands of times.)
 *
 * What the file pages may take of the budget is what the process's other
 * resident memory leaves of it, at least a quarter: its anonymous memory
 * (heap, thread arenas and stacks, buffers, tables held in memory), read
 * from /proc/self/statm when the budget is set, when a table is made, at
 * every drop, and every REFRESH_PAGES pages touched.  Counting the tables'
 * pages alone let the total grow with the input: the buffers of the output
 * phase (10 MB with two threads) came on top of a budget that the 1 GB
 * pair never filled there and the pair four times larger did (34.4 MB
 * against 39.6 MB peak RSS).  Counted together, the run stays within about
 * the budget plus the program's code once its tables are larger than the
 * budget, whatever the size of the input.  Without /proc, the tables held
 * in memory (cm_pages_held) are counted instead. */
#include "config.h"
#include "base/pages.h"
#include "base/diag.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096u
/* Pages touched between two measures of the anonymous memory (1 MiB): a
 * measure costs a read of /proc/self/statm, a few microseconds, against a
 * fault for each page touched. */
#define REFRESH_PAGES 256u

/* A mapping watched (cm_pages): its pages touched since the last drop. */
struct cm_pages {
	unsigned char *base;
	size_t size;
	uint64_t *touched;  /* a bit a page */
	size_t words;
	cm_pages *next;     /* in the list of mappings watched (all_watched) */
};

/* The mappings watched, the pages of them touched since the last drop, and
 * the budget in pages.  The list changes on the main thread only, between
 * the steps that use the tables from several threads; the lock keeps a drop
 * from meeting a change all the same. */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static cm_pages *all_watched;
static uint64_t all_touched, budget_pages = 1;
/* The budget in bytes (cm_pages_budget: --memory, set once by the engine;
 * the default until then), and /proc/self/statm, open for the measure of
 * the anonymous memory (-1: none to be had, -2: not tried). */
static size_t budget_bytes = CM_MEMORY_DEFAULT;
static int statm_fd = -2;
static long statm_page;
/* The bytes of the tables held in anonymous memory (cm_pages_held), the
 * measure where /proc has none. */
static size_t held_bytes;
/* The drops so far (drop_all), for -v. */
static uint64_t drops;

void cm_pages_held(size_t bytes) { __atomic_store_n(&held_bytes, bytes, __ATOMIC_RELAXED); }

uint64_t cm_pages_drops(void)
{
	uint64_t n;
	pthread_mutex_lock(&all_lock);
	n = drops;
	pthread_mutex_unlock(&all_lock);
	return n;
}

/* The process's resident memory that is not file pages (resident less
 * shared in /proc/self/statm), in bytes; (size_t)-1 when it cannot be read.
 * Safe from several threads (pread at offset 0 of one descriptor). */
static size_t anon_resident(void)
{
	char text[160];
	unsigned long size, resident, shared;
	int fd = __atomic_load_n(&statm_fd, __ATOMIC_ACQUIRE);
	ssize_t n;
	if (fd < 0 || (n = pread(fd, text, sizeof text - 1, 0)) <= 0)
		return (size_t)-1;
	text[n] = '\0';
	if (sscanf(text, "%lu %lu %lu", &size, &resident, &shared) != 3 || shared > resident)
		return (size_t)-1;
	return (size_t)(resident - shared) * (size_t)statm_page;
}

/* Set the pages the files may have touched: what the anonymous memory
 * leaves of the budget, at least a quarter of it. */
static void set_allowance(void)
{
	size_t budget = __atomic_load_n(&budget_bytes, __ATOMIC_RELAXED), other = anon_resident(), files;
	if (other == (size_t)-1)
		other = __atomic_load_n(&held_bytes, __ATOMIC_RELAXED);
	files = other < budget / 4 * 3 ? budget - other : budget / 4;
	__atomic_store_n(&budget_pages, files / PAGE ? files / PAGE : 1, __ATOMIC_RELAXED);
}

void cm_pages_measure(void)
{
	pthread_mutex_lock(&all_lock);
	if (__atomic_load_n(&statm_fd, __ATOMIC_RELAXED) == -2) {
		statm_page = sysconf(_SC_PAGESIZE);
		/* released after statm_page, which anon_resident reads */
		__atomic_store_n(&statm_fd, statm_page > 0 ? open("/proc/self/statm", O_RDONLY | O_CLOEXEC) : -1,
				 __ATOMIC_RELEASE);
	}
	set_allowance();
	pthread_mutex_unlock(&all_lock);
}

void cm_pages_budget(size_t budget)
{
	__atomic_store_n(&budget_bytes, budget, __ATOMIC_RELAXED);
	cm_pages_measure();
}

size_t cm_pages_budget_bytes(void) { return __atomic_load_n(&budget_bytes, __ATOMIC_RELAXED); }

size_t cm_pages_allowance(void)
{
	return (size_t)__atomic_load_n(&budget_pages, __ATOMIC_RELAXED) * PAGE;
}

cm_pages *cm_pages_watch(void *base, size_t size)
{
	cm_pages *w = cm_xcalloc(1, sizeof *w);
	/* No fault-around: on a read fault the kernel also maps the neighbours
	 * of the page that are in the page cache (16 pages by default), which
	 * the bitmap never sees.  With the joins' walks on two threads that put
	 * the 4x pair 10 MB over its budget (44.6 MB against 31.4 MB with
	 * this, 35.1 MB on one thread without it). */
	madvise(base, size, MADV_RANDOM);
	w->base = base;
	w->size = size;
	w->words = (size / PAGE + 64) / 64;
	w->touched = cm_xcalloc(w->words, sizeof *w->touched);
	pthread_mutex_lock(&all_lock);
	w->next = all_watched;
	all_watched = w;
	pthread_mutex_unlock(&all_lock);
	return w;
}

void cm_pages_unwatch(cm_pages *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&all_lock);
	for (cm_pages **p = &all_watched; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_mutex_unlock(&all_lock);
	free(w->touched);
	free(w);
}

/* Forget which pages were touched and drop every watched mapping's pages
 * from memory.  Another thread may be marking a page meanwhile: a page
 * miscounted once is a small error in the count, never in the data. */
static void drop_all(void)
{
	pthread_mutex_lock(&all_lock);
	/* the count first: a page another thread marks while the bitmaps are
	 * cleared is then counted anew (or counted and dropped, which only
	 * overcounts); cleared after, it would stay in memory uncounted */
	__atomic_store_n(&all_touched, 0, __ATOMIC_RELAXED);
	drops++;
	for (cm_pages *w = all_watched; w; w = w->next) {
		for (size_t i = 0; i < w->words; i++)
			__atomic_store_n(&w->touched[i], 0, __ATOMIC_RELAXED);
		madvise(w->base, w->size, MADV_DONTNEED);
	}
	set_allowance();
	pthread_mutex_unlock(&all_lock);
}

void cm_pages_drop(void) { drop_all(); }

void cm_pages_touch(cm_pages *w, const void *p)
{
	size_t pg;
	uint64_t bit, *word;
	if (!w) /* a table in memory (map_table) */
		return;
	pg = (size_t)((const unsigned char *)p - w->base) / PAGE;
	bit = (uint64_t)1 << (pg & 63);
	word = &w->touched[pg >> 6];
	if (!(__atomic_load_n(word, __ATOMIC_RELAXED) & bit) && !(__atomic_fetch_or(word, bit, __ATOMIC_RELAXED) & bit)) {
		uint64_t n = __atomic_add_fetch(&all_touched, 1, __ATOMIC_RELAXED);
		if (n % REFRESH_PAGES == 0)
			set_allowance();
		if (n > __atomic_load_n(&budget_pages, __ATOMIC_RELAXED))
			drop_all();
	}
}
