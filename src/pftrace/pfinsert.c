/* pfinsert.c - batches inserted between two parts of the text: the
 * elements a writer makes on threads of its own (the merge's render of the
 * window's records, src/mergepft.c) handed to the transcoder as batches of
 * records its threads encoded (pftrace.h says the contract).
 *
 * The batches are numbered on from the text's before them, and the text
 * after them is cut into spans (and from -j 2 into chunks) counted from
 * where it begins, its batches numbered on from the inserted ones: the
 * same batches at -j 1 (the walk on the writer's thread) and from -j 2
 * (the chunks, whose walk numbers skip the inserted batches: struct
 * chunk_head).  The numbers only order the lanes (pflaneq.c): the bytes
 * do not depend on them.
 *
 * The direct path (the default; cm_pft_insert_direct): the writer's
 * thread that hands the batches over in order does no more than pass each
 * on to the sequential part (pfpool.c's cm_pft_hand: swapped into the
 * handoff of its thread, or worked through there below 4 workers).  Each
 * batch is encoded by the writer's worker into a buffer of the
 * transcoder's (struct pft_gbuf, from a free list: the writer's output
 * only says which), and the worker puts the lanes' slices of all the
 * batches of its piece (the few blocks of records it rendered) under one
 * number, the pool's next at cm_pft_insert_begin plus the piece's: so it
 * needs no batch's place in the order, which depends on the pieces before
 * (a group without an element is not a batch).  A second run of pieces
 * (the merge's spans after its window events) numbers them from 0 again,
 * on from the first run's (cm_pft_insert_next).  The text's batches
 * queued in the pool before the insert reach the sequential part first: the
 * first inserted batch's hand-over waits until the pool's sink has handed
 * them all (not cm_pft_insert_begin, so that the writer's workers start at
 * once); the text after is queued only once the inserted batches are all
 * handed over.  On 16 CPUs each inserted batch went through the pool
 * (below), 0.2 ms a batch of wake-ups of other threads (BENCHMARKS.md,
 * "Where the .pftrace's waits fall on 16 CPUs").  Memory: a buffer for
 * each batch in flight (the groups of the pieces in the writer's pool),
 * which its outputs held before; tiny groups pay for a buffer each
 * (CUPTIMERGE_PFT_GROUP=1, a testing aid: 441 MB at the peak against 241
 * through the pool, the 200M pair at -j 16, BENCHMARKS.md "pfdirect16").
 *
 * Runs of the document's own elements may come before the writer's (the
 * merge's CPU trace's parts, encoded on its copy's threads:
 * src/mergepftcpu.c; cm_pft_insert_own_begin), text between them: each
 * run's pieces numbered on from the batches before it, as the window's
 * are, and the ties' filter told of the window's first batch only at the
 * writer's cm_pft_insert_begin, so that the lanes keep the parts' slices
 * for the calls as they keep the text's.  -v counts them in a phase of
 * their own (PH_PARTS), the text between and after them in the text
 * before the writer's batches.
 *
 * The pool's path (CUPTIMERGE_PFT_DIRECT=0, a testing aid: the same
 * bytes): an inserted batch of records goes through the pool as the
 * others do, so that it reaches the sequential part in order: its worker
 * only copies it (from the writer's own buffer, when the writer handed
 * that over: cm_pft_insert_adopt) and hands its slices to the lanes
 * (pfpool.c's batch_work), as the encoding of a batch does. */
#include "config.h"
#include "pftrace/pftrace.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfbatch.h"
#include "pftrace/pflaneq.h"
#include "pftrace/pfstream.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number of the next batch of the pool. */
static uint64_t *next_seq(cm_pft *t) { return t->par ? &t->chunk_seq : &t->batch_seq; }

void cm_pft_insert_direct(cm_pft *t, int on) { t->direct = on; }

/* cm_pft_insert_begin, and cm_pft_insert_own_begin (OWN 1: the lanes'
 * ties not told that the window's batches begin here). */
