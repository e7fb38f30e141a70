#!/bin/bash
# bench/dev-final21.sh -- the session's three cuts of the .pftrace's wall on 16 CPUs together
# (issue 25, 2026-12-06): the sequential part's in-order step a third of its instructions
# (pfseq21), the packets written by two threads more (pfpass21), the spans after the window as
# encoded batches (pfspans21: other bytes).  Three rounds taking turns: the JSON; the .pftrace of
# main before them ($CM_OLD), with pfseq21 and pfpass21 ($CM_SEQPASS) and with 0 writers (pfseq21
# alone), and with all three ($CM); the same for gzip.  Then -v of $CM's .pftrace and .pftrace.gz.
# The 1 GB pair in $CPU and $WIN.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_OLD=${CM_OLD:-carry/bench/cuptimerge-old}
CM_SEQPASS=${CM_SEQPASS:-carry/bench/cuptimerge-seqpass}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-final21
new=$CM
for round in 1 2 3; do
	CM=$new one "-o out.json ($round)" "" o.json
	CM=$CM_OLD one "-o out.pftrace, before ($round)" "" o.pftrace
	CM=$CM_SEQPASS one "  pfseq21 ($round)" "" o.pftrace CUPTIMERGE_PFT_WRITERS=0
	CM=$CM_SEQPASS one "  pfseq21 + pfpass21 ($round)" "" o.pftrace
	CM=$new one "  all three ($round)" "" o.pftrace
	CM=$new one "-o out.json.gz ($round)" "" o.json.gz
	CM=$CM_OLD one "-o out.pftrace.gz, before ($round)" "" o.pftrace.gz
	CM=$CM_SEQPASS one "  pfseq21 + pfpass21 ($round)" "" o.pftrace.gz
	CM=$new one "  all three ($round)" "" o.pftrace.gz
done
CM=$new one "-o out.pftrace, all three (-v)" -v o.pftrace
CM=$new one "-o out.pftrace.gz, all three (-v)" -v o.pftrace.gz
