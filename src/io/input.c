/* input.c - chunked reading of plain or gzip text from a file or a pipe, with rewind.
 *
 * The merge reads each input more than once (see merge.c), so its inputs must
 * be re-readable.  Regular files are simply re-read from offset 0.  A pipe is
 * teed, on the first pass, into an unlinked temporary file; later passes read
 * the copy.  Only inputs opened for several passes are teed: the thread map
 * and the trace of a repair are read once, and copying them would only cost
 * room in $TMPDIR (and fail where it has none).  The copy holds the raw (still compressed) bytes, so a gzip pipe
 * costs only its compressed size on disk, and memory stays at two buffers.
 *
 * Gzip is recognised by the magic bytes 1f 8b, never by the file name.
 * Concatenated members are read one after the other (as gzip -d does); any
 * other bytes after the last member are an error, as is a member cut short.
 * zstd, bzip2, xz and lz4 are recognised by their magic bytes too, and
 * refused with a message that names them. */
#include "config.h"
#include "io/input.h"
#include "base/diag.h"
#include "exitcode.h"
#include "io/tmpfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct cm_input {
	char *name;
	int fd;            /* what we read now: the file, stdin, or the spool */
	int own_fd;        /* fd must be closed by us */
	int spool_fd;      /* copy of a pipe's bytes, or -1 */
	int teeing;        /* first pass over a pipe: copy what we read to spool_fd */
	int raw_eof;       /* read() returned 0 */
	uint64_t raw_size; /* st_size of a regular file, else 0 */
	struct stat st0;   /* a regular file as it was when opened */
	uint64_t raw_done; /* raw bytes read in this pass */

	size_t bufsize;
	unsigned char *raw; /* raw bytes read from fd */
	size_t raw_cap;
	unsigned char *text; /* inflated text (gzip mode) */

	int sniffed, gzip;
	z_stream zs;
	int zinit;
	int member_ended; /* the last gzip member reached Z_STREAM_END */

	uint64_t next_off;  /* text offset of the next byte to hand out */
	uint64_t chunk_off; /* text offset of the chunk last handed out */
	/* plain mode: raw[pos..len) not yet handed out */
	size_t raw_pos, raw_len;
};

const char *cm_input_name(const cm_input *in) { return in->name; }
int cm_input_is_gzip(const cm_input *in) { return in->gzip; }
int cm_input_is_file(const cm_input *in) { return S_ISREG(in->st0.st_mode) && in->own_fd; }
uint64_t cm_input_offset(const cm_input *in) { return in->chunk_off; }
uint64_t cm_input_raw_done(const cm_input *in) { return in->raw_done; }
uint64_t cm_input_raw_size(const cm_input *in) { return in->raw_size; }

/* Open PATH; REWINDABLE: tee a pipe so it can be read again. */
static cm_input *open_input(const char *path, size_t bufsize, int rewindable)
{
	cm_input *in = calloc(1, sizeof *in);
	struct stat st;
	if (!in) {
		cm_error(CM_EXIT_IO, NULL, -1, "out of memory");
		return NULL;
	}
	in->spool_fd = -1;
	in->bufsize = bufsize ? bufsize : 1;
	/* room for at least the two magic bytes, whatever the chunk size */
	in->raw_cap = in->bufsize < 16 ? 16 : in->bufsize;
	in->raw = malloc(in->raw_cap);
	in->text = malloc(in->bufsize);
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
	} else
		in->teeing = rewindable; /* not re-readable: copy it during the first pass */
	return in;
}

cm_input *cm_input_open(const char *path, size_t bufsize) { return open_input(path, bufsize, 0); }

cm_input *cm_input_open_rewindable(const char *path, size_t bufsize)
{
	return open_input(path, bufsize, 1);
}

/* At the end of each pass over a regular file: is it still the file it was
 * when opened?  Passes that read different texts would merge halves of two
 * traces, so a change (size, inode, change time: a same-length edit in place
 * moves the change time, and a writer cannot set it back) fails the run.
 * Returns 0, or -1 after reporting. */