static int insert_begin(cm_pft *t, int own)
{
	int rc = 0;
	if (t->failed)
		return -1;
	if (!t->par) { /* the text's batches so far, the last one cut short */
		if (t->cut.st != S_ELEM && t->cut.st != S_ELEM_AFTER) {
			cm_error(CM_EXIT_DATA, t->label, t->cut.offset,
				 "cannot be written as Perfetto protobuf: events inserted outside traceEvents");
			t->failed = 1;
			return cm_pft_quiesce(t);
		}
		rc = cm_pft_put_spans(t);
	} else if (t->fill.len) { /* the chunk being filled, cut short */
		t->chunk_seq++;
		t->walk_seq++;
		rc = cm_pft_put_block(t, &t->fill);
	}
	if (rc < 0)
		return t->failed = 1, cm_pft_quiesce(t);
	/* (-v: a run of the document's own batches is a phase of its own,
	 * the text after it the text before's again, cm_pft_insert_end) */
	if (own)
		t->wph_own = t->wph;
	cm_pft_phase(t, own ? PH_PARTS : PH_INSERTED);
	/* the lanes keep the slices a call may tie with up to here: the
	 * first inserted batch is the window's (pflanetie.c) */
	if (!own && t->ties && t->ties_until == UINT64_MAX) {
		t->ties_until = *next_seq(t);
		if (t->lq)
			cm_pflaneq_ties_until(t->lq, t->ties_until);
	}
	if (t->direct) { /* (the lanes and the sequential part's thread are needed now) */
		cm_pft_start(t);
		t->ins_base = *next_seq(t);
		t->ins_target = t->put_blocks;
		t->ins_drained = 0;
		/* (a run before this one, the CPU trace's parts, ended: its
		 * pieces' count is in ins_base now, cm_pft_insert_end's) */
		__atomic_store_n(&t->ins_pieces, 0, __ATOMIC_RELEASE);
	}
	return 0;
}

int cm_pft_insert_begin(cm_pft *t) { return insert_begin(t, 0); }

int cm_pft_insert_own_begin(cm_pft *t) { return insert_begin(t, 1); }

void cm_pft_ties(cm_pft *t, uint64_t n)
{
	if (t->ties || t->lq) /* (once, before the first batch's lanes) */
		return;
	t->ties = cm_pfties_new(n);
	t->ties_until = t->ties_spans = UINT64_MAX;
}

void cm_pft_tie(cm_pft *t, int span, int64_t pid, int64_t tid, int64_t ns)
{
	cm_pfties_add(t->ties, cm_pflaneq_key_ints(pid, tid), ns, span ? CM_PFTIES_SPAN : CM_PFTIES_CALL);
}

void cm_pft_tie_text(cm_pft *t, int span, int64_t pid, int64_t tid, const char *ts, size_t n)
{
	int64_t ns;
	if (cm_pf_us_to_ns(ts, n, &ns) == 0 && ns >= 0) /* (else the encoder refuses it) */
		cm_pft_tie(t, span, pid, tid, ns);
}

/* The lanes keep no slice for its ties from batch SEQ on (the spans'
 * first), once (the first say: the spans' pieces along, else
 * cm_pft_insert_next's). */
static void ties_spans_at(cm_pft *t, uint64_t seq)
{
	if (!t->ties || t->ties_spans != UINT64_MAX)
		return;
	t->ties_spans = seq;
	if (t->lq)
		cm_pflaneq_ties_spans(t->lq, seq);
}

void cm_pft_ties_spans_from(cm_pft *t, uint64_t piece) { ties_spans_at(t, t->ins_base + piece); }

