#!/bin/bash
# bench/dev-read7.sh -- issue 30's read phase on the 16-core machine, in under 60 s: the two
# readers' workers as one crew (base/opool.h's cm_ocrew) against the fixed split they had.
#
# Run from the repo root on the device machine, the 1 GB pair in $CPU and $WIN, binaries in
# carry/bench (cuptimerge, lib, time).  Each run is -v -o /dev/null; it prints the -v "time",
# "CPU after the read", "threads" and "cut" lines and GNU time's wall, user, sys and peak RSS.
# Two rounds, rows taking turns: the default -j (a crew of 14 on 16 CPUs), the same binary
# with the two pools apart as before (CUPTIMERGE_READ_WORKERS=10,4, the landed split), and
# crews of 16 and 12 (CUPTIMERGE_READ_WORKERS=N); then the curve, -j 4, 8, 12 and 16; then
# taskset -c 0,1 while time is left.  Asserts nothing.
set -u
. bench/devcommon.sh
nproc
run() { vrun "time|CPU after the read|threads|cut" "$@"; } # label, then the command's leading words
start=$SECONDS
for round in 1 2; do
	run "default -j (crew)" $C/cuptimerge
	run "W,C=10,4 (two pools, the landed split)" env CUPTIMERGE_READ_WORKERS=10,4 $C/cuptimerge
	run "crew of 16" env CUPTIMERGE_READ_WORKERS=16 $C/cuptimerge
	run "crew of 12" env CUPTIMERGE_READ_WORKERS=12 $C/cuptimerge
	echo "elapsed $((SECONDS - start)) s"
done
for j in 4 8 12 16; do
	run "-j $j" $C/cuptimerge -j $j
done
echo "elapsed $((SECONDS - start)) s"
for round in 1 2; do
	[ $((SECONDS - start)) -lt 46 ] || break
	run "taskset -c 0,1" taskset -c 0,1 $C/cuptimerge
	echo "elapsed $((SECONDS - start)) s"
done
