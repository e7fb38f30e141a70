/* tile_scan.c - bench/tile-pair's pre-scan of a gen_trace CPU trace or trace
 * window: a small JSON reader that cuts the tiled arrays (traceEvents, events,
 * user_annotations) into runs of elements written in every copy or once, and
 * notes where the numbers that a copy moves are (times, External ids,
 * correlation ids, ProfilerStep numbers), their largest values and the pair's
 * time extent, from which tile_pair.c makes its plan.  What gen_trace does not
 * write is refused: `tile-pair: FILE:offset: what`, exit 1. */
#include "tile_pair.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define die tp_die

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

/* Stop at d's current offset: the input is not what gen_trace writes. */
static void bad(struct doc *d, const char *what)
{
	die(1, "%s:%zu: %s (a bench tool for gen_trace pairs only)", d->path, d->i, what);
}
/* Skip white space. */
static void ws(struct doc *d)
{
	while (d->i < d->n && (d->b[d->i] == ' ' || d->b[d->i] == '\n' || d->b[d->i] == '\t' || d->b[d->i] == '\r'))
		d->i++;
}
/* The next byte after white space, or -1 at the end. */
static int peek(struct doc *d)
{
	ws(d);
	return d->i < d->n ? d->b[d->i] : -1;
}
/* Consume byte c after white space, or stop. */
static void expect(struct doc *d, int c)
{
	if (peek(d) != c) {
		char m[32];
		snprintf(m, sizeof m, "'%c' expected", c);
		bad(d, m);
	}
	d->i++;
}
/* Open the object or array at d's offset (OPEN '{' or '['): 1 when an
 * element follows, 0 when it is empty (its end consumed).  With more(),
 * the one loop over a container's elements:
 *     if (first(d, open)) do { ...an element... } while (more(d, open)); */
static int first(struct doc *d, int open)
{
	expect(d, open);
	if (peek(d) != open + 2) /* '}' and ']' are '{' + 2 and '[' + 2 */
		return 1;
	d->i++;
	return 0;
}
/* After an element of the container opened by OPEN: 1 when a ',' brings
 * the next, 0 at the container's end (consumed); anything else stops. */
static int more(struct doc *d, int open)
{
	int e = peek(d);
	d->i++;
	if (e == open + 2)
		return 0;
	if (e != ',') {
		char m[32];
		d->i--;
		snprintf(m, sizeof m, "',' or '%c' expected", open + 2);
		bad(d, m);
	}
	return 1;
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
		if (first(d, c))
			do {
				if (c == '{') {
					str(d, &a);
					expect(d, ':');
				}
				skip(d, depth + 1);
			} while (more(d, c));
	} else if (c == 't' || c == 'f' || c == 'n') {
		while (d->i < d->n && d->b[d->i] >= 'a' && d->b[d->i] <= 'z')
			d->i++;
	} else {
		num(d, &a);
	}
}
/* Whether the raw text [a, a+len) is lit. */
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
/* Whether the string text [a, a+len) is "ProfilerStep#N", N plain digits
 * (the step number a copy moves: K_STEP, from a + 13). */
static int is_step(const struct doc *d, uint64_t a, size_t len)
{
	return len > 13 && !memcmp(d->b + a, "ProfilerStep#", 13) && digits(d, a + 13, len - 13) == len - 13;
}
/* The decimal digits p[0, len) (at most 19) as a number. */
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
/* Note the LEN digits at OFF, of KIND, as the next of an element's NC
 * candidates C (at most MAXC); stop when they are not a plain int64. */
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
/* Widen d's time extent to t (ns). */
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
	if (first(d, '{'))
		do {
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
				if (first(d, '{'))
					do {
						len = str(d, &a);
						expect(d, ':');
						if (is(d, a, len, "External id") && peek(d) == '"')
							lext = str(d, &ext), ext_str = 1;
						else if (is(d, a, len, "External id") && peek(d) != 'n')
							lext = num(d, &ext);
						else
							skip(d, 1);
					} while (more(d, '{'));
			} else {
				skip(d, 1);
			}
		} while (more(d, '{'));
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
		if (is_step(d, name, lname))
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
	if (first(d, '{'))
		do {
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
		} while (more(d, '{'));
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
		if (is_step(d, v, l))
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
	if (!first(d, open))
		return;
	if (d->ng == MAXG)
		bad(d, "too many tiled members");
	struct group *g = &d->g[d->ng++];
	g->runs[0].sz = g->runs[1].sz = sizeof(struct run);
	do {
		ws(d);
		fn(d, g);
	} while (more(d, open));
}
/* The pre-scan of one input: its top-level members, the tiled ones element by element. */
void *tp_scan(void *arg)
{
	struct doc *d = arg;
	uint64_t a;
	size_t len;
	d->lo = INT64_MAX, d->hi = INT64_MIN;
	d->patches.sz = sizeof(struct patch);
	if (first(d, '{'))
		do {
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
		} while (more(d, '{'));
	if (peek(d) != -1)
		bad(d, "text after the top-level object");
	return NULL;
}
