/* pgzcrew.h - one crew of deflate workers shared by several gzip streams
 * (the files of --split): each stream the same gzip member as one of its
 * own (pgzip.h), its blocks deflated and written by the crew's workers
 * (pgzcrew.c says why and how). */
#ifndef CM_PGZCREW_H
#define CM_PGZCREW_H

#include "io/pgzip.h"

#include <stdint.h>

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
