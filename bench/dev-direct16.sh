#!/bin/bash
# bench/dev-direct16.sh -- one run on the 16-core machine (issue 25's write time): the window's
# inserted batches handed by the render's in-order thread straight to the .pftrace's sequential
# part (pfinsert.c's direct path, pfdirect16), against the way before in the same binary
# (CUPTIMERGE_PFT_DIRECT=0: each batch through the transcoder's pool, whose workers copy it and
# put its lanes, then the pool's in-order hand-over; three queues a batch, about 0.2 ms each on
# 16 CPUs: BENCHMARKS.md "Where the .pftrace's waits fall on 16 CPUs").  With $CM_OLD (a binary
# of main before it) its rows too; with BIG_GROUPS=1 a row of the direct path in groups of 8192
# records (CUPTIMERGE_PFT_GROUP: fewer, larger batches; other bytes); with SEQ_QUEUE=N a row of
# the direct path with the sequential part's queue N batches long (CUPTIMERGE_PFT_SEQ_QUEUE; 4
# by default, which the render's in-order thread now fills itself; the same bytes).
# Rows taking turns, three rounds: the JSON, the .pftrace straight and through the pool, the
# JSON gzip and the .pftrace.gz straight and through the pool.  Wall, user and sys s and peak
# RSS by GNU time, the output's size and md5 prefix (the same bytes either way: 38185c35 for
# the 1 GB pair's .pftrace); round 2's .pftrace rows with the transcoder's two -v lines (the
# line by phase a phase a line: the inserted phase's "waited ... for the text's batches before
# them ... for room in the sequential part's queue" straight, "waited for a slot" and the
# pool's hand-over through the pool), then the -v time lines.
# Binary: $CM; the pair in $CPU and $WIN (the 1 GB pair on the device; any pair runs, e.g.
# CPU=.../200M.../cpu.json WIN=.../win.json CM=src/cuptimerge for a check here); GNU time as
# $T (or /usr/bin/time).  About 90 s on the 1 GB pair (120 s with $CM_OLD, BIG_GROUPS=1).
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_OLD=${CM_OLD:-}
BIG_GROUPS=${BIG_GROUPS:-0}
SEQ_QUEUE=${SEQ_QUEUE:-}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-direct16
new=$CM
for round in 1 2 3; do
	v=
	[ "$round" = 2 ] && v=-v
	CM=$new
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace, straight ($round)" "$v" o.pftrace
	one "  through the pool ($round)" "$v" o.pftrace CUPTIMERGE_PFT_DIRECT=0
	[ "$BIG_GROUPS" = 1 ] && one "  straight, groups of 8192 ($round)" "$v" o.pftrace CUPTIMERGE_PFT_GROUP=8192
	[ -n "$SEQ_QUEUE" ] && one "  straight, queue of $SEQ_QUEUE ($round)" "$v" o.pftrace CUPTIMERGE_PFT_SEQ_QUEUE="$SEQ_QUEUE"
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz, straight ($round)" "$v" o.pftrace.gz
	one "  through the pool ($round)" "$v" o.pftrace.gz CUPTIMERGE_PFT_DIRECT=0
	[ "$BIG_GROUPS" = 1 ] && one "  straight, groups of 8192 ($round)" "$v" o.pftrace.gz CUPTIMERGE_PFT_GROUP=8192
	[ -n "$SEQ_QUEUE" ] && one "  straight, queue of $SEQ_QUEUE ($round)" "$v" o.pftrace.gz CUPTIMERGE_PFT_SEQ_QUEUE="$SEQ_QUEUE"
	if [ -n "$CM_OLD" ]; then
		CM=$CM_OLD
		one "-o out.pftrace, before ($round)" "$v" o.pftrace
		one "-o out.pftrace.gz, before ($round)" "$v" o.pftrace.gz
	fi
done
CM=$new
timelines "$new" o.json
timelines "$new" o.pftrace
