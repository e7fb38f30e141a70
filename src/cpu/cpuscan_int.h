/* cpuscan_int.h - the inside of C1, the scan of the CPU trace, shared by
 * its four files (not for use elsewhere), each calling only the ones below
 * it:
 *   cpuscan.c     the entries (cpuscan.h): which scan runs;
 *   cpuparallel.c runs the reader on worker threads over docsplit's
 *                 batches and folds their plans into the trace's (and
 *                 falls back to the careful scan on any fault);
 *   cpufields.c   reads: an event's fields, by yajl's callbacks (the
 *                 careful scan) or replayed from a checked element;
 *   cpuevent.c    notes what each event tells the plan (kind, extent,
 *                 metadata rows, External id candidates, cut notes), and
 *                 starts and frees the plan.
 * Each declaration below names the file that defines it (one header for
 * the four: they share struct cscan and the plan). */
#ifndef CM_CPUSCAN_INT_H
#define CM_CPUSCAN_INT_H

#include "cpu/cpuscan.h"
#include "cpu/cpucut.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "json/jval.h"
#include "json/saxread.h"

/* Fields of the event being read. */
enum field { F_NONE, F_PH, F_CAT, F_NAME, F_PID, F_TID, F_TS, F_DUR, F_ARGS, F_EXT, F_ARGNAME, F_ID, F_CORR };

/* A captured scalar: its type and, for numbers and strings, what matters. */
struct scalar {
	int type;        /* CM_J_* or -1: absent */
	int is_int;      /* a JSON integer literal (or a boolean); for ts, only the literal */
	cm_int i;        /* its value */
	int int_rc;      /* cm_py_int_of_* result for numbers/strings */
	double d;        /* float() of it */
	int float_rc;
	int word;        /* strings: which of the words below, or 0 */
};

enum word {
	W_OTHER, W_M, W_X, W_TRACE, W_CPU_OP, W_USER_ANN, W_PROF, W_ITER, W_WINEND,
	W_GPU,         /* the categories of GPU activity: kernel, gpu_memcpy, gpu_memset */
	W_API,         /* cuda_runtime, cuda_driver */
	W_THREAD_NAME, /* the metadata event thread_name */
	W_THREAD_N,    /* args.name: "thread " and an integer, as the merge names API rows */
	/* the other metadata events of a row (cm_cpuplan.meta) */
	W_PROCESS_NAME, W_PROCESS_LABELS, W_PROCESS_SORT, W_THREAD_SORT,
	W_FLOWPH,      /* the phases of flow events: s, f, t */
	W_PAIRPH,      /* the phases of begin/end pairs: B, E (by thread), b, e, n (async, by id) */
	W_SYNC,        /* the category cuda_sync */
	W_AC2G,        /* the category ac2g */
	W_STEP,        /* the name "ProfilerStep#N" (N in i) */
};

struct cscan {
	cm_sax sax;
	cm_cpuplan *plan;
	cm_hmap *ext;
	int depth;           /* 0 outside; 1 in the top object; 2 in traceEvents; 3 in an event; 4 in args */
	int in_events;       /* the depth-1 value being read is traceEvents */
	int top_key_base;    /* the depth-1 key is baseTimeNanoseconds */
	int skip;            /* nesting inside a value we ignore */
	enum field field;    /* the depth-3 or depth-4 key just read */
	int args_obj;        /* the event's args is an object */
	struct scalar ph, cat, name, pid, tid, ts, dur, ext_id, argname, id, corr;
	uint64_t kept;       /* kept events so far */
	int seen_non_m;
	int64_t last_pid;    /* the pid last added to plan->pids (most events repeat it) */
	int have_last_pid;
	cm_buf *spill_buf;   /* a worker of the parallel scan: candidates go here */
	cm_buf *names_buf;   /* ... and the names of its user annotations (cm_cpuplan.ann_names) */
	cm_buf *meta_buf;    /* ... and its metadata rows (cm_cpuplan.meta), 24 bytes each */
	cm_buf name_text;    /* the careful scan's copy of the event's "name", when a string */
	cm_buf argname_text; /* ... and of its args.name */
	const char *name_s;  /* the event's "name", when a string: its text (in name_text, or borrowed) */
	size_t name_n;
	const char *argname_s; /* its args.name, likewise */
	size_t argname_n;
	int borrow;          /* strings stay put until the event ends (the replay): no copies */
	cm_buf *cut_buf;     /* ... and the notes for cutting (cpucut.h) */
	int top_key_props;   /* the depth-1 key is deviceProperties */
	int props_depth;     /* inside deviceProperties: its nesting, built into props */
	cm_jbuild props;
	cm_arena *props_arena;
};

static inline const char *cname(struct cscan *c) { return cm_input_name(c->sax.in); }

static inline int fail(struct cscan *c, const char *fmt, unsigned long long n)
{
	cm_error(CM_EXIT_DATA, cname(c), cm_sax_offset(&c->sax), fmt, n);
	return 0;
}

/* cpufields.c: the callbacks that read an event into a struct cscan (and
 * call cscan_event_done at its end). */
extern const yajl_callbacks cscan_callbacks;

/* cpufields.c: an event S[0..N) of traceEvents (inside the top object and
 * the array: depth 2) checked and replayed into C's callbacks in one pass,
 * as cm_jvalid_replay(S, N, 2, 2, &cscan_callbacks, C, ARENA) does, with
 * the callbacks called directly.  1 when it is valid and read. */
int cscan_replay(struct cscan *c, const char *s, size_t n, cm_arena *arena);

/* cpuevent.c: PLAN empty, its extents at their start values, cutting with
 * CUT (reset) or not (NULL). */
void cscan_plan_begin(cm_cpuplan *plan, cm_cpucut *cut);

/* cpufields.c: the careful scan of IN into PLAN (cm_cpuscan_run), cutting
 * with CUT or not (NULL).  0, or -1 after a report. */
int cscan_careful(cm_input *in, cm_hmap *ext, cm_cpuplan *plan, cm_cpucut *cut);

/* cpuevent.c: the event just read ends: what it tells goes into C's plan.
 * 1, or 0 after a report (a yajl callback's result). */
int cscan_event_done(struct cscan *c);

/* cpuevent.c: the metadata row KEY (cm_cpuplan.meta) into P's set, within
 * its bound. */
void cscan_put_meta(cm_cpuplan *p, const void *key);

/* cpuevent.c: a top-level "deviceProperties" value V (NULL: not an
 * array), what the merge needs of it. */
void cscan_take_devprops(cm_cpuplan *p, const cm_jval *v);

/* cpuparallel.c: the parallel scan (cm_cpuscan_run_parallel), cutting with
 * CUT or not (NULL). */
int cscan_parallel(cm_input *in, cm_cpuplan *plan, int jobs, cm_ocrew *crew, cm_cpucut *cut);

#endif
