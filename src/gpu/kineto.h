/* kineto.h - the args Kineto adds to GPU events, by its formulas and in its
 * number formats, for window events that carry what they need: kernel launch
 * configuration and occupancy, copy bandwidth, synchronization events.
 *
 * The formulas are those of the Kineto in torch 2.11 (libkineto
 * CuptiActivity.cpp and DeviceProperties.cpp as of February 2026), the
 * version whose traces the merge is compared with: C float arithmetic on
 * CUPTI's field types, printed by std::to_string. */
#ifndef CM_KINETO_H
#define CM_KINETO_H

#include <stddef.h>
#include <stdint.h>
#include "gpu/occupancy.h"
#include "json/devprops.h"
#include "json/jval.h"

/* A kernel's launch, in CUPTI's field types (CUpti_ActivityKernel: int32
 * grid, block and shared memory, uint16 registers): the window's integers
 * are taken modulo 2^32 (2^16) as the collector's fields were. */
typedef struct cm_kin_launch {
	int32_t grid[3], block[3];
	uint16_t regs;
	int32_t static_smem, dynamic_smem;
} cm_kin_launch;

/* Kineto's blocksPerSm: the grid's blocks (an int32 product) over the SM
 * count as floats; SMS 0 (no properties) makes it infinite. */
float cm_kin_blocks_per_sm(const cm_kin_launch *k, int sms);
/* Kineto's warpsPerSm: blocksPerSm times the block's threads (int32) over 32
 * (Kineto's constant, not the device's warp size), in floats. */
float cm_kin_warps_per_sm(const cm_kin_launch *k, int sms);
/* Kineto's kernelOccupancy: the calculator's active blocks per SM, capped by
 * blocksPerSm, times the block's threads over the SM's thread limit; -1 when
 * PROPS is NULL or the calculator fails. */
float cm_kin_occupancy(const cm_kin_launch *k, const cm_kin_props *props);
/* "est. achieved occupancy %": (int)(0.5 + OCC * 100.0), a value out of int
 * range (or NaN) giving INT_MIN as the x86 conversion does. */
int cm_kin_occupancy_pct(float occ);

/* A float as Kineto writes blocks and warps per SM: std::to_string, which
 * is printf's "%f" ("1.939394"), or the string "inf" for an infinity; NaN,
 * which Kineto would write as a bare nan (not JSON), is the string "nan". */
void cm_kin_write_float(cm_buf *b, float f);

/* "memory bandwidth (GB/s)" of a copy or set of BYTES in the span
 * [START, END] ns: bytes * 1.0 / duration in doubles (both unsigned 64-bit
 * first, as in Kineto), or the string "N/A" for a zero duration. */
void cm_kin_write_bandwidth(cm_buf *b, cm_int bytes, cm_int start, cm_int end);

/* CUPTI's synchronization types (CUpti_ActivitySynchronizationType). */
enum { CM_SYNC_EVENT = 1, CM_SYNC_STREAM_WAIT_EVENT = 2, CM_SYNC_STREAM = 3, CM_SYNC_CONTEXT = 4 };
/* Kineto's name for sync type T, taken modulo 2^32 as CUPTI's field
 * ("Stream Sync", ...; "Unknown Sync" for a type it does not know). */
const char *cm_kin_sync_name(cm_int t);

#endif
