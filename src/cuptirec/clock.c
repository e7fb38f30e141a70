/* clock.c - the linear map from a foreign CUPTI clock to CLOCK_REALTIME. */
#include "clock.h"

void crec_clock_init(crec_clock *k, uint64_t cupti_ts, uint64_t real_ns)
{
	uint64_t d = cupti_ts > real_ns ? cupti_ts - real_ns : real_ns - cupti_ts;

	k->foreign = d > CREC_CLOCK_TOLERANCE_NS;
	k->c0 = k->c1 = cupti_ts;
	k->r0 = k->r1 = real_ns;
}

void crec_clock_sample(crec_clock *k, uint64_t cupti_ts, uint64_t real_ns)
{
	if (!k->foreign || cupti_ts <= k->c0 || real_ns <= k->r0)
		return;
	k->c1 = cupti_ts;
	k->r1 = real_ns;
}

uint64_t crec_clock_map(const crec_clock *k, uint64_t ts)
{
	long double slope, r;

	if (!k->foreign || ts == 0)
		return ts;
	if (k->c1 == k->c0)
		slope = 1.0L;
	else
		slope = (long double)(k->r1 - k->r0) / (long double)(k->c1 - k->c0);
	/* signed difference: records may predate the first sample */
	r = (long double)k->r0 + ((long double)ts - (long double)k->c0) * slope;
	if (r < 1.0L)
		return 1;
	return (uint64_t)(r + 0.5L);
}

uint64_t crec_clock_span_ns(const crec_clock *k)
{
	return k->foreign ? k->r1 - k->r0 : 0;
}
