/* check_common.h - shared harness for the libcheck unit tests: one suite per
 * test program, run in fork mode, exit status from the failure count. */
#ifndef CHECK_COMMON_H
#define CHECK_COMMON_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* Define main() running the suite MAKE_SUITE() returns. */
#define CHECK_MAIN(make_suite)                                         \
	int main(void)                                                 \
	{                                                              \
		SRunner *sr = srunner_create(make_suite());            \
		int failed;                                            \
		srunner_run_all(sr, CK_NORMAL);                        \
		failed = srunner_ntests_failed(sr);                    \
		srunner_free(sr);                                      \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;           \
	}

/* Write the N bytes at P to a new temporary file and return its path
 * (static buffer). */
static inline const char *check_tmpfile_bytes(const void *p, size_t n)
{
	static char path[64];
	int fd;
	snprintf(path, sizeof path, "/tmp/cuptimerge-check.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
	return path;
}

/* Write TEXT to a new temporary file and return its path (static buffer). */
static inline const char *check_tmpfile(const char *text) { return check_tmpfile_bytes(text, strlen(text)); }

/* A directory of one's own for each test of a TCase that takes
 * check_tmpdir_setup and check_tmpdir_teardown as its checked fixture: made
 * under /tmp before the test, removed with all it holds after. */
static char check_tmpdir[256];

static inline void check_tmpdir_setup(void)
{
	snprintf(check_tmpdir, sizeof check_tmpdir, "/tmp/cuptimerge-check.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(check_tmpdir));
}

static inline void check_tmpdir_teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", check_tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", check_tmpdir);
}

#endif
