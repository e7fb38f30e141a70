/* pfwrite.c - the packets' writer: step 3 of the sequential part (pfseg.c's
 * essay), a batch's packets written from what steps 1 and 2 left (struct
 * cm_pfwrite: the records, each with its track written in its head, the
 * slices off their thread's track, the state before the batch).
 *
 * It runs on the passer's writer threads (pfpass.c), or on the sequential
 * part's own thread when the passer's queue is full: on 16 CPUs it is
 * part of the short serial chain that paces the copy and window phases,
 * so it does per record only what depends on the records before (the
 * clock's base, the default track, the held-back end, a flow's X) and
 * leaves the rest to the workers (pfbatch.c), who lay each event record
 * out for it (pfrecord.h's struct cm_pflens): the packet's interned data
 * field already encoded, the track event body, and at the record's end
 * the two lengths, so that no length is walked to, and the packet's time
 * and sequence bytes (and a slice's end's), from the batch's earliest
 * time, which is the clock's 0 once the batch's clock packet is written:
 * 8 bytes stored, no varint made.  Its room is made once a batch (a bound
 * of the records' bytes: CM_PF_WRITE_ROOM) and the packets written
 * through a local pointer; a packet of a short body (most of a trace's)
 * has its two lengths one byte each, written after its bytes with no
 * varint's size worked out; the held-back end of an X is a template with
 * only its time and track to write.  On the 200M pair that is about 115
 * instructions a record, 250 before (BENCHMARKS.md "writer30").  The
 * bytes are the ones the field-by-field writing made. */
#include "config.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfrecord.h"
#include "pftrace/pflaneq.h"

#include <stddef.h>
#include <string.h>

_Static_assert((TRACE_PACKET << 3 | CM_PB_LEN) < 128 && (TP_TIMESTAMP << 3 | CM_PB_VARINT) < 128 &&
		       (TP_SEQ_ID << 3 | CM_PB_VARINT) < 128 && (TP_TRACK_EVENT << 3 | CM_PB_LEN) < 128 &&
		       (TE_TRACK_UUID << 3 | CM_PB_VARINT) < 128 && (TE_TYPE << 3 | CM_PB_VARINT) < 128 &&
		       SEQ_ID < 128 && TYPE_END < 128 && CLOCK_BOOTTIME < 128,
	       "the packets' tags and constants one byte each");

/* The bodies (interned data field and track event body together) of this
 * many bytes or fewer make a packet whose length and track event's length
 * are one byte each: the packet's head is 16 bytes at most (a 10-byte
 * time, the clock's 3, the sequence's 2), the track event's tag and
 * length 2, its track 11: 96 + 16 + 2 + 11 = 125. */
#define SHORT_BODY 96

/* The varint of V at Q; past it. */
static inline unsigned char *put_varint(unsigned char *q, uint64_t v)
{
	while (v >= 0x80) {
		*q++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*q++ = (unsigned char)v;
	return q;
}

/* The packet's time TS at Q (on the events' clock, whose 0 is BASE, or
 * before it on the trace's own), then its sequence; past them. */
static inline unsigned char *put_time_seq(unsigned char *q, int64_t ts, int64_t base)
{
	*q++ = TP_TIMESTAMP << 3 | CM_PB_VARINT;
	if (__builtin_expect(ts >= base, 1)) {
		q = put_varint(q, (uint64_t)(ts - base));
	} else {
		q = put_varint(q, (uint64_t)ts);
		q = put_varint(q, TP_CLOCK_ID << 3 | CM_PB_VARINT);
		*q++ = CLOCK_BOOTTIME;
	}
	q[0] = TP_SEQ_ID << 3 | CM_PB_VARINT;
	q[1] = SEQ_ID;
	return q + 2;
}

/* PRE's values: the workers' times good (PRE_YES: the clock's 0 is the
 * batch's earliest, from which they count) or not (PRE_NO); a mask of
 * their count (struct cm_pflens's TV's last byte), so that one test asks
 * both. */
#define PRE_YES 0xffu
#define PRE_NO 0u

/* The packet's time TS and sequence at Q, as put_time_seq writes them,
 * from TV (struct cm_pflens's: the worker's bytes of the time from the
 * batch's earliest and of the sequence, pfbatch.c's time_seq) when PRE is
 * PRE_YES and TV holds them; past them.  (Their 8 bytes stored at once:
 * those past the count are the packet's next bytes' room.) */
static inline unsigned char *put_time_pre(unsigned char *q, uint64_t tv, unsigned pre, int64_t ts, int64_t base)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	unsigned n = (unsigned)(tv >> 56) & pre;
	if (__builtin_expect(n != 0, 1)) {
		memcpy(q, &tv, sizeof tv);
		return q + n;
	}
#else
	(void)tv, (void)pre;
#endif
	return put_time_seq(q, ts, base);
}

