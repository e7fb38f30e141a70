/* occupancy.h - CUDA's occupancy calculator, the one function Kineto calls.
 *
 * A port of cudaOccMaxActiveBlocksPerMultiprocessor from cuda_occupancy.h
 * (CUDA 13.0, the header torch 2.11's Kineto was built against), so that
 * the merge computes "est. achieved occupancy %" as Kineto does on a machine
 * without the CUDA toolkit.  The structures mirror the header's field for
 * field (tests/unit/check_occupancy.c fills both from the same values and
 * compares the results where the header is installed). */
#ifndef CM_OCCUPANCY_H
#define CM_OCCUPANCY_H

#include <stddef.h>
#include "json/devprops.h" /* cm_occ_props, cudaOccDeviceProp */

/* cudaOccPartitionedGCConfig, cudaOccFuncShmemConfig, cudaOccCacheConfig */
enum { CM_OCC_GC_OFF, CM_OCC_GC_ON, CM_OCC_GC_ON_STRICT };
enum { CM_OCC_SHMEM_LIMIT_DEFAULT, CM_OCC_SHMEM_LIMIT_OPTIN };
enum { CM_OCC_CACHE_NONE, CM_OCC_CACHE_SHARED, CM_OCC_CACHE_L1, CM_OCC_CACHE_EQUAL };
#define CM_OCC_CARVEOUT_DEFAULT (-1)

/* cudaOccFuncAttributes */
typedef struct cm_occ_func {
	int maxThreadsPerBlock, numRegs;
	size_t sharedSizeBytes;
	int partitionedGCConfig, shmemLimitConfig;
	size_t maxDynamicSharedSizeBytes;
	int numBlockBarriers, virtualResourceCount;
} cm_occ_func;

/* cudaOccDeviceState */
typedef struct cm_occ_state {
	int cacheConfig, carveoutConfig;
} cm_occ_state;

/* cudaOccResult */
typedef struct cm_occ_result {
	int activeBlocksPerMultiprocessor;
	unsigned limitingFactors;
	int blockLimitRegs, blockLimitSharedMem, blockLimitWarps, blockLimitBlocks, blockLimitBarriers,
		blockLimitVirtual, allocatedRegistersPerBlock;
	size_t allocatedSharedMemPerBlock;
	int partitionedGCConfig;
} cm_occ_result;

/* cudaOccError: 0 success, 1 invalid input, 2 unknown device. */
enum { CM_OCC_SUCCESS = 0, CM_OCC_ERROR_INVALID_INPUT = 1, CM_OCC_ERROR_UNKNOWN_DEVICE = 2 };

/* cudaOccMaxActiveBlocksPerMultiprocessor: how many blocks of BLOCK_SIZE
 * threads of the function FUNC, each with DYN_SMEM bytes of dynamic shared
 * memory, fit on one SM of the device PROPS in state STATE.  Fills RESULT
 * as the header does (on an error, the fields it had set by then) and
 * returns its status.  Integer arithmetic wraps where the header's int
 * would overflow (as the header compiled by gcc does). */
int cm_occ_max_active_blocks(cm_occ_result *result, const cm_occ_props *props, const cm_occ_func *func,
			     const cm_occ_state *state, int block_size, size_t dyn_smem);

#endif
