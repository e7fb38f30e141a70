/* gpurec.h - a window event digested once into a typed record.
 *
 * The window is parsed once (merge.c).  Each event the merge will write is
 * kept as a record of the values the rules read from it, already converted
 * by Python's int() rules and checked, so that the later stages (the rows,
 * the output) never see JSON again.  Records are packed into blocks; a block
 * is the unit the output stage hands to one worker thread. */
#ifndef CM_GPUREC_H
#define CM_GPUREC_H

#include <stdint.h>
#include <stdio.h>
#include "json/jval.h"
#include "base/pyval.h"

enum cm_gpurec_kind {
	CM_REC_RUNTIME = 1,
	CM_REC_DRIVER,
	CM_REC_KERNEL,
	CM_REC_MEMCPY,
	CM_REC_MEMSET,
	CM_REC_OVERHEAD,
	CM_REC_SYNC,      /* cuda_sync: drawn for window_version >= 2 */
	CM_REC_CUDAEVENT, /* cuda_event: where a CUDA event was recorded (not drawn) */
};

/* Field slots of v[] by kind. */
enum { CM_RA_CBID, CM_RA_PID, CM_RA_CORR, CM_RA_RAWTID, CM_RA_START, CM_RA_END, CM_RA_N };
enum {
	CM_RG_DEV, CM_RG_CTX, CM_RG_STREAM, CM_RG_CORR, CM_RG_START, CM_RG_END, CM_RG_GRAPH, CM_RG_NODE,
	CM_RG_BYTES, CM_RG_K1, CM_RG_K2, CM_RG_K3, CM_RG_FLAGS, CM_RG_N
};
enum { CM_RO_START, CM_RO_END, CM_RO_N };
/* a kernel with its launch members (CM_REC_LAUNCH) has these after CM_RG_N */
enum {
	CM_RK_GX = CM_RG_N, CM_RK_GY, CM_RK_GZ, CM_RK_BX, CM_RK_BY, CM_RK_BZ, CM_RK_REGS, CM_RK_SSMEM,
	CM_RK_DSMEM, CM_RK_QUEUED, CM_RK_N
};
enum { CM_RS_TYPE, CM_RS_START, CM_RS_END, CM_RS_CORR, CM_RS_CTX, CM_RS_STREAM, CM_RS_EVENT, CM_RS_DEV, CM_RS_N };
enum { CM_RE_CTX, CM_RE_EVENT, CM_RE_STREAM, CM_RE_CORR, CM_RE_N };
#define CM_REC_MAXV CM_RK_N

/* flags */
#define CM_REC_REGISTERED 1 /* API: its name is one the merge keeps */
#define CM_REC_ANN 2        /* activity: extra holds the packed "annotation" value */
#define CM_REC_ABR 4        /* overhead: "Activity Buffer Request" (may be dropped) */
#define CM_REC_DEFERRED 8   /* overhead, sync: extra holds an error to report if drawn */
#define CM_REC_LAUNCH 16    /* kernel: v[CM_RK_*] hold its launch configuration */
#define CM_REC_SPAN 32      /* API: v[CM_RA_START], v[CM_RA_END] hold its span (else 0) */
#define CM_REC_NAMEREF 64   /* the name is entry name_id of the window's name table (cm_gpunames, gpunames.h) */

typedef struct cm_gpurec {
	uint8_t kind, flags, nv;
	uint64_t index;  /* events[index], for messages */
	int64_t offset;  /* just past the event in the window, for messages */
	cm_int v[CM_REC_MAXV];
	const char *name; /* activity and overhead: str() of "name" (NULL with CM_REC_NAMEREF) */
	uint32_t nlen;
	uint32_t name_id; /* with CM_REC_NAMEREF: the name's entry in the name table */
	const char *extra; /* see the flags */
	uint32_t xlen;
} cm_gpurec;

/* Append R to the block being built in B: its name as bytes, or as the
 * number of its entry when R has CM_REC_NAMEREF (then R->name_id). */
void cm_gpurec_pack(cm_buf *b, const cm_gpurec *r);

/* Read the record at *P (below END) into R, whose strings point into the
 * block (a name by reference: R->name NULL, R->name_id set); advances *P.
 * Returns 0, or -1 when the bytes are not a record. */
int cm_gpurec_unpack(const char **p, const char *end, cm_gpurec *r);
/* The record at *P passed, its window index in *INDEX, nothing else read
 * (a pass over a block's indexes).  0, or -1 as cm_gpurec_unpack. */
int cm_gpurec_skip(const char **p, const char *end, uint64_t *index);

/* Blocks in a temporary file: a 4-byte length, then the packed records. */
/* Write the block in B (when not empty) to F and empty B.  0, or -1 after
 * reporting. */
int cm_gpurec_block_write(FILE *f, cm_buf *b);
/* Read the next block into B.  1 with a block, 0 at the end, -1 after
 * reporting. */
int cm_gpurec_block_read(FILE *f, cm_buf *b);

/* A JSON value packed into bytes and back, exactly (no re-parse, no
 * re-rounding): for values a record keeps as they are. */
void cm_gpurec_pack_jval(cm_buf *b, const cm_jval *v);
/* The value packed at S[0..N), its nodes in ARENA (strings point into S);
 * NULL when the bytes are not a packed value. */
cm_jval *cm_gpurec_unpack_jval(cm_arena *a, const char *s, size_t n);

#endif
