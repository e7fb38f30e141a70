/* pfstream.h - what the Perfetto transcoder's front (pfstream.c: the text
 * taken, the elements batched, the pool; pfreport.c: the -v lines), the
 * walk of the document (pfcut.c) and the workers' chunks of text
 * (pfchunk.c) share.
 * Private to src/pftrace. */
#ifndef CM_PFSTREAM_H
#define CM_PFSTREAM_H

#include "pftrace/pftrace.h"
#include "pftrace/pfevent.h"
#include "pftrace/pflaneq.h"
#include "pftrace/pfpass.h"
#include "base/handoff.h"
#include "base/opool.h"
#include "json/jscan.h"

#include <pthread.h>

enum state {
	S_START,      /* before the document's '{' */
	S_KEY,        /* before a member's key, or the '}' (first: FIRST set) */
	S_KEY_TEXT,   /* inside a key */
	S_COLON,      /* after a key */
	S_VALUE,      /* before a member's value */
	S_SKIP,       /* inside a member's value that is skipped */
	S_AFTER,      /* after a member: ',' or '}' */
	S_ELEM,       /* before an element, or the ']' (first: FIRST set) */
	S_ELEM_TEXT,  /* inside an element */
	S_ELEM_AFTER, /* after an element: ',' or ']' */
	S_END,        /* after the document: whitespace only */
};

/* The walk of the document (pfcut.c): where it is in the text, all of it,
 * so that another thread can take it over between two pieces. */
struct cm_pfcut {
	enum state st;
	int first, failed;
	int quiet;        /* a guess's walk (pfstream.c): nothing reported, FAILED set */
	int64_t offset;   /* of the piece being read, in the text */
	cm_jscan sc;
	cm_buf key;       /* a key's text, quotes and all */
	cm_buf elem;      /* an element cut by a piece's end */
	int64_t elem_off; /* where the element began */
	size_t elem_at;   /* ... in the piece being read */
	int in_events;    /* the member being read is traceEvents */
	int checked_key;  /* in_events is known for it */
	cm_arena *arena;  /* for decoding a key with escapes (made when needed) */
	const char *label;
	/* each element found, whole: its text S[0..N) at OFF in the document
	 * (S lasts until the walk's next piece); 0, or -1 to stop (the walk
	 * then fails, the callee having reported) */
	int (*emit)(void *ctx, const char *s, size_t n, int64_t off);
	void *ctx;
};

/* A walk at the document's start (S_START, offset 0) naming LABEL in its
 * messages; its memory freed; two walks exchanged (their memory too). */
void cm_pfcut_init(struct cm_pfcut *c, const char *label);
void cm_pfcut_free(struct cm_pfcut *c);
void cm_pfcut_swap(struct cm_pfcut *a, struct cm_pfcut *b);

/* Read the text S[0..N), the next piece of the document: the top level
 * walked, each element handed to EMIT.  0, or -1 after reporting (only
 * FAILED set when QUIET). */
int cm_pfcut_scan(struct cm_pfcut *c, const char *s, size_t n);

/* -v's phases (pfreport.c): the text before the inserted
 * batches (all of it when none were), the document's own batches inserted
 * before those (the merge's CPU trace's parts: cm_pft_insert_own_begin's
 * runs), the inserted batches (the writer's: cm_pft_insert_begin's), the
 * text after them; a block's is the writer's phase when it was put (the
 * pool's class: cm_opool_set_class), which the sequential part and the
 * passer are then told with its batch.  The text between two runs of the
 * document's own batches, and after the last, is the text before's: it is
 * walked as that is, and the writer's batches have not begun. */
enum { PH_BEFORE, PH_PARTS, PH_INSERTED, PH_AFTER, PH_N };

/* Where a worker's walk puts the elements it finds (pfchunk.c). */
struct elctx {
	struct pfworker *w;
	cm_buf *list;
};

/* A worker's context (the pool's WCTX; pfchunk.c's from -j 2). */
struct pfworker {
	cm_pft *t;
	cm_pfev *ev;
	struct cm_pfcut guess, walk; /* the guess's walk; the walk handed on */
	cm_buf lguess, lwalk;        /* their elements (pfchunk.c's struct elref) */
	cm_buf strad;                /* the text of an element cut by the chunk's start */
	const char *text;            /* the chunk being walked */
	size_t n;
	struct elctx cguess, cwalk;
	double cut_cpu;              /* -v: walking chunks */
	double hand_wait;            /* -v: waiting for the walk of the chunk before */
	double hand_wait_ph[PH_N];   /* ... of it by the chunk's phase (struct chunk_head) */
	uint64_t held, missed;       /* -v: guesses that held, chunks walked again */
	int niced;                   /* CUPTIMERGE_PFT_NICE looked at (pfpool.c) */
};

