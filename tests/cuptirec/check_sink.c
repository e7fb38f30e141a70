/* check_sink.c - where cuptirec's window goes (src/cuptirec/sink.c's
 * crec_sink_open), without a GPU and without CUPTI: the sink is the
 * collector's, but opening and writing its file needs neither, so this test
 * compiles sink.c itself and runs wherever libcheck does.
 *
 * The window's -o was opened with O_CREAT | O_TRUNC: /dev/stdout under
 * `>> log` reopened the log and cut what it held; a FIFO without a reader
 * stopped the traced program at its CUDA start for good.  A first fix (in12)
 * failed at once on a FIFO without a reader, and lost the window of a
 * reader started beside the program (tests/gpu/run.sh's pool_exhaustion hung
 * in that reader); these cases hold the sink to the thread map's rules
 * (recout.sh) with a bounded wait for the reader instead (CUPTIREC_FIFO_WAIT,
 * the thread map's too since rec15: check_threads' "output" cases), and a
 * non-blocking descriptor, which lost the window with EAGAIN, to a slow
 * reader's pace. */
#include "config.h"
#include "../unit/check_common.h"
#include "cuptirec/opts.h"
#include "cuptirec/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

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

/* Open PATH as a sink (waiting at most WAIT s for a FIFO's reader), write
 * TEXT, close; returns crec_sink_close's status, its message in ERR. */
static int sink_text(const char *path, double wait, const char *text, char *err, size_t errsz)
{
	crec_sink *s = crec_sink_open_wait(path, 0, wait, err, errsz);
	ck_assert_msg(s != NULL, "open %s: %s", path, err);
	ck_assert_int_eq(crec_sink_write(s, text, strlen(text)), 0);
	return crec_sink_close(s, err, errsz);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A regular file: made, then truncated and written again (as before). */
START_TEST(regular_file)
{
	char path[PATH_MAX], err[512], got[64];
	snprintf(path, sizeof path, "%s/w.json", check_tmpdir);
	ck_assert_int_eq(sink_text(path, 1, "{\"events\": []}", err, sizeof err), 0);
	ck_assert_int_eq(sink_text(path, 1, "{}", err, sizeof err), 0);
	ck_assert_str_eq(slurp(path, got, sizeof got), "{}");
}
END_TEST

/* `cuptirec -o /dev/stdout ... >> log`: the program's standard output,
 * appending; the log keeps what it held and what the program writes after
 * the window follows it.  Reopened with O_TRUNC, the log lost 'earlier'. */
START_TEST(stdout_appended)
{
	char path[PATH_MAX], err[512], got[128];
	int fd, saved = dup(1);
	ck_assert_int_ge(saved, 0);
	snprintf(path, sizeof path, "%s/log", check_tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "earlier\n", 8), 8);
	close(fd);
	fd = open(path, O_WRONLY | O_APPEND); /* the shell's >> */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dup2(fd, 1), 1);
	close(fd);
	ck_assert_int_eq(write(1, "program\n", 8), 8);
	ck_assert_int_eq(sink_text("/dev/stdout", 1, "window\n", err, sizeof err), 0);
	ck_assert_int_eq(write(1, "after\n", 6), 6); /* 1 is still the program's */
	dup2(saved, 1);
	close(saved);
	ck_assert_str_eq(slurp(path, got, sizeof got), "earlier\nprogram\nwindow\nafter\n");
}
END_TEST

/* /dev/fd/N, /proc/self/fd/N and a link to one: descriptor N itself, not
 * truncated; with N closed, EBADF, and the link neither followed to a file
 * nor replaced. */
START_TEST(own_descriptor)
{
	char path[PATH_MAX], name[64], proc[64], link[PATH_MAX], err[512], got[64];
	int fd;
	crec_sink *s;
	snprintf(path, sizeof path, "%s/out", check_tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_gt(fd, 2);
	ck_assert_int_eq(write(fd, "program ", 8), 8);
	snprintf(name, sizeof name, "/dev/fd/%d", fd);
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	snprintf(link, sizeof link, "%s/link", check_tmpdir);
	ck_assert_int_eq(symlink(name, link), 0);
	ck_assert_int_eq(sink_text(name, 1, "window ", err, sizeof err), 0);
	ck_assert_int_eq(sink_text(proc, 1, "proc ", err, sizeof err), 0);
	ck_assert_int_eq(sink_text(link, 1, "again", err, sizeof err), 0);
	ck_assert_int_eq(fcntl(fd, F_GETFD), 0); /* the program's, still open */
	ck_assert_str_eq(slurp(path, got, sizeof got), "program window proc again");
	close(fd);
	s = crec_sink_open_wait(link, 0, 1, err, sizeof err);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err, link) && strstr(err, strerror(EBADF)), "said: %s", err);
	ck_assert_int_eq(readlink(link, got, sizeof got - 1), (ssize_t)strlen(name));
}
END_TEST

