/* occupancy.c - cudaOccMaxActiveBlocksPerMultiprocessor, ported from CUDA 13.0's cuda_occupancy.h.
 *
 * The header is the calculator's definition: each function below is its
 * namesake there, in the same order, with the same branches, so that a
 * reader can check one against the other line by line.  Two changes: the
 * int arithmetic wraps instead of overflowing (through wadd/wmul), because
 * a window may hold any numbers and C's signed overflow is undefined; and
 * cudaOccPartitionedGlobalCachingModeSupport returns its value.  Compute
 * capabilities the header does not know are CM_OCC_ERROR_UNKNOWN_DEVICE, as
 * there; Kineto then writes an occupancy of -1 (see kineto.c). */
#include "config.h"
#include "gpu/occupancy.h"

#include <limits.h>
#include <string.h>

/* int a + b and a * b with wrap-around (two's complement, as gcc's code for
 * the header does when nothing else is known). */
static int wadd(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
static int wmul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }

static int occ_min(int lhs, int rhs) { return rhs < lhs ? rhs : lhs; }
static int occ_divide_round_up(int x, int y) { return wadd(x, y - 1) / y; }
static int occ_round_up(int x, int y) { return wmul(y, occ_divide_round_up(x, y)); }

/* ------------------------------------------------- architectural properties */

