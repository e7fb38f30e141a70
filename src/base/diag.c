/* diag.c - one family of messages (errors, warnings) and a rate-limited progress line. */
#define _GNU_SOURCE 1 /* RUSAGE_THREAD */
#include "config.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "cuptimerge";
static int quiet;
static int first_status;

static int progress_on;
static int progress_shown;    /* a progress line is on screen */
static const char *progress_label;
static uint64_t progress_total;
static double progress_t0, progress_last;
/* A run of several stages shown as one line (cm_progress_job): all its
 * work in units, and the range [job_base, job_base + job_span) of the stage
 * the current label belongs to. */
static uint64_t job_total, job_base, job_span;
static double progress_delay = 1.0; /* no line for a job shorter than this */

static int stdfds_closed; /* bit FD: cm_diag_stdfds found FD closed */

void cm_diag_init(const char *progname) { prog = progname; }
int cm_diag_stdfd_closed(int fd) { return fd >= 0 && fd <= 2 && (stdfds_closed >> fd & 1); }
int cm_diag_stdfds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int nfd;
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		stdfds_closed |= 1 << fd;
		/* the lower ones are open by now, so this takes FD itself */
		if ((nfd = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY)) < 0)
			return -1;
		if (nfd != fd) {
			int e = dup2(nfd, fd) < 0 ? errno : 0;
			close(nfd);
			if (e)
				return errno = e, -1;
		}
	}
	return 0;
}

void cm_diag_set_quiet(int q) { quiet = q; }
int cm_diag_status(void) { return first_status; }
void cm_diag_reset(void) { first_status = 0; }

/* LINE with its control characters written as escapes (\n, \t, \r, \xNN):
 * a key or a file name from the input may hold a newline, and a message is
 * one line, always (found by the fuzz harnesses).  Frees LINE when it makes
 * a new string; NULL when memory ran out. */
static char *escape_controls(char *line)
{
	size_t n = 0, extra = 0;
	char *out, *o;
	for (const unsigned char *p = (const unsigned char *)line; *p; p++, n++)
		if (*p < 0x20 || *p == 0x7f)
			extra += *p == '\n' || *p == '\t' || *p == '\r' ? 1 : 3;
	if (!extra)
		return line;
	if (!(out = malloc(n + extra + 1))) {
		free(line);
		return NULL;
	}
	o = out;
	for (const unsigned char *p = (const unsigned char *)line; *p; p++) {
		if (*p >= 0x20 && *p != 0x7f)
			*o++ = (char)*p;
		else if (*p == '\n' || *p == '\t' || *p == '\r')
			o += sprintf(o, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
		else
			o += sprintf(o, "\\x%02x", *p);
	}
	*o = 0;
	free(line);
	return out;
}

/* The message as one line, "PROG: FILE:OFFSET: MESSAGE" without the newline,
 * in a malloc'd string (the caller frees it), or NULL when memory ran out. */
static char *format_line(const char *file, int64_t offset, const char *fmt, va_list ap)
{
	char head[64 + 4096], *line;
	va_list ap2;
	int h, n;
	if (!file)
		h = snprintf(head, sizeof head, "%s: ", prog);
	else if (offset >= 0)
		h = snprintf(head, sizeof head, "%s: %s:%lld: ", prog, file, (long long)offset);
	else
		h = snprintf(head, sizeof head, "%s: %s: ", prog, file);
	if (h < 0)
		return NULL;
	if ((size_t)h >= sizeof head)
		h = (int)sizeof head - 1; /* a name longer than PATH_MAX: cut, not lost */
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !(line = malloc((size_t)h + (size_t)n + 1)))
		return NULL;
	memcpy(line, head, (size_t)h);
	vsnprintf(line + h, (size_t)n + 1, fmt, ap);
	return escape_controls(line);
}

/* Print one message line on stderr with a single stdio call, so that lines
 * from two threads (a warning beside an error) never splice. */
static void vreport(const char *file, int64_t offset, const char *fmt, va_list ap)
{
	char *line = format_line(file, offset, fmt, ap);
	cm_progress_clear();
	if (line) {
		fprintf(stderr, "%s\n", line);
		free(line);
	} else {
		fprintf(stderr, "%s: %s\n", prog, fmt); /* no memory for the details */
	}
}

/* The slot of a worker thread that defers its errors, or NULL (print). */
static __thread cm_diag_slot *deferred;

void cm_diag_defer(cm_diag_slot *slot) { deferred = slot; }

cm_diag_slot *cm_diag_defer_swap(cm_diag_slot *slot)
{
	cm_diag_slot *old = deferred;
	deferred = slot;
	return old;
}

int cm_diag_settle(cm_diag_slot *slot)
{
	int status = slot->status;
	if (deferred && deferred != slot) {
		/* settled on a thread that defers too: the error goes up, not out */
		if (status && !deferred->status) {
			deferred->status = status;
			deferred->line = slot->line;
			slot->line = NULL;
		}
		free(slot->line);
		slot->line = NULL;
		return status;
	}
	if (status && !first_status) {
		cm_progress_clear();
		fprintf(stderr, "%s\n", slot->line ? slot->line : "cuptimerge: error (no memory for the message)");
		first_status = status;
	}
	free(slot->line);
	slot->line = NULL;
	return status;
}

void cm_diag_drop(cm_diag_slot *slot)
{
	free(slot->line);
	slot->line = NULL;
	slot->status = 0;
}

