/* gpurender_int.h - what the render (gpurender.c) lends the render in
 * groups for an encoder (gpuencgroups.c): a worker's render, and the
 * render of one record with the elements' starts and members noted; and
 * what it shares with gpurendersync.c (the flow events and the drawn
 * syncs): the pieces of an event's text, each noting its members for an
 * encoder. */
#ifndef CM_GPURENDER_INT_H
#define CM_GPURENDER_INT_H

#include "gpu/gpuconv_int.h"
#include "gpu/gpumembers.h"
#include "json/jwrite.h"

/* What one worker needs to write events: its own scratch space; the tables
 * of cm_gpu are only read. */
struct render {
	const cm_gpu *g;
	struct args args;
	cm_arena *scratch;
	cm_buf text, dumps;
	struct { /* an API cbid's name in the table (not NULL) and whether it starts a flow */
		int64_t cbid;
		const char *name;
		size_t len;
		int driver, flow;
		cm_buf head; /* {"ph":"X","cat":...,"name":... of its X event, as gpu_x_head writes it */
		int plain;   /* the name's text in HEAD is its bytes (no escape): the lean mode's node points there */
	} api[64];
};

/* Where the render of a record for an encoder notes its elements: where
 * each begins (its ',', a size_t each, into MARKS), and, when M is not
 * NULL, their members (gpumembers.h). */
struct gpu_emit {
	cm_buf *marks;
	struct gpu_members *m;
};

/* ---- the pieces of an event's text (ES, M: NULL for the JSON's render) */

/* ES's members (NULL: none noted; always with ES NULL). */
static inline struct gpu_members *gpu_es_members(const struct gpu_emit *es) { return es ? es->m : NULL; }

/* ,"ts":TS,"dur":DUR for START/END ns; the ts text is handed back
 * (TSTEXT: CM_US_TEXT_MAX bytes) for a flow event; noted in M (not NULL).
 * In M's lean mode a time kept whole is not written (nor the ts text
 * handed back: the flow's is kept whole too, the same nanoseconds). */
static inline void gpu_times_text(const cm_gpu *g, cm_buf *b, cm_int start, cm_int end, char *tstext, size_t *tslen,
				  struct gpu_members *m)
{
	double d;
	size_t at;
	*tslen = 0;
	if (!gpu_members_lean_time(m, "ts", 2, start - g->base_ns)) {
		*tslen = cm_jw_us_text(start - g->base_ns, tstext, &d);
		cm_buf_lit(b, ",\"ts\":");
		at = b->len;
		cm_buf_put_short(b, tstext, *tslen);
		if (m)
			gpu_members_time(m, "ts", 2, b, at, start - g->base_ns);
	}
	if (!gpu_members_lean_time(m, "dur", 3, end - start)) {
		cm_buf_lit(b, ",\"dur\":");
		at = b->len;
		cm_jw_us_of_ns(b, end - start);
		if (m)
			gpu_members_time(m, "dur", 3, b, at, end - start);
	}
}

/* The ,"pid":P,"tid":T of the X event just written: where it starts in
 * the buffer (the X event ends the buffer), for its flow, which has the
 * same row: copied, not written from the numbers again. */
static inline size_t gpu_row_mark(const cm_buf *b) { return b->len; }

/* An element's separating comma, where it begins noted in ES (when not
 * NULL: cm_gpu_write_groups), its members from here on too (ES's M). */
static inline void gpu_el_begin(struct gpu_emit *es, cm_buf *b)
{
	if (es) {
		cm_buf_put(es->marks, &b->len, sizeof b->len);
		if (es->m)
			gpu_members_element(es->m);
	}
	cm_buf_putc(b, ',');
}

/* gpu_el_begin for an element whose members the caller notes at once
 * (gpu_members_flow, gpu_members_x): its comma, where it begins noted. */
static inline void gpu_el_mark(struct gpu_emit *es, cm_buf *b)
{
	cm_buf_put(es->marks, &b->len, sizeof b->len);
	cm_buf_putc(b, ',');
}

/* The members of an X event's head, {"ph":"X","cat":"CAT","name":NAME,
 * written from AT to B's end (CAT, a literal of the render's, CATLEN
 * bytes, needs no escape), noted in M. */
static inline void gpu_head_members(struct gpu_members *m, const cm_buf *b, size_t at, const char *cat,
				    size_t catlen)
{
	gpu_members_lit(m, "ph", 2, "X", 1);
	gpu_members_lit(m, "cat", 3, cat, catlen);
	gpu_members_str(m, "name", 4, b, at + 26 + catlen); /* after {"ph":"X","cat":"CAT","name": */
}

/* The integer member KEY (KLEN bytes) of value V: its text, PRE (the
 * bytes before the value, PRELEN of them: at least ,"KEY":) then V,
 * written to B and noted in M (not NULL); in M's lean mode neither text,
 * the value noted alone.  GPU_INT_TEXT takes PRE and KEY as literals. */
static inline void gpu_int_text(cm_buf *b, struct gpu_members *m, const char *pre, size_t prelen, const char *key,
				size_t klen, cm_int v)
{
	size_t at;
	if (gpu_members_lean_int(m, key, klen, v))
		return;
	cm_buf_put(b, pre, prelen);
	at = b->len;
	cm_jw_int(b, v);
	if (m)
		gpu_members_int(m, key, klen, b, at, v);
}
#define GPU_INT_TEXT(b, m, pre, key, v) gpu_int_text((b), (m), (pre), sizeof(pre) - 1, (key), sizeof(key) - 1, (v))

