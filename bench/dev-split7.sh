#!/bin/bash
# bench/dev-split7.sh -- issue 24's merge --split of the 1 GB pair (60 files) against the plain
# merge, on the 16-core machine, in under 60 s: where the split's plan goes (-v's "split: plan"
# line: the API calls' groups, the deal and its fold, the groups' plans, each in wall and CPU
# seconds) against the plain plan, and the copy's and the render's CPU, two rounds taking turns:
# the plain merge to stdout (> out.json: no fsync), to -o out.json, and the split; then the
# split at -j 8, and the split of the CPU trace alone (no window) against its copy to a file,
# by writer threads and without them (CUPTIMERGE_SPLIT_WRITERS=0: the build before).
# The files of -o and --split are synced on close in this build (CUPTIMERGE_WRITEBACK=0 only
# drops the early write-back): compare "output done" of the -v time line, which comes before
# the closes, and the wall of "> out.json".
#
# Run from the repo root on the device machine, the 1 GB pair in $CPU and $WIN, binaries in
# carry/bench (cuptimerge, lib, time).  Asserts nothing.
set -u
. bench/devcommon.sh
D=$(mktemp -d "${TMPDIR:-/tmp}/split7.XXXXXX")
trap 'rm -rf "$D"' EXIT
mkdir -p "$D/sp" "$D/tp"
export CUPTIMERGE_WRITEBACK=0
nproc
$C/cuptimerge --version | head -1
steps=$(grep -c '"ProfilerStep#' "$CPU")
k=$(((steps + 59) / 60))
echo "ProfilerStep events: $steps; --split=steps:$k"
L="time|CPU after the read|split"
run() { # label, then the command (its output's redirection done here when the label says so)
	local label=$1
	shift
	echo "== $label"
	if [ "$label" = "plain > out.json" ]; then
		"$T" -f "%e s wall %U user %S sys %M KB" "$@" >"$D/r.json" 2>"$D/err"
	else
		"$T" -f "%e s wall %U user %S sys %M KB" "$@" 2>"$D/err"
	fi
	grep -E "^cuptimerge: ($L):|wall" "$D/err"
	rm -f "$D/r.json" "$D/o.json"
}
start=$SECONDS
for round in 1 2; do
	run "plain > out.json" $C/cuptimerge -v -w "$WIN" "$CPU"
	run "split" $C/cuptimerge -v -w "$WIN" --split=steps:$k -o "$D/sp/m_%s.json" "$CPU"
	run "plain -o out.json" $C/cuptimerge -v -w "$WIN" -o "$D/o.json" "$CPU"
	echo "elapsed $((SECONDS - start)) s"
done
echo "files: $(ls "$D/sp" | wc -l), $(du -cb "$D"/sp/* | tail -1 | cut -f1) bytes"
[ $((SECONDS - start)) -lt 40 ] && run "split -j 8" $C/cuptimerge -v -j 8 -w "$WIN" --split=steps:$k -o "$D/sp/m_%s.json" "$CPU"
for round in 1 2; do
	[ $((SECONDS - start)) -lt 52 ] || break
	echo "== trace alone, > out.json"
	"$T" -f "%e s wall %U user %S sys %M KB" $C/cuptimerge "$CPU" 2>&1 >"$D/r.json"
	rm -f "$D/r.json"
	run "trace alone --split (writer threads: -j / 4)" $C/cuptimerge --split=steps:$k -o "$D/tp/t_%s.json" "$CPU"
	run "trace alone --split, no writer threads (as before)" env CUPTIMERGE_SPLIT_WRITERS=0 \
		$C/cuptimerge --split=steps:$k -o "$D/tp/t_%s.json" "$CPU"
done
echo "elapsed $((SECONDS - start)) s"