/* A FIFO whose reader is there first: written through. */
START_TEST(fifo_with_reader)
{
	char path[PATH_MAX], err[512], got[64];
	int rfd;
	snprintf(path, sizeof path, "%s/fifo", check_tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rfd, 0);
	ck_assert_int_eq(sink_text(path, 1, "{\"events\": []}\n", err, sizeof err), 0);
	ck_assert_int_eq(read(rfd, got, sizeof got), 15);
	close(rfd);
}
END_TEST

/* A slow reader's end, in a child: FD read to its end, 64 KiB at a time
 * with 0.2 ms between reads, against WANT[0..TOTAL).  Exits 0 when every
 * byte came in order, 3 at a wrong or extra byte, 4 when some are missing. */
static void read_slowly(int fd, const unsigned char *want, size_t total)
{
	static unsigned char in[65536];
	size_t got = 0;
	ssize_t k;
	while ((k = read(fd, in, sizeof in)) > 0) {
		if (got + (size_t)k > total || memcmp(in, want + got, (size_t)k))
			_exit(3);
		got += (size_t)k;
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
	_exit(got == total ? 0 : 4);
}

/* A reader that opens the FIFO 0.3 s after the window does (one started
 * beside the program): waited for, and then 4 MiB, many times a pipe's
 * capacity, reach it whole through a slow reader: the descriptor blocks
 * on a full pipe rather than fail with EAGAIN.  The child exits 0 when it
 * read every byte in order. */
START_TEST(fifo_late_reader)
{
	enum { TOTAL = 4 << 20 };
	static unsigned char big[TOTAL];
	char path[PATH_MAX], err[512];
	crec_sink *s;
	pid_t pid;
	int status;
	snprintf(path, sizeof path, "%s/fifo", check_tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	for (size_t i = 0; i < TOTAL; i++)
		big[i] = (unsigned char)(i * 7 + i / 251);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd;
		nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
		if ((fd = open(path, O_RDONLY)) < 0)
			_exit(2);
		read_slowly(fd, big, TOTAL);
	}
	s = crec_sink_open_wait(path, 0, 5, err, sizeof err);
	ck_assert_msg(s != NULL, "said: %s", err);
	ck_assert_int_eq(crec_sink_write(s, big, TOTAL), 0);
	ck_assert_msg(crec_sink_close(s, err, sizeof err) == 0, "said: %s", err);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "reader status %#x", status);
}
END_TEST

/* A FIFO that no reader opens: an error after the wait, saying so, not an
 * open that waits forever (libcheck's timeout fails the test where it
 * would). */
START_TEST(fifo_without_reader)
{
	char path[PATH_MAX], err[512];
	double t0, waited;
	snprintf(path, sizeof path, "%s/fifo", check_tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	t0 = now_s();
	ck_assert_ptr_null(crec_sink_open_wait(path, 0, 0.5, err, sizeof err));
	waited = now_s() - t0;
	ck_assert_msg(strstr(err, path) && strstr(err, "without a reader for 0.5 s"), "said: %s", err);
	ck_assert_msg(waited >= 0.5 && waited < 2.5, "waited %g s", waited);
}
END_TEST

/* A reader that goes away: the writes fail with EPIPE, reported at close;
 * the process is not killed by SIGPIPE (it was, on the program's thread
 * writing the trailer), and a SIGPIPE pending before stays pending. */
START_TEST(fifo_reader_gone)
{
	static char chunk[1 << 16];
	char path[PATH_MAX], err[512];
	sigset_t pipe_set, pending;
	crec_sink *s;
	int rfd, failed = 0;
	ck_assert_ptr_ne(signal(SIGPIPE, SIG_DFL), SIG_ERR);
	snprintf(path, sizeof path, "%s/fifo", check_tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rfd, 0);
	s = crec_sink_open_wait(path, 0, 1, err, sizeof err);
	ck_assert_msg(s != NULL, "said: %s", err);
	close(rfd);
	memset(chunk, 'x', sizeof chunk);
	for (int i = 0; i < 16 && !failed; i++) /* 1 MiB: past the sink's buffer */
		failed = crec_sink_write(s, chunk, sizeof chunk) != 0;
	ck_assert_int_eq(failed, 1);
	ck_assert_int_eq(crec_sink_close(s, err, sizeof err), -1);
	ck_assert_msg(strstr(err, strerror(EPIPE)), "said: %s", err);
	ck_assert_int_eq(sigpending(&pending), 0);
	ck_assert(!sigismember(&pending, SIGPIPE)); /* taken back */

	/* the program's own SIGPIPE, blocked and pending, is left to it */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &pipe_set, NULL), 0);
	ck_assert_int_eq(raise(SIGPIPE), 0);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rfd, 0);
	s = crec_sink_open_wait(path, 0, 1, err, sizeof err);
	ck_assert_msg(s != NULL, "said: %s", err);
	close(rfd);
	ck_assert_int_eq(crec_sink_write(s, chunk, sizeof chunk), 0); /* buffered */
	ck_assert_int_eq(crec_sink_close(s, err, sizeof err), -1);
	ck_assert_int_eq(sigpending(&pending), 0);
	ck_assert(sigismember(&pending, SIGPIPE));
}
END_TEST

