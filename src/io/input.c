/* input.c - chunked reading of plain or gzip text from a file or a pipe, with
 * rewind: the input opened, its passes, rewound and closed.
 *
 * The merge reads each input more than once (see merge.c), so its inputs must
 * be re-readable.  Regular files are simply re-read from offset 0.  A pipe is
 * teed, on the first pass, into an unlinked temporary file; later passes read
 * the copy.  A pass that stopped before the pipe's end (bad JSON: the careful
 * reader starts again to name the fault) leaves the rest unread: the next
 * pass reads the copy, then the pipe on from where it stopped, teeing it as
 * the first did, so that a fault is named without reading past it (a pipe
 * of "{" and /dev/zero was spooled, never ending, before the careful reader
 * began).  Only inputs opened for several passes are teed: the thread map
 * and the trace of a repair are read once, and copying them would only cost
 * room in $TMPDIR (and fail where it has none).  The copy holds the raw
 * (still compressed) bytes, so a gzip pipe costs only its compressed size on
 * disk, and memory stays at two buffers.
 *
 * This file holds what a caller drives; the stages below it, each in a file
 * of its own (input_int.h draws them), make the chunks: read-ahead
 * (inputahead.c), raw bytes made text (inputdecode.c: the format, gzip, a
 * byte order mark), the file's raw bytes (inputraw.c: read or mapped, the
 * tee, the unchanged check), and the buffers they go into (inputbuf.c). */
#include "config.h"
#include "io/input.h"
#include "io/input_int.h"
#include "io/inputahead.h"
#include "io/inputbuf.h"
#include "io/inputdecode.h"
#include "io/inputraw.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

const char *cm_input_name(const cm_input *in) { return in->name; }
int cm_input_is_gzip(const cm_input *in) { return in->gzip; }
int cm_input_is_file(const cm_input *in) { return S_ISREG(in->st0.st_mode) && in->own_fd; }
uint64_t cm_input_offset(const cm_input *in) { return in->chunk_off; }
uint64_t cm_input_raw_done(const cm_input *in) { return in->ra_raw_done; }
uint64_t cm_input_raw_size(const cm_input *in) { return in->raw_size; }
double cm_input_waited(const cm_input *in) { return in->ra_waited; }

/* Open PATH; REWINDABLE: tee a pipe so it can be read again. */
static cm_input *open_input(const char *path, size_t bufsize, int rewindable)
{
	cm_input *in = calloc(1, sizeof *in);
	struct stat st;
	if (!in) {
		cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
		return NULL;
	}
	in->spool_fd = in->pipe_fd = -1;
	in->bufsize = bufsize ? bufsize : 1;
	/* room for at least the two magic bytes, whatever the chunk size */
	in->raw_cap = in->bufsize < 16 ? 16 : in->bufsize;
	pthread_mutex_init(&in->hold_mu, NULL);
	in->raw = inputbuf_get(in);
	in->text = inputbuf_get(in); /* raw_cap: read-ahead swaps it with raw-sized buffers */
	if (!strcmp(path, "-")) {
		in->name = strdup("<stdin>");
		in->fd = 0;
	} else {
		in->name = strdup(path);
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		in->own_fd = 1;
	}
	if (!in->raw || !in->text || !in->name) {
		cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
		cm_input_close(in);
		return NULL;
	}
	if (in->fd < 0) {
		cm_error(CM_EXIT_IO, path, -1, "cannot open: %s", strerror(errno));
		cm_input_close(in);
		return NULL;
	}
	if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		cm_error(CM_EXIT_IO, in->name, -1, "is a directory");
		cm_input_close(in);
		return NULL;
	}
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(in->fd, 0, SEEK_CUR) == 0) {
		in->raw_size = (uint64_t)st.st_size;
		in->st0 = st;
		if (inputraw_map_wanted(in)) { /* buffers that can take a file's pages */
			in->map_ok = 1;
			inputbuf_free(inputbuf_of(in->raw));
			inputbuf_free(inputbuf_of(in->text));
			in->raw = inputbuf_get(in);
			in->text = inputbuf_get(in);
		}
	} else
		in->teeing = rewindable; /* not re-readable: copy it during the first pass */
	return in;
}

