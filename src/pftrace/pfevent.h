/* pfevent.h - the event encoder (pfevent.c: the mapping, its clock and
 * packets; pfbody.c: an event's body, interned, and its args) as the
 * transcoder's stages see it: the schema's field numbers, the encoder's
 * state (struct cm_pfev), an event's members and their number text, and
 * what the encoder lends the batches.  The tracks' calls are pftrack.h's,
 * the batches' records pfrecord.h's, the lanes' queue pflaneq.h's.
 * Private to src/pftrace. */
#ifndef CM_PFEVENT_H
#define CM_PFEVENT_H

#include "pftrace/pfintern.h"
#include "pftrace/pbwrite.h"
#include "pftrace/pfrecord.h"
#include "base/diag.h"
#include "base/hmap.h"
#include "json/jval.h"
#include "base/exitcode.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Interned bytes (names, categories, keys) before the tables start over. */
#define INTERN_MAX (4u << 20)
/* The packet sequence of the events, and that of the track descriptors:
 * apart, because the trace processor takes a thread descriptor on a
 * sequence as the thread of that sequence's events, and would then tag
 * the global instants with it (a "passthrough_utid" arg the JSON import
 * does not make). */
#define SEQ_ID 1
#define DESC_SEQ_ID 2
/* Field numbers, perfetto_trace.proto. */
enum {
	TRACE_PACKET = 1,
	TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12, TP_SEQ_FLAGS = 13,
	TP_TRACK_DESCRIPTOR = 60, TP_CLOCK_SNAPSHOT = 6, TP_CLOCK_ID = 58, TP_DEFAULTS = 59,
	CS_CLOCKS = 1, CLK_ID = 1, CLK_TIMESTAMP = 2, /* ClockSnapshot, its Clock */
	DEF_CLOCK_ID = 58, DEF_TRACK_EVENT = 11, TED_TRACK_UUID = 11,                           /* TracePacketDefaults */
	CLOCK_BOOTTIME = 6, CLOCK_EVENTS_FIRST = 128, /* the trace's clock; ours (one a batch) */
	SEQ_CLEARED = 1, SEQ_NEEDS = 2,
	ID_CATEGORIES = 1, ID_NAMES = 2, ID_ANNOTATION_NAMES = 3, /* InternedData */
	TE_CATEGORY_IIDS = 3, TE_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK_UUID = 11,
	TE_LEGACY_EVENT = 6, TE_COUNTER_DOUBLE = 44,
	LE_PHASE = 2, LE_UNSCOPED_ID = 6, LE_BIND_TO_ENCLOSING = 12, /* TrackEvent.LegacyEvent */
	TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
	DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_STRING = 6,
	DA_DICT = 11, DA_ARRAY = 12,
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	TD_SIBLING_MERGE = 15, SIBLING_MERGE_NONE = 2,
	PD_PID = 1, PD_SORT = 3, PD_NAME = 6, PD_LABELS = 8,
	THD_PID = 1, THD_TID = 2, THD_SORT = 3, THD_NAME = 5,
};

/* Entries of the sink's cache of thread tracks (a power of 2). */
#define TCACHE 64

/* Entries of each of an encoder's memos by pointer (args' keys,
 * categories, names: a power of 2). */
#define CM_PF_KEYREFS 64

