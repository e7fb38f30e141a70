#!/bin/bash
# bench/dev-split8.sh -- issue 24's last target on the 16-core machine: the merge's --split of
# the whole 1 GB pair into 60 files against the plain merge, plain JSON and gzip, in one run
# (split8: the gzip files' blocks deflated by one crew of -j workers, pgzip.c cm_pgz_crew).
#
# Two rounds taking turns: plain `-o out.json`, `--split=steps:N -o 'DIR/s_%s.json'` (N: the
# ProfilerStep events over 60, rounded up), plain `-o out.json.gz`, the split to `.json.gz`;
# each with -v (its time, CPU-after-the-read and split lines), wall/user/sys/RSS; outputs
# deleted after each run.  Then, while under 45 s, the gzip split by 8 writer threads
# (CUPTIMERGE_SPLIT_WRITERS; the default is -j / 4).  With $BASE (an older binary), its gzip
# split and plain -o out.json.gz run in the same rounds.  Asserts nothing; about 40 s.
#
# Run from the repo root on the device machine: this build's binary at
# carry/mid/split8/cuptimerge (or $CM), the 1 GB pair in $CPU and $WIN, GNU time in $T, the
# libraries in LD_LIBRARY_PATH.
set -u
: "${CPU:?the CPU trace}" "${WIN:?the window}"
CM=${CM:-carry/mid/split8/cuptimerge}
T=${T:-/usr/bin/time}
BASE=${BASE:-}
D=$(mktemp -d "${TMPDIR:-/tmp}/split8.XXXXXX")
trap 'rm -rf "$D"' EXIT
start=$SECONDS
echo "$(nproc) CPUs; $("$CM" --version | head -1)"
steps=$(grep -c '"ProfilerStep#' "$CPU")
k=$(((steps + 59) / 60))
echo "ProfilerStep events: $steps; --split=steps:$k"
# run LABEL BINARY ARGS...: the merge with -v under GNU time; its lines, then the outputs go
run() {
	local label=$1 bin=$2
	shift 2
	mkdir -p "$D/sp"
	"$T" -f "%e s wall %U user %S sys %M KB" "$bin" -v "$@" -w "$WIN" "$CPU" 2>"$D/err"
	echo "== $label: $(grep wall "$D/err")"
	grep -E "^cuptimerge: (time|CPU after the read|split):" "$D/err" | sed 's/^cuptimerge: /   /'
	[ "$label" = "${label#split}" ] || echo "   files: $(ls "$D/sp" | wc -l), $(du -cb "$D"/sp/* | tail -1 | cut -f1) bytes"
	rm -rf "$D/sp" "$D"/out.json*
}
for round in 1 2; do
	echo "--- round $round"
	run "plain -o out.json" "$CM" -o "$D/out.json"
	run "split .json" "$CM" --split=steps:$k -o "$D/sp/s_%s.json"
	run "plain -o out.json.gz" "$CM" -o "$D/out.json.gz"
	run "split .json.gz" "$CM" --split=steps:$k -o "$D/sp/s_%s.json.gz"
	if [ -n "$BASE" ]; then
		run "plain -o out.json.gz (base)" "$BASE" -o "$D/out.json.gz"
		run "split .json.gz (base)" "$BASE" --split=steps:$k -o "$D/sp/s_%s.json.gz"
	fi
	echo "elapsed $((SECONDS - start)) s"
done
if [ $((SECONDS - start)) -lt 45 ]; then
	CUPTIMERGE_SPLIT_WRITERS=8 run "split .json.gz, 8 writers" "$CM" --split=steps:$k -o "$D/sp/s_%s.json.gz"
fi
echo "elapsed $((SECONDS - start)) s"
