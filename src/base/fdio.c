/* fdio.c - all of a buffer to or from a file descriptor, and whether a
 * directory takes files (fdio.h). */
#include "config.h"
#include "base/fdio.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

int cm_write_all(int fd, const void *p, size_t n)
{
	const unsigned char *q = p;
	while (n) {
		ssize_t w = write(fd, q, n);
		if (w < 0 && errno == EINTR)
			continue;
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
