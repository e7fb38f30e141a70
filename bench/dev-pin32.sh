#!/bin/bash
# bench/dev-pin32.sh -- the serial chain on CPUs of its own (issue 25, bench/exp/pin32.diff): with
# CUPTIMERGE_PIN=N the handoffs' consumer threads (the .pftrace's sequential part and passer, the
# output's writer) run on the last N CPUs and every other thread on the rest, so that no worker takes
# their CPU ("seqq31": the passer lost its CPU 58 times in the CPU events' phase); the deflate workers,
# which the passer makes, go back to the rest (the patch's second version: its first left them on the
# kept CPUs).  $ROUNDS rounds
# (4), rows taking turns, one binary ($CM_EXP, main with the patch; without the variable it is
# main): the .json.gz and the .pftrace.gz as they are and with 2 CPUs kept, the .pftrace.gz with 1;
# then -v's time line of the .pftrace.gz with 2.
set -u
T=${T:-/usr/bin/time}
CM=${CM_EXP:-carry/bench/cuptimerge-exp}
. "$(dirname "$0")/devrow.sh" dev-pin32
for round in $(seq 1 "${ROUNDS:-4}"); do
	one "-o out.json.gz ($round)" "" o.json.gz
	one "  2 CPUs kept ($round)" "" o.json.gz CUPTIMERGE_PIN=2
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  2 CPUs kept ($round)" "" o.pftrace.gz CUPTIMERGE_PIN=2
	one "  1 CPU kept ($round)" "" o.pftrace.gz CUPTIMERGE_PIN=1
done
CUPTIMERGE_PIN=2 timelines "$CM" o.pftrace.gz
