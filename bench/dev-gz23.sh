#!/bin/bash
# bench/dev-gz23.sh -- the .pftrace.gz on 16 CPUs after lanes23 (issue 25): three rounds taking
# turns of the .json.gz, the .pftrace.gz, and the .pftrace.gz with its packets written by the passer
# alone (CUPTIMERGE_PFT_WRITERS=0), with 8 deflate threads (CUPTIMERGE_GZIP_THREADS), with 12
# transcoder workers (CUPTIMERGE_PFT_THREADS); then
# -v of both gzip outputs under bench/cpuuse.py (the CPUs busy, 20 ms bins).
# The pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
BIN=${BIN:-20}
. "$(dirname "$0")/devrow.sh" dev-gz23
for round in 1 2 3; do
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  writers 0 ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_WRITERS=0
	one "  deflate on 8 threads ($round)" "" o.pftrace.gz CUPTIMERGE_GZIP_THREADS=8
	one "  12 transcoder workers ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_THREADS=12
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "" o.pftrace
done
for o in o.json.gz o.pftrace.gz; do
	echo "== -v and the CPUs busy, -o $o"
	python3 "$(dirname "$0")/cpuuse.py" -b "$BIN" -- "$CM" -v -o "$out/$o" -w "$WIN" "$CPU" 2>"$out/err"
	grep -E "^cuptimerge: (time|CPU after):" "$out/err" | cut -c1-400
	grep -E "gzip: the output" "$out/err" | cut -c1-600
	grep -E "perfetto" "$out/err" | cut -c1-2400
	rm -f "$out/$o"
done
