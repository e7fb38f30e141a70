/* check_output.c - -o's durability is opt-in (io/outfile.c, issue 30): by
 * default an output file is named without fsync(2) and without the early
 * write-back (sync_file_range(2)); after cm_output_set_sync(1) it gets
 * both, and its directory is synced after the name.  Either way the file
 * has the bytes written, and a failed close leaves the old file alone.
 * fsync, fdatasync and sync_file_range are wrapped (-Wl,--wrap, see
 * tests/Makefile.inc): counted, then done; close, to fail as NFS's can;
 * write, its sizes noted, for the buffer's (cm_output_set_buffer). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sync_file_range */
#endif
#include "check_common.h"
#include "io/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

static int n_fsync, n_fdatasync, n_range;
static int fsync_dir; /* of the fsyncs, those of a directory */

int __real_fsync(int fd);
int __real_fdatasync(int fd);
int __real_sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags);
int __wrap_fsync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags);
int __real_close(int fd);
int __wrap_close(int fd);
ssize_t __real_write(int fd, const void *p, size_t n);
ssize_t __wrap_write(int fd, const void *p, size_t n);

/* While track_writes: the sizes of the write(2) calls to regular files,
 * in order (test_buffer). */
static int track_writes;
static size_t wrote[64];
static int n_wrote;

ssize_t __wrap_write(int fd, const void *p, size_t n)
{
	struct stat st;
	if (track_writes && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && n_wrote < 64)
		wrote[n_wrote++] = n;
	return __real_write(fd, p, n);
}

/* 1: close(2) of a regular file of 4 MiB (the output: write_out's size)
 * fails with EIO after closing it, as NFS's close reports a write error
 * that the write-back met (no fsync came first to find it). */
static int fail_close;

int __wrap_close(int fd)
{
	struct stat st;
	int hit = fail_close && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4 << 20;
	int rc = __real_close(fd);
	if (hit) {
		errno = EIO;
		return -1;
	}
	return rc;
}

int __wrap_fsync(int fd)
{
	struct stat st;
	__atomic_add_fetch(&n_fsync, 1, __ATOMIC_SEQ_CST);
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		__atomic_add_fetch(&fsync_dir, 1, __ATOMIC_SEQ_CST);
	return __real_fsync(fd);
}

int __wrap_fdatasync(int fd)
{
	__atomic_add_fetch(&n_fdatasync, 1, __ATOMIC_SEQ_CST);
	return __real_fdatasync(fd);
}

int __wrap_sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags)
{
	__atomic_add_fetch(&n_range, 1, __ATOMIC_SEQ_CST);
	return __real_sync_file_range(fd, off, n, flags);
}

/* Write 4 MiB (a pattern) through an output to DIR/out.json opened with
 * THREADS threads, GZIP_LEVEL, and close it with OK; the close's result. */
static int write_out(const char *dir, int threads, int gzip_level, int ok)
{
	static unsigned char block[256 << 10];
	char path[256];
	cm_output *out;
	snprintf(path, sizeof path, "%s/out.json", dir);
	for (size_t i = 0; i < sizeof block; i++)
		block[i] = (unsigned char)('a' + i % 26);
	out = cm_output_open(path, gzip_level, threads);
	ck_assert_ptr_nonnull(out);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(cm_output_write(out, block, sizeof block), 0);
	return cm_output_close(out, ok);
}

/* The number of entries of DIR, less . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static off_t size_of(const char *dir)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/out.json", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

static void reset(void) { n_fsync = n_fdatasync = n_range = fsync_dir = 0; }

/* Each way of naming the file: O_TMPFILE and linkat, or a named temporary
 * file and rename (the test aid CUPTIMERGE_NO_TMPFILE); 1 and 4 threads
 * (a writing thread and, with sync, a write-back thread); plain and gzip. */
START_TEST(test_default_and_sync)
{
	static const int threads[] = {1, 4};
	char dir[] = "/tmp/cuptimerge-check-out.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("CUPTIMERGE_NO_TMPFILE", _i ? "1" : "0", 1);
	for (int t = 0; t < 2; t++)
		for (int z = -1; z <= 1; z += 2) {
			cm_output_set_sync(0);
			reset();
			ck_assert_int_eq(write_out(dir, threads[t], z, 1), 0);
			ck_assert_int_eq(n_fsync + n_fdatasync + n_range, 0);
			if (z < 0)
				ck_assert_int_eq(size_of(dir), 4 << 20);
			ck_assert_int_eq(entries(dir), 1);

			cm_output_set_sync(1);
			reset();
			ck_assert_int_eq(write_out(dir, threads[t], z, 1), 0);
			ck_assert_int_eq(n_fsync, 2); /* the file, then its directory */
			ck_assert_int_eq(fsync_dir, 1);
			ck_assert_int_eq(n_fdatasync, 0);
			if (z < 0) /* 4 MiB plain */
				ck_assert_int_eq(size_of(dir), 4 << 20);
			/* the write-back started on the way: by the writer at 1
			 * thread (at 4 its thread may not have started a step
			 * before the end, and the fsync does it all) */
			if (z < 0 && threads[t] == 1)
				ck_assert_int_gt(n_range, 0);
			ck_assert_int_eq(entries(dir), 1);
		}
	cm_output_set_sync(0);
	unsetenv("CUPTIMERGE_NO_TMPFILE");
	{
		char path[300];
		snprintf(path, sizeof path, "%s/out.json", dir);
		unlink(path);
		rmdir(dir);
	}
}
END_TEST