/* The track UUID at Q when it is not the default DEF; past it. */
static inline unsigned char *put_track(unsigned char *q, uint64_t uuid, uint64_t def)
{
	if (uuid != def) {
		*q++ = TE_TRACK_UUID << 3 | CM_PB_VARINT;
		q = put_varint(q, uuid);
	}
	return q;
}

/* Copy S[0..N) to Q, which has 32 bytes to spare: a body of 32 bytes or
 * fewer (most of a trace's) by two 16-byte moves, as 32 bytes can always
 * be read at S: a record's body has its struct cm_pflens after it, then
 * another record or the batch's slices and tail (pfbatch.c's put_tail).
 * Past the copy. */
_Static_assert(sizeof(struct cm_pflens) + sizeof(struct cm_pfbatch_tail) >= 32, "32 bytes readable at a body");
static inline unsigned char *copy_body(unsigned char *q, const char *s, size_t n)
{
	if (n <= 32) {
		memcpy(q, s, 16);
		memcpy(q + 16, s + 16, 16);
	} else {
		memcpy(q, s, n);
	}
	return q + n;
}

/* An event packet of a long body, its lengths worked out first (event_packet's
 * arguments and result). */
static __attribute__((noinline)) unsigned char *long_packet(unsigned char *p, int64_t ts, int64_t base,
							    const char *i, uint32_t in, const char *b, uint32_t bn,
							    uint64_t uuid, uint64_t def)
{
	int own = ts < base;
	uint64_t t = own ? (uint64_t)ts : (uint64_t)(ts - base);
	size_t te = bn + (uuid != def ? 1 + cm_pb_varint_size(uuid) : 0);
	size_t body = 1 + cm_pb_varint_size(t) + (own ? 3 : 0) + 2 + in + 1 + cm_pb_varint_size(te) + te;
	*p++ = TRACE_PACKET << 3 | CM_PB_LEN;
	p = put_varint(p, body);
	p = put_time_seq(p, ts, base);
	memcpy(p, i, in); /* (I is in the record even when IN is 0) */
	p += in;
	*p++ = TP_TRACK_EVENT << 3 | CM_PB_LEN;
	p = put_varint(p, te);
	memcpy(p, b, bn);
	return put_track(p + bn, uuid, def);
}

/* The packet of an event at TS (the clock's 0 at BASE; TV and PRE:
 * put_time_pre's) at P: its interned
 * data field I[0..IN) (encoded whole by the worker, or none), its track
 * event body B[0..BN) (in a record: copy_body)
 * on track UUID (none written when it is the default DEF); past it.  A
 * short body's (SHORT_BODY) two lengths are written in the bytes kept
 * for them, once the packet is written: no size worked out before. */
static inline __attribute__((always_inline)) unsigned char *event_packet(unsigned char *p, int64_t ts, int64_t base,
									   uint64_t tv, unsigned pre, const char *i,
									   uint32_t in, const char *b, uint32_t bn,
									   uint64_t uuid, uint64_t def)
{
	unsigned char *q, *tl;
	if (__builtin_expect(in + bn > SHORT_BODY, 0))
		return long_packet(p, ts, base, i, in, b, bn, uuid, def);
	p[0] = TRACE_PACKET << 3 | CM_PB_LEN;
	q = put_time_pre(p + 2, tv, pre, ts, base);
	if (in) {
		memcpy(q, i, in);
		q += in;
	}
	q[0] = TP_TRACK_EVENT << 3 | CM_PB_LEN;
	tl = q + 1;
	q = put_track(copy_body(q + 2, b, bn), uuid, def);
	*tl = (unsigned char)(q - tl - 1);
	p[1] = (unsigned char)(q - p - 2);
	return q;
}

