/* pfreport.c - -v: where a Perfetto transcoder's time went, two lines
 * when it is finished: the figures of the whole run, then the same by
 * phase (the text before the inserted batches, the CPU trace's parts
 * when they were inserted, the inserted batches, the text after).
 * A file of its own because it only reads what the writer's side, the
 * pool, the sequential part and the passer noted in the transcoder
 * (pfstream.h): it decides nothing, and it is the part that grows with
 * each question asked of a run (as src/mergereport.c is the merge's). */
#include "config.h"
#include "pftrace/pftrace.h"
#include "pftrace/pfevent.h"
#include "pftrace/pflaneq.h"
#include "pftrace/pfstream.h"
#include "base/diag.h"

#include <stdio.h>

/* -v: where the transcoder's time went (seconds, wall, summed over the
 * threads of each part; the walk in the workers' CPU time).  The serial
 * parts are the writer's thread and the pool's sink (one worker at a
 * time): on many cores the busier bounds the output's wall time. */
static void report(const cm_pft *t)
{
	const cm_pfev *e = t->ev;
	double most = 0, lanes = t->lq ? cm_pflaneq_busy(t->lq, &most) : 0, cut = 0, hw = 0;
	unsigned long long held = 0, missed = 0, ins_recs = 0;
	char seqline[160] = "", parts[96] = "";
	int i, own = t->qst.busy > 0 || t->qst.idle > 0;
	for (i = 0; i < PH_N; i++) /* (the batches inserted, the CPU trace's parts' and the writer's) */
		ins_recs += t->ph[i].ins_recs;
	if (t->ph[PH_PARTS].ins_recs) /* (the copy's, not the writer's: mergepftcpu.c) */
		snprintf(parts, sizeof parts, "; of them %llu the CPU trace's parts, encoded on the copy's threads",
			 (unsigned long long)t->ph[PH_PARTS].ins_recs);
	if (own)
		snprintf(seqline, sizeof seqline,
			 ", on a thread of its own that waited %.2f s for batches (the pool handed them over in %.2f s)",
			 t->qst.idle, t->pst.sink);
	for (i = 0; t->workers && i < t->threads; i++) {
		cut += t->workers[i].cut_cpu;
		hw += t->workers[i].hand_wait;
		held += t->workers[i].held;
		missed += t->workers[i].missed;
	}
	cm_warn(t->label, -1,
		"perfetto: %.2f s from the first text: the writer's thread %s for %.2f s and waited %.2f s for a slot; "
		"%d workers: %llu batches, busy %.2f s and idle %.2f s, the text walked in %.2f s of their CPU (guesses "
		"held %llu, chunks walked again %llu; waits for the chunk before %.2f s), lanes placed in %.2f s (the "
		"busiest of %d shards %.2f s; by them, and by the sequential part when they had not); the sequential "
		"part %.2f s, %.2f s of its CPU (waiting %.2f s for the passer): %.2f s of CPU in order, %.2f s waiting "
		"for lanes%s; the passer wrote the packets "
		"in %.2f s (the sequential part those of %lu batches in %.2f s), bytes passed on (written) in %.2f s; "
		"batches inserted: %llu, encoded by the writer's threads%s%s",
		cm_now_s() - t->t_first, t->par ? "copied" : "walked", t->w_time > t->w_put ? t->w_time - t->w_put : 0,
		t->w_put, t->threads,
		(unsigned long long)t->pst.blocks, t->pst.busy, t->pst.idle, cut, held, missed, hw, lanes, CM_PF_SHARDS, most,
		own ? t->qst.busy : t->pst.sink,
		t->s_cpu, t->p_wait, e->in_order, e->lane_wait, seqline, t->p_wrote, e->wrote_here, e->wrote_here_s, e->passed,
		ins_recs, t->direct ? " and handed straight to the sequential part" : "", parts);
}

/* -v, the second line: report's figures by phase (PH_*), with when each
 * phase ran, in seconds from the first text: on the writer's thread (its
 * calls), in order (the sequential part's first batch of the phase begun,
 * its last done) and passed on (the passer's last buffer of it).  The
 * blocks' classes are the writer's phases (cm_pft_phase), so the batches'
 * counts add up to report's.  On pfinsert.c's direct path the inserted
 * batches are not the pool's: their phase says how many went straight to
 * the sequential part and what the thread that handed them on (the
 * writer's in-order one) waited for, the text's batches before them and
 * room in the sequential part's queue.  The CPU trace's parts (PH_PARTS:
 * cm_pft_insert_own_begin's runs) are said as the inserted batches are,
 * only where a run of them began: without, the line is the three phases
 * it was before they were inserted (bench/devrow.sh and the tests read
 * it); the text between and after their runs is the text before's (the
 * walk's, before the writer's batches), so the phases' ranges may
 * overlap: each runs from when it first began to when it last ended. */
