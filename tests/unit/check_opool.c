/* check_opool.c - the ordered pool (base/opool.c): results in the order the
 * blocks went in, whoever ran them, with and without a caller that helps.
 *
 * Each block holds its number; the work appends the number and which
 * worker's context ran it; the sink checks the numbers come in order and
 * counts the runs of each context.  With CALLER_HELPS the caller is the
 * last context, and it must have run blocks (the workers are made slow so
 * that the ring fills); without it, it must have run none.  A failing block
 * stops the run with its error printed once, on the caller's thread, also
 * when the caller ran it.  Every block the pool took is handed to the done
 * hook once, whether it ran or not.
 *
 * A crew (cm_ocrew, base/ocrew.c) serves two pools fed at once from two
 * threads: each pool's results come in its own order, every worker of the crew runs
 * blocks of the pool that has them all, a worker's context is used by that
 * worker's thread alone, and one pool's failure leaves the other whole. */
#include "check_common.h"
#include "base/diag.h"
#include "base/opool.h"
#include "base/exitcode.h"

#include <pthread.h>

#define NBLOCKS 400
#define MAXW 8

struct ctx {
	int id;          /* the context's index */
	pthread_t self;  /* the thread that last ran with it */
	int ran;
};

struct sink {
	int next;        /* the block number the sink expects */
	int ran[MAXW];   /* blocks run with each context */
	int fail_at;     /* the block whose work fails (-1: none) */
	pthread_t caller;
};

static struct sink the_sink;

static int work(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct ctx *c = wctx;
	int n;
	memcpy(&n, in->p, sizeof n);
	c->self = pthread_self();
	c->ran++;
	/* the threads are slow, the caller not: the ring fills, and a caller
	 * that helps finds queued blocks to run */
	if (!pthread_equal(c->self, the_sink.caller))
		usleep(200);
	if (n == the_sink.fail_at)
		return cm_error(CM_EXIT_DATA, NULL, -1, "block %d fails", n), -1;
	cm_buf_put(out, &n, sizeof n);
	cm_buf_put(out, &c->id, sizeof c->id);
	return 0;
}

static int sink(void *sctx, cm_buf *out)
{
	struct sink *s = sctx;
	int n, id;
	ck_assert_uint_eq(out->len, 2 * sizeof n);
	memcpy(&n, out->p, sizeof n);
	memcpy(&id, out->p + sizeof n, sizeof id);
	ck_assert_int_eq(n, s->next);
	s->next++;
	s->ran[id]++;
	return 0;
}

/* The done hook (cm_opool_set_done): how many times each block was done
 * with, and whether it was taken by the pool at all. */
static int done_count[NBLOCKS], taken[NBLOCKS];

static void done(cm_buf *in)
{
	int n;
	memcpy(&n, in->p, sizeof n);
	__atomic_add_fetch(&done_count[n], 1, __ATOMIC_RELAXED);
}

/* Every block the pool took was done with once, run or not (after a
 * failure), and no other. */
static void each_done_once(void)
{
	for (int n = 0; n < NBLOCKS; n++)
		if (done_count[n] != taken[n])
			ck_abort_msg("block %d: taken %d times, done with %d times", n, taken[n], done_count[n]);
}

/* Run NBLOCKS blocks through a pool of WORKERS (CALLER_HELPS as given),
 * the block FAIL_AT failing (-1: none).  Returns what the pool returned. */
static cm_opool_stats *run_stats; /* the next run's pool adds its figures here */

static int run_pool(int workers, int caller_helps, int fail_at, struct ctx *ctx)
{
	void *wctx[MAXW];
	cm_buf in = {0};
	cm_opool *p;
	int rc = 0, frc;
	memset(&the_sink, 0, sizeof the_sink);
	the_sink.fail_at = fail_at;
	the_sink.caller = pthread_self();
	for (int i = 0; i < workers; i++) {
		memset(&ctx[i], 0, sizeof ctx[i]);
		ctx[i].id = i;
		wctx[i] = &ctx[i];
	}
	memset(done_count, 0, sizeof done_count);
	memset(taken, 0, sizeof taken);
	p = cm_opool_new(workers, caller_helps, work, wctx, sink, &the_sink);
	cm_opool_set_stats(p, run_stats);
	cm_opool_set_done(p, done);
	for (int n = 0; n < NBLOCKS && !rc; n++) {
		cm_buf_put(&in, &n, sizeof n);
		rc = cm_opool_put(p, &in);
		if (!rc) /* taken (a failure may refuse it) */
			ck_assert_uint_eq(in.len, 0);
		taken[n] = in.len == 0;
		in.len = 0;
	}
	frc = cm_opool_finish(p);
	cm_buf_free(&in);
	each_done_once();
	return rc ? rc : frc;
}

START_TEST(in_order_without_help)
{
	struct ctx ctx[MAXW];
	int workers = 2 + _i; /* 2, 3, 4 */
	ck_assert_int_eq(run_pool(workers, 0, -1, ctx), 0);
	ck_assert_int_eq(the_sink.next, NBLOCKS);
	for (int i = 0; i < workers; i++)
		ck_assert_int_eq(the_sink.ran[i], ctx[i].ran);
	for (int i = 0; i < workers; i++) /* every context is a thread's */
		ck_assert(!ctx[i].ran || !pthread_equal(ctx[i].self, pthread_self()));
}
END_TEST

