/* gpusplitout_int.h - a group of --split made cm_gpu's own (gpusplitout.c),
 * for gpugroups.c's views and gpusplitdeal.c's fold.  Internal to src/gpu. */
#ifndef CM_GPUSPLITOUT_INT_H
#define CM_GPUSPLITOUT_INT_H

#include "gpu/gpusplit_int.h"

/* Exchange group GR's store and plan with those of G (a cm_gpu or a view
 * of it): twice puts all back. */
void gpu_split_swap(cm_gpu *g, struct gpu_group *gr);

#endif
