/* pfseg.c - the sequential part of a batch (pfbatch.c's records placed as
 * packets), cut so that little of it runs on the pool's sink.
 *
 * The sink (one batch at a time, in order) bounds the output at -j 16: on
 * the 16-core machine its steps took 5 s of the 6.4 s of a 2.3 GB .pftrace
 * when it also waited for a crew of threads twice a batch (the lanes, then
 * runs of packets).  Now it runs in three steps, each on its own thread:
 *   1. in order, on the sink's thread (place_all): what depends on the
 *      records before: the tracks (numbered, described when new: their
 *      descriptors, and the "M" elements', go before the batch's events)
 *      and each record's track, written into the record itself (struct
 *      head: the records are their own places); what the packets'
 *      writing needs from the records before it (a due clock packet, a
 *      held-back end) is the batch's state, worked out once a run of
 *      events, and the last X before a flow is found by the writer in
 *      the records.  What depends on a record alone the worker worked
 *      out (the record's length, whether its thread is the record
 *      before's), so that a record costs about 36 instructions here on
 *      the 200M pair (BENCHMARKS.md "pfseq21": 104 before); and the
 *      worker lists the runs of one thread's slices and flows (struct
 *      cm_pfrun), which step 1 takes whole, its thread looked up once,
 *      reading and writing none of their records: on 16 CPUs reading
 *      each record, just written on another CPU, was step 1's cost
 *      more than its instructions (BENCHMARKS.md "runs30");
 *   2. the lanes of the slices, placed by the workers (pflaneq.c) while
 *      the batch waited for its turn: the sink lists the few slices off
 *      their thread's own track (the placers say in which shards), and
 *      describes the new lanes' tracks in order;
 *   3. the packets, written from what steps 1 and 2 left (pfwrite.c;
 *      struct cm_pfwrite: the records, the list of step 2, the state
 *      before the batch) by the passer's writer threads (pfpass.c: from -j 8, two
 *      batches or more at once; below, the passer's own thread), and
 *      handed on in order by the passer; the sink only swaps the buffers
 *      into the passer's queue.  Without a passer (-j 1) the sink writes
 *      them, and so it does when the passer's queue is full, rather than
 *      wait for it: on 16 CPUs the passer's writing was the slower of the
 *      two (0.59 s against 0.34 s of CPU in order on the 1 GB pair), so
 *      they share it.
 * The bytes are the same either way: the writing reads only step 1's and
 * 2's results.  A "C" element (its counter tracks made from its text, in
 * order) has its values' packets written in step 3 too, at its place
 * among the events. */
