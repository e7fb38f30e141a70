#!/bin/bash
# bench/dev-copy32.sh -- where the .pftrace.gz's copy phase goes on 16 CPUs (issue 25): in
# "seqq31" the .pftrace.gz's CPU events took 0.28-0.29 s from the plan to the last copied against
# the .json.gz's 0.16 s, while its read ended 0.09 s sooner and its render took as long; a first
# call of this script (before -v said more of the copy) found the copy's 16 threads busy 2.97 s
# and idle 2.25 s.  Prints the CPUs' layout (lscpu), -v's copy, threads and time lines of the
# .json.gz and the .pftrace.gz (the copy's line with its parts' mean and longest run, its longest
# hand-on and the walk's wait for a slot), then $ROUNDS rounds (3), rows taking turns, one binary
# ($CM): the .json.gz and the .pftrace.gz, the latter with the copy's ring of 40 slots
# (CUPTIMERGE_COPY_SLOTS; 20 by default here), that with 8 deflate threads, and 14 copy threads.
set -u
T=${T:-/usr/bin/time}
CM=${CM:-carry/bench/cuptimerge}
. "$(dirname "$0")/devrow.sh" dev-copy32
lscpu | grep -E '^(CPU\(s\)|Thread|Core|Socket|Model name|NUMA node\(s\))'
for o in o.json.gz o.pftrace.gz; do
	echo "== -v, -o $o"
	"$CM" -v -o "$out/$o" -w "$WIN" "$CPU" 2>&1 | grep -E "^cuptimerge: (time|CPU after|copy|threads|gzip):" | cut -c1-700
	rm -f "$out/$o"
done
for round in $(seq 1 "${ROUNDS:-3}"); do
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  copy ring of 40 ($round)" "" o.pftrace.gz CUPTIMERGE_COPY_SLOTS=40
	one "  that, 8 deflate threads ($round)" "" o.pftrace.gz CUPTIMERGE_COPY_SLOTS=40 CUPTIMERGE_GZIP_THREADS=8
	one "  14 copy threads ($round)" "" o.pftrace.gz CUPTIMERGE_COPY_THREADS=14
done
for v in "" CUPTIMERGE_COPY_SLOTS=40; do
	echo "== -v, -o o.pftrace.gz $v"
	env $v "$CM" -v -o "$out/o.pftrace.gz" -w "$WIN" "$CPU" 2>&1 | grep -E "^cuptimerge: (time|copy):" | cut -c1-700
	rm -f "$out/o.pftrace.gz"
done
