/* tile_pair.c - a bench tool: N copies of a gen_trace pair (CPU trace + trace
 * window), written one after another in time as ONE consistent pair, streaming.
 *
 * Usage: tile-pair [-n COPIES] [--cpu-out FILE] [--window-out FILE] [--part I/M]
 *                  [--plan] [-v] CPU_TRACE WINDOW
 *
 * It exists to make big inputs fast (shared/tools/gen_trace makes ~24k ops/s;
 * this writes at memory speed) and it understands only what gen_trace writes
 * (both layouts, --edge-cases included, not --no-base): anything else is
 * refused with one line `tile-pair: FILE:offset: what`, exit 1.
 *
 * Copy k (0-based) of every event is the input's with its times moved by k*S
 * (CPU "ts" text "us.nnn" by k*S us, done on the decimal text: the integer part
 * gets k*S, the fraction is kept; window start_ns/end_ns by k*S*1000), its
 * External ids by k*E (CPU args "External id", number or digits in a string;
 * the window's kind-3/4 external_correlation external_id; user_annotations
 * keys), its correlation ids by k*C (correlation_id, runtime_correlation_id)
 * and its "ProfilerStep#N" names by k*P (CPU names and user_annotations values),
 * so that ids and steps stay unique and the merge links each copy as it links
 * the input.  A zero id or time stays zero (CUPTI's "none").  Written once:
 * the top-level members other than the tiled arrays, the CPU trace's M events,
 * its "Trace" span (its dur grown by (N-1)*S so that it covers every copy), the
 * "Iteration Start" instant and "Record Window End" (moved to the last copy).
 * S is the whole pair's time extent rounded up to a ms; E, C and P are the
 * powers of 10 above the largest id / step (so copy 2's step 7 is
 * ProfilerStep#2007 when the input has fewer than 1000 steps).  --plan prints
 * them.  Both writers compute the same plan from both inputs, so the CPU trace
 * and the window may come from two processes (each with one --*-out) feeding
 * two FIFOs, or from one process, whose two outputs are written by two threads.
 *
 * Inputs are mapped (regular, uncompressed files).  Memory: the inputs' pages
 * and a table of 16 bytes per number to change (about 16 % of the inputs'
 * size), the same for any N.  An output is a file, "-" (standard output) or a
 * FIFO; --part I/M writes the I-th of M byte ranges of each output (copies
 * split evenly), whose concatenation is the whole output: M gzip -1 processes
 * can then compress parts in parallel (gzip files concatenate).
 * Exit status: 0 ok, 1 an input not understood, 2 usage, 3 I/O error.
 * This file: the plan, the writers and main; the pre-scan is tile_scan.c. */
#define _GNU_SOURCE 1 /* F_SETPIPE_SZ */
#include "tile_pair.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct plan { uint64_t n, mult[NK]; };
struct out { const char *path; int fd, reg; char *buf; size_t len; uint64_t total; };

static const char *const usage_text =
	"usage: tile-pair [-n COPIES] [--cpu-out FILE] [--window-out FILE] [--part I/M] [--plan] [-v]\n"
	"                 CPU_TRACE WINDOW\n"
	"A bench tool: COPIES (default 2) copies of a gen_trace pair, one after another in time, as one\n"
	"consistent pair (times, External ids, correlation ids and ProfilerStep numbers moved a copy).\n"
	"Inputs: gen_trace's own output, uncompressed (others are refused). FILE: a file, - or a FIFO.\n"
	"--part I/M: the I-th of M parts of each output (their concatenation is the output).\n"
	"--plan: print the shifts and exit.  -v: the plan and each output's bytes and MB/s on stderr.\n";

static struct out outs[2];
#define die tp_die

/* Print "tile-pair: " and the message, remove the regular files being written,
 * exit with status st. */
void tp_die(int st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tile-pair: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	for (int i = 0; i < 2; i++)
		if (outs[i].reg)
			unlink(outs[i].path);
	exit(st);
}


/* ---- the writers ---- */

