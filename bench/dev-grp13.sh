#!/bin/bash
# bench/dev-grp13.sh -- one run on the 16-core machine (issue 25's write time):
# the render in whole groups (gpu/gpuwalk.c's gpu_walk_groups: every group
# of the window's events encoded by the render's workers) against the way
# before (a piece's first and last groups joined and parsed from their text
# by one transcoder worker each: 408 of the 1 GB pair's 2,941 batches), as
# $CM_OLD, a binary of main before it (232e864).  dev-seq12.sh's -v line
# put the 16-CPU wall in a slow batch at the head of the transcoder's ring.
# On the 1 GB pair, rows taking turns, two rounds: the JSON, the .pftrace
# new and old, plain and gzip (and the JSON gzip).  Wall, user and sys s and peak RSS by GNU
# time, the output's size and md5 prefix (the same bytes: 38185c35); round
# 2's .pftrace rows with the transcoder's -v line, then the -v time lines.
# Binaries: $CM and $CM_OLD; the 1 GB pair in $CPU and $WIN; GNU time as
# $T (or /usr/bin/time).  About 45 s.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_OLD=${CM_OLD:-carry/bench/cuptimerge-232e864}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-grp13
new=$CM
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	CM=$new
	one "-o out.json ($round)" "" o.json
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace, whole groups ($round)" "$v" o.pftrace
	one "-o out.pftrace.gz, whole groups ($round)" "$v" o.pftrace.gz
	CM=$CM_OLD
	one "-o out.pftrace, before ($round)" "$v" o.pftrace
	one "-o out.pftrace.gz, before ($round)" "$v" o.pftrace.gz
done
timelines "$new" o.pftrace
timelines "$CM_OLD" o.pftrace
