/* pathpat.c - expansion of the %p / %n / %h / %r output path patterns. */
#include "pathpat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What %r gives in a process that has no rank (a torchrun agent, a job
 * started without a launcher): a fixed word rather than an error, so that
 * every process of a job still writes its window; "norank" cannot be taken
 * for a number. */
#define CREC_PATH_NORANK "norank"
/* What %h gives when gethostname(2) fails or names nothing. */
#define CREC_PATH_NOHOST "nohost"
/* The largest rank taken from the environment: nine digits, far beyond any
 * job, and a long on every platform. */
#define CREC_PATH_RANK_MAX 999999999L

const char *crec_path_check(const char *pattern)
{
	const char *s;

	if (!pattern || !*pattern)
		return "empty output path";
	for (s = pattern; *s; s++) {
		if (*s != '%')
			continue;
		s++;
		if (!*s || !strchr("pnhr%", *s))
			return "output path: only %p, %n, %h, %r and %% may follow '%'";
	}
	return NULL;
}

/* Append N bytes of S at OUT[*len], keeping room for the NUL; -1 if full. */
static int crec_path_put(char *out, size_t outsz, size_t *len, const char *s, size_t n)
{
	if (outsz - *len <= n)
		return -1;
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = '\0';
	return 0;
}

int crec_path_expand(const char *pattern, const crec_path_vars *v, char *out, size_t outsz)
{
	static const char *const exts[] = { ".json.gz", ".json" };
	char num[32];
	const char *text;
	size_t len = 0, i, el;
	int has_n = 0, n;
	const char *s;

	if (outsz == 0 || crec_path_check(pattern))
		return -1;
	out[0] = '\0';
	for (s = pattern; *s; s++) {
		if (*s != '%') {
			if (crec_path_put(out, outsz, &len, s, 1))
				return -1;
			continue;
		}
		s++;
		text = num;
		if (*s == '%') {
			text = "%";
		} else if (*s == 'p') {
			snprintf(num, sizeof num, "%ld", v->pid);
		} else if (*s == 'h') {
			text = v->host && *v->host ? v->host : CREC_PATH_NOHOST;
		} else if (*s == 'r') {
			if (v->rank >= 0)
				snprintf(num, sizeof num, "%ld", v->rank);
			else
				text = CREC_PATH_NORANK;
		} else {
			snprintf(num, sizeof num, "%u", v->seq);
			has_n = 1;
		}
		if (crec_path_put(out, outsz, &len, text, strlen(text)))
			return -1;
	}
	if (v->seq == 0 || has_n)
		return 0;
	n = snprintf(num, sizeof num, ".%u", v->seq);
	for (i = 0; i < sizeof exts / sizeof exts[0]; i++) {
		el = strlen(exts[i]);
		if (len > el && strcmp(out + len - el, exts[i]) == 0) {
			if (len + (size_t)n >= outsz)
				return -1;
			memmove(out + len - el + n, out + len - el, el + 1);
			memcpy(out + len - el, num, (size_t)n);
			return 0;
		}
	}
	return crec_path_put(out, outsz, &len, num, (size_t)n);
}

int crec_path_host(char *out, size_t outsz)
{
	/* 256: POSIX says a host name is at most HOST_NAME_MAX (255) bytes */
	char name[257];
	size_t i, n;

	if (gethostname(name, sizeof name - 1) != 0)
		return -1;
	name[sizeof name - 1] = '\0'; /* gethostname need not terminate a cut name */
	n = strlen(name);
	if (n == 0 || n >= outsz)
		return -1;
	for (i = 0; i < n; i++)
		out[i] = name[i] == '/' ? '_' : name[i];
	out[n] = '\0';
	return 0;
}

/* VALUE as a rank: only decimal digits, 0..CREC_PATH_RANK_MAX; else -1. */
static long crec_path_rank_of(const char *value)
{
	long r = 0;
	const char *s;

	if (!value || !*value)
		return -1;
	for (s = value; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		r = r * 10 + (*s - '0');
		if (r > CREC_PATH_RANK_MAX)
			return -1;
	}
	return r;
}

long crec_path_rank(const char **from)
{
	static const char *const vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK" };
	size_t i;
	long r;

	for (i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		r = crec_path_rank_of(getenv(vars[i]));
		if (r >= 0) {
			if (from)
				*from = vars[i];
			return r;
		}
	}
	if (from)
		*from = NULL;
	return -1;
}

int crec_path_is_gz(const char *path)
{
	size_t n = strlen(path);

	return n >= 3 && !strcmp(path + n - 3, ".gz");
}
