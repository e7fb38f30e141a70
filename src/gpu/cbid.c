/* cbid.c - cbid -> name lookup and the keep/flow rules of the reference merge. */
#include "config.h"
#include "gpu/cbid.h"

#include <string.h>

const char *cm_cbid_name(int driver, int64_t cbid)
{
	const struct cm_cbid_name *t = driver ? cm_cbid_driver : cm_cbid_runtime;
	size_t lo = 0, hi = driver ? cm_cbid_driver_count : cm_cbid_runtime_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t[mid].cbid < cbid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < (driver ? cm_cbid_driver_count : cm_cbid_runtime_count) && t[lo].cbid == cbid
		       ? t[lo].name
		       : NULL;
}

/* 1 when NAME is one of the NULL-terminated LIST. */
static int in_list(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return 1;
	return 0;
}

/* Runtime calls so frequent and uninteresting that the monitor drops them. */
static const char *const runtime_blocklist[] = {
	"cudaGetDevice", "cudaSetDevice", "cudaGetLastError", "cudaEventCreate",
	"cudaEventCreateWithFlags", "cudaEventDestroy", NULL};

/* Runtime calls whose GPU side is drawn with a flow arrow (plus every
 * cudaMemcpy* and cudaMemset*). */
static const char *const runtime_flow[] = {
	"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernelMultiDevice",
	"cudaLaunchKernelExC", "cudaGraphLaunch", "cudaStreamSynchronize", "cudaDeviceSynchronize",
	"cudaStreamWaitEvent", NULL};

/* The only driver calls the monitor keeps. */
static const char *const driver_registered[] = {
	"cuLaunchKernel", "cuLaunchKernelEx", "cuMemCreate", "cuMemMap", "cuMemUnmap", "cuMemRelease",
	"cuMemExportToShareableHandle", "cuMemImportFromShareableHandle", NULL};

static const char *const driver_flow[] = {"cuLaunchKernel", "cuLaunchKernelEx", NULL};

int cm_cbid_is_registered(int driver, const char *name)
{
	return driver ? in_list(name, driver_registered) : !in_list(name, runtime_blocklist);
}

int cm_cbid_requires_flow(int driver, const char *name)
{
	if (driver)
		return in_list(name, driver_flow);
	return in_list(name, runtime_flow) || !strncmp(name, "cudaMemcpy", 10) ||
	       !strncmp(name, "cudaMemset", 10);
}
