/* pfbatch.c - the Perfetto transcoder on several threads: batches of
 * traceEvents elements encoded by workers, then placed in order.
 *
 * Most of the transcoder's time goes to what one element needs alone:
 * parsing its text, its times, its args as debug annotations, interning
 * its name, category and keys.  That is the workers' part
 * (cm_pfbatch_encode, on the ordered pool's threads, pfstream.c): each
 * element becomes a record holding its track event body, all but the
 * track uuid, and the interned data that body needs.  What depends on the
 * elements before it stays in order, in the pool's sink
 * (cm_pfbatch_apply): the tracks (their uuids are counted, and their
 * descriptors written when first seen), the lanes of ties (pflanes.c),
 * which X event a flow binds to, the held-back end of an X, the events'
 * clock, and the "M" and "C" elements whole (they make and name tracks).
 * pfseg.c cuts that part into steps, so that only the tracks are worked
 * out on one thread and the lanes and the packets on the crew; a batch
 * with a "C" element goes this file's way (apply), all on the sink's
 * thread but for the lanes of the threads made before it.
 *
 * Interning starts over with each batch: the first packet of a batch
 * clears the sequence's incremental state and the batch defines its
 * strings again.  So a batch's records depend on its elements only, and
 * the bytes written are the same for any number of threads; the cost is
 * the strings defined again once per batch (BENCHMARKS.md has the
 * figures).  The batches are cut at element boundaries by the amount of
 * text (pfstream.c), never by how the text arrived. */
#include "config.h"
#include "pftrace/pfevent.h"

#include <sched.h>
#include <string.h>



void cm_pfbatch_add(cm_buf *b, const char *s, size_t n, int64_t offset)
{
	uint32_t len = (uint32_t)n;
	cm_buf_put(b, &offset, sizeof offset);
	cm_buf_put(b, &len, sizeof len);
	cm_buf_put(b, s, n);
}

static void put_len_bytes(cm_buf *b, const void *p, size_t n)
{
	uint32_t len = (uint32_t)n;
	cm_buf_put(b, &len, sizeof len);
	cm_buf_put(b, p, n);
}

/* A pid or tid V as the sink needs it for cm_pf_id: its type, and the
 * text of a number or a string; an integer within int64 parsed here
 * (CM_PF_J_INT), off the sequential part. */
static void put_id(cm_buf *b, const cm_jval *v)
{
	unsigned char type = v ? v->type : ID_MISSING;
	cm_int x;
	int64_t x64;
	if (v && v->type == CM_J_NUM &&
	    (small_int(v->s, v->len, &x64) ||
	     (is_integer_text(v->s, v->len) && !cm_py_int_of_number(v->s, v->len, &x) && x >= INT64_MIN &&
	      x <= INT64_MAX && ((x64 = (int64_t)x), 1)))) {
		cm_buf_putc(b, (char)CM_PF_J_INT);
		put_len_bytes(b, &x64, sizeof x64);
		return;
	}
	cm_buf_putc(b, (char)type);
	if (v && (v->type == CM_J_NUM || v->type == CM_J_STR))
		put_len_bytes(b, v->s, v->len);
	else
		put_len_bytes(b, "", 0);
}


