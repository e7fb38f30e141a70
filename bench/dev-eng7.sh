#!/bin/bash
# bench/dev-eng7.sh -- issue 30's two-CPU target on the 16-core machine, in under 60 s: this
# branch's merge under taskset -c 0,1 on the 1 GB pair, against json_reformat -m on the CPU
# trace where yajl-tools is installed there, and the default -j once.
#
# Run from the repo root on the device machine, the 1 GB pair in $CPU and $WIN, binaries in
# carry/bench (cuptimerge, lib, time).  Each merge is -v -o /dev/null; it prints the -v "time"
# and "CPU after the read" lines and GNU time's wall, user, sys and peak RSS.  Asserts nothing.
set -u
. bench/devcommon.sh
nproc
run() { vrun "time|CPU after the read|threads" "$@"; }
start=$SECONDS
run "default -j" $C/cuptimerge
for round in 1 2 3; do
	[ $((SECONDS - start)) -lt 40 ] || break
	run "taskset -c 0,1" taskset -c 0,1 $C/cuptimerge
	if command -v json_reformat >/dev/null && [ "$round" -le 2 ]; then
		jr=$(($(nproc) > 2 ? 2 : 0)) # a CPU of its own where there is one
		echo "== json_reformat -m (taskset -c $jr)"
		"$T" -f "%e s wall %U user %S sys %M KB" taskset -c $jr json_reformat -m <"$CPU" 2>&1 >/dev/null | tail -n 2
	fi
	echo "elapsed $((SECONDS - start)) s"
done
