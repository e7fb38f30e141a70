/* cpuscan.c - C1, phase 1 over the CPU trace: its entries, which choose the
 * scan (the careful one, cpufields.c; the parallel one, on workers of its
 * own or a crew's, cpuparallel.c), and Kineto's default base time.
 *
 * Everything the output needs in front of the CPU events (the GPU metadata
 * goes before the first non-metadata event, and its thread rows depend on
 * External ids found anywhere in the trace) is learnt in this phase, so the
 * output pass can copy the events as text.  Memory: the External id index,
 * limited to the ids the window links, and the indexes of the (normally
 * three) profiler span events the merge re-makes. */
#include "config.h"
#include "cpu/cpuscan_int.h"

int cm_cpuscan_run(cm_input *in, cm_hmap *ext, cm_cpuplan *plan) { return cscan_careful(in, ext, plan, NULL); }

int cm_cpuscan_run_parallel(cm_input *in, cm_cpuplan *plan, int jobs) { return cscan_parallel(in, plan, jobs, NULL, NULL); }

int cm_cpuscan_run_cut(cm_input *in, cm_cpuplan *plan, int jobs, struct cm_cpucut *cut)
{
	if (!jobs) {
		int rc = cscan_careful(in, NULL, plan, cut);
		plan->careful = 1;
		return rc;
	}
	return cscan_parallel(in, plan, jobs, NULL, cut);
}

int cm_cpuscan_run_crew(cm_input *in, cm_cpuplan *plan, cm_ocrew *crew, struct cm_cpucut *cut)
{
	return cscan_parallel(in, plan, cm_ocrew_workers(crew), crew, cut);
}

cm_int cm_cpuscan_default_base(double now)
{
	/* Kineto's "trimester": the base is rounded down to this many seconds */
	const cm_int period = 7889238;
	cm_int s = (cm_int)now; /* int(): toward zero */
	cm_int q = s / period;
	if (s % period && s < 0)
		q--; /* Python's // floors */
	return q * period * 1000000000;
}
