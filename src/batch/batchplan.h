/* batchplan.h - the plan of a cuptimerge-batch run: one entry per rank (a
 * trace with its window or thread map, or a reason it cannot run), and the
 * runner. */
#ifndef CM_BATCHPLAN_H
#define CM_BATCHPLAN_H

#include <stddef.h>
#include <stdio.h>

enum cm_bstate {
	CM_BR_RUN,    /* to be merged */
	CM_BR_DONE,   /* output complete and newer than its inputs: skipped */
	CM_BR_NOGPU,  /* a window without GPU work and without a trace (a launcher's): skipped */
	CM_BR_NOTRACE, /* a thread map no trace pairs with (a launcher's, a data loader
			  worker's: every process that starts a thread writes one): skipped */
	CM_BR_FAIL,   /* cannot run: no pair, ambiguous, unreadable (why says) */
};

typedef struct cm_brank {
	char *key;     /* the trace's file name without .pt.trace.json[.gz] (or the manifest's) */
	char *trace;   /* NULL when there is none */
	char *window;  /* window or thread map; NULL when there is none */
	int map;       /* window is a thread map: merge with -t, not -w */
	char *output;
	enum cm_bstate state;
	char *why;     /* CM_BR_FAIL, CM_BR_NOGPU, CM_BR_NOTRACE: one line */
	/* after the run */
	int ran;
	int status;    /* exit status of the merge; 128+N when killed by signal N */
	double seconds;
	long rss_kb;   /* peak resident set of the merge (wait4) */
	char *msg;     /* the merge's last line on stderr (not a usage hint) */
	int interrupted; /* the batch passed a stopping signal on to it, and it died of it */
} cm_brank;

typedef struct cm_bplan {
	cm_brank *r;
	size_t n, cap;
	struct cm_bfound *f; /* traces and windows found in directories, not yet paired */
	size_t nf, capf;
	int merge_force;     /* "--force" is among the options for the merges: a
				manifest's pair of two ranks is not refused */
	int window_cut;      /* the merges cut the window (--clip, --steps, --range):
				a window may pair with several traces */
} cm_bplan;

/* Add the ranks found in directory DIR (not recursive): traces are
 * *.json[.gz] files holding "traceEvents", windows those holding "events",
 * thread maps those naming their processes (cuptimerge-threadmap(5)); outputs
 * go to OUTDIR/KEY.merged.json.gz; a DIR with no such file is warned about.
 * Returns 0, or -1 after reporting that DIR cannot be read. */
int cm_bplan_dir(cm_bplan *p, const char *dir, const char *outdir);

/* Pair the traces with the windows and thread maps added by cm_bplan_dir
 * (call once, after the last directory): a trace with the one window that
 * fits it, else with the one thread map that holds its process and fits it;
 * a map pairs with every trace of a process it holds. */
void cm_bplan_pair(cm_bplan *p, const char *outdir);

/* 1 when NAME (or NULL) holds a control character (a tab, a line break,
 * ...), which the joblog and the plan, tab-separated lines, cannot hold;
 * else 0. */
int cm_bplan_has_control(const char *name);

/* NAME with its control characters shown as '?' (malloc'd), for a
 * message or a joblog line. */
char *cm_bplan_shown(const char *name);

/* Add the ranks of manifest PATH (cuptimerge-batch(1)).  Returns 0, or -1
 * after reporting an unreadable or malformed manifest. */
int cm_bplan_manifest(cm_bplan *p, const char *path, const char *outdir);

/* Mark CM_BR_RUN ranks whose output is complete (non-empty, recorded with
 * status 0 in the joblog JOBLOG, newer than both inputs) as CM_BR_DONE,
 * unless FORCE.  A joblog line past 128 KiB is no such record, and is
 * passed over without being held. */
void cm_bplan_skips(cm_bplan *p, const char *joblog, int force);

/* Fail each rank of P (not failed already) whose output is the output of
 * a rank before it, however the paths were typed: both merges would write
 * it, the second replacing the first, and the batch said "merged" of both.
 * Sorted by name, not rank against rank: a manifest may hold thousands. */
void cm_bplan_outputs_apart(cm_bplan *p);

/* Print the plan on F: one line per rank, tab-separated: key, trace,
 * window, output, and what will happen. */
void cm_bplan_print(const cm_bplan *p, FILE *f);

/* Keep only shard K of N (0 <= K < N): the ranks whose index in the plan,
 * in the order cm_bplan_print prints it, is K modulo N. */
void cm_bplan_shard(cm_bplan *p, size_t k, size_t n);

void cm_bplan_free(cm_bplan *p);

/* Open the joblog JOBLOG for a run (its directory made, the file created
 * if absent, not yet truncated) and lock it: an exclusive flock(2), held
 * until cm_brun closes it, so that a second run with the same joblog is
 * refused before it reads the joblog to skip ranks or runs anything (F22:
 * two runs rewrote the joblog together, cutting and losing lines, and
 * merged every rank twice).  Shards with their own joblogs still run side
 * by side.  Returns the descriptor (close-on-exec); -1 after reporting,
 * with status CM_EXIT_BUSY when another run holds the lock, CM_EXIT_IO when
 * the file cannot be opened.  A file system without locks gets a warning
 * and the run goes on. */
int cm_bjoblog_lock(const char *joblog);

/* Run the CM_BR_RUN ranks, JOBS at a time, each as `CUPTIMERGE --no-progress
 * -j N --trace-name NAME CUT... EXTRA... -w|-t WINDOW -o OUTPUT -- TRACE`
 * (CUT: the options MERGE_ARGS for a rank with a window, ALL_ARGS for
 * every rank, NULL-terminated lists or NULL for none; EXTRA: the NEXTRA
 * options given after the batch's "--"), and write the joblog
 * JOBLOG, open and locked as LOGFD (from cm_bjoblog_lock; closed here),
 * every rank a line, as it ends.  SIGINT, SIGTERM or SIGHUP (unless ignored
 * at start) stops the run (F23: the merges ran on as orphans, unrecorded):
 * no merge starts after it, it is passed on to the merges running, which
 * are waited for and recorded as interrupted, and the ranks not started get
 * a line too.  Returns 0; the signal's number when one stopped the run (the
 * caller dies of it); or -1 after reporting that the joblog cannot be
 * written or a merge cannot be started. */
int cm_brun(cm_bplan *p, const char *cuptimerge, char *const *extra, int nextra, const char *const *merge_args,
	    const char *const *all_args, int jobs, const char *joblog, int logfd);

/* ON 1 (--sync): cm_bjoblog_lock and cm_brun make what they write durable:
 * the joblog's name and each of its lines, the output directories they
 * make (the merges get --sync from the caller, for their outputs). */
void cm_brun_set_sync(int on);

/* "SIGINT", "SIGTERM" or "SIGHUP" for SIG, for messages. */
const char *cm_bsig_name(int sig);

#endif
