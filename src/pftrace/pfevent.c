/* pfevent.c - one Chrome-trace event in, Perfetto TrackEvent packets out.
 *
 * The mapping (cuptimerge(1), "Perfetto's protobuf output", says it for
 * users):
 *   - each (pid, tid) is a thread track (a TrackDescriptor with a
 *     ThreadDescriptor), each pid a process track (ProcessDescriptor),
 *     written when first seen and again when an "M" event names it:
 *     process_name, process_labels (split at commas, as Perfetto's JSON
 *     import does), process_sort_index, thread_name, thread_sort_index
 *     (legacy_sort_index).  GPU rows keep the pid (device) and tid
 *     (stream) the JSON gives them.  pids and tids are read as
 *     Perfetto's JSON import reads them (pftrack.c has the rules): a
 *     float is cut to its integer part, a tid that is missing or no
 *     number or string is the pid's main thread, and a string id
 *     (Kineto's "Spans", "Traces", even "") gets a number made up for it
 *     and names its process or thread again at each of its events;
 *   - "X": a SLICE_BEGIN packet at ts and a SLICE_END at ts + dur, both in
 *     integer nanoseconds (cm_pf_us_to_ns).  The trace processor sorts
 *     packets by time (ties in file order), so a slice's end may come
 *     before earlier slices in the file; where a tie would pair an end
 *     with another slice's begin, or the slice overlaps another without
 *     nesting (the JSON import drops one of them), the slice goes on a
 *     second track of its thread (pflanes.c).  The end is held back until the next event
 *     that is not a flow (flush_end), so a flow at the time of an X of
 *     zero duration binds to it;
 *     "B"/"E" are BEGIN/END on a track of their own under their thread's
 *     (pftrack.c's cm_pf_event_uuid says why), an "E" named only when
 *     its event names it (the JSON import's "E" ends the innermost "B"
 *     whose name and category it matches, a missing one matching any);
 *   - "i"/"I": INSTANT on the thread, process ("s":"p") or one global
 *     ("s":"g") track; "C": one counter track per argument, named
 *     "NAME KEY" under its process, as Perfetto's JSON import names them;
 *   - "s", "t", "f" (flow v1, Kineto's ac2g): a packet of its own with the
 *     legacy phase, its id (unscoped_id), cat, name and "bp":"e"
 *     (bind_to_enclosing), on its thread at its ts: the trace processor
 *     binds it as it binds the JSON's (the slice open on that thread at
 *     that time; for an "f" without "bp":"e", the next slice begun on
 *     its track, where the JSON import's is the next of its thread: the
 *     two differ where that is a "B" or on a lane, cuptimerge(1)), keyed by
 *     cat, name and id, and an "f" does not close the flow, so one launch
 *     of a CUDA graph keeps its flow to each of its kernels;
 *   - args: one debug annotation each, nested for objects and arrays, with
 *     the JSON type: integer, unsigned beyond int64, double (a number with
 *     a fraction or exponent), string, bool; null is left out (Perfetto's
 *     JSON import leaves it out too).
 * Event names, categories and annotation keys are interned (InternedData),
 * on one packet sequence, starting over with each batch of elements
 * (pfbatch.c, which encodes batches on threads); when the tables pass
 * INTERN_MAX bytes within a batch (or
 * CUPTIMERGE_PFT_INTERN's, a testing aid) they are
 * cleared and the next packet says so (SEQ_INCREMENTAL_STATE_CLEARED), so
 * memory stays flat on a trace of any size.  Tracks are remembered for the
 * whole run (a trace has few).  Each clearing also sets the sequence's
 * default track (TrackEventDefaults): the batch's busiest thread, whose
 * events then write no track uuid (pfbatch.c). */
#include "config.h"
#include "pftrace/pfevent.h"
#include "pftrace/pftrack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