/* Make DIR (a mkdtemp template) holding PATH = DIR/out.json with "old\n". */
static void old_file_make(char *dir, char *path, size_t size)
{
	int fd;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, size, "%s/out.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "old\n", 4), 4);
	close(fd);
}

/* PATH still holds "old\n". */
static void old_file_kept(const char *path)
{
	char buf[16];
	int fd = open(path, O_RDONLY);
	ck_assert_int_eq(read(fd, buf, sizeof buf), 4);
	close(fd);
	ck_assert(!memcmp(buf, "old\n", 4));
}

/* A failed run (close without OK), synced or not: the old file stays, no
 * temporary file is left, nothing is synced. */
START_TEST(test_failed_keeps_old)
{
	char dir[] = "/tmp/cuptimerge-check-out.XXXXXX", path[300];
	old_file_make(dir, path, sizeof path);
	setenv("CUPTIMERGE_NO_TMPFILE", _i ? "1" : "0", 1);
	for (int sync = 0; sync < 2; sync++) {
		cm_output_set_sync(sync);
		reset();
		ck_assert_int_eq(write_out(dir, 1 + 3 * sync, -1, 0), -1);
		ck_assert_int_eq(n_fsync + n_fdatasync, 0);
		ck_assert_int_eq(entries(dir), 1);
		old_file_kept(path);
	}
	cm_output_set_sync(0);
	unsetenv("CUPTIMERGE_NO_TMPFILE");
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Without fsync, close(2) is where a delayed write error can show: it is
 * checked before the file is named (a dup names it: outfile.c's
 * close_unnamed), so a failed close leaves the old file and nothing else,
 * with O_TMPFILE and with the named temporary file. */
START_TEST(test_close_error)
{
	char dir[] = "/tmp/cuptimerge-check-out.XXXXXX", path[300];
	old_file_make(dir, path, sizeof path);
	setenv("CUPTIMERGE_NO_TMPFILE", _i ? "1" : "0", 1);
	fail_close = 1;
	ck_assert_int_eq(write_out(dir, 1, -1, 1), -1);
	fail_close = 0;
	ck_assert_int_eq(entries(dir), 1);
	old_file_kept(path);
	unsetenv("CUPTIMERGE_NO_TMPFILE");
	unlink(path);
	rmdir(dir);
}
END_TEST

/* An output's buffer (cm_output_set_buffer, --split's files): small
 * pieces go out in writes of the buffer's size; a piece of that size or
 * more goes out as it is, after what is pending; by default, 256 KiB
 * writes.  The file has every byte, in order. */
START_TEST(test_buffer)
{
	static unsigned char piece[40000], all[160000];
	char dir[] = "/tmp/cuptimerge-check-out.XXXXXX", path[300];
	size_t at = 0, want_most[] = {16384, 16384, 16384, 16384, 16384, 16384, 1696, 40000, 10};
	cm_output *out;
	int fd;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/out.json", dir);
	for (size_t i = 0; i < sizeof piece; i++)
		piece[i] = (unsigned char)('a' + i % 23);
	out = cm_output_open(path, -1, 1);
	ck_assert_ptr_nonnull(out);
	if (_i == 0)
		cm_output_set_buffer(out, 16 << 10);
	n_wrote = 0;
	track_writes = 1;
	for (int k = 0; k < 1000; k++, at += 100) { /* 100,000 bytes in pieces of 100 */
		ck_assert_int_eq(cm_output_write(out, piece + k % 300, 100), 0);
		memcpy(all + at, piece + k % 300, 100);
	}
	ck_assert_int_eq(cm_output_write(out, piece, 40000), 0);
	memcpy(all + at, piece, 40000);
	at += 40000;
	ck_assert_int_eq(cm_output_write(out, piece + 7, 10), 0);
	memcpy(all + at, piece + 7, 10);
	at += 10;
	ck_assert_int_eq(cm_output_close(out, 1), 0);
	track_writes = 0;
	if (_i == 0) {
		ck_assert_int_eq(n_wrote, 9);
		for (int k = 0; k < 9; k++)
			ck_assert_uint_eq(wrote[k], want_most[k]);
	} else { /* all of it held, then written at the close */
		ck_assert_int_eq(n_wrote, 1);
		ck_assert_uint_eq(wrote[0], at);
	}
	{
		static unsigned char back[sizeof all + 1];
		fd = open(path, O_RDONLY);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(read(fd, back, sizeof back), (ssize_t)at);
		close(fd);
		ck_assert(!memcmp(back, all, at));
	}
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_default_and_sync, 0, 2);
	tcase_add_loop_test(tc, test_failed_keeps_old, 0, 2);
	tcase_add_loop_test(tc, test_close_error, 0, 2);
	tcase_add_loop_test(tc, test_buffer, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