/* The program's standard output non-blocking (O_NONBLOCK on a pipe's open
 * file description, shared with the parent that set it): the window goes
 * through a dup of it, non-blocking too, and every write the full pipe
 * could not take failed with EAGAIN, the window lost.  A reader that is
 * slow (late, then a piece at a time) is waited for: 4 MiB reach it whole.
 * The child exits 0 when it read every byte in order. */
START_TEST(nonblocking_descriptor)
{
	enum { TOTAL = 4 << 20 };
	static unsigned char big[TOTAL];
	char name[64], err[512];
	crec_sink *s;
	pid_t pid;
	int p[2], status;
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK), 0);
	for (size_t i = 0; i < TOTAL; i++)
		big[i] = (unsigned char)(i * 5 + i / 509);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[1]);
		nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
		read_slowly(p[0], big, TOTAL);
	}
	close(p[0]);
	snprintf(name, sizeof name, "/dev/fd/%d", p[1]);
	s = crec_sink_open_wait(name, 0, 1, err, sizeof err);
	ck_assert_msg(s != NULL, "said: %s", err);
	ck_assert_int_eq(crec_sink_write(s, big, TOTAL / 2), 0);
	for (size_t at = TOTAL / 2; at < TOTAL; at += 4096) /* through the sink's buffer too */
		ck_assert_int_eq(crec_sink_write(s, big + at, 4096), 0);
	ck_assert_msg(crec_sink_close(s, err, sizeof err) == 0, "said: %s", err);
	ck_assert_int_ne(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0); /* the program's, as it was */
	close(p[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "reader status %#x", status);
}
END_TEST

/* CUPTIREC_FIFO_WAIT (crec_fifo_wait_env, opts.h): seconds as --delay's,
 * 0 for one try; unset or empty, the default; anything else -1 and the
 * default, for the caller's warning. */
START_TEST(fifo_wait_setting)
{
	double w = -5;
	unsetenv("CUPTIREC_FIFO_WAIT");
	ck_assert_int_eq(crec_fifo_wait_env(&w), 0);
	ck_assert(w == CREC_FIFO_WAIT_DEFAULT && w == 10.0);
	setenv("CUPTIREC_FIFO_WAIT", "", 1);
	ck_assert_int_eq(crec_fifo_wait_env(&w), 0);
	ck_assert(w == 10.0);
	setenv("CUPTIREC_FIFO_WAIT", "0.5", 1);
	ck_assert_int_eq(crec_fifo_wait_env(&w), 0);
	ck_assert(w == 0.5);
	setenv("CUPTIREC_FIFO_WAIT", "0", 1);
	ck_assert_int_eq(crec_fifo_wait_env(&w), 0);
	ck_assert(w == 0);
	for (const char *const *b = (const char *const[]){ "soon", "-1", " 2", "1e99", "inf", "0x10", NULL }; *b; b++) {
		setenv("CUPTIREC_FIFO_WAIT", *b, 1);
		w = -5;
		ck_assert_msg(crec_fifo_wait_env(&w) == -1, "'%s' taken", *b);
		ck_assert(w == 10.0);
	}
	unsetenv("CUPTIREC_FIFO_WAIT");
}
END_TEST

/* A FIFO without a reader and a wait of 0: one try, the error at once. */
START_TEST(fifo_wait_zero)
{
	char path[PATH_MAX], err[512];
	double t0;
	snprintf(path, sizeof path, "%s/fifo", check_tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	t0 = now_s();
	ck_assert_ptr_null(crec_sink_open_wait(path, 0, 0, err, sizeof err));
	ck_assert_msg(now_s() - t0 < 0.5, "waited %g s", now_s() - t0);
	ck_assert_msg(strstr(err, "without a reader for 0 s"), "said: %s", err);
}
END_TEST

/* A device is written through; /dev/full's error comes back at close. */
START_TEST(dev_full)
{
	char err[512];
	if (access("/dev/full", W_OK) != 0)
		return;
	ck_assert_int_eq(sink_text("/dev/full", 1, "{}", err, sizeof err), -1);
	ck_assert_msg(strstr(err, "/dev/full") && strstr(err, strerror(ENOSPC)), "said: %s", err);
	ck_assert_int_eq(sink_text("/dev/null", 1, "{}", err, sizeof err), 0);
}
END_TEST

static Suite *sink_suite(void)
{
	Suite *s = suite_create("sink");
	TCase *tc = tcase_create("open");
	tcase_add_checked_fixture(tc, check_tmpdir_setup, check_tmpdir_teardown);
	tcase_add_test(tc, regular_file);
	tcase_add_test(tc, stdout_appended);
	tcase_add_test(tc, own_descriptor);
	tcase_add_test(tc, fifo_with_reader);
	tcase_add_test(tc, fifo_late_reader);
	tcase_add_test(tc, fifo_without_reader);
	tcase_add_test(tc, fifo_reader_gone);
	tcase_add_test(tc, dev_full);
	tcase_add_test(tc, nonblocking_descriptor);
	tcase_add_test(tc, fifo_wait_setting);
	tcase_add_test(tc, fifo_wait_zero);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(sink_suite)
