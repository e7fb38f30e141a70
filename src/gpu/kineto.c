/* kineto.c - Kineto's formulas for kernel launch args, bandwidth and sync names, and its number formats.
 *
 * Kineto computes in C floats on CUPTI's fields and prints floats with
 * std::to_string, so "blocks per SM" for 256 blocks on 132 SMs is the
 * float 1.93939399... printed "1.939394".  A merge that is to give the same
 * values must make the same conversions in the same order: every
 * intermediate below is stored in a float (x86-64 evaluates float
 * expressions in float, FLT_EVAL_METHOD 0; configure turns contraction off),
 * and products of CUPTI's int32 fields wrap as 32-bit ints. */
#include "config.h"
#include "gpu/kineto.h"
#include "base/diag.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's int() of a device property (0 when it has none). */
static cm_int prop_int(const cm_jval *o, const char *key, int *present)
{
	const cm_jval *v = cm_jval_get(o, key);
	cm_int x = 0;
	*present = v != NULL;
	if (!v)
		return 0;
	switch (v->type) {
	case CM_J_NUM:
		if (cm_py_int_of_number(v->s, v->len, &x) != CM_PY_OK)
			x = 0;
		break;
	case CM_J_STR:
		if (cm_py_int_of_str(v->s, v->len, &x) != CM_PY_OK)
			x = 0;
		break;
	case CM_J_TRUE: x = 1; break;
	default: break;
	}
	return x;
}

/* The property KEY as a C int / size_t (the calculator's types), modulo. */
static int pint(const cm_jval *o, const char *key)
{
	int present;
	return (int)(uint32_t)(unsigned __int128)prop_int(o, key, &present);
}
static size_t psize(const cm_jval *o, const char *key, size_t dflt)
{
	int present;
	cm_int x = prop_int(o, key, &present);
	return present ? (size_t)(unsigned __int128)x : dflt;
}

int cm_kin_devices_read(cm_kin_devices *d, const cm_jval *v)
{
	size_t i = 0;
	cm_kin_devices_free(d);
	if (!v || v->type != CM_J_ARR || !v->len)
		return 0;
	d->v = cm_xcalloc(v->len, sizeof *d->v);
	for (const cm_jval *o = v->kids; o; o = o->next, i++) {
		cm_kin_props *p = &d->v[d->n++];
		cm_occ_props *q = &p->occ;
		int has_id;
		cm_int id = prop_int(o, "id", &has_id);
		p->id = has_id && id >= INT64_MIN && id <= INT64_MAX ? (int64_t)id : (int64_t)i;
		q->computeMajor = pint(o, "computeMajor");
		q->computeMinor = pint(o, "computeMinor");
		q->maxThreadsPerBlock = pint(o, "maxThreadsPerBlock");
		q->maxThreadsPerMultiprocessor = pint(o, "maxThreadsPerMultiprocessor");
		q->regsPerBlock = pint(o, "regsPerBlock");
		q->regsPerMultiprocessor = pint(o, "regsPerMultiprocessor");
		q->warpSize = pint(o, "warpSize");
		q->sharedMemPerBlock = psize(o, "sharedMemPerBlock", 0);
		q->sharedMemPerMultiprocessor = psize(o, "sharedMemPerMultiprocessor", 0);
		q->numSms = pint(o, "numSms");
		q->sharedMemPerBlockOptin = psize(o, "sharedMemPerBlockOptin", 0);
		q->reservedSharedMemPerBlock = psize(o, "reservedSharedMemPerBlock", q->computeMajor >= 8 ? 1024 : 0);
	}
	return 1;
}

const cm_kin_props *cm_kin_devices_find(const cm_kin_devices *d, int64_t id)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].id == id)
			return &d->v[i];
	return NULL;
}

