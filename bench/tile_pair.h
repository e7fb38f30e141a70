/* tile_pair.h - what bench/tile_pair.c (the writers, the plan, main) and
 * bench/tile_scan.c (the pre-scan of a gen_trace pair) share: the table of
 * numbers to move in each copy and the tiled arrays' runs of elements. */
#ifndef TILE_PAIR_H
#define TILE_PAIR_H
#include <stddef.h>
#include <stdint.h>

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

/* Print "tile-pair: " and the message, remove the outputs being written, exit st (tile_pair.c). */
void tp_die(int st, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
/* Read one mapped input (d->b, d->n, d->path, d->win set) into its table (tile_scan.c):
 * a pthread start routine; an input it does not understand is fatal (exit 1). */
void *tp_scan(void *doc);
#endif
