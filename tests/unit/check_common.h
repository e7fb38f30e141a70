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
#include <stdint.h>

/* A passing ck_assert* calls libcheck's _mark_point, which writes the
 * assertion's place through a pipe to the runner, so that a test that then
 * crashes or times out is reported "(after this point)".  In a loop of
 * checks that is millions of write(2)s (3.8 million a run of check_cpuindex,
 * 2.3 million of check_tables, whose tests check_idmaps and three others
 * now hold): seconds of kernel time a run, and timeouts where the machine
 * is loaded.  Here each place is written the first time a test passes it,
 * and not again: the point a report names is still one the test passed,
 * at worst a line or a loop earlier than the last.  The table
 * is each thread's own (some tests check in the threads of a pool); a full
 * one (no test has that many places) writes every pass, as before. */
static inline void check_mark_point(const char *file, int line)
{
	enum { SEEN = 1024 };
	static __thread struct {
		const char *file;
		int line;
	} seen[SEEN];
	size_t h = ((size_t)(uintptr_t)file ^ (size_t)line * 2654435761u) % SEEN;
	for (int probe = 0; probe < 32; probe++, h = (h + 1) % SEEN) {
		if (seen[h].file == file && seen[h].line == line)
			return;
		if (!seen[h].file) {
			seen[h].file = file;
			seen[h].line = line;
			break;
		}
	}
	(_mark_point)(file, line);
}
#define _mark_point(file, line) check_mark_point(file, line)

/* B (a cm_buf, or anything with p and len) holds exactly the N bytes
 * WANT: check_pbwrite's encodings and check_pfstream's outputs. */
#define ck_bytes(b, want, n)                                         \
	do {                                                         \
		ck_assert_uint_eq((b)->len, (n));                    \
		ck_assert(!memcmp((b)->p, (want), (n)));             \
	} while (0)

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

/* The files check_tmpfile_bytes made in this process, removed at its exit
 * (a test's process: the suites run in fork mode, and a failed check exits
 * too), so that a run of the unit tests leaves nothing in /tmp.  A test
 * killed by its timeout still leaves its files. */
static char **check_tmpfiles;
static size_t check_ntmpfiles;

static inline void check_tmpfiles_remove(void)
{
	for (size_t i = 0; i < check_ntmpfiles; i++) {
		unlink(check_tmpfiles[i]);
		free(check_tmpfiles[i]);
	}
	free(check_tmpfiles);
	check_tmpfiles = NULL;
	check_ntmpfiles = 0;
}

/* Write the N bytes at P to a new temporary file and return its path
 * (static buffer); the file is removed when the process exits. */
static inline const char *check_tmpfile_bytes(const void *p, size_t n)
{
	static char path[64];
	char **grown;
	int fd;
	snprintf(path, sizeof path, "/tmp/cuptimerge-check.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	grown = realloc(check_tmpfiles, (check_ntmpfiles + 1) * sizeof *grown);
	ck_assert_ptr_nonnull(grown);
	check_tmpfiles = grown;
	if (check_ntmpfiles == 0)
		atexit(check_tmpfiles_remove);
	check_tmpfiles[check_ntmpfiles] = strdup(path);
	ck_assert_ptr_nonnull(check_tmpfiles[check_ntmpfiles]);
	check_ntmpfiles++;
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
