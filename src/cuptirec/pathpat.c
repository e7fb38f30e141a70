/* pathpat.c - expansion of the %p / %n output path patterns. */
#include "pathpat.h"

#include <stdio.h>
#include <string.h>

const char *crec_path_check(const char *pattern)
{
	const char *s;

	if (!pattern || !*pattern)
		return "empty output path";
	for (s = pattern; *s; s++) {
		if (*s != '%')
			continue;
		s++;
		if (*s != 'p' && *s != 'n' && *s != '%')
			return "output path: only %p, %n and %% may follow '%'";
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

int crec_path_expand(const char *pattern, long pid, unsigned seq, char *out, size_t outsz)
{
	static const char *const exts[] = { ".json.gz", ".json" };
	char num[32];
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
		if (*s == '%') {
			n = snprintf(num, sizeof num, "%%");
		} else if (*s == 'p') {
			n = snprintf(num, sizeof num, "%ld", pid);
		} else {
			n = snprintf(num, sizeof num, "%u", seq);
			has_n = 1;
		}
		if (crec_path_put(out, outsz, &len, num, (size_t)n))
			return -1;
	}
	if (seq == 0 || has_n)
		return 0;
	n = snprintf(num, sizeof num, ".%u", seq);
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
