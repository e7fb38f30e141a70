/* tmpfile.c - temporary files that leave nothing behind (tmpfile.h). */
/* O_TMPFILE is a Linux extension that glibc declares only for _GNU_SOURCE
 * (configure.ac is shared, so keep it local). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "config.h"
#include "base/tmpfile.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 when the test aid CUPTIMERGE_NO_TMPFILE asks for named temporary files
 * only, as where O_TMPFILE is not supported (so the tests reach that path). */
static int no_tmpfile(void)
{
	const char *e = getenv("CUPTIMERGE_NO_TMPFILE");
	return e && *e && strcmp(e, "0");
}

/* An unnamed file (O_TMPFILE) in directory DIR, open for writing (and
 * reading with RDWR), mode 0666 less the umask.  Returns its descriptor; -1
 * with errno set; -2 when the kernel or the file system cannot make one (or
 * CUPTIMERGE_NO_TMPFILE): then the caller makes a named one instead. */
int cm_temp_unnamed(const char *dir, int rdwr)
{
#ifdef O_TMPFILE
	int fd;
	if (no_tmpfile())
		return -2;
	fd = open(dir, O_TMPFILE | (rdwr ? O_RDWR : O_WRONLY) | O_CLOEXEC, 0666);
	/* EISDIR: a kernel before 3.11 (the flag includes O_DIRECTORY); EOPNOTSUPP:
	 * a file system without it; EINVAL: either, in some versions */
	if (fd < 0 && (errno == EISDIR || errno == EOPNOTSUPP || errno == EINVAL))
		return -2;
	return fd;
#else
	(void)dir, (void)rdwr;
	return -2;
#endif
}

int cm_temp_fd(const char *tag)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;
	if (!dir || !*dir)
		dir = "/tmp";
	fd = cm_temp_unnamed(dir, 1);
	if (fd >= 0)
		return fd;
	if (fd == -1)
		return cm_fail(CM_EXIT_IO, dir, -1, "cannot create a temporary file: %s", strerror(errno));
	snprintf(path, sizeof path, "%s/cuptimerge-%s.XXXXXX", dir, tag);
	fd = mkstemp(path);
	if (fd < 0)
		return cm_fail(CM_EXIT_IO, path, -1, "cannot create a temporary file: %s", strerror(errno));
	unlink(path); /* at once: it is ours alone, by its descriptor */
	return fd;
}

FILE *cm_temp_file(const char *tag)
{
	int fd = cm_temp_fd(tag);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w+b");
	if (fd >= 0 && !f) {
		cm_error(CM_EXIT_IO, NULL, -1, "cannot open a temporary file: %s", strerror(errno));
		close(fd);
	}
	return f;
}
