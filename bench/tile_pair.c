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
 * and a table of 16 bytes per number to change (about 5 % of the inputs'
 * size), the same for any N.  An output is a file, "-" (standard output) or a
 * FIFO; --part I/M writes the I-th of M byte ranges of each output (copies
 * split evenly), whose concatenation is the whole output: M gzip -1 processes
 * can then compress parts in parallel (gzip files concatenate).
 * Exit status: 0 ok, 1 an input not understood, 2 usage, 3 I/O error. */
#define _GNU_SOURCE 1 /* F_SETPIPE_SZ */
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

/* the kinds of numbers changed in a copy; K_END is the once-written events' */
enum { K_US, K_NS, K_EXT, K_CORR, K_STEP, K_END, NK };
struct patch { uint64_t off; uint32_t len, kind; };             /* digits at off */
struct run { uint64_t a, b; size_t p0, np; };                     /* bytes, patches */
struct vec { void *p; size_t n, cap, sz; };
/* an array (or object) whose elements are tiled: runs of consecutive elements
 * of one class, [0] written in every copy, [1] written once */
struct group { uint64_t first, last_end, sep, seplen, nelem; struct vec runs[2]; int last; };
#define MAXG 4
struct doc {
	const char *path;
	const unsigned char *b;
	size_t n, i;
	int win;
	struct vec patches;
	struct group g[MAXG];
	int ng, have_base;
	int64_t lo, hi, base;   /* time extent, ns (the CPU trace's from its base) */
	uint64_t maxv[NK];      /* the largest value of each kind */
};
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

/* Print "tile-pair: " and the message, remove the regular files being written,
 * exit with status st. */
static void die(int st, const char *fmt, ...)
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

/* A new element of v (grown by doubling; out of memory is fatal). */
static void *vpush(struct vec *v)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->p = realloc(v->p, v->cap * v->sz);
		if (!v->p)
			die(3, "out of memory");
	}
	return (char *)v->p + v->n++ * v->sz;
}

/* ---- the pre-scan: a small JSON reader that notes where the numbers are ---- */

/* Stop at d's current offset: the input is not what gen_trace writes. */
static void bad(struct doc *d, const char *what)
{
	die(1, "%s:%zu: %s (a bench tool for gen_trace pairs only)", d->path, d->i, what);
}
static void ws(struct doc *d)
{
	while (d->i < d->n && (d->b[d->i] == ' ' || d->b[d->i] == '\n' || d->b[d->i] == '\t' || d->b[d->i] == '\r'))
		d->i++;
}
static int peek(struct doc *d)
{
	ws(d);
	return d->i < d->n ? d->b[d->i] : -1;
}
static void expect(struct doc *d, int c)
{
	if (peek(d) != c) {
		char m[32];
		snprintf(m, sizeof m, "'%c' expected", c);
		bad(d, m);
	}
	d->i++;
}
/* A string at d's offset: *a its first byte after the quote, returns its raw length. */
static size_t str(struct doc *d, uint64_t *a)
{
	expect(d, '"');
	*a = d->i;
	for (;;) {
		const unsigned char *q = memchr(d->b + d->i, '"', d->n - d->i);
		if (!q)
			bad(d, "unterminated string");
		size_t k = (size_t)(q - d->b), bs = 0;
		while (k - bs > *a && d->b[k - bs - 1] == '\\')
			bs++;
		d->i = k + 1;
		if (!(bs & 1))
			return k - *a;
	}
}
/* A number's text at d's offset: *a its first byte, returns its length. */
static size_t num(struct doc *d, uint64_t *a)
{
	ws(d);
	*a = d->i;
	while (d->i < d->n && d->b[d->i] && strchr("0123456789+-.eE", d->b[d->i]))
		d->i++;
	if (d->i == *a)
		bad(d, "a value expected");
	return d->i - *a;
}
/* Skip one value of any type (depth-limited recursion). */
static void skip(struct doc *d, int depth)
{
	uint64_t a;
	int c = peek(d);
	if (depth > 64)
		bad(d, "nested too deeply");
	if (c == '"') {
		str(d, &a);
	} else if (c == '{' || c == '[') {
		d->i++;
		if (peek(d) == c + 2) { /* '}' and ']' are '{' + 2 and '[' + 2 */
			d->i++;
			return;
		}
		for (;;) {
			if (c == '{') {
				str(d, &a);
				expect(d, ':');
			}
			skip(d, depth + 1);
			int e = peek(d);
			d->i++;
			if (e == c + 2)
				return;
			if (e != ',')
				bad(d, "',' or the container's end expected");
		}
	} else if (c == 't' || c == 'f' || c == 'n') {
		while (d->i < d->n && d->b[d->i] >= 'a' && d->b[d->i] <= 'z')
			d->i++;
	} else {
		num(d, &a);
	}
}
static int is(const struct doc *d, uint64_t a, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(d->b + a, lit, len);
}
/* The leading decimal digits of [a, a+len): their count (0: not plain). */
static size_t digits(const struct doc *d, uint64_t a, size_t len)
{
	size_t k = 0;
	while (k < len && d->b[a + k] >= '0' && d->b[a + k] <= '9')
		k++;
	return k;
}
static uint64_t value(const unsigned char *p, size_t len)
{
	uint64_t v = 0;
	for (size_t k = 0; k < len; k++)
		v = v * 10 + (uint64_t)(p[k] - '0');
	return v;
}

