/* jvalout.c - in-memory JSON values (jval.h) written out: as JSON text
 * (cm_jval_write), and in Python's json.dumps() and str() layouts, which
 * the merge's args and names take from the reference merge.  The reading
 * side (arena, builder, parser) is jval.c. */
#include "config.h"
#include "json/jval.h"
#include "json/jwrite.h"
#include "base/pyval.h"

#include <stdio.h>
#include <string.h>

void cm_jval_write(cm_buf *b, const cm_jval *v)
{
	switch (v->type) {
	case CM_J_NULL: cm_buf_lit(b, "null"); break;
	case CM_J_TRUE: cm_buf_lit(b, "true"); break;
	case CM_J_FALSE: cm_buf_lit(b, "false"); break;
	case CM_J_NUM: cm_buf_put(b, v->s, v->len); break;
	case CM_J_STR: cm_jw_string(b, v->s, v->len); break;
	case CM_J_ARR:
	case CM_J_OBJ:
		cm_buf_putc(b, v->type == CM_J_ARR ? '[' : '{');
		for (const cm_jval *k = v->kids; k; k = k->next) {
			if (k != v->kids)
				cm_buf_putc(b, ',');
			if (v->type == CM_J_OBJ) {
				cm_jw_string(b, k->key, k->klen);
				cm_buf_putc(b, ':');
			}
			cm_jval_write(b, k);
		}
		cm_buf_putc(b, v->type == CM_J_ARR ? ']' : '}');
		break;
	}
}

/* Python's text for a number token: int -> str(int), float -> repr(float);
 * JSONIC selects json.dumps' spelling of the non-finite values. */
static void py_number(cm_buf *b, const cm_jval *v, int jsonic)
{
	char tmp[48];
	double d;
	cm_int i;
	if (cm_py_number_is_int(v->s, v->len) && v->s[v->len - 1] != 'y' && v->s[0] != 'N') {
		if (cm_py_int_of_number(v->s, v->len, &i) == CM_PY_OK)
			cm_buf_put(b, tmp, cm_py_int_format(i, tmp));
		else
			cm_buf_put(b, v->s, v->len); /* beyond 128 bits: the digits themselves */
		return;
	}
	if (v->s[0] == 'N' || v->s[v->len - 1] == 'y') { /* NaN, Infinity, -Infinity */
		if (jsonic)
			cm_buf_put(b, v->s, v->len);
		else
			cm_buf_puts(b, v->s[0] == 'N' ? "nan" : v->s[0] == '-' ? "-inf" : "inf");
		return;
	}
	cm_py_float_of_number(v->s, v->len, &d);
	if (jsonic)
		cm_jw_double(b, d);
	else
		cm_buf_put(b, tmp, cm_py_float_repr(d, tmp));
}

/* 1 when no later member of the same object has K's key (Python keeps the
 * last value of a repeated key, at the first key's place). */
static const cm_jval *last_of_key(const cm_jval *k)
{
	const cm_jval *last = k;
	for (const cm_jval *o = k->next; o; o = o->next)
		if (o->klen == k->klen && !memcmp(o->key, k->key, k->klen))
			last = o;
	return last;
}

/* 1 when an earlier member of the object that starts at FIRST has K's key. */
static int seen_before(const cm_jval *first, const cm_jval *k)
{
	for (const cm_jval *o = first; o != k; o = o->next)
		if (o->klen == k->klen && !memcmp(o->key, k->key, k->klen))
			return 1;
	return 0;
}

/* repr() of a str: single quotes unless the text has ' and no ". */
static void py_repr_str(cm_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	char q = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
	cm_buf_putc(b, q);
	for (size_t i = 0; i < n; i++) {
		unsigned c = p[i];
		char tmp[8];
		if (c == (unsigned char)q || c == '\\') {
			cm_buf_putc(b, '\\');
			cm_buf_putc(b, (char)c);
		} else if (c == '\t') {
			cm_buf_lit(b, "\\t");
		} else if (c == '\n') {
			cm_buf_lit(b, "\\n");
		} else if (c == '\r') {
			cm_buf_lit(b, "\\r");
		} else if (c < 0x20 || c == 0x7F) {
			snprintf(tmp, sizeof tmp, "\\x%02x", c);
			cm_buf_puts(b, tmp);
		} else if (c == 0xC2 && i + 1 < n && (p[i + 1] <= 0xA0 || p[i + 1] == 0xAD)) {
			/* U+0080..U+00A0 and U+00AD are not printable: \x escapes */
			snprintf(tmp, sizeof tmp, "\\x%02x", p[i + 1]);
			cm_buf_puts(b, tmp);
			i++;
		} else {
			cm_buf_putc(b, (char)c);
		}
	}
	cm_buf_putc(b, q);
}

/* The text Python makes of the value json.loads gives for V: json.dumps()
 * when REPR is 0, repr() when it is 1.  Both put ", " between items and
 * ": " after keys; they differ in the leaves. */
static void py_text(cm_buf *b, const cm_jval *v, int repr)
{
	int first = 1;
	switch (v->type) {
	case CM_J_NULL: cm_buf_puts(b, repr ? "None" : "null"); break;
	case CM_J_TRUE: cm_buf_puts(b, repr ? "True" : "true"); break;
	case CM_J_FALSE: cm_buf_puts(b, repr ? "False" : "false"); break;
	case CM_J_NUM: py_number(b, v, !repr); break;
	case CM_J_STR:
		if (repr)
			py_repr_str(b, v->s, v->len);
		else
			cm_jw_string_ascii(b, v->s, v->len);
		break;
	case CM_J_ARR:
		cm_buf_putc(b, '[');
		for (const cm_jval *k = v->kids; k; k = k->next) {
			if (k != v->kids)
				cm_buf_lit(b, ", ");
			py_text(b, k, repr);
		}
		cm_buf_putc(b, ']');
		break;
	case CM_J_OBJ:
		cm_buf_putc(b, '{');
		for (const cm_jval *k = v->kids; k; k = k->next) {
			if (seen_before(v->kids, k))
				continue;
			if (!first)
				cm_buf_lit(b, ", ");
			first = 0;
			if (repr)
				py_repr_str(b, k->key, k->klen);
			else
				cm_jw_string_ascii(b, k->key, k->klen);
			cm_buf_lit(b, ": ");
			py_text(b, last_of_key(k), repr);
		}
		cm_buf_putc(b, '}');
		break;
	}
}

void cm_jval_dumps_py(cm_buf *b, const cm_jval *v)
{
	py_text(b, v, 0);
}

void cm_jval_str_py(cm_buf *b, const cm_jval *v)
{
	if (v->type == CM_J_STR)
		cm_buf_put(b, v->s, v->len);
	else
		py_text(b, v, 1);
}
