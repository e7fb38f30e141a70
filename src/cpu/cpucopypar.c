/* cpucopypar.c - the copy of the CPU trace's events on several threads.
 *
 * The copy (cpucopy.c, cpuwalk.c) walks the layout beside the text on one
 * thread, with one read-ahead thread doing the read(2) copies: on the
 * 16-core machine 0.17 s of the 1 GB pair's run, every other CPU idle, and
 * no faster than one thread's read of the file.  Past the GPU metadata the
 * events go out as the text is, less the dropped ones (the profiler span
 * events, with the separator before each), so parts of the array can be
 * read and walked apart: the layout's marks (json/doclayout.h, a mark every
 * CM_DOCLAYOUT_STRIDE bytes of text) give, for an element, where its record
 * lies in the layout file and where its distance counts from, so a thread
 * decodes the records of its part alone.  Each part's text is read by
 * pread(2) (io/input.h) into the part's output buffer, walked by the same
 * checks as the walk (each element's first and last bytes where its record
 * puts them, the part's records ending at its end), the dropped elements cut
 * out in place, and handed to the output in order (base/opool.h).
 *
 * The walk stops at the first mark after the metadata is in
 * (cpucopy_array_feed), the parts take the elements from there to the
 * array's end, and the walk goes on from the ']' as though it had walked
 * them, the rest of the text read at offsets too (cpucopy.c).  Not with a
 * hook that takes elements one by one (the repair), a gzip input, or a
 * pipe's first pass: those walk on one thread, as before.
 *
 * A cut (--steps, --range) and --split: each part reads its events' notes
 * (cpucut.h, 25 bytes an event, at offsets) and decides them itself as
 * the walk's keep hook would, the cut events left out like the dropped
 * ones; a split's part keeps its text whole and lists the pieces of it
 * each file gets (an event and the separator before it, runs of them
 * joined), which the sink writes in order (cpuroute.h).  The walk did this
 * on one thread, an event at a time: on the 16-core machine the split's
 * copy took 0.28-0.45 s of the 1 GB pair's run where the plain merge's,
 * in parts, took 0.03.
 *
 * Encoded parts (hooks->enc: a merge to .pftrace, src/mergepftcpu.c): a
 * part's kept elements, whose [a, b) the records give, go to the hook's
 * encoder on the worker that read them, the part's text staying in the
 * worker's buffer, and the sink hands the encoder's output (the batches'
 * references) on in order, not the text: as text the transcoder's one
 * writer thread copied it and its workers walked it again to find the
 * elements (issue 25).  The parts then span up to ENC_STRIDES marks (a
 * batch each), run at -j 1 too (the bytes depend on the parts, which
 * then depend on the marks alone) and after the careful scan, and each
 * run of them is the hook's BEGIN and END, the text before them written
 * out first (the walk stops only after an element: the text after goes
 * on with its separator). */
#include "config.h"
#include "cpu/cpucopy_int.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/opool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A part longer than this many strides (an element of megabytes between
 * two marks) is walked on the one thread, by chunks, as before: each part
 * is in memory whole, on every thread at once, and the copy's memory stays
 * bounded (8 MiB at the default stride; the marks are a stride apart, so
 * a part is seldom much longer).  With the testing aid's stride of a few
 * bytes, the longer elements go to the walk, the others in parts. */
#define PART_STRIDES 32
#define PART_MAX (PART_STRIDES * cm_doclayout_stride())

/* Parts are run only when at least this much text is left past the stop:
 * below it, handing the parts over costs more than the threads gain (the
 * testing aid CUPTIMERGE_COPY_STRIDE, which sets the marks apart,
 * lifts this). */
#define PAR_MIN_BYTES (4u << 20)

/* With the parts encoded (hooks->enc), a part runs over up to this many
 * strides (within PART_MAX): each part is a batch of the .pftrace, whose
 * strings are interned anew, as the text's batches of 1 MiB are
 * (pftrace/pfstream.c's PFT_BATCH).  CUPTIMERGE_PFT_PART_STRIDES, a
 * testing aid (1 to 32), sets it: the bytes change with it. */
#define ENC_STRIDES 4

/* ENC_STRIDES, or the testing aid's. */
static size_t enc_strides(void)
{
	const char *e = getenv("CUPTIMERGE_PFT_PART_STRIDES");
	int n = e && *e ? atoi(e) : 0;
	return n >= 1 && n <= PART_STRIDES ? (size_t)n : ENC_STRIDES;
}

/* A part: elements [ka, kb), text [from, to) (from: the end of element
 * ka - 1; to: the end of element kb - 1), their records at [lay_from,
 * lay_to) of the layout file. */
