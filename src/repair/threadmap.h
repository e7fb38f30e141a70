/* threadmap.h - which kernel thread id (gettid) an opaque CUPTI/Kineto thread
 * id stands for, read from a thread-map file (cuptimerge-threadmap(5)). */
#ifndef CM_THREADMAP_H
#define CM_THREADMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct cm_threadmap cm_threadmap;

/* Load PATH, in any of the accepted shapes: cuptimerge's own thread map
 * ("thread_map_version"), a trace window (its "thread_resource_map"), or the
 * Python snippet's {"meta": {"pid": P}, "threads": {ident: {"native_id",
 * "name", "ident_i32"}}}.  Returns NULL after reporting. */
cm_threadmap *cm_threadmap_load(const char *path, size_t bufsize);
void cm_threadmap_free(cm_threadmap *m);

/* Outcome of cm_threadmap_resolve. */
enum cm_tm_rc {
	CM_TM_NONE = 0,   /* not an opaque id of a mapped thread: leave it */
	CM_TM_MOVE,       /* move the event to *new_tid */
	CM_TM_AMBIG_REAL, /* also a real kernel tid of a mapped thread: left alone */
	CM_TM_AMBIG_REUSE /* several threads had this id and time cannot tell: left alone */
};

/* Where an event on (PID, TID) belongs.  TID matches a mapped thread when it
 * is the signed int32 of its pthread_self() or the absolute value of that.
 * A pthread id reused by several threads is told apart by their lifetimes
 * when HAVE_NS (ABS_NS: the event's CLOCK_REALTIME time in ns); when no
 * lifetime holds the time, all candidates count.  *name (may be NULL) is the
 * thread's name when the map has one. */
int cm_threadmap_resolve(const cm_threadmap *m, int64_t pid, int64_t tid, int have_ns, double abs_ns,
			 int64_t *new_tid, const char **name);

/* Threads in the map. */
size_t cm_threadmap_count(const cm_threadmap *m);

#endif
