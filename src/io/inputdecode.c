/* inputdecode.c - an input's raw bytes made text: the format told by its
 * first bytes, gzip inflated, a leading byte order mark skipped.
 *
 * Gzip is recognised by the magic bytes 1f 8b, never by the file name.
 * Concatenated members are read one after the other (as gzip -d does); any
 * other bytes after the last member are an error, as is a member cut short.
 * The offset of a gzip error is, like every offset cuptimerge(1) prints, one
 * in the decompressed text (how much of it came out before the fault); the
 * compressed byte, where gzip -t would look, is named in the message.
 * zstd, bzip2, xz and lz4 are recognised by their magic bytes too, and
 * refused with a message that names them.  The raw bytes come from
 * inputraw.c, into buffers of inputbuf.c. */
#include "config.h"
#include "io/inputdecode.h"
#include "io/input_int.h"
#include "io/inputbuf.h"
#include "io/inputraw.h"
#include "base/diag.h"
#include "base/exitcode.h"

#include <string.h>
#include <zlib.h>

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
	ssize_t n;
	inputbuf_own(in, &in->raw); /* its first bytes are the first chunk of plain text */
	n = inputraw_read(in, 0, in->bufsize);
	if (n < 0)
		return -1;
	in->raw_len = (size_t)n;
	while (in->raw_len < SNIFF_BYTES && !in->raw_eof) { /* tiny chunks: fetch a few more bytes */
		n = inputraw_read(in, in->raw_len, SNIFF_BYTES - in->raw_len);
		if (n < 0)
			return -1;
		in->raw_len += (size_t)n;
	}
	in->raw_pos = 0;
	in->sniffed = 1;
	for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++)
		if (in->raw_len >= foreign[i].len && !memcmp(in->raw, foreign[i].magic, foreign[i].len))
			return cm_fail(CM_EXIT_DATA, in->name, -1,
					"%s-compressed input is not supported; decompress it first (%s -dc)",
					foreign[i].name, foreign[i].name);
	in->gzip = in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b;
	if (in->gzip) {
		if (!in->zinit) {
			memset(&in->zs, 0, sizeof in->zs);
			if (inflateInit2(&in->zs, 15 + 16) != Z_OK)
				return cm_fail(CM_EXIT_IO, NULL, -1, "out of memory");
			in->zinit = 1;
		} else {
			inflateReset(&in->zs);
		}
		in->zs.next_in = in->raw;
		in->zs.avail_in = (uInt)in->raw_len;
		in->member_ended = 0;
		in->members_ended = 0;
	}
	return 0;
}

/* The text offset reached by the inflate call in progress: the chunk's start
 * plus what this call has put out so far (never handed out on an error). */
static int64_t gz_text_off(const cm_input *in)
{
	return (int64_t)(in->next_off + (in->bufsize - in->zs.avail_out));
}

/* zlib's words for a damaged stream, with gzip -t's word in front where
 * zlib's is obscure: "incorrect data check" is the CRC-32 of the text. */
static const char *gz_why(const cm_input *in)
{
	const char *m = in->zs.msg ? in->zs.msg : "inflate failed";
	if (!strcmp(m, "incorrect data check"))
		return "CRC error (incorrect data check)";
	if (!strcmp(m, "incorrect length check"))
		return "length error (incorrect length check)";
	return m;
}

/* Inflate the next chunk.  Returns 1, 0 at the end, -1 after reporting.
 * MEMBER_ONLY: the end is that of the member being inflated (nothing after
 * it is read, not even the next member's magic): inputdecode_member_end. */
static int next_gzip(cm_input *in, const char **data, size_t *len, int member_only)
{
	for (;;) {
		int rc;
		if (member_only && in->member_ended)
			return 0;
		if (in->zs.avail_in == 0 && !in->raw_eof) {
			ssize_t n = inputraw_read(in, 0, in->bufsize);
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
				ssize_t n = inputraw_read(in, 1, 1);
				if (n < 0)
					return -1;
				in->zs.next_in = in->raw;
				in->zs.avail_in = 1 + (uInt)n;
			}
			if (in->zs.avail_in >= 2 && in->zs.next_in[0] == 0x1f && in->zs.next_in[1] == 0x8b) {
				inflateReset(&in->zs);
				in->member_ended = 0;
			} else {
				return cm_fail(CM_EXIT_DATA, in->name, (int64_t)in->next_off,
						"trailing garbage after the gzip data (at compressed byte %llu)",
						(unsigned long long)(in->raw_done - in->zs.avail_in));
			}
		}
		inputbuf_own(in, &in->text);
		in->zs.next_out = in->text;
		in->zs.avail_out = (uInt)in->bufsize;
		rc = inflate(&in->zs, Z_NO_FLUSH);
		if (rc == Z_STREAM_END) {
			in->member_ended = 1;
			in->members_ended++;
		} else if (rc == Z_BUF_ERROR && in->zs.avail_in == 0 && in->raw_eof)
			return cm_fail(CM_EXIT_DATA, in->name, gz_text_off(in),
					"truncated gzip data (the file ends inside a gzip member, at compressed byte %llu)",
					(unsigned long long)in->raw_done);
		else if (rc != Z_OK && rc != Z_BUF_ERROR)
			return cm_fail(CM_EXIT_DATA, in->name, gz_text_off(in),
					"invalid gzip data at compressed byte %llu: %s",
					(unsigned long long)(in->raw_done - in->zs.avail_in), gz_why(in));
		*len = in->bufsize - in->zs.avail_out;
		if (*len) {
			*data = (const char *)in->text;
			return 1;
		}
		if (!in->member_ended && in->zs.avail_in == 0 && in->raw_eof)
			return cm_fail(CM_EXIT_DATA, in->name, gz_text_off(in),
					"truncated gzip data (the file ends inside a gzip member, at compressed byte %llu)",
					(unsigned long long)in->raw_done);
	}
}

