/* optnum.c - the command lines' numbers (optnum.h). */
#include "optnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 when C is a decimal digit, '0' to '9'. */
static int digit(char c) { return c >= '0' && c <= '9'; }

long cm_optnum_count(const char *s, long max)
{
	size_t n = strspn(s, "0123456789");
	long v;
	/* 19 digits overflow a long: strtol would clamp, and a clamped
	 * value may be within MAX */
	if (!n || s[n] || n > 18)
		return -1;
	v = strtol(s, NULL, 10);
	return v > max ? -1 : v;
}

const char *cm_optnum_decimal_at(const char *s, double *v)
{
	const char *p = s + (*s == '-');
	char *end;
	size_t ip = strspn(p, "0123456789"), fp = 0;
	/* the grammar first: strtod's own is wider (blanks, '+', hex, inf) */
	p += ip;
	if (*p == '.')
		fp = strspn(++p, "0123456789"), p += fp;
	if (!ip && !fp)
		return NULL;
	if ((*p == 'e' || *p == 'E') && (digit(p[1]) || ((p[1] == '-' || p[1] == '+') && digit(p[2]))))
		for (p += 2; digit(*p); p++)
			;
	*v = strtod(s, &end);
	return end == p && isfinite(*v) ? p : NULL;
}

int cm_optnum_decimal(const char *s, double *v)
{
	const char *end = cm_optnum_decimal_at(s, v);
	return end && !*end ? 0 : -1;
}

/* A step number at S: 1 to 18 digits; its end, or NULL. */
static const char *step_at(const char *s, unsigned long long *v)
{
	size_t n = strspn(s, "0123456789");
	if (!n || n > 18)
		return NULL;
	*v = strtoull(s, NULL, 10);
	return s + n;
}

int cm_optnum_steps(const char *s, unsigned long long *a, unsigned long long *b)
{
	const char *end = step_at(s, a);
	if (!end)
		return -1;
	*b = *a;
	if (*end == '-' && !(end = step_at(end + 1, b)))
		return -1;
	return *end || *b < *a ? -1 : 0;
}

int cm_optnum_range(const char *s, double *lo, double *hi)
{
	const char *end = cm_optnum_decimal_at(s, lo);
	if (!end || *end != ',' || cm_optnum_decimal(end + 1, hi) < 0)
		return -1;
	return *lo < *hi ? 0 : -1;
}