/* One element S[0..N) at OFF into a record in OUT. */
static int encode_one(cm_pfev *w, const char *s, size_t n, int64_t off, cm_buf *out)
{
	struct head h;
	struct ev ev;
	cm_jval *v;
	cm_int id;
	const char phs[2] = {0, 0};
	memset(&h, 0, sizeof h);
	h.off = off;
	cm_pf_maybe_clear(w);
	v = cm_pf_parse(w, s, n);
	if (!v || v->type != CM_J_OBJ)
		return REFUSE(w, off, "a traceEvents element that is not an object cannot be written as Perfetto protobuf");
	cm_pf_members(v, &ev);
	if (!ev.ph || ev.ph->type != CM_J_STR || ev.ph->len != 1)
		return REFUSE(w, off, "an event without a one-letter \"ph\" cannot be written as Perfetto protobuf");
	h.ph = (unsigned char)ev.ph->s[0];
	*(char *)phs = (char)h.ph;
	switch (h.ph) {
	case 'C': /* its time, for the batch's earliest (the sink checks it) */
		w->batch_counters = 1;
		if (ev.ts && ev.ts->type == CM_J_NUM && !cm_pf_us_to_ns(ev.ts->s, ev.ts->len, &h.ts) && h.ts >= 0 &&
		    h.ts < w->batch_min)
			w->batch_min = h.ts;
		/* fall through */
	case 'M':
		h.kind = K_RAW;
		h.cleared = (unsigned char)w->cleared;
		w->cleared = 0;
		cm_buf_put(out, &h, sizeof h);
		put_len_bytes(out, s, n);
		return 0;
	case 's':
	case 't':
	case 'f': {
		size_t le;
		if (cm_pf_time(w, ev.ts, "ts", phs, off, &h.ts) < 0)
			return -1;
		if (!ev.id || ev.id->type != CM_J_NUM || !is_integer_text(ev.id->s, ev.id->len) ||
		    cm_py_int_of_number(ev.id->s, ev.id->len, &id) || id < 0 || id > (cm_int)UINT64_MAX)
			return REFUSE(w, off, "a flow (\"%c\") event whose id is not an integer from 0 to 2^64-1 cannot be written as Perfetto protobuf",
				      h.ph);
		if (cm_pf_body(w, &ev, 0, off) < 0)
			return -1;
		le = cm_pb_open(&w->te, TE_LEGACY_EVENT);
		cm_pb_uint(&w->te, LE_PHASE, h.ph);
		cm_pb_uint(&w->te, LE_UNSCOPED_ID, (uint64_t)id);
		if (cm_jval_streq(ev.bp, "e"))
			cm_pb_uint(&w->te, LE_BIND_TO_ENCLOSING, 1);
		cm_pb_close(&w->te, le);
		h.kind = K_FLOW;
		break;
	}
	case 'X':
		if (cm_pf_time(w, ev.ts, "ts", "X", off, &h.ts) < 0 || cm_pf_time(w, ev.dur, "dur", "X", off, &h.dur) < 0)
			return -1;
		if (h.ts > INT64_MAX - h.dur)
			return REFUSE(w, off, "an \"X\" event that ends beyond 2^63 ns cannot be written as Perfetto protobuf");
		if (cm_pf_body(w, &ev, TYPE_BEGIN, off) < 0)
			return -1;
		h.kind = K_SLICE;
		break;
	case 'B':
	case 'E':
	case 'i':
	case 'I':
		if (cm_pf_time(w, ev.ts, "ts", phs, off, &h.ts) < 0)
			return -1;
		h.kind = K_THREAD;
		if (h.ph == 'E' && !ev.name && !ev.cat && !ev.args) {
			/* the end of the innermost open slice, by no name */
			w->te.len = 0;
			cm_pb_uint(&w->te, TE_TYPE, TYPE_END);
			break;
		}
		if ((h.ph == 'i' || h.ph == 'I') && ev.s && (cm_jval_streq(ev.s, "g") || cm_jval_streq(ev.s, "p"))) {
			h.kind = cm_jval_streq(ev.s, "g") ? K_GLOBAL : K_PROCESS;
			if (cm_pf_body(w, &ev, TYPE_INSTANT, off) < 0)
				return -1;
			break;
		}
		if (cm_pf_body(w, &ev, h.ph == 'B' ? TYPE_BEGIN : h.ph == 'E' ? TYPE_END : TYPE_INSTANT, off) < 0)
			return -1;
		break;
	default:
		return REFUSE(w, off, "a \"%c\" event cannot be written as Perfetto protobuf (it takes X, B, E, i, I, C, M, s, t and f)",
			      h.ph);
	}
	h.cleared = (unsigned char)w->cleared;
	w->cleared = 0;
	if (h.ts < w->batch_min)
		w->batch_min = h.ts;
	cm_buf_put(out, &h, sizeof h);
	put_id(out, ev.pid);
	put_id(out, ev.tid);
	put_len_bytes(out, w->interned.p, w->interned.len);
	w->interned.len = 0;
	put_len_bytes(out, w->te.p, w->te.len);
	return 0;
}

