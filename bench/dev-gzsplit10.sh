#!/bin/bash
# bench/dev-gzsplit10.sh -- issue 24: the merge's --split of the whole 1 GB pair into 60 .json.gz
# files against the plain merge's one -o out.json.gz on 16 CPUs (gzsplit10: a --split gzip
# file's deflated blocks written by the compressor thread that finishes them, in order, not by
# the thread that hands the copy's and the render's pieces over; the files' buffers sized to
# need).
#
# Two rounds taking turns: plain `-o out.json.gz`, `--split=steps:N -o 'DIR/s_%s.json.gz'` (N:
# the ProfilerStep events over 60, rounded up), the same with CUPTIMERGE_CREW_WRITE=0 (the
# blocks written by the thread that hands them over, as before this branch: the same binary
# both ways), the split to `.json`, plain `-o out.json`; each with -v (its time, CPU after the
# read, copy and split lines: "CPU events copied" less "plan" is the copy, "window events
# rendered" less that the render), wall/user/sys/peak RSS (KB); outputs deleted after each run.
# Round 1 also prints an md5 of the gzip files' md5s, which must be the same both ways.
# Asserts nothing; about 25 s.
#
# Run from the repo root on the device machine: this build's binary at
# carry/mid/gzsplit10/cuptimerge (or $CM), the 1 GB pair in $CPU and $WIN, GNU time in $T,
# the libraries in LD_LIBRARY_PATH.
set -u
: "${CPU:?the CPU trace}" "${WIN:?the window}"
CM=${CM:-carry/mid/gzsplit10/cuptimerge}
T=${T:-/usr/bin/time}
D=$(mktemp -d "${TMPDIR:-/tmp}/gzsplit10.XXXXXX")
trap 'rm -rf "$D"' EXIT
start=$SECONDS
echo "$(nproc) CPUs; $("$CM" --version | head -1)"
steps=$(grep -c '"ProfilerStep#' "$CPU")
k=$(((steps + 59) / 60))
echo "ProfilerStep events: $steps; --split=steps:$k"
# run ROUND LABEL ARGS...: the merge with -v under GNU time; its lines, then the outputs go
run() {
	local round=$1 label=$2
	shift 2
	mkdir -p "$D/sp"
	"$T" -f "%e s wall %U user %S sys %M KB" "$CM" -v "$@" -w "$WIN" "$CPU" 2>"$D/err"
	echo "== $label: $(grep wall "$D/err")"
	grep -E "^cuptimerge: (time|CPU after the read|split|copy):" "$D/err" | sed 's/^cuptimerge: /   /'
	if [ "$label" != "${label#split}" ]; then
		echo "   files: $(ls "$D/sp" | wc -l), $(du -cb "$D"/sp/* | tail -1 | cut -f1) bytes"
		[ "$round" = 1 ] && [ "$label" != "${label#split .json.gz}" ] &&
			echo "   md5 of the files' md5s: $(cd "$D/sp" && md5sum * | md5sum | cut -c1-12)"
	fi
	rm -rf "$D/sp" "$D"/out.json*
}
for round in 1 2; do
	echo "--- round $round"
	run $round "plain -o out.json.gz" -o "$D/out.json.gz"
	run $round "split .json.gz" --split=steps:$k -o "$D/sp/s_%s.json.gz"
	CUPTIMERGE_CREW_WRITE=0 run $round "split .json.gz, blocks written by the handing thread (as before)" \
		--split=steps:$k -o "$D/sp/s_%s.json.gz"
	run $round "split .json" --split=steps:$k -o "$D/sp/s_%s.json"
	run $round "plain -o out.json" -o "$D/out.json"
	echo "elapsed $((SECONDS - start)) s"
done
