#!/bin/bash
# bench/dev-wake25.sh -- the gzip knobs that gained in dev-sched25 (the deflate workers woken only
# when those awake are too few, with every bulk worker under SCHED_BATCH), four rounds taking turns
# with the .json.gz and the .pftrace.gz as they are.  The pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-wake25
for round in 1 2 3 4; do
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  woken fewer, SCHED_BATCH ($round)" "" o.pftrace.gz CUPTIMERGE_GZIP_WAKE=few CUPTIMERGE_WORKER_SCHED=batch
	one "  woken fewer ($round)" "" o.pftrace.gz CUPTIMERGE_GZIP_WAKE=few
done