/* A number to change in every copy: the digits at off (an int64), noted in
 * d's table with its kind. */
struct cand { uint64_t off; uint32_t len, kind; };
#define MAXC 8
static void note(struct doc *d, struct cand *c, int *nc, uint64_t off, size_t len, int kind)
{
	if (*nc == MAXC)
		bad(d, "an element with too many numbers to move");
	if (len == 0 || len > 19 || value(d->b + off, len) > INT64_MAX) {
		d->i = off;
		bad(d, len ? "a number beyond int64 to move" : "not a plain non-negative number");
	}
	c[*nc].off = off, c[*nc].len = (uint32_t)len, c[*nc].kind = (uint32_t)kind;
	(*nc)++;
}
/* Commit an element's candidates to d's table in file order; update the maxima. */
static void commit(struct doc *d, struct cand *c, int nc)
{
	for (int x = 1; x < nc; x++) /* a handful: insertion sort */
		for (int y = x; y > 0 && c[y].off < c[y - 1].off; y--) {
			struct cand t = c[y];
			c[y] = c[y - 1], c[y - 1] = t;
		}
	for (int x = 0; x < nc; x++) {
		struct patch *p = vpush(&d->patches);
		p->off = c[x].off, p->len = c[x].len, p->kind = c[x].kind;
		uint64_t v = value(d->b + p->off, p->len);
		if (v > d->maxv[p->kind])
			d->maxv[p->kind] = v;
	}
}
/* Note [a, b), whose patches begin at table index p0, as the next element of g, of class cls. */
static void add(struct doc *d, struct group *g, uint64_t a, uint64_t b, size_t p0, int cls)
{
	if (g->nelem == 0)
		g->first = a;
	else if (g->nelem == 1)
		g->sep = g->last_end, g->seplen = a - g->last_end;
	struct vec *rv = &g->runs[cls];
	struct run *r = g->nelem && g->last == cls ? (struct run *)rv->p + rv->n - 1 : NULL;
	if (!r) {
		r = vpush(rv);
		r->a = a, r->p0 = p0;
	}
	r->b = b, r->np = d->patches.n - r->p0;
	g->last_end = b, g->last = cls, g->nelem++;
}
static void extent(struct doc *d, int64_t t)
{
	if (t < d->lo)
		d->lo = t;
	if (t > d->hi)
		d->hi = t;
}
/* A CPU "ts"/"dur" text "123.456" (or "123") as ns; *ilen its integer digits. */
static int64_t us_ns(struct doc *d, uint64_t a, size_t len, size_t *ilen)
{
	size_t k = digits(d, a, len), f = 0;
	int64_t frac = 0;
	if (k < len && d->b[a + k] == '.')
		while (k + 1 + f < len && d->b[a + k + 1 + f] >= '0' && d->b[a + k + 1 + f] <= '9') {
			if (f < 3)
				frac = frac * 10 + (d->b[a + k + 1 + f] - '0');
			f++;
		}
	if (k == 0 || k > 18 || k + (f ? f + 1 : 0) != len) {
		d->i = a;
		bad(d, "a time that is not \"us.nnn\" text");
	}
	for (size_t z = f; z < 3; z++)
		frac *= 10;
	*ilen = k;
	return (int64_t)value(d->b + a, k) * 1000 + frac;
}

