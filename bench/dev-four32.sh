#!/bin/bash
# bench/dev-four32.sh -- the four outputs of the 1 GB pair's merge on 16 CPUs, $ROUNDS rounds (5),
# rows taking turns, one binary ($CM): the JSON, the .pftrace, the .json.gz and the .pftrace.gz; then
# each row's median.  The figures of issue 25's write criterion ("takes no longer to write, plain and
# gzip"), on one host at a time (BENCHMARKS.md "four32").
set -u
T=${T:-/usr/bin/time}
CM=${CM:-carry/bench/cuptimerge}
. "$(dirname "$0")/devrow.sh" dev-four32
for round in $(seq 1 "${ROUNDS:-5}"); do
	for o in o.json o.pftrace o.json.gz o.pftrace.gz; do
		one "-o out${o#o} ($round)" "" "$o"
	done
done | tee "$out/rows"
echo "== medians (wall s)"
for o in json pftrace json.gz pftrace.gz; do
	grep -F -- "-o out.$o (" "$out/rows" | awk '{print $6}' | sort -n |
		awk -v o="$o" '{v[NR] = $1} END { printf "%-12s %s  (%d runs)\n", o, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, NR }'
done