/* ,"pid":PID,"tid":TID (exported): the rest of gpu_x_head's text; noted
 * in M (not NULL), and kept for its flow (gpu_members_row); in M's lean
 * mode no text for either when kept whole. */
static inline void gpu_row_text(cm_buf *b, cm_int pid, cm_int tid, struct gpu_members *m)
{
	GPU_INT_TEXT(b, m, ",\"pid\":", "pid", pid);
	GPU_INT_TEXT(b, m, ",\"tid\":", "tid", cm_tid_export(tid));
	if (m)
		gpu_members_row(m);
}

/* gpu_x_head's text before the pid: {"ph":"X","cat":CAT,"name":NAME */
static inline void gpu_x_head_start(cm_buf *b, const char *cat, const char *name, size_t nlen)
{
	cm_buf_lit(b, "{\"ph\":\"X\",\"cat\":");
	cm_jw_string(b, cat, strlen(cat));
	cm_buf_lit(b, ",\"name\":");
	cm_jw_string(b, name, nlen);
}

/* The External id Kineto writes on the GPU-side event of correlation CORR:
 * that of the CPU operator linked to it, 0 when none (version 2 only). */
static inline cm_int gpu_cpu_ext(const cm_gpu *g, cm_int corr)
{
	const int64_t *e;
	int64_t c;
	if (!g->link.cext || !cm_id_key(corr, &c, NULL))
		return 0;
	e = cm_idmap_get(g->link.cext, c);
	return e ? cm_id_value(*e, g->win.idsigns[CM_IDS_EXT]) : 0;
}

/* ---- gpurender.c */

/* R's render ready for G (R zeroed before). */
void gpu_render_init(struct render *R, const cm_gpu *g);
/* A worker's render (not R itself) freed. */
void gpu_render_free(struct render *R);
/* The events of the record REC, each with a comma in front, into OUT, as
 * the JSON's render writes them, noted in ES. */
void gpu_render_record(struct render *R, const cm_gpurec *rec, cm_buf *out, struct gpu_emit *es);

/* ---- gpugroup.c: a group of an encoder's (cm_gpu_groups), in a
 * worker's output OUT as gpuencgroups.c and gpuencspans.c lay it out */

/* A group opened at OUT's end (its length a multiple of 8), its header
 * first (its place in *AT) then GR's OPEN(ECTX).  0, or OPEN's failure. */
int gpu_group_open(const cm_gpu_groups *gr, void *ectx, cm_buf *out, size_t *at);
/* The group opened at AT closed (GR's CLOSE), its length in its header;
 * none at all when it had no element (NEL 0); OUT then padded to a
 * multiple of 8.  0, or CLOSE's failure. */
int gpu_group_close(const cm_gpu_groups *gr, void *ectx, size_t at, size_t nel, cm_buf *out);
/* An ordered pool's sink (SCTX: the cm_gpu_groups): a worker's groups
 * handed on in order, to GR's ADOPT first when it has one, then ENCODED
 * each. */
int gpu_groups_sink(void *sctx, cm_buf *out);

/* ---- gpuencspans.c: the spans' pieces for a pool that is not theirs
 * alone (cm_gpu_write_groups with spans: after the window's pieces, in
 * the same pool) */

/* The spans' blocks, and a context for each of N workers encoding them
 * with GR's encoders (ECTX[i], BEGIN and END as cm_gpu_write_span_groups
 * calls them). */
struct gpu_span_job;
struct gpu_span_job *gpu_span_job_new(const cm_gpu *g, int n, const cm_gpu_groups *gr);
/* Its blocks: a piece each. */
int gpu_span_job_blocks(const struct gpu_span_job *j);
/* Block K's spans, as the encoder's piece PIECE, encoded by WORKER (0 to
 * N - 1: one piece at a time each) into OUT.  0, or GR's failure. */
int gpu_span_job_piece(struct gpu_span_job *j, int worker, uint64_t piece, int k, cm_buf *out);
void gpu_span_job_free(struct gpu_span_job *j);

/* ---- gpurules.c */

/* gpu_span_put's text of a span, a comma in front, into B; with M (not
 * NULL, reset for it: gpu_members_reset) its members noted there, one
 * element, its text whole (not lean: a ts or dur that is not the decimal
 * of its nanoseconds, a double's repr, is read from its text). */
void gpu_span_text(cm_buf *b, struct gpu_members *m, const char *name, size_t len, cm_int pid, cm_int tid, double ts,
		   double dur, cm_int ext);

/* ---- gpurendersync.c (below gpurender.c, which calls it) */

/* An ac2g flow event: ph "s" (from an API row) or "f" (into a GPU row), on
 * the row whose ,"pid":P,"tid":T text is B's bytes [ROW, ROW + ROWLEN)
 * (the row's members noted last, gpu_members_row), at TS_NS, whose text
 * is TS[0..TSLEN). */
void gpu_render_flow(struct gpu_emit *es, cm_buf *b, char ph, cm_int id, size_t row, size_t rowlen, const char *ts,
		     size_t tslen, cm_int ts_ns);


/* The event of the sync record R, when drawn and kept, with a comma in
 * front, into B, noted in ES (gpu_render_record's). */
void gpu_render_sync(struct render *R, const cm_gpurec *r, cm_buf *b, struct gpu_emit *es);

#endif
