/* deflater.h - one block of pgzip.c's gzip member deflated on its own: raw
 * deflate after a dictionary, ended on a byte boundary (or as the final
 * block), by zlib or, for gzip levels 1 to 3 where the build has it, ISA-L;
 * with its CRC-32.  pgzip.c cuts the input into blocks and strings their
 * outputs together. */
#ifndef CM_DEFLATER_H
#define CM_DEFLATER_H

#include <stddef.h>
#include <zlib.h> /* compressBound, in CM_DEFLATE_OUT_FIRST */

/* deflate's window: the most a match can reach back, so the most of the
 * previous input that can help a block. */
#define CM_DEFLATE_DICT 32768u

/* The size of a block's first output buffer: deflate's bound for a full
 * block, so one buffer nearly always holds it (pgzcrew.c's crews keep
 * buffers of this size in their pools). */
#define CM_DEFLATE_OUT_FIRST (compressBound(CM_PGZ_BLOCK) + 64)

/* One block.  The caller fills in, dict, len and last; cm_deflate_block
 * sets out, out_len, crc and err. */
typedef struct cm_gzblock {
	unsigned char *in; /* CM_DEFLATE_DICT + CM_PGZ_BLOCK: the dictionary ends at
			    * in + CM_DEFLATE_DICT, the block starts there */
	size_t dict;       /* dictionary bytes, in[CM_DEFLATE_DICT - dict .. CM_DEFLATE_DICT) */
	size_t len;        /* block bytes, in[CM_DEFLATE_DICT .. CM_DEFLATE_DICT + len) */
	int last;          /* the final block: Z_FINISH */
	unsigned char *out; /* the deflated block (grown here, freed by the caller) */
	size_t out_len, out_size;
	unsigned long crc; /* CRC-32 of the block */
	int err;           /* CM_PGZ_OK, or what went wrong deflating it */
} cm_gzblock;

/* The deflate state of one thread for gzip LEVEL 0..9 (the engine that
 * cm_pgz_engine names for it), kept across blocks. */
typedef struct cm_deflater cm_deflater;

/* A deflater for LEVEL, or NULL when memory ran out (nothing reported). */
cm_deflater *cm_deflater_new(int level);

/* Deflate B with DF and compute its CRC-32: sets b->out, out_len, crc and
 * err (CM_PGZ_OK, CM_PGZ_NOMEM, or CM_PGZ_DEFLATE when the deflate refused
 * or seemed stuck).  Touches only B and DF, so threads with deflaters of
 * their own may run it at once.  The bytes depend on the block, its
 * dictionary and LEVEL alone. */
void cm_deflate_block(cm_deflater *df, cm_gzblock *b);

/* Free DF (NULL is fine). */
void cm_deflater_free(cm_deflater *df);

#endif
