/* check_fdio.c - all of a buffer to or from a descriptor (base/fdio.c):
 * cm_write_all through the short writes and EINTRs of a small pipe whose
 * writer a timer keeps interrupting, its errnos (a closed reader, a full
 * device), a descriptor left non-blocking by another process (waited on,
 * not EAGAIN), cm_pread_all's count at a file's end, and cm_path_names_fd. */
/* F_SETPIPE_SZ is a Linux extension that glibc declares only for
 * _GNU_SOURCE. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "check_common.h"
#include "base/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/time.h>
#include <time.h>

/* 64 KiB through a one-page pipe: 16 fills, each cut short by the timer,
 * and calls interrupted before their first byte while the reader pauses. */
#define TOTAL (64u << 10)

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

struct reader {
	int fd;
	int go;              /* set (under mu) when the reader may start */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *got;  /* what came through, TOTAL bytes at most */
	size_t n;
};

/* The slow reader: waits for go, then reads the pipe in small pieces with a
 * pause after each until its end.  The pause is longer than the timer's
 * period, so that the writer, finding the pipe full, is interrupted while
 * it waits: after some bytes of a call (a short write), or before the first
 * (EINTR). */
static void *read_slowly(void *arg)
{
	struct reader *r = arg;
	struct timespec pause = {0, 3 * 1000 * 1000};
	pthread_mutex_lock(&r->mu);
	while (!r->go)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	for (;;) {
		size_t room = TOTAL - r->n;
		ssize_t k = read(r->fd, r->got + r->n, room < 1000 ? (room ? room : 1) : 1000);
		if (k <= 0)
			break;
		r->n += (size_t)k;
		nanosleep(&pause, NULL);
	}
	return NULL;
}

START_TEST(test_write_all_short_and_eintr)
{
	static unsigned char data[TOTAL];
	struct reader r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART: write(2) returns */
	struct itimerval every = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
	sigset_t alrm;
	pthread_t th;
	int p[2];
	ssize_t w;
	size_t done;

	for (size_t i = 0; i < TOTAL; i++)
		data[i] = (unsigned char)(i * 131 + (i >> 9));
	r.got = calloc(TOTAL, 1);
	ck_assert_ptr_nonnull(r.got);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	r.fd = p[0];
	/* the alarms go to this thread only: the reader is made with it blocked */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &alrm, NULL), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, read_slowly, &r), 0);
	ck_assert_int_eq(pthread_sigmask(SIG_UNBLOCK, &alrm, NULL), 0);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &every, NULL), 0);

	/* the setting is what the helper must survive: with the reader still
	 * waiting, a plain write(2) fills the pipe and is cut short by the
	 * timer, and the next one is interrupted before its first byte */
	w = write(p[1], data, TOTAL);
	ck_assert_int_gt(w, 0);
	ck_assert_int_lt(w, (ssize_t)TOTAL);
	done = (size_t)w;
	errno = 0;
	ck_assert_int_eq(write(p[1], data + done, TOTAL - done), -1);
	ck_assert_int_eq(errno, EINTR);

	/* the rest in one call, the reader now draining it slowly */
	pthread_mutex_lock(&r.mu);
	r.go = 1;
	pthread_cond_signal(&r.cv);
	pthread_mutex_unlock(&r.mu);
	ck_assert_int_eq(cm_write_all(p[1], data + done, TOTAL - done), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &off, NULL), 0);
	close(p[1]);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	close(p[0]);
	ck_assert_int_gt(alarms, 2);
	ck_assert_uint_eq(r.n, TOTAL);
	ck_assert(memcmp(r.got, data, TOTAL) == 0);
	free(r.got);
}
END_TEST

/* A pipe whose write end is non-blocking (O_NONBLOCK on a description the
 * caller shares, set by a parent: `cuptimerge ... | reader` under a shell
 * or program that left it so): the reader is slow, not gone, and the bytes
 * it has no room for yet are waited for (poll) rather than lost with
 * EAGAIN.  The reader starts late and drains a one-page pipe in small
 * pieces, so the writer finds it full again and again. */
START_TEST(test_write_all_nonblocking)
{
	static unsigned char data[TOTAL];
	struct reader r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .go = 1};
	struct timespec late = {0, 50 * 1000 * 1000};
	pthread_t th;
	int p[2];

	for (size_t i = 0; i < TOTAL; i++)
		data[i] = (unsigned char)(i * 17 + (i >> 11));
	r.got = calloc(TOTAL, 1);
	ck_assert_ptr_nonnull(r.got);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK), 0);
	r.fd = p[0];
	/* the setting: a write the full pipe cannot take fails at once */
	ck_assert_int_eq(write(p[1], data, TOTAL), 4096);
	errno = 0;
	ck_assert_int_eq(write(p[1], data + 4096, 1), -1);
	ck_assert(errno == EAGAIN || errno == EWOULDBLOCK);
	nanosleep(&late, NULL);
	ck_assert_int_eq(pthread_create(&th, NULL, read_slowly, &r), 0);
	ck_assert_int_eq(cm_write_all(p[1], data + 4096, TOTAL - 4096), 0);
	close(p[1]);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	close(p[0]);
	ck_assert_uint_eq(r.n, TOTAL);
	ck_assert(memcmp(r.got, data, TOTAL) == 0);
	free(r.got);
}
END_TEST

