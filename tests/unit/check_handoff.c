/* check_handoff.c - the ordered handoff (base/handoff.c): one producer's
 * buffers worked through in order by one consumer thread, the buffers
 * swapped; a failure on either side ends the run without a hang.
 *
 * Each buffer holds its number; every third is put with auxiliary bytes
 * that hold it too.  The consumer checks the numbers come in order and the
 * auxiliary bytes come with the buffers they were put with (NULL with the
 * others).  A consumer that fails at one number sees none after it, and
 * the producer's puts fail soon, nothing taken, its message printed once
 * when the producer finishes.  A producer that aborts while the consumer
 * is busy leaves the queued buffers unseen and wakes its own put waiting
 * for room.  Every test runs with a queue of 1 slot as well as more: one
 * buffer in flight, being worked through, and the producer waiting.
 *
 * With a preparing stage (cm_handoff_new_prep: PREPPERS threads), the
 * preparing work appends a mark made of the buffer's number after a
 * sleep that differs by number, so that buffers are prepared out of
 * order; the consumer checks every buffer comes prepared, in order, and
 * the failing tests run with it too. */
#include "check_common.h"
#include "base/diag.h"
#include "base/handoff.h"
#include "base/exitcode.h"

#include <pthread.h>

#define NPUT 2000

/* What a buffer is put with, every third. */
struct aux {
	int n;
	char pad[60];
};

/* The preparing threads of the handoffs the tests make (0: none). */
static int preppers;

/* The mark the preparing work appends to number N. */
static int mark_of(int n) { return n * 7 + 1; }

struct run {
	int next;      /* the number the consumer expects */
	int fail_at;   /* the number whose consumer fails (-1: none) */
	int slow_us;   /* the consumer's sleep for each buffer */
	int gate;      /* the consumer waits in number 0 until it is 1 (under mu) */
	int at_gate;   /* ... and is waiting there (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int aux_freed; /* calls of the AUX_FREE hook */
};

/* The consumer: the numbers in order, the auxiliary bytes with theirs. */
static int consume(void *ctx, cm_buf *b, void *aux)
{
	struct run *r = ctx;
	int n, mark;
	ck_assert_uint_eq(b->len, (preppers ? 2 : 1) * sizeof n);
	memcpy(&n, b->p, sizeof n);
	ck_assert_int_eq(n, r->next);
	if (preppers) {
		memcpy(&mark, b->p + sizeof n, sizeof mark);
		ck_assert_int_eq(mark, mark_of(n));
	}
	if (n % 3 == 0) {
		ck_assert_ptr_nonnull(aux);
		ck_assert_int_eq(((struct aux *)aux)->n, n);
	} else {
		ck_assert_ptr_null(aux);
	}
	r->next++;
	if (n == 0) {
		pthread_mutex_lock(&r->mu);
		r->at_gate = 1;
		pthread_cond_broadcast(&r->cv);
		while (!r->gate)
			pthread_cond_wait(&r->cv, &r->mu);
		pthread_mutex_unlock(&r->mu);
	}
	if (r->slow_us)
		usleep((useconds_t)r->slow_us);
	if (n == r->fail_at)
		return cm_error(CM_EXIT_DATA, NULL, -1, "item %d fails", n), -1;
	return 0;
}

/* The preparing work: the mark appended, after 0 to 60 us by number (so
 * that a later buffer is often ready before an earlier one); the
 * auxiliary bytes seen with their buffer as the consumer sees them. */
static void prepare(void *ctx, cm_buf *b, void *aux)
{
	int n, mark;
	(void)ctx;
	ck_assert_uint_eq(b->len, sizeof n);
	memcpy(&n, b->p, sizeof n);
	if (n % 3 == 0)
		ck_assert_int_eq(((struct aux *)aux)->n, n);
	else
		ck_assert_ptr_null(aux);
	usleep((useconds_t)(n * 37 % 61));
	mark = mark_of(n);
	cm_buf_put(b, &mark, sizeof mark);
}

/* A handoff of SLOTS for R, with the tests' preparing threads. */
static cm_handoff *new_handoff(size_t slots, struct run *r, size_t aux_size, void (*aux_free)(void *))
{
	if (!preppers)
		return cm_handoff_new(slots, consume, r, aux_size, aux_free);
	return cm_handoff_new_prep(slots, preppers, prepare, consume, r, aux_size, aux_free);
}

