/* devquery.c - the window's device properties, read through the libcuda the
 * process has loaded.  Apart from devprops.c, which holds the table and the
 * JSON and is tested without CUDA, because this part needs cuda.h (to check
 * the table) and the running driver.
 */
/* RTLD_NOLOAD */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dlfcn.h>
#include <stdlib.h>

#include <cupti.h>

#include "collector.h"
#include "devprops.h"
#include "encode.h"
#include "jbuf.h"

/* ---- device properties ------------------------------------------------------ */

/* The driver functions devprops.h declares with plain ints. */
_Static_assert(sizeof(CUdevice) == sizeof(int), "CUdevice is not an int");
_Static_assert(sizeof(CUresult) == sizeof(int), "CUresult is not int-sized");
_Static_assert(sizeof(CUdevice_attribute) == sizeof(int), "CUdevice_attribute is not int-sized");

/* Check crec_devattrs against cuda.h once (a table cannot be checked at
 * compile time in C).  Returns 0, or -1 with a warning: a wrong number would
 * write one property under another's name. */
static int crec_devattrs_check(void)
{
	static const int want[CREC_DA_N] = {
		[CREC_DA_COMPUTE_MAJOR] = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
		[CREC_DA_COMPUTE_MINOR] = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
		[CREC_DA_MAX_THREADS_PER_BLOCK] = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
		[CREC_DA_MAX_THREADS_PER_MP] = CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
		[CREC_DA_REGS_PER_BLOCK] = CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
		[CREC_DA_WARP_SIZE] = CU_DEVICE_ATTRIBUTE_WARP_SIZE,
		[CREC_DA_SHARED_MEM_PER_BLOCK] = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
		[CREC_DA_NUM_SMS] = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		[CREC_DA_REGS_PER_MP] = CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
		[CREC_DA_SHARED_MEM_PER_BLOCK_OPTIN] = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
		[CREC_DA_SHARED_MEM_PER_MP] = CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
		[CREC_DA_RESERVED_SHARED_MEM_PER_BLOCK] = CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
		[CREC_DA_MAX_BLOCKS_PER_MP] = CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
	};
	int i;

	for (i = 0; i < CREC_DA_N; i++)
		if (crec_devattrs[i].cu_attribute != want[i]) {
			crec_warn("internal error: device attribute %s is %d, cuda.h says %d; "
				  "no device properties written", crec_devattrs[i].key,
				  crec_devattrs[i].cu_attribute, want[i]);
			return -1;
		}
	return 0;
}

/* Each device's properties, read once per process (they do not change).
 * Used by whoever ends a window, under G.ctl. */
static struct {
	int state;                    /* 0: not set up; 1: usable; -1: no driver */
	crec_cudrv drv;
	signed char read[CREC_MAX_DEVICES]; /* 0 not yet, 1 read, -1 failed */
	crec_devprops *p;             /* CREC_MAX_DEVICES of them */
} crec_dev;

/* Find the driver's functions in the libcuda the process has loaded (the
 * collector must not link it) and allocate the cache.  Returns 0 or -1. */
static int crec_dev_setup(void)
{
	void *h;

	if (crec_dev.state)
		return crec_dev.state > 0 ? 0 : -1;
	crec_dev.state = -1;
	if (crec_devattrs_check() != 0)
		return -1;
	h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		crec_note("cannot find libcuda.so.1; the window has no device properties");
		return -1;
	}
	crec_dev.drv.device_get = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
	crec_dev.drv.get_attribute = (int (*)(int *, int, int))dlsym(h, "cuDeviceGetAttribute");
	crec_dev.drv.get_name = (int (*)(char *, int, int))dlsym(h, "cuDeviceGetName");
	/* cuda.h maps cuDeviceTotalMem to the _v2 entry point (size_t bytes) */
	crec_dev.drv.total_mem = (int (*)(size_t *, int))dlsym(h, "cuDeviceTotalMem_v2");
	crec_dev.p = calloc(CREC_MAX_DEVICES, sizeof *crec_dev.p);
	if (!crec_dev.drv.device_get || !crec_dev.drv.get_attribute || !crec_dev.drv.get_name ||
	    !crec_dev.drv.total_mem || !crec_dev.p) {
		crec_note("cannot use libcuda's device queries; the window has no device properties");
		free(crec_dev.p);
		crec_dev.p = NULL;
		return -1;
	}
	crec_dev.state = 1;
	return 0;
}

size_t crec_device_properties(const crec_enc *enc, crec_jbuf *b)
{
	const crec_devprops *list[CREC_MAX_DEVICES];
	uint32_t d;
	size_t n = 0;

	for (d = 0; d < CREC_MAX_DEVICES; d++) {
		if (!(enc->devices[d / 64] & (1ull << (d % 64))))
			continue;
		if (crec_dev_setup() != 0)
			return 0;
		if (!crec_dev.read[d]) {
			crec_dev.read[d] = crec_devprops_read(&crec_dev.drv, d, &crec_dev.p[d]) == 0 ? 1 : -1;
			if (crec_dev.read[d] < 0)
				crec_note("cannot read the properties of device %u; the window has none for it",
					  (unsigned)d);
		}
		if (crec_dev.read[d] > 0)
			list[n++] = &crec_dev.p[d];
	}
	if (n)
		crec_devprops_json(b, list, n);
	return n;
}
