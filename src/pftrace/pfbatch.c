/* pfbatch.c - the Perfetto transcoder on several threads: batches of
 * traceEvents elements encoded by workers, then placed in order.
 *
 * Most of the transcoder's time goes to what one element needs alone:
 * parsing its text, its times, its args as debug annotations, interning
 * its name, category and keys.  That is the workers' part
 * (cm_pfbatch_encode, on the ordered pool's threads, pfpool.c): each
 * element becomes a record holding its track event body, all but the
 * track uuid, and the interned data that body needs.  What depends on the
 * elements before it stays in order, in the pool's sink
 * (cm_pfbatch_apply): the tracks (their uuids are counted, and their
 * descriptors written when first seen), which X event a flow binds to,
 * the held-back end of an X, the events' clock, and the "M" and "C"
 * elements' tracks (made from their text).  The lanes of ties
 * (pflanes.c) depend on each thread's slices in order only: the worker
 * hands its batch's slices to the lanes' queue (pflaneq.c), where they
 * are placed shard by shard by the workers.  pfseg.c cuts the rest into
 * steps, so that only the tracks are worked out on the sink's thread and
 * the packets written on the passer's; what the sink needs of a record
 * that depends on the record alone the worker writes in its head (its
 * length, whether its pid and tid are the record before's: struct head),
 * and what the packets' writer needs at its end (the lengths, the
 * packet's time bytes: struct cm_pflens, pfwrite.c).
 *
 * Interning starts over with each batch: the first packet of a batch
 * clears the sequence's incremental state and the batch defines its
 * strings again.  So a batch's records depend on its elements only, and
 * the bytes written are the same for any number of threads; the cost is
 * the strings defined again once per batch (BENCHMARKS.md has the
 * figures).  A batch is the elements that end in one span of the text
 * (pfstream.c), never cut by how the text arrived; or one a writer hands
 * over element by element (cm_pfbatch_open, _elem, _close: pfbatch.h),
 * some elements with their value, which is then not parsed. */
#include "config.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfrecord.h"
#include "pftrace/pftrack.h"
#include "pftrace/pflaneq.h"
#include "pftrace/pfbatch.h"
#include "pftrace/pfstream.h"

#include <stddef.h>
#include <string.h>

