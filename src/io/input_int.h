/* input_int.h - the state of one input, shared by the stages of its reading.
 * Internal to src/io: the callers see cm_input through io/input.h only.
 *
 * Reading an input is a stack of stages, each in a file of its own, each
 * calling only the ones below it (no file calls back up):
 *
 *   input.c        open, the pass (cm_input_next), rewind, close
 *   inputahead.c   read-ahead: the chunks below made on a thread of their own
 *   inputdecode.c  raw bytes to text: the format sniffed, gzip inflated, a
 *                  byte order mark skipped
 *   inputraw.c     the file's raw bytes: read(2) or mapped, a pipe teed to a
 *                  spool, the "is it still the file opened" check, pread(2)
 *   inputbuf.c     the chunk buffers and the holds on them
 *
 * The fields below are grouped by the part of the reading they describe.
 * Where a chunk is handed on, more than one stage writes them: the
 * read-ahead thread swaps raw and text for its slots' buffers and advances
 * next_off, as cm_input_next does without it, and rewind resets them all. */
#ifndef CM_INPUT_INT_H
#define CM_INPUT_INT_H

#include "io/input.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <zlib.h>

struct cm_input {
	/* the file (input.c opens it, inputraw.c reads it) */
	char *name;
	int fd;            /* what we read now: the file, stdin, or the spool */
	int own_fd;        /* fd must be closed by us */
	int spool_fd;      /* copy of a pipe's bytes, or -1 */
	int teeing;        /* first pass over a pipe: copy what we read to spool_fd */
	int pipe_fd;       /* a pipe rewound before its end: read (and teed) once fd, its spool, ends; or -1 */
	int pipe_own;      /* pipe_fd must be closed by us */
	int raw_eof;       /* read() returned 0 */
	uint64_t raw_size; /* st_size of a regular file, else 0 */
	struct stat st0;   /* a regular file as it was when opened */
	uint64_t raw_done; /* raw bytes read in this pass */

	size_t bufsize;
	unsigned char *raw; /* raw bytes read from fd */
	size_t raw_cap;
	unsigned char *text; /* inflated text (gzip mode) */

	/* the format and the text (inputdecode.c) */
	int sniffed, gzip;
	z_stream zs;
	int zinit;
	int member_ended; /* the last gzip member reached Z_STREAM_END */
	uint64_t members_ended; /* gzip members that reached it this pass */

	int bom_seen;       /* bytes of a leading UTF-8 byte order mark met this pass (0-3) */
	int bom_done;       /* the text's start has been looked at for one */
	int start_done;     /* the text's first byte past white space was checked (inputdecode.c) */
	uint64_t next_off;  /* text offset of the next byte to hand out */
	uint64_t chunk_off; /* text offset of the chunk last handed out */
	/* plain mode: raw[pos..len) not yet handed out */
	size_t raw_pos, raw_len;

	/* mapped reading (inputraw.c) */
	int map_ok;             /* a regular file whose plain text may be mapped (inputraw_map_chunk) */
	int fd_behind;          /* chunks were mapped: fd's position is not raw_done */

	/* read-ahead (inputahead.c), and the pass's end (input.c) */
	int ra_wanted;          /* cm_input_readahead: on (its slots) */
	int ra_ended;           /* the read-ahead pass handed out its end (0) or error (-1): ra_rc */
	int ra_rc;
	struct readahead *ra;   /* the read-ahead thread of this pass, or NULL */
	uint64_t ra_raw_done;   /* raw_done as of the chunk last handed out */
	double ra_waited;       /* seconds the caller waited for the read-ahead thread */

	/* the buffers and the holds (inputbuf.c) */
	unsigned char *last;     /* the buffer of the chunk last handed out (cm_input_hold) */
	pthread_mutex_t hold_mu; /* guards free, nfree and ended (holds are let go on any thread) */
	struct chunkbuf *free;   /* buffers let go, for the next chunks */
	int nfree;
	int ended;               /* this pass handed out its end: a buffer let go is freed */
};

#endif
