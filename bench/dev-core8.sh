#!/bin/bash
# bench/dev-core8.sh -- issue 30's two-CPU target on the 16-core machine, in under 60 s: this
# branch's merge (carry/mid/core8/cuptimerge) under taskset -c 0,1 on the 1 GB pair, against
# json_reformat -m on the CPU trace under the same taskset, and main's build (carry/bench) the
# same way, the three taking turns, two rounds.
#
# Run from the repo root on the device machine, the 1 GB pair in $CPU and $WIN, the lead's
# binaries in carry/bench (cuptimerge, lib, time, json_reformat).  Each merge is -v -o /dev/null;
# it prints the -v "time" and "CPU after the read" lines and GNU time's wall, user, sys and peak
# RSS, then the ratios json_reformat / merge of each round.  Asserts nothing.
set -u
. bench/devcommon.sh
nproc
MINE=carry/mid/core8/cuptimerge
JR=$C/json_reformat
[ -x "$JR" ] || JR=$(command -v json_reformat || true)
[ -x "$MINE" ] || { echo "dev-core8.sh: no $MINE"; exit 1; }
# secs LABEL COMMAND...: runs it under GNU time with the merge's -v lines, prints them and the
# wall, and leaves the wall seconds in $WALL
secs() {
	local label=$1 out
	shift
	echo "== $label"
	out=$("$T" -f "%e s wall %U user %S sys %M KB" "$@" 2>&1 >/dev/null)
	printf '%s\n' "$out" | grep -E "^cuptimerge: (time|CPU after the read|threads):|wall"
	WALL=$(printf '%s\n' "$out" | grep wall | tail -n 1 | cut -d' ' -f1)
}
start=$SECONDS
for round in 1 2; do
	[ $((SECONDS - start)) -lt 35 ] || break
	jr=
	if [ -n "$JR" ]; then
		secs "json_reformat -m, taskset -c 0,1" sh -c 'taskset -c 0,1 "$1" -m < "$2"' sh "$JR" "$CPU"
		jr=$WALL
	fi
	secs "core8, taskset -c 0,1" taskset -c 0,1 $MINE -v -w "$WIN" -o /dev/null "$CPU"
	mine=$WALL
	secs "main (carry/bench), taskset -c 0,1" taskset -c 0,1 $C/cuptimerge -v -w "$WIN" -o /dev/null "$CPU"
	base=$WALL
	[ -n "$jr" ] && awk -v j="$jr" -v m="$mine" -v b="$base" -v r="$round" \
		'BEGIN { printf "round %d: json_reformat / core8 %.2f, json_reformat / main %.2f\n", r, j / m, j / b }'
	echo "elapsed $((SECONDS - start)) s"
done
