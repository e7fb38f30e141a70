/* check_cond.c - cm_cond (base/cond.c), the condition variable whose
 * signal never waits: no wake-up lost, and what the mutex guards still
 * seen whole by the thread woken.  Each test runs with the futex (loop
 * index even) and with pthread_cond_t (odd), the same contract.
 *
 * - ping_pong: two threads take turns 50,000 times, each signalling the
 *   other on a condition of its own; a lost wake-up hangs (the test's
 *   timeout fails it).
 * - queue: one producer, four consumers, a queue of 4 items guarded by
 *   the mutex, one signal an item handed over (the pools' way: the signal
 *   after the unlock every other item); each item is taken once, and the
 *   sum of the items taken is the sum of those put.
 * - broadcast: eight threads wait for a flag; one broadcast wakes them all. */
#include "check_common.h"
#include "base/cond.h"

#include <pthread.h>
#include <stdint.h>

struct shared {
	pthread_mutex_t mu;
	cm_cond a, b, room, more;
	int turn;        /* ping_pong: 0 the first thread's, 1 the second's */
	int rounds;
	uint64_t q[4];   /* queue: items in flight */
	unsigned head, tail;
	int done;        /* the producer is done, or the broadcast's flag */
	uint64_t sum;    /* the items taken, summed */
	unsigned taken;
	int awake;
};

static void init(struct shared *s, int native)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
	cm_cond_init(&s->a);
	cm_cond_init(&s->b);
	cm_cond_init(&s->room);
	cm_cond_init(&s->more);
	s->a.native = s->b.native = s->room.native = s->more.native = native;
	if (native) { /* (cm_cond_init made them for CUPTIMERGE_COND's choice) */
		pthread_cond_init(&s->a.c, NULL);
		pthread_cond_init(&s->b.c, NULL);
		pthread_cond_init(&s->room.c, NULL);
		pthread_cond_init(&s->more.c, NULL);
	}
}

static void fini(struct shared *s)
{
	cm_cond_destroy(&s->a);
	cm_cond_destroy(&s->b);
	cm_cond_destroy(&s->room);
	cm_cond_destroy(&s->more);
	pthread_mutex_destroy(&s->mu);
}

#define ROUNDS 50000

static void *pong(void *arg)
{
	struct shared *s = arg;
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < ROUNDS; i++) {
		while (s->turn != 1)
			cm_cond_wait(&s->b, &s->mu);
		s->turn = 0;
		s->rounds++;
		cm_cond_signal(&s->a);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

START_TEST(ping_pong)
{
	struct shared s;
	pthread_t t;
	init(&s, _i & 1);
	ck_assert_int_eq(pthread_create(&t, NULL, pong, &s), 0);
	pthread_mutex_lock(&s.mu);
	for (int i = 0; i < ROUNDS; i++) {
		while (s.turn != 0)
			cm_cond_wait(&s.a, &s.mu);
		s.turn = 1;
		if (i & 1) { /* signalled after the unlock, as pgzip's caller did */
			pthread_mutex_unlock(&s.mu);
			cm_cond_signal(&s.b);
			pthread_mutex_lock(&s.mu);
		} else {
			cm_cond_signal(&s.b);
		}
	}
	while (s.turn != 0)
		cm_cond_wait(&s.a, &s.mu);
	pthread_mutex_unlock(&s.mu);
	pthread_join(t, NULL);
	ck_assert_int_eq(s.rounds, ROUNDS);
	fini(&s);
}
END_TEST

#define ITEMS 200000u

static void *consumer(void *arg)
{
	struct shared *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->head == s->tail && !s->done)
			cm_cond_wait(&s->more, &s->mu);
		if (s->head == s->tail)
			break;
		s->sum += s->q[s->tail++ % 4];
		s->taken++;
		cm_cond_signal(&s->room);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

START_TEST(queue)
{
	struct shared s;
	pthread_t t[4];
	uint64_t want = 0;
	init(&s, _i & 1);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, consumer, &s), 0);
	for (unsigned i = 1; i <= ITEMS; i++) {
		pthread_mutex_lock(&s.mu);
		while (s.head - s.tail == 4)
			cm_cond_wait(&s.room, &s.mu);
		s.q[s.head++ % 4] = i;
		want += i;
		if (i & 1) {
			cm_cond_signal(&s.more);
			pthread_mutex_unlock(&s.mu);
		} else {
			pthread_mutex_unlock(&s.mu);
			cm_cond_signal(&s.more);
		}
	}
	pthread_mutex_lock(&s.mu);
	s.done = 1;
	cm_cond_broadcast(&s.more);
	pthread_mutex_unlock(&s.mu);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(s.taken, ITEMS);
	ck_assert_uint_eq(s.sum, want);
	fini(&s);
}
END_TEST

static void *sleeper(void *arg)
{
	struct shared *s = arg;
	pthread_mutex_lock(&s->mu);
	s->awake++;
	cm_cond_signal(&s->a); /* (one more asleep, for the test's thread) */
	while (!s->done)
		cm_cond_wait(&s->b, &s->mu);
	s->awake--;
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

START_TEST(broadcast)
{
	struct shared s;
	pthread_t t[8];
	init(&s, _i & 1);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, sleeper, &s), 0);
	pthread_mutex_lock(&s.mu);
	while (s.awake < 8)
		cm_cond_wait(&s.a, &s.mu);
	s.done = 1;
	cm_cond_broadcast(&s.b);
	pthread_mutex_unlock(&s.mu);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(s.awake, 0);
	fini(&s);
}
END_TEST

static Suite *cond_suite(void)
{
	Suite *s = suite_create("cond");
	TCase *tc = tcase_create("cond");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, ping_pong, 0, 4);
	tcase_add_loop_test(tc, queue, 0, 4);
	tcase_add_loop_test(tc, broadcast, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(cond_suite)
