/* gpujoin.c - the window's external correlations: collected from the
 * events as the window is read (a pair of ids each, spilled to a temporary
 * file), then joined after the CPU scan: each correlation linked to its CPU
 * thread, its user annotation and, for a window of version 2, the External
 * id of its operator (struct gpu_links). */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "base/opool.h"
#include "base/tmpfile.h"
#include "base/exitcode.h"
#include "base/fdio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------ while the window is read */

/* The (correlation, External id) pairs are needed in window order, once,
 * after the CPU scan; a long window has millions of them, so they wait in
 * an unlinked temporary file rather than in memory (gpu_collect_pairs), 17
 * bytes a pair.  Here they join the batch's list. */
static void pair_put(struct cm_gpu_digest *d, int64_t corr, int64_t ext, int kind)
{
	unsigned char rec[17];
	memcpy(rec, &corr, 8);
	memcpy(rec + 8, &ext, 8);
	rec[16] = (unsigned char)kind; /* PAIR_USER, PAIR_CUSTOM0 or 0 */
	cm_buf_put(&d->pairs, rec, sizeof rec);
}

int gpu_scan_event(struct cm_gpu_digest *d, const struct gpu_event_at *a)
{
	const cm_jval *kind = a->f[WF_KIND];
	cm_int end;
	d->events++;
	if (cm_jval_streq(kind, "external_correlation")) {
		cm_int corr, ext, ekind;
		if (gpu_int_field(a, WF_CORRELATION_ID, 0, &corr) < 0 || gpu_int_field(a, WF_EXTERNAL_ID, 0, &ext) < 0 ||
		    gpu_int_field(a, WF_EXTERNAL_KIND, 0, &ekind) < 0)
			return -1;
		if (corr != 0) {
			struct gpu_ext_corr p;
			if (gpu_to_id(a, "correlation_id", CM_IDS_CORR, corr, &p.corr) < 0 ||
			    gpu_to_id(a, "external_id", CM_IDS_EXT, ext, &p.ext) < 0)
				return -1;
			pair_put(d, p.corr, p.ext,
				 ekind == USER_EXTERNAL_KIND ? PAIR_USER : ekind == CPU_EXTERNAL_KIND ? PAIR_CUSTOM0 : 0);
		}
	}
	if (!cm_jval_streq(kind, "overhead")) {
		if (gpu_int_field(a, WF_END_NS, 0, &end) < 0)
			return -1;
		d->max_end = end > d->max_end ? end : d->max_end;
	}
	return 0;
}

int gpu_collect_pairs(cm_gpu *g, const char *p, size_t n)
{
	if (!n)
		return 0;
	if (!g->win.pairs && !(g->win.pairs = cm_temp_file("pairs")))
		return -1;
	if (fwrite(p, 1, n, g->win.pairs) != n)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	for (size_t i = 0; i + 17 <= n; i += 17) {
		int64_t corr, ext;
		size_t k = (size_t)((g->win.npairs + i / 17) / GPU_PAIR_CHUNK);
		struct gpu_pair_chunk *c;
		memcpy(&corr, p + i, 8);
		memcpy(&ext, p + i + 8, 8);
		if (k == g->win.nchunks) {
			if (k == g->win.chunks_cap) {
				g->win.chunks_cap = g->win.chunks_cap ? 2 * g->win.chunks_cap : 64;
				g->win.chunks = cm_xrealloc(g->win.chunks, g->win.chunks_cap * sizeof *g->win.chunks);
			}
			g->win.chunks[g->win.nchunks++] = (struct gpu_pair_chunk){INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN};
		}
		c = &g->win.chunks[k];
		c->ext_lo = ext < c->ext_lo ? ext : c->ext_lo;
		c->ext_hi = ext > c->ext_hi ? ext : c->ext_hi;
		c->corr_lo = corr < c->corr_lo ? corr : c->corr_lo;
		c->corr_hi = corr > c->corr_hi ? corr : c->corr_hi;
	}
	for (size_t k = (size_t)(g->win.npairs / GPU_PAIR_CHUNK); k < g->win.nchunks; k++) {
		const struct gpu_pair_chunk *c = &g->win.chunks[k];
		g->win.ext_lo = c->ext_lo < g->win.ext_lo ? c->ext_lo : g->win.ext_lo;
		g->win.ext_hi = c->ext_hi > g->win.ext_hi ? c->ext_hi : g->win.ext_hi;
		g->win.corr_lo = c->corr_lo < g->win.corr_lo ? c->corr_lo : g->win.corr_lo;
		g->win.corr_hi = c->corr_hi > g->win.corr_hi ? c->corr_hi : g->win.corr_hi;
	}
	g->win.npairs += n / 17;
	return 0;
}

