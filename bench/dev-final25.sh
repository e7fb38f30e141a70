#!/bin/bash
# bench/dev-final25.sh -- the session's main (issue 25, 2026-12-06 afternoon: lanes25, the deflate workers
# woken fewer) against the JSON on 16 CPUs: four rounds taking turns of the JSON, the .pftrace, the
# .json.gz and the .pftrace.gz, each gzip row also with every block waking a worker as before
# (CUPTIMERGE_GZIP_WAKE=all).  The pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-final25
for round in 1 2 3 4; do
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "" o.pftrace
	one "-o out.json.gz ($round)" "" o.json.gz
	one "  every block wakes a worker ($round)" "" o.json.gz CUPTIMERGE_GZIP_WAKE=all
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  every block wakes a worker ($round)" "" o.pftrace.gz CUPTIMERGE_GZIP_WAKE=all
done
