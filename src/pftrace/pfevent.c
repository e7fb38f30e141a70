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
 *   - args: one debug annotation each (pfbody.c), nested for objects and
 *     arrays, with the JSON type: integer, unsigned beyond int64, double
 *     (a number with a fraction or exponent), string, bool; null is left
 *     out (Perfetto's JSON import leaves it out too).
 * Event names, categories and annotation keys are interned (InternedData,
 * pfbody.c), on one packet sequence, starting over with each batch of
 * elements (pfbatch.c, which encodes batches on threads); when the tables
 * pass INTERN_MAX bytes within a batch (or CUPTIMERGE_PFT_INTERN's, a
 * testing aid) they are cleared and the next packet says so
 * (SEQ_INCREMENTAL_STATE_CLEARED), so memory stays flat on a trace of any
 * size.  Tracks are remembered for the whole run (a trace has few).  Each
 * clearing also sets the sequence's default track (TrackEventDefaults):
 * the batch's busiest thread, whose events then write no track uuid
 * (pfbatch.c). */
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
	cm_buf_free(&e->runs);
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
		     ((memchr(k->s, 'e', k->len) || memchr(k->s, 'E', k->len)) && isinf(cm_pf_number_of(k)))) &&
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
		cv.d = cm_pf_number_of(k);
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