/* cm_error's body for both entry points. */
static int verror(int status, const char *file, int64_t offset, const char *fmt, va_list ap)
{
	if (deferred) {
		/* keep only the first: what follows on this thread is its consequence */
		if (!deferred->status) {
			deferred->line = format_line(file, offset, fmt, ap);
			deferred->status = status;
		}
		return status;
	}
	vreport(file, offset, fmt, ap);
	if (!first_status)
		first_status = status;
	return status;
}

int cm_error(int status, const char *file, int64_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(status, file, offset, fmt, ap);
	va_end(ap);
	return status;
}

int cm_fail(int status, const char *file, int64_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror(status, file, offset, fmt, ap);
	va_end(ap);
	return -1;
}

int cm_usage_error(int status, const char *msg, const char *arg)
{
	fprintf(stderr, "%s: %s%s%s\nTry '%s --help' for more information.\n", prog, msg, arg ? ": " : "",
		arg ? arg : "", prog);
	return status;
}

void cm_warn(const char *file, int64_t offset, const char *fmt, ...)
{
	va_list ap;
	if (quiet)
		return;
	va_start(ap, fmt);
	vreport(file, offset, fmt, ap);
	va_end(ap);
}

/* Seconds on clock ID, 0 where it cannot be read. */
static double clock_s(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double cm_now_s(void) { return clock_s(CLOCK_MONOTONIC); }
double cm_thread_cpu_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }
double cm_process_cpu_s(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

void cm_thread_switches(unsigned long *vol, unsigned long *invol)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		ru.ru_nvcsw = ru.ru_nivcsw = 0;
	*vol = (unsigned long)ru.ru_nvcsw;
	*invol = (unsigned long)ru.ru_nivcsw;
}

void cm_progress_enable(int on)
{
	/* for tests: 0 shows every update at once */
	const char *d = getenv("CUPTIMERGE_PROGRESS_DELAY");
	progress_on = on;
	if (d && *d)
		progress_delay = atof(d);
}

void cm_progress_job(uint64_t total) { job_total = total; }

void cm_progress_stage(uint64_t base, uint64_t span)
{
	job_base = base;
	job_span = span;
}

/* Passes on a second thread keep quiet: the line belongs to the main one. */
static __thread int progress_thread_off;
void cm_progress_thread_off(void) { progress_thread_off = 1; }

void cm_progress_begin(const char *label, uint64_t total)
{
	if (!progress_on || progress_thread_off)
		return;
	progress_label = label;
	progress_total = total;
	if (progress_t0 == 0)
		progress_t0 = cm_now_s();
}

void cm_progress_update(uint64_t done)
{
	double t;
	/* the thread's own flag first: the label is the main thread's to change */
	if (progress_thread_off || !progress_on || !progress_label)
		return;
	t = cm_now_s();
	/* A job shorter than a second never shows a line; then 4 refreshes a second. */
	if (t - progress_t0 < progress_delay || t - progress_last < (progress_delay > 0 ? 0.25 : 0))
		return;
	progress_last = t;
	if (job_total && progress_total) {
		/* one percentage for the whole run, and the time left at this pace */
		double f = ((double)job_base + (double)job_span * (double)done / (double)progress_total) /
			   (double)job_total;
		f = f > 1.0 ? 1.0 : f;
		if (f > 0.02)
			fprintf(stderr, "\r%s: %s: %3.0f%%, about %.0f s left   ", prog, progress_label, 100.0 * f,
				(t - progress_t0) * (1.0 - f) / f);
		else
			fprintf(stderr, "\r%s: %s: %3.0f%%   ", prog, progress_label, 100.0 * f);
	} else if (progress_total)
		fprintf(stderr, "\r%s: %s %.0f / %.0f MB (%3.0f%%)   ", prog, progress_label,
			(double)done / 1e6, (double)progress_total / 1e6,
			100.0 * (double)done / (double)progress_total);
	else
		fprintf(stderr, "\r%s: %s %.0f MB   ", prog, progress_label, (double)done / 1e6);
	progress_shown = 1;
}

void cm_progress_text(const char *text, int force)
{
	double t;
	if (!progress_on || progress_thread_off)
		return;
	t = cm_now_s();
	if (progress_t0 == 0)
		progress_t0 = t;
	if (!force && (t - progress_t0 < progress_delay || t - progress_last < 0.25))
		return;
	progress_last = t;
	fprintf(stderr, "\r%s: %s   ", prog, text);
	progress_shown = 1;
}

void cm_progress_clear(void)
{
	if (progress_shown) {
		fprintf(stderr, "\r%79s\r", "");
		progress_shown = 0;
	}
}

/* Report and leave: a tool that cannot get memory cannot finish the merge.
 * An -o output is still unnamed (O_TMPFILE), or under a temporary name that
 * outfile.c's atexit hook removes: exit(), not _exit(), so that it runs. */
static void out_of_memory(size_t n)
{
	deferred = NULL; /* the process ends here: no main thread will settle a slot */
	cm_error(CM_EXIT_IO, NULL, -1, "out of memory (%zu bytes)", n);
	exit(CM_EXIT_IO);
}

void *cm_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

void *cm_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		out_of_memory(n * size);
	return p;
}

void *cm_xrealloc(void *old, size_t n)
{
	void *p = realloc(old, n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

char *cm_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(cm_xmalloc(n), s, n);
}

char *cm_xstrndup(const char *s, size_t n)
{
	char *d = cm_xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}