cm_input *cm_input_open(const char *path, size_t bufsize) { return open_input(path, bufsize, 0); }

cm_input *cm_input_open_rewindable(const char *path, size_t bufsize)
{
	return open_input(path, bufsize, 1);
}

int cm_input_next(cm_input *in, const char **data, size_t *len)
{
	int rc;
	if (in->ra_ended) /* asked again after the end or an error: the same answer */
		return in->ra_rc;
	if (!in->ra)
		inputahead_start(in);
	if (in->ra)
		return inputahead_next(in, data, len);
	rc = inputdecode_fill(in, data, len);
	in->chunk_off = in->next_off; /* after inputdecode_fill: a byte order mark skipped */
	if (rc == 1) {
		in->next_off += *len;
		in->last = in->gzip ? in->text : in->raw; /* *data starts it */
	} else {
		inputbuf_pass_ended(in);
	}
	in->ra_raw_done = in->raw_done;
	return rc;
}

/* Why read on after a JSON error: a damaged member inflates to garbage that
 * the JSON reader meets before inflate reaches the member's CRC, so the
 * garbage would be reported ("invalid char") and the damage never.  Only to
 * the end of that member (inputdecode_member_end says why): reading on to
 * the input's end cost a read of all of it, or forever on a pipe that does
 * not end (a gzip trace then /dev/zero), with the error already known. */
int cm_input_check_gzip(cm_input *in)
{
	if (!in->sniffed || !in->gzip || in->ra_ended)
		return in->ra_ended && in->ra_rc < 0 ? -1 : 0;
	if (in->ra)
		return inputahead_member_end(in);
	return inputdecode_member_end(in);
}

int cm_input_rewind(cm_input *in)
{
	inputahead_stop(in);
	if (in->teeing) {
		/* the copy becomes what we read; the rest of the pipe, if any,
		 * follows it (inputraw_read), copied on, when a pass gets there */
		in->teeing = 0;
		if (in->spool_fd < 0 && inputraw_spool_create(in) < 0) /* empty input */
			return -1;
		if (!in->raw_eof) {
			in->pipe_fd = in->fd;
			in->pipe_own = in->own_fd;
		} else if (in->own_fd) {
			close(in->fd);
		}
		in->fd = in->spool_fd;
		in->own_fd = 1;
		in->spool_fd = -1;
		in->raw_size = in->pipe_fd < 0 ? in->raw_done : 0; /* 0: not known yet */
	}
	if (lseek(in->fd, 0, SEEK_SET) != 0)
		return cm_fail(CM_EXIT_IO, in->name, -1, "cannot rewind: %s", strerror(errno));
	in->raw_eof = 0;
	in->raw_done = 0;
	in->raw_pos = in->raw_len = 0;
	in->sniffed = 0;
	in->bom_seen = in->bom_done = in->start_done = 0;
	in->next_off = in->chunk_off = 0;
	in->ra_raw_done = 0;
	in->ra_ended = 0;
	in->ended = 0;
	return 0;
}

void cm_input_close(cm_input *in)
{
	if (!in)
		return;
	inputahead_stop(in);
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	if (in->spool_fd >= 0)
		close(in->spool_fd);
	if (in->pipe_own && in->pipe_fd >= 0)
		close(in->pipe_fd);
	if (in->zinit)
		inflateEnd(&in->zs);
	inputbuf_pass_ended(in);
	if (in->raw)
		inputbuf_unref(inputbuf_of(in->raw));
	if (in->text)
		inputbuf_unref(inputbuf_of(in->text));
	pthread_mutex_destroy(&in->hold_mu);
	free(in->name);
	free(in);
}
