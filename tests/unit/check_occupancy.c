/* check_occupancy.c - the occupancy calculator port (gpu/occupancy.c) against CUDA's cuda_occupancy.h.
 *
 * Where configure found the header (HAVE_CUDA_OCCUPANCY_H), both are run on
 * the same inputs: every register count 0..256 with many block sizes and
 * shared memory sizes, in the configuration Kineto uses, for the devices of
 * compute capability 3.5 to 12.0 (the 7.0-10.0 ones Kineto meets most), and
 * then many pseudo-random inputs that vary every field (cache and carveout
 * preferences, partitioned caching, the opt-in limit, barriers, virtual
 * resources, unknown devices).  The status must agree and, on success, the
 * whole result.  Without the header the program skips (exit 77). */
#include "config.h"
#include "check_common.h"
#include "gpu/occupancy.h"

#ifdef HAVE_CUDA_OCCUPANCY_H
#include <limits.h>
#include <stdint.h>
#include <cuda_occupancy.h>

/* Real devices' properties (cudaGetDeviceProperties), by compute capability. */
static const cm_occ_props devices[] = {
	/* major minor maxThr/blk maxThr/SM regs/blk regs/SM warp smem/blk smem/SM SMs optin reserved */
	{3, 5, 1024, 2048, 65536, 65536, 32, 49152, 49152, 15, 49152, 0},       /* K40 */
	{5, 2, 1024, 2048, 65536, 65536, 32, 49152, 98304, 24, 49152, 0},       /* M40 */
	{6, 0, 1024, 2048, 65536, 65536, 32, 49152, 65536, 56, 49152, 0},       /* P100 */
	{6, 1, 1024, 2048, 65536, 65536, 32, 49152, 98304, 30, 49152, 0},       /* P40 */
	{7, 0, 1024, 2048, 65536, 65536, 32, 49152, 98304, 80, 98304, 0},       /* V100 */
	{7, 5, 1024, 1024, 65536, 65536, 32, 49152, 65536, 40, 65536, 0},       /* T4 */
	{8, 0, 1024, 2048, 65536, 65536, 32, 49152, 167936, 108, 166912, 1024}, /* A100 */
	{8, 6, 1024, 1536, 65536, 65536, 32, 49152, 102400, 82, 101376, 1024},  /* RTX 3090 */
	{8, 7, 1024, 1536, 65536, 65536, 32, 49152, 167936, 16, 166912, 1024},  /* Orin */
	{8, 9, 1024, 1536, 65536, 65536, 32, 49152, 102400, 142, 101376, 1024}, /* L40 */
	{9, 0, 1024, 2048, 65536, 65536, 32, 49152, 233472, 132, 232448, 1024}, /* H100, H200 */
	{10, 0, 1024, 2048, 65536, 65536, 32, 49152, 233472, 148, 232448, 1024}, /* B200 */
	{10, 3, 1024, 2048, 65536, 65536, 32, 49152, 233472, 148, 232448, 1024}, /* B300 */
	{12, 0, 1024, 1536, 65536, 65536, 32, 49152, 102400, 170, 101376, 1024}, /* RTX 5090 */
};
#define NDEV ((int)(sizeof devices / sizeof devices[0]))

static const int block_sizes[] = {1, 31, 32, 33, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1025, 2048};
static const size_t smem_sizes[] = {0, 1, 100, 1024, 4096, 6528, 12672, 32768, 49152, 65536, 98304, 102400,
				    166912, 200000, 232448, 233472, 300000};