cm_pfev *cm_pfev_new(cm_buf *out, const char *label)
{
	cm_pfev *e = cm_xcalloc(1, sizeof *e);
	const char *env;
	e->out = out;
	e->label = label;
	e->arena = cm_arena_new();
	e->tracks = cm_hmap_new(16, sizeof(struct track));
	e->next_iid = 1;
	e->keygen = 1;
	e->cleared = 1;
	e->next_uuid = GLOBAL_UUID + 1;
	e->nodes_cap = 256; /* an event's tree: more when one needs it (pfparse.c) */
	e->nodes = cm_xmalloc(e->nodes_cap * sizeof *e->nodes);
	e->intern_max = INTERN_MAX;
	/* a testing aid: start the tables over after this many bytes */
	if ((env = getenv("CUPTIMERGE_PFT_INTERN")) && *env)
		e->intern_max = (size_t)strtoull(env, NULL, 10);
	/* a testing aid: no element read the compact way (cm_pf_parse_flat),
	 * no number's value kept as it is parsed (pfparse.c): the reading
	 * before them, which must give the same bytes */
	e->no_flat = (env = getenv("CUPTIMERGE_PFT_GENERIC")) && *env && strcmp(env, "0");
	/* a testing aid: every batch's packets written by the passer, which
	 * the sequential part waits for when it is behind (bench/dev-pfcpu10.sh) */
	e->share = !((env = getenv("CUPTIMERGE_PFT_PASSER_ONLY")) && *env && strcmp(env, "0"));
	/* and one that has every other batch's packets written here, where
	 * the share happens only when the passer is behind (check_pfstream's
	 * passer_share) */
	if (e->share && (env = getenv("CUPTIMERGE_PFT_SHARE_ALTERNATE")) && *env && strcmp(env, "0"))
		e->share = 2;
	return e;
}

void cm_pfev_free(cm_pfev *e)
{
	size_t i;
	if (!e)
		return;
	for (i = 0; i < cm_hmap_slots(e->tracks); i++) {
		struct track *t = cm_hmap_slot(e->tracks, i, NULL);
		if (t) {
			free(t->name);
			free(t->labels);
			free(t->str);
			free(t->lane_uuid);
			free(t->be_open);
		}
	}
	cm_hmap_free(e->tracks);
	cm_buf_free(&e->jobs);
	cm_buf_free(&e->elems);
	cm_pfwrite_free(&e->wt);
	cm_buf_free(&e->counts);
	cm_strtab_free(&e->cats);
	cm_strtab_free(&e->names);
	cm_strtab_free(&e->keys);
	cm_strtab_free(&e->ids);
	cm_strtab_free(&e->counters);
	cm_buf_free(&e->te);
	cm_buf_free(&e->interned);
	cm_buf_free(&e->scratch);
	free(e->nodes);
	cm_arena_free(e->arena);
	free(e);
}

/* A new string S[0..N) of a table (an InternedData field FIELD): its iid,
 * and its entry in e->interned, for the packet being made. */
static __attribute__((noinline)) uint64_t intern_new(cm_pfev *e, uint32_t field, const char *s, size_t n)
{
	uint64_t iid = e->next_iid++;
	size_t m;
	if (cm_pf_lone_surrogate(s, n)) /* (new strings only: the event refuses, so no other meets it) */
		e->lone = 1;
	m = cm_pb_open(&e->interned, field);
	cm_pb_uint(&e->interned, 1, iid);
	cm_pb_bytes(&e->interned, 2, s, n);
	cm_pb_close(&e->interned, m);
	return iid;
}

/* The iid of S[0..N) in table T (an InternedData field FIELD), interning it
 * (intern_new) when new: inline, as most find theirs in T's cache. */
static inline __attribute__((always_inline)) uint64_t intern(cm_pfev *e, cm_strtab *t, uint32_t field, const char *s, size_t n)
{
	uint64_t iid = cm_strtab_get(t, s, n, e->next_iid);
	return iid ? iid : intern_new(e, field, s, n);
}

/* intern's for the string V of table T (FIELD) whose memo by pointer is
 * REFS: V's iid found there when V's bytes stay (sfix, in a tree given:
 * e->lit), none of them read (an element's category and name looked up
 * in the tables' cache were 10 M instructions of the 50k pair's .pftrace
 * merge: BENCHMARKS.md "pfrender19"). */
