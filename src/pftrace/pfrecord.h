/* pfrecord.h - a batch's records: the layout in which a worker (pfbatch.c)
 * writes each element it encodes, and which the sequential part (pfseg.c)
 * steps through, places and writes as packets (struct head), and a
 * batch's packets to write as the sequential part hands them to the
 * passer (struct cm_pfwrite, pfpass.c).  A header of its own because it
 * is the one contract between the workers and the sequential part: both
 * sides read it here, neither needs the other's code.  Private to
 * src/pftrace. */
#ifndef CM_PFRECORD_H
#define CM_PFRECORD_H

#include "pftrace/pfintern.h"
#include "json/jval.h"

#include <stdint.h>
#include <string.h>

/* ---- the batches' records (pfbatch.c makes them, pfbatch.c and
 * pfseg.c place them) ---- */
enum { K_SLICE = 1, K_THREAD, K_GLOBAL, K_PROCESS, K_FLOW, K_RAW, K_BASE };

/* A record's head; then, but for K_RAW and K_BASE, the pid and the tid
 * (pfbatch.c's put_id_at), the packet's interned data field and the track
 * event body, and their lengths (struct cm_pflens); for K_RAW the
 * element's text (a length, the bytes).  K_BASE, a
 * head alone, comes first: the earliest time of the batch in its ts.
 * LEN: the record's bytes, head included (the worker's: the sequential
 * part steps from record to record by it, no length read on the way).
 * Step 1 of the sequential part (pfseg.c's place_all) writes over OFF
 * the record's track uuid (a slice's: its thread's, unless step 2 lists
 * it in cm_pfwrite's LANES; an "M" or "C" element's: its first value,
 * and over DUR its count of values), which step 3 reads: the records
 * are their own places. */
struct head {
	unsigned char kind, cleared, ph;
	unsigned char ids; /* the worker's word on the pid and tid (CM_PF_IDS_*) */
	uint32_t len;
	int64_t off, ts, dur;
};

/* An event record's last 24 bytes (pfbatch.c's encode_one; not K_RAW's
 * nor K_BASE's): IN and BN, the lengths of its packet's interned data
 * field, encoded whole (its tag, its length, the bytes; 0: none), and of
 * its track event body, which come just before them, in that order, after
 * the pid and the tid; TV, the packet's time from the batch's earliest
 * (the K_BASE's ts, the clock's 0 once the batch's clock packet is
 * written) and its sequence as the packet has them (pfbatch.c's
 * time_seq), and
 * for a slice TE, the same of its end (the held-back end's; else
 * unused).  Last, so that the packets' writer (pfwrite.c) finds them from
 * the record's end, with no length walked on the way; the times are the
 * worker's once its batch's earliest is known (pfbatch.c's put_times). */
struct cm_pflens {
	uint64_t tv, te;
	uint32_t in, bn;
};

/* A struct cm_pflens's TV or TE of a time it does not hold. */
#define CM_PF_TIME_NONE 0

/* The most bytes the packets of a batch whose records are N bytes take
 * (pfwrite.c makes the room once a batch): a record's packet and a
 * held-back end before it take no more than twice the record (an event
 * record's is 66 bytes and its bodies or more, its packet their bytes and
 * 39 at most, the end 33 at most; an "M" or "C" element's record is 36
 * bytes or more, its values' packets made with their own room), and the
 * last packet's body copied by 32 bytes may pass its end by 32. */
#define CM_PF_WRITE_ROOM(n) (2 * (n) + 32)

/* The 8 and 4 bytes at P (a record's: unaligned). */
static inline int64_t cm_pf_rd64(const char *p)
{
	int64_t x;
	memcpy(&x, p, sizeof x);
	return x;
}
static inline uint32_t cm_pf_rd32(const char *p)
{
	uint32_t x;
	memcpy(&x, p, sizeof x);
	return x;
}

/* A head's IDS: the pid and tid are both integers (CM_PF_J_INT, their 13
 * bytes each), and the same integers as the batch's record just before,
 * so of the same thread track (the sequential part takes the record
 * before's, with nothing read: pfseg.c). */
#define CM_PF_IDS_INTS 1
#define CM_PF_IDS_SAME 2

