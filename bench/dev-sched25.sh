#!/bin/bash
# bench/dev-sched25.sh -- does the serial chain of the .pftrace (the sequential part, the passer) lose
# its CPU to the workers it wakes?  A woken SCHED_BATCH thread never preempts the one running (the
# kernel's wake-up preemption is for SCHED_NORMAL alone), so the whole run under `chrt --batch 0`
# against the same binary as it is, and only the bulk workers (the pools', the gzip streams') under
# it (CUPTIMERGE_WORKER_SCHED=batch, bench/exp/worker-sched.diff), and for gzip the stream fed
# on a thread of its own (bench/exp/gzip-crew-feed.diff) with and without it: three rounds taking turns, plain and gzip, JSON and .pftrace,
# the deflate workers woken only when those awake are too few (CUPTIMERGE_GZIP_WAKE=few, branch
# wake25), then the -v lines of the .pftrace.gz both ways (the passer's switches: "off it N times to wait
# and M times taken").  The pair in $CPU and $WIN; GNU time as $T.
set -u
CM0=${CM:-carry/bench/cuptimerge}
# a binary with bench/exp/worker-sched.diff and bench/exp/gzip-crew-feed.diff (CUPTIMERGE_GZIP_FEED=1: pgzip fed on a
# thread of its own), where there is one
FEED=${FEED:-carry/bench/cuptimerge-feed}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-sched25
uname -r
command -v chrt >/dev/null || { echo "no chrt here"; exit 1; }
printf '#!/bin/sh\nexec chrt --batch 0 "%s" "$@"\n' "$(readlink -f "$CM0")" >"$out/batch.sh"
chmod +x "$out/batch.sh"
for round in 1 2 3; do
	for x in "" .gz; do
		CM=$CM0 one "-o out.json$x ($round)" "" "o.json$x"
		CM=$out/batch.sh one "  SCHED_BATCH ($round)" "" "o.json$x"
		CM=$CM0 one "  workers SCHED_BATCH ($round)" "" "o.json$x" CUPTIMERGE_WORKER_SCHED=batch
		CM=$CM0 one "-o out.pftrace$x ($round)" "" "o.pftrace$x"
		CM=$out/batch.sh one "  SCHED_BATCH ($round)" "" "o.pftrace$x"
		CM=$CM0 one "  workers SCHED_BATCH ($round)" "" "o.pftrace$x" CUPTIMERGE_WORKER_SCHED=batch
		[ -n "$x" ] && CM=$CM0 one "  deflate workers woken fewer ($round)" "" "o.pftrace$x" CUPTIMERGE_GZIP_WAKE=few
		[ -n "$x" ] && CM=$CM0 one "  woken fewer, workers SCHED_BATCH ($round)" "" "o.pftrace$x" CUPTIMERGE_GZIP_WAKE=few CUPTIMERGE_WORKER_SCHED=batch
		[ -n "$x" ] && [ -x "$FEED" ] && CM=$FEED one "  gzip fed on a thread ($round)" "" "o.pftrace$x" CUPTIMERGE_GZIP_FEED=1
		[ -n "$x" ] && [ -x "$FEED" ] && CM=$FEED one "  fed, workers SCHED_BATCH ($round)" "" "o.pftrace$x" CUPTIMERGE_GZIP_FEED=1 CUPTIMERGE_WORKER_SCHED=batch
	done
done
for c in "$CM0" "$out/batch.sh"; do
	CM=$c one "-v -o out.pftrace.gz, $(basename "$c")" -v o.pftrace.gz
done
CM=$CM0 one "-v -o out.pftrace.gz, workers SCHED_BATCH" -v o.pftrace.gz CUPTIMERGE_WORKER_SCHED=batch
