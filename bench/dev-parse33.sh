#!/bin/bash
# bench/dev-parse33.sh -- what the .pftrace.gz's copy phase would gain without its parse of the CPU
# trace's events, measured from the other side: the 1 GB pair's merge with each element read from its
# text parsed once more (CUPTIMERGE_PFT_PARSE_EXTRA=1) and twice more (=2), against the .json.gz and
# the .pftrace.gz as they are, $ROUNDS rounds (5), rows taking turns, one binary ($CM_EXP: HEAD with
# bench/exp/parse33.diff, which adds the variable; its bytes are main's); then each row's median and
# one -v run of each row (the copy phase's line).  The copy phase runs at about 12 busy CPUs of 16
# ("cgroup32"), so the time one more parse adds is about what taking the parse out would save
# (BENCHMARKS.md "parse33").
set -u
T=${T:-/usr/bin/time}
CM=${CM_EXP:-carry/bench/cuptimerge-exp}
[ -x "$CM" ] || { echo "dev-parse33.sh: no $CM (EXP=bench/exp/parse33.diff bench/mkcarry.sh)"; exit 1; }
. "$(dirname "$0")/devrow.sh" dev-parse33
for round in $(seq 1 "${ROUNDS:-5}"); do
	one "json.gz ($round)" "" o.json.gz
	one "pftrace.gz ($round)" "" o.pftrace.gz
	one "pftrace.gz +1 parse ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PARSE_EXTRA=1
	one "pftrace.gz +2 parses ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PARSE_EXTRA=2
done | tee "$out/rows"
echo "== medians (wall s)"
for r in "json.gz" "pftrace.gz" "pftrace.gz +1 parse" "pftrace.gz +2 parses"; do
	grep -F -- "$r (" "$out/rows" | awk '{for (i = 1; i <= NF; i++) if ($i == "wall") print $(i - 2)}' | sort -n |
		awk -v r="$r" '{v[NR] = $1} END { printf "%-22s %s  (%d runs)\n", r, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, NR }'
done
echo "== -v, one run each (the copy phase: the CPU trace's parts)"
for e in 0 1 2; do
	echo "-- CUPTIMERGE_PFT_PARSE_EXTRA=$e"
	CUPTIMERGE_PFT_PARSE_EXTRA=$e "$CM" -v -o "$out/o.pftrace.gz" -w "$WIN" "$CPU" 2>&1 |
		grep -E "^cuptimerge: (time|CPU after):|copy" | cut -c1-400
	rm -f "$out/o.pftrace.gz"
done
echo "-- json.gz"
"$CM" -v -o "$out/o.json.gz" -w "$WIN" "$CPU" 2>&1 | grep -E "^cuptimerge: (time|CPU after):|copy" | cut -c1-400