struct cm_pfev {
	cm_buf *out;
	const char *label;
	cm_arena *arena;
	cm_strtab cats, names, keys; /* interned: string -> iid */
	uint64_t next_iid;
	size_t intern_max;    /* INTERN_MAX, or CUPTIMERGE_PFT_INTERN's */
	int cleared;          /* the next event packet clears the incremental state */
	cm_strtab ids;        /* string pids and tids -> their numbers */
	cm_strtab counters;   /* counter tracks written */
	cm_hmap *tracks;      /* (pid key, tid key) -> struct track */
	int global_written;
	uint64_t next_uuid; /* track uuids are counted: short varints */
	struct cm_pflaneq *lq; /* the threads' lanes (pflaneq.c; shared, not owned) */
	cm_buf jobs;     /* a worker's: the batch's slices for pflaneq.c */
	cm_buf runs;     /* a worker's: the batch's runs of records (pfrecord.h's struct cm_pfrun) */
	/* the track whose events say none (TrackEventDefaults), in effect and
	 * from the next clearing of the sequence: the batch's busiest thread */
	uint64_t def_uuid, next_def_uuid;
	cm_buf counts; /* a batch's slices by thread uuid (pfseg.c's busiest) */
	/* the last X event: a flow after it on its thread binds to it, on its lane */
	uint64_t last_thread, last_uuid;
	int64_t last_b, last_e;
	int end_pending; /* the last X's end is not written yet (see flush_end) */
	int lone;        /* a worker's: a string of the event holds a lone surrogate (cm_pf_body) */
	int64_t base;    /* time 0 of the events' clock (have_base) */
	int have_base;
	uint32_t clock;    /* the events' clock now */
	int64_t next_base; /* the batch's earliest time: the base from its first packet */
	int64_t batch_min; /* a worker's: the earliest time of the batch it encodes */
	size_t batch_at;   /* a worker's: where the batch's records begin in its output */
	/* a worker's: the integer pid and tid of the batch's record before
	 * (prev_ints 0: none, or not both integers), for CM_PF_IDS_SAME */
	int prev_ints;
	int64_t prev_pid, prev_tid;
	cm_buf te, interned, scratch;
	/* the iids of args' keys met lately in trees given with literal keys
	 * (cm_pft_enc_elem's), and of categories and names whose bytes stay
	 * (sfix): by the string's pointer and length, no byte of it read
	 * (cm_pf_body); valid while gen is keygen, which a clearing of the
	 * tables moves on (cm_pf_keys_cleared).  lit: the element now encoded
	 * is such a tree */
	struct cm_pfkeyref {
		const char *key;
		uint32_t klen, gen;
		uint64_t iid;
	} keyref[CM_PF_KEYREFS], catref[CM_PF_KEYREFS], nameref[CM_PF_KEYREFS];
	uint32_t keygen;
	int lit;
	/* the thread tracks of integer (pid, tid) pairs met lately, by their
	 * hash (pftrack.c): most events skip the two tables' lookups; emptied
	 * whenever a track is made, as the table may move them */
	struct tcache {
		int64_t pid, tid;
		struct track *t;
	} tcache[TCACHE];
	cm_buf elems;      /* a worker's: a batch's elements (struct cm_pfelem) */
	cm_jval *nodes;    /* a worker's: the nodes of an element's tree (pfparse.c) */
	size_t nodes_cap;
	const int *dropping; /* a worker's: set (atomically) when the run has failed */
	int no_flat;       /* CUPTIMERGE_PFT_GENERIC set: every element parsed into a tree, its
			    * numbers read again from their text (pfbatch.c, pfparse.c) */
	/* for -v (the sequential part's): seconds it waited for (or placed)
	 * lanes, and that passed the bytes on (the file) */
	double lane_wait, passed;
	double in_order;  /* CPU of pfseg.c's steps on the sink's thread */
	/* the batches whose packets the sink's thread wrote itself (emit
	 * said 1: no passer, or its queue full), and the seconds it took */
	unsigned long wrote_here;
	double wrote_here_s;
	/* write a batch's packets on the sink's thread when the passer's
	 * queue is full, rather than wait (pfpool.c's cm_pft_emit_batch): 1; 0
	 * with CUPTIMERGE_PFT_PASSER_ONLY=1, 2 with
	 * CUPTIMERGE_PFT_SHARE_ALTERNATE=1 (testing aids: the passer alone;
	 * every other batch written here whatever the queue, for the tests) */
	int share;
	unsigned long nemits; /* share 2: the batches so far */
	/* pfseg.c's: the batch's packets to write, and the writing's state
	 * after the batch */
	struct cm_pfwrite wt;
	int seg_due, seg_emitted, seg_pending;
	int64_t seg_lastx; /* the last slice's record (from the batch's first; -1: none) */
	/* where a batch's packets to write go (pfpool.c: to the passer,
	 * after what OUT holds; the buffers swapped for the passer's used
	 * ones): 0, -1 after a failure (the passer's, reported when it
	 * stops), 1 when it cannot, or its queue is full (written here,
	 * appended to OUT, passed on before the next batch's); NULL:
	 * written here */
	int (*emit)(void *ctx, struct cm_pfwrite *w);
	void *emit_ctx;
};


/* The members of an event that matter here (the last of a repeated key,
 * as Python's json keeps). */