#define OUTBUF (1u << 20)
/* Write o's buffer out (a failed write is fatal, exit 3: a reader gone is EPIPE). */
static void flush(struct out *o)
{
	for (size_t k = 0; k < o->len;) {
		ssize_t w = write(o->fd, o->buf + k, o->len - k);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die(3, "%s: write error: %s", o->path, w < 0 ? strerror(errno) : "nothing written");
		k += (size_t)w;
	}
	o->total += o->len;
	o->len = 0;
}
/* Append len bytes to o's buffer; a long piece goes out straight from the input's pages. */
static void put(struct out *o, const void *p, size_t len)
{
	if (o->len + len > OUTBUF || len > OUTBUF / 2)
		flush(o);
	if (len > OUTBUF / 2) {
		char *keep = o->buf;
		o->buf = (char *)p, o->len = len; /* written straight from the input's pages */
		flush(o);
		o->buf = keep;
		return;
	}
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}
/* A copy's shift of each kind as decimal text (len 0: no shift): a number is
 * moved by adding the texts digit by digit, from the right, as far as the
 * shift's digits and the carry reach (a division a digit cost twice as much). */
struct shift { char s[NK][24]; unsigned char len[NK]; };
/* Each kind's shift of delta as decimal text. */
static void shift_set(struct shift *sh, const uint64_t *delta)
{
	for (int k = 0; k < NK; k++)
		sh->len[k] = delta[k] ? (unsigned char)snprintf(sh->s[k], sizeof sh->s[k], "%llu", (unsigned long long)delta[k]) : 0;
}
/* Bytes [a, b) of run r's input with its numbers moved by sh (zero ids and times kept). */
static void emit(struct out *o, const struct doc *d, const struct run *r, const struct shift *sh)
{
	const struct patch *p = (const struct patch *)d->patches.p + r->p0, *e = p + r->np;
	uint64_t at = r->a;
	for (; p < e; p++) {
		const unsigned char *v = d->b + p->off;
		size_t len = p->len, dl = sh->len[p->kind], i = 0;
		if (!dl || (len == 1 && *v == '0' && (p->kind == K_NS || p->kind == K_EXT || p->kind == K_CORR)))
			continue; /* copied with the text around it */
		put(o, d->b + at, p->off - at);
		at = p->off + len;
		const char *dd = sh->s[p->kind];
		char t[24], *q = t + sizeof t;
		int c = 0;
		for (; i < dl; i++) {
			int x = (i < len ? v[len - 1 - i] - '0' : 0) + dd[dl - 1 - i] - '0' + c;
			c = x > 9;
			*--q = (char)('0' + x - 10 * c);
		}
		for (; c && i < len; i++) {
			int x = v[len - 1 - i] - '0' + 1;
			c = x > 9;
			*--q = (char)('0' + x - 10 * c);
		}
		if (c)
			*--q = '1';
		if (i < len)
			put(o, v, len - i);
		put(o, q, (size_t)(t + sizeof t - q));
	}
	put(o, d->b + at, r->b - at);
}
/* The runs of one class of g, copy k (or the once class), a separator before each but the first. */
static void emit_runs(struct out *o, const struct doc *d, const struct group *g, int cls, const struct shift *sh, int sep_first)
{
	const struct run *r = g->runs[cls].p;
	for (size_t x = 0; x < g->runs[cls].n; x++) {
		if (x || sep_first)
			put(o, g->seplen ? (const char *)d->b + g->sep : ",", g->seplen ? g->seplen : 1);
		emit(o, d, &r[x], sh);
	}
}
struct job { struct doc *d; struct out *o; const char *path; const struct plan *pl; unsigned part, parts; double secs; };
static void open_out(struct out *o, const char *path);
/* Write job's part of its output: the largest group's copies are split among the parts. */
static void *write_doc(void *arg)
{
	struct job *j = arg;
	struct doc *d = j->d;
	struct out *o = j->o;
	const struct plan *pl = j->pl;
	struct timespec t0, t1;
	open_out(o, j->path); /* here: a FIFO's open waits for its reader, the other output's must not */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int s = 0;
	for (int gi = 1; gi < d->ng; gi++)
		if (d->g[gi].last_end - d->g[gi].first > d->g[s].last_end - d->g[s].first)
			s = gi;
	uint64_t k0 = pl->n * (j->part - 1) / j->parts, k1 = pl->n * j->part / j->parts, pos = 0, delta[NK];
	struct shift sh;
	int first = j->part == 1, last = j->part == j->parts;
	for (int gi = 0; gi < d->ng; gi++) {
		const struct group *g = &d->g[gi];
		int mine = gi < s ? first : gi > s ? last : 1;
		if (gi <= s ? first : last)
			put(o, d->b + pos, g->first - pos);
		for (uint64_t k = gi == s ? k0 : 0; mine && k < (gi == s ? k1 : pl->n); k++) {
			for (int x = 0; x < NK; x++)
				delta[x] = k * pl->mult[x];
			shift_set(&sh, delta);
			emit_runs(o, d, g, 0, &sh, k > 0);
		}
		memset(delta, 0, sizeof delta);
		delta[K_END] = (pl->n - 1) * pl->mult[K_END];
		shift_set(&sh, delta);
		if (gi == s ? last : mine)
			emit_runs(o, d, g, 1, &sh, g->runs[0].n > 0);
		pos = g->last_end;
	}
	if (last)
		put(o, d->b + pos, d->n - pos);
	flush(o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	j->secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return NULL;
}

/* Map an input (a regular file, not gzip). */
static void load(struct doc *d, const char *path, int win)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	d->path = path, d->win = win;
	if (fd < 0 || fstat(fd, &st) < 0)
		die(3, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) || st.st_size < 2)
		die(1, "%s: not a regular file of JSON (this bench tool maps its inputs)", path);
	d->n = (size_t)st.st_size;
	d->b = mmap(NULL, d->n, PROT_READ, MAP_PRIVATE, fd, 0);
	if (d->b == MAP_FAILED)
		die(3, "%s: mmap: %s", path, strerror(errno));
	close(fd);
	if (d->b[0] == 0x1f && d->b[1] == 0x8b)
		die(1, "%s:0: gzip input (give tile-pair the uncompressed gen_trace output)", path);
	madvise((void *)d->b, d->n, MADV_SEQUENTIAL);
}
/* The smallest power of 10 (at least 10) above v: ids stay readable, copy k's id k0..0id. */
static uint64_t pow10_above(uint64_t v)
{
	uint64_t p = 10;
	while (p <= v)
		p *= 10;
	return p;
}
/* The shifts of a copy from both inputs' extents and maxima; refuse sums beyond int64. */
static void make_plan(struct plan *pl, struct doc *cpu, struct doc *win)
{
	if (!cpu->have_base)
		die(1, "%s: no baseTimeNanoseconds (gen_trace --no-base): the copies cannot be placed against the window", cpu->path);
	if (cpu->lo > cpu->hi || win->lo > win->hi)
		die(1, "%s: no timed events", cpu->lo > cpu->hi ? cpu->path : win->path);
	int64_t lo = cpu->lo + cpu->base < win->lo ? cpu->lo + cpu->base : win->lo;
	int64_t hi = cpu->hi + cpu->base > win->hi ? cpu->hi + cpu->base : win->hi;
	uint64_t s = ((uint64_t)(hi - lo) / 1000 / 1000 + 1) * 1000;
	pl->mult[K_US] = pl->mult[K_END] = s, pl->mult[K_NS] = s * 1000;
	pl->mult[K_EXT] = pow10_above(cpu->maxv[K_EXT] > win->maxv[K_EXT] ? cpu->maxv[K_EXT] : win->maxv[K_EXT]);
	pl->mult[K_CORR] = pow10_above(win->maxv[K_CORR]);
	pl->mult[K_STEP] = pow10_above(cpu->maxv[K_STEP] > win->maxv[K_STEP] ? cpu->maxv[K_STEP] : win->maxv[K_STEP]);
	for (int k = 0; k < NK; k++) {
		uint64_t m = cpu->maxv[k] > win->maxv[k] ? cpu->maxv[k] : win->maxv[k], x;
		if (__builtin_mul_overflow(pl->n - 1, pl->mult[k], &x) || __builtin_add_overflow(x, m, &x) || x > INT64_MAX)
			die(2, "-n %llu: the numbers of the last copy would pass 2^63", (unsigned long long)pl->n);
	}
}
/* Open an output (a FIFO waits here for its reader) with its 1 MB buffer; a pipe's own
 * buffer grown to 1 MB where the system lets it. */