static inline __attribute__((always_inline)) uint64_t intern_fixed(cm_pfev *e, struct cm_pfkeyref *refs, cm_strtab *t,
								  uint32_t field, const cm_jval *v)
{
	struct cm_pfkeyref *r;
	uint64_t iid;
	if (!e->lit || !v->sfix)
		return intern(e, t, field, v->s, v->len);
	r = cm_pf_ref(refs, v->s);
	if (r->key == v->s && r->klen == v->len && r->gen == e->keygen)
		return r->iid;
	iid = intern(e, t, field, v->s, v->len);
	r->key = v->s, r->klen = v->len, r->gen = e->keygen, r->iid = iid;
	return iid;
}

/* Between packets: start the tables over when they hold too much. */
void cm_pf_maybe_clear(cm_pfev *e)
{
	if (cm_strtab_bytes(&e->cats) + cm_strtab_bytes(&e->names) + cm_strtab_bytes(&e->keys) < e->intern_max)
		return;
	cm_strtab_clear(&e->cats);
	cm_strtab_clear(&e->names);
	cm_strtab_clear(&e->keys);
	cm_pf_keys_cleared(e);
	e->next_iid = 1;
	e->cleared = 1;
}

/* ---- args ---- */

/* The double of the number text V (NaN, Infinity as Python's json reads them). */
static double number_of(const cm_jval *v)
{
	char tmp[64], *t = tmp;
	double d;
	if (v->len >= sizeof tmp)
		t = cm_xmalloc(v->len + 1);
	memcpy(t, v->s, v->len);
	t[v->len] = 0;
	d = strtod(t, NULL); /* strtod reads "NaN", "Infinity" and "-Infinity" */
	if (t != tmp)
		free(t);
	return d;
}

/* 1 when the number V is beyond a double's range (1e400; no text of 308
 * digits or fewer without an exponent is), or one of Python's literals
 * NaN, Infinity and -Infinity (the parser's numbers: the one number text
 * that begins with 'N' or ends with 'y'), which Perfetto's JSON import
 * cannot read (v55.3: "expected digit"): it keeps an event's args up to
 * it (put_annotation), and on a "C" event's value it loops for ever (its
 * counter loop retries the value it failed to read), so the transcoder
 * keeps the values before it there too (counter).  A double annotation
 * or counter value could hold them, but the .pftrace shows what the
 * JSON shows, as for 1e400 (which a Python writer spells Infinity). */
static inline int beyond_double(const cm_jval *v)
{
	return !v->has_iv &&
	       (v->s[0] == 'N' || v->s[v->len - 1] == 'y' ||
		((v->len > 308 || memchr(v->s, 'e', v->len) || memchr(v->s, 'E', v->len)) && isinf(number_of(v))));
}

/* 1 when the key K[0..N) holds a '.': a word's test for a key of 16
 * bytes at most (most of them), where a call of memchr cost more. */
static inline int has_dot(const char *k, size_t n)
{
	const uint64_t ones = 0x0101010101010101u, dots = 0x2e2e2e2e2e2e2e2eu;
	uint64_t w0, w1;
	if (n > 16)
		return memchr(k, '.', n) != NULL;
	cm_strtab_words(k, n, &w0, &w1); /* every byte of K, and 0s (no dot) */
	w0 ^= dots, w1 ^= dots;
	return ((((w0 - ones) & ~w0) | ((w1 - ones) & ~w1)) & ones << 7) != 0;
}

/* An integer V under a plain key (no dot) interned as IID, field FIELD
 * (below 16) of what is open in B: most args of a trace, their bytes
 * written at once (the same as put_annotation's: the body takes 22 bytes
 * at most, so its length is one byte, and the tag one). */
static inline __attribute__((always_inline)) void put_int_iid(cm_buf *b, uint32_t field, uint64_t iid, const cm_jval *v)
{
	unsigned char *p;
	size_t n = 2;
	if (b->cap - b->len < 24)
		cm_buf_grow(b, 24);
	p = (unsigned char *)b->p + b->len;
	p[0] = (unsigned char)(field << 3 | CM_PB_LEN);
	p[n++] = DA_NAME_IID << 3 | CM_PB_VARINT;
	n += cm_pb_varint_at(p + n, iid);
	p[n++] = DA_INT << 3 | CM_PB_VARINT;
	n += cm_pb_varint_at(p + n, (uint64_t)v->iv);
	p[1] = (unsigned char)(n - 2);
	b->len += n;
}

