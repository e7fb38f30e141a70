/* mergereport.c - -v: what a merge did and where its time went.
 *
 * Lines of counts and tables, of the cut, of the times each step of the
 * design essay (merge.c) ended at and the CPU it took, and of how the
 * first phase's threads spent theirs.  A file of its own because it only
 * reads what the run noted in struct merge: it decides nothing, and it is
 * the part that grows with each question asked of a run. */
#include "config.h"
#include "merge_int.h"
#include "base/idmap.h"

#include <stdio.h>

/* For -v: how long a reader's cutting thread worked of the READ seconds its
 * input took (from the start): what it did not spend waiting for a slot
 * (SLOT) or for its chunks (READS).  It cut the whole time, or parsed
 * where it helps its workers (mergejobs_window_caller_helps); a thread
 * that worked nearly all of READ set the read's pace (issue 30: 1.3 GB/s
 * of window). */
static double worked(double read, double slot, double reads)
{
	double w = read - slot - reads;
	return w > 0 ? w : 0;
}

/* -v: what the merge did and where its time went, on stderr (silenced by
 * -q, as warnings are): one line of counts and tables, one of the cut, one
 * of times, one of the first phase's threads. */
void mergereport_print(const struct merge *m)
{
	struct cm_gpu_stats st;
	uint64_t in_memory, in_files, dropped;
	char tables[128];
	cm_gpu_stats(m->gpu, &st);
	cm_idmap_table_bytes(&in_memory, &in_files, &dropped);
	if (st.dense_tables)
		snprintf(tables, sizeof tables,
			 "arrays, %.1f MB in memory and %.1f MB in $TMPDIR (their pages dropped %llu times)",
			 (double)in_memory / 1e6, (double)in_files / 1e6, (unsigned long long)dropped);
	else
		snprintf(tables, sizeof tables, "hash maps");
	cm_warn(NULL, -1,
		"merged %llu window events into %llu CPU events: %llu external correlations, "
		"%llu External ids found in the CPU trace, %llu correlations linked to CPU threads; "
		"tables: External id index %.1f MB, correlation links, rows and spans %.1f MB; "
		"read by: window %s, CPU trace %s; id tables: %s",
		(unsigned long long)st.events, (unsigned long long)m->plan.events, (unsigned long long)st.pairs,
		(unsigned long long)st.linked_ext, (unsigned long long)st.linked_corr,
		(double)st.index_bytes / 1e6, (double)st.table_bytes / 1e6,
		m->win_careful ? "careful" : "parallel", m->plan.careful ? "careful" : "parallel",
		tables);
	if (m->opt->split_n)
		cm_msplit_verbose(&m->split);
	if (m->opt->cut)
		cm_warn(NULL, -1, "cut to %.3f-%.3f us: %llu CPU events kept, %llu cut", m->cut.lo, m->cut.hi,
			(unsigned long long)m->cut.kept, (unsigned long long)m->cut.cut);
	/* where the time went: the steps of the design essay, as seconds
	 * since the start when each ended */
	cm_warn(NULL, -1,
		"time: window read %.2f s, CPU trace read %.2f s, joins %.2f s (External ids linked %.2f s, "
		"index applied %.2f s), plan %.2f s, CPU events copied %.2f s, window events rendered %.2f s, "
		"output done %.2f s",
		m->t_window, m->t_cpu, m->t_joins, m->t_linked, m->t_indexed, m->t_plan, m->t_copied, m->t_render,
		cm_now_s() - m->t0);
	/* the steps after the read in CPU seconds, all threads together:
	 * against the wall time a step took, how many threads it kept busy
	 * (a step that took as much CPU as wall time ran on one) */
	cm_warn(NULL, -1,
		"CPU after the read: External ids linked %.2f s, index applied %.2f s, the rest of the joins %.2f s, "
		"plan %.2f s, CPU events copied %.2f s, window events rendered %.2f s, the rest %.2f s",
		m->c_linked - m->c_read, m->c_indexed - m->c_linked, m->c_joins - m->c_indexed, m->c_plan - m->c_joins,
		m->c_copied - m->c_plan, m->c_render - m->c_copied, cm_process_cpu_s() - m->c_render);
	/* gzip output: what its stream kept the writes waiting for, against
	 * the steps' seconds (the .pftrace's -v line splits its own by phase) */
	if (m->gz)
		cm_warn(NULL, -1,
			"gzip: the output's writes waited %.2f s for its compressor threads and %.2f s writing their "
			"blocks on",
			m->gz_wait, m->gz_emit);
	/* the copy: on how many threads, in how many parts (cpucopypar.c);
	 * workers idle while the parts' text went out in order had the
	 * output behind them (a .pftrace's transcoder took it on one thread;
	 * encoded, only their batches go to it, in order: its -v line by
	 * phase says what the transcoder did with them, "the CPU trace's
	 * parts") */
	{
		char pace[400] = "";
		const cm_opool_stats *cs = &m->copy_stats;
		if (m->copy_parts)
			snprintf(pace, sizeof pace,
				 ", busy %.2f s and idle %.2f s (a part %.1f ms on average, the longest %.1f ms) over %.2f s; "
				 "their %s handed to the output in order in %.2f s (the longest %.1f ms); the walk "
				 "waited %.2f s for a free slot",
				 cs->busy, cs->idle, cs->blocks ? 1e3 * cs->busy / (double)cs->blocks : 0.0,
				 1e3 * cs->longest, cs->lived, m->copy_encoded ? "batches" : "text", cs->sink,
				 1e3 * cs->sink_longest, cs->waited);
		cm_warn(NULL, -1, "copy: the CPU trace's events in %llu parts on %d threads%s",
			(unsigned long long)m->copy_parts, m->copy_parts ? m->copy_threads : 1, pace);
	}
	/* the first phase's threads, summed: a cutting thread that waited
	 * for slots had workers (or the results' sink) behind it; idle
	 * workers had the cutting thread behind them; a cutting thread
	 * that waited for its chunks had the reads behind it */
	if (!m->win_careful && !m->plan.careful && m->crew_n)
		cm_warn(NULL, -1,
			"threads: %d read workers shared by both inputs, idle %.2f s; window: %llu blocks, workers "
			"busy %.2f s, results handed on %.2f s, the cutting thread waited %.2f s for a slot and "
			"%.2f s for its reads and worked %.2f s; CPU trace: %llu blocks, workers busy %.2f s, "
			"results handed on %.2f s, the cutting thread waited %.2f s for a slot and %.2f s for its "
			"reads and worked %.2f s",
			m->crew_n, m->crew_idle, (unsigned long long)m->win_stats.blocks, m->win_stats.busy,
			m->win_stats.sink, m->win_stats.waited, m->win_waited,
			worked(m->t_window, m->win_stats.waited, m->win_waited),
			(unsigned long long)m->plan.read_stats.blocks, m->plan.read_stats.busy,
			m->plan.read_stats.sink, m->plan.read_stats.waited, m->cpu_waited,
			worked(m->t_cpu, m->plan.read_stats.waited, m->cpu_waited));
	else if (!m->win_careful && !m->plan.careful)
		cm_warn(NULL, -1,
			"threads: window: %llu blocks, workers busy %.2f s and idle %.2f s, results handed on "
			"%.2f s, the cutting thread waited %.2f s for a slot and %.2f s for its reads and worked "
			"%.2f s; CPU trace: %llu blocks, workers busy %.2f s and idle %.2f s, results handed on "
			"%.2f s, the cutting thread waited %.2f s for a slot and %.2f s for its reads and worked "
			"%.2f s",
			(unsigned long long)m->win_stats.blocks, m->win_stats.busy, m->win_stats.idle,
			m->win_stats.sink, m->win_stats.waited, m->win_waited,
			worked(m->t_window, m->win_stats.waited, m->win_waited),
			(unsigned long long)m->plan.read_stats.blocks, m->plan.read_stats.busy,
			m->plan.read_stats.idle, m->plan.read_stats.sink, m->plan.read_stats.waited, m->cpu_waited,
			worked(m->t_cpu, m->plan.read_stats.waited, m->cpu_waited));
	/* how fast each cutting thread cut, in its own CPU time (not the
	 * sink's, which may parse): the read cannot go faster (issue 30) */
	if (!m->win_careful && !m->plan.careful && m->win_stats.cut > 0 && m->plan.read_stats.cut > 0)
		cm_warn(NULL, -1,
			"cut: window %.2f GB in %.2f s of its cutting thread's CPU (%.2f GB/s; the thread ran %.2f s "
			"of CPU in all and lost its CPU %llu times while it could run), CPU trace %.2f GB in %.2f s "
			"(%.2f GB/s; %.2f s, %llu times)",
			(double)m->win_stats.cut_bytes / 1e9, m->win_stats.cut,
			(double)m->win_stats.cut_bytes / 1e9 / m->win_stats.cut, m->win_stats.cut_ran,
			(unsigned long long)m->win_stats.cut_preempted, (double)m->plan.read_stats.cut_bytes / 1e9,
			m->plan.read_stats.cut, (double)m->plan.read_stats.cut_bytes / 1e9 / m->plan.read_stats.cut,
			m->plan.read_stats.cut_ran, (unsigned long long)m->plan.read_stats.cut_preempted);
}