/* The pieces: the writer's thread is the render's pool's sink, one group
 * at a time in order, and its copy of every group (0.08 s of CPU on the
 * 1 GB pair at -j 16, BENCHMARKS.md "pfseq15") held back the groups behind
 * it; so the writer's buffer of several groups is taken whole and each
 * group's block only says where it lies.  A piece is free again once its
 * refs are 0 (the workers' release), and only this thread looks for one
 * (the pieces are few: those the pool's slots point into, and one more);
 * a piece whose batches were dropped (a failed run) is never reused, and
 * cm_pft_free frees them all, the pool finished. */
void cm_pft_insert_adopt(cm_pft *t, cm_buf *buf, size_t nbatch)
{
	struct pft_piece *pc = NULL;
	cm_buf tmp;
	for (size_t i = 0; i < t->npieces && !pc; i++)
		if (!__atomic_load_n(&t->pieces[i]->refs, __ATOMIC_ACQUIRE))
			pc = t->pieces[i];
	if (!pc) {
		pc = cm_xcalloc(1, sizeof *pc);
		t->pieces = cm_xrealloc(t->pieces, (t->npieces + 1) * sizeof *t->pieces);
		t->pieces[t->npieces++] = pc;
	}
	tmp = pc->b;
	pc->b = *buf;
	tmp.len = 0;
	*buf = tmp;
	/* (the workers see it, and the bytes, through the pool's lock) */
	__atomic_store_n(&pc->refs, nbatch, __ATOMIC_RELAXED);
	t->cur = nbatch ? pc : NULL;
}

/* The direct path, before its first batch: wait until the pool's sink has
 * handed on every block put before the insert.  0, or -1 when the pool
 * or the run failed (no report: it was, or the pool's is printed when the
 * writer's thread ends the transcoder). */
