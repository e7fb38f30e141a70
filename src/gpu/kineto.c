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
