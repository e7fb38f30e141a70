/* pool.h - a bounded pool of activity buffers and the queue of completed ones. */
#ifndef CREC_POOL_H
#define CREC_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef struct crec_pool crec_pool;

/* A pool of at most NBUF buffers of BUFSZ bytes (8-byte aligned, as CUPTI
 * requires).  Buffers are allocated on first use and then recycled, so memory
 * never exceeds NBUF * BUFSZ (BUFSZ is rounded down to a multiple of 8).
 * Returns NULL when NBUF is 0, BUFSZ is below 1024 or on ENOMEM. */
crec_pool *crec_pool_create(size_t nbuf, size_t bufsz);

/* Never blocks: a free buffer, a newly allocated one while fewer than NBUF
 * exist, or NULL when all are in use (the miss is counted).  Thread-safe. */
uint8_t *crec_pool_get(crec_pool *p);

/* Give BUF (from crec_pool_get) back.  Thread-safe. */
void crec_pool_put(crec_pool *p, uint8_t *buf);

size_t crec_pool_bufsize(const crec_pool *p);
/* Number of crec_pool_get calls that found the pool empty. */
unsigned long long crec_pool_misses(crec_pool *p);
/* Buffers currently handed out (not yet put back). */
size_t crec_pool_in_use(crec_pool *p);

/* Free the pool and its buffers; all buffers must have been put back. */
void crec_pool_destroy(crec_pool *p);

/* What the writer thread is asked to do. */
enum crec_item_kind {
	CREC_ITEM_BUFFER = 1, /* encode buf[0..valid) and give buf back to the pool */
	CREC_ITEM_MARK = 2,   /* everything queued before is done: acknowledge */
	CREC_ITEM_QUIT = 3,   /* leave the writer loop */
};

typedef struct crec_item {
	enum crec_item_kind kind;
	uint8_t *buf;
	size_t valid;
	uint64_t mark;        /* the mark's number, for CREC_ITEM_MARK */
} crec_item;

typedef struct crec_queue crec_queue;

/* A FIFO of at most CAP items.  Returns NULL on ENOMEM. */
crec_queue *crec_queue_create(size_t cap);

/* Append IT; never blocks.  Returns 0, or -1 when the queue is full (cannot
 * happen while CAP exceeds the pool size plus the marks in flight). */
int crec_queue_push(crec_queue *q, const crec_item *it);

/* Remove the oldest item into *IT, waiting until DEADLINE (CLOCK_MONOTONIC;
 * NULL: forever).  Returns 0, or -1 on timeout. */
int crec_queue_pop(crec_queue *q, crec_item *it, const struct timespec *deadline);

/* Record that mark M was processed and wake crec_queue_wait_mark callers. */
void crec_queue_ack(crec_queue *q, uint64_t m);

/* Wait until a mark >= M was acknowledged or DEADLINE (CLOCK_MONOTONIC)
 * passes.  Returns 0, or -1 on timeout. */
int crec_queue_wait_mark(crec_queue *q, uint64_t m, const struct timespec *deadline);

void crec_queue_destroy(crec_queue *q);

/* DEADLINE = now (CLOCK_MONOTONIC) + SECONDS. */
void crec_deadline(struct timespec *deadline, double seconds);

#endif
