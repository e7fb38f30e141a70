/* clock.h - mapping CUPTI timestamps to CLOCK_REALTIME nanoseconds. */
#ifndef CREC_CLOCK_H
#define CREC_CLOCK_H

#include <stdint.h>

/* CUPTI stamps records with CLOCK_REALTIME ns unless another client (Kineto
 * after a GPU-enabled profiler session) registered its own timestamp callback,
 * typically raw TSC ticks.  We then map linearly between two calibration
 * samples (cupti, realtime) taken by us: the first at window start, the latest
 * just before a buffer is encoded (later than every record in it), so the map
 * interpolates rather than extrapolates. */
typedef struct crec_clock {
	int foreign;            /* 0: CUPTI's clock is realtime, map is identity */
	uint64_t c0, c1;        /* CUPTI timestamps of the first / latest sample */
	uint64_t r0, r1;        /* CLOCK_REALTIME ns of the same samples */
} crec_clock;

/* Beyond this difference between CUPTI's clock and CLOCK_REALTIME at one
 * instant the CUPTI clock is taken as foreign: the two agree within about a
 * microsecond when CUPTI is on its default clock, and a TSC count is off by
 * decades. */
#define CREC_CLOCK_TOLERANCE_NS 100000000ull

/* Start a calibration with the sample (CUPTI_TS, REAL_NS). */
void crec_clock_init(crec_clock *k, uint64_t cupti_ts, uint64_t real_ns);

/* Record a later sample; ignored while the clock is not foreign. */
void crec_clock_sample(crec_clock *k, uint64_t cupti_ts, uint64_t real_ns);

/* TS (CUPTI clock) as CLOCK_REALTIME ns.  0 (CUPTI's "not recorded") stays 0.
 * With one sample only, or two at the same CUPTI time, the clocks are assumed
 * to tick at the same rate (offset only). */
uint64_t crec_clock_map(const crec_clock *k, uint64_t ts);

/* The realtime span covered by the samples (r1 - r0), 0 when not foreign. */
uint64_t crec_clock_span_ns(const crec_clock *k);

#endif