/* Run both on the same inputs; fail with a description on a difference. */
static void compare(const cm_occ_props *p, const cm_occ_func *f, const cm_occ_state *s, int block, size_t dyn)
{
	cudaOccDeviceProp hp;
	cudaOccFuncAttributes hf;
	cudaOccDeviceState hs;
	cudaOccResult hr;
	cm_occ_result r;
	int hst, st;
	memset(&hp, 0, sizeof hp);
	memset(&hf, 0, sizeof hf);
	memset(&hs, 0, sizeof hs);
	memset(&hr, 0, sizeof hr);
	memset(&r, 0, sizeof r);
	hp.computeMajor = p->computeMajor;
	hp.computeMinor = p->computeMinor;
	hp.maxThreadsPerBlock = p->maxThreadsPerBlock;
	hp.maxThreadsPerMultiprocessor = p->maxThreadsPerMultiprocessor;
	hp.regsPerBlock = p->regsPerBlock;
	hp.regsPerMultiprocessor = p->regsPerMultiprocessor;
	hp.warpSize = p->warpSize;
	hp.sharedMemPerBlock = p->sharedMemPerBlock;
	hp.sharedMemPerMultiprocessor = p->sharedMemPerMultiprocessor;
	hp.numSms = p->numSms;
	hp.sharedMemPerBlockOptin = p->sharedMemPerBlockOptin;
	hp.reservedSharedMemPerBlock = p->reservedSharedMemPerBlock;
	hf.maxThreadsPerBlock = f->maxThreadsPerBlock;
	hf.numRegs = f->numRegs;
	hf.sharedSizeBytes = f->sharedSizeBytes;
	hf.partitionedGCConfig = (cudaOccPartitionedGCConfig)f->partitionedGCConfig;
	hf.shmemLimitConfig = (cudaOccFuncShmemConfig)f->shmemLimitConfig;
	hf.maxDynamicSharedSizeBytes = f->maxDynamicSharedSizeBytes;
	hf.numBlockBarriers = f->numBlockBarriers;
	hf.virtualResourceCount = f->virtualResourceCount;
	hs.cacheConfig = (cudaOccCacheConfig)s->cacheConfig;
	hs.carveoutConfig = s->carveoutConfig;
	hst = cudaOccMaxActiveBlocksPerMultiprocessor(&hr, &hp, &hf, &hs, block, dyn);
	st = cm_occ_max_active_blocks(&r, p, f, s, block, dyn);
	if (st == hst && (st != CM_OCC_SUCCESS ||
			  (r.activeBlocksPerMultiprocessor == hr.activeBlocksPerMultiprocessor &&
			   r.limitingFactors == hr.limitingFactors && r.blockLimitRegs == hr.blockLimitRegs &&
			   r.blockLimitSharedMem == hr.blockLimitSharedMem && r.blockLimitWarps == hr.blockLimitWarps &&
			   r.blockLimitBlocks == hr.blockLimitBlocks && r.blockLimitBarriers == hr.blockLimitBarriers &&
			   r.blockLimitVirtual == hr.blockLimitVirtual &&
			   r.allocatedRegistersPerBlock == hr.allocatedRegistersPerBlock &&
			   r.allocatedSharedMemPerBlock == hr.allocatedSharedMemPerBlock &&
			   r.partitionedGCConfig == (int)hr.partitionedGCConfig)))
		return;
	ck_abort_msg("cc %d.%d regs %d static %zu dyn %zu block %d gc %d limit %d maxdyn %zu barriers %d virtual %d "
		     "cache %d carveout %d: header %d (active %d, factors %#x, regs %d, smem %d, warps %d, allocated "
		     "%d/%zu), port %d (active %d, factors %#x, regs %d, smem %d, warps %d, allocated %d/%zu)",
		     p->computeMajor, p->computeMinor, f->numRegs, f->sharedSizeBytes, dyn, block,
		     f->partitionedGCConfig, f->shmemLimitConfig, f->maxDynamicSharedSizeBytes, f->numBlockBarriers,
		     f->virtualResourceCount, s->cacheConfig, s->carveoutConfig, hst, hr.activeBlocksPerMultiprocessor,
		     hr.limitingFactors, hr.blockLimitRegs, hr.blockLimitSharedMem, hr.blockLimitWarps,
		     hr.allocatedRegistersPerBlock, hr.allocatedSharedMemPerBlock, st, r.activeBlocksPerMultiprocessor,
		     r.limitingFactors, r.blockLimitRegs, r.blockLimitSharedMem, r.blockLimitWarps,
		     r.allocatedRegistersPerBlock, r.allocatedSharedMemPerBlock);
}

/* Kineto's call (gpu/kineto.c): no thread limit, the defaults otherwise;
 * every register count, block size, static and dynamic size on device _i. */
START_TEST(kineto_configuration)
{
	cm_occ_func f = {0};
	cm_occ_state s = {CM_OCC_CACHE_NONE, CM_OCC_CARVEOUT_DEFAULT};
	static const size_t dyn[] = {0, 1000, 65536};
	f.maxThreadsPerBlock = INT_MAX;
	for (int regs = 0; regs <= 256; regs++)
		for (size_t b = 0; b < sizeof block_sizes / sizeof block_sizes[0]; b++)
			for (size_t m = 0; m < sizeof smem_sizes / sizeof smem_sizes[0]; m++)
				for (size_t d = 0; d < sizeof dyn / sizeof dyn[0]; d++) {
					f.numRegs = regs;
					f.sharedSizeBytes = smem_sizes[m];
					compare(&devices[_i], &f, &s, block_sizes[b], dyn[d]);
				}
}
END_TEST

/* A small deterministic generator (xorshift64*). */
static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}
#define PICK(a) ((a)[next() % (sizeof(a) / sizeof((a)[0]))])

/* Every field varied, on real devices, on devices with odd minors and
 * limits, and on unknown ones. */
START_TEST(random_inputs)
{
	static const int majors[] = {2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13};
	static const int minors[] = {0, 1, 2, 3, 5, 6, 7, 9};
	static const int carveouts[] = {-2, -1, 0, 25, 50, 75, 100, 101};
	static const int thread_limits[] = {INT_MAX, 1024, 256, 64, 0};
	for (int n = 0; n < 300000; n++) {
		cm_occ_props p = devices[next() % NDEV];
		cm_occ_func f = {0};
		cm_occ_state s;
		if (next() % 4 == 0) {
			p.computeMajor = PICK(majors);
			p.computeMinor = PICK(minors);
		}
		if (next() % 8 == 0)
			p.sharedMemPerMultiprocessor = PICK(smem_sizes);
		if (next() % 16 == 0)
			p.numSms = (int)(next() % 3);
		f.maxThreadsPerBlock = PICK(thread_limits);
		f.numRegs = (int)(next() % 300) - (next() % 50 == 0);
		f.sharedSizeBytes = PICK(smem_sizes);
		f.partitionedGCConfig = (int)(next() % 3);
		f.shmemLimitConfig = (int)(next() % 2);
		f.maxDynamicSharedSizeBytes = PICK(smem_sizes);
		f.numBlockBarriers = (int)(next() % 4);
		f.virtualResourceCount = (int)(next() % 5) * (next() % 2);
		s.cacheConfig = (int)(next() % 4);
		s.carveoutConfig = PICK(carveouts);
		compare(&p, &f, &s, (int)(next() % 1100), PICK(smem_sizes));
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("occupancy");
	TCase *tc = tcase_create("against cuda_occupancy.h");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, kineto_configuration, 0, NDEV);
	tcase_add_test(tc, random_inputs);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)

#else /* no cuda_occupancy.h here */

int main(void)
{
	puts("check_occupancy: SKIP: cuda_occupancy.h was not found (./configure --with-cuda=DIR)");
	return 77;
}

#endif
