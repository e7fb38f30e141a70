/* pgzip.h - gzip compression on several threads, the way pigz does it: one
 * gzip member whose deflate blocks are made by worker threads and written,
 * in order, by the caller's thread.  Several streams can share one crew
 * of workers instead (pgzcrew.h). */
#ifndef CM_PGZIP_H
#define CM_PGZIP_H

#include <stddef.h>

/* Input bytes per block: each is deflated by one worker (pigz's default;
 * pgzip.c says why). */
#define CM_PGZ_BLOCK (128u * 1024u)

typedef struct cm_pgz cm_pgz;

/* Where the compressed bytes go, in order, one call at a time.  A stream
 * of its own calls it on the caller's thread only (from cm_pgz_write and
 * cm_pgz_finish); a crew's stream on the crew's workers, whichever
 * finished the block next in order (cm_pgz_new_crew, pgzcrew.h).  Returns 0, or -1
 * to stop the stream (the sink reports its own error, or decides not to:
 * a closed pipe; on a crew's worker it must not print, but keep the
 * error for the caller, who learns of it from cm_pgz_write or
 * cm_pgz_finish's CM_PGZ_SINK). */
typedef int (*cm_pgz_sink)(void *ctx, const unsigned char *p, size_t n);

/* What cm_pgz_write and cm_pgz_finish return. */
enum {
	CM_PGZ_OK = 0,
	CM_PGZ_SINK = -1,    /* the sink returned -1 */
	CM_PGZ_NOMEM = -2,   /* out of memory (here or on a worker) */
	CM_PGZ_DEFLATE = -3, /* zlib or ISA-L refused (never expected) */
};

/* The deflate that gzip LEVEL uses: "ISA-L" (levels 1 to 3, where the build
 * has it) or "zlib"; *VERSION is set to its version ("2.30.0", the ISA-L
 * headers' as built, for the library tells none at run time, or "" where
 * they do not say; zlib's from zlibVersion()).  Static strings. */
const char *cm_pgz_engine(int level, const char **version);

/* A new stream at gzip LEVEL 0..9, compressed by THREADS worker threads (0:
 * on the caller's thread, in cm_pgz_write itself), writing to SINK with
 * CTX.  No thread starts, and nothing reaches SINK, before the first full
 * block.  Memory is bounded: at most 2 * THREADS blocks (at least 2) are in
 * flight, about 300 KiB each, plus the deflate state of each worker: zlib's
 * 268 KiB, or ISA-L's 356 to 420 KiB at levels 1 to 3 (cm_pgz_engine).
 * Returns NULL when memory ran out (nothing reported: the caller says
 * so). */
cm_pgz *cm_pgz_new(int level, int threads, cm_pgz_sink sink, void *ctx);

/* Compress LEN bytes of DATA (copied; the caller may reuse DATA at once).
 * Blocks until a block slot is free when all are in flight.  Returns
 * CM_PGZ_OK or an error above; after an error every later call returns it
 * again and the stream is lost (cm_pgz_free it). */
int cm_pgz_write(cm_pgz *z, const void *data, size_t len);

/* End the stream: compress what is left as the final block, wait for every
 * block, and write the gzip trailer (CRC-32 and length).  Returns CM_PGZ_OK
 * or an error above.  Call it once; then cm_pgz_free. */
int cm_pgz_finish(cm_pgz *z);

/* -v: the seconds the calls of cm_pgz_write and cm_pgz_finish on Z have
 * waited so far for the workers (a block to be deflated before its slot is
 * free or its bytes can be written; a crew's stream: written by the crew),
 * in *WAIT, and spent writing the blocks on through the sink (the
 * output's buffers or write(2); a crew's workers write a crew stream's:
 * 0), in *EMIT; the rest of their time is the copy into the blocks.  On
 * the thread that calls cm_pgz_write (or once it has finished). */
void cm_pgz_waits(const cm_pgz *z, double *wait, double *emit);

/* Stop the workers (each finishes the block it has; queued ones are
 * dropped), join them, free Z.  NULL is fine. */
void cm_pgz_free(cm_pgz *z);

#endif
