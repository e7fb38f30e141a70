#!/bin/bash
# bench/dev-steps.sh -- issue 30's steps after the read on the 16-core machine, in under 60 s:
# how long each step (the joins, the plan, the copy of the CPU trace, the render) takes and how
# many threads it keeps busy (its CPU seconds, all threads together, against its wall time).
#
# Run from the repo root on the device machine, the 1 GB pair in $CPU and $WIN, binaries in
# carry/bench (cuptimerge, lib, time).  Each merge is -v -o /dev/null; it prints the -v "time"
# and "CPU after the read" lines and GNU time's wall, user, sys and peak RSS.  Two rounds of the
# default -j, -j 8 and -j 4; then one thread's read(2) of the CPU trace from the page cache (the
# copy reads it again on one thread: is that its floor?), and taskset -c 0,1.  Asserts nothing.
set -u
. bench/devcommon.sh
nproc
run() { vrun "time|CPU after the read" "$@"; } # label, then the command's leading words (env and options)
start=$SECONDS
for round in 1 2; do
	run "default -j" $C/cuptimerge
	run "-j 8" $C/cuptimerge -j 8
	run "-j 4" $C/cuptimerge -j 4
	echo "elapsed $((SECONDS - start)) s"
done
for round in 1 2; do
	echo "== one thread reads the CPU trace (1 MiB reads)"
	"$T" -f "%e s wall %U user %S sys" dd if="$CPU" of=/dev/null bs=1M 2>&1 | grep wall
done
[ $((SECONDS - start)) -lt 45 ] && run "taskset -c 0,1" taskset -c 0,1 $C/cuptimerge
echo "elapsed $((SECONDS - start)) s"