/* The held-back end of an X at TS (TV and PRE: put_time_pre's) on track
 * UUID (pfevent.c's end_packet: a track event of the type "end" alone) at
 * P; past it. */
static inline unsigned char *end_packet(unsigned char *p, int64_t ts, int64_t base, uint64_t tv, unsigned pre,
					uint64_t uuid, uint64_t def)
{
	unsigned char *q, *tl;
	p[0] = TRACE_PACKET << 3 | CM_PB_LEN;
	q = put_time_pre(p + 2, tv, pre, ts, base);
	q[0] = TP_TRACK_EVENT << 3 | CM_PB_LEN;
	tl = q + 1;
	q[2] = TE_TYPE << 3 | CM_PB_VARINT;
	q[3] = TYPE_END;
	q = put_track(q + 4, uuid, def);
	*tl = (unsigned char)(q - tl - 1);
	p[1] = (unsigned char)(q - p - 2);
	return q;
}

/* Room for ROOM more bytes after O's (written by cm_buf's functions up
 * to its LEN); where the writer's pointer goes on. */
static unsigned char *resume(cm_buf *o, size_t room)
{
	if (o->cap - o->len < room)
		cm_buf_grow(o, room);
	return (unsigned char *)o->p + o->len;
}

/* The clock packet of the batch E (cm_pf_clock_packet's bytes) after O's
 * bytes up to P, ROOM kept after it; past it.  Out of line: once a batch
 * or so. */
static __attribute__((noinline)) unsigned char *clock_packet(const struct cm_pfwrite *e, cm_buf *o, unsigned char *p,
							     size_t room)
{
	o->len = (size_t)(p - (unsigned char *)o->p);
	cm_pf_clock_bytes(o, e->nclock, e->nbase, e->ndef);
	return resume(o, room);
}

/* The packets of a counter's N values CV (pfevent.c's counter() made their
 * track: the bytes pfevent.c wrote for them in order before), on the clock
 * whose 0 is BASE, after O's bytes up to P, ROOM kept after them; past
 * them.  Out of line: a "C" element's. */
static __attribute__((noinline)) unsigned char *counter_packets(cm_buf *o, unsigned char *p, size_t room,
								const struct cval *cv, int64_t n, int64_t base)
{
	int64_t c;
	o->len = (size_t)(p - (unsigned char *)o->p);
	for (c = 0; c < n; c++) {
		unsigned char h[32];
		size_t pk, te;
		pk = cm_pb_open(o, TRACE_PACKET);
		cm_buf_put(o, h, (size_t)(put_time_seq(h, cv[c].ts, base) - h));
		te = cm_pb_open(o, TP_TRACK_EVENT);
		cm_pb_uint(o, TE_TYPE, TYPE_COUNTER);
		cm_pb_uint(o, TE_TRACK_UUID, cv[c].uuid);
		cm_pb_double(o, TE_COUNTER_DOUBLE, cv[c].d);
		cm_pb_close(o, te);
		cm_pb_close(o, pk);
	}
	return resume(o, room);
}

