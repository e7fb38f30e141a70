/* check_lanesearch.h - the lanes' tests' plain search (check_pflaneq.c,
 * check_pflanewin.c): a slice placed, and the first lane of its thread
 * without a clash found by looking at every slice placed before it, to
 * check pflanes.c's placing against. */
#ifndef CHECK_LANESEARCH_H
#define CHECK_LANESEARCH_H

#include <stdint.h>

struct placed {
	int64_t b, e;
	unsigned thread, lane, i;
};

/* 1 when slice Q clashes with [B, E] on a lane (pflanes.c's clashes(),
 * said plainly): Q begins at B and is shorter, begins in (B, E] and ends
 * after E, or is around B and ends before E. */
static inline int clash(const struct placed *q, int64_t b, int64_t e)
{
	return (q->b == b && q->e < e) || (q->b > b && q->b <= e && q->e > e) || (q->b < b && q->e > b && q->e < e);
}

/* The first lane of THREAD without a clash for [B, E] (E > B) among the
 * slices P[0..N) placed before it, found by looking at every one (a
 * slice of zero duration never clashes). */
static inline unsigned first_free_lane(const struct placed *p, unsigned n, unsigned thread, int64_t b, int64_t e)
{
	for (unsigned lane = 0;; lane++) {
		unsigned j;
		for (j = 0; j < n; j++)
			if (p[j].thread == thread && p[j].lane == lane && p[j].e != p[j].b && clash(&p[j], b, e))
				break;
		if (j == n)
			return lane;
	}
}

#endif