/* put_int_iid's for the plain KEY[0..KLEN), interned here. */
static inline __attribute__((always_inline)) void put_int_annotation(cm_pfev *e, cm_buf *b, uint32_t field, const char *key, size_t klen,
				      const cm_jval *v)
{
	put_int_iid(b, field, intern(e, &e->keys, ID_ANNOTATION_NAMES, key, klen), v);
}

/* Append V as a DebugAnnotation, field FIELD of what is open in B, named
 * KEY (NULL: an array element, unnamed).  A null, an empty object or an
 * empty array writes nothing, as Perfetto's JSON import keeps no arg for
 * them.  A key with dots is written as dictionaries nested at them: the
 * trace processor joins nested names with dots, so the arg is the JSON
 * import's "args.a.b" (a dot within one name it would write as "_").
 * Returns 1, having written nothing of it, at a number beyond a double's
 * range (1e400, 400 digits): Perfetto's JSON import keeps the event's args
 * up to it, none from it on, so the caller stops there too (what was
 * opened for it and holds nothing else taken back); 2 the same way where
 * V lies more than PF_ANN_DEPTH levels deep (DEPTH: V's), counting the
 * dots of keys, which nest too (a key of a million dots overflowed the
 * stack); 3 at a string with a lone surrogate, which the caller refuses
 * (cm_pf_lone_surrogate; a key's is found where it is interned); else 0. */
#define PF_ANN_DEPTH 4096
static int put_annotation(cm_pfev *e, cm_buf *b, uint32_t field, const char *key, size_t klen, const cm_jval *v,
			  int depth)
{
	size_t m, at = b->len, body;
	int stop = 0;
	const cm_jval *k;
	const char *dot = key ? memchr(key, '.', klen) : NULL;
	if (v->has_iv == CM_PF_IV_INT && key && !dot && field < 16) {
		put_int_annotation(e, b, field, key, klen, v);
		return 0;
	}
	if (v->type == CM_J_NULL || ((v->type == CM_J_OBJ || v->type == CM_J_ARR) && !v->kids))
		return 0;
	if (depth > PF_ANN_DEPTH)
		return 2;
	if (v->type == CM_J_NUM && beyond_double(v))
		return 1;
	m = cm_pb_open(b, field);
	if (key)
		cm_pb_uint(b, DA_NAME_IID, intern(e, &e->keys, ID_ANNOTATION_NAMES, key, dot ? (size_t)(dot - key) : klen));
	body = b->len;
	if (dot) {
		stop = put_annotation(e, b, DA_DICT, dot + 1, klen - (size_t)(dot + 1 - key), v, depth + 1);
		goto close;
	}
	switch (v->type) {
	case CM_J_FALSE:
	case CM_J_TRUE:
		cm_pb_uint(b, DA_BOOL, v->type == CM_J_TRUE);
		break;
	case CM_J_NUM: {
		cm_int x;
		int64_t x64;
		if (v->has_iv == CM_PF_IV_INT)
			cm_pb_int(b, DA_INT, v->iv);
		else if (small_int(v->s, v->len, &x64))
			cm_pb_int(b, DA_INT, x64);
		else if (is_integer_text(v->s, v->len) && cm_py_int_of_number(v->s, v->len, &x) == 0 &&
		    x >= INT64_MIN && x <= (cm_int)UINT64_MAX) {
			if (x <= INT64_MAX)
				cm_pb_int(b, DA_INT, (int64_t)x);
			else
				cm_pb_uint(b, DA_UINT, (uint64_t)x);
		} else {
			cm_pb_double(b, DA_DOUBLE, number_of(v));
		}
		break;
	}
	case CM_J_STR:
		if (cm_pf_lone_surrogate(v->s, v->len)) {
			stop = 3;
			break;
		}
		cm_pb_bytes(b, DA_STRING, v->s, v->len);
		break;
	case CM_J_OBJ:
		for (k = v->kids; k && !stop; k = k->next)
			stop = put_annotation(e, b, DA_DICT, k->key, k->klen, k, depth + 1);
		break;
	case CM_J_ARR:
		for (k = v->kids; k && !stop; k = k->next)
			stop = put_annotation(e, b, DA_ARRAY, NULL, 0, k, depth + 1);
		break;
	}
close:
	if (stop && b->len == body) { /* nothing in it: taken back */
		b->len = at;
		return stop;
	}
	cm_pb_close(b, m);
	return stop;
}

