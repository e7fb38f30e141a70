/* batchplan_int.h - what batchplan.c (the ranks, the files found in
 * directories), batchpair.c (pairing) and batchmanifest.c (the manifest,
 * the joblog's skips) share; not for the rest of the program.  batchplan.c
 * is below the other two: they call it, it calls neither. */
#ifndef CM_BATCHPLAN_INT_H
#define CM_BATCHPLAN_INT_H

#include "batch/batchplan.h"
#include "batch/batchscan.h" /* cm_bfacts */

#define OUT_SUFFIX ".merged.json.gz"

/* A file found in a directory; a thread map is found once per process it
 * holds (consecutive entries with the same path), since it pairs with the
 * trace of each. */
struct cm_bfound {
	char *path;
	cm_bfacts facts;
	int used; /* a window paired with a trace (or a map's process, with one) */
};

/* A malloc'd string, as sprintf formats it. */
char *cm_bplan_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A new rank of P named KEY, its other fields empty (state CM_BR_RUN). */
cm_brank *cm_bplan_add_rank(cm_bplan *p, const char *key);

/* R cannot run, for the reason WHY (taken). */
void cm_bplan_fail(cm_brank *r, char *why);

/* What to add to WHY, a window's damage: " (a process killed ...)" for a
 * window cut short, else "". */
const char *cm_bplan_damage_hint(const char *why);

#endif
