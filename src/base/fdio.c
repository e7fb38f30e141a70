/* fdio.c - all of a buffer to or from a file descriptor, whether a
 * directory takes files, and whether a name is a descriptor (fdio.h). */
#include "config.h"
#include "base/fdio.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Wait until FD takes bytes again (poll, no time limit: a blocking write
 * would wait as long).  0, or the errno of a poll that failed; a reader
 * gone or a bad descriptor is left for the next write to say (EPIPE). */
static int wait_writable(int fd)
{
	struct pollfd pf = {.fd = fd, .events = POLLOUT};
	while (poll(&pf, 1, -1) < 0)
		if (errno != EINTR)
			return errno;
	return 0;
}

int cm_write_all(int fd, const void *p, size_t n)
{
	const unsigned char *q = p;
	while (n) {
		ssize_t w = write(fd, q, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int err = wait_writable(fd);
			if (err)
				return err;
			continue;
		}
		if (w < 0)
			return errno;
		if (w == 0)
			return EIO;
		q += w;
		n -= (size_t)w;
	}
	return 0;
}

ssize_t cm_pread_all(int fd, void *p, size_t n, uint64_t off)
{
	unsigned char *q = p;
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, q + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

int cm_dir_writable(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	return access(dir, W_OK | X_OK) < 0 ? errno : 0;
}

/* Is DIR, made canonical, /proc/PID/fd (or /proc/PID/task/TID/fd) of this
 * process?  realpath turns /proc/self and /proc/thread-self into the
 * numbers, and /dev/fd, a link to /proc/self/fd, into the same. */
static int is_own_fd_dir(const char *dir)
{
	char real[PATH_MAX], own[64];
	size_t n;
	if (!realpath(dir, real))
		return 0;
	n = (size_t)snprintf(own, sizeof own, "/proc/%ld/", (long)getpid());
	if (strncmp(real, own, n))
		return 0;
	if (!strcmp(real + n, "fd"))
		return 1;
	if (strncmp(real + n, "task/", 5))
		return 0;
	n += 5 + strspn(real + n + 5, "0123456789");
	return !strcmp(real + n, "/fd");
}

int cm_path_names_fd(const char *path)
{
	char cur[PATH_MAX], dir[PATH_MAX], link[PATH_MAX];
	if ((size_t)snprintf(cur, sizeof cur, "%s", path) >= sizeof cur)
		return -1;
	for (int hops = 0; hops <= 40; hops++) {
		const char *slash = strrchr(cur, '/'), *base = slash ? slash + 1 : cur;
		ssize_t n;
		if (!slash)
			strcpy(dir, ".");
		else
			snprintf(dir, sizeof dir, "%.*s", slash == cur ? 1 : (int)(slash - cur), cur);
		if (*base && strspn(base, "0123456789") == strlen(base) && strlen(base) < 10 && is_own_fd_dir(dir))
			return atoi(base);
		if ((n = readlink(cur, link, sizeof link - 1)) < 0)
			return -1; /* not a link (or not there): a file of its own */
		link[n] = 0;
		if (link[0] == '/' || !slash)
			snprintf(cur, sizeof cur, "%s", link);
		else if ((size_t)snprintf(cur, sizeof cur, "%s/%s", dir, link) >= sizeof cur)
			return -1;
	}
	return -1;
}
