#!/bin/bash
# bench/dev-knobs15.sh -- one run on the 16-core machine (issue 25's write
# time): what keeps the .pftrace's window phase waiting.  On 16 CPUs the
# render's 16 workers and the transcoder's 16 share the CPUs while the
# window's events are encoded; the -v line has the writer's thread waiting
# for a transcoder slot while the sequential part waits for batches and the
# workers idle.  Rows: the JSON; the .pftrace as it is; with the render's
# workers at a lower priority (CUPTIMERGE_RENDER_NICE, in $CM_EXP only);
# fewer transcoder workers; more slots; larger and smaller groups.  Two
# rounds, rows taking turns; round 2 with the transcoder's -v line.
# Binaries $CM and $CM_EXP: main, and main with a patch not landed (it
# gained nothing: BENCHMARKS.md, 2026-12-05 13:05): gpuencgroups.c's
# groups_block calling cm_thread_nice_env("CUPTIMERGE_RENDER_NICE") once
# per worker, on its first block; the 1 GB pair
# in $CPU and $WIN; GNU time as $T.  About 90 s.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_EXP=${CM_EXP:-carry/bench/cuptimerge-exp}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-knobs15
base=$CM
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	CM=$base
	one "json ($round)" "" o.json
	one "pftrace ($round)" "$v" o.pftrace
	CM=$CM_EXP
	one "pftrace exp as is ($round)" "$v" o.pftrace
	one "pftrace render nice 5 ($round)" "$v" o.pftrace CUPTIMERGE_RENDER_NICE=5
	one "pftrace render nice 15 ($round)" "$v" o.pftrace CUPTIMERGE_RENDER_NICE=15
	one "pftrace render nice 5, 40 slots ($round)" "$v" o.pftrace CUPTIMERGE_RENDER_NICE=5 CUPTIMERGE_POOL_SLOTS=40
	one "pftrace 4 pft workers ($round)" "$v" o.pftrace CUPTIMERGE_PFT_THREADS=4
	one "pftrace 4 pft workers, nice 5 ($round)" "$v" o.pftrace CUPTIMERGE_PFT_THREADS=4 CUPTIMERGE_RENDER_NICE=5
	one "pftrace groups 8192 ($round)" "$v" o.pftrace CUPTIMERGE_PFT_GROUP=8192
	one "pftrace groups 8192, pieces 16 ($round)" "$v" o.pftrace CUPTIMERGE_PFT_GROUP=8192 CUPTIMERGE_PFT_PIECE=16
	one "pftrace -j 24 ($round)" "$v -j 24" o.pftrace
	CM=$base
	one "json.gz ($round)" "" o.json.gz
	one "pftrace.gz ($round)" "$v" o.pftrace.gz
	CM=$CM_EXP
	one "pftrace.gz render nice 5 ($round)" "$v" o.pftrace.gz CUPTIMERGE_RENDER_NICE=5
done
