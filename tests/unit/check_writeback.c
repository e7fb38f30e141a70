/* check_writeback.c - the write-back behind an -o file's writer
 * (io/writeback.c): whole steps are started as they fill (a MiB at
 * first, growing with the file), the steps more
 * than the lag behind are waited for, and a file that does not take
 * sync_file_range (a pipe) turns it off without an error; the
 * CUPTIMERGE_WRITEBACK aid. */
#include "check_common.h"
#include "io/writeback.h"

#include <fcntl.h>

/* Write N bytes to FD and tell WB; the call's result. */
static int put(cm_wback *wb, int fd, size_t n)
{
	static char block[1 << 20];
	size_t left = n;
	while (left) {
		size_t k = left < sizeof block ? left : sizeof block;
		ck_assert_int_eq(write(fd, block, k), (ssize_t)k);
		left -= k;
	}
	return cm_wback_wrote(wb, n);
}

START_TEST(test_steps_and_lag)
{
	char path[] = "/tmp/cuptimerge-check-wb.XXXXXX";
	int fd = mkstemp(path);
	cm_wback wb;
	int64_t total = 0, was;
	ck_assert_int_ge(fd, 0);
	unlink(path);
	cm_wback_init(&wb, fd);
	/* less than a MiB: nothing started */
	ck_assert_int_eq(put(&wb, fd, 1000), 0);
	total += 1000;
	ck_assert_int_eq(wb.queued, 0);
	ck_assert_int_eq(wb.waited, 0);
	/* a small file (one of a --split's): each whole MiB is started as it
	 * fills, the first MiBs' step being one MiB */
	for (int i = 1; i <= 3; i++) {
		ck_assert_int_eq(put(&wb, fd, (size_t)CM_WBACK_MIN), 0);
		total += CM_WBACK_MIN;
		ck_assert_int_eq(wb.queued, i * CM_WBACK_MIN);
	}
	/* a MiB at a time (odd bytes in between) to twice the lag: the steps
	 * grow with the file to CM_WBACK_STEP, each started when whole and
	 * queued to the last whole MiB; what lags more than CM_WBACK_LAG is
	 * waited for */
	while (total < 2 * CM_WBACK_LAG + 3 * CM_WBACK_STEP) {
		size_t n = (1 << 20) + (total & 1 ? 7 : 0);
		int64_t share = total / CM_WBACK_SHARE;
		int64_t step = share < CM_WBACK_MIN ? CM_WBACK_MIN : share > CM_WBACK_STEP ? CM_WBACK_STEP : share;
		was = wb.queued;
		ck_assert_int_eq(put(&wb, fd, n), 0);
		total += (int64_t)n;
		ck_assert_int_eq(wb.pos, total);
		ck_assert_int_eq(wb.queued % CM_WBACK_MIN, 0);
		if (wb.queued != was) { /* a step started: all whole MiBs, at least a step */
			ck_assert_int_eq(wb.queued, total / CM_WBACK_MIN * CM_WBACK_MIN);
			ck_assert_int_ge(wb.queued - was, step);
		}
		/* no more than a step (and the MiB being filled) left unstarted */
		ck_assert_int_lt(total - wb.queued, CM_WBACK_STEP + CM_WBACK_MIN);
		ck_assert_int_eq(wb.waited, wb.queued > CM_WBACK_LAG ? wb.queued - CM_WBACK_LAG : 0);
	}
	ck_assert_int_ge(wb.waited, CM_WBACK_LAG);
	/* one write of several steps: queued to its last whole MiB at once */
	ck_assert_int_eq(put(&wb, fd, (size_t)(3 * CM_WBACK_STEP + 5)), 0);
	total += 3 * CM_WBACK_STEP + 5;
	ck_assert_int_eq(wb.queued, total / CM_WBACK_MIN * CM_WBACK_MIN);
	ck_assert_int_eq(wb.waited, wb.queued - CM_WBACK_LAG);
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_END), total);
	close(fd);
}
END_TEST

START_TEST(test_pipe_and_none)
{
	int p[2];
	cm_wback wb;
	ck_assert_int_eq(pipe(p), 0);
	cm_wback_init(&wb, p[1]);
	/* a pipe cannot be synced (ESPIPE): the first step turns it off, no
	 * error (nothing is written: only the calls are tried) */
	ck_assert_int_eq(cm_wback_wrote(&wb, (uint64_t)CM_WBACK_STEP), 0);
	ck_assert_int_eq(wb.fd, -1);
	ck_assert_int_eq(cm_wback_wrote(&wb, (uint64_t)CM_WBACK_STEP), 0);
	ck_assert_int_eq(wb.queued, 0);
	close(p[0]);
	close(p[1]);
	/* no file: nothing is followed at all */
	cm_wback_init(&wb, -1);
	ck_assert_int_eq(cm_wback_wrote(&wb, (uint64_t)(10 * CM_WBACK_STEP)), 0);
	ck_assert_int_eq(wb.queued, 0);
	ck_assert_int_eq(wb.waited, 0);
}
END_TEST