static int drained(cm_pft *t)
{
	double t0 = cm_now_s();
	int ok;
	__atomic_store_n(&t->drain_waiting, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&t->gmu);
	while (__atomic_load_n(&t->handed, __ATOMIC_SEQ_CST) < t->ins_target &&
	       !__atomic_load_n(&t->ins_stop, __ATOMIC_SEQ_CST) && !__atomic_load_n(&t->dropping, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&t->gcv, &t->gmu);
	ok = __atomic_load_n(&t->handed, __ATOMIC_SEQ_CST) >= t->ins_target;
	pthread_mutex_unlock(&t->gmu);
	__atomic_store_n(&t->drain_waiting, 0, __ATOMIC_SEQ_CST);
	t->ph[t->wph].ins_drain += cm_now_s() - t0;
	t->ins_drained = ok;
	return ok ? 0 : -1;
}

/* A group buffer of the free list (a new one when it is empty). */
static struct pft_gbuf *gbuf_get(cm_pft *t)
{
	struct pft_gbuf *g;
	pthread_mutex_lock(&t->gmu);
	if ((g = t->gfree)) {
		t->gfree = g->next;
	} else {
		g = cm_xcalloc(1, sizeof *g);
		g->all = t->gall;
		t->gall = g;
	}
	pthread_mutex_unlock(&t->gmu);
	g->b.len = 0;
	return g;
}

/* G back on the free list. */
static void gbuf_put(cm_pft *t, struct pft_gbuf *g)
{
	pthread_mutex_lock(&t->gmu);
	g->next = t->gfree;
	t->gfree = g;
	pthread_mutex_unlock(&t->gmu);
}

/* cm_pft_insert_records on the direct path: P holds the group buffer's
 * pointer (cm_pft_enc_close's). */
static int insert_direct(cm_pft *t, const void *p)
{
	struct pft_gbuf *g;
	double t0 = cm_now_s(), t1, wait = 0;
	int rc = 0;
	memcpy(&g, p, sizeof g);
	if (!t->ins_drained) {
		rc = drained(t);
		wait = cm_now_s() - t0;
	}
	if (!rc) {
		t1 = cm_now_s();
		rc = cm_pft_hand(t, &g->b, t->wph);
		if (t->seq) { /* (its wait for room: the put swaps, no more) */
			double d = cm_now_s() - t1;
			pft_waits_add(&t->ph[t->wph].ins_room, d);
			wait += d;
		}
	}
	g->b.len = 0;
	gbuf_put(t, g);
	t->ph[t->wph].ins_recs++;
	cm_pft_note_writer(t, t->wph, cm_now_s() - t0, wait);
	/* (failed: the writer's thread ends the transcoder, cm_pft_insert_abort;
	 * not dropping yet, which would fail the pool's blocks still running
	 * before the one that failed, with no message, ahead of its) */
	return rc < 0 ? -1 : 0;
}

int cm_pft_insert_records(cm_pft *t, const void *p, size_t n)
{
	uint64_t *seq, word;
	uintptr_t at = (uintptr_t)p, b0 = t->cur ? (uintptr_t)t->cur->b.p : 0;
	double t0 = cm_now_s();
	int rc;
	if (t->failed)
		return -1;
	if (t->direct)
		return insert_direct(t, p);
	seq = next_seq(t);
	word = *seq | BLK_RECS;
	/* (its first 8 bytes: its number and the tag) */
	t->ins.len = 0;
	if (t->cur && at >= b0 && n <= t->cur->b.len && at - b0 <= t->cur->b.len - n) {
		struct pft_ref r = {t->cur, at - b0, n};
		word |= BLK_REF;
		cm_buf_put(&t->ins, &word, sizeof word);
		cm_buf_put(&t->ins, &r, sizeof r);
	} else {
		cm_buf_put(&t->ins, &word, sizeof word);
		cm_buf_put(&t->ins, p, n);
	}
	t->ph[t->wph].ins_recs++;
	++*seq;
	rc = cm_pft_put_block(t, &t->ins);
	cm_pft_note_writer(t, t->wph, cm_now_s() - t0, 0); /* (its wait: cm_pft_put_block's) */
	return rc < 0 ? (t->failed = 1, cm_pft_quiesce(t)) : 0;
}

/* (pftrace.h) */
void cm_pft_insert_next(cm_pft *t)
{
	if (!t->direct) { /* (the spans' batches numbered on in the pool) */
		ties_spans_at(t, *next_seq(t));
		return;
	}
	/* (the pieces' ends were all seen: the pool that ran them finished) */
	t->ins_base += __atomic_load_n(&t->ins_pieces, __ATOMIC_ACQUIRE);
	__atomic_store_n(&t->ins_pieces, 0, __ATOMIC_RELEASE);
	ties_spans_at(t, t->ins_base);
}

int cm_pft_insert_end(cm_pft *t)
{
	if (t->failed)
		return -1;
	if (t->direct) /* the text after numbered on from the pieces' lanes */
		*next_seq(t) = t->ins_base + __atomic_load_n(&t->ins_pieces, __ATOMIC_ACQUIRE);
	t->cur = NULL;
	t->span_base = t->text_off;
	t->seq_base = t->batch_seq;
	cm_pft_phase(t, t->wph == PH_PARTS ? t->wph_own : PH_AFTER);
	return 0;
}

void cm_pft_insert_abort(cm_pft *t)
{
	if (t->failed)
		return;
	t->failed = 1;
	/* the pool's blocks, the text's before the insert, handed on up to
	 * the first that failed, if one did (its error printed now), before
	 * the rest is dropped */
	if (t->pool) {
		cm_opool_finish(t->pool);
		t->pool = NULL;
	}
	cm_pft_quiesce(t);
}

struct cm_pft_enc {
	cm_pfev *ev;
	size_t at; /* where the batch being encoded begins in its OUT */
	/* the direct path: the group buffer being encoded into and its
	 * elements, the piece's lanes' number and its batches' slices */
	cm_pft *t;
	struct pft_gbuf *g;
	unsigned long nel;
	uint64_t piece, lane;
	cm_buf subs;
	/* CUPTIMERGE_PFT_MEMBERS_CHECK=1, a testing aid: each element given
	 * with its value parsed from its text too and compared (check_members);
	 * the elements so compared, and those parsed alone, said at the end */
	int check;
	unsigned long checked, parsed;
};

cm_pft_enc *cm_pft_enc_new(cm_pft *t)
{
	cm_pft_enc *e = cm_xcalloc(1, sizeof *e);
	const char *env = getenv("CUPTIMERGE_PFT_MEMBERS_CHECK");
	e->t = t->direct ? t : NULL;
	e->ev = cm_pfev_new(NULL, t->label);
	e->ev->dropping = &t->dropping;
	e->check = env && *env && strcmp(env, "0");
	return e;
}

/* 1 when the value A, given, is the value B, parsed from the same text:
 * the same types, keys, text and kids; a number's kept value, where A
 * keeps one, B's (B may keep one A does not: the encoder reads A's text). */
static int same_value(const cm_jval *a, const cm_jval *b)
{
	const cm_jval *x, *y;
	if (!a || !b)
		return a == b;
	if (a->type != b->type || a->klen != b->klen || (a->klen && memcmp(a->key, b->key, a->klen)))
		return 0;
	switch (a->type) {
	case CM_J_NUM:
		if (a->has_iv && (a->has_iv != b->has_iv || a->iv != b->iv))
			return 0;
		/* fall through */
	case CM_J_STR:
		return a->len == b->len && !memcmp(a->s, b->s, a->len);
	case CM_J_OBJ:
	case CM_J_ARR:
		if (a->len != b->len)
			return 0;
		for (x = a->kids, y = b->kids; x && y; x = x->next, y = y->next)
			if (!same_value(x, y))
				return 0;
		return !x && !y;
	}
	return 1;
}

/* The members of V, given for the element S[0..N), against those its
 * text parses to (in E's encoder's nodes).  0, or -1 after a report.
 * Not inlined: its two struct ev on cm_pft_enc_elem's stack cost every
 * element a frame of six saved registers, 3.2 M instructions of the 50k
 * pair's .pftrace merge (BENCHMARKS.md "pfrender17"). */
static __attribute__((noinline, cold)) int check_members(cm_pft_enc *e, const cm_jval *v, const char *s, size_t n)
{
	struct ev a, b;
	const cm_jval *const *pa = (const cm_jval *const *)&a, *const *pb = (const cm_jval *const *)&b;
	cm_jval *o;
	cm_pf_members(v, &a);
	/* the members as the encoder takes them, by the number each says it
	 * is (kno): the ones their keys name */
	cm_pf_members_given(v, &b);
	if (memcmp(&a, &b, sizeof a))
		return REFUSE(e->ev, -1, "CUPTIMERGE_PFT_MEMBERS_CHECK: a member of an element given says it is another (kno): %.*s",
			      (int)n, s);
	if (!cm_pf_parse_flat(e->ev, s, n, &b)) {
		if (!(o = cm_pf_parse(e->ev, s, n)) || o->type != CM_J_OBJ)
			return REFUSE(e->ev, -1, "CUPTIMERGE_PFT_MEMBERS_CHECK: an element given with its members is not an object: %.*s",
				      (int)n, s);
		cm_pf_members(o, &b);
	}
	for (size_t i = 0; i < sizeof a / sizeof *pa; i++)
		if (!same_value(pa[i], pb[i]))
			return REFUSE(e->ev, -1, "CUPTIMERGE_PFT_MEMBERS_CHECK: member %zu of an element given is not its text's: %.*s", i,
				      (int)n, s);
	e->checked++;
	return 0;
}

int cm_pft_enc_reads_text(const cm_pft_enc *e) { return e->check || e->ev->no_flat; }

int cm_pft_enc_open(cm_pft_enc *e, cm_buf *out)
{
	if (__atomic_load_n(e->ev->dropping, __ATOMIC_ACQUIRE))
		return -2; /* no message: the run's failure was reported */
	if (e->t) { /* into a group buffer */
		if (!e->g)
			e->g = gbuf_get(e->t);
		e->g->b.len = 0;
		e->nel = 0;
		out = &e->g->b;
	}
	e->at = cm_pfbatch_open(e->ev, out);
	return 0;
}

/* cm_pft_enc_elem and cm_pft_enc_text: the element S[0..N) (its value V,
 * NULL: parsed), at offset OFF of its input (-1: not known), to E's
 * batch. */
static int enc_put(cm_pft_enc *e, const struct cm_jval *v, const char *s, size_t n, int64_t off, cm_buf *out)
{
	if (e->check && !v)
		e->parsed++;
	else if (e->check && check_members(e, v, s, n) < 0)
		return -1;
	if (e->t) {
		e->nel++;
		out = &e->g->b;
	}
	return cm_pfbatch_elem(e->ev, v, s, n, off, out);
}

int cm_pft_enc_elem(cm_pft_enc *e, const struct cm_jval *v, const char *s, size_t n, cm_buf *out)
{
	return enc_put(e, v, s, n, -1, out);
}

void cm_pft_enc_label(cm_pft_enc *e, const char *label) { e->ev->label = label; }

int cm_pft_enc_text(cm_pft_enc *e, const char *s, size_t n, int64_t off, cm_buf *out)
{
	return enc_put(e, NULL, s, n, off, out);
}

int cm_pft_enc_close(cm_pft_enc *e, cm_buf *out)
{
	struct cm_pfbatch_tail *tail;
	struct cm_pflaneq_sub u;
	cm_buf *rec;
	if (!e->t) {
		cm_pfbatch_close(e->ev, 0, e->at, out, 0);
		return 0;
	}
	if (!e->nel) /* no batch (the writer drops the group): the buffer kept for the next */
		return 0;
	/* the batch's slices kept for the piece's lanes (cm_pft_enc_end), the
	 * buffer's pointer for the writer to hand on (cm_pft_insert_records) */
	rec = &e->g->b;
	cm_pfbatch_close(e->ev, e->lane, e->at, rec, 0);
	tail = (struct cm_pfbatch_tail *)(void *)(rec->p + rec->len - sizeof *tail);
	u.jobs = (struct cm_pflaneq_job *)(void *)((char *)tail - tail->njobs * sizeof *u.jobs);
	memcpy(u.start, tail->start, sizeof u.start);
	u.moved = tail->moved;
	cm_buf_put(&e->subs, &u, sizeof u);
	cm_buf_put(out, &e->g, sizeof e->g);
	e->g = NULL;
	return 0;
}

void cm_pft_enc_begin(cm_pft_enc *e, uint64_t piece)
{
	if (!e->t)
		return;
	e->piece = piece;
	e->lane = e->t->ins_base + piece;
	e->subs.len = 0;
}

int cm_pft_enc_end(cm_pft_enc *e, cm_buf *out)
{
	uint64_t n = e->piece + 1, was;
	(void)out;
	if (!e->t)
		return 0;
	/* the piece's slices to the lanes, under its number, before the
	 * writer hands its batches on (their records stay put until then) */
	cm_pflaneq_put_many(e->t->lq, e->lane, (const struct cm_pflaneq_sub *)(const void *)e->subs.p,
			    e->subs.len / sizeof(struct cm_pflaneq_sub));
	was = __atomic_load_n(&e->t->ins_pieces, __ATOMIC_RELAXED);
	while (was < n &&
	       !__atomic_compare_exchange_n(&e->t->ins_pieces, &was, n, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	return 0;
}

void cm_pft_enc_free(cm_pft_enc *e)
{
	if (!e)
		return;
	if (e->check)
		fprintf(stderr, "cuptimerge: CUPTIMERGE_PFT_MEMBERS_CHECK: %lu elements' members checked, %lu elements parsed\n",
			e->checked, e->parsed);
	cm_pfev_free(e->ev);
	cm_buf_free(&e->subs);
	free(e); /* (its group buffer, if any, is the transcoder's: freed with it) */
}
