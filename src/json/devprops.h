/* devprops.h - Kineto's "deviceProperties" (the CPU trace's) and
 * "device_properties" (the window's) read from JSON into a table of devices:
 * the properties CUDA's occupancy calculator takes (gpu/occupancy.h).  Both
 * the CPU scan and the GPU stage read them, so the reader sits in json/,
 * below both. */
#ifndef CM_DEVPROPS_H
#define CM_DEVPROPS_H

#include <stddef.h>
#include <stdint.h>
#include "json/jval.h"

/* cudaOccDeviceProp */
typedef struct cm_occ_props {
	int computeMajor, computeMinor;
	int maxThreadsPerBlock, maxThreadsPerMultiprocessor;
	int regsPerBlock, regsPerMultiprocessor;
	int warpSize;
	size_t sharedMemPerBlock, sharedMemPerMultiprocessor;
	int numSms;
	size_t sharedMemPerBlockOptin, reservedSharedMemPerBlock;
} cm_occ_props;

/* One device's properties, as Kineto's "deviceProperties" lists them (with
 * the two the calculator needs that Kineto does not write). */
typedef struct cm_kin_props {
	int64_t id;        /* the device id the kernels carry */
	cm_occ_props occ;  /* numSms, maxThreadsPerMultiprocessor, ... */
} cm_kin_props;

/* A table of devices. */
typedef struct cm_kin_devices {
	cm_kin_props *v;
	size_t n;
} cm_kin_devices;

/* Read a "deviceProperties" (CPU trace) or "device_properties" (window)
 * value into D (emptied first): one entry per object of the array V, with
 * its "id" (else its index in the array, as Kineto numbers them) and each
 * property as Python's int() reads it (missing or not a number: 0).
 * "reservedSharedMemPerBlock", which Kineto does not write, defaults to
 * 1024 from compute capability 8.0 on (what every such device reports) and
 * to 0 before.  Returns 1 when V is a non-empty array, else 0 (D empty). */
int cm_kin_devices_read(cm_kin_devices *d, const cm_jval *v);
/* The entry for device ID (the first with that id), or NULL. */
const cm_kin_props *cm_kin_devices_find(const cm_kin_devices *d, int64_t id);
void cm_kin_devices_free(cm_kin_devices *d);

#endif