START_TEST(in_order_with_help)
{
	struct ctx ctx[MAXW];
	int workers = 2 + _i, total = 0;
	ck_assert_int_eq(run_pool(workers, 1, -1, ctx), 0);
	ck_assert_int_eq(the_sink.next, NBLOCKS);
	for (int i = 0; i < workers; i++) {
		ck_assert_int_eq(the_sink.ran[i], ctx[i].ran);
		total += ctx[i].ran;
	}
	ck_assert_int_eq(total, NBLOCKS);
	/* the caller ran blocks, with the last context and no other */
	ck_assert_int_gt(ctx[workers - 1].ran, 0);
	ck_assert(pthread_equal(ctx[workers - 1].self, pthread_self()));
	for (int i = 0; i < workers - 1; i++)
		ck_assert(!ctx[i].ran || !pthread_equal(ctx[i].self, pthread_self()));
}
END_TEST

/* One context and help asked: no thread, the caller runs it all. */
START_TEST(one_worker_helped)
{
	struct ctx ctx[MAXW];
	ck_assert_int_eq(run_pool(1, 1, -1, ctx), 0);
	ck_assert_int_eq(the_sink.next, NBLOCKS);
	ck_assert_int_eq(ctx[0].ran, NBLOCKS);
	ck_assert(pthread_equal(ctx[0].self, pthread_self()));
}
END_TEST

/* A failing block: the run stops at it, the blocks before it reach the
 * sink, its message is printed once (a deferred slot of the caller's
 * receives it: the caller defers, as the CPU trace's reader does). */
START_TEST(failure_once)
{
	struct ctx ctx[MAXW];
	cm_diag_slot mine = {0};
	int fail_at = 37 + 50 * _i;
	cm_diag_reset();
	cm_diag_defer(&mine);
	ck_assert_int_eq(run_pool(3, _i & 1, fail_at, ctx), -1);
	cm_diag_defer(NULL);
	ck_assert_int_eq(the_sink.next, fail_at);
	ck_assert_int_eq(mine.status, CM_EXIT_DATA);
	ck_assert_ptr_nonnull(mine.line);
	ck_assert_msg(strstr(mine.line, "block") && strstr(mine.line, "fails"), "%s", mine.line);
	cm_diag_drop(&mine);
}
END_TEST

/* The figures for -v: every block counted, and at least the time the
 * workers slept in them (usleep sleeps at least that long), the longest
 * and the pool's life beside them; the caller,
 * faster than three sleeping workers, waited for slots; a second pool adds
 * to the same figures.  Without threads the caller's runs count as busy. */
START_TEST(stats_added_up)
{
	struct ctx ctx[MAXW];
	cm_opool_stats st = {0};
	run_stats = &st;
	ck_assert_int_eq(run_pool(3, 0, -1, ctx), 0);
	ck_assert_uint_eq(st.blocks, NBLOCKS);
	ck_assert_msg(st.busy >= NBLOCKS * 200e-6, "busy %.4f s", st.busy);
	ck_assert_msg(st.waited > 0, "the caller never waited");
	ck_assert_msg(st.sink >= 0 && st.idle >= 0, "sink %.4f idle %.4f", st.sink, st.idle);
	/* the longest block slept too, and no longer than all of them; the
	 * longest hand-on no longer than all; three workers at most at once */
	ck_assert_msg(st.longest >= 200e-6 && st.longest <= st.busy, "longest %.6f s of %.4f", st.longest, st.busy);
	ck_assert_msg(st.sink_longest <= st.sink, "the longest hand-on %.6f s of %.6f", st.sink_longest, st.sink);
	ck_assert_msg(st.lived >= st.busy / 3, "lived %.4f s, busy %.4f on 3 workers", st.lived, st.busy);
	ck_assert_int_eq(run_pool(1, 0, -1, ctx), 0);
	run_stats = NULL;
	ck_assert_uint_eq(st.blocks, 2 * NBLOCKS);
}
END_TEST

/* The crew's tests: a pool's context for each crew worker, and the pool's
 * sink and feeder. */
#define CREW 3
struct cctx {
	int id;
	pthread_t self;
	int ran, threads; /* blocks run; 2 when a second thread used it */
};

struct cpool {
	cm_opool *p;
	struct cctx ctx[CREW];
	void *wctx[CREW];
	int blocks, fail_at, sleep_us;
	int next; /* the sink's next block */
	int rc;
	int done;               /* its feeder finished the pool (atomic) */
	struct cpool *wait_for; /* its feeder finishes only after this pool's did */
};

