/* inputahead.c - read-ahead: an input's chunks made on a thread of its own.
 *
 * The thread that cuts an input into events is the one the whole read waits
 * on (merge.c), and a good part of its time went to read(2) itself: the
 * kernel's copy of each chunk out of the page cache (and, for gzip,
 * inflate).  With read-ahead a thread of the input's own runs
 * inputdecode_fill and hands each chunk over in a ring of slots: the
 * chunk's buffer is swapped for the slot's spare one, so nothing is copied
 * twice, and the chunks are exactly those the plain reader would hand out.
 * It reads only regular files (a pipe's first pass stays on the caller's
 * thread: a read-ahead thread blocked on a silent pipe could not be joined
 * when the caller stops early).  Its errors are deferred (diag.h) and
 * reported by the caller when it reaches the chunk that failed, never
 * before, and dropped if the caller stops first. */
#include "config.h"
#include "io/inputahead.h"
#include "io/input_int.h"
#include "io/inputbuf.h"
#include "io/inputdecode.h"
#include "base/diag.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#define RA_SLOTS 8

/* Slots in use (cm_input_readahead's): the chunks read ahead are one less
 * (the caller holds one), or the testing aid CUPTIMERGE_READAHEAD_SLOTS's
 * (2 to RA_SLOTS). */
static int ra_slots(const cm_input *in)
{
	const char *e = getenv("CUPTIMERGE_READAHEAD_SLOTS");
	int n = e ? atoi(e) : 0;
	if (n >= 2 && n <= RA_SLOTS)
		return n;
	return in->ra_wanted < 2 ? 2 : in->ra_wanted > RA_SLOTS ? RA_SLOTS : in->ra_wanted;
}

struct ra_slot {
	unsigned char *buf; /* raw_cap bytes */
	size_t len;
	uint64_t off, raw_done;
	int rc;             /* as inputdecode_fill: 1 a chunk, 0 the end, -1 an error (in diag) */
	int member_end;     /* rc 1 of gzip: the chunk ended its member (CRC and length checked) */
	uint64_t members_ended; /* gzip members ended when the slot was filled */
};

struct readahead {
	cm_input *in;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	struct ra_slot slot[RA_SLOTS];
	int n;              /* the slots in use (ra_slots) */
	/* slot[tail % N] .. slot[head - 1 % N] are filled and not yet handed
	 * out; slot[(tail - 1) % N] is the one the caller holds */
	uint64_t head, tail;
	int stop;           /* the caller wants the thread to end */
	int ended;          /* the last slot filled holds rc 0 or -1 */
	cm_diag_slot diag;
};

/* The read-ahead thread: fill a free slot, hand it over, until the end, an
 * error or the caller's stop. */
