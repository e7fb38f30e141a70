#!/bin/bash
# bench/dev-cpuuse23.sh -- how many of the 16 CPUs the merge keeps busy, 20 ms by 20 ms, against
# its -v time lines (issue 25: where the .pftrace leaves CPUs idle that the JSON does not).  First
# two rounds of the four outputs for the host's pace; then each output once with -v under
# bench/cpuuse.py: its phases (time:, CPU after:), the transcoder's line (the lanes' busiest shard)
# and the bins.  The pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
BIN=${BIN:-20}
. "$(dirname "$0")/devrow.sh" dev-cpuuse23
for round in 1 2; do
	for o in o.json o.pftrace o.json.gz o.pftrace.gz; do
		one "-o $o ($round)" "" "$o"
	done
done
for o in o.json o.pftrace o.json.gz o.pftrace.gz; do
	echo "== -v and the CPUs busy, -o $o"
	python3 "$(dirname "$0")/cpuuse.py" -b "$BIN" -- "$CM" -v -o "$out/$o" -w "$WIN" "$CPU" 2>"$out/err"
	grep -E "^cuptimerge: (time|CPU after):" "$out/err" | cut -c1-400
	grep -oE "lanes placed in [^)]*\)|the sequential part [0-9.]* s, [^:]*: [^;]*;" "$out/err" | head -3
	rm -f "$out/$o"
done
