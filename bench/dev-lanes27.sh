#!/bin/bash
# bench/dev-lanes27.sh -- lanes27 (the lanes keep the slices a merge's later call or GPU span ties
# with, by a filter: pftrace/pflanetie.c) on 16 CPUs, where one shard's lanes were once the
# .pftrace's chain: main against $CM_OLD (28457ce, before it), $ROUNDS rounds (4) taking turns of
# the JSON, the .pftrace and the .pftrace.gz, then -v of the .pftrace both ways (the lanes' time).
# The pair in $CPU and $WIN; GNU time as $T.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:-carry/bench/cuptimerge-28457ce}
T=${T:-/usr/bin/time}
CM=$NEW
. "$(dirname "$0")/devrow.sh" dev-lanes27
for round in $(seq 1 "${ROUNDS:-4}"); do
	CM=$NEW one "-o out.json ($round)" "" o.json
	for o in o.pftrace o.pftrace.gz; do
		CM=$NEW one "-o $o, lanes27 ($round)" "" $o
		CM=$OLD one "  28457ce ($round)" "" $o
	done
done
CM=$NEW one "-v -o out.pftrace, lanes27" -v o.pftrace
CM=$OLD one "-v -o out.pftrace, 28457ce" -v o.pftrace
