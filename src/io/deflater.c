/* deflater.c - one block of the gzip member deflated on its own
 * (deflater.h), by zlib or ISA-L.
 *
 * Levels 1 to 3 are deflated with Intel's ISA-L (isal_deflate, the engine
 * of its igzip) where configure found it (HAVE_ISAL), every other level
 * with zlib.  Timed on 400 MB of our merged
 * output, one core: zlib -1 1.97 s (46.0 MB), -2 1.97 s (43.8 MB), -3
 * 2.11 s (41.6 MB), -6 3.83 s (33.3 MB); igzip -1 0.24 s (43.2 MB), -2
 * 0.26 s (43.0 MB), -3 0.77 s (43.2 MB).  So ISA-L's level 1 is about 8
 * times as fast as zlib's, and smaller than zlib's levels 1 and 2; but ISA-L
 * tops out at about zlib -2's ratio, so the levels that ask for a smaller
 * file, 4 to 9, stay with zlib, and so does 0 (stored blocks, which ISA-L's
 * level 0 is not).  The layout is the same for both: an ISA-L stream is raw
 * deflate (IGZIP_DEFLATE), gets the 32 KiB before its block through
 * isal_deflate_set_dict(), ends with SYNC_FLUSH (the same empty stored
 * block as zlib's) or, on the last block, end_of_stream (the final-block
 * bit), and is reset between blocks; the header and trailer are pgzip.c's
 * for both.  So the member is the same bytes at every -j with either deflate,
 * though not the same bytes for both (nor, perhaps, on a CPU on which ISA-L
 * picks other code).  Each worker keeps one ISA-L stream and its level
 * buffer (ISAL_DEF_LVLn_DEFAULT bytes) for the whole stream.  With ISA-L the
 * blocks' CRC-32 comes from its crc32_gzip_refl() too, at every level: the
 * same value as zlib's crc32(), in 0.03 s instead of 0.19 s for 400 MiB of
 * our output on one core (zlib's would add three quarters to the time of
 * ISA-L's level 1).
 *
 * Every block is deflated the way pgzip.c's essay says (a dictionary, then
 * Z_SYNC_FLUSH, or Z_FINISH for the last), into an output space that
 * depends on the block alone (out_room), so that its bytes do not depend
 * on which thread, or which slot's buffer, deflated it. */
#include "config.h"
#include "io/deflater.h"
#include "io/pgzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l.h> /* the version macros; it includes igzip_lib.h and crc.h */
#endif

#define DICT CM_DEFLATE_DICT

/* Whether LEVEL is deflated with ISA-L (the essay says why 1 to 3). */
#ifdef HAVE_ISAL
#define USE_ISAL(level) ((level) >= 1 && (level) <= 3)
#else
#define USE_ISAL(level) 0
#endif

/* One thread's deflate state for LEVEL: a zlib stream, or an ISA-L stream
 * and its level buffer (both malloc'd: 356 KiB at level 1, 404 at 2, 420
 * at 3, with ISA-L 2.30). */
struct cm_deflater {
	int level;
	z_stream zs;
	int zs_init; /* zs was initialised (deflateEnd it) */
#ifdef HAVE_ISAL
	struct isal_zstream *is;
	unsigned char *level_buf;
#endif
};

/* the ISA-L headers' version as text, where they say it (isa-l.h) */
#define STR_(x) #x
#define STR(x) STR_(x)

const char *cm_pgz_engine(int level, const char **version)
{
#ifdef HAVE_ISAL
	if (USE_ISAL(level)) {
#ifdef ISAL_MAJOR_VERSION
		*version = STR(ISAL_MAJOR_VERSION) "." STR(ISAL_MINOR_VERSION) "." STR(ISAL_PATCH_VERSION);
#else
		*version = "";
#endif
		return "ISA-L";
	}
#endif
	(void)level;
	*version = zlibVersion();
	return "zlib";
}

