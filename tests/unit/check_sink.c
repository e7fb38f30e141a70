/* check_sink.c - where cuptirec's window goes (src/cuptirec/sink.c's
 * crec_sink_open, through crec_open_out), without a GPU: the sink is the
 * collector's, which is built only with CUPTI, but opening and writing its
 * file needs none, so this test compiles sink.c itself.
 *
 * The window's -o was opened with O_CREAT | O_TRUNC as it stood: a FIFO
 * without a reader stopped the traced program at its CUDA start (the open
 * waited for a reader), and /dev/stdout (/dev/fd/N) was reopened,
 * truncating what the program had written there, or, with the program's
 * descriptor closed, opened nothing.  The thread map's -T -o path had been
 * made to write through a FIFO without waiting (recout.sh); these cases
 * hold the window to the same. */
#include "config.h"
#include "check_common.h"
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

static char dir[] = "/tmp/check_sink.XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[64 + sizeof dir];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) {
		/* left in /tmp: nothing more to do */
	}
	memcpy(dir + sizeof dir - 7, "XXXXXX", 6); /* for the next test, without fork mode */
}

/* The whole of the file at PATH (at most CAP - 1 bytes), NUL-ended, in BUF. */
static const char *slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, cap - 1);
	ck_assert_int_ge(n, 0);
	buf[n] = 0;
	close(fd);
	return buf;
}

/* A regular file: made, or truncated and written. */
START_TEST(regular_file)
{
	char path[PATH_MAX], err[512], got[64];
	crec_sink *s;
	snprintf(path, sizeof path, "%s/w.json", dir);
	for (int round = 0; round < 2; round++) { /* made, then truncated */
		ck_assert_ptr_nonnull(s = crec_sink_open(path, 0, err, sizeof err));
		ck_assert_int_eq(crec_sink_write(s, round ? "{}" : "{\"events\": []}", round ? 2 : 14), 0);
		ck_assert_int_eq(crec_sink_close(s, err, sizeof err), 0);
	}
	ck_assert_str_eq(slurp(path, got, sizeof got), "{}");
}
END_TEST

/* A FIFO without a reader: an error at once, saying why, not an open that
 * waits for one (the alarm fails the test where it would wait); with a
 * reader, written through to it. */
START_TEST(fifo)
{
	char path[PATH_MAX], err[512], got[64];
	int rfd;
	crec_sink *s;
	snprintf(path, sizeof path, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	alarm(10);
	s = crec_sink_open(path, 0, err, sizeof err);
	alarm(0);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err, path) && strstr(err, strerror(ENXIO)), "said: %s", err);
	rfd = open(path, O_RDONLY | O_NONBLOCK); /* a reader, before the writer */
	ck_assert_int_ge(rfd, 0);
	ck_assert_ptr_nonnull(s = crec_sink_open(path, 0, err, sizeof err));
	ck_assert_int_eq(crec_sink_write(s, "{\"events\": []}\n", 15), 0);
	ck_assert_int_eq(crec_sink_close(s, err, sizeof err), 0);
	ck_assert_int_eq(read(rfd, got, sizeof got), 15);
	close(rfd);
}
END_TEST

/* /dev/fd/N, and a link to it: the program's descriptor N itself, its
 * bytes going on after what the program wrote there (reopened with
 * O_TRUNC, the file lost them); with N closed, an error saying so, and
 * nothing made or replaced. */
START_TEST(own_descriptor)
{
	char path[PATH_MAX], name[64], link[PATH_MAX], err[512], got[64];
	int fd;
	crec_sink *s;
	snprintf(path, sizeof path, "%s/out", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_gt(fd, 2);
	ck_assert_int_eq(write(fd, "program ", 8), 8);
	snprintf(name, sizeof name, "/dev/fd/%d", fd);
	snprintf(link, sizeof link, "%s/link", dir);
	ck_assert_int_eq(symlink(name, link), 0);
	ck_assert_ptr_nonnull(s = crec_sink_open(name, 0, err, sizeof err));
	ck_assert_int_eq(crec_sink_write(s, "window ", 7), 0);
	ck_assert_int_eq(crec_sink_close(s, err, sizeof err), 0);
	ck_assert_ptr_nonnull(s = crec_sink_open(link, 0, err, sizeof err));
	ck_assert_int_eq(crec_sink_write(s, "again", 5), 0);
	ck_assert_int_eq(crec_sink_close(s, err, sizeof err), 0);
	ck_assert_int_eq(fcntl(fd, F_GETFD), 0); /* the program's, still open */
	ck_assert_str_eq(slurp(path, got, sizeof got), "program window again");
	close(fd);
	ck_assert_ptr_null(crec_sink_open(link, 0, err, sizeof err));
	ck_assert_msg(strstr(err, strerror(EBADF)), "said: %s", err);
	ck_assert_int_eq(readlink(link, got, sizeof got - 1), (ssize_t)strlen(name));
}
END_TEST

static Suite *sink_suite(void)
{
	Suite *s = suite_create("sink");
	TCase *tc = tcase_create("open");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, regular_file);
	tcase_add_test(tc, fifo);
	tcase_add_test(tc, own_descriptor);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(sink_suite)
