#!/bin/bash
# bench/dev-lanes23.sh -- the lanes' list in front of a treap (lanes23, issue 25): a CPU thread's
# runtime calls from the window answered by a list, not the treap, on 16 CPUs.  Three rounds taking
# turns: the JSON; the .pftrace of main before ($CM_OLD) and with lanes23 ($CM); the same for gzip.
# Then -v of each .pftrace: the lanes' seconds, the busiest shard's, the sequential part's waits.
# The pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_OLD=${CM_OLD:-carry/bench/cuptimerge-old}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-lanes23
new=$CM
for round in 1 2 3; do
	CM=$new one "-o out.json ($round)" "" o.json
	CM=$CM_OLD one "-o out.pftrace, before ($round)" "" o.pftrace
	CM=$new one "  lanes23 ($round)" "" o.pftrace
	CM=$new one "-o out.json.gz ($round)" "" o.json.gz
	CM=$CM_OLD one "-o out.pftrace.gz, before ($round)" "" o.pftrace.gz
	CM=$new one "  lanes23 ($round)" "" o.pftrace.gz
done
for c in "$CM_OLD" "$new"; do
	echo "== -v, -o out.pftrace, $c"
	"$c" -v -o "$out/o.pftrace" -w "$WIN" "$CPU" 2>"$out/err"
	grep -E "^cuptimerge: time:" "$out/err" | cut -c1-300
	grep -oE "lanes placed in [^)]*\)|the sequential part [0-9.]* s, [^:]*: [^;]*;[^(]*" "$out/err" | head -3
	rm -f "$out/o.pftrace"
done