/* ---- packets ---- */

/* Before a packet: define the events' clock (a ClockSnapshot: its 0 is
 * BASE on the trace's clock) and make it the sequence's default
 * (TracePacketDefaults), on the first packet, and again after the
 * incremental state was cleared (the defaults are part of it), BASE the
 * earliest time of the batch (next_base).  A batch with another base gets
 * a clock of its own, numbered on from CLOCK_EVENTS_FIRST (a global
 * clock): the trace processor (v55) converts every time on a clock by the
 * first snapshot of it, so one clock defined again per batch would put
 * the later batches' events at the first one's times.  This packet
 * carries the clearing. */
void cm_pf_clock_packet(cm_pfev *e)
{
	if (e->have_base && !e->cleared)
		return;
	if (!e->have_base || e->base != e->next_base)
		e->clock = e->clock ? e->clock + 1 : CLOCK_EVENTS_FIRST;
	e->base = e->next_base;
	e->have_base = 1;
	e->def_uuid = e->next_def_uuid;
	cm_pf_clock_bytes(e->out, e->clock, e->base, e->def_uuid);
	e->cleared = 0;
}

/* The bytes of a clock packet: the incremental state cleared, clock CLOCK
 * whose 0 is BASE on the trace's clock, and the defaults (that clock,
 * DEF_UUID's track when not 0), appended to B. */
void cm_pf_clock_bytes(cm_buf *b, uint32_t clock, int64_t base, uint64_t def_uuid)
{
	size_t pk, cs, c;
	pk = cm_pb_open(b, TRACE_PACKET);
	cm_pb_uint(b, TP_SEQ_ID, SEQ_ID);
	cm_pb_uint(b, TP_SEQ_FLAGS, SEQ_CLEARED);
	cs = cm_pb_open(b, TP_CLOCK_SNAPSHOT);
	c = cm_pb_open(b, CS_CLOCKS);
	cm_pb_uint(b, CLK_ID, clock);
	cm_pb_uint(b, CLK_TIMESTAMP, 0);
	cm_pb_close(b, c);
	c = cm_pb_open(b, CS_CLOCKS);
	cm_pb_uint(b, CLK_ID, CLOCK_BOOTTIME);
	cm_pb_uint(b, CLK_TIMESTAMP, (uint64_t)base);
	cm_pb_close(b, c);
	cm_pb_close(b, cs);
	c = cm_pb_open(b, TP_DEFAULTS);
	cm_pb_uint(b, DEF_CLOCK_ID, clock);
	if (def_uuid) {
		size_t d = cm_pb_open(b, DEF_TRACK_EVENT);
		cm_pb_uint(b, TED_TRACK_UUID, def_uuid);
		cm_pb_close(b, d);
	}
	cm_pb_close(b, c);
	cm_pb_close(b, pk);
}

/* The time of a packet: on the events' clock, or before its 0 on the
 * trace's own. */
void cm_pf_put_time(cm_pfev *e, cm_buf *b, int64_t ts)
{
	if (ts >= e->base) {
		cm_pb_uint(b, TP_TIMESTAMP, (uint64_t)(ts - e->base));
	} else {
		cm_pb_uint(b, TP_TIMESTAMP, (uint64_t)ts);
		cm_pb_uint(b, TP_CLOCK_ID, CLOCK_BOOTTIME);
	}
}

/* Write the packet of a slice end (TYPE_END) on track UUID at TS, naming
 * the slice NAME_IID (0: none, the innermost open slice). */