/* The CRC-32 of P[0..N): ISA-L's where built with it (the essay says why),
 * else zlib's; the same value. */
static unsigned long block_crc(const unsigned char *p, size_t n)
{
#ifdef HAVE_ISAL
	return crc32_gzip_refl(0, p, (uint64_t)n);
#else
	return crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
#endif
}

/* The output space a block's first deflate call gets: compressBound, zlib's
 * bound for a block at any level (wrapper included, so above deflateBound of
 * a raw stream), and room for the flush marker: 131,189 bytes.  ISA-L falls
 * back to stored blocks for data that does not compress and stays within it
 * too (131,093 bytes for 128 KiB of random bytes, flushed, at levels 1-3). */
#define OUT_FIRST CM_DEFLATE_OUT_FIRST

/* The output space for the next deflate call of B, *CAP the space of the
 * call before (0 before the first): OUT_FIRST, then twice *CAP each time, and
 * b->out grown to it.  The space a call gets depends on the block alone,
 * never on how far its slot's buffer grew for an earlier block: deflate may
 * write other (valid) bytes when a flush does not fit in one call (zlib an
 * extra empty block after a marker that filled the space; ISA-L's bytes
 * moved too when the first space was made small), and the bytes must not
 * depend on -j.
 * A second call is not expected at all (OUT_FIRST is a bound); past the
 * sixth (32 times OUT_FIRST, 4 MiB for a 128 KiB block) the deflate is
 * taken to be stuck, rather than loop for ever.  0, CM_PGZ_NOMEM or
 * CM_PGZ_DEFLATE. */
static int out_room(cm_gzblock *b, size_t *cap)
{
	unsigned char *p;
	*cap = *cap ? 2 * *cap : OUT_FIRST;
	if (*cap > 32 * OUT_FIRST)
		return CM_PGZ_DEFLATE;
	if (b->out_size >= *cap)
		return CM_PGZ_OK;
	if (!(p = realloc(b->out, *cap)))
		return CM_PGZ_NOMEM;
	b->out = p;
	b->out_size = *cap;
	return CM_PGZ_OK;
}

/* Deflate B with zlib's STRM (a raw deflate stream of the stream's level):
 * reset it, load the dictionary, deflate the block with Z_SYNC_FLUSH
 * (Z_FINISH for the last).  Sets b->out and out_len; returns CM_PGZ_OK,
 * out_room's error, or CM_PGZ_DEFLATE when zlib refuses. */
static int deflate_zlib(z_stream *strm, cm_gzblock *b)
{
	int flush = b->last ? Z_FINISH : Z_SYNC_FLUSH;
	size_t cap = 0;
	if (deflateReset(strm) != Z_OK ||
	    (b->dict && deflateSetDictionary(strm, b->in + DICT - b->dict, (uInt)b->dict) != Z_OK))
		return CM_PGZ_DEFLATE;
	strm->next_in = b->in + DICT;
	strm->avail_in = (uInt)b->len;
	for (;;) {
		int rc = out_room(b, &cap);
		if (rc != CM_PGZ_OK)
			return rc;
		strm->next_out = b->out + b->out_len;
		strm->avail_out = (uInt)(cap - b->out_len);
		rc = deflate(strm, flush);
		b->out_len = cap - strm->avail_out;
		if (rc == Z_STREAM_ERROR)
			return CM_PGZ_DEFLATE;
		/* done: Z_FINISH says so; a flush is complete once deflate returns
		 * with output space left over (zlib's deflate() contract) */
		if (b->last ? rc == Z_STREAM_END : strm->avail_in == 0 && strm->avail_out != 0)
			return CM_PGZ_OK;
	}
}

