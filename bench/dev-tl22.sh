#!/bin/bash
# bench/dev-tl22.sh -- where the .pftrace's window phase goes on 16 CPUs (issue 25): the
# timeline22 experiment's binary ($CM_TL: main with bench/exp/timeline22.diff) marks each render
# piece, in-order sink call, wait for room, sequential batch and transcoder batch with its wall
# and CPU; bench/exp/tlsum.py sums them and bins the run.  Runs: the JSON (its render blocks), the
# .pftrace and the .pftrace.gz, each after a plain JSON run of $CM for the host's pace.
# The pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_TL=${CM_TL:-carry/bench/cuptimerge-tl}
T=${T:-/usr/bin/time}
BIN=${BIN:-20}
. "$(dirname "$0")/devrow.sh" dev-tl22
for o in o.json o.pftrace o.pftrace.gz; do
	one "-o out.json (plain binary)" "" o.json
	CM=$CM_TL one "-o $o, timeline" "" "$o" CUPTIMERGE_TIMELINE="$out/tl.txt"
	echo "== tlsum $o"
	python3 "$(dirname "$0")/exp/tlsum.py" "$out/tl.txt" "$BIN"
done