struct ev {
	const cm_jval *ph, *name, *cat, *ts, *dur, *pid, *tid, *args, *id, *s, *bp;
};

/* EV with no member found yet: each field stored, where memset's was a
 * "rep stos" (GCC at -O2, 88 bytes): its start-up was 10 % of the samples
 * of cm_pf_parse_flat and 18 % of cm_pf_members' in a profile of the 200M
 * pair's .pftrace merge (BENCHMARKS.md "pfcpu16"). */
static inline void cm_pf_ev_clear(struct ev *ev)
{
	ev->ph = ev->name = ev->cat = ev->ts = ev->dur = ev->pid = ev->tid = NULL;
	ev->args = ev->id = ev->s = ev->bp = NULL;
}

/* The member of EV that the key KEY[0..KLEN) names; NULL for one that
 * does not matter here. */
static inline const cm_jval **cm_pf_member_slot(struct ev *ev, const char *key, size_t klen)
{
	switch (klen) {
	case 1: return key[0] == 's' ? &ev->s : NULL;
	case 2:
		return !memcmp(key, "ph", 2) ? &ev->ph : !memcmp(key, "ts", 2) ? &ev->ts
		     : !memcmp(key, "id", 2) ? &ev->id : !memcmp(key, "bp", 2) ? &ev->bp : NULL;
	case 3:
		return !memcmp(key, "cat", 3) ? &ev->cat : !memcmp(key, "dur", 3) ? &ev->dur
		     : !memcmp(key, "pid", 3) ? &ev->pid : !memcmp(key, "tid", 3) ? &ev->tid : NULL;
	case 4: return !memcmp(key, "name", 4) ? &ev->name : !memcmp(key, "args", 4) ? &ev->args : NULL;
	}
	return NULL;
}

/* The members of the event object O in *EV, where O's builder says which
 * member each is (cm_jval's kno, jval.h: a tree given to cm_pft_enc_elem);
 * a member that says nothing (CM_JK_UNSAID) is found by its key, as
 * cm_pf_members finds them all.  Inline: the window's elements of a
 * .pftrace merge come this way, and the keys' compares were 21 M
 * instructions of the 50k pair's (BENCHMARKS.md "pfrender19"). */
static inline void cm_pf_members_given(const cm_jval *o, struct ev *ev)
{
	_Static_assert(offsetof(struct ev, name) == (CM_JK_NAME - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, cat) == (CM_JK_CAT - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, ts) == (CM_JK_TS - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, dur) == (CM_JK_DUR - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, pid) == (CM_JK_PID - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, tid) == (CM_JK_TID - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, args) == (CM_JK_ARGS - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, id) == (CM_JK_ID - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, s) == (CM_JK_S - 1) * sizeof(cm_jval *) &&
			       offsetof(struct ev, bp) == (CM_JK_BP - 1) * sizeof(cm_jval *) &&
			       sizeof(struct ev) == (CM_JK_OTHER - 1) * sizeof(cm_jval *),
		       "struct ev in the order of jval.h's CM_JK_*");
	const cm_jval *k;
	cm_pf_ev_clear(ev);
	for (k = o->kids; k; k = k->next) {
		unsigned x = k->kno;
		if (x - 1u < CM_JK_OTHER - 1u) { /* (its field, through EV's bytes) */
			*(const cm_jval **)(void *)((char *)ev + (x - 1) * sizeof(cm_jval *)) = k;
		} else if (x == CM_JK_UNSAID) {
			const cm_jval **slot = cm_pf_member_slot(ev, k->key, k->klen);
			if (slot)
				*slot = k;
		}
	}
}

/* Refuse: report WHAT at OFFSET; returns -1. */
#define REFUSE(e, off, ...) refused(cm_error(CM_EXIT_DATA, (e)->label, (off), __VA_ARGS__))
static inline int refused(int status)
{
	(void)status;
	return -1;
}

/* 1 when the number text S[0..N) is an integer literal (no fraction, no
 * exponent, not NaN or Infinity): Perfetto's JSON import types it int. */
