/* pflanes.c - which track of its thread a slice goes on, so that the trace
 * processor pairs each slice's begin with its own end.
 *
 * A slice is a SLICE_BEGIN and a SLICE_END packet; the trace processor
 * sorts packets by time, ties in file order, and an end closes the
 * innermost open slice of its track.  JSON allows what that cannot take:
 * two slices of a thread that begin at the same nanosecond with the
 * shorter first in the file (the end of the shorter would close the
 * longer), or a slice that ends at the nanosecond where one written
 * earlier begins (the begin would come first and be closed instead).
 * Perfetto's JSON import sorts such ties by duration and has no trouble.
 * Merged traces have them: a GPU annotation span begins at the nanosecond
 * of its first kernel and is written after all of its kernels.  So each
 * slice of non-zero duration is checked against the begins written before
 * on its thread's track (lane 0); on a clash it goes to lane 1, a second
 * track of the same thread (Perfetto shows it as a thread track of that
 * thread, below the first), or on, to the first lane without a clash.
 * A slice of zero duration never clashes (its begin and end are next to
 * each other in the file).
 *
 * The begins are remembered for a window of trace time behind the latest
 * begin seen (ties are near in time, however far apart in the file):
 * WINDOW_NS, halved whenever the table would pass MAX_ENTRIES after
 * forgetting what is older, so memory stays bounded on any trace.  Slices
 * that overlap without nesting (Perfetto's JSON import drops them) are not
 * looked for. */
#include "config.h"
#include "pftrace/pfintern.h"
#include "base/diag.h"

#include <stdlib.h>
#include <string.h>

#define WINDOW_NS (10ll * 1000 * 1000 * 1000)
#define MAX_ENTRIES (1u << 18) /* 6 MiB of slots at most */

struct begin {
	uint64_t key;   /* 0: an empty slot */
	int64_t ts;     /* the begin */
	int64_t minend; /* the earliest end of the slices begun there */
};

struct cm_pflanes {
	struct begin *slot;
	size_t nslots, count;
	int64_t latest, window;
};

cm_pflanes *cm_pflanes_new(void)
{
	cm_pflanes *l = cm_xcalloc(1, sizeof *l);
	l->nslots = 1024;
	l->slot = cm_xcalloc(l->nslots, sizeof *l->slot);
	l->window = WINDOW_NS;
	l->latest = INT64_MIN;
	return l;
}

void cm_pflanes_free(cm_pflanes *l)
{
	if (!l)
		return;
	free(l->slot);
	free(l);
}

/* The key of a begin at TS on lane LANE of THREAD (never 0). */
static uint64_t key_of(uint64_t thread, unsigned lane, int64_t ts)
{
	uint64_t k[3] = {thread, lane, (uint64_t)ts};
	return cm_pf_hash((const char *)k, sizeof k, 0x6c616e65) | 1;
}

static struct begin *find(const cm_pflanes *l, uint64_t key)
{
	size_t j;
	for (j = key & (l->nslots - 1); l->slot[j].key; j = (j + 1) & (l->nslots - 1))
		if (l->slot[j].key == key)
			return &l->slot[j];
	return NULL;
}

/* Place the entries again in NSLOTS slots, dropping those that begin before
 * the window. */
static void rebuild(cm_pflanes *l, size_t nslots)
{
	struct begin *old = l->slot;
	size_t n = l->nslots, i;
	int64_t horizon = l->latest > INT64_MIN + l->window ? l->latest - l->window : INT64_MIN;
	l->slot = cm_xcalloc(nslots, sizeof *l->slot);
	l->nslots = nslots;
	l->count = 0;
	for (i = 0; i < n; i++) {
		size_t j;
		if (!old[i].key || old[i].ts < horizon)
			continue;
		for (j = old[i].key & (nslots - 1); l->slot[j].key; j = (j + 1) & (nslots - 1))
			;
		l->slot[j] = old[i];
		l->count++;
	}
	free(old);
}

/* Make room for one more entry: forget what is out of the window, grow,
 * or narrow the window. */
static void room(cm_pflanes *l)
{
	if ((l->count + 1) * 2 <= l->nslots)
		return;
	rebuild(l, l->nslots);
	while ((l->count + 1) * 2 > l->nslots) {
		if (l->nslots < MAX_ENTRIES)
			rebuild(l, l->nslots * 2);
		else if (l->window > 1)
			l->window /= 2, rebuild(l, l->nslots);
		else
			break; /* cannot be: every entry begins in one nanosecond */
	}
}

unsigned cm_pflanes_place(cm_pflanes *l, uint64_t thread, int64_t b, int64_t e)
{
	unsigned lane;
	struct begin *p;
	if (e <= b)
		return 0;
	for (lane = 0;; lane++) {
		struct begin *same = find(l, key_of(thread, lane, b));
		if (same && same->minend < e)
			continue; /* a shorter slice begun here first */
		if (find(l, key_of(thread, lane, e)))
			continue; /* a slice written before begins where this ends */
		break;
	}
	if (b > l->latest)
		l->latest = b;
	room(l);
	{
		uint64_t key = key_of(thread, lane, b);
		size_t j;
		if ((p = find(l, key))) {
			if (e < p->minend)
				p->minend = e;
			return lane;
		}
		for (j = key & (l->nslots - 1); l->slot[j].key; j = (j + 1) & (l->nslots - 1))
			;
		l->slot[j].key = key;
		l->slot[j].ts = b;
		l->slot[j].minend = e;
		l->count++;
	}
	return lane;
}