#include "config.h"
#include "base/diag.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfrecord.h"
#include "pftrace/pftrack.h"
#include "pftrace/pflaneq.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The track that the events of a batch (its slices) name most often becomes
 * the default track from the sequence's next clearing (the batch's first
 * packet): its events then write no track uuid.  (A sequence a thread,
 * each with its thread as the default, would save more but define the
 * strings again on each.)  Counted as step 1 places the slices (a pass of
 * their own over them, after, was 2.3 M instructions of the sequential
 * part's 20 M on the 50,000-op pair: BENCHMARKS.md "pfcpu11"): C[uuid]
 * the slices of each track so far, N of them zeroed (e->next_uuid when
 * the batch began, more as its tracks are made: busiest_grow), BEST the
 * most. */
struct busiest {
	uint32_t *c;
	size_t n;
	uint32_t best;
};

static void busiest_begin(cm_pfev *e, struct busiest *b)
{
	b->n = (size_t)e->next_uuid;
	e->counts.len = 0;
	cm_buf_grow(&e->counts, b->n * sizeof *b->c + 1);
	b->c = (uint32_t *)e->counts.p;
	memset(b->c, 0, b->n * sizeof *b->c);
	b->best = 0;
	e->next_def_uuid = 0; /* (read only by the clock packets of the end, cm_pfev_finish's) */
}

/* Tracks were made (e->next_uuid grew): their counts too.  Called
 * wherever step 1 may make a thread's track (a record's thread looked up
 * in full, an "M" or "C" element), so that busiest_count need not check:
 * a slice's thread is one looked up in full in the batch, or one made
 * before it. */
static void busiest_grow(cm_pfev *e, struct busiest *b)
{
	size_t n = (size_t)e->next_uuid;
	if (n <= b->n)
		return;
	cm_buf_grow(&e->counts, n * sizeof *b->c + 1); /* (len 0: the room past the counts kept) */
	b->c = (uint32_t *)e->counts.p;
	memset(b->c + b->n, 0, (n - b->n) * sizeof *b->c);
	b->n = n;
}

/* A slice of the thread track THREAD counted (first to the most wins). */
static inline void busiest_count(cm_pfev *e, struct busiest *b, uint64_t thread)
{
	if (++b->c[thread] > b->best)
		b->best = b->c[thread], e->next_def_uuid = thread;
}

/* N slices of THREAD one after the other counted: as N busiest_count,
 * since no other thread's count moves between them. */
static inline void busiest_add(cm_pfev *e, struct busiest *b, uint64_t thread, uint32_t n)
{
	if ((b->c[thread] += n) > b->best)
		b->best = b->c[thread], e->next_def_uuid = thread;
}

/* A record's head's OFF written over with step 1's track UUID, and DUR
 * with an "M" or "C" element's count of values N (struct head). */
static inline void put_uuid(char *rec, uint64_t uuid) { memcpy(rec + offsetof(struct head, off), &uuid, sizeof uuid); }
static inline void put_count(char *rec, int64_t n) { memcpy(rec + offsetof(struct head, dur), &n, sizeof n); }

/* The slice at REC, placed (its thread's track in OFF), as a flow after
 * it binds to it. */
static struct lastx lastx_of(const char *rec)
{
	struct lastx x;
	x.thread = (uint64_t)cm_pf_rd64(rec + offsetof(struct head, off));
	x.b = cm_pf_rd64(rec + offsetof(struct head, ts));
	x.e = x.b + cm_pf_rd64(rec + offsetof(struct head, dur));
	return x;
}

/* The thread track of the event record REC looked up in full (its pid
 * and tid read: not both integers, or not in the cache), made when new;
 * NULL after a report.  Out of line: the loop's registers are the
 * common case's. */
static __attribute__((noinline)) struct track *record_thread(cm_pfev *e, const char *rec)
{
	cm_jval pidv, tidv;
	const cm_jval *pid, *tid;
	get_id(get_id(rec + sizeof(struct head), &pidv, &pid), &tidv, &tid);
	return cm_pf_thread_at(e, pid, tid, cm_pf_rd64(rec + offsetof(struct head, off)),
			       cm_pf_rd64(rec + offsetof(struct head, ts)),
			       cm_pf_rank((unsigned char)rec[offsetof(struct head, ph)], cm_pf_rd64(rec + offsetof(struct head, dur))));
}

/* The track of the instant of a process or the global one at REC (KIND:
 * K_PROCESS or K_GLOBAL), made (and described) when new; 0 after a
 * report. */
static __attribute__((noinline)) uint64_t instant_track(cm_pfev *e, const char *rec, int kind)
{
	cm_jval pidv;
	const cm_jval *pid, *pname;
	int64_t pk, ps;
	if (kind == K_GLOBAL) {
		if (!e->global_written) {
			size_t pkt = cm_pb_open(e->out, TRACE_PACKET), td;
			cm_pb_uint(e->out, TP_SEQ_ID, DESC_SEQ_ID);
			td = cm_pb_open(e->out, TP_TRACK_DESCRIPTOR);
			cm_pb_uint(e->out, TD_UUID, GLOBAL_UUID);
			cm_pb_close(e->out, td);
			cm_pb_close(e->out, pkt);
			e->global_written = 1;
		}
		return GLOBAL_UUID;
	}
	get_id(rec + sizeof(struct head), &pidv, &pid);
	if (cm_pf_id(e, pid, -1, &pk, &ps, &pname) < 0) {
		REFUSE(e, cm_pf_rd64(rec + offsetof(struct head, off)),
		       "an \"%c\" event whose pid is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)",
		       rec[offsetof(struct head, ph)]);
		return 0;
	}
	return cm_pf_track(e, pk, ps, NO_TID, NO_TID, pname)->uuid;
}

/* An element that makes no packet of its own but its values' ("M", "C":
 * K_RAW) at REC: its tracks made, its values added to e->wt.cvals, its
 * place written.  The count of its values, or -1 (reported). */
static int64_t place_raw(cm_pfev *e, char *rec)
{
	size_t c0 = e->wt.cvals.len / sizeof(struct cval);
	const char *i;
	uint32_t in;
	int64_t n;
	get_len_bytes(rec + sizeof(struct head), &i, &in);
	if (cm_pfev_element(e, i, in, cm_pf_rd64(rec + offsetof(struct head, off))) < 0)
		return -1;
	n = (int64_t)(e->wt.cvals.len / sizeof(struct cval) - c0);
	put_uuid(rec, c0);
	put_count(rec, n);
	return n;
}

/* Step 1 over the records REC[0..REC_LEN) (writing their places: struct
 * head); 0 or -1 (reported).  Per record it
 * does no more than what needs the records before it, the rest being
 * the batch's or the worker's (the head's LEN and IDS):
 * - the writer's state (a clock packet due, the packets that wrote one)
 *   is worked out once a run of events (between the "M" and "C"
 *   elements, which make packets only for their values): over a run,
 *   the first packet writes a clock packet due before it or one that a
 *   record's CLEARED makes due, so the run's CLEARED ORed is all it
 *   needs (CL); a held-back end (PENDING) is the last slice's when no
 *   other event but flows came after it;
 * - the thread is the record before's when the worker said so
 *   (CM_PF_IDS_SAME: most of the window's records), else the cache's,
 *   else looked up in full (record_thread);
 * - a slice is its record alone (its thread's track written in it; the
 *   few placed on another lane are listed by step 2), and the last X
 *   before a record is the last slice's record (LASTX);
 * - a run (RUNS[0..NRUNS), struct cm_pfrun) is taken whole: its thread
 *   looked up as its first record's would be, its slices counted at once,
 *   its track written into it and into its last slice's head, no other
 *   record read; but record by record, as above, where its thread has a
 *   "B" open (its flows then take the B's track). */
static int place_all(cm_pfev *e, cm_buf *rec, size_t rec_len, struct cm_pfrun *runs, size_t nruns)
{
	char *const base = rec->p, *const end = rec->p + rec_len, *p, *since = rec->p, *lastx = NULL;
	int due = e->cleared, emitted = 0, pending = e->end_pending;
	unsigned cl = 0;
	struct busiest bz;
	uint32_t len;
	struct track *lt = NULL; /* the record before's thread, when its pid and tid were integers */
	struct track *rt = NULL; /* the thread of a run placed record by record, for its first */
	struct cm_pfrun *rn = runs, *const rn_end = runs + nruns;
	char *next_run = rn < rn_end ? base + rn->at : NULL;
	busiest_begin(e, &bz);
	e->wt.cvals.len = 0;
	for (p = base; p < end; p += len) {
		unsigned kind, ids;
		struct track *t;
		uint64_t uuid;
		if (p == next_run) { /* a run (struct cm_pfrun): its thread looked up once, no record read */
			struct cm_pfrun *r = rn++;
			next_run = rn < rn_end ? base + rn->at : NULL;
			if ((r->first_ids & CM_PF_IDS_SAME) && lt) {
				t = lt;
			} else if (!(t = cm_pf_thread_cached(e, r->pid, r->tid))) {
				if (!(t = record_thread(e, p)))
					return -1;
				busiest_grow(e, &bz);
			}
			lt = t;
			if (!t->nbe_open) {
				uuid = r->uuid = t->uuid;
				cl |= r->cl;
				if (r->nslices) { /* the last X: its track in its head (lastx_of) */
					busiest_add(e, &bz, uuid, r->nslices);
					lastx = base + r->last_slice;
					put_uuid(lastx, uuid);
					pending = 1;
				}
				len = r->bytes;
				continue;
			}
			/* its flows take the open "B"'s track: record by record, the
			 * first's thread T */
			r->uuid = CM_PF_RUN_PER_RECORD;
			rt = t;
		}
		kind = (unsigned char)p[0], ids = (unsigned char)p[3];
		len = cm_pf_rd32(p + offsetof(struct head, len));
		if (kind >= K_RAW) { /* the batch's base, or an "M" or "C": the tracks; "C" its values too */
			int64_t n;
			if (kind == K_BASE) {
				e->next_base = cm_pf_rd64(p + offsetof(struct head, ts));
				since = p + len;
				continue;
			}
			if (p != since) /* the events before it */
				emitted |= due | (int)cl, due = 0, cl = 0;
			if (pending) /* the held-back end is written here */
				emitted |= due, due = 0, pending = 0;
			due |= p[offsetof(struct head, cleared)];
			lt = NULL; /* (the tracks it made may have moved the others) */
			if ((n = place_raw(e, p)) < 0)
				return -1;
			if (n) /* its packets */
				emitted |= due, due = 0;
			busiest_grow(e, &bz);
			since = p + len;
			continue;
		}
		cl |= (unsigned char)p[offsetof(struct head, cleared)];
		if (rt) {
			t = rt, rt = NULL;
		} else if ((ids & CM_PF_IDS_SAME) && lt) {
			t = lt;
		} else {
			/* two integers (pfbatch.c's put_id_at's 13 bytes each): the
			 * cache, with nothing to parse */
			t = ids & CM_PF_IDS_INTS ? cm_pf_thread_cached(e, cm_pf_rd64(p + sizeof(struct head) + 5),
								       cm_pf_rd64(p + sizeof(struct head) + 18))
						 : NULL;
			if (!t) {
				if (!(t = record_thread(e, p)))
					return -1;
				busiest_grow(e, &bz);
			}
			lt = ids & CM_PF_IDS_INTS ? t : NULL;
		}
		uuid = t->uuid;
		if (kind == K_SLICE) {
			busiest_count(e, &bz, uuid);
			put_uuid(p, uuid);
			lastx = p;
			pending = 1;
			continue;
		}
		if (kind == K_FLOW || kind == K_THREAD) {
			/* a "B", an "E" or a flow in a "B" takes their track (pftrack.c) */
			int ph = p[offsetof(struct head, ph)];
			if (kind == K_THREAD)
				pending = 0;
			if (kind == K_FLOW ? t->nbe_open != 0 : ph == 'B' || ph == 'E') {
				struct lastx x;
				if (lastx)
					x = lastx_of(lastx);
				uuid = cm_pf_event_uuid(e, t, ph, cm_pf_rd64(p + offsetof(struct head, ts)), lastx ? &x : NULL);
			}
		} else { /* K_GLOBAL, K_PROCESS: their instants' tracks */
			pending = 0;
			if (!(uuid = instant_track(e, p, (int)kind)))
				return -1;
			if (kind == K_PROCESS)
				lt = NULL; /* (the table may have moved the tracks) */
		}
		put_uuid(p, uuid);
	}
	if (p != since) /* the events after the last "M" or "C" */
		emitted |= due | (int)cl, due = 0;
	e->seg_due = due;
	e->seg_emitted = emitted;
	e->seg_pending = pending;
	e->seg_lastx = lastx ? lastx - base : -1;
	return 0;
}

/* Order two struct laned by their record's place in the batch, for
 * qsort. */
static int by_slice(const void *a, const void *b)
{
	const struct laned *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

int cm_pfseg_apply(cm_pfev *e, cm_buf *rec)
{
	struct cm_pfwrite *wt = &e->wt;
	size_t k, nl, s;
	const struct cm_pfbatch_tail *tail = (const struct cm_pfbatch_tail *)(rec->p + rec->len - sizeof *tail);
	const struct cm_pflaneq_job *lj;
	struct cm_pfrun *runs;
	struct laned *ln;
	double t;
	int rc;
	t = cm_thread_cpu_s();
	wt->recs = rec->p;
	wt->recs_end = rec->p + tail->rec_len;
	/* the writing's state before the batch */
	wt->due = e->cleared;
	wt->pending = e->end_pending;
	lj = (const struct cm_pflaneq_job *)((const char *)tail - tail->njobs * sizeof *lj);
	runs = (struct cm_pfrun *)(void *)((char *)lj - tail->nruns * sizeof *runs); /* (step 1 writes their tracks) */
	wt->runs = runs;
	wt->nruns = tail->nruns;
	if (place_all(e, rec, tail->rec_len, runs, wt->nruns) < 0)
		return -1;
	/* the clock the batch's first packet makes (cm_pf_clock_packet's),
	 * and the writing's state before the batch */
	wt->nbase = e->next_base;
	wt->nclock = !e->have_base || e->base != wt->nbase ? (e->clock ? e->clock + 1 : CLOCK_EVENTS_FIRST) : e->clock;
	/* (e->next_def_uuid: step 1 counted it) */
	wt->ndef = e->next_def_uuid;
	wt->base = e->base, wt->clock = e->clock, wt->def_uuid = e->def_uuid;
	wt->last_thread = e->last_thread, wt->last_uuid = e->last_uuid;
	wt->last_b = e->last_b, wt->last_e = e->last_e;
	e->in_order += cm_thread_cpu_s() - t;
	/* step 2: the lanes (pflaneq.c: placed by the workers, most of them
	 * by now), then the new ones described, in order */
	t = cm_now_s();
	cm_pflaneq_wait(e->lq, tail->seq);
	e->lane_wait += cm_now_s() - t;
	t = cm_thread_cpu_s();
	/* the slices off their thread's own track (few: lane 0 is the
	 * thread's, which step 1 wrote in each slice's record), listed in
	 * the batch's order, as the lanes' tracks are numbered and described
	 * in it; looked for in the shards whose placing said it gave one
	 * (the tail's MOVED) */
	wt->lanes.len = 0;
	for (s = 0; s < CM_PF_SHARDS; s++)
		for (k = tail->moved[s] ? tail->start[s] : tail->start[s + 1]; k < tail->start[s + 1]; k++)
			if (lj[k].lane) {
				struct laned l = {lj[k].at, lj[k].lane}; /* (the lane, until its track is known) */
				cm_buf_put(&wt->lanes, &l, sizeof l);
			}
	ln = (struct laned *)(void *)wt->lanes.p;
	nl = wt->lanes.len / sizeof *ln;
	if (nl > 1)
		qsort(ln, nl, sizeof *ln, by_slice);
	for (k = 0; k < nl; k++) {
		cm_jval pidv, tidv;
		const cm_jval *pid, *tid;
		struct track *tr;
		/* its thread's track, as step 1 found it (made by then) */
		get_id(get_id(rec->p + ln[k].at + sizeof(struct head), &pidv, &pid), &tidv, &tid);
		tr = cm_pf_thread(e, pid, tid, 0, NULL);
		ln[k].uuid = cm_pf_lane(e, tr, (unsigned)ln[k].uuid);
	}
	/* the state after the batch, for the next */
	e->cleared = e->seg_due;
	if (e->seg_emitted) {
		e->base = wt->nbase;
		e->clock = wt->nclock;
		e->have_base = 1;
		e->def_uuid = wt->ndef;
	}
	e->end_pending = e->seg_pending;
	if (e->seg_lastx >= 0) { /* (on its lane: the list's last when that is its) */
		struct lastx x = lastx_of(rec->p + e->seg_lastx);
		e->last_thread = x.thread, e->last_b = x.b, e->last_e = x.e;
		e->last_uuid = nl && ln[nl - 1].at == (uint64_t)e->seg_lastx ? ln[nl - 1].uuid : x.thread;
	}
	/* step 3: the packets, by the passer (the records' buffer swapped
	 * into the batch's, WT's pointers into it kept), or here */
	rc = 1;
	if (e->emit && !(e->share == 2 && e->nemits++ % 2)) {
		cm_buf tmp = wt->rec;
		wt->rec = *rec;
		*rec = tmp;
		rec->len = 0;
		rc = e->emit(e->emit_ctx, wt);
		if (rc == 1) { /* no passer: back as it was */
			tmp = wt->rec;
			wt->rec = *rec;
			*rec = tmp;
		}
	}
	e->in_order += cm_thread_cpu_s() - t;
	if (rc == 1) {
		t = cm_thread_cpu_s();
		cm_pfseg_write(wt, e->out);
		e->wrote_here++;
		e->wrote_here_s += cm_thread_cpu_s() - t;
	}
	return rc < 0 ? -1 : 0; /* (the passer's failure: reported when it stops) */
}
