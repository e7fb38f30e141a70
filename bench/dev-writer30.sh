#!/bin/bash
# bench/dev-writer30.sh -- the .pftrace packets' writer with fewer instructions (branch writer30,
# src/pftrace/pfwrite.c: 45 % fewer a record on the 200M pair, BENCHMARKS.md "writer30"), on 16 CPUs
# (issue 25: the .pftrace.gz of the 1 GB pair 0.05-0.15 s slower than the .json.gz, the serial chain
# of the sequential part and the packets' writer pacing the copy and window phases).  $ROUNDS rounds
# (4), rows taking turns: the .json.gz, main's .pftrace.gz ($CM_OLD: bench/mkcarry.sh REV's
# carry/bench/cuptimerge-REV) and this branch's ($CM), main's .pftrace and this branch's; then each
# binary's -v lines of the .pftrace.gz, twice.  The bytes of main's and this branch's rows are the
# same (the md5 column).  The pair in $CPU and $WIN; GNU time as $T.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:?the binary of main, bench/mkcarry.sh REV: carry/bench/cuptimerge-REV}
T=${T:-/usr/bin/time}
CM=$NEW
. "$(dirname "$0")/devrow.sh" dev-writer30
for round in $(seq 1 "${ROUNDS:-4}"); do
	CM=$NEW one "-o out.json.gz ($round)" "" o.json.gz
	CM=$OLD one "-o o.pftrace.gz, main ($round)" "" o.pftrace.gz
	CM=$NEW one "  writer30 ($round)" "" o.pftrace.gz
	CM=$OLD one "-o o.pftrace, main ($round)" "" o.pftrace
	CM=$NEW one "  writer30 ($round)" "" o.pftrace
done
for r in 1 2; do
	CM=$OLD one "-v -o out.pftrace.gz, main ($r)" -v o.pftrace.gz
	CM=$NEW one "-v -o out.pftrace.gz, writer30 ($r)" -v o.pftrace.gz
done