/* ----------------------------------------------------------------- the joins */

/* The joins read the pairs file twice: once to put the External ids the
 * window needs (cm_gpu_linked_ext), once to link each correlation to its
 * CPU thread and user annotation (cm_gpu_resolve).  Each walk is split
 * over threads by ranges of its key (the External id, the correlation id):
 * every thread takes the pairs whose key is its own, in file order.  So the
 * pairs of one id are taken in window order by one thread, as one reader
 * would take them, and no two threads write the same table entry.  That
 * needs the tables written to be arrays (idmap.h: different ids are
 * different bytes); a hash map, or a small file, is walked by one thread.
 * The tables read (the External id index, the annotations) are only read
 * meanwhile.  A thread reads only the chunks of the file whose ids reach
 * into its range (gpu_window.chunks, noted as the pairs came): the ids
 * mostly grow through the window, so each chunk is read by one thread or
 * two.  (Every thread read the whole file before: at -j 16 the two walks
 * took 0.44 and 0.51 s of CPU for the 1 GB pair, against 0.11 and 0.19 at
 * -j 2.)  The parts are the blocks of an ordered pool (base/opool.h), one
 * worker each: it makes the threads, and reports the first failing part's
 * error once. */
enum walk { WALK_LINK_EXT, WALK_RESOLVE };

#define WALK_MIN_PAIRS 16384 /* fewer are walked by one thread */
/* Pairs read at a time: a chunk, 136 kB, a buffer a part.  At 65536 (1.1
 * MB), the 16 parts of a 16-CPU run took 18 MB between them: the 1 GB
 * pair's peak RSS was 61-65 MB at -j 16, against 54 MB now (the 2-core
 * machine). */
#define WALK_CHUNK GPU_PAIR_CHUNK

struct walk_part {
	cm_gpu *g;
	enum walk what;
	int64_t lo, hi;         /* the keys this part takes */
	int fd;
	uint64_t linked;        /* correlations linked to a thread (resolve) */
	uint32_t threads;       /* the highest thread number it linked to */
};

/* One pair record, REC, of the part's keys.  A correlation's thread is
 * its External id's, a number into the CPU scan's list, which
 * g->link.cpu_threads copies once the walk is done (cm_gpu_resolve): no
 * list is shared while the parts run. */
static void walk_pair(struct walk_part *w, const unsigned char *rec)
{
	cm_gpu *g = w->g;
	struct gpu_ext_corr pr, *p = &pr;
	const struct cm_ext_thread *t;
	memcpy(&pr.corr, rec, 8);
	memcpy(&pr.ext, rec + 8, 8);
	if (w->what == WALK_LINK_EXT) {
		cm_idmap_put(g->link.ext, p->ext, NULL);
		return;
	}
	pr.user = rec[16] & PAIR_USER;
	t = cm_idmap_get(g->link.ext, p->ext);
	if (t && t->thread) {
		struct gpu_corr_thread *l = cm_idmap_put(g->link.linked, p->corr, NULL);
		if (!l->thread)
			w->linked++;
		l->thread = t->thread;
		w->threads = t->thread > w->threads ? t->thread : w->threads;
	}
	if (p->user && g->win.ua_dict && cm_idmap_get(g->link.ua, p->ext))
		*(int64_t *)cm_idmap_put(g->link.uext, p->corr, NULL) = p->ext;
	/* Kineto's "External id": the last CUSTOM0 record of a correlation
	 * names its operator, if the CPU trace has it */
	if (g->link.cext && (rec[16] & PAIR_CUSTOM0))
		*(int64_t *)cm_idmap_put(g->link.cext, p->corr, NULL) = t && t->thread ? p->ext : 0;
}

