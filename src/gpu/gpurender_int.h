/* gpurender_int.h - what the render (gpurender.c) lends the render in
 * groups for an encoder (gpuencgroups.c): a worker's render, and the
 * render of one record with the elements' starts and members noted. */
#ifndef CM_GPURENDER_INT_H
#define CM_GPURENDER_INT_H

#include "gpu/gpuconv_int.h"
#include "gpu/gpumembers.h"

/* What one worker needs to write events: its own scratch space; the tables
 * of cm_gpu are only read. */
struct render {
	const cm_gpu *g;
	struct args args;
	cm_arena *scratch;
	cm_buf text, dumps;
	struct { /* an API cbid's name in the table (not NULL) and whether it starts a flow */
		int64_t cbid;
		const char *name;
		size_t len;
		int driver, flow;
		cm_buf head; /* {"ph":"X","cat":...,"name":... of its X event, as gpu_x_head writes it */
	} api[64];
};

/* Where the render of a record for an encoder notes its elements: where
 * each begins (its ',', a size_t each, into MARKS), and, when M is not
 * NULL, their members (gpumembers.h). */
struct gpu_emit {
	cm_buf *marks;
	struct gpu_members *m;
};

/* R's render ready for G (R zeroed before). */
void gpu_render_init(struct render *R, const cm_gpu *g);
/* A worker's render (not R itself) freed. */
void gpu_render_free(struct render *R);
/* The events of the record REC, each with a comma in front, into OUT, as
 * the JSON's render writes them, noted in ES. */
void gpu_render_record(struct render *R, const cm_gpurec *rec, cm_buf *out, struct gpu_emit *es);

#endif
