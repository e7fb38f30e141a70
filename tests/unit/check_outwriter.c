/* check_outwriter.c - the output's writing thread (io/outwriter.c): the
 * bytes go out in the order they were handed over, whatever the number of
 * buffers; a failed write (a full device, a closed pipe) is returned once,
 * by the put or the drain after it, and nothing hangs; freeing without a
 * drain drops what is left; the write-back is told of every byte. */
#include "check_common.h"
#include "io/outwriter.h"

#include <errno.h>
#include <fcntl.h>

/* Byte I of the test's stream. */
static unsigned char byte_at(size_t i) { return (unsigned char)(i * 2654435761u >> 13); }

/* Hand over TOTAL bytes of the stream in pieces of odd lengths (never more
 * than UNIT); the first nonzero result of a put, or 0. */
static int put_stream(cm_owriter *w, size_t unit, size_t total)
{
	size_t at = 0, k = 0;
	int err = 0;
	while (at < total) {
		size_t n = (k++ * 7919 % unit) + 1, i;
		unsigned char *b = cm_owriter_buf(w);
		if (n > total - at)
			n = total - at;
		for (i = 0; i < n; i++)
			b[i] = byte_at(at + i);
		at += n;
		if (!err)
			err = cm_owriter_put(w, n);
	}
	return err;
}

START_TEST(test_order)
{
	static const size_t units[] = {1, 16, 4096, 65536};
	for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
		for (int nbuf = 2; nbuf <= 5; nbuf += 3) {
			char path[] = "/tmp/cuptimerge-check-ow.XXXXXX";
			int fd = mkstemp(path);
			size_t total = units[u] * 37 + 11, i;
			unsigned char *back = malloc(total + 1);
			cm_wback wb;
			cm_owriter *w;
			ck_assert_int_ge(fd, 0);
			unlink(path);
			cm_wback_init(&wb, -1); /* counts nothing: the bytes are what is checked */
			w = cm_owriter_new(fd, &wb, units[u], nbuf);
			ck_assert_ptr_nonnull(w);
			ck_assert_int_eq(put_stream(w, units[u], total), 0);
			ck_assert_int_eq(cm_owriter_put(w, 0), 0); /* only the check */
			ck_assert_int_eq(cm_owriter_drain(w), 0);
			cm_owriter_free(w);
			ck_assert_int_eq(pread(fd, back, total + 1, 0), (ssize_t)total);
			for (i = 0; i < total && back[i] == byte_at(i); i++)
				;
			ck_assert_uint_eq(i, total);
			free(back);
			close(fd);
		}
	}
}
END_TEST

/* A full device: ENOSPC, from the put after the failed write or from the
 * drain, exactly once. */
START_TEST(test_full_once)
{
	int fd = open("/dev/full", O_WRONLY);
	int errs = 0, rc;
	cm_owriter *w;
	if (fd < 0)
		return; /* no /dev/full here: nothing to check */
	w = cm_owriter_new(fd, NULL, 4096, 3);
	ck_assert_ptr_nonnull(w);
	for (int k = 0; k < 50; k++) {
		memset(cm_owriter_buf(w), 'x', 4096);
		if ((rc = cm_owriter_put(w, 4096)) != 0) {
			ck_assert_int_eq(rc, ENOSPC);
			errs++;
		}
	}
	if ((rc = cm_owriter_drain(w)) != 0) {
		ck_assert_int_eq(rc, ENOSPC);
		errs++;
	}
	ck_assert_int_eq(errs, 1);
	ck_assert_int_eq(cm_owriter_drain(w), 0);
	cm_owriter_free(w);
	close(fd);
}
END_TEST

/* A pipe whose reader is gone: EPIPE, once; a pipe nobody reads, freed
 * without a drain: the buffer in the thread's hands fits in the pipe, the
 * rest is dropped, and the free returns. */
START_TEST(test_pipe)
{
	int p[2], errs = 0, rc;
	cm_owriter *w;
	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	w = cm_owriter_new(p[1], NULL, 1024, 2);
	ck_assert_ptr_nonnull(w);
	for (int k = 0; k < 10; k++) {
		if ((rc = cm_owriter_put(w, 1024)) != 0) {
			ck_assert_int_eq(rc, EPIPE);
			errs++;
		}
	}
	if ((rc = cm_owriter_drain(w)) != 0) {
		ck_assert_int_eq(rc, EPIPE);
		errs++;
	}
	ck_assert_int_eq(errs, 1);
	cm_owriter_free(w);
	close(p[1]);

	ck_assert_int_eq(pipe(p), 0);
	w = cm_owriter_new(p[1], NULL, 1024, 4);
	ck_assert_ptr_nonnull(w);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(cm_owriter_put(w, 1024), 0);
	cm_owriter_free(w);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* The write-back follows what the thread wrote: every byte counted. */
START_TEST(test_wback)
{
	char path[] = "/tmp/cuptimerge-check-ow.XXXXXX";
	int fd = mkstemp(path);
	size_t total = 5 * ((size_t)1 << 20) + 3;
	cm_wback wb;
	cm_owriter *w;
	ck_assert_int_ge(fd, 0);
	unlink(path);
	cm_wback_init(&wb, fd);
	w = cm_owriter_new(fd, &wb, 100000, 3);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(put_stream(w, 100000, total), 0);
	ck_assert_int_eq(cm_owriter_drain(w), 0);
	cm_owriter_free(w);
	ck_assert_int_eq(wb.pos, (int64_t)total);
	ck_assert_int_eq(wb.queued, 5 * CM_WBACK_MIN);
	ck_assert_int_eq(cm_wback_end(&wb), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_END), (off_t)total);
	close(fd);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("outwriter");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_order);
	tcase_add_test(tc, test_full_once);
	tcase_add_test(tc, test_pipe);
	tcase_add_test(tc, test_wback);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
