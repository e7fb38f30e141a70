/* merge.c - the engine: the window and the CPU trace, each parsed once, then the output.
 *
 * Design.  The reference merge loads both documents and edits a list; we
 * stream them, so the question is what must be known before each byte goes
 * out.  The output is the CPU trace with, in this order: its leading run of
 * "M" events, the GPU metadata, its other events, the window's events, the
 * gpu_user_annotation spans and three re-made profiler span events.  The GPU
 * metadata comes first but depends on everything: the thread rows of API
 * records are resolved through External ids that may sit anywhere in the CPU
 * trace, through correlation records anywhere in the window, and through the
 * window's thread_resource_map, which a streaming writer puts last.  So the
 * work goes in three phases:
 *
 *   1  both inputs are read side by side, each parsed once:
 *      W  the window (gpu/window.c): a splitter thread cuts "events" into
 *         batches, runs of events in the read chunks themselves (it finds
 *         where each ends and copies none: json/docsplit.c), workers
 *         check each event (json/jvalid.c),
 *         parse it and digest it into a typed record (gpu/gpurec.h) with every
 *         field the rules read already converted and checked; the records go
 *         to a temporary file, the external correlations to another;
 *      C1 the CPU trace (cpu/cpuscan.c, cpuparallel.c): the same cutting, workers check
 *         and replay each event in one pass (json/jvalid.c) into the scan's
 *         callbacks: base time, extent, dropped events, and the External-id
 *         candidates on disk;
 *      on a wide machine the two readers' workers are one crew (base/opool.h:
 *      a worker takes the block cut first, of either input: mergejobs.c);
 *   2  the joins, on tables indexed by id (base/idmap.h: arrays in a mapped
 *      temporary file for ids that are counters, as CUPTI's and torch's are),
 *      each on several threads: External id -> CPU thread (cpu/cpuindex.c,
 *      the candidates), correlation -> thread and -> annotation
 *      (the annotations' ids, one External id in twelve, get tables packed
 *      over the set of them, an entry an annotation);
 *      then the plan reads the records (not JSON) for the rows, the time
 *      extent and the spans (for a window of version 2 also the operator
 *      and the user annotation of the CPU trace each API call was made in,
 *      and then, in a second walk, the spans Kineto draws of those
 *      annotations: gpu/gpuanns.c); crosscheck.c judges whether the two
 *      belong together;
 *   --  all input has now been read and checked: an error stops here, before
 *       a byte is written, so a bad input never leaves half a trace;
 *   3  the output: the CPU trace's text copied (cpu/cpucopy.c: the one pass
 *      that reads it again, as bytes, not parsed, by the layout the first
 *      phase's splitter noted of it, each top-level key and value and each
 *      event, whichever scan read it: json/doclayout.h) with the metadata
 *      spliced in; the events past the metadata in parts on threads, each
 *      read at its offset (cpu/cpucopypar.c, by the layout's marks);
 *      then worker threads render the records to text in window order
 *      (base/opool.c); then the spans and the span events; gzip output is
 *      deflated in blocks on the same number of threads (io/pgzip.c).  (The
 *      records were once rendered into a spool beside the copy; once the
 *      copy no longer parsed, writing the spool and reading it back cost more
 *      than the overlap gained.)
 *
 * The fast readers judge nothing they cannot judge exactly: a document whose
 * top level, element or member they will not take (bad JSON, a bad shape) is
 * read again from the start by the careful yajl reader (json/docread.c,
 * json/saxread.c), which finds the same fault and names its byte offset.
 * Worker threads never print: a block's error is held and printed by the
 * reading thread when the block's turn comes, once.
 *
 * Memory is the id tables (held in memory when a run's fit in --memory,
 * else file pages that are dropped when they pass what the rest leaves of
 * it: base/idmap.c), the rows, the annotation names and spans, a bounded
 * number of batches in flight (each holding its read chunk), and two
 * chunks an input read ahead
 * (io/inputahead.c: the read(2) copies off the cutting threads); never a
 * document or a record list.  So a run whose tables are in files stays
 * within about --memory, however large its inputs.
 * A pipe is spooled to $TMPDIR as it is read (io/inputraw.c): the CPU trace is
 * read twice (scanned, then copied), the window a second time only when the
 * careful reader has to explain it.  Times: the window's are unix-epoch ns and
 * become (t - baseTimeNanoseconds) / 1000.0 us, computed exactly as Python
 * does (jwrite.h); the CPU trace's numbers are never re-rounded: they are
 * copied.
 *
 * The engine is this file, the run, over the stages it calls: phases 1
 * and 2 in mergeprepare.c, phase 3 in mergeout.c, the -v report in
 * mergereport.c and -j's threads for each step in mergejobs.c
 * (merge_int.h draws them). */
#include "config.h"
#include "merge.h"
#include "merge_int.h"
#include "base/pages.h"
#include "io/output.h"
#include "json/docsplit.h"
#include "repair/repairpass.h"
#include "filter.h"