START_TEST(test_write_all_errno)
{
	int p[2], fd;
	char b[100] = {0};
	/* a closed reader: EPIPE comes back for the caller to judge */
	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	ck_assert_int_eq(cm_write_all(p[1], b, sizeof b), EPIPE);
	close(p[1]);
	/* a full device */
	fd = open("/dev/full", O_WRONLY);
	ck_assert_msg(fd >= 0, "/dev/full: %s", strerror(errno));
	ck_assert_int_eq(cm_write_all(fd, b, sizeof b), ENOSPC);
	close(fd);
	/* nothing to write writes nothing, even to no descriptor */
	ck_assert_int_eq(cm_write_all(-1, b, 0), 0);
	ck_assert_int_eq(cm_write_all(-1, b, 1), EBADF);
}
END_TEST

START_TEST(test_pread_all)
{
	const char *path = check_tmpfile_bytes("0123456789", 10);
	char b[32];
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cm_pread_all(fd, b, 4, 3), 4);
	ck_assert(memcmp(b, "3456", 4) == 0);
	/* the file ends first: what there was */
	ck_assert_int_eq(cm_pread_all(fd, b, sizeof b, 5), 5);
	ck_assert(memcmp(b, "56789", 5) == 0);
	ck_assert_int_eq(cm_pread_all(fd, b, sizeof b, 10), 0);
	ck_assert_int_eq(cm_pread_all(fd, b, sizeof b, 1000), 0);
	close(fd);
	errno = 0;
	ck_assert_int_eq(cm_pread_all(fd, b, 1, 0), -1);
	ck_assert_int_eq(errno, EBADF);
}
END_TEST

/* cm_path_names_fd: the names of this process's descriptors, directly, by
 * /dev/fd and /proc/self, and through a chain of links (relative and
 * absolute); files, another process's descriptors and missing names are
 * none.  /dev/stdout is asked only where it is the usual link. */
START_TEST(test_path_names_fd)
{
	char dir[] = "/tmp/check_fdio.XXXXXX", a[64], b[64], c[64], other[64], lnk[PATH_MAX];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(cm_path_names_fd("/dev/fd/2"), 2);
	ck_assert_int_eq(cm_path_names_fd("/proc/self/fd/0"), 0);
	ck_assert_int_eq(cm_path_names_fd("/proc/thread-self/fd/1"), 1);
	snprintf(a, sizeof a, "/proc/%ld/fd/7", (long)getpid());
	ck_assert_int_eq(cm_path_names_fd(a), 7); /* closed or not: it names 7 */
	if (readlink("/dev/stdout", lnk, sizeof lnk) > 0)
		ck_assert_int_eq(cm_path_names_fd("/dev/stdout"), 1);
	snprintf(a, sizeof a, "%s/a", dir); /* a -> b -> c -> /dev/fd/1 */
	snprintf(b, sizeof b, "%s/b", dir);
	snprintf(c, sizeof c, "%s/c", dir);
	ck_assert_int_eq(symlink("b", a), 0);
	ck_assert_int_eq(symlink(c, b), 0);
	ck_assert_int_eq(symlink("/dev/fd/1", c), 0);
	ck_assert_int_eq(cm_path_names_fd(a), 1);
	ck_assert_int_eq(cm_path_names_fd("/dev/null"), -1);
	ck_assert_int_eq(cm_path_names_fd(dir), -1);
	ck_assert_int_eq(cm_path_names_fd("/proc/self/fdinfo/1"), -1);
	ck_assert_int_eq(cm_path_names_fd("/proc/1/fd/1"), getpid() == 1 ? 1 : -1);
	snprintf(other, sizeof other, "%s/missing/1", dir);
	ck_assert_int_eq(cm_path_names_fd(other), -1);
	unlink(c); /* a dangling link, and a loop */
	ck_assert_int_eq(cm_path_names_fd(a), -1);
	ck_assert_int_eq(symlink("a", c), 0);
	ck_assert_int_eq(cm_path_names_fd(a), -1);
	unlink(a), unlink(b), unlink(c), rmdir(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("fdio");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_write_all_short_and_eintr);
	tcase_add_test(tc, test_write_all_nonblocking);
	tcase_add_test(tc, test_write_all_errno);
	tcase_add_test(tc, test_pread_all);
	tcase_add_test(tc, test_path_names_fd);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
