#!/bin/bash
# bench/dev-knobs23.sh -- after lanes23 (issue 25), the knobs that may help the .pftrace on 16
# CPUs: its packets written by the passer alone (CUPTIMERGE_PFT_WRITERS=0, not 2), and the CPU
# trace's copy on 8 or 4 threads (CUPTIMERGE_COPY_THREADS, not -j's 16: the copy's threads share
# the CPUs with the transcoder's workers and, with gzip, the deflate's).  Three rounds taking turns,
# plain then gzip, each after the JSON.  The pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-knobs23
for round in 1 2 3; do
	for x in "" .gz; do
		one "-o out.json$x ($round)" "" "o.json$x"
		one "-o out.pftrace$x ($round)" "" "o.pftrace$x"
		one "  writers 0 ($round)" "" "o.pftrace$x" CUPTIMERGE_PFT_WRITERS=0
		one "  copy on 8 threads ($round)" "" "o.pftrace$x" CUPTIMERGE_COPY_THREADS=8
		one "  copy on 4 threads ($round)" "" "o.pftrace$x" CUPTIMERGE_COPY_THREADS=4
	done
done
for row in "o.json" "o.pftrace" "o.json.gz" "o.pftrace.gz" "o.pftrace CUPTIMERGE_COPY_THREADS=4" \
	"o.pftrace.gz CUPTIMERGE_COPY_THREADS=4"; do
	set -- $row
	o=$1
	shift
	echo "== -v, -o $o $*"
	env "$@" "$CM" -v -o "$out/$o" -w "$WIN" "$CPU" 2>"$out/err"
	grep -E "^cuptimerge: (time|copy):" "$out/err" | cut -c1-300
	grep -oE "the text before the inserted batches: the writer's thread [^;]*;[^;]*;" "$out/err"
	rm -f "$out/$o"
done
