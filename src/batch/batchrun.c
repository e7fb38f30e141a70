/* batchrun.c - run the merges of a plan, a bounded number at a time, each in
 * its own process, and keep the joblog (cuptimerge-batch). */
#include "config.h"
#include "batch/batchplan.h"
#include "base/diag.h"
#include "base/opool.h"
#include "base/exitcode.h"
#include "base/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The last line of a merge's stderr is what the joblog keeps: a merge prints
 * one line per failure, so 4 KiB from the end holds it. */
#define TAIL_BYTES 4096

struct slot {
	pid_t pid; /* 0: free */
	size_t rank;
	int errfd; /* the merge's stderr: an unlinked temporary file */
	double t0;
	int had;         /* the rank's output existed when the merge started: */
	struct stat pre; /* as it was then (made_output) */
};

/* --sync (cm_brun_set_sync): the directories made, the joblog's lines. */
static int run_sync;

void cm_brun_set_sync(int on) { run_sync = on; }

/* fsync the directory that holds PATH (a file or a directory), so that a
 * name made in it survives a power cut.  0, or -1 with errno (EINVAL and
 * EROFS, a file system that cannot or need not, are no error). */
static int sync_parent(const char *path)
{
	char *d = cm_xstrdup(path), *s = strrchr(d, '/');
	int fd, rc = 0;
	if (!s)
		strcpy(d, ".");
	else
		s[s == d] = 0;
	fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (fsync(fd) < 0 && errno != EINVAL && errno != EROFS))
		rc = -1;
	if (fd >= 0)
		close(fd);
	free(d);
	return rc;
}

/* mkdir -p the directory part of PATH; errors show up when the merge opens
 * it.  With --sync, a directory made here is synced into its parent (the
 * merge syncs its own file's directory; the ones above are ours). */
static void mkdir_one(const char *d)
{
	if (mkdir(d, 0777) == 0 && run_sync)
		sync_parent(d); /* best effort, as the mkdir */
}

static void make_parent(const char *path)
{
	char *d = cm_xstrdup(path), *s;
	if ((s = strrchr(d, '/')) && s != d) {
		*s = 0;
		for (char *c = d + 1; *c; c++)
			if (*c == '/') {
				*c = 0;
				mkdir_one(d);
				*c = '/';
			}
		mkdir_one(d);
	}
	free(d);
}

/* The last non-empty line of FD (from its start), tabs and control
 * characters turned into spaces; a malloc'd string, "" when none.  A usage
 * error's last line is the hint "Try 'cuptimerge --help' for more
 * information.", which says nothing of what was wrong: the line before it
 * is taken instead. */