#include <string.h>

/* The run (merge.h): OPT to the stages; a trace alone to filter.c or the
 * repair pass; else the output and the inputs opened, the phases in turn,
 * the report, and all freed. */
int cm_merge_run(const struct cm_options *opt)
{
	struct merge m;
	cm_evout eo = {0};
	cm_threadmap *map = NULL;
	char **split_names = NULL;
	int status;
	memset(&m, 0, sizeof m);
	m.opt = opt;
	m.t0 = cm_now_s();
	cm_diag_set_quiet(opt->quiet);
	/* the format of every output, and the testing aids, to the stages
	 * they steer (options.h) */
	cm_output_set_codec(opt->codec);
	cm_pages_budget(opt->memory); /* --memory: every id table's and mapping's */
	if (opt->spill)
		cm_docsplit_set_spill(opt->spill);
	if (opt->span_slice)
		cm_gpu_set_span_slice(opt->span_slice);
	if (opt->split_n && !opt->window_path && !opt->map_path)
		return cm_filter_run(opt, NULL, NULL); /* its files are opened once the steps are known */
	/* The output first, before any input is read: a -o that cannot be
	 * written (a directory, a missing one) fails now, not after the merge.
	 * Nothing is written to it before all input has been checked.  (The
	 * files of --split are named after the steps: opened once they are
	 * known, after all input has been checked.) */
	eo.out = opt->split_n ? NULL : cm_output_open(opt->out_path, opt->gzip_level, opt->jobs);
	if (!eo.out && !opt->split_n)
		return cm_diag_status();
	if (opt->map_path && !(map = cm_threadmap_load(opt->map_path, opt->bufsize))) {
		if (eo.out)
			cm_output_close(eo.out, 0);
		return cm_diag_status();
	}
	m.map = map;
	if (!opt->window_path) {
		/* a trace alone: a repair in its one pass, else copied and cut */
		if (map && !opt->cut && !opt->split_n)
			status = cm_repairpass_run(opt->cpu_path, opt->bufsize, opt->trace_name, map, eo.out);
		else
			status = cm_filter_run(opt, map, eo.out);
		cm_threadmap_free(map);
		return status;
	}
	cm_input_map_default(mergejobs_read_jobs(opt->jobs) <= 3); /* io/inputraw.c: it pays on few CPUs only */
	m.win = cm_input_open_rewindable(opt->window_path, opt->bufsize);
	m.cpu = m.win ? cm_input_open_rewindable(opt->cpu_path, opt->bufsize) : NULL;
	if (!m.cpu) {
		cm_output_close(eo.out, 0);
		cm_input_close(m.win);
		cm_threadmap_free(map);
		return cm_diag_status();
	}
	cm_input_readahead(m.win, mergejobs_readahead(opt));
	cm_input_readahead(m.cpu, mergejobs_readahead(opt));
	if (map) {
		m.repair = cm_repair_new(map);
		m.arena = cm_arena_new();
	}
	m.gpu = mergeprepare_new_gpu(&m);
	cm_cut_of_options(&m.cut, opt);

	/* a .pftrace's lanes told the window's calls before the CPU trace's
	 * slices are placed (mergepft.c), but not with a repair's remap */
	m.pft_ties = !m.repair && !opt->split_n ? &eo : NULL;
	status = mergeprepare_run(&m);
	/* --split: the files, now that the steps are known (none appears
	 * unless all are written) */
	if (!status && opt->split_n &&
	    (cm_split_open(opt->out_path, &m.cut, opt->gzip_level, opt->jobs, &m.split.outs, &split_names) < 0 ||
	     !(eo.out = cm_output_tee(m.split.outs, m.cut.ngroups))))
		status = cm_diag_status();
	if (status) {
		if (eo.out)
			cm_output_close(eo.out, 0); /* nothing was written: no file appears */
		if (m.split.outs)
			cm_split_close(m.split.outs, m.cut.ngroups, split_names, m.cut.ngroups, 0);
		m.split.outs = NULL;
	} else {
		status = mergeout_write(&m, &eo, split_names);
		split_names = NULL; /* closed with the files */
	}
	cm_progress_clear();
	if (!status && opt->verbose)
		mergereport_print(&m);
	if (!status && m.repair && !opt->split_n)
		cm_repair_report(m.repair);
	if (!status && opt->split_n)
		cm_msplit_report(&m.split);
	cm_msplit_free(&m.split);
	cm_buf_free(&eo.buf);
	cm_repair_free(m.repair);
	cm_arena_free(m.arena);
	cm_threadmap_free(map);
	cm_cpuplan_free(&m.plan);
	cm_cpucut_free(&m.cut);
	cm_gpu_free(m.gpu);
	cm_input_close(m.cpu);
	cm_input_close(m.win);
	return status;
}
