/* diag.c - one family of messages (errors, warnings) and a rate-limited progress line. */
#include "config.h"
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

static const char *prog = "cuptimerge";
static int quiet;
static int first_status;

static int progress_on;
static int progress_shown;    /* a progress line is on screen */
static const char *progress_label;
static uint64_t progress_total;
static double progress_t0, progress_last;

void cm_diag_init(const char *progname) { prog = progname; }
void cm_diag_set_quiet(int q) { quiet = q; }
int cm_diag_status(void) { return first_status; }
void cm_diag_reset(void) { first_status = 0; }

/* Print the common "PROG: FILE:OFFSET: " prefix and the message. */
static void vreport(const char *file, int64_t offset, const char *fmt, va_list ap)
{
	cm_progress_clear();
	fprintf(stderr, "%s: ", prog);
	if (file) {
		if (offset >= 0)
			fprintf(stderr, "%s:%lld: ", file, (long long)offset);
		else
			fprintf(stderr, "%s: ", file);
	}
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cm_error(int status, const char *file, int64_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(file, offset, fmt, ap);
	va_end(ap);
	if (!first_status)
		first_status = status;
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

/* Seconds on a monotonic clock. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cm_progress_enable(int on) { progress_on = on; }

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
		progress_t0 = now_s();
}

void cm_progress_update(uint64_t done)
{
	double t;
	if (!progress_on || !progress_label || progress_thread_off)
		return;
	t = now_s();
	/* A job shorter than a second never shows a line; then 4 refreshes a second. */
	if (t - progress_t0 < 1.0 || t - progress_last < 0.25)
		return;
	progress_last = t;
	if (progress_total)
		fprintf(stderr, "\r%s: %s %.0f / %.0f MB (%3.0f%%)   ", prog, progress_label,
			(double)done / 1e6, (double)progress_total / 1e6,
			100.0 * (double)done / (double)progress_total);
	else
		fprintf(stderr, "\r%s: %s %.0f MB   ", prog, progress_label, (double)done / 1e6);
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
 * An -o output exists only under its temporary name, which the exit leaves
 * behind only on a crash; we remove nothing here because nothing is final. */
static void out_of_memory(size_t n)
{
	cm_error(3 /* CM_EXIT_IO */, NULL, -1, "out of memory (%zu bytes)", n);
	exit(3);
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