struct part {
	uint64_t ka, kb, from, to, lay_from, lay_to;
	uint64_t piece; /* its number in the run (hooks->enc) */
};

/* With a cut (--steps, --range, --split: hooks->cut), a part's output
 * begins with this: the bytes of text after it, the pieces after the text
 * (--split), and the decisions' counts and extents (cm_cpucut_part; its
 * group extents follow the pieces), which the sink folds in order. */
struct part_head {
	uint64_t text_len, npieces, kept, cut;
	double kept_min, kept_max;
};

/* --split: the bytes [off, off + len) of a part's text go to output G;
 * the first GAP of them (the separator before the part's first element to
 * G) only when G has an element already, as cm_cpuroute_elem decides;
 * NEXT: 1 + the index of the last element among them (cpuroute.h). */
struct piece {
	uint64_t off, len, next;
	uint32_t g, gap;
};

struct par {
	struct copy *c;
	const cm_cpucopy_enc *enc; /* hooks->enc: the parts encoded */
	int layout_fd;
	cm_cpucut *cut;      /* hooks->cut, when a keep hook decides */
	cm_cpuroute *route;  /* hooks->route: --split */
	uint64_t kept;       /* elements the parts kept (the sink's count) */
	cm_cpucut_part fold; /* the sink's view of a part's decisions */
};

struct worker {
	struct par *par;
	cm_buf lay;
	cm_cpucut_part cut; /* with a cut: the part's decisions */
	cm_buf pieces;      /* --split: the part's pieces, in order */
	/* --split: the piece each output's last element went to, -1 none */
	int64_t last[CM_CPUROUTE_MAX];
	/* hooks->enc: the encoder, the part's text, its kept elements'
	 * [a, b) in it */
	void *enc;
	cm_buf text, ab;
};

/* A part's text, then its pieces, at 8-byte boundaries. */
static size_t align8(uint64_t n) { return (size_t)((n + 7) & ~(uint64_t)7); }

/* The mark c->par_next, if enough text is left past it, as c->par_at;
 * else none.  (Not one that begins a part too long to run: the walk goes
 * on to the next.) */
static void set_at(struct copy *c)
{
	const cm_doclayout_mark *m = c->marks, *last = &c->marks[c->nmarks - 1];
	c->par_at = 0;
	while (c->par_next + 1 < c->nmarks &&
	       (!m[c->par_next].index || m[c->par_next + 1].pos - m[c->par_next].pos > PART_MAX))
		c->par_next++;
	if (c->par_next + 1 < c->nmarks &&
	    (last->pos - c->marks[c->par_next].pos >= PAR_MIN_BYTES || getenv("CUPTIMERGE_COPY_STRIDE")))
		c->par_at = c->marks[c->par_next].index;
}

int cpucopy_par_begin(struct copy *c)
{
	const cm_cpucopy_hooks *h = c->hooks;
	cm_doclayout_mark *m;
	size_t n;
	const char *e = getenv("CUPTIMERGE_COPY_THREADS");
	int threads = e && atoi(e) >= 1 ? atoi(e) : h->threads;
	c->par_at = 0;
	if (threads < 1)
		threads = 1;
	/* (encoded: the output's bytes depend on the parts: run them on one
	 * thread too) */
	if (threads < (h->enc ? 1 : 2) || !c->runs || !c->plan->events || (h->enc && (h->element || h->route)))
		return 0;
	/* an element hook but the split's (the repair's, which takes the
	 * elements one by one), a keep hook but a cut's (whose decisions the
	 * parts can make: cm_cpucut_part_keep), a route but a cut's */
	if ((h->element && !h->route) || (h->keep && !(h->cut && cm_cpucut_parts_ok(h->cut, c->plan->events))) ||
	    (h->route && (!h->keep || h->route->nouts > CM_CPUROUTE_MAX)))
		return 0;
	if (cm_doclayout_marks(c->layout, &m, &n) < 0)
		return 0;
	c->marks = m;
	c->nmarks = n;
	c->par_threads = threads;
	/* marks that do not describe this array (a layout not the scan's) */
	for (size_t i = 1; i < n; i++)
		if (m[i].index <= m[i - 1].index || m[i].pos < m[i - 1].pos || m[i].off < m[i - 1].off) {
			c->nmarks = 0;
			return 0;
		}
	if (m[n - 1].index != c->plan->events) {
		c->nmarks = 0;
		return 0;
	}
	c->par_next = 0;
	set_at(c);
	return 0;
}

