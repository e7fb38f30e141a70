/* evout.c - the traceEvents element writer (evout.h): commas between the
 * elements, the buffer handed to the output a MiB at a time, and the
 * metadata events. */
#include "config.h"
#include "json/evout.h"
#include "json/jwrite.h"

#include <string.h>

/* Hand the buffer to the output once it is this big. */
#define EVOUT_FLUSH (1u << 20)

int cm_evout_flush(cm_evout *eo)
{
	int rc = cm_output_write(eo->out, eo->buf.p, eo->buf.len);
	eo->buf.len = 0;
	return rc;
}

int cm_evout_next(cm_evout *eo)
{
	if (eo->buf.len >= EVOUT_FLUSH && cm_evout_flush(eo) < 0)
		return -1;
	if (eo->first)
		eo->first = 0;
	else
		cm_buf_putc(&eo->buf, ',');
	return 0;
}

int cm_evout_elements(cm_evout *eo, const char *p, size_t n)
{
	if (!n)
		return 0;
	if (eo->first) { /* the leading comma goes only between elements */
		p++;
		n--;
		eo->first = 0;
	}
	if (eo->buf.len && cm_evout_flush(eo) < 0)
		return -1;
	return cm_output_write(eo->out, p, n);
}

int cm_evout_meta(cm_evout *eo, const char *name, const char *ts_text, cm_int pid, cm_int tid,
		  const char *arg_key, const char *arg_text, cm_int arg_int)
{
	cm_buf *b = &eo->buf;
	if (cm_evout_next(eo) < 0)
		return -1;
	cm_buf_lit(b, "{\"ph\":\"M\",\"name\":");
	cm_jw_string(b, name, strlen(name));
	cm_buf_lit(b, ",\"ts\":");
	cm_buf_puts(b, ts_text);
	cm_buf_lit(b, ",\"pid\":");
	cm_jw_int(b, pid);
	cm_buf_lit(b, ",\"tid\":");
	cm_jw_int(b, tid);
	cm_buf_lit(b, ",\"args\":{");
	cm_jw_string(b, arg_key, strlen(arg_key));
	cm_buf_putc(b, ':');
	if (arg_text)
		cm_jw_string(b, arg_text, strlen(arg_text));
	else
		cm_jw_int(b, arg_int);
	cm_buf_lit(b, "}}");
	return 0;
}