/* One CPU event: class (M events, the profiler's span and instants once), extent, numbers. */
static void cpu_event(struct doc *d, struct group *g)
{
	uint64_t a0 = d->i, a, ph = 0, cat = 0, name = 0, ts = 0, dur = 0, ext = 0;
	size_t len, lph = 0, lcat = 0, lname = 0, lts = 0, ldur = 0, lext = 0, p0 = d->patches.n;
	int ext_str = 0;
	expect(d, '{');
	if (peek(d) != '}')
		for (;;) {
			len = str(d, &a);
			expect(d, ':');
			int c = peek(d);
			if (c == '"' && (is(d, a, len, "ph") || is(d, a, len, "cat") || is(d, a, len, "name"))) {
				uint64_t v;
				size_t l = str(d, &v);
				if (is(d, a, len, "ph"))
					ph = v, lph = l;
				else if (is(d, a, len, "cat"))
					cat = v, lcat = l;
				else
					name = v, lname = l;
			} else if (c != '"' && (is(d, a, len, "ts") || is(d, a, len, "dur"))) {
				if (is(d, a, len, "ts"))
					lts = num(d, &ts);
				else
					ldur = num(d, &dur);
			} else if (c == '{' && is(d, a, len, "args")) {
				d->i++;
				while (peek(d) != '}') {
					len = str(d, &a);
					expect(d, ':');
					if (is(d, a, len, "External id") && peek(d) == '"')
						lext = str(d, &ext), ext_str = 1;
					else if (is(d, a, len, "External id") && peek(d) != 'n')
						lext = num(d, &ext);
					else
						skip(d, 1);
					if (peek(d) == ',')
						d->i++;
				}
				d->i++;
			} else {
				skip(d, 1);
			}
			int e = peek(d);
			d->i++;
			if (e == '}')
				break;
			if (e != ',')
				bad(d, "',' or '}' expected");
		}
	uint64_t b = d->i;
	int once = is(d, ph, lph, "M") || is(d, cat, lcat, "Trace") ||
		   is(d, name, lname, "Iteration Start: PyTorch Profiler") || is(d, name, lname, "Record Window End");
	struct cand c[MAXC];
	int nc = 0;
	size_t its = 0, idur = 0;
	int64_t t = lts ? us_ns(d, ts, lts, &its) : 0;
	if (lts)
		extent(d, t + (ldur ? us_ns(d, dur, ldur, &idur) : 0)), extent(d, t);
	if (!once) {
		if (lts)
			note(d, c, &nc, ts, its, K_US);
		if (lext && (!ext_str || digits(d, ext, lext) == lext)) /* other strings: never linked */
			note(d, c, &nc, ext, lext == digits(d, ext, lext) ? lext : 0, K_EXT);
		if (lname > 13 && !memcmp(d->b + name, "ProfilerStep#", 13) && digits(d, name + 13, lname - 13) == lname - 13)
			note(d, c, &nc, name + 13, lname - 13, K_STEP);
	} else if (lts && is(d, name, lname, "Record Window End")) {
		note(d, c, &nc, ts, its, K_END);
	} else if (ldur && is(d, cat, lcat, "Trace")) {
		note(d, c, &nc, dur, idur, K_END);
	}
	commit(d, c, nc);
	add(d, g, a0, b, p0, once);
}

