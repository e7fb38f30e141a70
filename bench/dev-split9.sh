#!/bin/bash
# bench/dev-split9.sh -- issue 24's last target on the 16-core machine: the merge's --split of
# the whole 1 GB pair into 60 files against the plain merge, plain JSON and gzip, in one run,
# and --steps of two steps against the plain merge (split9: the split's and the cut's CPU
# events copied in parts on threads, cpucopypar.c, where they were walked and routed on one).
#
# Two rounds taking turns: plain `-o out.json`, `--split=steps:N -o 'DIR/s_%s.json'` (N: the
# ProfilerStep events over 60, rounded up), plain `-o out.json.gz`, the split to `.json.gz`,
# the same by 4 writer threads (CUPTIMERGE_SPLIT_WRITERS=4: the files' pgzip streams fed and their
# deflated blocks written off the thread that hands the parts' pieces over; by default a gzip
# split has none), `--steps` of two steps from the middle to `-o out.json`; each with -v (its time, CPU after
# the read, copy and split lines: "CPU events copied" less "plan" is the copy, the stretch
# this branch works on), wall/user/sys/peak RSS; outputs deleted after each run.  Asserts
# nothing; about 25-30 s.
#
# Run from the repo root on the device machine: this build's binary at
# carry/mid/split9/cuptimerge (or $CM), the 1 GB pair in $CPU and $WIN, GNU time in $T, the
# libraries in LD_LIBRARY_PATH.
set -u
: "${CPU:?the CPU trace}" "${WIN:?the window}"
CM=${CM:-carry/mid/split9/cuptimerge}
T=${T:-/usr/bin/time}
D=$(mktemp -d "${TMPDIR:-/tmp}/split9.XXXXXX")
trap 'rm -rf "$D"' EXIT
start=$SECONDS
echo "$(nproc) CPUs; $("$CM" --version | head -1)"
steps=$(grep -c '"ProfilerStep#' "$CPU")
k=$(((steps + 59) / 60))
mid=$((steps / 2)) mid2=$((steps / 2 + 1))
echo "ProfilerStep events: $steps; --split=steps:$k; --steps=$mid-$mid2"
# run LABEL ARGS...: the merge with -v under GNU time; its lines, then the outputs go
run() {
	local label=$1
	shift
	mkdir -p "$D/sp"
	"$T" -f "%e s wall %U user %S sys %M KB" "$CM" -v "$@" -w "$WIN" "$CPU" 2>"$D/err"
	echo "== $label: $(grep wall "$D/err")"
	grep -E "^cuptimerge: (time|CPU after the read|split|copy):" "$D/err" | sed 's/^cuptimerge: /   /'
	[ "$label" = "${label#split}" ] || echo "   files: $(ls "$D/sp" | wc -l), $(du -cb "$D"/sp/* | tail -1 | cut -f1) bytes"
	rm -rf "$D/sp" "$D"/out.json*
}
for round in 1 2; do
	echo "--- round $round"
	run "plain -o out.json" -o "$D/out.json"
	run "split .json" --split=steps:$k -o "$D/sp/s_%s.json"
	run "plain -o out.json.gz" -o "$D/out.json.gz"
	run "split .json.gz" --split=steps:$k -o "$D/sp/s_%s.json.gz"
	CUPTIMERGE_SPLIT_WRITERS=4 run "split .json.gz, 4 writer threads" --split=steps:$k -o "$D/sp/s_%s.json.gz"
	run "--steps=$mid-$mid2 -o out.json" --steps=$mid-$mid2 -o "$D/out.json"
	echo "elapsed $((SECONDS - start)) s"
done
# the copy on one thread, as before (the testing aid CUPTIMERGE_COPY_THREADS=1), if time is left
if [ $((SECONDS - start)) -lt 36 ]; then
	CUPTIMERGE_COPY_THREADS=1 run "split .json, copy on one thread" --split=steps:$k -o "$D/sp/s_%s.json"
	CUPTIMERGE_COPY_THREADS=1 run "split .json.gz, copy on one thread" --split=steps:$k -o "$D/sp/s_%s.json.gz"
fi
echo "elapsed $((SECONDS - start)) s"