void cm_kin_devices_free(cm_kin_devices *d)
{
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

/* The int32 product of three int32 fields, as C computes it (wrapping). */
static int32_t prod3(const int32_t *x)
{
	return (int32_t)((uint32_t)x[0] * (uint32_t)x[1] * (uint32_t)x[2]);
}

float cm_kin_blocks_per_sm(const cm_kin_launch *k, int sms)
{
	float blocks = (float)prod3(k->grid), n = (float)sms;
	return blocks / n;
}

float cm_kin_warps_per_sm(const cm_kin_launch *k, int sms)
{
	float t = cm_kin_blocks_per_sm(k, sms) * (float)prod3(k->block);
	return t / 32.0f; /* Kineto's threads_per_warp, an int converted to float */
}

float cm_kin_occupancy(const cm_kin_launch *k, const cm_kin_props *props)
{
	cm_occ_func f = {0};
	cm_occ_state st = {CM_OCC_CACHE_NONE, CM_OCC_CARVEOUT_DEFAULT};
	cm_occ_result r;
	float blocks_per_sm = -1.0f, occ;
	int block_size = prod3(k->block);
	if (!props)
		return -1.0f;
	if (props->occ.numSms)
		blocks_per_sm = (float)prod3(k->grid) / (float)props->occ.numSms;
	/* Kineto's cudaOccFuncAttributes: no thread limit, the static shared
	 * memory, the defaults for the rest (no barriers counted) */
	f.maxThreadsPerBlock = INT_MAX;
	f.numRegs = k->regs;
	f.sharedSizeBytes = (size_t)(int64_t)k->static_smem;
	f.partitionedGCConfig = CM_OCC_GC_OFF;
	f.shmemLimitConfig = CM_OCC_SHMEM_LIMIT_DEFAULT;
	memset(&r, 0, sizeof r);
	if (cm_occ_max_active_blocks(&r, &props->occ, &f, &st, block_size, (size_t)(int64_t)k->dynamic_smem) !=
	    CM_OCC_SUCCESS)
		return -1.0f;
	/* std::min<float>(active, blocks_per_sm) */
	if (blocks_per_sm < (float)r.activeBlocksPerMultiprocessor)
		occ = blocks_per_sm;
	else
		occ = (float)r.activeBlocksPerMultiprocessor;
	occ = occ * (float)block_size;
	return occ / (float)props->occ.maxThreadsPerMultiprocessor;
}

int cm_kin_occupancy_pct(float occ)
{
	double x = 0.5 + (double)occ * 100.0;
	if (!(x > (double)INT_MIN - 1.0 && x < (double)INT_MAX + 1.0))
		return INT_MIN; /* cvttsd2si's "integer indefinite" */
	return (int)x;
}

void cm_kin_write_float(cm_buf *b, float f)
{
	char text[64];
	int n;
	if (isinf(f)) {
		cm_buf_lit(b, "\"inf\"");
		return;
	}
	if (isnan(f)) {
		cm_buf_lit(b, "\"nan\"");
		return;
	}
	n = snprintf(text, sizeof text, "%f", (double)f);
	cm_buf_put(b, text, (size_t)n);
}

void cm_kin_write_bandwidth(cm_buf *b, cm_int bytes, cm_int start, cm_int end)
{
	uint64_t n = (uint64_t)(unsigned __int128)bytes, dur = (uint64_t)(unsigned __int128)(end - start);
	double x;
	if (!dur) {
		cm_buf_lit(b, "\"N/A\"");
		return;
	}
	x = (double)n * 1.0;
	cm_jw_double(b, x / (double)dur);
}

const char *cm_kin_sync_name(cm_int t)
{
	switch ((uint32_t)(unsigned __int128)t) { /* the record's uint32 field */
	case CM_SYNC_EVENT: return "Event Sync";
	case CM_SYNC_STREAM_WAIT_EVENT: return "Stream Wait Event";
	case CM_SYNC_STREAM: return "Stream Sync";
	case CM_SYNC_CONTEXT: return "Context Sync";
	default: return "Unknown Sync";
	}
}
