#!/bin/bash
# bench/dev-pf12.sh -- one run on the 16-core machine (issue 25's write time):
# is the .pftrace's output phase short of CPUs, or waiting on its in-order
# part?  At the session's start (BENCHMARKS.md) the transcoder's 16 workers
# idled 9.9 of 13.7 s while the writer's thread waited 0.47 s for a slot, and
# the sequential part ran 0.31 s of CPU in 0.49 s: with the render's crew
# (16 more threads) at work, the in-order threads may lose their CPUs.  On
# the 1 GB pair, rows taking turns, two rounds: the JSON; the .pftrace as it
# is; with 40 pool slots (CUPTIMERGE_POOL_SLOTS); with 8 and 12 transcoder
# workers (CUPTIMERGE_PFT_THREADS, -j staying 16 for the merge); with the
# transcoder's workers at nice 5 and 10 (CUPTIMERGE_PFT_NICE); 12 of them
# at nice 5; and gzip, JSON against
# .pftrace.  Wall, user and sys s and peak RSS by GNU time, the output's
# size and md5 prefix (the knobs must not change the bytes); round 2's
# .pftrace rows with the transcoder's -v line, and one JSON and one .pftrace
# run's time: lines.  Binary: $CM; the 1 GB pair in $CPU and $WIN; GNU time
# as $T (or /usr/bin/time).  About 60 s.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-pf12
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "$v" o.pftrace
	one "  40 slots ($round)" "$v" o.pftrace CUPTIMERGE_POOL_SLOTS=40
	one "  8 transcoder workers ($round)" "$v" o.pftrace CUPTIMERGE_PFT_THREADS=8
	one "  12 transcoder workers ($round)" "$v" o.pftrace CUPTIMERGE_PFT_THREADS=12
	one "  transcoder at nice 5 ($round)" "$v" o.pftrace CUPTIMERGE_PFT_NICE=5
	one "  transcoder at nice 10 ($round)" "$v" o.pftrace CUPTIMERGE_PFT_NICE=10
	one "  12 workers at nice 5 ($round)" "$v" o.pftrace CUPTIMERGE_PFT_THREADS=12 CUPTIMERGE_PFT_NICE=5
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "$v" o.pftrace.gz
done
for o in o.json o.pftrace; do
	echo "== -v time lines, -o $o"
	"$CM" -v -o "$out/$o" -w "$WIN" "$CPU" 2>&1 | grep -E "^cuptimerge: (time|CPU after|copy|threads):" | cut -c1-600
	rm -f "$out/$o"
done
