/* jsax.c - string tokens of text that is known to be valid JSON.
 *
 * The text has passed cm_jvalid_value, so every string is closed: the
 * first quote that no backslash escapes ends it. */
#include "config.h"
#include "json/jsax.h"

#include <string.h>

const char *cm_jsax_string(const char *s, size_t n, size_t *i, size_t *len, cm_arena *arena)
{
	size_t a = *i + 1, k = a;
	const char *q = memchr(s + a, '"', n - a);
	int esc = 0;
	if (q && !memchr(s + a, '\\', (size_t)(q - (s + a)))) {
		k = (size_t)(q - s); /* no escape: the first quote closes it */
	} else {
		while (k < n && s[k] != '"') {
			if (s[k] == '\\') {
				esc = 1;
				k++;
			}
			k++;
		}
	}
	*i = k + 1;
	if (!esc) {
		*len = k - a;
		return s + a;
	} else {
		const cm_jval *v = cm_jval_parse_py(arena, s + a - 1, k - a + 2);
		*len = v ? v->len : 0;
		return v ? v->s : "";
	}
}