void cpucopy_par_next(struct copy *c)
{
	c->par_next++;
	set_at(c);
}

/* The first of the N sorted indexes V not below K. */
static uint64_t lower_bound(const uint64_t *v, uint64_t n, uint64_t k)
{
	uint64_t lo = 0, hi = n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (v[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The next varint of [*P, END) into *V: 0, or -1 at END or past 64 bits. */
static inline int varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		unsigned char ch = *(*p)++;
		*v |= (uint64_t)(ch & 0x7f) << shift;
		if (!(ch & 0x80))
			return 0;
	}
	return -1;
}

/* The text changed since the first pass (at text offset AT): -1. */
static int changed(const struct copy *c, uint64_t at)
{
	return cm_fail(CM_EXIT_IO, cm_input_name(c->in), (int64_t)at, "the input changed between the two passes");
}

/* Read all N bytes at OFF of the layout file FD into P: 0, or -1. */
static int read_layout(int fd, void *p, size_t n, uint64_t off)
{
	ssize_t got = cm_pread_all(fd, p, n, off);
	if (got != (ssize_t)n)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s",
			       got < 0 ? strerror(errno) : "it ended early");
	return 0;
}

/* --split: the part's element K, at [SEP, END) of its text with the
 * separator before it (SEP_LEN bytes), to outputs GA to GB: joined to an
 * output's last piece when that ends where it begins (element K - 1 went
 * there too), else a piece of its own, whose separator is written only
 * when the output has an element already (the part's first to it: the
 * sink knows). */
static void add_pieces(struct worker *w, int ga, int gb, uint64_t sep, uint64_t sep_len, uint64_t end, uint64_t k)
{
	for (int g = ga; g <= gb; g++) {
		struct piece *pc = w->last[g] >= 0 ? (struct piece *)w->pieces.p + w->last[g] : NULL;
		if (pc && pc->off + pc->len == sep) {
			pc->len = end - pc->off;
			pc->next = k + 1;
			continue;
		}
		struct piece np = {sep, end - sep, k + 1, (uint32_t)g, pc ? 0 : (uint32_t)sep_len};
		w->last[g] = (int64_t)(w->pieces.len / sizeof np);
		cm_buf_put(&w->pieces, &np, sizeof np);
	}
}

/* A part (IN) to its output (OUT): its text read, its elements checked
 * against their records, the dropped ones (and with a cut, those it cuts)
 * cut out; with a route, the text left whole and the pieces that go to
 * each output after it (struct part_head).  0, or -1. */