/* A window member that must be a non-negative integer: its digits. */
static size_t win_int(struct doc *d, uint64_t *a)
{
	size_t len = num(d, a);
	if (digits(d, *a, len) != len) {
		d->i = *a;
		bad(d, "not a non-negative integer");
	}
	return len;
}
/* One window event: its times, correlation ids and (kinds 3 and 4) External id. */
static void win_event(struct doc *d, struct group *g)
{
	uint64_t a0 = d->i, a, kind = 0, ext = 0;
	size_t len, lkind = 0, lext = 0, p0 = d->patches.n;
	uint64_t xkind = 0;
	struct cand c[MAXC];
	int nc = 0;
	expect(d, '{');
	if (peek(d) != '}')
		for (;;) {
			len = str(d, &a);
			expect(d, ':');
			int c0 = peek(d), k = -1;
			if (is(d, a, len, "start_ns") || is(d, a, len, "end_ns"))
				k = K_NS;
			else if (is(d, a, len, "correlation_id") || is(d, a, len, "runtime_correlation_id"))
				k = K_CORR;
			if (k >= 0 && c0 != 'n') {
				uint64_t v;
				size_t l = win_int(d, &v);
				note(d, c, &nc, v, l, k);
				if (k == K_NS && (l > 1 || d->b[v] != '0'))
					extent(d, (int64_t)value(d->b + v, l));
			} else if (is(d, a, len, "kind") && c0 == '"') {
				lkind = str(d, &kind);
			} else if (is(d, a, len, "external_kind") && c0 != 'n') {
				uint64_t v;
				size_t l = num(d, &v);
				xkind = digits(d, v, l) == l && l < 19 ? value(d->b + v, l) : 0;
			} else if (is(d, a, len, "external_id") && c0 != 'n') {
				lext = win_int(d, &ext);
			} else {
				skip(d, 1);
			}
			int e = peek(d);
			d->i++;
			if (e == '}')
				break;
			if (e != ',')
				bad(d, "',' or '}' expected");
		}
	if (lext && is(d, kind, lkind, "external_correlation") && (xkind == 3 || xkind == 4))
		note(d, c, &nc, ext, lext, K_EXT);
	commit(d, c, nc);
	add(d, g, a0, d->i, p0, 0);
}
/* One member of user_annotations: "External id": "name" (ProfilerStep#N moved too). */
static void annotation(struct doc *d, struct group *g)
{
	uint64_t a0 = d->i, a, v;
	size_t p0 = d->patches.n, len = str(d, &a), l;
	struct cand c[MAXC];
	int nc = 0;
	if (digits(d, a, len) != len) {
		d->i = a;
		bad(d, "a user_annotations key that is not a non-negative integer");
	}
	note(d, c, &nc, a, len, K_EXT);
	expect(d, ':');
	if (peek(d) == '"') {
		l = str(d, &v);
		if (l > 13 && !memcmp(d->b + v, "ProfilerStep#", 13) && digits(d, v + 13, l - 13) == l - 13)
			note(d, c, &nc, v + 13, l - 13, K_STEP);
	} else {
		skip(d, 1);
	}
	commit(d, c, nc);
	add(d, g, a0, d->i, p0, 0);
}
/* The elements of the array (or object) at d's offset, each read by fn, as a tiled group. */
static void tiled(struct doc *d, int open, void (*fn)(struct doc *, struct group *))
{
	expect(d, open);
	if (peek(d) == open + 2) {
		d->i++;
		return;
	}
	if (d->ng == MAXG)
		bad(d, "too many tiled members");
	struct group *g = &d->g[d->ng++];
	g->runs[0].sz = g->runs[1].sz = sizeof(struct run);
	for (;;) {
		ws(d);
		fn(d, g);
		int e = peek(d);
		d->i++;
		if (e == open + 2)
			return;
		if (e != ',')
			bad(d, "',' or the end of the array expected");
	}
}
/* The pre-scan of one input: its top-level members, the tiled ones element by element. */
static void *scan(void *arg)
{
	struct doc *d = arg;
	uint64_t a;
	size_t len;
	d->lo = INT64_MAX, d->hi = INT64_MIN;
	d->patches.sz = sizeof(struct patch);
	expect(d, '{');
	while (peek(d) != '}') {
		len = str(d, &a);
		expect(d, ':');
		if (!d->win && is(d, a, len, "traceEvents")) {
			tiled(d, '[', cpu_event);
		} else if (d->win && is(d, a, len, "events")) {
			tiled(d, '[', win_event);
		} else if (d->win && is(d, a, len, "user_annotations")) {
			tiled(d, '{', annotation);
		} else if (!d->win && is(d, a, len, "baseTimeNanoseconds")) {
			size_t l = win_int(d, &a);
			if (l > 19 || value(d->b + a, l) > INT64_MAX)
				bad(d, "baseTimeNanoseconds beyond int64");
			d->base = (int64_t)value(d->b + a, l), d->have_base = 1;
		} else {
			skip(d, 0);
		}
		if (peek(d) == ',')
			d->i++;
	}
	d->i++;
	if (peek(d) != -1)
		bad(d, "text after the top-level object");
	return NULL;
}

/* ---- the writers ---- */

#define OUTBUF (1u << 20)
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
	if (pthread_create(&th, NULL, scan, &docs[1]))
		die(3, "pthread_create failed");
	scan(&docs[0]);
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
