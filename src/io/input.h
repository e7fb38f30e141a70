/* input.h - a trace file (or stdin) read as text in chunks, gzip detected by its
 * magic bytes, re-readable from the start even when it is a pipe. */
#ifndef CM_INPUT_H
#define CM_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct cm_input cm_input;

/* Open PATH ("-" means standard input) for one pass of chunked reading with
 * chunks of at most BUFSIZE bytes (the first chunk of plain text may hold up
 * to 6, enough to tell the compressed formats apart): a pipe is read as it
 * comes, and copied nowhere.  Returns NULL after reporting the error
 * (CM_EXIT_IO). */
cm_input *cm_input_open(const char *path, size_t bufsize);

/* The same for an input read in several passes: a pipe (anything but a
 * regular file) is copied as it is read, so cm_input_rewind can start again. */
cm_input *cm_input_open_rewindable(const char *path, size_t bufsize);

/* Hand out the next chunk of (decompressed) text in *data / *len; the memory
 * belongs to the input and is valid until the next call.  Returns 1 for a
 * chunk, 0 at the end, -1 after reporting an error (read error, truncated or
 * corrupt gzip, trailing garbage after the gzip data). */
int cm_input_next(cm_input *in, const char **data, size_t *len);

/* Keep the chunk last handed out by cm_input_next beyond the next call:
 * its bytes stay, unchanged, until the hold is let go (cm_input_release,
 * on any thread; one hold, one release).  The input reads on into other
 * buffers meanwhile, so memory grows with the chunks held.  Every hold
 * must be let go before cm_input_rewind or cm_input_close. */
void *cm_input_hold(cm_input *in);
void cm_input_release(void *hold); /* HOLD NULL: nothing */

/* Read ahead (ON nonzero) on a thread of the input's own, from the next
 * pass on (or the current one, if no chunk of it has been handed out), when
 * the input is a regular file (a pipe's copy is one, from the second pass
 * on): the read(2) copy and the inflate then run beside the caller, which
 * gets the same chunks, offsets and errors (an error at the place where it
 * would have met it, on its own thread).  The chunk handed out stays valid
 * until the next call, as without read-ahead. */
void cm_input_readahead(cm_input *in, int on);
/* ON above 1: as 1, with ON chunks in the ring (ON - 1 read ahead of the
 * one handed out; 1 means 2, at most 8). */

/* Whether the inputs opened from now on have their regular files' plain
 * text mapped rather than read (inputraw.c, "Mapped reading") when the
 * testing aid CUPTIMERGE_MMAP does not say (default: read). */
void cm_input_map_default(int on);

/* Text offset of the first byte of the chunk last handed out. */
uint64_t cm_input_offset(const cm_input *in);

/* Bytes of the underlying file read so far, and its size (0 when unknown):
 * for the progress line. */
uint64_t cm_input_raw_done(const cm_input *in);
uint64_t cm_input_raw_size(const cm_input *in);
/* Seconds the caller has waited for the read-ahead thread's chunks (for
 * -v: the reads were behind the reader). */
double cm_input_waited(const cm_input *in);

/* Reading at offsets, on any thread (a pass over a file on several threads:
 * cpu/cpucopypar.c).  Whether IN can: its pass has begun (a chunk was
 * handed out), its text is plain, not gzip, and it is read from a regular
 * file or a pipe's whole spool (not a pass that reads the pipe).  1 or 0. */
int cm_input_can_pread(const cm_input *in);
/* N bytes of IN's text from text offset OFF into BUF by pread(2), when
 * cm_input_can_pread: 0, or -1 after reporting (a read error; a file that
 * ends before them has changed since it was opened). */
int cm_input_pread(cm_input *in, void *buf, size_t n, uint64_t off);
/* The text's size in bytes (the file's: a plain text's offsets count a
 * byte order mark), when cm_input_can_pread. */
uint64_t cm_input_text_size(const cm_input *in);
/* A pass made of cm_input_pread's reads ends: the check cm_input_next makes
 * at a pass's end (is the file still the one opened?).  0, or -1 after
 * reporting. */
int cm_input_pass_check(cm_input *in);

/* Start again at byte 0.  A pipe opened with cm_input_open_rewindable is
 * copied to an unlinked temporary file in $TMPDIR as it is read, so every
 * later pass reads that copy; if a pass stopped before the pipe's end, the
 * next one reads the copy and then the rest of the pipe (copying it on), so
 * nothing is read before it is asked for.  One opened with cm_input_open
 * cannot be rewound (an error).  Returns 0, or -1 after reporting an
 * error. */
int cm_input_rewind(cm_input *in);


/* The name used in messages: the path, or "<stdin>". */
const char *cm_input_name(const cm_input *in);

/* 1 when the input is a regular file named by its path and read from its
 * start, so that opening the path again gives the same bytes; 0 for a pipe
 * (even one with a name: a FIFO, /dev/fd/N), a device, standard input. */
int cm_input_is_file(const cm_input *in);

/* 1 when the text is gzip-compressed (known after the first chunk; zstd,
 * bzip2, xz and lz4 make the first cm_input_next fail with a message). */
int cm_input_is_gzip(const cm_input *in);

/* After the text of IN was found to be bad JSON: read a gzip input on to the
 * end of the member the bad text came from (no further), discarding the
 * text, so that a damaged member (a CRC or length error, bad deflate data, a
 * member cut short by the input's end) is reported, in place of the JSON
 * error its garbage may have caused.  Returns -1 when it reported such
 * damage (or the input had already failed), 0 when the input is not gzip or
 * the member is sound: then the JSON error is the text's own (whatever
 * follows the member: more members, trailing garbage, an endless pipe). */
int cm_input_check_gzip(cm_input *in);

void cm_input_close(cm_input *in);

#endif
