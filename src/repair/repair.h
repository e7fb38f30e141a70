/* repair.h - the thread-repair stage: events on opaque thread ids moved to
 * their kernel tids, rows that gain events named, a report. */
#ifndef CM_REPAIR_H
#define CM_REPAIR_H

#include <stdint.h>
#include "json/jval.h"
#include "json/evout.h"
#include "base/pyval.h"
#include "repair/threadmap.h"

typedef struct cm_repair cm_repair;

cm_repair *cm_repair_new(const cm_threadmap *map);
void cm_repair_free(cm_repair *r);

/* Set the trace's base time (ns) so event times can be compared with
 * thread lifetimes; without it lifetimes are not used. */
void cm_repair_set_base(cm_repair *r, cm_int base_ns);

/* The row an event on (PID, TID) at ABS_NS (when HAVE_NS) belongs on: *out
 * is the new tid when the function returns 1, else TID stays.  Ambiguous
 * ids are left alone with one warning each.  COUNT: count the event as moved
 * (off when the same event is asked about twice, as phases 2 and 3 of the
 * merge do). */
int cm_repair_tid(cm_repair *r, int64_t pid, int64_t tid, int have_ns, double abs_ns, int count, int64_t *out);

/* A thread_name event exists for (PID, TID): do not name that row again. */
void cm_repair_named(cm_repair *r, int64_t pid, int64_t tid);

/* Write EV (an element of traceEvents) to EO, its "tid" moved when the map
 * says so; *moved tells whether it was.  Returns 0 or -1 (output failed). */
int cm_repair_write_event(cm_repair *r, const cm_jval *ev, cm_evout *eo, int *moved);

/* Decide for an event given as text: 1 and the parsed value in *ev (in
 * ARENA) when it moves, 0 when it stays as it is. */
int cm_repair_event_text(cm_repair *r, cm_arena *arena, const char *text, size_t len, const cm_jval **ev);

/* Write the event TEXT (LEN bytes, an element of traceEvents) to EO as its
 * next element: rewritten, its "tid" moved, when cm_repair_event_text says
 * it moves (parsed into ARENA, reset first), else as it was; with R NULL,
 * always as it was.  The copy's element hook with -t (cpu/cpucopy.h), in
 * the merge, its --split and the filter alike.  0, or -1 (output failed). */
int cm_repair_write_text(cm_repair *r, cm_arena *arena, const char *text, size_t len, cm_evout *eo);

/* thread_name and thread_sort_index events for the rows that gained events
 * and have no thread_name yet: "thread 507 (worker_0)" when the map names
 * the thread, as Kineto writes them. */
int cm_repair_write_metadata(cm_repair *r, cm_evout *eo);

/* One line on stderr (unless quiet): events moved, threads, per-row counts. */
void cm_repair_report(const cm_repair *r);

/* Events moved so far. */
uint64_t cm_repair_moved(const cm_repair *r);

#endif
