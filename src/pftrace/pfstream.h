/* pfstream.h - what the Perfetto transcoder's front (pfstream.c: the
 * document walked, the elements batched, the pool, the -v line) and its
 * front thread (pffront.c) share.  Private to src/pftrace. */
#ifndef CM_PFSTREAM_H
#define CM_PFSTREAM_H

#include "pftrace/pftrace.h"
#include "pftrace/pfevent.h"
#include "pftrace/pfpass.h"
#include "base/opool.h"
#include "json/jscan.h"

#include <pthread.h>

/* The front thread's chunks of text, and how many wait for it at most. */
#define PFT_CHUNK (1u << 20)
#define PFT_QUEUE 4

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

struct cm_pft {
	cm_pft_sink sink;
	void *ctx;
	char *label;
	enum state st;
	int first, failed;
	int64_t offset;   /* of the piece being read, in the text */
	cm_jscan sc;
	cm_buf key;       /* a key's text, quotes and all */
	cm_buf elem;      /* an element cut by a piece's end */
	int64_t elem_off; /* where the element began */
	size_t elem_at;   /* ... in the piece being read */
	int in_events;    /* the member being read is traceEvents */
	int checked_key;  /* in_events is known for it */
	cm_arena *arena;  /* for decoding a key with escapes */
	cm_buf out;       /* protobuf made, not yet passed on */
	cm_pfev *ev;      /* the sequential part (the pool's sink) */
	int threads;      /* workers (cm_pft_threads) */
	cm_buf batch;     /* elements for the next batch (cm_pfbatch_add) */
	uint64_t batch_seq; /* the next batch's number */
	cm_pflaneq *lq;   /* the threads' lanes (pflaneq.c), made with the pool */
	size_t batch_max; /* PFT_BATCH, or CUPTIMERGE_PFT_BATCH's */
	cm_opool *pool;   /* made with the first batch */
	int dropping;     /* the run failed: the batches left are dropped unseen */
	cm_pfev **workers;
	/* the front thread (cm_pft_write, with more than one thread) */
	int front_on, wfailed; /* started; the writer's side has failed */
	pthread_t front;
	pthread_mutex_t mu;
	pthread_cond_t cv_put, cv_take;
	cm_buf q[PFT_QUEUE]; /* chunks queued (or being read), from qhead */
	size_t qhead, qn;
	int q_end;           /* no more chunks */
	int front_failed;    /* the front met an error (in slot) */
	cm_buf fill;         /* the chunk the writer fills */
	size_t chunk;        /* PFT_CHUNK, or CUPTIMERGE_PFT_CHUNK's */
	cm_diag_slot slot;   /* the front thread's error */
	/* the passer thread (from -j 2, pfpass.c): passes the protobuf on
	 * (the sink: the file's writes), off the sequential part's thread */
	cm_pfpass *pass;
	int no_pass; /* none could be made: the sink on the sequential part's thread */
	/* for -v (cm_pft_set_verbose): where the time went */
	cm_opool_stats pst;  /* the pool's */
	double w_time, w_wait; /* the writer's thread in cm_pft_write; waiting for the front */
	double f_cpu, f_wait;  /* the front thread's CPU; its waits for chunks */
	double t_first;        /* when the first text came */
	double s_cpu;          /* the sink's CPU (batch_sink) */
	double p_wait;         /* ... waiting for the passer (pfpass.c) */
	double p_wrote;        /* the passer's writing of the batches' packets */
	double f_scan;         /* the front thread's CPU in scan (with the batches it ran: f_cpu) */
	double f_put;          /* ... of it in cm_opool_put (the batches it ran, when the ring is full) */
};

/* Read the text S[0..N), the next piece of the document: the top level
 * walked, the elements batched (pfstream.c).  0, or -1 after reporting. */
int cm_pft_scan(cm_pft *t, const char *s, size_t n);

/* The run has failed (reported), or is over: the front thread, the pool
 * and the passer stopped, what they had left dropped (the passer's passed
 * on; the file is not kept), so that nothing of the transcoder runs once
 * its caller has it back (the output's state, which the passer writes,
 * is the caller's again).  Returns -1. */
int cm_pft_quiesce(cm_pft *t);

/* The front thread (pffront.c): stop it once it has read what is queued,
 * its error settled (0, or -1 when it failed); queue the chunk filled
 * (t->fill) for it (0, or -1 when it has failed: stopped, reported). */
int cm_pft_front_stop(cm_pft *t);
int cm_pft_front_push(cm_pft *t);

#endif
