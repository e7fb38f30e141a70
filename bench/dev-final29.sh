#!/bin/bash
# bench/dev-final29.sh -- the session's main on 16 CPUs (issue 25): adopt29 (the passer's buffers handed to
# gzip and the writing thread by ownership, not copied; CUPTIMERGE_PFT_PASS_COPY=1 the copy as before),
# the packets written by two writer threads (CUPTIMERGE_PFT_WRITERS=2) with and without it, and the spans'
# ties noted on the plan's threads against $CM_OLD (92ce2eb: copydirect28 before that walk); $ROUNDS rounds
# (2) taking turns; then -v's time lines of the .json.gz and the .pftrace.gz (main, $CM_OLD), and the
# perfetto lines of main's .pftrace.gz with and without the copy, and with two writers.
# The pair in $CPU and $WIN; GNU time as $T.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:-carry/bench/cuptimerge-old}
T=${T:-/usr/bin/time}
CM=$NEW
. "$(dirname "$0")/devrow.sh" dev-final29
for round in $(seq 1 "${ROUNDS:-2}"); do
	CM=$NEW one "-o out.json ($round)" "" o.json
	CM=$NEW one "-o out.json.gz ($round)" "" o.json.gz
	CM=$NEW one "-o o.pftrace.gz, main ($round)" "" o.pftrace.gz
	CM=$NEW one "  the passer's copy ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PASS_COPY=1
	CM=$NEW one "  two packet writers ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_WRITERS=2
	CM=$NEW one "  two writers, the copy ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_WRITERS=2 CUPTIMERGE_PFT_PASS_COPY=1
	CM=$OLD one "  92ce2eb ($round)" "" o.pftrace.gz
	CM=$NEW one "-o o.pftrace, main ($round)" "" o.pftrace
	CM=$NEW one "  the passer's copy ($round)" "" o.pftrace CUPTIMERGE_PFT_PASS_COPY=1
	CM=$NEW one "  two packet writers ($round)" "" o.pftrace CUPTIMERGE_PFT_WRITERS=2
done
for r in 1 2; do
	timelines "$NEW" o.json.gz
	timelines "$NEW" o.pftrace.gz
	timelines "$OLD" o.pftrace.gz
done
CM=$NEW one "-v -o o.pftrace.gz, main" -v o.pftrace.gz
CM=$NEW one "-v -o o.pftrace.gz, the copy" -v o.pftrace.gz CUPTIMERGE_PFT_PASS_COPY=1
CM=$NEW one "-v -o o.pftrace.gz, two writers" -v o.pftrace.gz CUPTIMERGE_PFT_WRITERS=2
