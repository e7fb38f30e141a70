/* utf8.c - well-formed UTF-8 (utf8.h). */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

size_t cm_utf8_seq(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lead = *p, lo = 0x80, hi = 0xbf;
	size_t need = lead >= 0x01 && lead < 0x80 ? 0 : lead >= 0xc2 && lead <= 0xdf ? 1
		     : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : 9;
	if (need == 9)
		return 0;
	if (lead == 0xe0)
		lo = 0xa0; /* overlong */
	else if (lead == 0xed)
		hi = 0x9f; /* surrogates */
	else if (lead == 0xf0)
		lo = 0x90; /* overlong */
	else if (lead == 0xf4)
		hi = 0x8f; /* past U+10FFFF */
	for (size_t i = 1; i <= need; i++, lo = 0x80, hi = 0xbf)
		if (p[i] < lo || p[i] > hi)
			return 0; /* the NUL too: cut short */
	return need + 1;
}

int cm_utf8_ok(const char *s)
{
	size_t n;
	for (; *s; s += n)
		if (!(n = cm_utf8_seq(s)))
			return 0;
	return 1;
}

char *cm_utf8_clean(const char *s)
{
	char *out = malloc(3 * strlen(s) + 1), *o = out;
	size_t n;
	if (!out)
		return NULL;
	for (; *s; s += n ? n : 1) {
		if ((n = cm_utf8_seq(s))) {
			memcpy(o, s, n);
			o += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
		}
	}
	*o = 0;
	return out;
}