/* A run of a batch's records, as its worker lists them (pfbatch.c): the
 * slices and flows one after the other of one thread whose pid and tid
 * are integers (each record's IDS CM_PF_IDS_INTS, all but the first's
 * CM_PF_IDS_SAME), so that the sequential part looks the thread up once
 * a run and reads none of the run's records (pfseg.c's step 1: reading
 * every record's head, written on another CPU, was most of its time on
 * 16 CPUs), and the writer takes their track from here.  AT and BYTES:
 * the run's records, from the batch's start; NSLICES of them slices, the
 * last at LAST_SLICE; CL their CLEARED ORed; FIRST_IDS the first's IDS.
 * UUID is written by step 1: the run's track, or CM_PF_RUN_PER_RECORD when
 * step 1 placed the records one by one (a thread with a "B" open, whose
 * flows take its track) and wrote each record's track in its head.  The
 * runs lie in the batch after its records, before its slices (struct
 * cm_pfbatch_tail's NRUNS); a multiple of 8 bytes, so the slices after
 * them stay aligned. */
struct cm_pfrun {
	uint32_t at, bytes, nslices, last_slice;
	int64_t pid, tid;
	uint64_t uuid;
	unsigned char cl, first_ids, pad[6];
};
_Static_assert(sizeof(struct cm_pfrun) % 8 == 0, "the slices after the runs stay aligned");
#define CM_PF_RUN_PER_RECORD UINT64_MAX

/* A jval type of the batches' own (pfbatch.c): an integer pid or tid
 * parsed by a worker, its int64 at s (8 bytes). */
#define CM_PF_J_INT 0xfe

/* No value: the member is missing. */
#define ID_MISSING 0xff

static inline const char *get_len_bytes(const char *p, const char **s, uint32_t *n)
{
	memcpy(n, p, sizeof *n);
	*s = p + sizeof *n;
	return *s + *n;
}

/* The value put_id_at wrote at P in *V (*VP: V, or NULL when missing). */
static inline const char *get_id(const char *p, cm_jval *v, const cm_jval **vp)
{
	memset(v, 0, sizeof *v);
	v->type = (unsigned char)*p;
	*vp = v->type == ID_MISSING ? NULL : v;
	return get_len_bytes(p + 1, &v->s, &v->len);
}

/* A slice of the batch placed off its thread's own track (pflanes.c's
 * lane not 0, pfseg.c's step 2): its record's place (AT, from the batch's
 * first) and its lane's track. */
struct laned {
	uint64_t at, uuid;
};

/* A value of a "C" element: its time, its counter track, the value. */
struct cval {
	int64_t ts;
	uint64_t uuid;
	double d;
};

/* A batch's packets to write (pfseg.c): its records (REC: pfbatch.c's,
 * each head's OFF written over by step 1 with its track, struct head says
 * how, but for the records of a run taken whole: RUNS says theirs), its
 * slices placed off their thread's own track (LANES: struct laned, in the
 * records' order) and counter values (struct cval); the
 * clock its first packet makes; the writing's state before it (the clock,
 * the default track, the last X, a clock packet due, a held-back end). */
struct cm_pfwrite {
	cm_buf rec, lanes, cvals;
	const char *recs, *recs_end; /* the records (in REC's buffer, which a swap keeps where it is) */
	const struct cm_pfrun *runs; /* the batch's runs (in REC's buffer too), their tracks written */
	size_t nruns;
	int64_t nbase, base;
	uint32_t nclock, clock;
	uint64_t ndef, def_uuid;
	uint64_t last_thread, last_uuid;
	int64_t last_b, last_e;
	int due, pending;
	double wrote_s; /* -v: the seconds its packets took to write (pfpass.c's preparing threads) */
};

/* The sequential part of a batch (pfseg.c): cm_pfbatch_apply's (REC's
 * buffer may be swapped for another, empty). */
int cm_pfseg_apply(cm_pfev *e, cm_buf *rec);
/* Step 3 of the batch W (pfwrite.c): its packets appended to OUT, on any
 * thread (W is all it reads). */
void cm_pfseg_write(const struct cm_pfwrite *w, cm_buf *out);
/* Free W's buffers. */
void cm_pfwrite_free(struct cm_pfwrite *w);

#endif