static char *last_line(int fd)
{
	char buf[TAIL_BYTES + 1];
	off_t end = lseek(fd, 0, SEEK_END), from = end > TAIL_BYTES ? end - TAIL_BYTES : 0;
	ssize_t n = end > 0 ? pread(fd, buf, (size_t)(end - from), from) : 0;
	char *e, *b;
	if (n < 0)
		n = 0;
	buf[n] = 0;
	e = buf + n;
	for (int hint = 0; hint < 2; hint++) {
		while (e > buf && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
			*--e = 0;
		for (b = e; b > buf && b[-1] != '\n'; b--)
			;
		if (b == buf || strncmp(b, "Try '", 5) || !strstr(b, "--help' for more information"))
			break;
		e = b; /* the hint: the line before it */
	}
	for (char *c = b; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	return cm_xstrdup(b);
}

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

/* One joblog line for R; flushed, so an interrupted batch keeps its lines
 * (with --sync, on the disk: a line that says a rank is merged outlives a
 * power cut, as that rank's output does). */
static int log_rank(FILE *log, const cm_brank *r)
{
	char status[16] = "-";
	const char *msg = r->ran ? r->msg : r->state == CM_BR_DONE ? "up to date, skipped" : r->why;
	if (r->ran || r->state == CM_BR_DONE)
		snprintf(status, sizeof status, "%d", r->ran ? r->status : 0);
	fprintf(log, "%s\t%s\t%s\t%s\t%s\t%.3f\t%ld\t%s\n", r->key, or_dash(r->trace), or_dash(r->window),
		or_dash(r->output), status, r->seconds, r->rss_kb, or_dash(msg));
	if (fflush(log))
		return -1;
	return run_sync && fdatasync(fileno(log)) < 0 && errno != EINVAL && errno != EROFS ? -1 : 0;
}

/* The length of a NULL-terminated option list (0 for NULL). */
static size_t args_len(const char *const *args)
{
	size_t n = 0;
	while (args && args[n])
		n++;
	return n;
}

/* Start the merge of R, with THREADS threads, its stderr to ERRFD, with
 * the signal mask MASK (the one the batch started with: cm_brun blocks the
 * signals it waits for, and a blocked mask survives exec).  Its options:
 * the batch's cut (MERGE_ARGS for a rank with a window, ALL_ARGS for
 * every rank), then the NEXTRA options EXTRA given after the batch's "--". */
static pid_t spawn(const char *cuptimerge, char *const *extra, int nextra, const char *const *merge_args,
		   const char *const *all_args, const cm_brank *r, int threads, int errfd, const sigset_t *mask)
{
	const char *base = strrchr(r->trace, '/');
	/* traceName must be UTF-8 (cuptimerge refuses other text): a file
	 * name that is not gets U+FFFD for its stray bytes, as a viewer shows
	 * them, rather than failing its rank */
	char jarg[16], *name = cm_utf8_clean(base ? base + 1 : r->trace);
	const char *head[] = {cuptimerge, "--no-progress", "-j", jarg, "--trace-name", name ? name : "trace"};
	const char *tail[] = {r->map ? "-t" : "-w", r->window, "-o", r->output, "--", r->trace, NULL};
	/* the options after the batch's "--" (issue 28 P6) come after the
	 * batch's own, so that the user's -j or --trace-name wins */
	size_t nh = sizeof head / sizeof *head, nt = sizeof tail / sizeof *tail;
	size_t nm = r->map ? 0 : args_len(merge_args), na = args_len(all_args), n = nh;
	const char **argv = cm_xmalloc((nh + nm + na + (size_t)nextra + nt) * sizeof *argv);
	pid_t pid;
	memcpy(argv, head, sizeof head);
	for (size_t i = 0; i < nm; i++)
		argv[n++] = merge_args[i];
	for (size_t i = 0; i < na; i++)
		argv[n++] = all_args[i];
	for (int i = 0; i < nextra; i++)
		argv[n++] = extra[i];
	memcpy(argv + n, tail, sizeof tail);
	snprintf(jarg, sizeof jarg, "%d", threads);
	make_parent(r->output);
	fflush(NULL);
	if ((pid = fork()) != 0) {
		free(argv);
		free(name);
		return pid;
	}
	/* the child: stderr into the temporary file, nothing on stdin/stdout */
	int null = open("/dev/null", O_RDWR);
	dup2(errfd, 2);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
	}
	sigprocmask(SIG_SETMASK, mask, NULL);
	execv(cuptimerge, (char *const *)argv);
	dprintf(2, "cuptimerge-batch: %s: cannot run: %s\n", cuptimerge, strerror(errno));
	_exit(127);
}

static void progress(const cm_bplan *p, size_t done, size_t total, size_t failed, double t0)
{
	char line[160], eta[40] = "";
	double el = cm_now_s() - t0;
	(void)p;
	if (done && done < total)
		snprintf(eta, sizeof eta, ", ETA %.0f s", el / (double)done * (double)(total - done));
	snprintf(line, sizeof line, "ranks %zu/%zu done, %zu failed, %.0f s%s", done, total, failed, el, eta);
	cm_progress_text(line, 0);
}

int cm_bjoblog_lock(const char *joblog)
{
	int fd;
	make_parent(joblog);
	if ((fd = open(joblog, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0)
		return cm_fail(CM_EXIT_IO, joblog, -1, "cannot write the joblog: %s", strerror(errno));
	if (run_sync && sync_parent(joblog) < 0) { /* its name, were it new */
		close(fd);
		return cm_fail(CM_EXIT_IO, joblog, -1, "cannot sync the joblog's directory: %s", strerror(errno));
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (errno == EWOULDBLOCK || errno == EINTR) {
		close(fd);
		return cm_fail(CM_EXIT_BUSY, joblog, -1,
				"another cuptimerge-batch is running with this joblog: nothing run (wait for it, or "
				"give this run its own --joblog)");
	}
	cm_warn(joblog, -1, "cannot lock the joblog (%s): running without the lock", strerror(errno));
	return fd;
}

/* The signals that stop a batch from outside (F23), and their names. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

const char *cm_bsig_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* MSG (taken), a merge's last line, with the merge's way to override a
 * refusal, "(use --force to merge anyway)", put as the batch's: the batch's
 * own --force means "merge again", and reaches no merge (issue 28 P6). */
static char *batch_hint(char *msg)
{
	static const char merge_hint[] = "(use --force to merge anyway)";
	static const char batch[] = "(to merge anyway, run the batch again with -- --force: cuptimerge-batch(1))";
	char *at = strstr(msg, merge_hint), *out;
	if (!at)
		return msg;
	out = cm_xmalloc(strlen(msg) - strlen(merge_hint) + strlen(batch) + 1);
	sprintf(out, "%.*s%s%s", (int)(at - msg), msg, batch, at + strlen(merge_hint));
	free(msg);
	return out;
}

/* Why the merge of slot SL, which exited 0, did not make its rank's output
 * R->output (a malloc'd line), or NULL when it did: the file is there, and
 * a regular file is not empty and not the one that was there before (a
 * merge renames a new file onto it).  A device or a FIFO is written
 * through: nothing to see.  Why: a --cuptimerge that is no cuptimerge
 * (/bin/true) had every rank reported merged, and no file made. */
static char *made_output(const struct slot *sl, const cm_brank *r)
{
	struct stat st;
	const char *why = NULL;
	char *line;
	if (stat(r->output, &st) < 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		return NULL;
	else if (st.st_size == 0)
		why = "an empty file";
	if (sl->had && st.st_dev == sl->pre.st_dev && st.st_ino == sl->pre.st_ino &&
	    st.st_size == sl->pre.st_size && st.st_mtim.tv_sec == sl->pre.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == sl->pre.st_mtim.tv_nsec && st.st_ctim.tv_sec == sl->pre.st_ctim.tv_sec &&
	    st.st_ctim.tv_nsec == sl->pre.st_ctim.tv_nsec)
		why = "the file is as it was, not written";
	if (!why)
		return NULL;
	line = cm_xmalloc(strlen(r->output) + strlen(why) + 64);
	sprintf(line, "the merge exited 0, but made no output: %s: %s", r->output, why);
	return line;
}

/* Record the end of the merge in slot K (wait status ST, usage RU) in its
 * rank, and its joblog line in LOG.  STOPSIG: the signal the batch passed
 * on to it, or 0.  0, or -1 when the line cannot be written. */
static int finish_slot(cm_bplan *p, struct slot *sl, int st, const struct rusage *ru, int stopsig, FILE *log)
{
	cm_brank *r = &p->r[sl->rank];
	char *why;
	r->ran = 1;
	r->seconds = cm_now_s() - sl->t0;
	r->rss_kb = ru->ru_maxrss; /* kilobytes on Linux */
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (r->status == 0 && (why = made_output(sl, r))) {
		r->status = CM_EXIT_IO; /* what it says: the file was not written */
		r->msg = why;
	} else if (stopsig && WIFSIGNALED(st)) {
		r->interrupted = 1;
		r->msg = cm_xmalloc(64);
		snprintf(r->msg, 64, "interrupted: cuptimerge-batch got %s", cm_bsig_name(stopsig));
	} else {
		r->msg = batch_hint(last_line(sl->errfd));
		if (!*r->msg && WIFSIGNALED(st)) {
			free(r->msg);
			r->msg = cm_xstrdup(strsignal(WTERMSIG(st)));
		}
	}
	close(sl->errfd);
	sl->pid = 0;
	return log_rank(log, r);
}

int cm_brun(cm_bplan *p, const char *cuptimerge, char *const *extra, int nextra, const char *const *merge_args,
	    const char *const *all_args, int jobs, const char *joblog, int logfd)
{
	FILE *log;
	struct slot *slots;
	size_t next = 0, total = 0, done = 0, failed = 0;
	int running = 0, rc = 0, stopsig = 0;
	double t0 = cm_now_s();
	sigset_t waitset, oldmask;
	struct sigaction sa;
	/* the CPUs shared among the merges running at once: each merge gets
	 * its part, not all of them (N merges of N threads each on N CPUs
	 * would only cost memory and switches) */
	int threads = cm_opool_cpus_available() / (jobs < 1 ? 1 : jobs);
	if (threads < 1)
		threads = 1;

	/* rewritten from the start, under the lock taken before the skips read it */
	if (ftruncate(logfd, 0) < 0 || !(log = fdopen(logfd, "w"))) {
		cm_error(CM_EXIT_IO, joblog, -1, "cannot write the joblog: %s", strerror(errno));
		close(logfd);
		return -1;
	}
	fputs("key\tcpu_trace\twindow\toutput\texit\tseconds\tpeak_rss_kb\tmessage\n", log);
	for (size_t i = 0; i < p->n; i++) {
		if (p->r[i].state == CM_BR_RUN)
			total++;
		else if (log_rank(log, &p->r[i]) < 0)
			rc = -1;
	}
	/* The merges' ends and the stopping signals are waited for together,
	 * blocked and taken with sigwaitinfo(2): a signal cannot slip in between
	 * a check and the wait.  A stopping signal ignored at start (nohup)
	 * stays ignored: it is not waited for.  SIGCHLD ignored by whoever
	 * started us would make the kernel reap the merges: default it. */
	sigemptyset(&waitset);
	sigaddset(&waitset, SIGCHLD);
	for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
		if (sigaction(stop_signals[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&waitset, stop_signals[i]);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_BLOCK, &waitset, &oldmask);
	slots = cm_xcalloc((size_t)jobs, sizeof *slots);
	for (;;) {
		struct rusage ru;
		int st, k, sig, reaped = 0;
		pid_t pid;
		cm_brank *r;
		/* no new merge once the run has failed or was told to stop */
		while (rc == 0 && !stopsig && running < jobs && next < p->n) {
			FILE *tmp;
			r = &p->r[next];
			if (r->state != CM_BR_RUN) {
				next++;
				continue;
			}
			for (k = 0; slots[k].pid; k++)
				;
			if (!(tmp = tmpfile())) {
				cm_error(CM_EXIT_IO, NULL, -1, "cannot make a temporary file: %s", strerror(errno));
				rc = -1;
				break;
			}
			slots[k].errfd = dup(fileno(tmp));
			fclose(tmp);
			slots[k].t0 = cm_now_s();
			slots[k].rank = next;
			slots[k].had = stat(r->output, &slots[k].pre) == 0;
			if ((slots[k].pid = spawn(cuptimerge, extra, nextra, merge_args, all_args, r, threads, slots[k].errfd,
						  &oldmask)) < 0) {
				cm_error(CM_EXIT_IO, NULL, -1, "cannot fork: %s", strerror(errno));
				slots[k].pid = 0;
				close(slots[k].errfd);
				rc = -1;
				break;
			}
			running++;
			next++;
		}
		/* every merge that has ended; after an error (the joblog, a fork)
		 * the ones running still end and get their lines if they can */
		while (running && (pid = wait4(-1, &st, WNOHANG, &ru)) > 0) {
			for (k = 0; k < jobs && slots[k].pid != pid; k++)
				;
			if (k == jobs)
				continue; /* not a merge of ours */
			r = &p->r[slots[k].rank];
			if (finish_slot(p, &slots[k], st, &ru, stopsig, log) < 0 && rc == 0)
				rc = -1;
			running--;
			done++;
			failed += r->status != 0;
			reaped = 1;
			progress(p, done, total, failed, t0);
		}
		if (reaped)
			continue; /* start the next ones before waiting again */
		if (!running)
			break;
		if ((sig = sigwaitinfo(&waitset, NULL)) < 0) {
			if (errno == EINTR)
				continue;
			cm_error(CM_EXIT_IO, NULL, -1, "waiting for the merges: %s", strerror(errno));
			rc = -1;
			break;
		}
		if (sig == SIGCHLD)
			continue;
		/* told to stop: pass the signal on to the merges and wait for
		 * them (each a joblog line); a second one is passed on too */
		if (!stopsig)
			stopsig = sig;
		for (k = 0; k < jobs; k++)
			if (slots[k].pid)
				kill(slots[k].pid, sig);
	}
	/* the ranks that never started after a stop: a line each, "-" */
	for (size_t i = next; stopsig && i < p->n; i++) {
		cm_brank *r = &p->r[i];
		if (r->state != CM_BR_RUN)
			continue;
		free(r->why);
		r->why = cm_xmalloc(64);
		snprintf(r->why, 64, "not started: cuptimerge-batch got %s", cm_bsig_name(stopsig));
		if (log_rank(log, r) < 0 && rc == 0)
			rc = -1;
	}
	free(slots);
	cm_progress_clear();
	if (fclose(log) && rc == 0)
		rc = -1;
	if (rc < 0 && !cm_diag_status())
		cm_error(CM_EXIT_IO, joblog, -1, "cannot write the joblog: %s", strerror(errno));
	/* a stop signal that came after the last wait dies with its default
	 * action here: the joblog is complete by now */
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	return rc < 0 ? -1 : stopsig;
}