static void end_packet(cm_pfev *e, int64_t ts, uint64_t uuid, uint64_t name_iid)
{
	cm_buf *b = e->out;
	size_t pk, te;
	cm_pf_clock_packet(e);
	pk = cm_pb_open(b, TRACE_PACKET);
	cm_pf_put_time(e, b, ts);
	cm_pb_uint(b, TP_SEQ_ID, SEQ_ID); /* without, the trace processor drops it */
	te = cm_pb_open(b, TP_TRACK_EVENT);
	if (name_iid)
		cm_pb_uint(b, TE_NAME_IID, name_iid);
	cm_pb_uint(b, TE_TYPE, TYPE_END);
	cm_pf_put_track(e, b, uuid);
	cm_pb_close(b, te);
	cm_pb_close(b, pk);
}

/* Write the end of the last X event, held back until the element after
 * it: a flow right after an X of zero duration, at its ts, must come
 * between its begin and its end to bind to it, as the JSON's does. */
void cm_pf_flush_end(cm_pfev *e)
{
	if (!e->end_pending)
		return;
	end_packet(e, e->last_e, e->last_uuid, 0);
	e->end_pending = 0;
}

void cm_pf_members(const cm_jval *o, struct ev *ev)
{
	const cm_jval *k;
	cm_pf_ev_clear(ev);
	for (k = o->kids; k; k = k->next) {
		const cm_jval **slot = cm_pf_member_slot(ev, k->key, k->klen);
		if (slot)
			*slot = k;
	}
}

const cm_jval *cm_pf_unreadable_member(const cm_jval *o)
{
	const cm_jval *k;
	for (k = o->kids; k; k = k->next)
		if (k->type == CM_J_NUM && !k->has_iv &&
		    (k->s[0] == 'N' || k->s[k->len - 1] == 'y' ||
		     ((memchr(k->s, 'e', k->len) || memchr(k->s, 'E', k->len)) && isinf(number_of(k)))) &&
		    !(k->klen == 3 && (!memcmp(k->key, "pid", 3) || !memcmp(k->key, "tid", 3))))
			return k;
	return NULL;
}

/* cm_pf_time (pfevent.h) past the values kept as parsed: V's text read as
 * a time, or the refusal. */
int cm_pf_time_text(cm_pfev *e, const cm_jval *v, const char *what, const char *ph, int64_t off, int64_t *ns)
{
	if (v && v->type == CM_J_NUM && (v->s[0] == 'N' || v->s[v->len - 1] == 'y')) /* (NaN, Infinity: beyond_double) */
		return REFUSE(e, off, "a \"%s\" event whose %s is %.*s cannot be written as Perfetto protobuf (Perfetto refuses the trace)",
			      ph, what, (int)v->len, v->s);
	if (!v || v->type != CM_J_NUM || cm_pf_us_to_ns(v->s, v->len, ns) < 0 || *ns < 0)
		return REFUSE(e, off, "a \"%s\" event whose %s is %s cannot be written as Perfetto protobuf", ph, what,
			      !v ? "missing" : v->type != CM_J_NUM ? "not a number" : "negative or too large");
	return 0;
}

/* Encode a slice begin or an instant (TYPE) of event EV on track UUID at
 * TS into e->te (the track event body, without the flows). */