static void open_out(struct out *o, const char *path)
{
	struct stat st;
	o->path = path;
	o->fd = strcmp(path, "-") ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	if (o->fd < 0 || fstat(o->fd, &st) < 0)
		die(3, "%s: %s", path, strerror(errno));
	o->reg = S_ISREG(st.st_mode) && strcmp(path, "-");
	if (S_ISFIFO(st.st_mode))
		fcntl(o->fd, F_SETPIPE_SZ, 1 << 20); /* fewer wake-ups; a refusal changes nothing */
	o->buf = malloc(OUTBUF);
	if (!o->buf)
		die(3, "out of memory");
}

/* The options; the pre-scans of both inputs (two threads); the plan; the writers
 * (a thread each when both outputs are asked for). */
int main(int argc, char **argv)
{
	const char *cpu_out = NULL, *win_out = NULL, *in[2] = { NULL, NULL };
	struct plan pl = { .n = 2 };
	unsigned part = 1, parts = 1;
	int plan_only = 0, verbose = 0, nin = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "--plan")) {
			plan_only = 1;
		} else if (!strcmp(a, "-v")) {
			verbose = 1;
		} else if (v && (!strcmp(a, "-n") || !strcmp(a, "--copies"))) {
			errno = 0;
			pl.n = strtoull(v, &end, 10);
			if (errno || *end || pl.n == 0 || *v == '-')
				die(2, "-n needs a count >= 1: %s", v);
			i++;
		} else if (v && !strcmp(a, "--cpu-out")) {
			cpu_out = argv[++i];
		} else if (v && !strcmp(a, "--window-out")) {
			win_out = argv[++i];
		} else if (v && !strcmp(a, "--part")) {
			if (sscanf(v, "%u/%u", &part, &parts) != 2 || part < 1 || part > parts)
				die(2, "--part needs I/M with 1 <= I <= M: %s", v);
			i++;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "tile-pair: unknown or incomplete option: %s\n%s", a, usage_text);
			return 2;
		} else if (nin < 2) {
			in[nin++] = a;
		} else {
			fprintf(stderr, "tile-pair: too many operands: %s\n%s", a, usage_text);
			return 2;
		}
	}
	if (nin != 2 || (!plan_only && !cpu_out && !win_out)) {
		fprintf(stderr, "tile-pair: two inputs and --cpu-out and/or --window-out (or --plan) needed\n%s", usage_text);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN); /* a reader gone is a write error with its name */
	static struct doc docs[2];
	pthread_t th;
	load(&docs[0], in[0], 0);
	load(&docs[1], in[1], 1);
	if (pthread_create(&th, NULL, tp_scan, &docs[1]))
		die(3, "pthread_create failed");
	tp_scan(&docs[0]);
	pthread_join(th, NULL);
	make_plan(&pl, &docs[0], &docs[1]);
	if (plan_only || verbose)
		fprintf(plan_only ? stdout : stderr,
			"copies=%llu shift_us=%llu external=%llu correlation=%llu step=%llu numbers=%zu+%zu\n",
			(unsigned long long)pl.n, (unsigned long long)pl.mult[K_US], (unsigned long long)pl.mult[K_EXT],
			(unsigned long long)pl.mult[K_CORR], (unsigned long long)pl.mult[K_STEP], docs[0].patches.n,
			docs[1].patches.n);
	if (plan_only)
		return 0;
	struct job jobs[2] = { { &docs[0], &outs[0], cpu_out, &pl, part, parts, 0 },
			       { &docs[1], &outs[1], win_out, &pl, part, parts, 0 } };
	if (cpu_out && win_out) {
		if (pthread_create(&th, NULL, write_doc, &jobs[1]))
			die(3, "pthread_create failed");
		write_doc(&jobs[0]);
		pthread_join(th, NULL);
	} else {
		write_doc(&jobs[cpu_out ? 0 : 1]);
	}
	for (int x = 0; x < 2; x++) {
		if (!outs[x].buf)
			continue;
		if (outs[x].fd != 1 && close(outs[x].fd) < 0)
			die(3, "%s: close: %s", outs[x].path, strerror(errno));
		if (verbose)
			fprintf(stderr, "%s: %llu B in %.2f s, %.0f MB/s\n", outs[x].path, (unsigned long long)outs[x].total,
				jobs[x].secs, jobs[x].secs > 0 ? (double)outs[x].total / jobs[x].secs / 1e6 : 0.0);
	}
	return 0;
}