/* The run whose AUX_FREE hook counts (the hook has no context). */
static struct run *freeing;
static void run_aux_free(void *aux)
{
	(void)aux;
	freeing->aux_freed++;
}

static void run_init(struct run *r, int fail_at, int slow_us, int gate)
{
	memset(r, 0, sizeof *r);
	r->fail_at = fail_at;
	r->slow_us = slow_us;
	r->gate = gate;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	freeing = r;
}

static void open_gate(struct run *r)
{
	pthread_mutex_lock(&r->mu);
	r->gate = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* Put number N (with its auxiliary bytes when N % 3 == 0) from B and A. */
static int put_number(cm_handoff *h, cm_buf *b, struct aux *a, int n)
{
	b->len = 0;
	cm_buf_put(b, &n, sizeof n);
	memset(a, 0, sizeof *a);
	a->n = n;
	return cm_handoff_put(h, b, n % 3 == 0 ? a : NULL);
}

/* NPUT buffers through SLOTS slots to a slow consumer: all of them, in
 * order, each with its own auxiliary bytes; the producer's buffer comes
 * back empty and, once every slot has been filled, with room (swapped, not
 * copied); the seconds add up; each slot's bytes freed once. */
static void run_in_order(size_t slots)
{
	struct run r;
	cm_handoff_stats st = {0};
	cm_buf b = {0};
	struct aux a;
	cm_handoff *h;
	int i;
	run_init(&r, -1, 20, 1);
	h = new_handoff(slots, &r, sizeof a, run_aux_free);
	ck_assert_ptr_nonnull(h);
	for (i = 0; i < NPUT; i++) {
		ck_assert_int_eq(put_number(h, &b, &a, i), 0);
		ck_assert_uint_eq(b.len, 0);
		if ((size_t)i >= slots)
			ck_assert_ptr_nonnull(b.p);
		if (i % 3 == 0) /* a slot's bytes, as the consumer left them */
			ck_assert_msg(a.n < i || (a.n == 0 && i == 0), "aux %d back for %d", a.n, i);
	}
	ck_assert_int_eq(cm_handoff_finish(h, &st), 0);
	ck_assert_int_eq(r.next, NPUT);
	ck_assert_int_eq(r.aux_freed, (int)slots);
	ck_assert_msg(st.busy >= NPUT * 20e-6, "busy %.4f s", st.busy);
	ck_assert_msg(st.waited > 0, "the producer never waited");
	ck_assert_msg(st.idle >= 0, "idle %.4f s", st.idle);
	cm_buf_free(&b);
}

static const size_t slot_counts[] = {2, 4, 7};

START_TEST(in_order)
{
	preppers = 0;
	run_in_order(slot_counts[_i]);
}
END_TEST

/* With 1 to 3 preparing threads: every buffer prepared (out of order) and
 * worked through in order; a queue of 1 slot too, and a queue smaller
 * than the preparing threads. */
START_TEST(prepared)
{
	static const size_t slots[] = {6, 2, 1, 5};
	preppers = 1 + _i % 3;
	run_in_order(slots[_i % 4]);
	preppers = 0;
}
END_TEST

/* A queue of 1 slot: the buffer being worked through is the only one in
 * flight, and each put waits for it. */
START_TEST(one_slot)
{
	preppers = 0;
	run_in_order(1);
}
END_TEST

/* The consumer fails at one number: it sees none after it; a put fails
 * soon after (at once from then on), taking nothing; finish says so, and
 * the message reaches the producer's deferred slot, once. */
START_TEST(consumer_fails)
{
	size_t slots = _i % 2 ? 4 : 1;
	struct run r;
	cm_diag_slot mine = {0};
	cm_buf b = {0};
	struct aux a;
	cm_handoff *h;
	int i, failed_at = -1;
	cm_diag_reset();
	cm_diag_defer(&mine);
	preppers = _i / 2 * 2; /* (with two preparing threads from _i 2) */
	run_init(&r, 10, 0, 1);
	h = new_handoff(slots, &r, sizeof a, run_aux_free);
	ck_assert_ptr_nonnull(h);
	for (i = 0; i < NPUT; i++) {
		if (put_number(h, &b, &a, i) < 0) {
			int n;
			ck_assert_uint_eq(b.len, sizeof n); /* not taken */
			memcpy(&n, b.p, sizeof n);
			ck_assert_int_eq(n, i);
			if (failed_at < 0)
				failed_at = i;
		} else {
			ck_assert_msg(failed_at < 0, "put %d taken after put %d failed", i, failed_at);
		}
	}
	ck_assert_msg(failed_at > 10, "first failed put %d", failed_at);
	ck_assert_int_eq(cm_handoff_finish(h, NULL), -1);
	cm_diag_defer(NULL);
	ck_assert_int_eq(r.next, 11); /* 0 to 10 seen, nothing after */
	ck_assert_int_eq(mine.status, CM_EXIT_DATA);
	ck_assert_ptr_nonnull(mine.line);
	ck_assert_msg(strstr(mine.line, "item 10 fails"), "%s", mine.line);
	cm_diag_drop(&mine);
	cm_buf_free(&b);
}
END_TEST

struct aborter {
	cm_handoff *h;
	int delay_us;
};

static void *abort_later(void *arg)
{
	struct aborter *x = arg;
	usleep((useconds_t)x->delay_us);
	cm_handoff_abort(x->h);
	return NULL;
}

/* The producer's side aborts while the consumer is held in number 0 and
 * every slot is taken: the producer's put waiting for room returns -1
 * (woken by the abort, made on another thread), a put after it at once;
 * the consumer, let go, sees none of the queued buffers, and finish
 * returns -1 with nothing printed. */
START_TEST(producer_aborts)
{
	size_t slots = _i % 2 ? 4 : 1;
	struct run r;
	struct aborter x;
	pthread_t th;
	cm_diag_slot mine = {0};
	cm_buf b = {0};
	struct aux a;
	cm_handoff *h;
	int i;
	cm_diag_reset();
	cm_diag_defer(&mine);
	preppers = _i / 2 * 2;
	run_init(&r, -1, 0, 0);
	h = new_handoff(slots, &r, sizeof a, run_aux_free);
	ck_assert_ptr_nonnull(h);
	for (i = 0; i < (int)slots; i++)
		ck_assert_int_eq(put_number(h, &b, &a, i), 0);
	ck_assert_int_eq(cm_handoff_full(h), 1);
	pthread_mutex_lock(&r.mu); /* (the consumer in number 0 first: however loaded the machine) */
	while (!r.at_gate)
		pthread_cond_wait(&r.cv, &r.mu);
	pthread_mutex_unlock(&r.mu);
	x.h = h;
	x.delay_us = 50000;
	ck_assert_int_eq(pthread_create(&th, NULL, abort_later, &x), 0);
	ck_assert_int_eq(put_number(h, &b, &a, i), -1); /* waits, then woken */
	pthread_join(th, NULL);
	ck_assert_int_eq(put_number(h, &b, &a, i + 1), -1);
	open_gate(&r);
	ck_assert_int_eq(cm_handoff_finish(h, NULL), -1);
	cm_diag_defer(NULL);
	ck_assert_int_eq(r.next, 1); /* number 0, worked through when it came */
	ck_assert_int_eq(mine.status, 0);
	ck_assert_int_eq(r.aux_freed, (int)slots);
	cm_buf_free(&b);
}
END_TEST

/* Nothing put: finish ends the waiting thread, 0. */
START_TEST(nothing_put)
{
	struct run r;
	cm_handoff_stats st = {0};
	cm_handoff *h;
	run_init(&r, -1, 0, 1);
	h = new_handoff(3, &r, 0, NULL);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(cm_handoff_full(h), 0);
	ck_assert_int_eq(cm_handoff_finish(h, &st), 0);
	ck_assert_int_eq(r.next, 0);
	ck_assert_int_eq(cm_handoff_finish(NULL, NULL), 0);
	cm_handoff_abort(NULL);
}
END_TEST

static Suite *handoff_suite(void)
{
	Suite *s = suite_create("handoff");
	TCase *tc = tcase_create("handoff");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, in_order, 0, 3);
	tcase_add_test(tc, one_slot);
	tcase_add_loop_test(tc, prepared, 0, 6);
	tcase_add_loop_test(tc, consumer_fails, 0, 4);
	tcase_add_loop_test(tc, producer_aborts, 0, 4);
	tcase_add_test(tc, nothing_put);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(handoff_suite)
