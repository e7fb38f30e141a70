/* opts.c - parsing of the activity list, durations, sizes and flags; the
 * libraries' opening of their output and writing to it. */
#include "opts.h"
#include "base/fdio.h"
#include "base/optnum.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct {
	const char *name;
	int mask;
} crec_act_names[] = {
	{ "kernel", CREC_ACT_KERNEL },
	{ "memcpy", CREC_ACT_MEMCPY },
	{ "memset", CREC_ACT_MEMSET },
	{ "runtime", CREC_ACT_RUNTIME },
	{ "driver", CREC_ACT_DRIVER },
	{ "external_correlation", CREC_ACT_EXTCORR },
	{ "overhead", CREC_ACT_OVERHEAD },
	{ "sync", CREC_ACT_SYNC },
	{ "cuda_event", CREC_ACT_EVENT },
	{ "default", CREC_ACT_DEFAULT },
	{ "all", CREC_ACT_ALL },
};

int crec_parse_activities(const char *list, char *bad, size_t badsz)
{
	int mask = 0;
	const char *s = list, *e;
	size_t n, i;

	for (; *s; s = *e ? e + 1 : e) {
		int neg = 0, found = -1;
		e = strchr(s, ',');
		if (!e)
			e = s + strlen(s);
		while (s < e && isspace((unsigned char)*s))
			s++;
		n = (size_t)(e - s);
		while (n > 0 && isspace((unsigned char)s[n - 1]))
			n--;
		if (n == 0)
			continue;
		if (*s == '-') {
			neg = 1;
			s++;
			n--;
		}
		for (i = 0; i < sizeof crec_act_names / sizeof crec_act_names[0]; i++) {
			if (strlen(crec_act_names[i].name) == n && strncasecmp(crec_act_names[i].name, s, n) == 0) {
				found = crec_act_names[i].mask;
				break;
			}
		}
		if (found < 0) {
			snprintf(bad, badsz, "%.*s", (int)n, s);
			return -1;
		}
		if (neg)
			mask &= ~found;
		else
			mask |= found;
	}
	return mask;
}

int crec_parse_seconds(const char *s, double *out)
{
	double v;

	/* cuptimerge's numbers (base/optnum.h): no blank, '+', hex or inf */
	if (!s || cm_optnum_decimal(s, &v) < 0 || v < 0 || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

int crec_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v, mul = 1;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	case '\0': break;
	default: return -1;
	}
	if (*end == 'i' || *end == 'B')   /* accept KiB / KB spellings */
		end++;
	if (*end == 'B')
		end++;
	if (*end || v > SIZE_MAX / mul)
		return -1;
	*out = (size_t)(v * mul);
	return 0;
}

int crec_env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on"));
}

int crec_fd_above_std(int fd)
{
	int high, e;
	if (fd < 0 || fd > 2)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	e = errno;
	close(fd);
	errno = e;
	return high;
}

int crec_open_out(const char *path, int flags)
{
	int fd = cm_path_names_fd(path), fl;
	if (fd >= 0)
		return fcntl(fd, F_DUPFD_CLOEXEC, 3);
	fd = crec_fd_above_std(open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | flags, 0666));
	/* blocking again: a full pipe waits for its reader, as it should */
	if (fd >= 0 && (fl = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int crec_fifo_wait_env(double *out)
{
	const char *v = getenv("CUPTIREC_FIFO_WAIT");

	*out = CREC_FIFO_WAIT_DEFAULT;
	if (!v || !*v)
		return 0;
	return crec_parse_seconds(v, out) ? (*out = CREC_FIFO_WAIT_DEFAULT, -1) : 0;
}

/* Seconds from T0 to T1. */
static double crec_secs(const struct timespec *t0, const struct timespec *t1)
{
	return (double)(t1->tv_sec - t0->tv_sec) + (double)(t1->tv_nsec - t0->tv_nsec) / 1e9;
}

int crec_open_out_wait(const char *path, int flags, double wait, int *no_reader)
{
	struct timespec t0, t1, nap = { 0, 1000000 };
	struct stat st;
	int fd, e;

	if (no_reader)
		*no_reader = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = crec_open_out(path, flags);
		e = errno;
		if (fd >= 0)
			return fd;
		/* ENXIO is also a device with no hardware behind it: only a
		 * FIFO's is waited for */
		if (e != ENXIO || stat(path, &st) != 0 || !S_ISFIFO(st.st_mode))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (crec_secs(&t0, &t1) >= wait) {
			if (no_reader)
				*no_reader = 1;
			break;
		}
		nanosleep(&nap, NULL);
		/* 1, 2, 4 ... ms, then every 100 ms: a reader started beside
		 * the program is found soon, one that never comes costs little */
		if (nap.tv_nsec < 100000000)
			nap.tv_nsec = nap.tv_nsec * 2 > 100000000 ? 100000000 : nap.tv_nsec * 2;
	}
	errno = e;
	return -1;
}

int crec_write_out(int fd, const void *p, size_t n)
{
	static const struct timespec now = { 0, 0 };
	sigset_t sigpipe, old, pending;
	int err, had;

	if (!n)
		return 0;
	sigemptyset(&sigpipe);
	sigaddset(&sigpipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigpipe, &old);
	had = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	err = cm_write_all(fd, p, n);
	if (err == EPIPE && !had)
		sigtimedwait(&sigpipe, NULL, &now);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}