void cm_pfbatch_add(cm_buf *b, uint64_t seq, const char *s, size_t n, int64_t offset)
{
	uint32_t len = (uint32_t)n;
	if (!b->len) /* a new batch: its number first */
		cm_buf_put(b, &seq, sizeof seq);
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
 * (CM_PF_J_INT: its 8 bytes in X), off the sequential part.  (id_of
 * always inline: GCC left its two or four calls an event out of line.) */
struct idbytes {
	unsigned char type;
	unsigned char small; /* X kept as parsed or read by small_int (cm_pflaneq_key_ints') */
	uint32_t n;
	const void *p;
	int64_t x;
};
static inline __attribute__((always_inline)) void id_of(const cm_jval *v, struct idbytes *o)
{
	cm_int x;
	o->small = v && v->type == CM_J_NUM &&
		   ((v->has_iv == CM_PF_IV_INT && ((o->x = v->iv), 1)) || small_int(v->s, v->len, &o->x));
	if (o->small || (v && v->type == CM_J_NUM && is_integer_text(v->s, v->len) &&
			 !cm_py_int_of_number(v->s, v->len, &x) && x >= INT64_MIN && x <= INT64_MAX &&
			 ((o->x = (int64_t)x), 1))) {
		o->type = CM_PF_J_INT;
		o->n = sizeof o->x;
		o->p = &o->x;
		return;
	}
	o->type = v ? v->type : ID_MISSING;
	o->n = v && (v->type == CM_J_NUM || v->type == CM_J_STR) ? v->len : 0;
	o->p = o->n ? v->s : NULL;
}

/* The head H at D (room made), its bytes as memcpy's (the pad zero):
 * past it.  Field by field, as H was stored: a memcpy of the whole read
 * its first 16 bytes by one load over the byte-wide stores of kind,
 * cleared and ph, which the store buffer cannot forward, and perf put a
 * fifth of encode_one's samples at that stall (BENCHMARKS.md "pfcpu16"). */
static inline char *put_head_at(char *d, const struct head *h)
{
	_Static_assert(offsetof(struct head, len) == 4 && offsetof(struct head, off) == 8 &&
			       offsetof(struct head, dur) == 24 && sizeof(struct head) == 32,
		       "struct head as put_head_at writes it");
	d[0] = (char)h->kind;
	d[1] = (char)h->cleared;
	d[2] = (char)h->ph;
	d[3] = (char)h->ids;
	memcpy(d + 4, &h->len, sizeof h->len);
	memcpy(d + 8, &h->off, sizeof h->off);
	memcpy(d + 16, &h->ts, sizeof h->ts);
	memcpy(d + 24, &h->dur, sizeof h->dur);
	return d + sizeof *h;
}

/* N bytes at P after their 4-byte length, at D (room made); past them. */
static inline char *put_len_at(char *d, const void *p, uint32_t n)
{
	memcpy(d, &n, sizeof n);
	if (n) /* (P may be NULL then: an empty buffer) */
		memcpy(d + sizeof n, p, n);
	return d + sizeof n + n;
}

/* The id I at D as the sink reads it (get_id; place_all's cache reads an
 * integer's 13 bytes straight): its type, then put_len_at's; past it.  An
 * integer's 8 bytes by a move of a constant size, not a call. */
static inline char *put_id_at(char *d, const struct idbytes *i)
{
	*d++ = (char)i->type;
	if (i->type == CM_PF_J_INT) {
		uint32_t n = sizeof i->x;
		memcpy(d, &n, sizeof n);
		memcpy(d + sizeof n, &i->x, sizeof i->x);
		return d + sizeof n + sizeof i->x;
	}
	return put_len_at(d, i->p, i->n);
}

/* The record of head H at AT (bytes from the batch's start), a slice or
 * a flow of the integer PID and TID: added to the batch's last run when
 * it comes right after it and has its thread (CM_PF_IDS_SAME), else the
 * first of a run of its own (pfrecord.h's struct cm_pfrun). */
static void run_add(cm_pfev *w, const struct head *h, uint32_t at, int64_t pid, int64_t tid)
{
	struct cm_pfrun *r = w->runs.len ? (struct cm_pfrun *)(void *)(w->runs.p + w->runs.len) - 1 : NULL;
	if (!r || !(h->ids & CM_PF_IDS_SAME) || r->at + r->bytes != at) {
		if (w->runs.cap - w->runs.len < sizeof *r)
			cm_buf_grow(&w->runs, sizeof *r);
		r = (struct cm_pfrun *)(void *)(w->runs.p + w->runs.len);
		w->runs.len += sizeof *r;
		memset(r, 0, sizeof *r);
		r->at = at;
		r->pid = pid, r->tid = tid;
		r->first_ids = h->ids;
	}
	r->bytes += h->len;
	r->cl |= h->cleared;
	if (h->kind == K_SLICE)
		r->nslices++, r->last_slice = at;
}

/* One element S[0..N) at OFF into a record in OUT; its value V when not
 * NULL (cm_pfbatch_elem). */
static int encode_one(cm_pfev *w, const cm_jval *v, const char *s, size_t n, int64_t off, cm_buf *out)
{
	struct head h;
	struct ev ev;
	struct idbytes pid, tid;
	struct cm_pflens lens;
	int have_ids = 0; /* pid and tid read (an X's, for its slice's key) */
	size_t need;
	char *d;
	cm_int id;
	const char phs[2] = {0, 0};
	const cm_jval *bad, *tree = NULL; /* the element's tree, when parsed here */
	memset(&h, 0, sizeof h);
	h.off = off;
	cm_pf_maybe_clear(w);
	/* the merge's GPU events come with their members (each saying which
	 * it is: cm_pft_enc_elem's contract); the compact events
	 * (the GPU side's as text, compact traces) read straight into their
	 * members; the rest parsed into a tree first */
	w->lit = v && !w->no_flat; /* (keys of literals: cm_pf_body's memo) */
	if (w->lit) {
		cm_pf_members_given(v, &ev);
	} else if (w->no_flat || !cm_pf_parse_flat(w, s, n, &ev)) {
		v = cm_pf_parse(w, s, n);
		if (!v || v->type != CM_J_OBJ)
			return REFUSE(w, off, "a traceEvents element that is not an object cannot be written as Perfetto protobuf");
		cm_pf_members(v, &ev);
		tree = v;
	}
	if (!ev.ph || ev.ph->type != CM_J_STR || ev.ph->len != 1)
		return REFUSE(w, off, "an event without a one-letter \"ph\" cannot be written as Perfetto protobuf");
	h.ph = (unsigned char)ev.ph->s[0];
	*(char *)phs = (char)h.ph;
	if (tree && (bad = cm_pf_unreadable_member(tree)) != NULL) /* (the flat reading takes none) */
		return REFUSE(w, off, "a \"%c\" event whose %.*s is %s%.*s cannot be written as Perfetto protobuf (Perfetto refuses the trace)",
			      h.ph, (int)bad->klen, bad->key,
			      bad->s[0] == 'N' || bad->s[bad->len - 1] == 'y' ? "" : "a number beyond a double's range",
			      bad->s[0] == 'N' || bad->s[bad->len - 1] == 'y' ? (int)bad->len : 0, bad->s);
	switch (h.ph) {
	case 'C': /* its time, for the batch's earliest (the sink checks it) */
		if (ev.ts && ev.ts->type == CM_J_NUM && !cm_pf_us_to_ns(ev.ts->s, ev.ts->len, &h.ts) && h.ts >= 0 &&
		    h.ts < w->batch_min)
			w->batch_min = h.ts;
		/* fall through */
	case 'M':
		h.kind = K_RAW;
		h.cleared = (unsigned char)w->cleared;
		h.len = (uint32_t)(sizeof h + sizeof(uint32_t) + n);
		w->cleared = 0;
		w->prev_ints = 0; /* (no pid, no tid) */
		cm_buf_put(out, &h, sizeof h);
		put_len_bytes(out, s, n);
		return 0;
	case 's':
	case 't':
	case 'f': {
		size_t le;
		unsigned char *lp;
		if (cm_pf_time(w, ev.ts, "ts", phs, off, &h.ts) < 0)
			return -1;
		/* (an id of 18 digits at most kept its value as it was parsed:
		 * pfevent.h's CM_PF_IV_INT; reading the text again was 6.9 M
		 * instructions of the 50k pair's .pftrace merge, 70,000 flows) */
		if (ev.id && ev.id->type == CM_J_NUM && ev.id->has_iv == CM_PF_IV_INT)
			id = ev.id->iv;
		else if (!ev.id || ev.id->type != CM_J_NUM || !is_integer_text(ev.id->s, ev.id->len) ||
			 cm_py_int_of_number(ev.id->s, ev.id->len, &id))
			id = -1;
		if (id < 0 || id > (cm_int)UINT64_MAX)
			return REFUSE(w, off, "a flow (\"%c\") event whose id is not an integer from 0 to 2^64-1 cannot be written as Perfetto protobuf",
				      h.ph);
		if (cm_pf_body(w, &ev, 0, off) < 0)
			return -1;
		/* its LegacyEvent (cm_pb_open's, _uint's and _close's bytes: its
		 * body 15 bytes at most, so its length one byte) written at once:
		 * field by field, 5.2 M instructions of the 50k pair's .pftrace
		 * merge (BENCHMARKS.md "pfrender19") */
		_Static_assert(TE_LEGACY_EVENT < 16 && LE_PHASE < 16 && LE_UNSCOPED_ID < 16 && LE_BIND_TO_ENCLOSING < 16,
			       "one-byte tags");
		if (w->te.cap - w->te.len < 2 + 15)
			cm_buf_grow(&w->te, 2 + 15);
		le = 2;
		lp = (unsigned char *)w->te.p + w->te.len;
		lp[0] = TE_LEGACY_EVENT << 3 | CM_PB_LEN;
		lp[le++] = LE_PHASE << 3 | CM_PB_VARINT;
		lp[le++] = h.ph; /* (s, t or f: one byte) */
		lp[le++] = LE_UNSCOPED_ID << 3 | CM_PB_VARINT;
		le += cm_pb_varint_at(lp + le, (uint64_t)id);
		if (cm_jval_streq(ev.bp, "e")) {
			lp[le++] = LE_BIND_TO_ENCLOSING << 3 | CM_PB_VARINT;
			lp[le++] = 1;
		}
		lp[1] = (unsigned char)(le - 2);
		w->te.len += le;
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
		if (h.dur > 0) { /* for the lanes (pflaneq.c) */
			struct cm_pflaneq_job *j;
			id_of(ev.pid, &pid);
			id_of(ev.tid, &tid);
			have_ids = 1;
			/* made in place (the buffer holds whole jobs, so aligned),
			 * not on the stack and copied: the copy's 16-byte loads of
			 * the fields just stored stalled (store forwarding) */
			if (w->jobs.cap - w->jobs.len < sizeof *j)
				cm_buf_grow(&w->jobs, sizeof *j);
			j = (struct cm_pflaneq_job *)(void *)(w->jobs.p + w->jobs.len);
			j->key = pid.small && tid.small ? cm_pflaneq_key_ints(pid.x, tid.x) : cm_pflaneq_key(ev.pid, ev.tid);
			j->b = h.ts;
			j->e = h.ts + h.dur;
			j->at = (uint32_t)(out->len - w->batch_at); /* (its record goes there) */
			j->lane = 0;
			w->jobs.len += sizeof *j;
		}
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
		if (h.ph == 'i' || h.ph == 'I') {
			/* Perfetto's JSON import drops an instant of a thread
			 * (the default) without a tid, of a process without a
			 * pid (a number or a string; its json_parser_failure) */
			int g = ev.s && cm_jval_streq(ev.s, "g"), pr = ev.s && cm_jval_streq(ev.s, "p");
			if (pr ? !cm_pf_id_given(ev.pid) : !g && !cm_pf_id_given(ev.tid))
				return REFUSE(w, off, "an \"%c\" event of a %s without a %s (a number or a string) cannot be written as Perfetto protobuf (Perfetto's JSON import drops it)",
					      h.ph, pr ? "process" : "thread", pr ? "pid" : "tid");
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
	/* the record (pfrecord.h's struct head, the pid and tid, the interned
	 * data, the track event, their lengths) written in place, its room made once: by
	 * cm_buf_put a piece it took 70 instructions an id (BENCHMARKS.md
	 * "pfcpu11") */
	if (!have_ids) {
		id_of(ev.pid, &pid);
		id_of(ev.tid, &tid);
	}
	/* the thread the same as the record before's: the sequential part
	 * need not look it up (pfseg.c) */
	if (pid.type == CM_PF_J_INT && tid.type == CM_PF_J_INT) {
		h.ids = CM_PF_IDS_INTS;
		if (w->prev_ints && pid.x == w->prev_pid && tid.x == w->prev_tid)
			h.ids |= CM_PF_IDS_SAME;
		w->prev_ints = 1, w->prev_pid = pid.x, w->prev_tid = tid.x;
	} else {
		w->prev_ints = 0;
	}
	/* the packet's interned data field encoded here, whole (its tag
	 * and length: the packets' writer, pfwrite.c, copies it as it is) */
	lens.in = w->interned.len ? (uint32_t)(1 + cm_pb_varint_size(w->interned.len) + w->interned.len) : 0;
	lens.bn = (uint32_t)w->te.len;
	need = sizeof h + 2 * (1 + sizeof(uint32_t)) + pid.n + tid.n + lens.in + lens.bn + sizeof lens;
	if (out->cap - out->len < need)
		cm_buf_grow(out, need);
	h.len = (uint32_t)need; /* (a batch's records fit in 4 GiB: cm_pfbatch_tail's rec_len) */
	if ((h.kind == K_SLICE || h.kind == K_FLOW) && (h.ids & CM_PF_IDS_INTS))
		run_add(w, &h, (uint32_t)(out->len - w->batch_at), pid.x, tid.x);
	d = put_head_at(out->p + out->len, &h);
	d = put_id_at(d, &pid);
	d = put_id_at(d, &tid);
	if (lens.in) {
		*d++ = TP_INTERNED << 3 | CM_PB_LEN;
		d += cm_pb_varint_at((unsigned char *)d, w->interned.len);
		memcpy(d, w->interned.p, w->interned.len);
		d += w->interned.len;
	}
	memcpy(d, w->te.p, lens.bn); /* (an event's body is never empty) */
	lens.tv = lens.te = CM_PF_TIME_NONE; /* (put_times') */
	memcpy(d + lens.bn, &lens, sizeof lens);
	out->len = (size_t)(d + lens.bn + sizeof lens - out->p);
	w->interned.len = 0;
	return 0;
}

/* The batch's runs (w->runs) and its slices (w->jobs) appended to OUT,
 * the slices by shard, and the tail (struct cm_pfbatch_tail), for the
 * batch SEQ whose records end at REC_LEN; a pointer to the slices
 * appended. */
static struct cm_pflaneq_job *put_tail(cm_pfev *w, cm_buf *out, uint64_t seq, size_t rec_len)
{
	const struct cm_pflaneq_job *j = (const struct cm_pflaneq_job *)w->jobs.p;
	struct cm_pflaneq_job *to;
	struct cm_pfbatch_tail tail;
	uint32_t at[CM_PF_SHARDS];
	size_t i, nj = w->jobs.len / sizeof *j, s, base, rn = w->runs.len;
	memset(&tail, 0, sizeof tail);
	tail.seq = seq;
	tail.rec_len = (uint32_t)rec_len;
	tail.njobs = (uint32_t)nj;
	tail.nruns = (uint32_t)(rn / sizeof(struct cm_pfrun));
	for (i = 0; i < nj; i++)
		tail.start[cm_pflaneq_shard(j[i].key) + 1]++;
	for (s = 0; s < CM_PF_SHARDS; s++)
		tail.start[s + 1] += tail.start[s], at[s] = tail.start[s];
	base = (out->len + 7) & ~(size_t)7;
	cm_buf_grow(out, base - out->len + rn + nj * sizeof *j + sizeof tail);
	memset(out->p + out->len, 0, base - out->len);
	if (rn)
		memcpy(out->p + base, w->runs.p, rn);
	base += rn;
	to = (struct cm_pflaneq_job *)(out->p + base);
	for (i = 0; i < nj; i++)
		to[at[cm_pflaneq_shard(j[i].key)]++] = j[i];
	memcpy(out->p + base + nj * sizeof *j, &tail, sizeof tail);
	out->len = base + nj * sizeof *j + sizeof tail;
	return to;
}

/* TV's last 7 bytes (struct cm_pflens's: the varint's top bits, the
 * sequence's bytes after it, their count) by the place of the time's top
 * bit (0 to 27): the varint's bytes after its first are place / 7. */
#define TS_HI(m) ((UINT64_C(0x808080) & ((UINT64_C(1) << (8 * (m))) - 1)) << 8 | \
		  (uint64_t)(TP_SEQ_ID << 3 | CM_PB_VARINT | SEQ_ID << 8) << (8 * (2 + (m))) | (uint64_t)(4 + (m)) << 56)
#define TS_HI7(m) TS_HI(m), TS_HI(m), TS_HI(m), TS_HI(m), TS_HI(m), TS_HI(m), TS_HI(m)
static const uint64_t ts_hi[28] = {TS_HI7(0), TS_HI7(1), TS_HI7(2), TS_HI7(3)};

/* The bytes of a packet's time T from the clock's 0 (its tag, its varint)
 * and of its sequence (a tag, an id: pfwrite.c's put_time_seq's) as
 * struct cm_pflens's TV holds them: in its first bytes on a
 * little-endian machine (the writer reads TV there only), their count in
 * its last; CM_PF_TIME_NONE when the varint is over 4 bytes (T from 0 to
 * 2^28 - 1 only).  The varint's 7-bit groups spread to their bytes, the
 * rest from a table (ts_hi), with no loop: put_times makes two a slice. */
static inline uint64_t time_seq(int64_t t)
{
	uint32_t x = (uint32_t)t;
	if ((uint64_t)t >= UINT64_C(1) << 28) /* (a negative T too) */
		return CM_PF_TIME_NONE;
	return (TP_TIMESTAMP << 3 | CM_PB_VARINT) |
	       (uint64_t)((x & 0x7f) | (x << 1 & 0x7f00) | (x << 2 & 0x7f0000) | (x << 3 & 0x7f000000)) << 8 |
	       ts_hi[31 - __builtin_clz(x | 1)];
}

/* The times of the event records R[..END) from MIN, the batch's earliest
 * (struct cm_pflens's TV and TE), as the packets' writer writes them once
 * the batch's clock packet made MIN its 0: worked out here, on the
 * workers, rather than in the writer's varints (pfwrite.c).  A pass of
 * its own: MIN is known once the batch is. */
static void put_times(char *r, const char *end, int64_t min)
{
	uint32_t len;
	for (; r < end; r += len) {
		unsigned kind = (unsigned char)r[offsetof(struct head, kind)];
		char *l;
		int64_t ts;
		uint64_t v;
		len = cm_pf_rd32(r + offsetof(struct head, len));
		if (kind >= K_RAW)
			continue;
		l = r + len - sizeof(struct cm_pflens);
		ts = cm_pf_rd64(r + offsetof(struct head, ts));
		v = time_seq(ts - min);
		memcpy(l + offsetof(struct cm_pflens, tv), &v, sizeof v);
		if (kind == K_SLICE) {
			v = time_seq(ts - min + cm_pf_rd64(r + offsetof(struct head, dur)));
			memcpy(l + offsetof(struct cm_pflens, te), &v, sizeof v);
		}
	}
}

size_t cm_pfbatch_open(cm_pfev *w, cm_buf *out)
{
	size_t at = out->len;
	struct head base;
	/* the batch's interning starts over, so its records depend on it alone */
	cm_pf_tables_clear(w);
	w->interned.len = 0;
	w->batch_min = INT64_MAX;
	w->jobs.len = 0;
	w->runs.len = 0;
	w->batch_at = at;
	w->prev_ints = 0;
	memset(&base, 0, sizeof base);
	base.kind = K_BASE;
	base.len = sizeof base;
	cm_buf_put(out, &base, sizeof base); /* its time when known */
	return at;
}

int cm_pfbatch_elem(cm_pfev *w, const cm_jval *v, const char *s, size_t n, int64_t off, cm_buf *out)
{
	return encode_one(w, v, s, n, off, out);
}

void cm_pfbatch_close(cm_pfev *w, uint64_t seq, size_t at, cm_buf *out, int lanes)
{
	struct head base;
	struct cm_pflaneq_job *jobs;
	struct cm_pfbatch_tail *tail;
	memcpy(&base, out->p + at, sizeof base);
	base.ts = w->batch_min == INT64_MAX ? 0 : w->batch_min;
	memcpy(out->p + at, &base, sizeof base);
	put_times(out->p + at + sizeof base, out->p + out->len, base.ts);
	/* the slices to the lanes: placed from here on, by whoever can */
	jobs = put_tail(w, out, seq, out->len - at);
	tail = (struct cm_pfbatch_tail *)(void *)(out->p + out->len - sizeof *tail);
	if (lanes)
		cm_pflaneq_put(w->lq, seq, jobs, tail->start, tail->moved);
}

int cm_pfbatch_encode_elems(cm_pfev *w, uint64_t seq, const struct cm_pfelem *el, size_t nel, cm_buf *out)
{
	size_t i, at = cm_pfbatch_open(w, out);
	for (i = 0; i < nel; i++)
		if (encode_one(w, NULL, el[i].s, el[i].n, el[i].off, out) < 0)
			return -1;
	cm_pfbatch_close(w, seq, at, out, 1);
	return 0;
}

void cm_pfbatch_put_lanes(cm_pflaneq *q, uint64_t seq, cm_buf *rec)
{
	struct cm_pfbatch_tail *tail = (struct cm_pfbatch_tail *)(void *)(rec->p + rec->len - sizeof *tail);
	struct cm_pflaneq_job *jobs;
	tail->seq = seq;
	jobs = (struct cm_pflaneq_job *)(void *)((char *)tail - tail->njobs * sizeof *jobs);
	cm_pflaneq_put(q, seq, jobs, tail->start, tail->moved);
}

int cm_pfbatch_encode_seq(cm_pfev *w, uint64_t seq, const char *p, size_t n, cm_buf *out)
{
	size_t i = 0, nel = 0;
	struct cm_pfelem *el;
	w->elems.len = 0;
	while (i < n) {
		struct cm_pfelem e;
		uint32_t len;
		memcpy(&e.off, p + i, sizeof e.off);
		memcpy(&len, p + i + sizeof e.off, sizeof len);
		i += sizeof e.off + sizeof len;
		e.s = p + i;
		e.n = len;
		cm_buf_put(&w->elems, &e, sizeof e);
		nel++;
		i += len;
	}
	el = (struct cm_pfelem *)(void *)w->elems.p;
	return cm_pfbatch_encode_elems(w, seq, el, nel, out);
}

int cm_pfbatch_encode(cm_pfev *w, const cm_buf *in, cm_buf *out)
{
	uint64_t seq;
	memcpy(&seq, in->p, sizeof seq); /* (cm_pfbatch_add's header) */
	return cm_pfbatch_encode_seq(w, seq, in->p + sizeof seq, in->len - sizeof seq, out);
}

int cm_pfbatch_apply(cm_pfev *e, cm_buf *rec)
{
	return cm_pfseg_apply(e, rec);
}