static int check_unchanged(cm_input *in)
{
	struct stat st;
	if (!S_ISREG(in->st0.st_mode))
		return 0; /* a pipe: we read our own spool */
	if (fstat(in->fd, &st) < 0) {
		cm_error(CM_EXIT_IO, in->name, -1, "cannot stat: %s", strerror(errno));
		return -1;
	}
	if (st.st_size != in->st0.st_size || st.st_ino != in->st0.st_ino || st.st_dev != in->st0.st_dev ||
	    st.st_ctim.tv_sec != in->st0.st_ctim.tv_sec || st.st_ctim.tv_nsec != in->st0.st_ctim.tv_nsec ||
	    st.st_mtim.tv_sec != in->st0.st_mtim.tv_sec || st.st_mtim.tv_nsec != in->st0.st_mtim.tv_nsec) {
		cm_error(CM_EXIT_IO, in->name, -1,
			 "the file changed while it was being read (it is read more than once); nothing was written");
		return -1;
	}
	return 0;
}

/* Make the spool file for a pipe.  Returns 0, or -1 after reporting. */
static int spool_create(cm_input *in)
{
	in->spool_fd = cm_temp_fd("spool");
	return in->spool_fd < 0 ? -1 : 0;
}

/* Read up to `want` raw bytes into in->raw + at, teeing to the spool on a
 * pipe's first pass.  Returns the count (0 at end), or -1 after reporting. */
static ssize_t raw_read(cm_input *in, size_t at, size_t want)
{
	ssize_t n;
	if (in->raw_eof)
		return 0;
	do
		n = read(in->fd, in->raw + at, want);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		cm_error(CM_EXIT_IO, in->name, -1, "read error: %s", strerror(errno));
		return -1;
	}
	if (n == 0) {
		in->raw_eof = 1;
		return in->teeing || check_unchanged(in) == 0 ? 0 : -1;
	}
	in->raw_done += (uint64_t)n;
	if (in->teeing) {
		const unsigned char *p = in->raw + at;
		size_t left = (size_t)n;
		if (in->spool_fd < 0 && spool_create(in) < 0)
			return -1;
		while (left) {
			ssize_t w = write(in->spool_fd, p, left);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				cm_error(CM_EXIT_IO, NULL, -1, "cannot write the spool file for %s: %s",
					 in->name, strerror(errno));
				return -1;
			}
			p += w;
			left -= (size_t)w;
		}
	}
	return n;
}

/* Compressed formats we do not read, by their magic bytes (from their file
 * format specifications), so that they are named rather than reported as
 * invalid JSON: no JSON text starts with any of these bytes. */
static const struct {
	const char *magic;
	size_t len;
	const char *name; /* also the command that decompresses it */
} foreign[] = {
	{"\x28\xb5\x2f\xfd", 4, "zstd"},
	{"BZh", 3, "bzip2"},
	{"\xfd\x37\x7a\x58\x5a\x00", 6, "xz"},
	{"\x04\x22\x4d\x18", 4, "lz4"},
};
/* The longest magic above: sniff() reads at least this much when it can. */
#define SNIFF_BYTES 6

/* Look at the first bytes to decide between plain text and gzip, and to
 * refuse the compressed formats above. */
static int sniff(cm_input *in)
{
	ssize_t n = raw_read(in, 0, in->bufsize);
	if (n < 0)
		return -1;
	in->raw_len = (size_t)n;
	while (in->raw_len < SNIFF_BYTES && !in->raw_eof) { /* tiny chunks: fetch a few more bytes */
		n = raw_read(in, in->raw_len, SNIFF_BYTES - in->raw_len);
		if (n < 0)
			return -1;
		in->raw_len += (size_t)n;
	}
	in->raw_pos = 0;
	in->sniffed = 1;
	for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
		if (in->raw_len >= foreign[i].len && !memcmp(in->raw, foreign[i].magic, foreign[i].len))
			return cm_error(CM_EXIT_DATA, in->name, -1,
					"%s-compressed input is not supported; decompress it first (%s -dc)",
					foreign[i].name, foreign[i].name),
			       -1;
	in->gzip = in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b;
	if (in->gzip) {
		if (!in->zinit) {
			memset(&in->zs, 0, sizeof in->zs);
			if (inflateInit2(&in->zs, 15 + 16) != Z_OK)
				return cm_error(CM_EXIT_IO, NULL, -1, "out of memory"), -1;
			in->zinit = 1;
		} else {
			inflateReset(&in->zs);
		}
		in->zs.next_in = in->raw;
		in->zs.avail_in = (uInt)in->raw_len;
		in->member_ended = 0;
	}
	return 0;
}