int cm_pfbatch_encode(cm_pfev *w, const cm_buf *in, cm_buf *out)
{
	size_t i = 0, at = out->len;
	struct head base;
	/* the batch's interning starts over, so its records depend on it alone */
	cm_strtab_clear(&w->cats);
	cm_strtab_clear(&w->names);
	cm_strtab_clear(&w->keys);
	w->next_iid = 1;
	w->cleared = 1;
	w->interned.len = 0;
	w->batch_min = INT64_MAX;
	w->batch_counters = 0;
	memset(&base, 0, sizeof base);
	base.kind = K_BASE;
	cm_buf_put(out, &base, sizeof base); /* its time when known */
	while (i < in->len) {
		int64_t off;
		uint32_t n;
		memcpy(&off, in->p + i, sizeof off);
		memcpy(&n, in->p + i + sizeof off, sizeof n);
		i += sizeof off + sizeof n;
		if (encode_one(w, in->p + i, n, off, out) < 0)
			return -1;
		i += n;
	}
	base.ts = w->batch_min == INT64_MAX ? 0 : w->batch_min;
	base.pad[0] = (unsigned char)w->batch_counters; /* the sink's way (cm_pfbatch_apply) */
	memcpy(out->p + at, &base, sizeof base);
	return 0;
}

/* Write an event packet at TS: the interned data I[0..IN), the track
 * event body B[0..BN) on track UUID.  Its length and its track event's
 * are worked out first and written in front, so that no body moves (as
 * cm_pb_close moves one of 128 bytes or more): this is most of the
 * packets' bytes, on the one thread. */
static void event_packet(cm_pfev *e, int64_t ts, const char *i, uint32_t in, const char *b, uint32_t bn,
			 uint64_t uuid)
{
	cm_buf *o = e->out;
	unsigned char h[64], *p;
	size_t hn = 0, te = bn, body;
	cm_pf_clock_packet(e);
	/* the fields before the track event: time, sequence, interned data */
	if (ts >= e->base) {
		h[hn++] = TP_TIMESTAMP << 3 | CM_PB_VARINT;
		hn += cm_pb_varint_at(h + hn, (uint64_t)(ts - e->base));
	} else {
		h[hn++] = TP_TIMESTAMP << 3 | CM_PB_VARINT;
		hn += cm_pb_varint_at(h + hn, (uint64_t)ts);
		hn += cm_pb_varint_at(h + hn, TP_CLOCK_ID << 3 | CM_PB_VARINT);
		hn += cm_pb_varint_at(h + hn, CLOCK_BOOTTIME);
	}
	h[hn++] = TP_SEQ_ID << 3 | CM_PB_VARINT;
	h[hn++] = SEQ_ID;
	/* no SEQ_NEEDS_INCREMENTAL_STATE: the trace processor resolves the
	 * iids without it, and it costs 2 bytes a packet */
	if (uuid != e->def_uuid)
		te += 1 + cm_pb_varint_size(uuid);
	body = hn + (in ? 1 + cm_pb_varint_size(in) + in : 0) + 1 + cm_pb_varint_size(te) + te;
	if (o->cap - o->len < 1 + 10 + body)
		cm_buf_grow(o, 1 + 10 + body);
	p = (unsigned char *)o->p + o->len;
	*p++ = TRACE_PACKET << 3 | CM_PB_LEN;
	p += cm_pb_varint_at(p, body);
	memcpy(p, h, hn);
	p += hn;
	if (in) {
		*p++ = TP_INTERNED << 3 | CM_PB_LEN;
		p += cm_pb_varint_at(p, in);
		memcpy(p, i, in);
		p += in;
	}
	*p++ = TP_TRACK_EVENT << 3 | CM_PB_LEN;
	p += cm_pb_varint_at(p, te);
	memcpy(p, b, bn);
	p += bn;
	if (uuid != e->def_uuid) {
		*p++ = TE_TRACK_UUID << 3 | CM_PB_VARINT;
		p += cm_pb_varint_at(p, uuid);
	}
	o->len = (size_t)(p - (unsigned char *)o->p);
}

