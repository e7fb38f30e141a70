#!/bin/bash
# bench/dev-adopt15.sh -- one run on the 16-core machine (issue 25's write time):
# the render's output taken whole by the transcoder (pfinsert.c's
# cm_pft_insert_adopt: the render pool's sink, one group at a time in
# order, no longer copies every group of the window's events into t->ins;
# the transcoder's worker that takes the group copies it, as it already
# copied it once more) against the way before, twice: the same binary with
# CUPTIMERGE_PFT_ADOPT=0 (the copy on the sink, all else the same), and
# $CM_OLD, a binary of main before it (9187313: its rows against the
# JSON's are also the first 16-CPU figures of main since whole groups, the
# change that dev-grp13.sh compares with the way before it).
# On the 1 GB pair, rows taking turns, two rounds: the JSON, the .pftrace
# new, with the copy, and old, plain and gzip.  Wall, user and sys s and
# peak RSS by GNU time, the output's size and md5 prefix (the same bytes:
# 38185c35 for the .pftrace); round 2's .pftrace rows with the transcoder's
# -v line ("the writer's thread copied for": the sink's copy and the
# text's; "waited for a slot"; the sequential part's CPU in order; the
# passer's), then the -v time lines (the window's phase: "CPU events
# copied" to "window events rendered").
# Binaries: $CM and $CM_OLD; the 1 GB pair in $CPU and $WIN; GNU time as
# $T (or /usr/bin/time).  About 60 s.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_OLD=${CM_OLD:-carry/bench/cuptimerge-9187313}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-adopt15
new=$CM
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	CM=$new
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace, adopted ($round)" "$v" o.pftrace
	one "  copied on the sink ($round)" "$v" o.pftrace CUPTIMERGE_PFT_ADOPT=0
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz, adopted ($round)" "$v" o.pftrace.gz
	one "  copied on the sink ($round)" "$v" o.pftrace.gz CUPTIMERGE_PFT_ADOPT=0
	CM=$CM_OLD
	one "-o out.pftrace, before ($round)" "$v" o.pftrace
	one "-o out.pftrace.gz, before ($round)" "$v" o.pftrace.gz
done
timelines "$new" o.json
timelines "$new" o.pftrace
timelines "$CM_OLD" o.pftrace
