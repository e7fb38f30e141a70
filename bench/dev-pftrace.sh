#!/bin/bash
# bench/dev-pftrace.sh -- one run on the 16-core machine (the lead's device run):
# the 1 GB pair merged to JSON and to .pftrace (plain and gzip), with -v, so
# that the .pftrace transcoder's -v line shows where its time goes on 16
# cores (the writer's thread, the front thread, the workers and the lanes,
# the sequential part, the passer).  Binaries: carry/bench/cuptimerge (built from this
# branch), carry/bench/lib, carry/bench/time; the pair in $CPU and $WIN.
# Prints figures only; about 40 s.
set -u
CM=carry/bench/cuptimerge
TIME=carry/bench/time
export LD_LIBRARY_PATH=$PWD/carry/bench/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${TMPDIR:-/tmp}/dev-pf6.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
echo "$(nproc) CPUs; $(ls -l "$CPU" "$WIN" | awk '{print $5, $9}' | tr '\n' ' ')"
run() { # run LABEL ARGS...: one merge, timed, its -v lines and the file's size
	label=$1
	shift
	echo "== $label: cuptimerge -v $*"
	"$TIME" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" -v "$@" -w "$WIN" "$CPU" 2>"$out/err"
	grep -E "time:|perfetto:" "$out/err" | sed 's/^cuptimerge: //'
	grep -vE "time:|perfetto:|threads:|cut:|merged" "$out/err" | head -3
	cat "$out/time"
	ls -l "$out"/o.* 2>/dev/null | awk '{print "size", $5}'
	rm -f "$out"/o.*
}
for round in 1 2; do
	run "json $round" -o "$out/o.json"
	run "pftrace $round" -o "$out/o.pftrace"
done
run "json.gz" -o "$out/o.json.gz"
run "pftrace.gz" -o "$out/o.pftrace.gz"
run "pftrace -j 8" -j 8 -o "$out/o.pftrace"
export CUPTIMERGE_PFT_BATCH=4194304
run "pftrace, 4 MB batches" -o "$out/o.pftrace"
unset CUPTIMERGE_PFT_BATCH
