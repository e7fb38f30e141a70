/* doclayout.c - the layout writer (doclayout.h: the format): records noted
 * in memory, a chunk's worth at a time, then to a temporary file. */
#include "config.h"
#include "json/doclayout.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <string.h>

void cm_doclayout_open(cm_doclayout *l, uint64_t at)
{
	cm_buf_put_varint(&l->buf, at);
	l->pos = at + 1;
}

void cm_doclayout_member(cm_doclayout *l, int tag, uint64_t key_at, uint64_t key_end, uint64_t val_at,
			 uint64_t end)
{
	cm_buf_put_varint(&l->buf, (uint64_t)tag);
	cm_doclayout_to(l, key_at);
	cm_doclayout_to(l, key_end);
	cm_doclayout_to(l, val_at);
	cm_doclayout_to(l, end);
}

void cm_doclayout_array(cm_doclayout *l, uint64_t key_at, uint64_t key_end, uint64_t at)
{
	cm_buf_put_varint(&l->buf, CM_DOCLAYOUT_ARRAY);
	cm_doclayout_to(l, key_at);
	cm_doclayout_to(l, key_end);
	cm_doclayout_to(l, at);
	l->pos = at + 1;
}

void cm_doclayout_close(cm_doclayout *l, uint64_t at)
{
	cm_buf_putc(&l->buf, 0);
	cm_doclayout_to(l, at);
	l->pos = at + 1;
}

int cm_doclayout_flush(cm_doclayout *l)
{
	if (!l->file && !(l->file = cm_temp_file("layout")))
		return -1;
	if (l->buf.len && fwrite(l->buf.p, 1, l->buf.len, l->file) != l->buf.len)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	l->buf.len = 0;
	return 0;
}

int cm_doclayout_end(cm_doclayout *l, int ok, FILE **out)
{
	int rc = 0;
	if (ok && cm_doclayout_flush(l) < 0)
		rc = -1;
	else if (ok && fflush(l->file) != 0)
		rc = cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	if (ok && rc == 0) {
		*out = l->file;
		l->file = NULL;
	}
	if (l->file)
		fclose(l->file);
	l->file = NULL;
	cm_buf_free(&l->buf);
	return rc;
}
