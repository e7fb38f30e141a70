/* outname.c - the names and attributes of the file that -o writes (outfile.c):
 * the file a symbolic link names, the temporary name beside it, whether it
 * may be replaced, the old file's owner and mode carried over, and linkat(2)
 * of an unnamed O_TMPFILE file through /proc or by its descriptor. */
/* AT_EMPTY_PATH is a Linux extension that glibc declares only for
 * _GNU_SOURCE, as tmpfile.c's O_TMPFILE (configure.ac is shared). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "config.h"
#include "io/outname.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* PATH with the symbolic links of its last component followed, as open(2)
 * follows them: the name of the file that -o replaces or creates, whose
 * directory gets the temporary file.  Returns a malloc'd string, or NULL
 * with errno set (ELOOP after 40 links, the kernel's own limit). */
char *cm_out_follow_links(const char *path)
{
	char *cur = strdup(path), link[PATH_MAX];
	int hops;
	for (hops = 0; cur; hops++) {
		struct stat st;
		const char *slash;
		ssize_t n;
		char *next;
		size_t dlen;
		if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
			return cur; /* absent or not a link: this is the name */
		if (hops == 40 || (n = readlink(cur, link, sizeof link - 1)) < 0) {
			int e = hops == 40 ? ELOOP : errno;
			free(cur);
			errno = e;
			return NULL;
		}
		link[n] = '\0';
		/* a relative link is relative to the link's own directory */
		slash = strrchr(cur, '/');
		dlen = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
		next = malloc(dlen + (size_t)n + 1);
		if (next) {
			memcpy(next, cur, dlen);
			memcpy(next + dlen, link, (size_t)n + 1);
		}
		free(cur);
		cur = next;
	}
	errno = ENOMEM;
	return NULL;
}

/* A malloc'd "DIR/.BASE.cuptimerge-XXXXXX" for the file TARGET (DIR "." when
 * it has no slash): a dot-file, so ls and globs skip it, named after FILE
 * so that a leftover says whose it is.  BASE is cut so that the name fits
 * in NAME_MAX (a FILE of 237 to 255 bytes, which `>` can write, made a name
 * too long only when the finished file was published: F21), at a UTF-8
 * character's start.  NULL when memory ran out. */
char *cm_out_temp_name(const char *target)
{
	const char *slash = strrchr(target, '/'), *base = slash ? slash + 1 : target;
	size_t dlen = slash ? (size_t)(slash - target) + 1 : 0, blen = strlen(base);
	size_t room = NAME_MAX - 1 - (sizeof ".cuptimerge-XXXXXX" - 1), n;
	char *t;
	if (blen > room) {
		blen = room;
		while (blen && ((unsigned char)base[blen] & 0xC0) == 0x80)
			blen--; /* base[blen] continues a character: cut before it */
	}
	n = dlen + 1 + blen + sizeof ".cuptimerge-XXXXXX";
	if ((t = malloc(n)))
		snprintf(t, n, "%.*s.%.*s.cuptimerge-XXXXXX", (int)dlen, target, (int)blen, base);
	return t;
}

/* A malloc'd copy of the directory part of TARGET ("." when it has none),
 * or NULL when memory ran out. */
char *cm_out_dir_of(const char *target)
{
	const char *slash = strrchr(target, '/');
	if (!slash)
		return strdup(".");
	if (slash == target)
		return strdup("/");
	return strndup(target, (size_t)(slash - target));
}

/* 1 when this process has CAP_FOWNER, which lets rename(2) replace any
 * file in a sticky directory; 0 when not or unknown. */
static int have_cap_fowner(void)
{
#if defined(__linux__) && defined(SYS_capget)
	struct {
		uint32_t version;
		int pid;
	} hdr = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
	struct {
		uint32_t effective, permitted, inheritable;
	} data[2];
	memset(data, 0, sizeof data);
	if (syscall(SYS_capget, &hdr, data) == 0)
		return (data[0].effective >> 3 /* CAP_FOWNER */) & 1;
#endif
	return geteuid() == 0;
}