static int part_run(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct worker *w = wctx;
	struct copy *c = w->par->c;
	const cm_cpuplan *p = c->plan;
	cm_cpucut *cut = w->par->cut;
	int route = w->par->route != NULL;
	size_t head = cut ? sizeof(struct part_head) : 0;
	struct part pt;
	const unsigned char *l, *lend;
	uint64_t lpos, d;
	size_t n, kept = 0;
	char *t;
	const cm_cpucopy_enc *enc = w->par->enc;
	memcpy(&pt, in->p, sizeof pt);
	n = (size_t)(pt.to - pt.from);
	w->lay.len = 0;
	cm_buf_grow(&w->lay, (size_t)(pt.lay_to - pt.lay_from));
	if (read_layout(w->par->layout_fd, w->lay.p, (size_t)(pt.lay_to - pt.lay_from), pt.lay_from) < 0)
		return -1;
	if (cut && cm_cpucut_part_read(cut, &w->cut, pt.ka, pt.kb) < 0)
		return -1;
	if (enc) { /* the text in the worker's buffer, OUT the encoder's */
		w->text.len = w->ab.len = 0;
		cm_buf_grow(&w->text, n);
		cm_buf_grow(out, head);
		t = w->text.p;
	} else {
		cm_buf_grow(out, head + n);
		t = out->p + head;
	}
	if (cm_input_pread(c->in, t, n, pt.from) < 0)
		return -1;
	l = (const unsigned char *)w->lay.p;
	lend = l + (pt.lay_to - pt.lay_from);
	lpos = pt.from;
	d = lower_bound(p->dropped, p->ndropped, pt.ka);
	if (route) {
		w->pieces.len = 0;
		for (int g = 0; g < CM_CPUROUTE_MAX; g++)
			w->last[g] = -1;
	}
	for (uint64_t k = pt.ka; k < pt.kb; k++) {
		uint64_t gap, len, a, b;
		int ga, gb;
		/* a record is GAP+1 and LEN (json/doclayout.h) */
		if (varint(&l, lend, &gap) < 0 || !gap || varint(&l, lend, &len) < 0 || !len ||
		    (a = lpos + gap - 1) < lpos || (b = a + len) < a || b > pt.to)
			return changed(c, lpos);
		if (t[a - pt.from] != '{' || t[b - 1 - pt.from] != '}')
			return changed(c, a);
		if (d < p->ndropped && p->dropped[d] == k) {
			d++; /* it and the separator before it stay out */
		} else if (cut && !cm_cpucut_part_keep(cut, &w->cut, k, &ga, &gb)) {
			/* cut: as a dropped one */
		} else if (route) {
			add_pieces(w, ga, gb, lpos - pt.from, a - lpos, b - pt.from, k);
		} else if (enc) {
			uint64_t ab[2] = {a - pt.from, b - pt.from};
			cm_buf_put(&w->ab, ab, sizeof ab);
			kept++;
		} else {
			size_t at = (size_t)(lpos - pt.from);
			if (kept != at)
				memmove(t + kept, t + at, (size_t)(b - lpos));
			kept += (size_t)(b - lpos);
		}
		lpos = b;
	}
	if (lpos != pt.to || l != lend)
		return changed(c, lpos);
	if (enc) { /* the elements encoded: the text's place in OUT theirs */
		int rc;
		out->len = head;
		rc = enc->part(w->enc, pt.piece, t, (const uint64_t *)(const void *)w->ab.p, kept,
			       cm_input_name(c->in), pt.from, out);
		if (rc < 0)
			return rc;
		kept = out->len - head;
	}
	if (!cut) {
		out->len = kept;
		return 0;
	}
	{
		struct part_head h = {route ? n : kept, w->pieces.len / sizeof(struct piece), w->cut.kept, w->cut.cut,
				      w->cut.kept_min, w->cut.kept_max};
		size_t ng = cut->ngroups * sizeof(double);
		memcpy(out->p, &h, sizeof h);
		out->len = head + align8(h.text_len);
		if (route)
			cm_buf_put(out, w->pieces.p, w->pieces.len);
		cm_buf_put(out, w->cut.group_min, ng);
		cm_buf_put(out, w->cut.group_max, ng);
	}
	return 0;
}

/* A part's output, in order, to the copy's output; with a cut, the text
 * or its pieces to theirs, and the part's decisions folded into the
 * cut. */
static int part_sink(void *sctx, cm_buf *out)
{
	struct par *par = sctx;
	struct part_head h;
	const char *text;
	size_t at, ng;
	if (!par->cut)
		return (par->enc ? par->enc->hand(par->enc->ctx, out->p, out->len)
				 : cm_output_write(par->c->eo->out, out->p, out->len)) < 0
			       ? -1
			       : 0;
	memcpy(&h, out->p, sizeof h);
	text = out->p + sizeof h;
	at = sizeof h + align8(h.text_len);
	if (!par->route && (par->enc ? par->enc->hand(par->enc->ctx, text, (size_t)h.text_len)
				     : cm_output_write(par->c->eo->out, text, (size_t)h.text_len)) < 0)
		return -1;
	for (uint64_t i = 0; par->route && i < h.npieces; i++, at += sizeof(struct piece)) {
		struct piece pc;
		const char *q;
		size_t len;
		memcpy(&pc, out->p + at, sizeof pc);
		q = text + pc.off;
		len = (size_t)pc.len;
		if (pc.gap && !par->route->next[pc.g]) { /* the file's first element: no separator */
			q += pc.gap;
			len -= pc.gap;
		}
		if (cm_cpuroute_write(par->route, pc.g, q, len) < 0)
			return -1;
		par->route->next[pc.g] = pc.next;
	}
	ng = par->cut->ngroups * sizeof(double);
	par->fold.kept = h.kept;
	par->fold.cut = h.cut;
	par->fold.kept_min = h.kept_min;
	par->fold.kept_max = h.kept_max;
	memcpy(par->fold.group_min, out->p + at, ng);
	memcpy(par->fold.group_max, out->p + at + ng, ng);
	cm_cpucut_part_fold(par->cut, &par->fold);
	par->kept += h.kept;
	return 0;
}