/* Inflate the next chunk.  Returns 1, 0 at the end, -1 after reporting. */
static int next_gzip(cm_input *in, const char **data, size_t *len)
{
	for (;;) {
		int rc;
		if (in->zs.avail_in == 0 && !in->raw_eof) {
			ssize_t n = raw_read(in, 0, in->bufsize);
			if (n < 0)
				return -1;
			in->zs.next_in = in->raw;
			in->zs.avail_in = (uInt)n;
		}
		if (in->member_ended) {
			/* between members: another member, the end, or junk */
			if (in->zs.avail_in == 0 && in->raw_eof)
				return 0;
			if (in->zs.avail_in == 1 && !in->raw_eof) {
				/* need two bytes to see the magic */
				in->raw[0] = in->zs.next_in[0];
				ssize_t n = raw_read(in, 1, 1);
				if (n < 0)
					return -1;
				in->zs.next_in = in->raw;
				in->zs.avail_in = 1 + (uInt)n;
			}
			if (in->zs.avail_in >= 2 && in->zs.next_in[0] == 0x1f && in->zs.next_in[1] == 0x8b) {
				inflateReset(&in->zs);
				in->member_ended = 0;
			} else {
				return cm_error(CM_EXIT_DATA, in->name, (int64_t)(in->raw_done - in->zs.avail_in),
						"trailing garbage after the gzip data"),
				       -1;
			}
		}
		in->zs.next_out = in->text;
		in->zs.avail_out = (uInt)in->bufsize;
		rc = inflate(&in->zs, Z_NO_FLUSH);
		if (rc == Z_STREAM_END)
			in->member_ended = 1;
		else if (rc == Z_BUF_ERROR && in->zs.avail_in == 0 && in->raw_eof)
			return cm_error(CM_EXIT_DATA, in->name, (int64_t)in->raw_done,
					"truncated gzip data (the file ends inside a gzip member)"),
			       -1;
		else if (rc != Z_OK && rc != Z_BUF_ERROR)
			return cm_error(CM_EXIT_DATA, in->name, (int64_t)(in->raw_done - in->zs.avail_in),
					"invalid gzip data: %s", in->zs.msg ? in->zs.msg : "inflate failed"),
			       -1;
		*len = in->bufsize - in->zs.avail_out;
		if (*len) {
			*data = (const char *)in->text;
			return 1;
		}
		if (!in->member_ended && in->zs.avail_in == 0 && in->raw_eof)
			return cm_error(CM_EXIT_DATA, in->name, (int64_t)in->raw_done,
					"truncated gzip data (the file ends inside a gzip member)"),
			       -1;
	}
}

int cm_input_next(cm_input *in, const char **data, size_t *len)
{
	int rc;
	in->chunk_off = in->next_off;
	if (!in->sniffed && sniff(in) < 0)
		return -1;
	if (in->gzip) {
		rc = next_gzip(in, data, len);
	} else {
		if (in->raw_pos == in->raw_len) {
			ssize_t n = raw_read(in, 0, in->bufsize);
			if (n < 0)
				return -1;
			in->raw_pos = 0;
			in->raw_len = (size_t)n;
		}
		if (in->raw_pos == in->raw_len) {
			rc = 0;
		} else {
			*data = (const char *)in->raw + in->raw_pos;
			*len = in->raw_len - in->raw_pos;
			in->raw_pos = in->raw_len;
			rc = 1;
		}
	}
	if (rc == 1)
		in->next_off += *len;
	return rc;
}

int cm_input_rewind(cm_input *in)
{
	if (in->teeing) {
		/* drain what the first pass did not read, so the copy is whole */
		while (!in->raw_eof)
			if (raw_read(in, 0, in->bufsize) < 0)
				return -1;
		in->teeing = 0;
		if (in->spool_fd < 0 && spool_create(in) < 0) /* empty input */
			return -1;
		if (in->own_fd)
			close(in->fd);
		in->fd = in->spool_fd;
		in->own_fd = 1;
		in->spool_fd = -1;
		in->raw_size = in->raw_done;
	}
	if (lseek(in->fd, 0, SEEK_SET) != 0)
		return cm_error(CM_EXIT_IO, in->name, -1, "cannot rewind: %s", strerror(errno)), -1;
	in->raw_eof = 0;
	in->raw_done = 0;
	in->raw_pos = in->raw_len = 0;
	in->sniffed = 0;
	in->next_off = in->chunk_off = 0;
	return 0;
}

void cm_input_close(cm_input *in)
{
	if (!in)
		return;
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	if (in->spool_fd >= 0)
		close(in->spool_fd);
	if (in->zinit)
		inflateEnd(&in->zs);
	free(in->raw);
	free(in->text);
	free(in->name);
	free(in);
}
