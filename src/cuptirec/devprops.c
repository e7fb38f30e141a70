/* devprops.c - device properties under Kineto's names, for the occupancy and
 * per-SM figures the merge derives from a kernel's launch. */
#include "devprops.h"

#include <string.h>

/* Numbers from CUDA 13.0's cuda.h (enum CUdevice_attribute). */
const struct crec_devattr_def crec_devattrs[CREC_DA_N] = {
	[CREC_DA_COMPUTE_MAJOR] = { 75, "computeMajor" },
	[CREC_DA_COMPUTE_MINOR] = { 76, "computeMinor" },
	[CREC_DA_MAX_THREADS_PER_BLOCK] = { 1, "maxThreadsPerBlock" },
	[CREC_DA_MAX_THREADS_PER_MP] = { 39, "maxThreadsPerMultiprocessor" },
	[CREC_DA_REGS_PER_BLOCK] = { 12, "regsPerBlock" },
	[CREC_DA_WARP_SIZE] = { 10, "warpSize" },
	[CREC_DA_SHARED_MEM_PER_BLOCK] = { 8, "sharedMemPerBlock" },
	[CREC_DA_NUM_SMS] = { 16, "numSms" },
	[CREC_DA_REGS_PER_MP] = { 82, "regsPerMultiprocessor" },
	[CREC_DA_SHARED_MEM_PER_BLOCK_OPTIN] = { 97, "sharedMemPerBlockOptin" },
	[CREC_DA_SHARED_MEM_PER_MP] = { 81, "sharedMemPerMultiprocessor" },
	[CREC_DA_RESERVED_SHARED_MEM_PER_BLOCK] = { 111, "reservedSharedMemPerBlock" },
	[CREC_DA_MAX_BLOCKS_PER_MP] = { 106, "maxBlocksPerMultiProcessor" },
};

int crec_devprops_read(const crec_cudrv *drv, uint32_t ordinal, crec_devprops *out)
{
	size_t mem = 0;
	int dev = 0, i;

	memset(out, 0, sizeof *out);
	out->id = ordinal;
	if (ordinal > INT32_MAX || drv->device_get(&dev, (int)ordinal) != 0)
		return -1;
	if (drv->get_name(out->name, (int)sizeof out->name - 1, dev) != 0)
		return -1;
	out->name[sizeof out->name - 1] = '\0';
	if (drv->total_mem(&mem, dev) != 0)
		return -1;
	out->total_global_mem = mem;
	for (i = 0; i < CREC_DA_N; i++)
		if (drv->get_attribute(&out->attr[i], crec_devattrs[i].cu_attribute, dev) != 0)
			return -1;
	return 0;
}

void crec_devprops_json(crec_jbuf *b, const crec_devprops *const *p, size_t n)
{
	size_t d;
	int i;

	crec_jbuf_lit(b, "[");
	for (d = 0; d < n; d++) {
		if (d)
			crec_jbuf_lit(b, ",\n ");
		crec_jbuf_lit(b, "{\"id\": ");
		crec_jbuf_u64(b, p[d]->id);
		crec_jbuf_lit(b, ", \"name\": ");
		crec_jbuf_str(b, p[d]->name, strlen(p[d]->name));
		crec_jbuf_lit(b, ", \"totalGlobalMem\": ");
		crec_jbuf_u64(b, p[d]->total_global_mem);
		for (i = 0; i < CREC_DA_N; i++) {
			crec_jbuf_lit(b, ", \"");
			crec_jbuf_puts(b, crec_devattrs[i].key);
			crec_jbuf_lit(b, "\": ");
			crec_jbuf_i64(b, p[d]->attr[i]);
		}
		crec_jbuf_lit(b, "}");
	}
	crec_jbuf_lit(b, "]");
}
