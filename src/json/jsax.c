/* jsax.c - the replay: a tokenizer that trusts its input.
 *
 * The text has passed cm_jvalid_value, so every string is closed, every
 * number well-formed and the brackets balance: the loop only needs to tell
 * tokens apart by their first byte. */
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

/* The bytes that end a number. */
static const unsigned char num_end[256] = {[','] = 1, ['}'] = 1, [']'] = 1, [' '] = 1, ['\n'] = 1, ['\t'] = 1,
					   ['\r'] = 1};

int cm_jsax_replay(const char *s, size_t n, const yajl_callbacks *cb, void *ctx, cm_arena *arena)
{
	size_t i = 0;
	/* in_obj[d]: container at depth d is an object; expecting a key next */
	unsigned char in_obj[CM_JSON_MAX_DEPTH + 2];
	int depth = 0, want_key = 0;
	while (i < n) {
		char c = s[i];
		switch (c) {
		case ' ': case '\t': case '\n': case '\r': case ',': case ':':
			if (c == ',' && depth > 0 && in_obj[depth])
				want_key = 1;
			i++;
			break;
		case '{':
			if (!cb->yajl_start_map(ctx))
				return 0;
			in_obj[++depth] = 1;
			want_key = 1;
			i++;
			break;
		case '[':
			if (!cb->yajl_start_array(ctx))
				return 0;
			in_obj[++depth] = 0;
			want_key = 0;
			i++;
			break;
		case '}':
		case ']':
			if (!(c == '}' ? cb->yajl_end_map(ctx) : cb->yajl_end_array(ctx)))
				return 0;
			depth--;
			want_key = 0;
			i++;
			break;
		case '"': {
			size_t len;
			const char *t = cm_jsax_string(s, n, &i, &len, arena);
			if (want_key) {
				want_key = 0;
				if (!cb->yajl_map_key(ctx, (const unsigned char *)t, len))
					return 0;
			} else if (!cb->yajl_string(ctx, (const unsigned char *)t, len)) {
				return 0;
			}
			break;
		}
		case 'n':
			if (!cb->yajl_null(ctx))
				return 0;
			i += 4;
			break;
		case 't':
		case 'f':
			if (!cb->yajl_boolean(ctx, c == 't'))
				return 0;
			i += c == 't' ? 4 : 5;
			break;
		default: { /* a number */
			size_t a = i;
			while (i < n && !num_end[(unsigned char)s[i]])
				i++;
			if (!cb->yajl_number(ctx, s + a, i - a))
				return 0;
			break;
		}
		}
	}
	return 1;
}