/* ---- the lanes, on several threads (a batch with a "C" element) ----
 * Lane placement (pflanes.c) was the larger part of the sequential work.
 * A thread's lanes depend only on its own slices, so the threads are
 * shared out among CM_PF_SHARDS shards by their track's uuid and the
 * shards run in parallel on the -j threads.  For each batch: a first
 * pass, in order, finds the thread track of each slice without making
 * anything; the shards then place the slices of the threads found, each
 * shard its slices in order; the packets are written after, in order, and
 * the slices of a thread new in the batch are placed there, in order (all
 * of that thread's, as it is not made until then).  The lanes are the same
 * for any -j: the shards and what each does in what order depend on the
 * records alone. */


unsigned shard_of(uint64_t uuid)
{
	return (unsigned)((uuid * 0x9E3779B97F4A7C15u) >> 32) % CM_PF_SHARDS;
}

/* A member's part (cm_pfcrew_fn): its shards' slices placed, in order,
 * each job's flag set once its lane is. */
void cm_pf_place_shards(cm_pfev *e, int k)
{
	struct job *j = (struct job *)e->jobs.p;
	size_t i, nj = e->jobs.len / sizeof *j;
	unsigned shards = e->crew_shards[k];
	if (!shards)
		return;
	for (i = 0; i < nj; i++)
		if (j[i].thread && (shards >> j[i].shard & 1)) {
			j[i].lane = cm_pflanes_place(e->shard[j[i].shard], j[i].thread, j[i].b, j[i].e);
			__atomic_store_n(&j[i].done, 1, __ATOMIC_RELEASE);
		}
}

/* The crew's members at most: a batch's packets are written in runs of a
 * few hundred microseconds in all, and its lanes wait for the busiest
 * shard (a third of the slices, pfbatch.c's notes): more members would
 * add their wake-ups to every round and take cores from the workers. */
#define PF_CREW_MAX 8

/* The crew's work (cm_pfcrew_fn): member K's part of the round. */
static void crew_run(void *arg, int k)
{
	cm_pfev *e = arg;
	if (e->crew_task)
		cm_pfseg_write(e, k);
	else
		cm_pf_place_shards(e, k);
}

int cm_pf_crew(cm_pfev *e)
{
	int most = e->threads < PF_CREW_MAX ? e->threads : PF_CREW_MAX;
	if (most < 2 || (!e->crew && !(e->crew = cm_pfcrew_new(most, crew_run, e))))
		return 1;
	return cm_pfcrew_size(e->crew);
}

/* Place the jobs of threads found: on the sink's thread (few slices, or
 * -j 1), or by the crew's threads while the sink goes on to write the
 * batch's packets, waiting at each slice for its lane (job_lane) and for
 * the whole crew at the end of the batch (lanes_wait): the shards with
 * slices shared out, the busiest first, each to the member with the
 * fewest slices so far.  Which member places a shard changes nothing but
 * the time: a shard's slices are placed in order. */
static void place_jobs(cm_pfev *e)
{
	const struct job *j = (const struct job *)e->jobs.p;
	size_t i, nj = e->jobs.len / sizeof *j, count[CM_PF_SHARDS] = {0}, load[CM_PF_SHARDS] = {0};
	int n, k, s, busy = 0, most = e->threads < CM_PF_SHARDS ? e->threads : CM_PF_SHARDS;
	for (i = 0; i < nj; i++)
		if (j[i].thread && !count[j[i].shard]++)
			busy++;
	if (nj < e->shard_min || most < 2 || !busy || cm_pf_crew(e) < 2) {
		e->crew_shards[0] = (1u << CM_PF_SHARDS) - 1; /* all, on this thread */
		cm_pf_place_shards(e, 0);
		return;
	}
	n = cm_pfcrew_size(e->crew) - 1; /* members 1..n: the sink writes the packets */
	if (busy < n)
		n = busy;
	memset(e->crew_shards, 0, sizeof e->crew_shards);
	for (;;) { /* the busiest shard left to the least loaded member */
		int best = -1, m = 1;
		for (s = 0; s < CM_PF_SHARDS; s++)
			if (count[s] && (best < 0 || count[s] > count[best]))
				best = s;
		if (best < 0)
			break;
		for (k = 2; k <= n; k++)
			if (load[k] < load[m])
				m = k;
		e->crew_shards[m] |= 1u << best;
		load[m] += count[best];
		count[best] = 0;
	}
	e->crew_task = 0;
	cm_pfcrew_go(e->crew);
	e->placing = 1;
}

