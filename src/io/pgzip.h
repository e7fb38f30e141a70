/* pgzip.h - gzip compression on several threads, the way pigz does it: one
 * gzip member whose deflate blocks are made by worker threads and written,
 * in order, by the caller's thread. */
#ifndef CM_PGZIP_H
#define CM_PGZIP_H

#include <stddef.h>
#include <stdint.h>

/* Input bytes per block: each is deflated by one worker (pigz's default;
 * pgzip.c says why). */
#define CM_PGZ_BLOCK (128u * 1024u)

typedef struct cm_pgz cm_pgz;

/* Where the compressed bytes go, in order, one call at a time.  A stream
 * of its own calls it on the caller's thread only (from cm_pgz_write and
 * cm_pgz_finish); a crew's stream on the crew's workers, whichever
 * finished the block next in order (cm_pgz_new_crew).  Returns 0, or -1
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

/* Stop the workers (each finishes the block it has; queued ones are
 * dropped), join them, free Z.  NULL is fine. */
void cm_pgz_free(cm_pgz *z);

/* A crew: THREADS worker threads that deflate the blocks of several
 * streams at gzip LEVEL, in the order the blocks are handed over (the
 * files of --split, written one after another or a few at once, each with
 * the whole crew).  The caller holds a reference, and each stream made on
 * it another: the last cm_pgz_crew_drop (the caller's, or cm_pgz_free's)
 * stops and frees it.  NULL when no thread could be made (nothing
 * reported: streams of their own then). */
typedef struct cm_pgz_crew cm_pgz_crew;
cm_pgz_crew *cm_pgz_crew_new(int level, int threads);
/* Drop a reference to CREW (NULL is fine). */
void cm_pgz_crew_drop(cm_pgz_crew *crew);
/* A new stream, as cm_pgz_new at CREW's level, whose blocks CREW's workers
 * deflate and write: the worker that finishes the block next in order
 * writes it through SINK (and those after it that are done), so the
 * caller only fills blocks and hands them over, and a stream it has left
 * is written to its last full block without another call.  Up to 2 * its
 * threads in flight, their buffers back to the crew once written, so an
 * idle stream holds the block it is filling.  The same bytes as a stream
 * of its own.  NULL when memory ran out. */
cm_pgz *cm_pgz_new_crew(cm_pgz_crew *crew, cm_pgz_sink sink, void *ctx);

/* What the crews of the run did, summed over them and their threads
 * (-v): THREADS compressor threads deflated BLOCKS blocks in BUSY
 * seconds, wrote their files' blocks in WRITING seconds (the sinks, on
 * top of BUSY) and waited IDLE seconds for a block; the threads feeding
 * them waited ROOM seconds for the crew to take a block and SLOTS seconds
 * for a file's blocks in flight to be written (a full ring, or the end).
 * Complete once the crews are gone (their last stream freed). */
struct cm_pgz_crew_stats {
	int threads;
	uint64_t blocks;
	double busy, writing, idle, room, slots;
};
void cm_pgz_crew_stats(struct cm_pgz_crew_stats *st);

#endif
