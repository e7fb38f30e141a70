#!/bin/bash
# bench/dev-lock26.sh -- pgzip.c's caller without the workers' lock (main d4b0a2f on) against the
# binary before it ($CM_OLD, 28457ce), and bench/exp/pgz-dict.diff on top ($CM_EXP, a block's
# dictionary read in place): four rounds taking turns of the JSON, the .pftrace, and each gzip
# output by the three binaries; then -v of the .pftrace.gz by the old and the new binary (the
# passer's waits off its CPU).  The pair in $CPU and $WIN; GNU time as $T.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:-carry/bench/cuptimerge-28457ce}
EXP=${CM_EXP:-carry/bench/cuptimerge-exp}
T=${T:-/usr/bin/time}
CM=$NEW
. "$(dirname "$0")/devrow.sh" dev-lock26
for round in 1 2 3 4; do
	CM=$NEW one "-o out.json ($round)" "" o.json
	CM=$NEW one "-o out.pftrace ($round)" "" o.pftrace
	CM=$OLD one "-o out.json.gz, lock ($round)" "" o.json.gz
	CM=$NEW one "  no lock ($round)" "" o.json.gz
	CM=$EXP one "  no lock, dict in place ($round)" "" o.json.gz
	CM=$OLD one "-o out.pftrace.gz, lock ($round)" "" o.pftrace.gz
	CM=$NEW one "  no lock ($round)" "" o.pftrace.gz
	CM=$EXP one "  no lock, dict in place ($round)" "" o.pftrace.gz
done
CM=$OLD one "-v -o out.pftrace.gz, lock" -v o.pftrace.gz
CM=$NEW one "-v -o out.pftrace.gz, no lock" -v o.pftrace.gz