/* pfbatch.c: the batch SEQ of cm_pfbatch_add's elements P[0..N) (no
 * header) encoded as cm_pfbatch_encode does. */
int cm_pfbatch_encode_seq(cm_pfev *w, uint64_t seq, const char *p, size_t n, cm_buf *out);
/* pfbatch.c: the records REC of a batch encoded before its place was
 * known (cm_pft_enc_close's, alone in REC, without a number and their
 * slices not yet handed to the lanes' queue) numbered SEQ, and their
 * slices handed to Q. */
void cm_pfbatch_put_lanes(cm_pflaneq *q, uint64_t seq, cm_buf *rec);

/* A wait's seconds in all, for -v, and their shape: how many waits of
 * over 0.2 ms and the longest; many short ones are threads waking each
 * other, a few long ones one side stalled (bench/dev-perf16.sh asks
 * which). */
struct pft_waits {
	double total;
	unsigned long over;
	double longest;
};

/* WAITS: a wait of D seconds more. */
static inline void pft_waits_add(struct pft_waits *w, double d)
{
	w->total += d;
	if (d > 0.0002)
		w->over++;
	if (d > w->longest)
		w->longest = d;
}

/* What a phase took, for -v: on the writer's thread, from when it began
 * (W_FROM, cm_now_s; 0: not begun) to when the next one did or the text
 * ended (W_TO), W_TIME in cm_pft_write's and the inserts' calls and W_PUT
 * of that waiting for a slot; on the sequential part's, its first batch
 * begun (S_FROM) and its last done (S_TO), its wall (S_BUSY) and CPU
 * (S_CPU) on them, the waits for each (S_WAIT: the gap since the batch
 * before was done, on a thread of its own), and pfevent.h's in order,
 * lane waits and packets written there. */
struct pft_phase {
	double w_from, w_to, w_time, w_put;
	double s_from, s_to, s_busy, s_cpu, in_order, lane_wait, wrote_here_s;
	unsigned long wrote_here;
	struct pft_waits s_wait;
	/* an inserting phase's (PH_PARTS, PH_INSERTED): its batches inserted,
	 * and on the direct path its thread's waits for the text's batches
	 * before them to be handed on and for room in the handoff */
	unsigned long long ins_recs;
	double ins_drain;
	struct pft_waits ins_room;
};

/* A condition variable for the workers waiting on the walk of the chunk
 * before theirs, by their chunk's number: a walk handed on wakes the one
 * worker that waits for it, not all. */
#define PFT_HAND_CVS 32

