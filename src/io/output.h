/* output.h - where the merged trace goes: stdout or a file written through a
 * temporary name, plain or gzip, with every write checked. */
#ifndef CM_OUTPUT_H
#define CM_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

typedef struct cm_output cm_output;

/* Open the destination: PATH NULL or "-" means standard output.  Otherwise,
 * by what PATH is (outfile.c says why): a regular file or none, a temporary
 * file in its directory (unnamed where O_TMPFILE works) that becomes PATH
 * only in cm_output_close(ok=1); a symlink, the same for the file it names;
 * a device or FIFO, PATH itself, opened for writing (a FIFO blocks until
 * it has a reader); a directory, an error.  Call it before reading input,
 * so a bad PATH fails early.  GZIP_LEVEL < 0 writes plain text, 0..9 a gzip
 * stream of that level, compressed by THREADS threads (1: one zlib stream on
 * one compressor thread; more: pgzip.h, one gzip member all the same).
 * Returns NULL after reporting the error. */
cm_output *cm_output_open(const char *path, int gzip_level, int threads);
/* cm_output_open of gzip output whose deflate blocks CREW's workers make
 * (pgzcrew.h: shared with other outputs; at CREW's level). */
struct cm_pgz_crew;
cm_output *cm_output_open_crew(const char *path, struct cm_pgz_crew *crew);

/* A transcoder in the output path: the JSON text written goes through it,
 * and what it hands its sink goes out as the text would have (gzip, the
 * temporary name, the checks).  Perfetto's protobuf trace is one
 * (pftrace/pftrace.h); the command line registers it from above, so that
 * io/ names no format.  OPEN makes one for an output named LABEL, encoding
 * on THREADS threads; WRITE and FINISH return 0, or -1 after a report. */
/* (OPEN's CTX is the output itself: cm_output_gz_waits may be asked of it
 * on the thread that calls SINK.) */
typedef struct cm_output_codec {
	void *(*open)(int (*sink)(void *ctx, const void *p, size_t n), void *ctx, const char *label, int threads);
	int (*write)(void *codec, const void *p, size_t n);
	int (*finish)(void *codec);
	void (*free)(void *codec);
} cm_output_codec;

/* The transcoder of every output opened after this call, or NULL: the JSON
 * text itself (the command line's choice, so that each mode of the program
 * gets it without asking).  CODEC must outlive those outputs. */
void cm_output_set_codec(const cm_output_codec *codec);

/* The transcoder OUT's text goes through (the CODEC's OPEN made it), or
 * NULL: for a writer that knows the codec and hands it more than text
 * (the merge's window events to the .pftrace's, src/mergepft.c).  A tee
 * has none. */
void *cm_output_codec_state(const cm_output *out);

/* -v: for gzip output, the seconds OUT's writes have waited so far for
 * its deflate workers, in *WAIT, and written the deflated blocks on, in
 * *EMIT (cm_pgz_waits); 0 and 0 for plain output.  On the thread that
 * writes OUT's own bytes (the transcoder's sink's, or the caller's), or
 * after cm_output_finish (then the totals, the end's included).  1 when
 * OUT is gzip output, else 0. */
int cm_output_gz_waits(const cm_output *out, double *wait, double *emit);

/* ON 1: every output opened after this call is durable (--sync): an -o
 * file's write-back starts as it is written (writeback.h), it is fsync'd
 * before it takes its name and its directory after; a device, or standard
 * output that is a regular file or a block device, is fsync'd at the end.
 * ON 0 (the default): atomic only, nothing synced (outfile.c says why). */
void cm_output_set_sync(int on);

/* OUT holds at most MOST bytes of plain output (JSON, or the transcoder's
 * bytes) before it writes them (default 256 KiB; 4 KiB to that), and
 * writes a piece of MOST or more as it is: for the files of --split,
 * each of which would hold its buffer to the end.  Before the first
 * write; the output's bytes do not depend on it. */
void cm_output_set_buffer(cm_output *out, size_t most);

/* Append LEN bytes.  Returns 0, or -1 after a write error (reported, except a
 * closed pipe, which only sets cm_output_pipe_closed()). */
int cm_output_write(cm_output *out, const void *data, size_t len);


/* 1 when the reader of standard output, or of a FIFO given as -o, went
 * away (EPIPE): stop quietly. */
int cm_output_pipe_closed(const cm_output *out);

/* Write out what OUT holds: flush, end the gzip stream (and the
 * transcoder's), wait for the writing thread; nothing synced or named.
 * Once (later calls return the same); then cm_output_close, whose OK may
 * still drop the file: so that several outputs that stand or fall
 * together (--split's files) are each complete before any is named.
 * 0, or -1 after a report (or a closed pipe, cm_output_pipe_closed). */
int cm_output_finish(cm_output *out);

/* Finish: with OK, cm_output_finish (unless done), (with --sync) fsync,
 * close (checked), and give the temporary file the name PATH (or its
 * symlink's target) atomically (with --sync, then fsync its directory);
 * without OK
 * (or on any failure), drop the temporary file and leave PATH untouched
 * (a device or FIFO may have had part of the output).
 * Returns 0 on success, 1 when the reader of standard output (or of a
 * FIFO) went away (nothing reported), -1 after reporting an error.  Frees
 * OUT. */
int cm_output_close(cm_output *out, int ok);

/* An output that writes what it is given to each of OUTS[0..N) (which
 * stay the caller's: cm_output_close of the tee frees only the tee).  For
 * the text that every file of a --split shares. */
cm_output *cm_output_tee(cm_output *const *outs, size_t n);

#endif
