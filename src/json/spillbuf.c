/* spillbuf.c - bytes held in memory, or past a size in a temporary file
 * read back as a mapping (spillbuf.h).  The file is unnamed (tmpfile.h),
 * so nothing is left in TMPDIR whatever happens; a mapping is read-only
 * and private, and its pages are the page cache's, not the heap's. */
#include "config.h"
#include "json/spillbuf.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "base/tmpfile.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

int cm_spillbuf_put(cm_spillbuf *b, const char *s, size_t n, size_t at)
{
	if (!b->file && b->mem.len + n <= at) {
		cm_buf_put(&b->mem, s, n);
		return 0;
	}
	if (!b->file) {
		if (!(b->file = cm_temp_file("member")))
			return -1;
		/* mem may never have been grown (p NULL): fwrite must not see that */
		if (b->mem.len && fwrite(b->mem.p, 1, b->mem.len, b->file) != b->mem.len)
			goto fail;
		b->file_len = b->mem.len;
		b->mem.len = 0;
	}
	if (fwrite(s, 1, n, b->file) != n)
		goto fail;
	b->file_len += n;
	return 0;
fail:
	return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
}

const char *cm_spillbuf_text(cm_spillbuf *b, size_t *n)
{
	void *map;
	if (b->map) { /* mapped already */
		*n = b->map_len;
		return b->map;
	}
	if (!b->file) {
		*n = b->mem.len;
		return b->mem.p ? b->mem.p : "";
	}
	map = fflush(b->file) ? MAP_FAILED : mmap(NULL, b->file_len, PROT_READ, MAP_PRIVATE, fileno(b->file), 0);
	fclose(b->file);
	b->file = NULL;
	if (map == MAP_FAILED) {
		cm_error(CM_EXIT_IO, NULL, -1, "cannot map a temporary file: %s", strerror(errno));
		return NULL;
	}
	b->map = map;
	b->map_len = b->file_len;
	*n = b->map_len;
	return map;
}

void cm_spillbuf_clear(cm_spillbuf *b)
{
	if (b->map)
		munmap(b->map, b->map_len);
	if (b->file)
		fclose(b->file);
	b->map = NULL;
	b->file = NULL;
	b->map_len = b->file_len = 0;
	b->mem.len = 0;
}

void cm_spillbuf_free(cm_spillbuf *b)
{
	cm_spillbuf_clear(b);
	cm_buf_free(&b->mem);
}