static void *ra_main(void *arg)
{
	struct readahead *ra = arg;
	cm_input *in = ra->in;
	cm_progress_thread_off();
	cm_diag_defer(&ra->diag);
	pthread_mutex_lock(&ra->mu);
	while (!ra->stop && !ra->ended) {
		struct ra_slot *s;
		const char *data = NULL;
		size_t len = 0;
		unsigned char **owner, *t;
		if (ra->head - ra->tail >= (uint64_t)ra->n - 1) { /* the ring is full */
			pthread_cond_wait(&ra->freed, &ra->mu);
			continue;
		}
		s = &ra->slot[ra->head % (uint64_t)ra->n];
		pthread_mutex_unlock(&ra->mu);
		s->rc = inputdecode_fill(in, &data, &len);
		if (s->rc == 1) {
			/* the chunk's buffer goes with the slot; the input reads
			 * on into the slot's spare */
			owner = in->gzip ? &in->text : &in->raw;
			t = *owner;
			*owner = s->buf;
			s->buf = t;
			s->len = len;
			s->off = in->next_off; /* the thread's own while it runs */
			in->next_off += len;
			(void)data; /* == t: inputdecode_fill's data starts its buffer */
		}
		s->raw_done = in->raw_done;
		s->member_end = s->rc == 1 && in->gzip && in->member_ended;
		s->members_ended = in->members_ended;
		pthread_mutex_lock(&ra->mu);
		ra->head++;
		ra->ended = s->rc != 1;
		pthread_cond_signal(&ra->filled);
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

/* Start the read-ahead thread for this pass, when wanted, the pass has not
 * begun and the input is a regular file (or a pipe's whole spool: not one
 * that a pass goes on from into the pipe).  Without a thread the caller reads
 * as before. */
void inputahead_start(cm_input *in)
{
	struct readahead *ra;
	struct stat st;
	if (!in->ra_wanted || in->teeing || in->pipe_fd >= 0 || in->next_off || fstat(in->fd, &st) != 0 ||
	    !S_ISREG(st.st_mode))
		return;
	ra = cm_xcalloc(1, sizeof *ra);
	ra->in = in;
	ra->n = ra_slots(in);
	for (int i = 0; i < ra->n; i++)
		ra->slot[i].buf = inputbuf_get(in);
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->filled, NULL);
	pthread_cond_init(&ra->freed, NULL);
	if (pthread_create(&ra->th, NULL, ra_main, ra) != 0) {
		in->ra_wanted = 0; /* no thread to be had: read on this one */
		for (int i = 0; i < ra->n; i++)
			inputbuf_unref(inputbuf_of(ra->slot[i].buf));
		free(ra);
		return;
	}
	in->ra = ra;
}

/* Stop and join the read-ahead thread; an error it met that the caller never
 * reached is dropped (the caller stopped before it). */
void inputahead_stop(cm_input *in)
{
	struct readahead *ra = in->ra;
	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = 1;
	pthread_cond_signal(&ra->freed);
	pthread_mutex_unlock(&ra->mu);
	pthread_join(ra->th, NULL);
	cm_diag_drop(&ra->diag);
	pthread_mutex_destroy(&ra->mu);
	pthread_cond_destroy(&ra->filled);
	pthread_cond_destroy(&ra->freed);
	for (int i = 0; i < ra->n; i++) /* a slot's chunk may be held */
		inputbuf_unref(inputbuf_of(ra->slot[i].buf));
	free(ra);
	in->ra = NULL;
}

/* The slot the caller takes next, once the thread has filled it. */
static struct ra_slot *next_filled(struct readahead *ra, cm_input *in)
{
	struct ra_slot *s;
	pthread_mutex_lock(&ra->mu);
	if (ra->tail == ra->head) {
		double t = cm_now_s();
		while (ra->tail == ra->head)
			pthread_cond_wait(&ra->filled, &ra->mu);
		in->ra_waited += cm_now_s() - t;
	}
	s = &ra->slot[ra->tail % (uint64_t)ra->n];
	pthread_mutex_unlock(&ra->mu);
	return s;
}

/* cm_input_next from the read-ahead thread's ring. */
int inputahead_next(cm_input *in, const char **data, size_t *len)
{
	struct readahead *ra = in->ra;
	struct ra_slot *s = next_filled(ra, in);
	pthread_mutex_lock(&ra->mu);
	if (s->rc == 1) {
		ra->tail++;
		pthread_cond_signal(&ra->freed);
	}
	pthread_mutex_unlock(&ra->mu);
	in->ra_raw_done = s->raw_done;
	if (s->rc <= 0) {
		/* the thread has ended: its error is this call's; its ring goes
		 * now, not when the input is rewound or closed (the window is
		 * held open to the end of the run) */
		in->ra_ended = 1;
		in->ra_rc = s->rc;
		if (s->rc < 0)
			cm_diag_settle(&ra->diag);
		inputbuf_pass_ended(in);
		inputahead_stop(in);
		return in->ra_rc;
	}
	in->chunk_off = s->off;
	*data = (const char *)s->buf;
	*len = s->len;
	in->last = s->buf;
	return 1;
}

/* Why the slots say which member they are of: the thread reads on, past
 * the member's end, into the next member or the garbage after the last,
 * and an error it met there (deferred) is no fault of the member checked:
 * it stays unsettled, dropped when the thread is stopped. */
int inputahead_member_end(cm_input *in)
{
	struct readahead *ra = in->ra;
	const struct ra_slot *last;
	uint64_t member;
	if (ra->tail == 0) /* nothing handed out: no text to have been bad */
		return 0;
	/* the caller's slot; tail only moves on the caller's thread */
	last = &ra->slot[(ra->tail - 1) % (uint64_t)ra->n];
	if (last->member_end)
		return 0;
	member = last->members_ended; /* the index of the member of its text */
	for (;;) {
		const struct ra_slot *s = next_filled(ra, in);
		const char *data;
		size_t len;
		int rc;
		if (s->members_ended > member && s->rc < 0)
			return 0; /* the member ended sound; the error lies after it */
		rc = inputahead_next(in, &data, &len); /* takes s: a chunk, the end, its error */
		if (rc != 1)
			return rc;
		if (s->member_end || s->members_ended > member)
			return 0;
	}
}

void cm_input_readahead(cm_input *in, int on) { in->ra_wanted = on; }