/* Whether chunk C of the pairs file holds keys of part W. */
static int chunk_wanted(const struct walk_part *w, const struct gpu_pair_chunk *c)
{
	int64_t lo = w->what == WALK_LINK_EXT ? c->ext_lo : c->corr_lo;
	int64_t hi = w->what == WALK_LINK_EXT ? c->ext_hi : c->corr_hi;
	return lo <= w->hi && hi >= w->lo;
}

/* A part: read the chunks that hold its keys, take the pairs of its keys.
 * 0, or -1 after a report (deferred on a thread of its own). */
static int walk_run(struct walk_part *w)
{
	unsigned char *buf = cm_xmalloc((size_t)WALK_CHUNK * 17);
	uint64_t n = w->g->win.npairs, done = 0;
	int key = w->what == WALK_LINK_EXT ? 8 : 0;
	for (size_t k = 0; done < n; k++, done += WALK_CHUNK) {
		size_t want = (size_t)((n - done < WALK_CHUNK ? n - done : WALK_CHUNK) * 17);
		ssize_t r;
		if (k < w->g->win.nchunks && !chunk_wanted(w, &w->g->win.chunks[k]))
			continue;
		if ((r = cm_pread_all(w->fd, buf, want, done * 17)) != (ssize_t)want) {
			free(buf);
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file%s%s",
					r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
		}
		for (size_t i = 0; i < want; i += 17) {
			int64_t id;
			memcpy(&id, buf + i + key, 8);
			if (id >= w->lo && id <= w->hi)
				walk_pair(w, buf + i);
		}
	}
	free(buf);
	return 0;
}

/* A part, as cm_opool_run_each runs it. */
static int walk_one(void *part) { return walk_run(part); }

/* Walk the pairs file for WHAT on up to g->join_threads threads.  0, or -1
 * after a report. */