struct cm_pft {
	cm_pft_sink sink;
	void *ctx;
	char *label;
	int failed;
	cm_buf out;       /* protobuf made, not yet passed on */
	cm_pfev *ev;      /* the sequential part (the pool's sink) */
	int threads;      /* workers (cm_pft_threads) */
	size_t batch_max; /* PFT_BATCH, or CUPTIMERGE_PFT_BATCH's: the batches' span of text */
	size_t elem_max;  /* the longest element taken (PFT_ELEM_MAX, or CUPTIMERGE_PFT_ELEM_MAX's) */
	size_t seq_queue; /* PFT_SEQ_QUEUE, or CUPTIMERGE_PFT_SEQ_QUEUE's: the sequential part's queue */
	cm_pflaneq *lq;   /* the threads' lanes (pflaneq.c), made with the pool */
	cm_pfties *ties;  /* cm_pft_ties': the merge's calls, whose ties the lanes keep (pflanetie.c), or NULL */
	uint64_t ties_until; /* ... the calls' up to this batch (the inserted batches' first; UINT64_MAX until then) */
	uint64_t ties_spans; /* ... the spans' up to this one (their first; UINT64_MAX until then) */
	cm_opool *pool;   /* made with the first batch */
	cm_handoff *seq;  /* the sequential part's thread (pfstream.c's batch_sink), or NULL: on the pool's sink */
	cm_handoff_stats qst; /* -v: its seconds working, waiting for batches */
	int dropping;     /* the run failed: the batches left are dropped unseen */
	struct pfworker *workers;
	void **wctx;
	/* -j 1: the walk on the writer's thread, into batches */
	int par;          /* from -j 2: the text in chunks, each walked by a worker */
	struct cm_pfcut cut;
	cm_buf batch;     /* elements for the next batch (cm_pfbatch_add) */
	uint64_t batch_seq; /* that batch's number */
	/* from -j 2: the writer's chunk, and the walk handed from chunk to chunk */
	cm_buf fill;      /* the chunk being filled: its number, then its text */
	uint64_t chunk_seq; /* its number */
	uint64_t walk_seq;  /* the number of its walk: the text's chunks before it (chunk_seq less the
			     * batches inserted) */
	/* the text's bytes so far; where the spans are counted from (0, or
	 * where the last batches were inserted) and, at -j 1, the number of
	 * the batch of the first span */
	int64_t text_off, span_base;
	uint64_t seq_base;
	cm_buf ins;          /* an inserted batch being queued (or its reference: struct pft_ref) */
	/* the inserted batches handed straight to the sequential part
	 * (pfinsert.c's direct path, cm_pft_insert_direct): */
	int direct;
	int jobs;            /* cm_pft_threads' N (the writer's threads at most, for the lanes' ring) */
	uint64_t ins_base;   /* the lanes' number of the writer's piece 0 */
	uint64_t ins_pieces; /* the pieces seen: 1 + the highest number (atomic) */
	uint64_t put_blocks; /* blocks put in the pool (the writer's thread) */
	uint64_t handed;     /* ... handed to the sequential part (atomic: the pool's sink) */
	uint64_t ins_target; /* put_blocks at cm_pft_insert_begin: handed before the first inserted batch */
	int ins_drained;     /* they were (the inserting thread's) */
	int drain_waiting;   /* that thread waits for them (atomic) */
	int ins_stop;        /* a block or the pool's sink failed: no wait for them (atomic) */
	pthread_mutex_t gmu; /* the group buffers' list, and the wait for the text's batches */
	pthread_cond_t gcv;
	struct pft_gbuf *gfree, *gall; /* the group buffers free; all of them */
	/* the writer's buffers of inserted batches taken (cm_pft_insert_adopt),
	 * each kept for reuse once the pool's workers have copied its last
	 * batch; CUR: the one the next batches lie in (or NULL) */
	struct pft_piece **pieces;
	size_t npieces;
	struct pft_piece *cur;
	pthread_mutex_t hmu;
	pthread_cond_t hcv[PFT_HAND_CVS]; /* chunk N's worker waits on hcv[N % PFT_HAND_CVS] */
	struct cm_pfcut hand; /* the walk where chunk HAND_SEQ begins */
	uint64_t hand_seq1;   /* that number + 1; 0: taken */
	int hand_stop;        /* a chunk failed, or the run: no walk will come */
	int hand_on;          /* hmu and hcv made */
	/* the passer thread (from -j 2, pfpass.c): passes the protobuf on
	 * (the sink: the file's writes), off the sequential part's thread */
	cm_pfpass *pass;
	int no_pass; /* none could be made: the sink on the sequential part's thread */
	/* for -v (cm_pft_set_verbose, as it was when this transcoder was
	 * made): where the time went */
	int verbose;
	cm_opool_stats pst;  /* the pool's */
	double w_time, w_put;  /* the writer's thread in cm_pft_write; of it in cm_opool_put */
	double t_first;        /* when the first text came */
	double s_cpu;          /* the sink's CPU (batch_sink) */
	double p_wait;         /* ... waiting for the passer (pfpass.c) */
	double p_wrote;        /* the passer's writing of the batches' packets */
	/* -v, by phase */
	int wph;               /* the writer's phase now (PH_*) */
	int wph_own;           /* ... before a run of the document's own batches (back to it at its end) */
	int sph;               /* the sequential part's: that of the batch it works through */
	double s_done;         /* when the sequential part last finished a batch (0: none yet) */
	cm_pft_probe probe;    /* cm_pft_set_probe's, or NULL */
	struct pft_phase ph[PH_N];
	cm_opool_stats pcst[CM_OPOOL_CLASSES]; /* the pool's figures by phase */
	struct cm_pfpass_phase pph[CM_PFPASS_PHASES]; /* the passer's (or this thread's sink calls) */
};

/* A block of the pool begins with its batch's number, the top bits
 * saying which: a chunk of text (from -j 2: struct chunk_head) or a batch
 * of elements (-j 1: cm_pfbatch_add's), neither; a batch inserted as
 * records (cm_pft_enc_open/_elem/_close's), BLK_RECS. */
#define BLK_RECS ((uint64_t)1 << 63)
/* With BLK_RECS: the block holds no records but where they lie (struct
 * pft_ref), in a buffer the writer handed over (cm_pft_insert_adopt). */
#define BLK_REF ((uint64_t)1 << 62)

/* A buffer of the writer's inserted batches, taken whole: REFS, its
 * batches not yet copied by a worker (atomic; 0: free for the next). */
struct pft_piece {
	cm_buf b;
	size_t refs;
};

