#!/bin/bash
# bench/dev-ab29.sh -- adopt29 and two packet writers, more rounds: $ROUNDS rounds (5) taking turns of the
# .json.gz, the .pftrace.gz as main writes it, with the passer's copy (CUPTIMERGE_PFT_PASS_COPY=1), with two
# packet writers (CUPTIMERGE_PFT_WRITERS=2), both; then the plain .pftrace main, the copy, two writers.
# The pair in $CPU and $WIN; GNU time as $T; the binary $CM.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-ab29
for round in $(seq 1 "${ROUNDS:-5}"); do
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o o.pftrace.gz, main ($round)" "" o.pftrace.gz
	one "  the passer's copy ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PASS_COPY=1
	one "  two packet writers ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_WRITERS=2
	one "  two writers, the copy ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_WRITERS=2 CUPTIMERGE_PFT_PASS_COPY=1
done
for round in $(seq 1 "${ROUNDS:-5}"); do
	one "-o o.pftrace, main ($round)" "" o.pftrace
	one "  the passer's copy ($round)" "" o.pftrace CUPTIMERGE_PFT_PASS_COPY=1
	one "  two packet writers ($round)" "" o.pftrace CUPTIMERGE_PFT_WRITERS=2
done