static int smem_allocation_granularity(int *limit, const cm_occ_props *p)
{
	switch (p->computeMajor) {
	case 3: case 5: case 6: case 7: *limit = 256; return CM_OCC_SUCCESS;
	case 8: case 9: case 10: case 11: case 12: *limit = 128; return CM_OCC_SUCCESS;
	default: return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
}

static int reg_allocation_max_per_thread(int *limit, const cm_occ_props *p)
{
	switch (p->computeMajor) {
	case 3: case 5: case 6: *limit = 255; return CM_OCC_SUCCESS;
	case 7: case 8: case 9: case 10: case 11: case 12: *limit = 256; return CM_OCC_SUCCESS;
	default: return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
}

static int reg_allocation_granularity(int *limit, const cm_occ_props *p)
{
	switch (p->computeMajor) {
	case 3: case 5: case 6: case 7: case 8: case 9: case 10: case 11: case 12:
		*limit = 256;
		return CM_OCC_SUCCESS;
	default: return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
}

static int sub_partitions_per_multiprocessor(int *limit, const cm_occ_props *p)
{
	switch (p->computeMajor) {
	case 3: case 5: case 7: case 8: case 9: case 10: case 11: case 12: *limit = 4; return CM_OCC_SUCCESS;
	case 6: *limit = p->computeMinor ? 4 : 2; return CM_OCC_SUCCESS;
	default: return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
}

static int max_blocks_per_multiprocessor(int *limit, const cm_occ_props *p)
{
	int value;
	switch (p->computeMajor) {
	case 3: value = 16; break;
	case 5: case 6: value = 32; break;
	case 7: value = p->computeMinor == 5 ? 16 : 32; break; /* Turing: 16 */
	case 8: value = p->computeMinor == 0 ? 32 : p->computeMinor == 9 ? 24 : 16; break;
	case 9: value = 32; break;
	case 10: value = p->computeMinor == 1 ? 24 : 32; break;
	case 11: value = p->computeMinor == 0 ? 24 : 32; break;
	case 12: value = 24; break;
	default: return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
	*limit = value;
	return CM_OCC_SUCCESS;
}

/* Round *SIZE up to the next shared-memory carveout the architecture
 * offers (in KiB); beyond the largest, invalid input. */
static int align_up_steps(size_t *size, const unsigned *kib, int n)
{
	if (*size == 0)
		return CM_OCC_SUCCESS;
	for (int i = 0; i < n; i++)
		if (*size <= (size_t)kib[i] * 1024) {
			*size = (size_t)kib[i] * 1024;
			return CM_OCC_SUCCESS;
		}
	return CM_OCC_ERROR_INVALID_INPUT;
}

static int align_up_shmem_size_volta_plus(size_t *size, const cm_occ_props *p)
{
	static const unsigned volta[] = {8, 16, 32, 64, 96};
	static const unsigned ga100[] = {8, 16, 32, 64, 100, 132, 164};
	static const unsigned ga10x[] = {8, 16, 32, 64, 100};
	static const unsigned hopper[] = {8, 16, 32, 64, 100, 132, 164, 196, 228};
	switch (p->computeMajor) {
	case 7:
		if (p->computeMinor == 5) { /* Turing: 32 or 64 KiB, never 0 */
			if (*size <= 32 * 1024)
				*size = 32 * 1024;
			else if (*size <= 64 * 1024)
				*size = 64 * 1024;
			else
				return CM_OCC_ERROR_INVALID_INPUT;
			return CM_OCC_SUCCESS;
		}
		return align_up_steps(size, volta, 5);
	case 8:
		if (p->computeMinor == 0 || p->computeMinor == 7)
			return align_up_steps(size, ga100, 7);
		return align_up_steps(size, ga10x, 5);
	case 9:
		return align_up_steps(size, hopper, 9);
	case 10:
	case 11:
		if (p->computeMinor == 0 || p->computeMinor == 1 || p->computeMinor == 3)
			return align_up_steps(size, hopper, 9);
		return CM_OCC_ERROR_UNKNOWN_DEVICE;
	case 12:
		if (p->computeMinor == 0 || p->computeMinor == 1)
			return align_up_steps(size, ga10x, 5);
		return CM_OCC_ERROR_UNKNOWN_DEVICE;
	default:
		return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
}

static int smem_preference_volta_plus(size_t *limit, const cm_occ_props *p, const cm_occ_state *st)
{
	size_t pref;
	int status, eff = st->carveoutConfig;
	if (eff < CM_OCC_CARVEOUT_DEFAULT || eff > 100)
		return CM_OCC_ERROR_INVALID_INPUT;
	if (eff == CM_OCC_CARVEOUT_DEFAULT) {
		switch (st->cacheConfig) {
		case CM_OCC_CACHE_L1: eff = 0; break;
		case CM_OCC_CACHE_SHARED: eff = 100; break;
		case CM_OCC_CACHE_EQUAL: eff = 50; break;
		default: eff = CM_OCC_CARVEOUT_DEFAULT; break;
		}
	}
	if (eff == CM_OCC_CARVEOUT_DEFAULT)
		pref = p->sharedMemPerMultiprocessor;
	else
		pref = (size_t)eff * p->sharedMemPerMultiprocessor / 100;
	status = align_up_shmem_size_volta_plus(&pref, p);
	*limit = pref;
	return status;
}

static int smem_preference(size_t *limit, const cm_occ_props *p, const cm_occ_state *st)
{
	size_t bytes = 0, high = p->sharedMemPerMultiprocessor;
	size_t low = high + 16384 - 49152; /* Kepler: L1 takes 16, 32 or 48 KiB */
	switch (p->computeMajor) {
	case 3:
		switch (st->cacheConfig) {
		case CM_OCC_CACHE_L1: bytes = low; break;
		case CM_OCC_CACHE_EQUAL: bytes = (high + low) / 2; break;
		default: bytes = high; break;
		}
		break;
	case 5:
	case 6:
		bytes = high;
		break;
	default:
		return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
	*limit = bytes;
	return CM_OCC_SUCCESS;
}

static int smem_per_multiprocessor(size_t *limit, const cm_occ_props *p, const cm_occ_state *st)
{
	if (p->computeMajor >= 7)
		return smem_preference_volta_plus(limit, p, st);
	return smem_preference(limit, p, st);
}

static int smem_per_block(size_t *limit, const cm_occ_props *p, int shmem_limit_config, size_t smem_per_cta)
{
	switch (p->computeMajor) {
	case 2: case 3: case 4: case 5: case 6:
		*limit = p->sharedMemPerBlock;
		break;
	case 7: case 8: case 9: case 10: case 11: case 12:
		if (shmem_limit_config == CM_OCC_SHMEM_LIMIT_OPTIN && smem_per_cta > p->sharedMemPerBlock)
			*limit = p->sharedMemPerBlockOptin;
		else
			*limit = p->sharedMemPerBlock;
		break;
	default:
		return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
	if (p->computeMajor >= 8) /* from Ampere on the driver reserves some per block */
		*limit += p->reservedSharedMemPerBlock;
	return CM_OCC_SUCCESS;
}

/* 1 when partitioned global caching is supported (sm_52, sm_53, sm_6x but sm_60). */
static int partitioned_gc_supported(const cm_occ_props *p)
{
	if (p->computeMajor == 6 && p->computeMinor == 0)
		return 0;
	return (p->computeMajor == 5 && (p->computeMinor == 2 || p->computeMinor == 3)) || p->computeMajor == 6;
}

static int max_virtual_resource_count_per_sm(const cm_occ_props *p)
{
	return p->computeMajor >= 10 && p->computeMajor <= 12 ? 128 : 0;
}

/* --------------------------------------------------------- input checks */

static int input_check(const cm_occ_props *p, const cm_occ_func *f)
{
	if (p->maxThreadsPerBlock <= 0 || p->maxThreadsPerMultiprocessor <= 0 || p->regsPerBlock <= 0 ||
	    p->regsPerMultiprocessor <= 0 || p->warpSize <= 0 || p->sharedMemPerBlock <= 0 ||
	    p->sharedMemPerMultiprocessor <= 0 || p->numSms <= 0)
		return CM_OCC_ERROR_INVALID_INPUT;
	if (f->maxThreadsPerBlock <= 0 || f->numRegs < 0)
		return CM_OCC_ERROR_INVALID_INPUT;
	return CM_OCC_SUCCESS;
}

/* --------------------------------------------------------------- limits */

static int warps_limit(int *limit, int gc, const cm_occ_props *p, int block_size)
{
	int max_warps, warps_per_cta;
	if (block_size > p->maxThreadsPerBlock) {
		*limit = 0;
		return CM_OCC_SUCCESS;
	}
	max_warps = p->maxThreadsPerMultiprocessor / p->warpSize;
	warps_per_cta = occ_divide_round_up(block_size, p->warpSize);
	if (gc != CM_OCC_GC_OFF) /* a CTA gets half an SM */
		*limit = wmul(max_warps / 2 / warps_per_cta, 2);
	else
		*limit = max_warps / warps_per_cta;
	return CM_OCC_SUCCESS;
}

static int smem_limit(int *limit, cm_occ_result *result, const cm_occ_props *p, const cm_occ_func *f,
		      const cm_occ_state *st, size_t dyn_smem)
{
	int granularity, status, max_blocks;
	size_t user_pref = 0, static_smem, total, max_usage, allocated, per_sm, limit_per_cta;
	int dyn_exceeded = 0, total_exceeded = 0;

	if ((status = smem_allocation_granularity(&granularity, p)) != CM_OCC_SUCCESS)
		return status;
	if ((status = smem_per_multiprocessor(&user_pref, p, st)) != CM_OCC_SUCCESS)
		return status;
	static_smem = f->sharedSizeBytes + p->reservedSharedMemPerBlock;
	total = static_smem + dyn_smem;
	/* the header rounds an int made of the size_t, and stores it back */
	allocated = (size_t)occ_round_up((int)total, granularity);
	max_usage = static_smem + f->maxDynamicSharedSizeBytes;
	if (f->shmemLimitConfig != CM_OCC_SHMEM_LIMIT_DEFAULT && dyn_smem > f->maxDynamicSharedSizeBytes)
		dyn_exceeded = 1;
	if ((status = smem_per_block(&limit_per_cta, p, f->shmemLimitConfig, max_usage)) != CM_OCC_SUCCESS)
		return status;
	if (allocated > limit_per_cta)
		total_exceeded = 1;
	if (dyn_exceeded || total_exceeded) {
		max_blocks = 0;
	} else {
		if (user_pref >= allocated) {
			per_sm = user_pref;
		} else if (p->computeMajor >= 7) {
			per_sm = allocated;
			if ((status = align_up_shmem_size_volta_plus(&per_sm, p)) != CM_OCC_SUCCESS)
				return status;
		} else {
			per_sm = p->sharedMemPerMultiprocessor;
		}
		max_blocks = allocated > 0 ? (int)(per_sm / allocated) : INT_MAX;
	}
	result->allocatedSharedMemPerBlock = allocated;
	*limit = max_blocks;
	return CM_OCC_SUCCESS;
}

static int regs_limit(int *limit, int *gc, cm_occ_result *result, const cm_occ_props *p, const cm_occ_func *f,
		      int block_size)
{
	int granularity, max_regs, sub, status, warps_per_cta, regs_per_warp, per_warp, per_cta, assumed,
		max_blocks;
	if ((status = reg_allocation_granularity(&granularity, p)) != CM_OCC_SUCCESS ||
	    (status = reg_allocation_max_per_thread(&max_regs, p)) != CM_OCC_SUCCESS ||
	    (status = sub_partitions_per_multiprocessor(&sub, p)) != CM_OCC_SUCCESS)
		return status;
	warps_per_cta = occ_divide_round_up(block_size, p->warpSize);
	regs_per_warp = wmul(f->numRegs, p->warpSize);
	per_warp = occ_round_up(regs_per_warp, granularity);
	per_cta = wmul(per_warp, warps_per_cta);
	/* the hardware check assumes warps are placed on every sub-partition */
	assumed = wmul(per_warp, occ_round_up(warps_per_cta, sub));
	if (p->regsPerBlock < assumed || p->regsPerBlock < per_cta || f->numRegs > max_regs) {
		max_blocks = 0;
	} else if (per_warp > 0) {
		int warps_per_sub = p->regsPerMultiprocessor / sub / per_warp;
		max_blocks = 0;
		if (*gc != CM_OCC_GC_OFF) /* half an SM: half its sub-partitions */
			max_blocks = wmul(wmul(warps_per_sub, sub / 2) / warps_per_cta, 2);
		if (max_blocks == 0 && *gc != CM_OCC_GC_ON_STRICT) {
			*gc = CM_OCC_GC_OFF;
			max_blocks = wmul(warps_per_sub, sub) / warps_per_cta;
		}
	} else {
		max_blocks = INT_MAX;
	}
	result->allocatedRegistersPerBlock = per_cta;
	*limit = max_blocks;
	return CM_OCC_SUCCESS;
}

static int barrier_limit(int *limit, int cta_limit_blocks, const cm_occ_props *p, const cm_occ_func *f)
{
	int available, used = f->numBlockBarriers;
	switch (p->computeMajor) {
	case 5: case 6: case 7: case 9: available = wmul(cta_limit_blocks, 2); break;
	case 8: available = p->computeMinor == 0 ? wmul(cta_limit_blocks, 2) : cta_limit_blocks; break;
	case 10: available = p->computeMinor == 1 ? cta_limit_blocks : wmul(cta_limit_blocks, 2); break;
	case 11: available = p->computeMinor == 0 ? cta_limit_blocks : wmul(cta_limit_blocks, 2); break;
	case 12: available = cta_limit_blocks; break;
	default: return CM_OCC_ERROR_UNKNOWN_DEVICE;
	}
	*limit = used ? available / used : INT_MAX;
	return CM_OCC_SUCCESS;
}

static int virtual_resource_limit(const cm_occ_props *p, const cm_occ_func *f)
{
	int per_sm = max_virtual_resource_count_per_sm(p);
	if (per_sm <= 0 || f->virtualResourceCount <= 0)
		return INT_MAX;
	return per_sm / f->virtualResourceCount;
}

/* ---------------------------------------------------------------- the API */

int cm_occ_max_active_blocks(cm_occ_result *result, const cm_occ_props *props, const cm_occ_func *func,
			     const cm_occ_state *state, int block_size, size_t dyn_smem)
{
	int status, lim_warps = 0, lim_blocks = 0, lim_smem = 0, lim_regs = 0, lim_bars, lim_virtual, lim, gc;
	unsigned factors = 0;
	if (!result || !props || !func || !state || block_size <= 0)
		return CM_OCC_ERROR_INVALID_INPUT;
	if ((status = input_check(props, func)) != CM_OCC_SUCCESS)
		return status;
	gc = partitioned_gc_supported(props) ? func->partitionedGCConfig : CM_OCC_GC_OFF;
	if ((status = regs_limit(&lim_regs, &gc, result, props, func, block_size)) != CM_OCC_SUCCESS)
		return status;
	/* GP100 (6.0) has 2 sub-partitions, GP10x 4: what cannot run on GP10x
	 * is taken not to run on any Pascal */
	if (props->computeMajor == 6 && props->computeMinor == 0 && lim_regs) {
		cm_occ_props gp10x;
		int gc10x = gc, lim10x = 0;
		memcpy(&gp10x, props, sizeof gp10x);
		gp10x.computeMinor = 1;
		if ((status = regs_limit(&lim10x, &gc10x, result, &gp10x, func, block_size)) != CM_OCC_SUCCESS)
			return status;
		if (lim10x == 0)
			lim_regs = 0;
	}
	warps_limit(&lim_warps, gc, props, block_size);
	if ((status = max_blocks_per_multiprocessor(&lim_blocks, props)) != CM_OCC_SUCCESS)
		return status;
	if ((status = smem_limit(&lim_smem, result, props, func, state, dyn_smem)) != CM_OCC_SUCCESS)
		return status;
	lim_virtual = virtual_resource_limit(props, func);

	lim = occ_min(lim_regs, occ_min(lim_smem, occ_min(lim_warps, occ_min(lim_blocks, lim_virtual))));
	if (lim == lim_warps)
		factors |= 0x01;
	if (lim == lim_regs)
		factors |= 0x02;
	if (lim == lim_smem)
		factors |= 0x04;
	if (lim == lim_blocks)
		factors |= 0x08;
	if (lim == lim_virtual)
		factors |= 0x20;
	/* from Hopper on, block barriers limit too */
	if (props->computeMajor >= 9 && func->numBlockBarriers > 0) {
		if ((status = barrier_limit(&lim_bars, lim_blocks, props, func)) != CM_OCC_SUCCESS)
			return status;
		lim = occ_min(lim_bars, lim);
		if (lim == lim_bars)
			factors |= 0x10;
	} else {
		lim_bars = INT_MAX;
	}
	result->limitingFactors = factors;
	result->blockLimitRegs = lim_regs;
	result->blockLimitSharedMem = lim_smem;
	result->blockLimitWarps = lim_warps;
	result->blockLimitBlocks = lim_blocks;
	result->blockLimitBarriers = lim_bars;
	result->blockLimitVirtual = lim_virtual;
	result->partitionedGCConfig = gc;
	result->activeBlocksPerMultiprocessor = lim;
	return CM_OCC_SUCCESS;
}