/* 0 when rename(2) may replace TARGET (a regular file, status OLD), -1
 * after reporting when it may not: in a sticky directory (such as /tmp),
 * only the file's owner, the directory's owner or a process with
 * CAP_FOWNER may replace a file, though any user it is writable to can
 * write it in place with `>`.  Found here, before any input is read, not
 * after the whole merge (F21). */
int cm_out_check_replaceable(const char *target, const struct stat *old, const char *shown)
{
	struct stat dst;
	char *dir = cm_out_dir_of(target);
	int rc;
	if (!dir)
		return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
	rc = stat(dir, &dst);
	free(dir);
	if (rc < 0 || !(dst.st_mode & S_ISVTX) || old->st_uid == geteuid() || dst.st_uid == geteuid() ||
	    have_cap_fowner())
		return 0; /* a stat that failed: open_temp says why */
	return cm_fail(CM_EXIT_IO, shown, -1,
			"cannot replace another user's file in a sticky directory (rename(2) is not permitted "
			"there): remove it first, or write to another name");
}

/* Replace the trailing XXXXXX of NAME with letters that differ from call to
 * call and from process to process (for a name linkat(2) must make fresh). */
void cm_out_fill_x(char *name)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static uint64_t calls;
	struct timespec ts;
	char *x = name + strlen(name) - 6;
	uint64_t v;
	int i;
	clock_gettime(CLOCK_REALTIME, &ts);
	v = ((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40) +
	    ++calls * 0x9E3779B97F4A7C15u;
	v ^= v >> 31;
	v *= 0xBF58476D1CE4E5B9u; /* splitmix64's finaliser: every bit counts */
	v ^= v >> 27;
	for (i = 0; i < 6; i++, v /= 62)
		x[i] = set[v % 62];
}

/* Give FD, the file that will replace a regular file of status O, that
 * file's owner, group and permission bits, as `> FILE` (which keeps the
 * inode), sed -i, gzip and zstd do: a private 0600 trace must not come back
 * world-readable (F30).  The owner only where permitted (root; the group
 * where the user is in it); when the group cannot be kept, its permission
 * bits are dropped: they were granted to the old file's group, not to the
 * one the file now has.  Set-id bits are never copied.  ACLs, extended
 * attributes and other hard links are not carried over (cuptimerge(1)). */
void cm_out_keep_attrs(int fd, const struct stat *o)
{
	mode_t mode = o->st_mode & 0777;
	struct stat now;
	if (fstat(fd, &now) < 0)
		return;
	if (now.st_uid != o->st_uid || now.st_gid != o->st_gid) {
		if (fchown(fd, o->st_uid, o->st_gid) < 0 && now.st_gid != o->st_gid)
			(void)!fchown(fd, (uid_t)-1, o->st_gid); /* not root: the group, if ours */
		if (fstat(fd, &now) == 0 && now.st_gid != o->st_gid)
			mode &= ~(mode_t)070;
	}
	fchmod(fd, mode);
}

/* 1 when linkat(FD, "", ..., AT_EMPTY_PATH) may give the unnamed file FD a
 * name in DIR: Linux allows it to a process with CAP_DAC_READ_SEARCH, and
 * since 6.10 to the process that opened the file.  Asked without making a
 * name: the link to DIR/. gets EEXIST once the old path has been accepted,
 * ENOENT (or EPERM) when it is refused.  0 when not, or unknown. */
int cm_out_can_flink(int fd, const char *dir)
{
#if defined(AT_EMPTY_PATH)
	size_t n = strlen(dir) + 3;
	char *dot = malloc(n);
	int ok;
	if (!dot)
		return 0;
	snprintf(dot, n, "%s/.", dir);
	ok = linkat(fd, "", AT_FDCWD, dot, AT_EMPTY_PATH) < 0 && errno == EEXIST;
	free(dot);
	return ok;
#else
	(void)fd, (void)dir;
	return 0;
#endif
}

int cm_out_link(int fd, int flink, const char *name)
{
	char proc[64];
#ifdef AT_EMPTY_PATH
	if (flink)
		return linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH);
#else
	(void)flink; /* cm_out_can_flink said no */
#endif
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
}