#ifdef HAVE_ISAL
/* Deflate B with ISA-L's stream S (raw deflate, its level and level buffer
 * set by init_stream, which isal_deflate_reset keeps): reset it, load the
 * dictionary, deflate the block with SYNC_FLUSH, or end_of_stream for the
 * last (whose final-block bit makes a flush pointless).  Sets b->out and
 * out_len; returns CM_PGZ_OK, out_room's error, or CM_PGZ_DEFLATE when ISA-L
 * returns one of its errors (INVALID_FLUSH, ISAL_INVALID_LEVEL,
 * ISAL_INVALID_LEVEL_BUF; ISAL_INVALID_STATE from the dictionary). */
static int deflate_isal(struct isal_zstream *s, cm_gzblock *b)
{
	size_t cap = 0;
	isal_deflate_reset(s);
	s->flush = b->last ? NO_FLUSH : SYNC_FLUSH;
	s->end_of_stream = (uint16_t)b->last;
	if (b->dict && isal_deflate_set_dict(s, b->in + DICT - b->dict, (uint32_t)b->dict) != COMP_OK)
		return CM_PGZ_DEFLATE;
	s->next_in = b->in + DICT;
	s->avail_in = (uint32_t)b->len;
	for (;;) {
		int rc = out_room(b, &cap);
		if (rc != CM_PGZ_OK)
			return rc;
		s->next_out = b->out + b->out_len;
		s->avail_out = (uint32_t)(cap - b->out_len);
		if (isal_deflate(s) != COMP_OK)
			return CM_PGZ_DEFLATE;
		b->out_len = cap - s->avail_out;
		/* done (igzip_lib.h, isal_deflate()): the last block once the
		 * stream's state is ZSTATE_END; a flushed one once all input is
		 * taken and the state is back at a new block header with output
		 * space left over */
		if (b->last ? s->internal_state.state == ZSTATE_END
			      : s->avail_in == 0 && s->avail_out != 0 && s->internal_state.state == ZSTATE_NEW_HDR)
			return CM_PGZ_OK;
	}
}
#endif

#ifdef HAVE_ISAL
/* ISA-L's level buffer for levels 1 to 3: the sizes igzip_lib.h suggests
 * (ISAL_DEF_LVLn_DEFAULT, its "large" ones: hash tables and 256 KiB of
 * intermediate code). */
static const uint32_t isal_level_buf[4] = {
	0, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT,
};
#endif

cm_deflater *cm_deflater_new(int level)
{
	cm_deflater *df = calloc(1, sizeof *df);
	if (!df)
		return NULL;
	df->level = level;
#ifdef HAVE_ISAL
	if (USE_ISAL(level)) {
		df->is = malloc(sizeof *df->is);
		df->level_buf = malloc(isal_level_buf[level]);
		if (!df->is || !df->level_buf) {
			cm_deflater_free(df);
			return NULL;
		}
		isal_deflate_init(df->is);
		df->is->level = (uint32_t)level;
		df->is->level_buf = df->level_buf;
		df->is->level_buf_size = isal_level_buf[level];
		df->is->gzip_flag = IGZIP_DEFLATE; /* raw: the header and trailer are pgzip.c's */
		return df;
	}
#endif
	/* -15: raw deflate, 32 KiB window; memLevel 8 is zlib's default */
	if (deflateInit2(&df->zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(df);
		return NULL;
	}
	df->zs_init = 1;
	return df;
}

void cm_deflate_block(cm_deflater *df, cm_gzblock *b)
{
	b->out_len = 0;
	b->crc = block_crc(b->in + DICT, b->len);
#ifdef HAVE_ISAL
	if (USE_ISAL(df->level)) {
		b->err = deflate_isal(df->is, b);
		return;
	}
#endif
	b->err = deflate_zlib(&df->zs, b);
}

void cm_deflater_free(cm_deflater *df)
{
	if (!df)
		return;
	if (df->zs_init)
		deflateEnd(&df->zs);
#ifdef HAVE_ISAL
	free(df->is); /* ISA-L's stream holds no memory of its own */
	free(df->level_buf);
#endif
	free(df);
}
