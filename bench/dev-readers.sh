#!/bin/bash
# bench/dev-readers.sh -- issue 30's read phase on the 16-core machine, in under 60 s: how the
# read's threads are best split between the window and the CPU trace, and whether the
# window's cutting thread loses its CPU.
#
# Run from the repo root on the device machine, the 1 GB pair in $CPU and $WIN, binaries
# in carry/bench (cuptimerge, lib, time).  Each run is -v -o /dev/null; it prints the -v
# "time", "threads" and "cut" lines and GNU time's wall, user, sys and peak RSS.  The
# splits (CUPTIMERGE_READ_WORKERS=W,C, a benchmarking aid) take turns, two rounds: the
# default -j, the same with the inputs mapped (CUPTIMERGE_MMAP=1), the old binary's default
# split (16 window workers, 6 for the CPU trace), and two other splits; then -j 8 and 12;
# then taskset -c 0,1 read and mapped, while time is left.  Asserts nothing.
set -u
. bench/devcommon.sh
nproc
run() { vrun "time|threads|cut" "$@"; } # label, then the command's leading words (env and options)
start=$SECONDS
for round in 1 2; do
	run "default -j" $C/cuptimerge
	run "default -j, CUPTIMERGE_MMAP=1 (mapped)" env CUPTIMERGE_MMAP=1 $C/cuptimerge
	run "W,C=16,6 (the old binary's default)" env CUPTIMERGE_READ_WORKERS=16,6 $C/cuptimerge
	run "W,C=8,6" env CUPTIMERGE_READ_WORKERS=8,6 $C/cuptimerge
	run "W,C=9,5" env CUPTIMERGE_READ_WORKERS=9,5 $C/cuptimerge
	echo "elapsed $((SECONDS - start)) s"
done
run "-j 8" $C/cuptimerge -j 8
run "-j 12" $C/cuptimerge -j 12
for round in 1 2; do
	[ $((SECONDS - start)) -lt 44 ] || break
	run "taskset -c 0,1" taskset -c 0,1 $C/cuptimerge
	run "taskset -c 0,1, CUPTIMERGE_MMAP=1" env CUPTIMERGE_MMAP=1 taskset -c 0,1 $C/cuptimerge
	echo "elapsed $((SECONDS - start)) s"
done
