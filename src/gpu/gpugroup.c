/* gpugroup.c - a group of an encoder's (cm_gpu_groups) in a worker's
 * output, as the render in groups (gpuencgroups.c) and the spans in groups
 * (gpuencspans.c) lay it out, and the ordered pool's sink that hands the
 * groups on: below both, which also call each other one way (the spans'
 * pieces after the window's, in its pool: tests/e2e/gpucalls.sh). */
#include "config.h"
#include "gpu/gpurender_int.h"

#include <string.h>

/* A group's encoded records in a worker's output: the header, then LEN
 * bytes, padded to a multiple of 8. */
struct grpart {
	uint64_t len;
};

/* OUT padded with zeros to a multiple of 8. */
static void pad8(cm_buf *out)
{
	static const char zero[8];
	if (out->len & 7)
		cm_buf_put(out, zero, 8 - (out->len & 7));
}

/* (gpurender_int.h) */
int gpu_group_open(const cm_gpu_groups *gr, void *ectx, cm_buf *out, size_t *at)
{
	struct grpart h = {0};
	*at = out->len;
	cm_buf_put(out, &h, sizeof h);
	return gr->open(ectx, out);
}

/* (gpurender_int.h) */
int gpu_group_close(const cm_gpu_groups *gr, void *ectx, size_t at, size_t nel, cm_buf *out)
{
	struct grpart h;
	int rc = gr->close(ectx, out);
	if (rc < 0)
		return rc;
	h.len = out->len - at - sizeof h;
	memcpy(out->p + at, &h, sizeof h);
	if (!nel)
		out->len = at; /* no element: not seen */
	pad8(out);
	return 0;
}

/* (gpurender_int.h: OUT's bytes first to the encoder's adopt, when it has
 * one; V keeps where they are) */
int gpu_groups_sink(void *sctx, cm_buf *out)
{
	const cm_gpu_groups *gr = sctx;
	const cm_buf v = *out;
	size_t at = 0, n = 0;
	struct grpart h;
	if (gr->adopt) {
		for (at = 0; at < v.len; at = (at + sizeof h + (size_t)h.len + 7) & ~(size_t)7, n++)
			memcpy(&h, v.p + at, sizeof h);
		if (n)
			gr->adopt(gr->sctx, out, n);
	}
	at = 0;
	while (at < v.len) {
		memcpy(&h, v.p + at, sizeof h);
		at += sizeof h;
		if (gr->encoded(gr->sctx, v.p + at, (size_t)h.len) < 0)
			return -1;
		at = (at + (size_t)h.len + 7) & ~(size_t)7;
	}
	return 0;
}