static int walk_pairs(cm_gpu *g, enum walk what)
{
	int64_t lo = what == WALK_LINK_EXT ? g->win.ext_lo : g->win.corr_lo;
	int64_t hi = what == WALK_LINK_EXT ? g->win.ext_hi : g->win.corr_hi;
	int dense = what == WALK_LINK_EXT ? cm_idmap_is_dense(g->link.ext)
					  : cm_idmap_is_dense(g->link.linked) && cm_idmap_is_dense(g->link.uext) &&
						    (!g->link.cext || cm_idmap_is_dense(g->link.cext));
	int n = dense && g->win.npairs >= WALK_MIN_PAIRS && g->join_threads > 1 ? g->join_threads : 1, rc = 0;
	uint64_t span = (uint64_t)hi - (uint64_t)lo;
	uint32_t threads = 0;
	struct walk_part *w;
	if (!g->win.pairs || !g->win.npairs)
		return 0;
	if (fflush(g->win.pairs) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	if (hi < lo || span < (uint64_t)n)
		n = 1;
	w = cm_xcalloc((size_t)n, sizeof *w);
	for (int i = 0; i < n; i++) {
		w[i].g = g;
		w[i].what = what;
		w[i].fd = fileno(g->win.pairs);
		w[i].lo = i ? w[i - 1].hi + 1 : INT64_MIN;
		w[i].hi = i == n - 1 ? INT64_MAX : (int64_t)((uint64_t)lo + span / (uint64_t)n * (uint64_t)(i + 1));
	}
	rc = cm_opool_run_each(n, walk_one, w, sizeof *w) < 0 ? -1 : 0;
	for (int i = 0; i < n; i++) {
		g->st.linked_corr += w[i].linked;
		threads = w[i].threads > threads ? w[i].threads : threads;
	}
	free(w);
	/* the threads linked to, as gpurules.c finds them (a few) */
	if (rc == 0 && what == WALK_RESOLVE && threads) {
		g->link.cpu_threads.v = cm_xmalloc(threads * sizeof *g->link.cpu_threads.v);
		memcpy(g->link.cpu_threads.v, g->link.ext_threads, threads * sizeof *g->link.cpu_threads.v);
		g->link.cpu_threads.n = g->link.cpu_threads.cap = threads;
	}
	return rc;
}

void cm_gpu_set_join_threads(cm_gpu *g, int n) { g->join_threads = n; }

/* About what the id tables of the joins and the plan will take (an array
 * each, though a sparse one becomes a hash map): the External ids', the
 * correlations' three, the annotations' (packed over their set) and the
 * spans'; idmap.c holds them in memory when that fits in the budget. */
static uint64_t tables_expected(const cm_gpu *g)
{
	int64_t clo = g->win.corr_lo < g->win.api_lo ? g->win.corr_lo : g->win.api_lo;
	int64_t chi = g->win.corr_hi > g->win.api_hi ? g->win.corr_hi : g->win.api_hi;
	uint64_t n = cm_idmap_array_bytes(sizeof(struct cm_ext_thread), g->win.ext_lo, g->win.ext_hi) +
		     cm_idmap_array_bytes(sizeof(struct gpu_corr_thread), g->win.corr_lo, g->win.corr_hi) +
		     cm_idmap_array_bytes(8, g->win.corr_lo, g->win.corr_hi) +
		     (g->version >= 2 ? cm_idmap_array_bytes(8, clo, chi) : 0);
	if (g->win.ua_count) /* the key set (16 bytes a block of 64), then an entry a key in two tables */
		n += cm_idmap_array_bytes(0, g->win.ua_lo, g->win.ua_hi) / 32 +
		     g->win.ua_count * (cm_idmap_array_bytes(sizeof(struct ua_ref), 0, 0) +
				    cm_idmap_array_bytes(sizeof(struct gpu_ann_span_slot), 0, 0));
	return n;
}

cm_idmap *cm_gpu_linked_ext(cm_gpu *g)
{
	if (g->link.ext)
		return g->link.ext;
	cm_idmap_expect(tables_expected(g));
	if (!(g->link.ext = cm_idmap_new(sizeof(struct cm_ext_thread), g->win.ext_lo, g->win.ext_hi, g->win.npairs)) ||
	    walk_pairs(g, WALK_LINK_EXT) < 0)
		return NULL;
	return g->link.ext;
}

int cm_gpu_ua_table(cm_gpu *g) { return g->link.ua ? 0 : gpu_ua_build(g); }

int cm_gpu_resolve(cm_gpu *g, cm_int base_ns, const struct cm_ext_pt *threads, uint64_t found)
{
	g->base_ns = base_ns;
	g->link.ext_threads = threads;
	if (!cm_gpu_linked_ext(g) || cm_gpu_ua_table(g) < 0 ||
	    !(g->link.linked = cm_idmap_new(sizeof(struct gpu_corr_thread), g->win.corr_lo, g->win.corr_hi,
					    g->win.npairs)) ||
	    !(g->link.uext = cm_idmap_new(8, g->win.corr_lo, g->win.corr_hi, g->win.npairs)) ||
	    (g->version >= 2 &&
	     !(g->link.cext = cm_idmap_new(8, g->win.corr_lo < g->win.api_lo ? g->win.corr_lo : g->win.api_lo,
				      g->win.corr_hi > g->win.api_hi ? g->win.corr_hi : g->win.api_hi, g->win.npairs + g->win.api_n)))
	    || walk_pairs(g, WALK_RESOLVE) < 0)
		return -1;
	g->st.linked_ext = found; /* the scan counted them: no walk of the table for it */
	g->st.pairs = g->win.npairs;
	g->st.index_bytes = cm_idmap_bytes(g->link.ext);
	/* only the correlation tables are needed from here on */
	if (g->win.pairs)
		fclose(g->win.pairs);
	g->win.pairs = NULL;
	g->win.npairs = 0;
	cm_idmap_free(g->link.ext);
	g->link.ext = NULL;
	return 0;
}