static inline int is_integer_text(const char *s, size_t n)
{
	size_t i = s[0] == '-';
	if (i == n)
		return 0;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* 1 when S[0..N) holds a lone UTF-16 surrogate: a "\ud800" escape with no
 * pair, which the JSON reader keeps as its 3-byte WTF-8 form (ED A0..BF
 * xx; a pair becomes the 4-byte UTF-8 of its character).  That is no
 * UTF-8: a protobuf string field must be (protoc says "invalid UTF-8" of
 * it), and Perfetto's JSON import refuses a trace with one in an event's
 * name, category or any member it reads.  So the transcoder refuses it too
 * (cuptimerge(1), "Perfetto's protobuf output"), in every string it
 * writes: one clear line beats a file that half the readers take. */
static inline int cm_pf_lone_surrogate(const char *s, size_t n)
{
	const char *p = n ? memchr(s, 0xED, n) : NULL;
	for (; p; p = memchr(p + 1, 0xED, n - (size_t)(p + 1 - s)))
		if (p + 1 < s + n && (unsigned char)p[1] >= 0xA0)
			return 1;
	return 0;
}
#define CM_PF_SURROGATE_MSG "a string with a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair) cannot be written as Perfetto protobuf, whose strings are UTF-8"

/* What a number node's iv holds (has_iv), where pfparse.c's reading set
 * it (cm_jvalid_build's trees say CM_PF_IV_INT of any int64 literal; the
 * general parser's nodes say nothing, 0): the value of an integer literal
 * (small_int's), or the nanoseconds of a decimal of 1 to 3 decimals below
 * 2^43 (cm_pf_us_to_ns's, whose digits they are). */
#define CM_PF_IV_INT 1
#define CM_PF_IV_NS 2

/* The integer literal S[0..N) (an is_integer_text) of 18 digits at most
 * in *X: 1; else 0, and cm_py_int_of_number reads it (a per-event fast
 * path: it is the value of the pid, the tid and most args). */
static inline int small_int(const char *s, size_t n, int64_t *x)
{
	size_t i = n && s[0] == '-';
	int64_t v = 0;
	if (i == n || n - i > 18)
		return 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*x = s[0] == '-' ? -v : v;
	return 1;
}

/* The double of the number text V (NaN, Infinity as Python's json reads
 * them): pfbody.c's, for its args, and the counters' values (pfevent.c). */
double cm_pf_number_of(const cm_jval *v);

/* 1 when the number V is beyond a double's range (1e400; no text of 308
 * digits or fewer without an exponent is), or one of Python's literals
 * NaN, Infinity and -Infinity (the parser's numbers: the one number text
 * that begins with 'N' or ends with 'y'), which Perfetto's JSON import
 * cannot read (v55.3: "expected digit"): it keeps an event's args up to
 * it (put_annotation, pfbody.c), and on a "C" event's value it loops for
 * ever (its counter loop retries the value it failed to read), so the
 * transcoder keeps the values before it there too (pfevent.c's counter).
 * A double annotation or counter value could hold them, but the .pftrace
 * shows what the JSON shows, as for 1e400 (which a Python writer spells
 * Infinity). */
static inline int beyond_double(const cm_jval *v)
{
	return !v->has_iv &&
	       (v->s[0] == 'N' || v->s[v->len - 1] == 'y' ||
		((v->len > 308 || memchr(v->s, 'e', v->len) || memchr(v->s, 'E', v->len)) && isinf(cm_pf_number_of(v))));
}

/* ---- what the encoder (pfevent.c, pfbody.c) lends the batches
 * (pfbatch.c) ---- */

/* The value of the element text S[0..N) as cm_jval_parse_py makes it
 * (pfparse.c; NULL when it is not JSON), in W's nodes or its arena, valid
 * until the next call. */
cm_jval *cm_pf_parse(cm_pfev *w, const char *s, size_t n);

/* The members of the element text S[0..N) in *EV, as cm_pf_members finds
 * them in cm_pf_parse's tree (the same nodes, in W's), when the text is
 * an object the compact reading takes (pfparse.c: spaces and nested
 * objects and arrays, but no escape, no raw control byte, no NaN or
 * Infinity, no number outside Python's pattern, no member that may be
 * beyond a double's range, no more nodes than W holds): 1; else 0, and
 * the caller parses it. */
int cm_pf_parse_flat(cm_pfev *w, const char *s, size_t n, struct ev *ev);

/* The members of the event object O in *EV. */
void cm_pf_members(const cm_jval *o, struct ev *ev);
/* The first member of the event object O whose value is NaN, Infinity,
 * -Infinity or a number with an exponent beyond a double's range (1e400;
 * not one of 400 digits, which the import takes there), but its pid and
 * tid (pftrack.c refuses those): Perfetto's JSON import (v55.3) refuses
 * the whole trace for one ("expected digit", "Double overflow"), where in
 * args it only ends the event's args; NULL when none.  cm_pf_parse_flat
 * reads no event with one (pfparse.c), so the other readings' trees are
 * the ones to ask. */
const cm_jval *cm_pf_unreadable_member(const cm_jval *o);
/* cm_pf_time's reading of V's text (its value not kept, or not one of
 * a time), or its refusal. */
int cm_pf_time_text(cm_pfev *e, const cm_jval *v, const char *what, const char *ph, int64_t off, int64_t *ns);
/* The time V (microseconds) in *NS; -1 after reporting when it is missing,
 * not a number, negative or beyond int64 nanoseconds.  Inline up to the
 * value kept as it was parsed (pfparse.c), most times' way. */
static inline int cm_pf_time(cm_pfev *e, const cm_jval *v, const char *what, const char *ph, int64_t off, int64_t *ns)
{
	if (v && v->type == CM_J_NUM && v->has_iv == CM_PF_IV_NS && v->iv >= 0)
		return *ns = v->iv, 0;
	if (v && v->type == CM_J_NUM && v->has_iv == CM_PF_IV_INT && v->iv >= 0 && v->iv < (int64_t)1 << 43)
		return *ns = v->iv * 1000, 0;
	return cm_pf_time_text(e, v, what, ph, off, ns);
}
/* Encode the track event body of EV (TYPE; 0: a flow's) into e->te, all
 * but its track uuid, interning into e->interned.  0 or -1 (reported). */
int cm_pf_body(cm_pfev *e, const struct ev *ev, int type, int64_t off);
/* Between elements: start the interning tables over when they hold too
 * much (e->cleared says so). */
void cm_pf_maybe_clear(cm_pfev *e);
/* Start them over now (a batch's open, pfbatch.c; or when they hold too
 * much), e->cleared set. */
void cm_pf_tables_clear(cm_pfev *e);
/* The tables were started over: the memos by pointer forget (their
 * entries' generation is no longer keygen). */
static inline void cm_pf_keys_cleared(cm_pfev *e)
{
	if (!++e->keygen) { /* (wrapped: an entry of generation 0 would hold again) */
		memset(e->keyref, 0, sizeof e->keyref);
		memset(e->catref, 0, sizeof e->catref);
		memset(e->nameref, 0, sizeof e->nameref);
		e->keygen = 1;
	}
}
/* The entry of the string at KEY (its pointer's) in the memo REFS
 * (e->keyref, catref or nameref). */
static inline struct cm_pfkeyref *cm_pf_ref(struct cm_pfkeyref *refs, const char *key)
{
	return &refs[(uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15) >> 58 & (CM_PF_KEYREFS - 1)];
}
/* The entry of the arg key at KEY in E's keys' memo. */
static inline struct cm_pfkeyref *cm_pf_keyref(cm_pfev *e, const char *key) { return cm_pf_ref(e->keyref, key); }

/* The events' clock starts at the earliest time of each batch of elements
 * (pfbatch.c; a clock a batch, cm_pf_clock_packet says why): times from
 * there are 4-byte varints for 268 ms, where a batch spans about 15 ms of
 * a merged trace, and the absolute times of a trace take 8 bytes (from one
 * base for the whole trace, 1 s before its first event: 5 bytes for 34 s,
 * 6 for 73 min; BENCHMARKS.md has the sizes).  A time before it (a held-back
 * end, after the next batch's first packet) is written on the trace's
 * clock. */
/* The clock packet due before an event packet (pfevent.c). */
void cm_pf_clock_packet(cm_pfev *e);
/* The bytes of a clock packet (pfevent.c: cm_pf_clock_bytes). */
void cm_pf_clock_bytes(cm_buf *b, uint32_t clock, int64_t base, uint64_t def_uuid);
/* Append a packet's time TS to B. */
void cm_pf_put_time(cm_pfev *e, cm_buf *b, int64_t ts);
/* Write the held-back end of the last X event, if any. */
void cm_pf_flush_end(cm_pfev *e);

#endif
