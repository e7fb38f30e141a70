/* pages.h - the memory budget (--memory) and the mappings of temporary
 * files held to it: the id tables (idmap.h) and the other read-back
 * mappings.  The pages of every mapping watched are counted as they are
 * touched, and all are dropped from memory (they stay in their files)
 * when the count passes what the process's anonymous memory leaves of the
 * budget, so its resident size stays within about the budget however
 * large the tables. */
#ifndef CM_PAGES_H
#define CM_PAGES_H

#include <stddef.h>
#include <stdint.h>

/* The budget when the command line names none (--memory's default, its
 * one home): 24 MiB holds the id tables of a pair of about 1 GB in
 * memory, and beyond that they live in $TMPDIR. */
#define CM_MEMORY_DEFAULT ((size_t)24 << 20)

/* A mapping watched has its touched pages counted with the others', and
 * is dropped with them when the count passes what the process's anonymous
 * memory leaves of the budget (at least a quarter of it).  cm_pages_budget
 * sets the budget in bytes, the process's one (--memory: the engine sets
 * it once, before any table is made; CM_MEMORY_DEFAULT until then), and
 * cm_pages_budget_bytes reads it back (for the stages that size their own
 * buffers by it); cm_pages_touch marks the page of P (within the mapping)
 * touched; safe from several threads at once.  Watch and unwatch on one
 * thread, between such steps. */
typedef struct cm_pages cm_pages;
void cm_pages_budget(size_t budget);
size_t cm_pages_budget_bytes(void);
cm_pages *cm_pages_watch(void *base, size_t size);
void cm_pages_touch(cm_pages *w, const void *p);
void cm_pages_unwatch(cm_pages *w);

/* Drop the pages of every watched mapping now, as when the count passes
 * the budget: between two steps, when the next reads other pages than the
 * last (they come back as they are touched). */
void cm_pages_drop(void);

/* Measure the process's anonymous memory again and set what the files'
 * pages may take from it: when a table is made (the memory it comes after
 * has changed since the last measure). */
void cm_pages_measure(void);

/* The bytes of tables held in anonymous memory now (idmap.c's), counted
 * in place of the measure where /proc/self/statm cannot be read. */
void cm_pages_held(size_t bytes);

/* The bytes of file pages allowed now: the budget less the anonymous
 * memory measured last, at least a quarter of it (for the tests). */
size_t cm_pages_allowance(void);

/* The times the pages were dropped so far, for -v. */
uint64_t cm_pages_drops(void);

#endif