/* The next chunk of text, from the start of in->text (gzip) or in->raw. */
static int fill_text(cm_input *in, const char **data, size_t *len)
{
	if (!in->sniffed && sniff(in) < 0)
		return -1;
	if (in->gzip)
		return next_gzip(in, data, len, 0);
	if (in->raw_pos == in->raw_len) {
		ssize_t n;
		inputbuf_own(in, &in->raw);
		n = inputraw_map_chunk(in);
		if (n < 0)
			return -1;
		in->raw_pos = 0;
		in->raw_len = (size_t)n;
	}
	if (in->raw_pos == in->raw_len)
		return 0;
	*data = (const char *)in->raw + in->raw_pos;
	*len = in->raw_len - in->raw_pos;
	in->raw_pos = in->raw_len;
	return 1;
}

/* The next chunk of text, a UTF-8 byte order mark (EF BB BF) at the start
 * of the text skipped and its bytes counted in the offsets (issue 27 F27):
 * RFC 8259 lets a parser ignore one, Python's json.loads of bytes does (the
 * reference reads the window so), and nothing else can start a JSON text
 * with EF.  Only the first chunk or chunks (tiny reads) can hold it. */
static int fill_bom(cm_input *in, const char **data, size_t *len)
{
	static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
	for (;;) {
		int rc = fill_text(in, data, len);
		size_t k = 0;
		if (in->bom_done || rc < 0)
			return rc;
		if (rc == 0) {
			if (in->bom_seen)
				return cm_fail(CM_EXIT_DATA, in->name, in->bom_seen,
						"truncated JSON: the text ends inside a UTF-8 byte order mark");
			return 0;
		}
		while (k < *len && in->bom_seen < 3 && (unsigned char)(*data)[k] == bom[in->bom_seen]) {
			k++;
			in->bom_seen++;
		}
		if (k < *len && in->bom_seen < 3) {
			if (in->bom_seen) /* EF or EF BB, then something else */
				return cm_fail(CM_EXIT_DATA, in->name, in->bom_seen,
						"invalid JSON: a UTF-8 byte order mark cut short (EF BB BF begins one)");
			in->bom_done = 1; /* none */
			return 1;
		}
		in->bom_done = in->bom_seen == 3;
		in->next_off += k;
		if (k < *len) {
			/* the rest of the chunk to the start of its buffer, where
			 * the read-ahead thread takes it from */
			memmove((char *)*data, *data + k, *len - k);
			*len -= k;
			return 1;
		}
	}
}

/* Whether the text's first byte that is not white space, in the chunk S[0..N)
 * at text offset in->next_off, is one a document can start with: '{' (every
 * input cuptimerge(1) reads is an object) or '[' (left to the parser, which
 * names what is wrong with it).  0 when it is, or the chunk is all white
 * space (the next chunk is looked at); -1 after reporting.  Why here, before
 * the parser: a pipe is spooled to $TMPDIR as it is read, and a refusal by
 * the parser is followed by the careful reader, which rewinds, and the rewind
 * spools the rest of the pipe first (cat /dev/zero put 3 GB in /tmp in 3 s,
 * and never ended); the thread map's reader kept a token without punctuation
 * in memory whole.  So text that cannot be JSON stops at its first byte. */
static int check_start(cm_input *in, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		in->start_done = 1;
		if (c == '{' || c == '[')
			return 0;
		if (c > 0x20 && c < 0x7f)
			return cm_fail(CM_EXIT_DATA, in->name, (int64_t)(in->next_off + i),
				       "invalid JSON: the text starts with '%c' (0x%02x), where '{' must be", c, c);
		return cm_fail(CM_EXIT_DATA, in->name, (int64_t)(in->next_off + i),
			       "invalid JSON: the text starts with byte 0x%02x, where '{' must be", c);
	}
	return 0;
}

/* The next chunk, as cm_input_next hands it out (without the offsets), the
 * data at the start of in->text (gzip) or in->raw (plain text): fill_bom's,
 * the text's start checked (check_start). */
int inputdecode_fill(cm_input *in, const char **data, size_t *len)
{
	int rc = fill_bom(in, data, len);
	if (rc == 1 && !in->start_done && check_start(in, *data, *len) < 0)
		return -1;
	return rc;
}

/* Why only to the member's end: the text the reader found bad came out of
 * the member being inflated (a chunk never spans two: inflate stops at a
 * member's end), and the members before it were checked when they ended,
 * before any text of the next was handed out.  So its CRC and length
 * decide whether the text was the member's own; what follows (more
 * members, trailing garbage, a pipe that never ends) says nothing about
 * it, and reading it on could take forever. */
int inputdecode_member_end(cm_input *in)
{
	const char *data;
	size_t len;
	int rc;
	while ((rc = next_gzip(in, &data, &len, 1)) == 1)
		in->next_off += len; /* the offsets of a damage found further on */
	return rc;
}