/* A BLK_REF block after its first 8 bytes: the batch's N bytes at OFF of
 * PIECE's. */
struct pft_ref {
	struct pft_piece *piece;
	uint64_t off, n;
};

/* A buffer of an encoder of the direct path (pfinsert.c): a group's
 * records, encoded into it on the writer's worker and handed, by a swap,
 * to the sequential part; kept by the transcoder (ALL: the list of every
 * one, freed with it), reused from the free list (NEXT). */
struct pft_gbuf {
	cm_buf b;
	struct pft_gbuf *next, *all;
};

/* A chunk's header: its batch's number, its walk's (the chunks before it:
 * inserted batches have none), where its text begins in the text, and
 * the writer's phase when it was begun (PH_*, for -v). */
struct chunk_head {
	uint64_t seq, walk;
	int64_t base;
	int ph;
};

/* -v: TOOK seconds on the writer's thread (cm_pft_write, an insert) in
 * phase PH, WAITED of them waiting (for a slot, room, the batches
 * before); in all and by phase. */
static inline void cm_pft_note_writer(cm_pft *t, int ph, double took, double waited)
{
	t->w_time += took;
	t->ph[ph].w_time += took;
	t->w_put += waited;
	t->ph[ph].w_put += waited;
}

/* Queue the block IN (a batch, or a chunk, or an inserted batch: its
 * first 8 bytes as above) in the pool, made with the first.  0 or -1. */
int cm_pft_put_block(cm_pft *t, cm_buf *in);

/* The batch B (its records) to the sequential part: queued for its thread
 * (B swapped for an empty buffer) or worked through here; PH its phase
 * (-v).  The pool's sink (in order), and pfinsert.c's direct path once
 * the pool has handed it every block before.  0, or -1 (the run is
 * stopped: dropping set, or the failure held by the pool's sink). */
int cm_pft_hand(cm_pft *t, cm_buf *b, int ph);
/* The pool, the lanes, the sequential part's thread made, if not yet. */
void cm_pft_start(cm_pft *t);
/* Wake the thread that waits for the text's batches before the inserted
 * ones (pfinsert.c). */
void cm_pft_wake(cm_pft *t);

/* (pfpool.c) Pass the protobuf made (t->out) on when there is enough
 * (ALL: whatever there is): to the passer (made with the first, from -j
 * 2), or to the sink on this thread.  0, or -1 when the sink failed. */
int cm_pft_drain(cm_pft *t, int all);
/* (pfpool.c) pfseg.c's batches of packets to write (cm_pfev's emit): what
 * t->out holds, then W's packets, written and passed on by the passer.  1
 * when there is no passer or its queue is full (pfseg.c then writes them
 * on its own thread), 0, or -1. */
int cm_pft_emit_batch(void *ctx, struct cm_pfwrite *w);

/* The writer's thread enters phase PH (PH_*, for -v): the blocks it puts
 * from now on are counted in it, and the phase before ends now. */
void cm_pft_phase(cm_pft *t, int ph);

/* pfreport.c, -v: T's two lines (the whole run's figures, then by
 * phase), once it has finished. */
void cm_pft_report(const cm_pft *t);

/* -j 1: the batches through the span of the text's last byte so far
 * handed to the pool (none when no text came since the spans' base).
 * 0 or -1. */
int cm_pft_put_spans(cm_pft *t);

/* An element of N bytes at OFF, over t->elem_max (its length would not
 * fit the batches' and records' 32 bits): reported, -1. */
int cm_pft_elem_refuse(const cm_pft *t, size_t n, int64_t off);

/* pfchunk.c: a worker W of T made (its walks, its encoder), and freed. */
void cm_pft_worker_init(struct pfworker *w, cm_pft *t);
void cm_pft_worker_free(struct pfworker *w);

/* pfchunk.c: the pool's work from -j 2: the chunk IN (struct chunk_head,
 * then its text) walked and the elements that end in it encoded into OUT
 * (cm_pfbatch_encode_elems).  0, -1 (reported), or -2 (the run failed
 * elsewhere: nothing to report). */
int cm_pft_chunk_work(struct pfworker *w, const cm_buf *in, cm_buf *out);

/* pfchunk.c: no walk will be handed on (a chunk failed, or the run): the
 * workers waiting for one stop waiting. */
void cm_pft_hand_abort(cm_pft *t);

/* The run has failed (reported), or is over: the pool and the passer
 * stopped, what they had left dropped (the passer's passed on; the file is
 * not kept), so that nothing of the transcoder runs once its caller has it
 * back (the output's state, which the passer writes, is the caller's
 * again).  Returns -1. */
int cm_pft_quiesce(cm_pft *t);

#endif
