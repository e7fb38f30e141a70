/* saxread.c - the yajl read loop: fixed chunks in, callbacks out, one-line errors. */
#include "config.h"
#include "saxread.h"
#include "diag.h"
#include "exitcode.h"
#include "jcheck.h"

#include <string.h>

int64_t cm_sax_offset(const cm_sax *sax)
{
	return (int64_t)(cm_input_offset(sax->in) + yajl_get_bytes_consumed(sax->h));
}

/* Report yajl's error as one line: its first line, without "parse error: ". */
static void report_syntax(cm_sax *sax, const unsigned char *chunk, size_t len, int at_end)
{
	unsigned char *msg = yajl_get_error(sax->h, 0, chunk, len);
	char line[200];
	const char *m = (const char *)msg;
	size_t n;
	if (!strncmp(m, "parse error: ", 13))
		m += 13;
	else if (!strncmp(m, "lexical error: ", 15))
		m += 15;
	n = strcspn(m, "\n");
	if (n >= sizeof line)
		n = sizeof line - 1;
	memcpy(line, m, n);
	line[n] = 0;
	while (n && (line[n - 1] == ' ' || line[n - 1] == '.'))
		line[--n] = 0;
	if (at_end && (strstr(line, "premature EOF") || !*line))
		cm_error(1, cm_input_name(sax->in), (int64_t)cm_input_offset(sax->in),
			 "truncated JSON: the text ends inside the document");
	else
		cm_error(1, cm_input_name(sax->in), cm_sax_offset(sax), "invalid JSON: %s", line);
	yajl_free_error(sax->h, msg);
}

int cm_sax_run(cm_sax *sax, cm_input *in, const yajl_callbacks *callbacks, void *ctx,
	       const char *what)
{
	const char *chunk = NULL;
	size_t len = 0;
	int rc, result = -1;
	yajl_status st;
	cm_jcheck check;
	sax->in = in;
	sax->what = what;
	sax->h = yajl_alloc(callbacks, NULL, ctx);
	if (!sax->h)
		return cm_error(3, NULL, -1, "out of memory"), -1;
	/* strict JSON: UTF-8 checked, no comments, exactly one value */
	yajl_config(sax->h, yajl_allow_comments, 0);
	yajl_config(sax->h, yajl_dont_validate_strings, 0);
	cm_progress_begin(what, cm_input_raw_size(in));
	cm_jcheck_begin(&check);
	while ((rc = cm_input_next(in, &chunk, &len)) == 1) {
		/* yajl sees the text up to the first byte the strict check refuses,
		 * so an earlier syntax error is still reported as such */
		size_t ok = cm_jcheck_feed(&check, chunk, len);
		st = yajl_parse(sax->h, (const unsigned char *)chunk, ok);
		if (st == yajl_status_client_canceled)
			goto out;
		if (st == yajl_status_error) {
			report_syntax(sax, (const unsigned char *)chunk, ok, 0);
			goto out;
		}
		if (ok < len) {
			cm_error(CM_EXIT_DATA, cm_input_name(in), (int64_t)(cm_input_offset(in) + ok),
				 "invalid JSON: %s", check.err);
			goto out;
		}
		cm_progress_update(cm_input_raw_done(in));
	}
	if (rc < 0)
		goto out;
	st = yajl_complete_parse(sax->h);
	if (st == yajl_status_client_canceled)
		goto out;
	if (st == yajl_status_error) {
		report_syntax(sax, (const unsigned char *)"", 0, 1);
		goto out;
	}
	result = 0;
out:
	yajl_free(sax->h);
	sax->h = NULL;
	return result;
}
