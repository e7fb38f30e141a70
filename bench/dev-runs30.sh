#!/bin/bash
# bench/dev-runs30.sh -- the .pftrace's sequential part by runs (main 34551e5: a worker lists its batch's runs
# of one thread's slices and flows, step 1 looks a run's thread up once and reads none of its records) on
# top of writer30 (the packets' writer, a92684a), on 16 CPUs (issue 25).  $ROUNDS rounds (3), rows taking
# turns: the .json.gz, the .pftrace.gz of main before both ($CM_OLD: carry/bench/cuptimerge-09ec0a1), with
# writer30 ($CM_MID: carry/bench/cuptimerge-a92684a) and with both ($CM), the .pftrace before and with both;
# then -v's lines of the .pftrace.gz before and with both.  The bytes of every .pftrace row are the same.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:-carry/bench/cuptimerge-09ec0a1}
MID=${CM_MID:-carry/bench/cuptimerge-a92684a}
T=${T:-/usr/bin/time}
CM=$NEW
. "$(dirname "$0")/devrow.sh" dev-runs30
for round in $(seq 1 "${ROUNDS:-3}"); do
	CM=$NEW one "-o out.json.gz ($round)" "" o.json.gz
	CM=$OLD one "-o o.pftrace.gz, before ($round)" "" o.pftrace.gz
	CM=$MID one "  writer30 ($round)" "" o.pftrace.gz
	CM=$NEW one "  writer30 and runs ($round)" "" o.pftrace.gz
	CM=$OLD one "-o o.pftrace, before ($round)" "" o.pftrace
	CM=$NEW one "  writer30 and runs ($round)" "" o.pftrace
done
CM=$OLD one "-v -o out.pftrace.gz, before" -v o.pftrace.gz
CM=$NEW one "-v -o out.pftrace.gz, writer30 and runs" -v o.pftrace.gz