int cm_pf_body(cm_pfev *e, const struct ev *ev, int type, int64_t off)
{
	cm_buf *b = &e->te;
	const cm_jval *k;
	int stop;
	unsigned char *p;
	size_t n = 0;
	/* the head's three fields (cm_pb_uint's bytes: their tags one byte
	 * each) written in room made once: by cm_pb_uint each made its own,
	 * 3.5 M instructions of the 50k pair's .pftrace merge (BENCHMARKS.md
	 * "pfrender19"); intern writes elsewhere (e->interned) */
	_Static_assert(TE_CATEGORY_IIDS < 16 && TE_NAME_IID < 16 && TE_TYPE < 16, "one-byte tags");
	if (b->cap < 3 * 11)
		cm_buf_grow(b, 3 * 11);
	p = (unsigned char *)b->p;
	if (ev->cat && ev->cat->type == CM_J_STR) {
		p[n++] = TE_CATEGORY_IIDS << 3 | CM_PB_VARINT;
		n += cm_pb_varint_at(p + n, intern_fixed(e, e->catref, &e->cats, ID_CATEGORIES, ev->cat));
	}
	/* Perfetto's JSON import names a slice without a name "[No name]" */
	if (ev->name && ev->name->type == CM_J_STR && ev->name->len) {
		p[n++] = TE_NAME_IID << 3 | CM_PB_VARINT;
		n += cm_pb_varint_at(p + n, intern_fixed(e, e->nameref, &e->names, ID_NAMES, ev->name));
	} else if ((!ev->name || ev->name->type == CM_J_STR) && type != TYPE_COUNTER && type != TYPE_END && type) {
		p[n++] = TE_NAME_IID << 3 | CM_PB_VARINT;
		n += cm_pb_varint_at(p + n, intern(e, &e->names, ID_NAMES, "[No name]", 9));
	} else if (ev->name && ev->name->type != CM_J_STR) {
		b->len = 0;
		return REFUSE(e, off, "an event whose name is not a string cannot be written as Perfetto protobuf");
	}
	if (type) {
		p[n++] = TE_TYPE << 3 | CM_PB_VARINT;
		n += cm_pb_varint_at(p + n, (uint64_t)type);
	}
	b->len = n;
	if (ev->args && ev->args->type != CM_J_OBJ)
		return REFUSE(e, off, "an event whose args is not an object cannot be written as Perfetto protobuf");
	if (ev->args)
		for (k = ev->args->kids; k; k = k->next) {
			uint64_t iid;
			struct cm_pfkeyref *r = NULL;
			/* a literal key met since the tables' clearing: its iid
			 * by its pointer, none of its bytes read (the keys'
			 * cache's hash and compare were 8 M instructions of the
			 * 50k pair's .pftrace merge: BENCHMARKS.md "pfrender19") */
			if (k->has_iv == CM_PF_IV_INT && e->lit) {
				r = cm_pf_keyref(e, k->key);
				if (r->key == k->key && r->klen == k->klen && r->gen == e->keygen) {
					put_int_iid(b, TE_ANNOTATIONS, r->iid, k);
					continue;
				}
			}
			/* a key that the keys' cache holds has no dot: only keys
			 * without one are interned whole (put_annotation interns a
			 * dotted one by its parts), so has_dot's test is left out
			 * for most (7 M instructions of the 50k pair's .pftrace
			 * merge: BENCHMARKS.md "pfcpu16") */
			if (k->has_iv == CM_PF_IV_INT && ((iid = cm_strtab_cached(&e->keys, k->key, k->klen)) != 0 ||
							  (!has_dot(k->key, k->klen) && /* (k->key: an object's) */
							   (iid = intern(e, &e->keys, ID_ANNOTATION_NAMES, k->key, k->klen)) != 0))) {
				if (r) /* (the key interned whole: its iid stays until the tables' clearing) */
					r->key = k->key, r->klen = k->klen, r->gen = e->keygen, r->iid = iid;
				put_int_iid(b, TE_ANNOTATIONS, iid, k);
				continue;
			}
			if ((stop = put_annotation(e, b, TE_ANNOTATIONS, k->key, k->klen, k, 1)) == 2)
				return REFUSE(e, off, "an event whose args nest more than %d deep (objects, arrays and the dots of keys) cannot be written as Perfetto protobuf",
					      PF_ANN_DEPTH);
			if (stop) {
				if (stop == 3)
					return REFUSE(e, off, CM_PF_SURROGATE_MSG);
				break; /* the JSON import keeps none from there on */
			}
		}
	if (e->lone) {
		e->lone = 0;
		return REFUSE(e, off, CM_PF_SURROGATE_MSG);
	}
	return 0;
}

/* "C": one counter track per argument, "NAME KEY" (or "NAME id: ID KEY", a string ID),
 * made (and described) here; its values added to e->wt.cvals. */
