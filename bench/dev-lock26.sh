#!/bin/bash
# bench/dev-lock26.sh -- pgzip.c's caller without the workers' lock and waking them by a semaphore
# (main 2026-12-06 evening) against the binaries before: $CM_OLD (28457ce, a condition variable
# signalled under the lock) and $CM_ATOM (d4b0a2f, no lock, still the condition variable); and on
# top of main $CM_EXP (bench/exp/pgz-dict.diff, a block's dictionary read in place) and $CM_SCHED
# (bench/exp/worker-sched.diff, with CUPTIMERGE_WORKER_SCHED=batch: the bulk workers, deflate's
# among them, never preempt the passer that wakes them).  Four rounds taking turns of the JSON, the
# .pftrace, and each gzip output by every binary; then -v of the .pftrace.gz by the old and the new
# binary (the passer's waits off its CPU).  The pair in $CPU and $WIN; GNU time as $T.
set -u
NEW=${CM:-carry/bench/cuptimerge}
OLD=${CM_OLD:-carry/bench/cuptimerge-28457ce}
ATOM=${CM_ATOM:-carry/bench/cuptimerge-d4b0a2f}
EXP=${CM_EXP:-carry/bench/cuptimerge-exp}
SCHED=${CM_SCHED:-carry/bench/cuptimerge-sched}
T=${T:-/usr/bin/time}
CM=$NEW
. "$(dirname "$0")/devrow.sh" dev-lock26
for round in 1 2 3 4; do
	CM=$NEW one "-o out.json ($round)" "" o.json
	CM=$NEW one "-o out.pftrace ($round)" "" o.pftrace
	for o in o.json.gz o.pftrace.gz; do
		CM=$OLD one "-o $o, lock, cond ($round)" "" $o
		CM=$ATOM one "  no lock, cond ($round)" "" $o
		CM=$NEW one "  no lock, semaphore ($round)" "" $o
		CM=$EXP one "  + dict in place ($round)" "" $o
		CM=$SCHED one "  + workers SCHED_BATCH ($round)" "" $o CUPTIMERGE_WORKER_SCHED=batch
	done
done
CM=$OLD one "-v -o out.pftrace.gz, lock, cond" -v o.pftrace.gz
CM=$NEW one "-v -o out.pftrace.gz, semaphore" -v o.pftrace.gz