void cm_pfseg_write(const struct cm_pfwrite *e, cm_buf *out)
{
	/* (E's fields and the writing's state in locals: the packets'
	 * stores through char pointers would have them loaded again a
	 * record) */
	const char *const recs = e->recs, *const end = e->recs_end;
	/* (no lanes: LANES.p may be NULL, which no offset may be added to) */
	const struct laned *ln = (const struct laned *)e->lanes.p,
			   *const ln_end = ln ? ln + e->lanes.len / sizeof *ln : ln;
	const char *next = ln < ln_end ? recs + ln->at : NULL; /* the next slice off its thread's track */
	/* the runs (pfrecord.h's struct cm_pfrun): their records' track is the run's */
	const struct cm_pfrun *rn = e->runs, *const rn_end = rn + e->nruns;
	const char *next_run = rn < rn_end ? recs + rn->at : NULL, *run_end = recs;
	uint64_t run_uuid = 0;
	const size_t room = CM_PF_WRITE_ROOM((size_t)(end - recs));
	int64_t base = e->base, last_b = e->last_b, last_e = e->last_e;
	uint64_t def = e->def_uuid, last_thread = e->last_thread, last_uuid = e->last_uuid;
	int due = e->due, pending = e->pending;
	/* the workers' times good (the clock's 0 the batch's earliest), and
	 * the held-back end's (none for a slice of a batch before) */
	unsigned pre = base == e->nbase ? PRE_YES : PRE_NO;
	uint64_t last_te = CM_PF_TIME_NONE;
	const char *r;
	uint32_t len;
	unsigned char *p;
	if (out->cap - out->len < room)
		cm_buf_grow(out, room);
	p = (unsigned char *)out->p + out->len;
	for (r = recs; r < end; r += len) {
		const unsigned kind = (unsigned char)r[offsetof(struct head, kind)];
		const char *b;
		const char *l;
		uint32_t in, bn;
		uint64_t tv;
		uint64_t uuid;
		int64_t ts = cm_pf_rd64(r + offsetof(struct head, ts));
		len = cm_pf_rd32(r + offsetof(struct head, len));
		if (r == next_run) {
			if (rn->uuid != CM_PF_RUN_PER_RECORD)
				run_uuid = rn->uuid, run_end = r + rn->bytes;
			rn++;
			next_run = rn < rn_end ? recs + rn->at : NULL;
		}
		/* (step 1's: the run's track, or the record's in its head) */
		uuid = r < run_end ? run_uuid : (uint64_t)cm_pf_rd64(r + offsetof(struct head, off));
		if (kind != K_FLOW) {
			if (kind == K_BASE) /* (the batch's earliest time: no packet) */
				continue;
			if (pending) { /* the end of the last X, held back until now */
				if (due) {
					p = clock_packet(e, out, p, room);
					base = e->nbase, def = e->ndef, due = 0, pre = PRE_YES;
				}
				p = end_packet(p, last_e, base, last_te, pre, last_uuid, def);
				pending = 0;
			}
		}
		if (r[offsetof(struct head, cleared)])
			due = 1;
		if (kind == K_RAW) { /* a "C" element's values (none for an "M") */
			int64_t n = cm_pf_rd64(r + offsetof(struct head, dur));
			if (n) {
				if (due) {
					p = clock_packet(e, out, p, room);
					base = e->nbase, def = e->ndef, due = 0, pre = PRE_YES;
				}
				p = counter_packets(out, p, room, (const struct cval *)e->cvals.p + uuid, n, base);
			}
			continue;
		}
		if (due) {
			p = clock_packet(e, out, p, room);
			base = e->nbase, def = e->ndef, due = 0, pre = PRE_YES;
		}
		/* (its fields read one by one, where each is needed: copied
		 * whole, they went through the stack) */
		l = r + len - sizeof(struct cm_pflens);
		bn = cm_pf_rd32(l + offsetof(struct cm_pflens, bn));
		in = cm_pf_rd32(l + offsetof(struct cm_pflens, in));
		tv = (uint64_t)cm_pf_rd64(l + offsetof(struct cm_pflens, tv));
		b = l - bn;
		if (kind == K_SLICE) {
			uint64_t lane = uuid; /* (its thread's, but for step 2's list) */
			if (r == next) {
				lane = ln++->uuid;
				next = ln < ln_end ? recs + ln->at : NULL;
			}
			p = event_packet(p, ts, base, tv, pre, b - in, in, b, bn, lane, def);
			pending = 1;
			last_thread = uuid, last_uuid = lane, last_b = ts, last_te = (uint64_t)cm_pf_rd64(l + offsetof(struct cm_pflens, te));
			last_e = ts + cm_pf_rd64(r + offsetof(struct head, dur));
			continue;
		}
		if (kind == K_FLOW && uuid == last_thread && ts >= last_b && ts <= last_e)
			uuid = last_uuid; /* on the lane of the X it follows */
		p = event_packet(p, ts, base, tv, pre, b - in, in, b, bn, uuid, def);
	}
	out->len = (size_t)(p - (unsigned char *)out->p);
}