int cpucopy_par_run(struct copy *c)
{
	const cm_cpuplan *p = c->plan;
	const cm_doclayout_mark *m = c->marks;
	const cm_cpucopy_enc *enc = c->hooks->enc;
	struct par par = {c, enc, fileno(c->layout), c->hooks->keep ? c->hooks->cut : NULL, c->hooks->route, 0, {0}};
	struct worker *w;
	void **wctx;
	cm_opool *pool;
	cm_buf b = {0};
	const char *slots;
	int n = c->par_threads, rc = 0;
	size_t j = c->par_next, k, ng = par.cut ? par.cut->ngroups : 0, strides = enc_strides();
	uint64_t piece = 0;
	uint64_t d0, d1;
	c->par_stopped = 0;
	c->par_at = 0;
	if (m[j].index != c->elem || m[j].pos != c->par_off)
		return changed(c, c->par_off);
	/* what went before: the text all outputs share (after what the
	 * route's writer threads hold), or the output's */
	if (par.route ? cm_cpuroute_flush(par.route) < 0 || cm_cpuroute_shared(par.route) < 0
		      : cm_evout_flush(c->eo) < 0 || (enc && enc->begin(enc->ctx) < 0))
		return -1;
	w = cm_xcalloc((size_t)n, sizeof *w);
	wctx = cm_xcalloc((size_t)n, sizeof *wctx);
	for (int i = 0; i < n; i++) {
		w[i].par = &par;
		wctx[i] = &w[i];
		if (enc)
			w[i].enc = enc->enc_new(enc->ctx);
		if (par.cut) {
			w[i].cut.group_min = cm_xcalloc(2 * ng + 1, sizeof(double));
			w[i].cut.group_max = w[i].cut.group_min + ng;
		}
	}
	if (par.cut) {
		par.fold.group_min = cm_xcalloc(2 * ng + 1, sizeof(double));
		par.fold.group_max = par.fold.group_min + ng;
	}
	/* (CUPTIMERGE_COPY_SLOTS, a benchmarking aid: the ring's slots, at
	 * most twice the workers and 8, as the .pftrace's lanes keep for them) */
	slots = getenv("CUPTIMERGE_COPY_SLOTS");
	pool = cm_opool_new_ahead(n, slots ? atoi(slots) : 0, part_run, wctx, part_sink, &par);
	if (c->hooks->parts_stats)
		cm_opool_set_stats(pool, c->hooks->parts_stats);
	for (; j + 1 < c->nmarks && m[j + 1].pos - m[j].pos <= PART_MAX && rc == 0; j = k) {
		struct part pt;
		/* (encoded: up to ENC_STRIDES marks' strides, within PART_MAX) */
		for (k = j + 1; enc && k + 1 < c->nmarks && k - j < strides && m[k + 1].pos - m[j].pos <= PART_MAX; k++)
			;
		pt = (struct part){m[j].index, m[k].index, m[j].pos, m[k].pos, m[j].off, m[k].off, piece++};
		cm_buf_put(&b, &pt, sizeof pt);
		rc = cm_opool_put(pool, &b);
		cm_progress_update(m[k].pos);
	}
	rc = cm_opool_finish(pool) < 0 || rc < 0 ? -1 : 0;
	if (enc && enc->end(enc->ctx, rc == 0) < 0)
		rc = -1;
	if (c->hooks->parts)
		*c->hooks->parts += piece;
	if (c->hooks->parts_threads)
		*c->hooks->parts_threads = n;
	for (int i = 0; i < n; i++) {
		cm_buf_free(&w[i].lay);
		cm_buf_free(&w[i].cut.notes);
		cm_buf_free(&w[i].pieces);
		cm_buf_free(&w[i].text);
		cm_buf_free(&w[i].ab);
		if (enc)
			enc->enc_free(w[i].enc);
		free(w[i].cut.group_min);
	}
	free(par.fold.group_min);
	free(w);
	free(wctx);
	cm_buf_free(&b);
	if (rc < 0)
		return -1;
	/* the walk as it would be at mark j: after the array's last element,
	 * or before a part too long to run, which it walks, then stops at
	 * the next mark that may begin one (set_at) */
	d0 = lower_bound(p->dropped, p->ndropped, c->elem);
	d1 = lower_bound(p->dropped, p->ndropped, m[j].index);
	c->kept += par.cut ? par.kept : (m[j].index - c->elem) - (d1 - d0);
	if (par.cut) /* its walk goes on at element m[j].index */
		cm_cpucut_seek(par.cut, m[j].index);
	c->next_drop = d1;
	c->elem = m[j].index;
	c->lpos = m[j].pos;
	c->lq_done = c->elem;
	c->lq_bad = 0;
	c->lphase = L_NEXT;
	c->par_next = j + 1;
	if (j + 1 < c->nmarks)
		set_at(c);
	if (fseek(c->layout, (long)m[j].off, SEEK_SET) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read a temporary file: %s", strerror(errno));
	return 0;
}
