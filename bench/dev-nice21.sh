#!/bin/bash
# bench/dev-nice21.sh -- the .pftrace's in-order threads against its bulk workers on 16 CPUs
# (issue 25): the .pftrace uses 9.2 CPUs on average against the JSON's 7.0, and with gzip its
# passer lost its CPU 141-185 times a phase while passing bytes on (bench/dev-gz21.sh).  Three
# rounds taking turns: the JSON and the .pftrace, plain and gzip, and the .pftrace's with every
# pool's workers and the deflate workers at nice 5 and 10 (CUPTIMERGE_POOL_NICE), so that the
# sequential part, the passer and the writing thread win their CPUs at once.  Then -v of the
# .pftrace.gz at nice 5.  Binary $CM; the 1 GB pair in $CPU and $WIN.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-nice21
for round in 1 2 3; do
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "" o.pftrace
	for n in 5 10; do
		one "  pools at nice $n ($round)" "" o.pftrace CUPTIMERGE_POOL_NICE=$n
	done
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	for n in 5 10; do
		one "  pools at nice $n ($round)" "" o.pftrace.gz CUPTIMERGE_POOL_NICE=$n
	done
done
one "-o out.pftrace.gz, nice 5 (-v)" -v o.pftrace.gz CUPTIMERGE_POOL_NICE=5
