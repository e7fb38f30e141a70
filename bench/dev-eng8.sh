#!/bin/bash
# bench/dev-eng8.sh -- issue 30's 16-core targets, in under 60 s: the default -j (3 runs), the
# curve (-j 8, 12, 16, 24), taskset -c 0,1, and the testing aids that compare this branch's
# choices with one binary, rows taking turns: the copy of the CPU trace on one thread
# (CUPTIMERGE_COPY_THREADS=1, as before this branch), one chunk read ahead (the default,
# CUPTIMERGE_READAHEAD_SLOTS=2) against three (4) and seven (8), the read crew's workers niced
# (CUPTIMERGE_CREW_NICE=5) with crews of 14 (the default) and 16 (CUPTIMERGE_READ_WORKERS),
# and -j 8 and 12 with a crew of their -j (the crew is 11 and 14 there), and niced.
#
# Run from the repo root on the device machine: this branch's binary in carry/mid/eng8 (or
# $BIN), the 1 GB pair in $CPU and $WIN, GNU time in $T (else /usr/bin/time), libraries on
# LD_LIBRARY_PATH.  Each run is -v -o /dev/null; it prints the -v "time", "CPU after the
# read", "threads" and "cut" lines and GNU time's wall, user, sys and peak RSS.  Asserts
# nothing.
set -u
: "${CPU:?the CPU trace}" "${WIN:?the window}"
B=${BIN:-carry/mid/eng8/cuptimerge}
T=${T:-/usr/bin/time}
nproc
run() {
	local label=$1
	shift
	echo "== $label"
	"$T" -f "%e s wall %U user %S sys %M KB" "$@" -v -w "$WIN" -o /dev/null "$CPU" 2>&1 |
		grep -E "^cuptimerge: (time|CPU after the read|threads|cut|copy):|wall"
}
start=$SECONDS
for round in 1 2 3; do
	run "default -j (round $round)" "$B"
	[ "$round" -le 2 ] || continue
	run "copy on one thread (CUPTIMERGE_COPY_THREADS=1)" env CUPTIMERGE_COPY_THREADS=1 "$B"
	run "three chunks read ahead (CUPTIMERGE_READAHEAD_SLOTS=4)" env CUPTIMERGE_READAHEAD_SLOTS=4 "$B"
	run "seven chunks read ahead (CUPTIMERGE_READAHEAD_SLOTS=8)" env CUPTIMERGE_READAHEAD_SLOTS=8 "$B"
	run "crew niced (CUPTIMERGE_CREW_NICE=5)" env CUPTIMERGE_CREW_NICE=5 "$B"
	run "crew of 16 niced" env CUPTIMERGE_CREW_NICE=5 CUPTIMERGE_READ_WORKERS=16 "$B"
done
echo "elapsed $((SECONDS - start)) s"
for j in 8 12 16 24; do
	run "-j $j" "$B" -j "$j"
	case $j in 8 | 12)
		run "-j $j, a crew of $j" env CUPTIMERGE_READ_WORKERS=$j "$B" -j "$j"
		run "-j $j, a crew of $j niced" env CUPTIMERGE_CREW_NICE=5 CUPTIMERGE_READ_WORKERS=$j "$B" -j "$j"
		;;
	esac
done
echo "elapsed $((SECONDS - start)) s"
[ $((SECONDS - start)) -lt 45 ] && run "taskset -c 0,1" taskset -c 0,1 "$B"
echo "elapsed $((SECONDS - start)) s"