static int counter(cm_pfev *e, const struct ev *ev, int64_t off)
{
	int64_t ts, pk, ps;
	const cm_jval *pname, *k;
	struct track *proc;
	cm_buf *n = &e->scratch;
	if (cm_pf_time(e, ev->ts, "ts", "C", off, &ts) < 0)
		return -1;
	if (cm_pf_str_event(e, ev->pid, ev->tid, off, ts, INT64_MAX) < 0)
		return -1;
	if (cm_pf_id(e, ev->pid, -1, &pk, &ps, &pname) < 0)
		return REFUSE(e, off, "a \"C\" event whose pid is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)");
	proc = cm_pf_track(e, pk, ps, NO_TID, NO_TID, pname);
	if (!ev->args || ev->args->type != CM_J_OBJ)
		return REFUSE(e, off, "a \"C\" event without an args object cannot be written as Perfetto protobuf");
	for (k = ev->args->kids; k; k = k->next) {
		uint64_t uuid;
		struct cval cv;
		if (k->type != CM_J_NUM)
			return REFUSE(e, off, "a \"C\" event whose value \"%.*s\" is not a number cannot be written as Perfetto protobuf",
				      (int)k->klen, k->key);
		if (beyond_double(k))
			break; /* its values up to it, as an event's args (beyond_double) */
		n->len = 0;
		cm_buf_put(n, &pk, sizeof pk); /* the key: the process, then the name */
		if (ev->name && ev->name->type == CM_J_STR)
			cm_buf_put(n, ev->name->s, ev->name->len);
		/* Perfetto's JSON import names a counter by its id only when
		 * that is a string, and not "" (an integer id is left out) */
		if (ev->id && ev->id->type == CM_J_STR && ev->id->len) {
			cm_buf_lit(n, " id: ");
			cm_buf_put(n, ev->id->s, ev->id->len);
		}
		cm_buf_putc(n, ' ');
		cm_buf_put(n, k->key, k->klen);
		if (!(uuid = cm_strtab_get(&e->counters, n->p, n->len, e->next_uuid))) {
			if (cm_pf_lone_surrogate(n->p + sizeof pk, n->len - sizeof pk))
				return REFUSE(e, off, CM_PF_SURROGATE_MSG);
			uuid = e->next_uuid++;
			size_t p = cm_pb_open(e->out, TRACE_PACKET), td;
			cm_pb_uint(e->out, TP_SEQ_ID, DESC_SEQ_ID);
			td = cm_pb_open(e->out, TP_TRACK_DESCRIPTOR);
			cm_pb_uint(e->out, TD_UUID, uuid);
			cm_pb_uint(e->out, TD_PARENT, proc->uuid);
			cm_pb_bytes(e->out, TD_NAME, n->p + sizeof pk, n->len - sizeof pk);
			cm_pb_bytes(e->out, TD_COUNTER, "", 0);
			cm_pb_close(e->out, td);
			cm_pb_close(e->out, p);
		}
		/* its packet is written in its place among the events (pfseg.c) */
		cv.ts = ts;
		cv.uuid = uuid;
		cv.d = number_of(k);
		cm_buf_put(&e->wt.cvals, &cv, sizeof cv);
	}
	return 0;
}

int cm_pfev_element(cm_pfev *e, const char *s, size_t n, int64_t off)
{
	cm_jval *v;
	struct ev ev;
	cm_arena_reset(e->arena);
	v = cm_jval_parse_py(e->arena, s, n);
	if (!v || v->type != CM_J_OBJ)
		return REFUSE(e, off, "a traceEvents element that is not an object cannot be written as Perfetto protobuf");
	cm_pf_members(v, &ev);
	if (ev.ph && cm_jval_streq(ev.ph, "M"))
		return cm_pf_metadata(e, &ev, off);
	return counter(e, &ev, off);
}

void cm_pfwrite_free(struct cm_pfwrite *w)
{
	cm_buf_free(&w->rec);
	cm_buf_free(&w->lanes);
	cm_buf_free(&w->cvals);
}

void cm_pfev_finish(cm_pfev *e)
{
	cm_pf_flush_end(e);
}
