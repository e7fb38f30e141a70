#!/bin/bash
# bench/dev-final28.sh -- the session's main on 16 CPUs (issue 25): copydirect28 (the CPU trace's parts
# encoded on the copy's threads) and the spans' ties noted on the plan's threads (cm_gpu_each_span),
# against $CM_OLD (copydirect28 before the second); $ROUNDS rounds (3) taking turns of the JSON, the
# .json.gz, the .pftrace.gz (main, the parts as text, the packets by two writer threads, $CM_OLD); then
# -v's time lines of the .json.gz and the .pftrace.gz, main and $CM_OLD (the plan's end after the joins:
# the ties' spans are noted between), and the perfetto line of main's .pftrace.gz with two writers.
# The pair in $CPU and $WIN; GNU time as $T.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:-carry/bench/cuptimerge-old}
T=${T:-/usr/bin/time}
CM=$NEW
. "$(dirname "$0")/devrow.sh" dev-final28
for round in $(seq 1 "${ROUNDS:-3}"); do
	CM=$NEW one "-o out.json ($round)" "" o.json
	CM=$NEW one "-o out.json.gz ($round)" "" o.json.gz
	CM=$NEW one "-o o.pftrace.gz, main ($round)" "" o.pftrace.gz
	CM=$NEW one "  parts as text ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PARTS=0
	CM=$NEW one "  two packet writers ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_WRITERS=2
	CM=$OLD one "  before the spans' walk ($round)" "" o.pftrace.gz
done
for r in 1 2; do
	timelines "$NEW" o.json.gz
	timelines "$NEW" o.pftrace.gz
	timelines "$OLD" o.pftrace.gz
done
CM=$NEW one "-v -o o.pftrace.gz, two writers" -v o.pftrace.gz CUPTIMERGE_PFT_WRITERS=2
CM=$NEW one "-v -o o.pftrace.gz, main" -v o.pftrace.gz
