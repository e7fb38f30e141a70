/* devprops.h - the window's "device_properties": what Kineto writes under
 * "deviceProperties" for each device, read through the CUDA driver API. */
#ifndef CREC_DEVPROPS_H
#define CREC_DEVPROPS_H

#include <stddef.h>
#include <stdint.h>
#include "jbuf.h"

/* The driver functions the properties are read with: cuDeviceGet,
 * cuDeviceGetAttribute, cuDeviceGetName and cuDeviceTotalMem_v2, as the
 * collector finds them in libcuda at run time (it must not link the driver:
 * the library is also loaded into processes that never use CUDA), or fakes in
 * the tests.  CUresult, CUdevice and CUdevice_attribute are int-sized enums
 * and an int, so these prototypes are the driver's.  Each returns 0
 * (CUDA_SUCCESS) or an error code. */
typedef struct crec_cudrv {
	int (*device_get)(int *dev, int ordinal);
	int (*get_attribute)(int *value, int attribute, int dev);
	int (*get_name)(char *name, int len, int dev);
	int (*total_mem)(size_t *bytes, int dev);
} crec_cudrv;

/* The attributes, in the order of the JSON keys after "id", "name" and
 * "totalGlobalMem": Kineto's deviceProperties (the values of cudaDeviceProp,
 * which cudaGetDeviceProperties reads from these attributes), then the two
 * the occupancy calculator needs that Kineto does not write. */
enum crec_devattr {
	CREC_DA_COMPUTE_MAJOR, CREC_DA_COMPUTE_MINOR, CREC_DA_MAX_THREADS_PER_BLOCK,
	CREC_DA_MAX_THREADS_PER_MP, CREC_DA_REGS_PER_BLOCK, CREC_DA_WARP_SIZE,
	CREC_DA_SHARED_MEM_PER_BLOCK, CREC_DA_NUM_SMS, CREC_DA_REGS_PER_MP,
	CREC_DA_SHARED_MEM_PER_BLOCK_OPTIN, CREC_DA_SHARED_MEM_PER_MP,
	CREC_DA_RESERVED_SHARED_MEM_PER_BLOCK, CREC_DA_MAX_BLOCKS_PER_MP,
	CREC_DA_N
};

/* The CU_DEVICE_ATTRIBUTE_* number of each (CUDA's ABI; devquery.c checks
 * them against cuda.h once, at run time) and its JSON key. */
extern const struct crec_devattr_def {
	int cu_attribute;
	const char *key;
} crec_devattrs[CREC_DA_N];

/* One device's properties. */
typedef struct crec_devprops {
	uint32_t id;            /* the device ordinal, CUPTI's deviceId */
	char name[256];
	uint64_t total_global_mem;
	int attr[CREC_DA_N];
} crec_devprops;

/* Read the properties of device ORDINAL through DRV into *OUT.  Returns 0, or
 * -1 when any call failed (*OUT is then incomplete and must not be written;
 * Kineto too writes no properties it could not read). */
int crec_devprops_read(const crec_cudrv *drv, uint32_t ordinal, crec_devprops *out);

/* Append the JSON array of the N devices *P[0..n), one object each with
 * Kineto's keys in Kineto's order: [{"id": 0, "name": "NVIDIA H200",
 * "totalGlobalMem": 150109880320, "computeMajor": 9, ...}]. */
void crec_devprops_json(crec_jbuf *b, const crec_devprops *const *p, size_t n);

#endif