static void report_phases(const cm_pft *t)
{
	static const char *const name[PH_N] = {"the text before the inserted batches", "the CPU trace's parts",
					       "the inserted batches", "the text after"};
	char line[PH_N][1400], all[PH_N * (1400 + 2)];
	size_t len = 0;
	double t1 = t->t_first, hw[PH_N] = {0};
	int own = t->qst.busy > 0 || t->qst.idle > 0;
	for (int i = 0; t->workers && i < t->threads; i++)
		for (int k = 0; k < PH_N; k++)
			hw[k] += t->workers[i].hand_wait_ph[k];
	for (int i = 0; i < PH_N; i++) {
		int ins = i == PH_PARTS || i == PH_INSERTED;
		const struct pft_phase *ph = &t->ph[i];
		const cm_opool_stats *ps = &t->pcst[i];
		const struct cm_pfpass_phase *pp = &t->pph[i];
		char seq[360] = "none in order", pass[360] = "", gz[120] = "", waits[100];
		/* (the gaps between its batches are waits only on a thread of its own) */
		snprintf(waits, sizeof waits, "%.2f s for batches (%lu over 0.2 ms, the longest %.1f ms) and ",
			 ph->s_wait.total, ph->s_wait.over, ph->s_wait.longest * 1e3);
		if (!ph->w_from && !ps->blocks) {
			snprintf(line[i], sizeof line[i], i == PH_PARTS ? "" : "%s: none", name[i]);
			continue;
		}
		if (ph->s_from)
			snprintf(seq, sizeof seq,
				 "in order %.2f-%.2f (%.2f s, %.2f s of CPU: %.2f s in order, %.2f s waiting for lanes; "
				 "waited %s%.2f s for the passer; the packets of %lu batches written there in %.2f s)",
				 ph->s_from - t1, ph->s_to - t1, ph->s_busy, ph->s_cpu, ph->in_order, ph->lane_wait,
				 own ? waits : "", pp->put_wait, ph->wrote_here, ph->wrote_here_s);
		if (t->probe) /* (the rest of the sink's calls: its copy, and time off the CPU) */
			snprintf(gz, sizeof gz, ", of it the sink waited %.2f s for its workers and wrote on %.2f s",
				 pp->sink_wait, pp->sink_emit);
		if (pp->bufs)
			snprintf(pass, sizeof pass,
				 ", passed on by %.2f (%lu buffers: the packets written in %.2f s, bytes passed on in %.2f "
				 "s, %.2f s of CPU, off it %lu times to wait and %lu times taken%s)",
				 pp->last - t1, pp->bufs, pp->wrote, pp->passed, pp->passed_cpu, pp->vsw, pp->isw, gz);
		if (ins && t->direct) { /* (pfinsert.c's direct path: none through the pool) */
			snprintf(line[i], sizeof line[i],
				 "%s: the writer's thread %.2f-%.2f, handed on for %.2f s and waited %.2f s (%.2f "
				 "s for the text's batches before them to be handed on, %.2f s for room in the "
				 "sequential part's queue, %lu waits over 0.2 ms, the longest %.1f ms); %llu batches straight to the sequential part, none "
				 "through the pool; %s%s",
				 name[i], ph->w_from ? ph->w_from - t1 : 0, ph->w_to ? ph->w_to - t1 : 0,
				 ph->w_time > ph->w_put ? ph->w_time - ph->w_put : 0, ph->w_put, ph->ins_drain,
				 ph->ins_room.total, ph->ins_room.over, ph->ins_room.longest * 1e3, ph->ins_recs, seq,
				 pass);
			continue;
		}
		snprintf(line[i], sizeof line[i],
			 "%s: the writer's thread %.2f-%.2f, %s for %.2f s and waited %.2f s for a slot; %llu batches, "
			 "the workers busy %.2f s (of it %.2f s waiting for the chunk before) and idle %.2f s, the "
			 "batches handed to the sequential part in %.2f s; %s%s",
			 name[i], ph->w_from ? ph->w_from - t1 : 0, ph->w_to ? ph->w_to - t1 : 0,
			 ins ? "inserted" : t->par ? "copied" : "walked",
			 ph->w_time > ph->w_put ? ph->w_time - ph->w_put : 0, ph->w_put, (unsigned long long)ps->blocks,
			 ps->busy, hw[i], ps->idle, ps->sink, seq, pass);
	}
	for (int i = 0; i < PH_N; i++)
		if (*line[i])
			len += (size_t)snprintf(all + len, sizeof all - len, "%s%s", len ? "; " : "", line[i]);
	cm_warn(t->label, -1, "perfetto by phase (s from the first text): %s", all);
}

/* (pfstream.h) */
void cm_pft_report(const cm_pft *t)
{
	report(t);
	report_phases(t);
}
