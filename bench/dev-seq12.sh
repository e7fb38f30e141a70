#!/bin/bash
# bench/dev-seq12.sh -- one run on the 16-core machine (issue 25's write time):
# the .pftrace's sequential part on a thread of its own (pfstream.c) against
# the way before, on the pool's workers (CUPTIMERGE_PFT_SEQ_THREAD=0, the
# same binary, the same bytes).  dev-pf12.sh's call found the pool's ring
# full behind the sequential part (0.31-0.41 s of CPU in 0.49-0.67 s) while
# the workers idled, and neither more slots, fewer workers nor a lower
# priority for them helped.  On the 1 GB pair, rows taking turns, two
# rounds: the JSON, the .pftrace both ways, plain and gzip.  Wall, user and
# sys s and peak RSS by GNU time, the output's size and md5 prefix; round
# 2's .pftrace rows with the transcoder's -v line.  Binary: $CM; the 1 GB
# pair in $CPU and $WIN; GNU time as $T (or /usr/bin/time).  About 40 s.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-seq12
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "$v" o.pftrace
	one "  on the workers ($round)" "$v" o.pftrace CUPTIMERGE_PFT_SEQ_THREAD=0
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "$v" o.pftrace.gz
	one "  on the workers ($round)" "$v" o.pftrace.gz CUPTIMERGE_PFT_SEQ_THREAD=0
done
for o in o.json o.pftrace; do
	echo "== -v time lines, -o $o"
	"$CM" -v -o "$out/$o" -w "$WIN" "$CPU" 2>&1 | grep -E "^cuptimerge: (time|CPU after):" | cut -c1-600
	rm -f "$out/$o"
done
