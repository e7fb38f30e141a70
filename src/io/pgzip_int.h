/* pgzip_int.h - a gzip stream's ring of blocks, shared by pgzip.c (the
 * stream: its ring filled, handed over and, with workers of its own,
 * deflated and written) and pgzcrew.c (a crew: workers shared by several
 * streams, which deflate and write their blocks).  Internal to src/io: the
 * callers see cm_pgz through io/pgzip.h and io/pgzcrew.h only.
 *
 * A stream on a crew is a cm_pgz like any other: the same ring, the same
 * filling and dictionary copy (pgzip.c's begin_block), the same gzip
 * framing (cm_pgz_emit).  Where it differs, pgzip.c calls the crew's side
 * below (each with z->crew set), and the fields marked "a crew's" are the
 * crew's to keep. */
#ifndef CM_PGZIP_INT_H
#define CM_PGZIP_INT_H

#include "io/pgzip.h"
#include "io/pgzcrew.h"
#include "io/deflater.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* deflate's window, the dictionary each block gets (deflater.h) */
#define DICT CM_DEFLATE_DICT

/* One block in a slot of the ring. */
struct job {
	cm_gzblock b;  /* its input and, once done, its deflated bytes */
	int done;      /* set (under mu) when b's out, crc and err are ready; cleared when written */
	int deflated;  /* a crew's block: set (under mu) with done, cleared when the slot is refilled */
	cm_pgz *owner; /* a crew's block: its stream, its number, the next in the crew's queue */
	uint64_t seq;
	struct job *next;
};

struct cm_pgz {
	int level;
	int threads;  /* workers wanted; 0: deflate on the caller's thread */
	int started;  /* workers running (0 until the first block is handed over) */
	cm_pgz_sink sink;
	void *ctx;
	struct job *ring;
	size_t nslots;
	/* sequence numbers: blocks written < taken by a worker <= handed over;
	 * the block being filled is number `submitted`, in ring[submitted % nslots] */
	uint64_t written, taken, submitted;
	int filling;  /* ring[submitted % nslots] holds the block being filled */
	pthread_mutex_t mu;
	pthread_cond_t work; /* a block was handed over, or quit */
	pthread_cond_t done; /* a block is done */
	int quit;
	int waiting;   /* workers waiting for a block (under mu) */
	int wake_all;  /* CUPTIMERGE_GZIP_WAKE=all: a worker woken for every block (pgzip.c's "Waking") */
	pthread_t *th;
	cm_deflater **df; /* one per worker; df[threads] is the caller's own */
	int df_init;   /* how many of df are made */
	unsigned long crc; /* CRC-32 of the blocks written */
	uint64_t isize;    /* bytes in the blocks written */
	int header_done;
	int err;       /* sticky: the first error */
	cm_pgz_crew *crew; /* the workers it shares (cm_pgz_new_crew), or NULL */
	int busy;          /* ... blocks handed to the crew and not done (under mu) */
	int writing;       /* ... a worker is writing its finished blocks (under mu) */
	int werr;          /* ... the first error of a block written by a worker (under mu) */
	/* -v (cm_pgz_waits): the writing thread's seconds in cm_pgz_write and
	 * cm_pgz_finish waiting for a block to be deflated (a crew's: written),
	 * and writing the blocks on (the sink: the output's buffers, write(2));
	 * the caller's alone, a clock read or two a block */
	double wait_s, emit_s;
};

/* pgzip.c: write JOB, the oldest unwritten block of Z, to the sink: the
 * header first when none is written yet, the trailer after the last block.
 * On the one thread that writes Z's blocks at the time (the caller's, or a
 * crew's worker that holds Z's writing).  CM_PGZ_OK, the block's own
 * error, or CM_PGZ_SINK. */
int cm_pgz_emit(cm_pgz *z, struct job *job);

/* pgzcrew.c: the crew's side of a stream on it (pgzip.c calls them where
 * z->crew is set). */

/* Hand block JOB of crew stream Z to the crew (submit's part).  0 or an
 * error (sticky). */
int cm_pgz_crew_submit(cm_pgz *z, struct job *job);
/* Crew stream Z: wait while MORE blocks are handed over and not written
 * (0: until all are written), then take up a worker's error.  0 or the
 * error (sticky). */
int cm_pgz_crew_wait(cm_pgz *z, uint64_t more);
/* An input slot (DICT + CM_PGZ_BLOCK bytes) from crew C's pool, or a new
 * one; NULL when memory ran out. */
unsigned char *cm_pgz_crew_take_in(cm_pgz_crew *c);
/* Crew stream Z's next block has its dictionary (from PREV, the block
 * before, or NULL for the first): Z is filling, and PREV's input goes back
 * to the pool if it is deflated (begin_block's end). */
void cm_pgz_crew_began(cm_pgz *z, struct job *prev);
/* Crew stream Z is being freed: its blocks still queued leave the queue,
 * and those being deflated, and a worker writing its blocks, are waited
 * for. */
void cm_pgz_crew_forget(cm_pgz *z);

#endif