/* Wait for the crew to have placed the batch's lanes, if it places them. */
static void lanes_wait(cm_pfev *e)
{
	double t;
	if (!e->placing)
		return;
	t = cm_now_s();
	cm_pfcrew_wait(e->crew);
	e->lane_wait += cm_now_s() - t;
	e->placing = 0;
}

/* The lane of job J (a thread made before the batch), once placed; the
 * time waited for it added to E's figures. */
static unsigned job_lane(cm_pfev *e, const struct job *j)
{
	unsigned spins = 0;
	double t;
	if (__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
		return j->lane;
	t = cm_now_s();
	while (!__atomic_load_n(&j->done, __ATOMIC_ACQUIRE))
		if (++spins > 64) /* the crew is behind: let it run */
			sched_yield();
	e->lane_wait += cm_now_s() - t;
	return j->lane;
}

/* The track that the events of the next batch (its jobs) name most
 * often, of the threads made before it, becomes the default track from the
 * sequence's next clearing (the batch's first packet): its events then
 * write no track uuid.  (A sequence a thread, each with its thread as the
 * default, would save more but define the strings again on each.) */
void cm_pf_busiest(cm_pfev *e)
{
	const struct job *j = (const struct job *)e->jobs.p;
	size_t i, nj = e->jobs.len / sizeof *j, n = (size_t)e->next_uuid;
	uint32_t *c, best = 0;
	e->counts.len = 0;
	cm_buf_grow(&e->counts, n * sizeof *c + 1);
	c = (uint32_t *)e->counts.p;
	memset(c, 0, n * sizeof *c);
	e->next_def_uuid = 0;
	for (i = 0; i < nj; i++)
		if (j[i].thread && j[i].thread < n && ++c[j[i].thread] > best)
			best = c[j[i].thread], e->next_def_uuid = j[i].thread;
}

/* The first pass over the records REC: the batch's slices as jobs, the
 * threads found placed. */
static void find_lanes(cm_pfev *e, const cm_buf *rec)
{
	const char *p = rec->p, *end = rec->p + rec->len;
	e->jobs.len = 0;
	while (p < end) {
		struct head h;
		cm_jval pidv, tidv;
		const cm_jval *pid, *tid;
		const char *i, *b;
		uint32_t in, bn;
		memcpy(&h, p, sizeof h);
		p += sizeof h;
		if (h.kind == K_BASE)
			continue;
		if (h.kind == K_RAW) {
			p = get_len_bytes(p, &i, &in);
			continue;
		}
		p = get_id(p, &pidv, &pid);
		p = get_id(p, &tidv, &tid);
		p = get_len_bytes(p, &i, &in);
		p = get_len_bytes(p, &b, &bn);
		if (h.kind == K_SLICE) {
			const struct track *t = cm_pf_thread_find(e, pid, tid);
			struct job j;
			memset(&j, 0, sizeof j);
			j.thread = t ? t->uuid : 0;
			j.b = h.ts;
			j.e = h.ts + h.dur;
			j.shard = shard_of(j.thread);
			cm_buf_put(&e->jobs, &j, sizeof j);
		}
	}
	place_jobs(e);
	cm_pf_busiest(e);
}

/* Place the record H (PID, TID, its interned data and body): its track;
 * J: its job, if a slice. */
static int place(cm_pfev *e, const struct head *h, const cm_jval *pid, const cm_jval *tid, const char *i,
		 uint32_t in, const char *b, uint32_t bn, const struct job *j)
{
	struct track *t;
	uint64_t uuid;
	int64_t pk, ps;
	const cm_jval *pname;
	if (h->kind == K_SLICE)
		e->last_thread = 0; /* the flows after this one bind to it, or to no X */
	if (!(t = cm_pf_thread(e, pid, tid, h->off, NULL)))
		return -1;
	uuid = t->uuid;
	switch (h->kind) {
	case K_SLICE:
		if (!j->thread) /* a thread new in the batch: its shard, once the crew is done */
			lanes_wait(e);
		uuid = cm_pf_lane(e, t, j->thread ? job_lane(e, j)
					      : cm_pflanes_place(e->shard[shard_of(t->uuid)], t->uuid, h->ts,
								 h->ts + h->dur));
		event_packet(e, h->ts, i, in, b, bn, uuid);
		e->end_pending = 1;
		e->last_thread = t->uuid;
		e->last_uuid = uuid;
		e->last_b = h->ts;
		e->last_e = h->ts + h->dur;
		return 0;
	case K_FLOW: /* on the lane of the X event it follows, if it binds to it */
		if (t->uuid == e->last_thread && h->ts >= e->last_b && h->ts <= e->last_e)
			uuid = e->last_uuid;
		break;
	case K_GLOBAL: /* the JSON import makes the event's thread all the same */
		uuid = GLOBAL_UUID;
		if (!e->global_written) {
			size_t p = cm_pb_open(e->out, TRACE_PACKET), td;
			cm_pb_uint(e->out, TP_SEQ_ID, DESC_SEQ_ID);
			td = cm_pb_open(e->out, TP_TRACK_DESCRIPTOR);
			cm_pb_uint(e->out, TD_UUID, uuid);
			cm_pb_close(e->out, td);
			cm_pb_close(e->out, p);
			e->global_written = 1;
		}
		break;
	case K_PROCESS:
		if (cm_pf_id(e, pid, -1, &pk, &ps, &pname) < 0)
			return REFUSE(e, h->off, "an \"%c\" event whose pid is not a string or an integer cannot be written as Perfetto protobuf",
				      h->ph);
		uuid = cm_pf_track(e, pk, ps, NO_TID, NO_TID, pname)->uuid;
		break;
	}
	event_packet(e, h->ts, i, in, b, bn, uuid);
	return 0;
}

static int apply(cm_pfev *e, const cm_buf *rec);

int cm_pfbatch_apply(cm_pfev *e, const cm_buf *rec)
{
	struct head base;
	int rc;
	memcpy(&base, rec->p, sizeof base); /* K_BASE, first */
	if (!base.pad[0])
		return cm_pfseg_apply(e, rec);
	rc = apply(e, rec);
	lanes_wait(e); /* the crew is done with the jobs before they change */
	return rc;
}

/* cm_pfbatch_apply's work, the crew perhaps still placing lanes after it. */
static int apply(cm_pfev *e, const cm_buf *rec)
{
	const char *p = rec->p, *end = rec->p + rec->len;
	const struct job *j;
	find_lanes(e, rec);
	j = (const struct job *)e->jobs.p;
	while (p < end) {
		struct head h;
		cm_jval pidv, tidv;
		const cm_jval *pid, *tid;
		const char *i, *b;
		uint32_t in, bn;
		memcpy(&h, p, sizeof h);
		p += sizeof h;
		if (h.kind == K_BASE) {
			e->next_base = h.ts;
			continue;
		}
		if (h.kind != K_FLOW) /* a flow may bind to the X before it */
			cm_pf_flush_end(e);
		if (h.cleared)
			e->cleared = 1; /* the next event packet says so */
		if (h.kind == K_RAW) {
			p = get_len_bytes(p, &i, &in);
			if (cm_pfev_element(e, i, in, h.off) < 0)
				return -1;
			continue;
		}
		p = get_id(p, &pidv, &pid);
		p = get_id(p, &tidv, &tid);
		p = get_len_bytes(p, &i, &in);
		p = get_len_bytes(p, &b, &bn);
		if (place(e, &h, pid, tid, i, in, b, bn, j) < 0)
			return -1;
		if (h.kind == K_SLICE)
			j++;
	}
	return 0;
}
