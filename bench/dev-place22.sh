#!/bin/bash
# bench/dev-place22.sh -- pfplace22 on 16 CPUs (issue 25): a put of the .pftrace's lanes places up
# to its own batch, the pools' idle workers the rest, against the way before in the same binary
# (CUPTIMERGE_PFT_PLACE_ALL=1: each put places on as far as it can).  Three rounds, rows taking
# turns: the JSON, the .pftrace both ways, the JSON gzip, the .pftrace.gz both ways; then the -v
# lines of the .pftrace both ways, and with $CM_TL (pfplace22 with bench/exp/timeline22.diff) the
# timeline's sums (bench/exp/tlsum.py) of the .pftrace.
# Binary $CM: HEAD with bench/exp/place-idle.diff (applied at 8c2a545: not landed); the pair in $CPU
# and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_TL=${CM_TL:-}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-place22
ab_rounds 3 "placing all, as before" CUPTIMERGE_PFT_PLACE_ALL=1
one "-o out.pftrace (-v)" -v o.pftrace
one "  placing all, as before (-v)" -v o.pftrace CUPTIMERGE_PFT_PLACE_ALL=1
if [ -n "$CM_TL" ]; then
	for env in CUPTIMERGE_PFT_PLACE_ALL=0 CUPTIMERGE_PFT_PLACE_ALL=1; do
		CM=$CM_TL one "-o out.pftrace, timeline, $env" "" o.pftrace CUPTIMERGE_TIMELINE="$out/tl.txt" $env
		python3 "$(dirname "$0")/exp/tlsum.py" "$out/tl.txt" 20 | grep -v "^ *[0-9]\.[0-9]* "
	done
fi
timelines "$CM" o.json
timelines "$CM" o.pftrace
