/* doclayout.c - the layout writer (doclayout.h: the format): records noted
 * in memory, a chunk's worth at a time, then to a temporary file. */
#include "config.h"
#include "json/doclayout.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/fdio.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	/* the marks are this array's (a second array: none at the end) */
	l->arrays++;
	l->in_array = 1;
	l->nelem = 0;
	l->mark_at = 0;
	l->marks.len = 0;
}

/* The text bytes between marks: CM_DOCLAYOUT_STRIDE, or the testing aid
 * CUPTIMERGE_COPY_STRIDE's (1 or more: a mark at every element), so that
 * small traces walk in parts too (tests/e2e/engine.sh). */
uint64_t cm_doclayout_stride(void)
{
	static uint64_t s;
	if (!s) {
		const char *e = getenv("CUPTIMERGE_COPY_STRIDE");
		long long v = e ? atoll(e) : 0;
		s = v >= 1 ? (uint64_t)v : CM_DOCLAYOUT_STRIDE;
	}
	return s;
}

void cm_doclayout_mark_here(cm_doclayout *l)
{
	cm_doclayout_mark m = {l->nelem, l->pos, l->flushed + l->buf.len};
	cm_buf_put(&l->marks, &m, sizeof m);
	l->mark_at = l->pos + cm_doclayout_stride();
}

void cm_doclayout_close(cm_doclayout *l, uint64_t at)
{
	if (l->in_array) /* the array's end: its last mark */
		cm_doclayout_mark_here(l);
	l->in_array = 0;
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
	l->flushed += l->buf.len;
	l->buf.len = 0;
	return 0;
}

/* After the document: its marks and their count, when it had one array
 * (doclayout.h), into the buffer to be written. */
static void put_marks(cm_doclayout *l)
{
	uint64_t tail[2];
	if (l->arrays != 1 || l->in_array || !l->marks.len)
		return;
	tail[0] = l->marks.len / sizeof(cm_doclayout_mark);
	tail[1] = CM_DOCLAYOUT_MAGIC;
	cm_buf_put(&l->buf, l->marks.p, l->marks.len);
	cm_buf_put(&l->buf, tail, sizeof tail);
}

int cm_doclayout_marks(FILE *f, cm_doclayout_mark **marks, size_t *n)
{
	uint64_t tail[2];
	struct stat st;
	int fd = fileno(f);
	*marks = NULL;
	*n = 0;
	if (fflush(f) != 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof tail ||
	    cm_pread_all(fd, tail, sizeof tail, (uint64_t)st.st_size - sizeof tail) != (ssize_t)sizeof tail ||
	    tail[1] != CM_DOCLAYOUT_MAGIC || tail[0] < 2 ||
	    tail[0] > ((uint64_t)st.st_size - sizeof tail) / sizeof(cm_doclayout_mark))
		return -1;
	*marks = cm_xmalloc((size_t)tail[0] * sizeof **marks);
	if (cm_pread_all(fd, *marks, (size_t)tail[0] * sizeof **marks,
			 (uint64_t)st.st_size - sizeof tail - tail[0] * sizeof **marks) !=
	    (ssize_t)(tail[0] * sizeof **marks)) {
		free(*marks);
		*marks = NULL;
		return -1;
	}
	*n = (size_t)tail[0];
	return 0;
}

int cm_doclayout_end(cm_doclayout *l, int ok, FILE **out)
{
	int rc = 0;
	if (ok)
		put_marks(l);
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
	cm_buf_free(&l->marks);
	return rc;
}
