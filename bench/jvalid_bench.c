/* jvalid_bench.c - how fast the fast validator (src/jvalid.c) checks a
 * trace, against yajl on the same bytes in the same run.
 *
 * Usage: jvalid-bench FILE...  Each FILE is read into memory whole; the
 * elements of its event array (the first "traceEvents" or "events" key)
 * are found with jscan, the splitter of today's second passes.  Then, best
 * of REPEAT runs each:
 *   jvalid/element   cm_jvalid_value on every element (depth 2), what a
 *                    worker thread of the new engine will do;
 *   jvalid/document  cm_jvalid_value on the whole file as one value;
 *   yajl             yajl_parse of the whole file in one call, no
 *                    callbacks, strings validated, then yajl_complete_parse:
 *                    yajl at its fastest;
 *   yajl+jcheck      the same after cm_jcheck_feed over the file: what the
 *                    reading path (saxread.c) pays to validate.
 * MB/s counts the bytes each run looked at (10^6 bytes a second) over the
 * thread's CPU time, not the wall clock: the machines this runs on are
 * shared, and time spent descheduled would be charged to whichever run it
 * fell on.  The ratio is jvalid/element over yajl.  A run whose answer is not "valid"
 * is an error: the bench measures valid traces. */
#include "config.h"
#include "json/jcheck.h"
#include "json/jscan.h"
#include "json/jvalid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_parse.h>

#define REPEAT 3

struct span {
	size_t at, len;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;
	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(path);
		exit(1);
	}
	buf = malloc((size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		perror(path);
		exit(1);
	}
	fclose(f);
	*n = (size_t)len;
	return buf;
}

/* The elements of the event array of S[0..N): malloc'd, *COUNT of them. */
static struct span *split_events(const char *s, size_t n, size_t *count)
{
	const char *key = strstr(s, "\"traceEvents\"");
	struct span *spans = NULL;
	size_t cap = 0, i;
	*count = 0;
	if (!key)
		key = strstr(s, "\"events\"");
	if (!key || !(key = strchr(key, '[')))
		return NULL;
	i = (size_t)(key - s) + 1;
	for (;;) {
		cm_jscan sc;
		size_t start;
		while (i < n && (cm_jscan_ws(s[i]) || s[i] == ','))
			i++;
		if (i >= n || s[i] == ']')
			break;
		start = i;
		cm_jscan_begin(&sc, s[i]);
		if (!cm_jscan_feed(&sc, s, n, &i))
			break;
		if (*count == cap) {
			cap = cap ? cap * 2 : 1024;
			spans = realloc(spans, cap * sizeof *spans);
		}
		spans[(*count)++] = (struct span){start, i - start};
	}
	return spans;
}

static int yajl_whole(const char *s, size_t n, int with_jcheck)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	int ok = 1;
	yajl_config(h, yajl_allow_comments, 0);
	yajl_config(h, yajl_dont_validate_strings, 0);
	if (with_jcheck) {
		cm_jcheck c;
		cm_jcheck_begin(&c);
		ok = cm_jcheck_feed(&c, s, n) == n && cm_jcheck_end(&c) == 0;
	}
	ok = ok && yajl_parse(h, (const unsigned char *)s, n) == yajl_status_ok &&
	     yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	return ok;
}

static void report(const char *what, size_t bytes, double secs, int ok)
{
	printf("  %-16s %8.1f MB/s  (%zu bytes in %.3f s)%s\n", what, (double)bytes / secs / 1e6, bytes, secs,
	       ok ? "" : "  NOT VALID");
	if (!ok)
		exit(1);
}

int main(int argc, char **argv)
{
	int status = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: jvalid-bench FILE...\n");
		return 2;
	}
	for (int a = 1; a < argc; a++) {
		size_t n, count, elem_bytes = 0;
		char *s = slurp(argv[a], &n);
		struct span *ev = split_events(s, n, &count);
		double best[4] = {1e9, 1e9, 1e9, 1e9};
		int ok[4] = {1, 1, 1, 1};
		for (size_t i = 0; i < count; i++)
			elem_bytes += ev[i].len;
		for (int r = 0; r < REPEAT; r++) {
			double t0 = now(), t;
			for (size_t i = 0; i < count; i++)
				ok[0] &= cm_jvalid_value(s + ev[i].at, ev[i].len, 2, NULL);
			t = now() - t0;
			best[0] = t < best[0] ? t : best[0];
			t0 = now();
			ok[1] &= cm_jvalid_value(s, n, 0, NULL);
			t = now() - t0;
			best[1] = t < best[1] ? t : best[1];
			t0 = now();
			ok[2] &= yajl_whole(s, n, 0);
			t = now() - t0;
			best[2] = t < best[2] ? t : best[2];
			t0 = now();
			ok[3] &= yajl_whole(s, n, 1);
			t = now() - t0;
			best[3] = t < best[3] ? t : best[3];
		}
		printf("%s: %zu bytes, %zu events (%zu bytes), best of %d\n", argv[a], n, count, elem_bytes, REPEAT);
		report("jvalid/element", elem_bytes, best[0], ok[0]);
		report("jvalid/document", n, best[1], ok[1]);
		report("yajl", n, best[2], ok[2]);
		report("yajl+jcheck", n, best[3], ok[3]);
		printf("  ratio jvalid/element : yajl = %.2f, : yajl+jcheck = %.2f\n",
		       ((double)elem_bytes / best[0]) / ((double)n / best[2]),
		       ((double)elem_bytes / best[0]) / ((double)n / best[3]));
		if (!count)
			status = 1;
		free(ev);
		free(s);
	}
	return status;
}