static int cwork(void *wctx, const cm_buf *in, cm_buf *out)
{
	struct cctx *c = wctx;
	struct cpool *cp;
	int n;
	memcpy(&n, in->p, sizeof n);
	memcpy(&cp, in->p + sizeof n, sizeof cp);
	if (c->ran && !pthread_equal(c->self, pthread_self()))
		c->threads = 2;
	c->self = pthread_self();
	c->ran++;
	if (cp->sleep_us)
		usleep((useconds_t)cp->sleep_us);
	if (n == cp->fail_at)
		return cm_error(CM_EXIT_DATA, NULL, -1, "block %d fails", n), -1;
	cm_buf_put(out, &n, sizeof n);
	return 0;
}

static int csink(void *sctx, cm_buf *out)
{
	struct cpool *cp = sctx;
	int n;
	memcpy(&n, out->p, sizeof n);
	ck_assert_int_eq(n, cp->next);
	cp->next++;
	return 0;
}

/* A feeder thread: the pool's blocks, then its finish. */
static void *cfeed(void *arg)
{
	struct cpool *cp = arg;
	cm_buf in = {0};
	cm_diag_slot mine = {0};
	int rc = 0, frc;
	cm_diag_defer(&mine); /* a failure's line, printed once: here */
	for (int n = 0; n < cp->blocks && !rc; n++) {
		cm_buf_put(&in, &n, sizeof n);
		cm_buf_put(&in, &cp, sizeof cp);
		rc = cm_opool_put(cp->p, &in);
		in.len = 0;
	}
	while (cp->wait_for && !__atomic_load_n(&cp->wait_for->done, __ATOMIC_ACQUIRE))
		usleep(1000);
	frc = cm_opool_finish(cp->p);
	cp->rc = rc ? rc : frc;
	__atomic_store_n(&cp->done, 1, __ATOMIC_RELEASE);
	cm_diag_defer(NULL);
	if (cp->fail_at >= 0)
		ck_assert_msg(mine.line && strstr(mine.line, "fails"), "%s", mine.line ? mine.line : "no line");
	cm_diag_drop(&mine);
	cm_buf_free(&in);
	return NULL;
}

/* Two pools on one crew of CREW workers, fed at once; A's blocks sleep
 * SLEEP_A us each, B's SLEEP_B. */
static void run_crew(struct cpool *a, struct cpool *b)
{
	cm_ocrew *c = cm_ocrew_new(CREW);
	struct cpool *pools[2] = {a, b};
	pthread_t th[2];
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(cm_ocrew_workers(c), CREW);
	for (int k = 0; k < 2; k++) {
		struct cpool *cp = pools[k];
		for (int i = 0; i < CREW; i++) {
			memset(&cp->ctx[i], 0, sizeof cp->ctx[i]);
			cp->ctx[i].id = i;
			cp->wctx[i] = &cp->ctx[i];
		}
		cp->next = 0;
		cp->p = cm_opool_new_crew(c, cwork, cp->wctx, csink, cp);
	}
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(pthread_create(&th[k], NULL, cfeed, pools[k]), 0);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	ck_assert(cm_ocrew_idle(c) >= 0);
	cm_ocrew_free(c);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < CREW; i++) {
			ck_assert_int_lt(pools[k]->ctx[i].threads, 2);
			/* the same worker ran both pools' blocks of context i */
			if (pools[0]->ctx[i].ran && pools[1]->ctx[i].ran)
				ck_assert(pthread_equal(pools[0]->ctx[i].self, pools[1]->ctx[i].self));
		}
}

/* Both pools' results in order; the pool with many slow blocks had every
 * worker of the crew while the other, open all the while, had few or none
 * (a fixed split would have left it its share alone). */
START_TEST(crew_shared)
{
	static struct cpool a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.blocks = NBLOCKS;
	a.sleep_us = 300;
	a.fail_at = b.fail_at = -1;
	b.blocks = 20 * _i; /* none, or few */
	b.wait_for = &a;
	run_crew(&a, &b);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_int_eq(b.rc, 0);
	ck_assert_int_eq(a.next, a.blocks);
	ck_assert_int_eq(b.next, b.blocks);
	for (int i = 0; i < CREW; i++)
		ck_assert_msg(a.ctx[i].ran > 0, "worker %d ran none of the slow pool's blocks", i);
}
END_TEST

/* A failing block in one pool stops that pool alone. */
START_TEST(crew_failure)
{
	static struct cpool a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.blocks = b.blocks = NBLOCKS;
	a.fail_at = 37;
	b.fail_at = -1;
	a.sleep_us = b.sleep_us = 50;
	cm_diag_reset();
	run_crew(&a, &b);
	ck_assert_int_eq(a.rc, -1);
	ck_assert_int_eq(a.next, 37);
	ck_assert_int_eq(b.rc, 0);
	ck_assert_int_eq(b.next, NBLOCKS);
}
END_TEST

static Suite *opool_suite(void)
{
	Suite *s = suite_create("opool");
	TCase *tc = tcase_create("order");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, in_order_without_help, 0, 3);
	tcase_add_loop_test(tc, in_order_with_help, 0, 3);
	tcase_add_test(tc, one_worker_helped);
	tcase_add_test(tc, stats_added_up);
	tcase_add_loop_test(tc, failure_once, 0, 4);
	tcase_add_loop_test(tc, crew_shared, 0, 2);
	tcase_add_test(tc, crew_failure);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(opool_suite)
