/* diag.h - error and warning messages, and the progress line on a terminal. */
#ifndef CM_DIAG_H
#define CM_DIAG_H

#include <stdint.h>

/* Set the program name used as message prefix ("cuptimerge"). */
void cm_diag_init(const char *progname);

/* Make sure descriptors 0, 1 and 2 are open, before anything else is: one
 * that the caller closed (`2>&-`, as cron and some daemons run programs)
 * would otherwise be taken by the next file opened, so that messages went
 * into the -o file or a window was read as standard input.  A closed one
 * gets /dev/null opened the other way round (gnulib's stdopen): standard
 * input write-only, standard output and error read-only, so that using it
 * still fails (EBADF) as using the closed descriptor would have.  0, or -1
 * with errno set when /dev/null cannot be opened. */
int cm_diag_stdfds(void);
/* Whether cm_diag_stdfds found FD (0, 1 or 2) closed: what stands on it is
 * its stand-in, and a path naming it (/dev/stdout) reopens /dev/null. */
int cm_diag_stdfd_closed(int fd);

/* Silence warnings and notes (errors are always printed). */
void cm_diag_set_quiet(int quiet);

/* Print "PROG: FILE:OFFSET: MESSAGE" on stderr (":OFFSET" only when offset >= 0,
 * "FILE:" only when file is non-NULL) and remember the first non-zero status.
 * Returns status, so callers can write `return cm_error(...)`. */
int cm_error(int status, const char *file, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* cm_error for the stack's convention, "0, or -1 after a report": reports
 * as cm_error does and returns -1, so a failing step is one line,
 * `return cm_fail(CM_EXIT_IO, name, -1, "cannot ...: %s", strerror(errno));`
 * (jq's one idiom for one thing, where `return cm_error(...), -1;` had
 * grown at 50 places). */
int cm_fail(int status, const char *file, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A command-line mistake: "PROG: MSG[: ARG]" and a pointer to --help on
 * stderr; returns STATUS (the usage status of exitcode.h). */
int cm_usage_error(int status, const char *msg, const char *arg);

/* Like cm_error but does not change the status; silenced by -q. */
void cm_warn(const char *file, int64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The first status passed to cm_error, or 0. */
int cm_diag_status(void);

/* Forget that status, for a caller that runs the engine again in the same
 * process (the fuzz harnesses). */
void cm_diag_reset(void);

/* One failure, one line.  A pass run on a second thread may meet the same
 * fault as the main thread (the window is read by both), or a fault of its
 * own at the same time; printed from both, the lines double or splice.  So a
 * worker thread defers: cm_error on it fills its slot instead of printing,
 * and the main thread, once it has joined the worker, settles the slot.
 * The slot is the worker's result; the caller zeroes it. */
typedef struct cm_diag_slot {
	int status; /* 0: nothing recorded */
	char *line; /* the message as it would have been printed, without "\n" */
} cm_diag_slot;

/* On a worker thread: from now on cm_error on this thread records its first
 * error in SLOT (and drops later ones) instead of printing it.  SLOT must
 * outlive the thread. */
void cm_diag_defer(cm_diag_slot *slot);

/* cm_diag_defer that hands back the slot deferred to before (NULL: none),
 * for code that quiets its own errors for a while. */
cm_diag_slot *cm_diag_defer_swap(cm_diag_slot *slot);

/* On the main thread, after joining the worker that filled SLOT: print its
 * error (on a thread that defers its own, pass it into that thread's slot
 * instead, unless that one holds an error already) when none has been
 * reported yet (it is then the first fault), else
 * drop it (the same fault seen twice, or one after the first: the run has
 * failed already).  Frees the line; returns SLOT's status (0: none). */
int cm_diag_settle(cm_diag_slot *slot);

/* Drop SLOT's error unprinted: the worker was told to stop, so what it met
 * after that is no fault of the run.  Frees the line. */
void cm_diag_drop(cm_diag_slot *slot);

/* Progress on stderr: shown only when enabled (a terminal, not -q), only once a
 * job has run for a second, refreshed at most 4 times a second, and cleared
 * before any other message.  `total` may be 0 when the size is unknown. */
void cm_progress_enable(int on);
void cm_progress_begin(const char *label, uint64_t total);
void cm_progress_update(uint64_t done);
void cm_progress_clear(void);
/* A run of stages shown as one line: TOTAL units of work in all (0: each
 * label counts alone), and the range of them the next labels cover: their
 * own 0..total maps onto [BASE, BASE + SPAN).  The line then shows the
 * whole run's percentage and the time left at its pace so far. */
void cm_progress_job(uint64_t total);
void cm_progress_stage(uint64_t base, uint64_t span);
/* A progress line of the caller's own TEXT ("PROG: TEXT"), under the same
 * rules: not in the first second, at most 4 times a second; FORCE shows it
 * now whatever the rate (still only when enabled). */
void cm_progress_text(const char *text, int force);
/* No progress from the calling thread (a pass run beside the main one). */
void cm_progress_thread_off(void);



#include <stddef.h>
/* Allocation that cannot fail: on exhaustion report "out of memory" and exit
 * with CM_EXIT_IO (no partial output file survives: it is a temporary name). */
void *cm_xmalloc(size_t n);
void *cm_xcalloc(size_t n, size_t size);
void *cm_xrealloc(void *p, size_t n);
char *cm_xstrdup(const char *s);
/* The N bytes at S (no NUL needed among or after them: a slice of a
 * buffer, which strndup would read past, looking for one), NUL-terminated. */
char *cm_xstrndup(const char *s, size_t n);

/* Seconds on a monotonic clock (for elapsed times). */
double cm_now_s(void);
/* CPU seconds of the calling thread, and of the whole process (for -v's
 * figures); 0 where the clock cannot be read. */
double cm_thread_cpu_s(void);
double cm_process_cpu_s(void);
/* -v: the calling thread's context switches so far, those it chose (a
 * wait: a lock, a condition, a read) in *VOL and those it suffered (its
 * CPU taken while it could run) in *INVOL; 0 where they cannot be read. */
void cm_thread_switches(unsigned long *vol, unsigned long *invol);

#endif