/* CUPTIMERGE_WRITEBACK: 0 turns it off, a number of MiB sets the lag,
 * anything else is the default. */
START_TEST(test_env)
{
	char path[] = "/tmp/cuptimerge-check-wb.XXXXXX";
	int fd = mkstemp(path);
	cm_wback wb;
	ck_assert_int_ge(fd, 0);
	unlink(path);
	setenv("CUPTIMERGE_WRITEBACK", "0", 1);
	cm_wback_init(&wb, fd);
	ck_assert_int_eq(wb.fd, -1);
	setenv("CUPTIMERGE_WRITEBACK", "16", 1);
	cm_wback_init(&wb, fd);
	ck_assert_int_eq(wb.fd, fd);
	ck_assert_int_eq(wb.lag, (int64_t)16 << 20);
	ck_assert_int_eq(put(&wb, fd, (size_t)(4 * CM_WBACK_STEP)), 0);
	ck_assert_int_eq(wb.queued, 4 * CM_WBACK_STEP);
	ck_assert_int_eq(wb.waited, 4 * CM_WBACK_STEP - ((int64_t)16 << 20));
	setenv("CUPTIMERGE_WRITEBACK", "x", 1);
	cm_wback_init(&wb, fd);
	ck_assert_int_eq(wb.fd, fd);
	ck_assert_int_eq(wb.lag, CM_WBACK_LAG);
	unsetenv("CUPTIMERGE_WRITEBACK");
	close(fd);
}
END_TEST

/* On a thread of its own (cm_wback_thread): the writer only counts, and
 * waits only when the disk lags CM_WBACK_HOLD lags behind it; at the end
 * every whole step was started.  A pipe turns the thread off without an
 * error, and the writer does not wait for it. */
START_TEST(test_thread)
{
	char path[] = "/tmp/cuptimerge-check-wb.XXXXXX";
	int fd = mkstemp(path), p[2];
	int64_t total = 0;
	cm_wback wb;
	ck_assert_int_ge(fd, 0);
	unlink(path);
	setenv("CUPTIMERGE_WRITEBACK", "1", 1); /* a lag of 1 MiB: the hold is reached */
	cm_wback_init(&wb, fd);
	unsetenv("CUPTIMERGE_WRITEBACK");
	cm_wback_thread(&wb);
	ck_assert_ptr_nonnull(wb.th);
	for (int i = 0; i < 24; i++) {
		ck_assert_int_eq(put(&wb, fd, (size_t)(1 << 20) + 5), 0);
		total += (1 << 20) + 5;
	}
	ck_assert_int_eq(cm_wback_end(&wb), 0);
	ck_assert_ptr_null(wb.th);
	ck_assert_int_eq(wb.pos, total);
	/* the writer went on only while the disk lagged at most the hold */
	ck_assert_int_ge(wb.waited, total - CM_WBACK_HOLD * ((int64_t)1 << 20));
	ck_assert_int_le(wb.waited, wb.queued);
	ck_assert_int_le(wb.queued, total / CM_WBACK_MIN * CM_WBACK_MIN);
	ck_assert_int_eq(fsync(fd), 0);
	close(fd);

	ck_assert_int_eq(pipe(p), 0);
	cm_wback_init(&wb, p[1]);
	cm_wback_thread(&wb);
	for (int i = 0; i < 4 * CM_WBACK_HOLD; i++) /* four holds: no wait on a thread that stopped */
		ck_assert_int_eq(cm_wback_wrote(&wb, (uint64_t)CM_WBACK_LAG), 0);
	ck_assert_int_eq(cm_wback_end(&wb), 0);
	ck_assert_int_eq(wb.queued, 0);
	close(p[0]);
	close(p[1]);
	/* nothing to follow: no thread */
	cm_wback_init(&wb, -1);
	cm_wback_thread(&wb);
	ck_assert_ptr_null(wb.th);
	ck_assert_int_eq(cm_wback_end(&wb), 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("writeback");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_steps_and_lag);
	tcase_add_test(tc, test_pipe_and_none);
	tcase_add_test(tc, test_env);
	tcase_add_test(tc, test_thread);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
