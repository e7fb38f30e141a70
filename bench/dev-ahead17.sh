#!/bin/bash
# bench/dev-ahead17.sh -- the window render's pool of 2n + 8 slots (dd51b2b) measured in the
# form it landed (issue 25): three rounds taking turns of the JSON, the .pftrace by default,
# with CUPTIMERGE_PFT_AHEAD=1 (the pool as before, n + 4 slots) and with every pool of 40
# slots (CUPTIMERGE_POOL_SLOTS=40, the form the device measured on 2026-12-06), then the same
# for gzip output, with also the render on 12 threads (CUPTIMERGE_RENDER_THREADS=12, CPUs left
# to the deflate crew), and the deflate on 2, 4 and 8 threads (CUPTIMERGE_GZIP_THREADS: a
# .pftrace.gz deflates a quarter of the JSON's bytes).  Then one -v run of each default .pftrace (the waits), and perf's
# samples by thread and by symbol for the .pftrace.gz and the .json.gz (where the gzip gap's
# CPU goes).  Binary $CM; the 1 GB pair in $CPU and $WIN.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
P=carry/bench/perf
. "$(dirname "$0")/devrow.sh" dev-ahead17
for round in 1 2 3; do
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "" o.pftrace
	one "  AHEAD=1 ($round)" "" o.pftrace CUPTIMERGE_PFT_AHEAD=1
	one "  pools of 40 slots ($round)" "" o.pftrace CUPTIMERGE_POOL_SLOTS=40
done
for round in 1 2 3; do
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  AHEAD=1 ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_AHEAD=1
	one "  pools of 40 slots ($round)" "" o.pftrace.gz CUPTIMERGE_POOL_SLOTS=40
	one "  render on 12 threads ($round)" "" o.pftrace.gz CUPTIMERGE_RENDER_THREADS=12
	for g in 2 4 8; do
		one "  deflate on $g threads ($round)" "" o.pftrace.gz CUPTIMERGE_GZIP_THREADS=$g
	done
done
one "-o out.pftrace (-v)" -v o.pftrace
one "-o out.pftrace.gz (-v)" -v o.pftrace.gz
one "-o out.pftrace.gz, deflate on 4 (-v)" -v o.pftrace.gz CUPTIMERGE_GZIP_THREADS=4
export LD_LIBRARY_PATH=carry/bench/perflib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$P" --version >/dev/null 2>&1 || { echo "dev-ahead17.sh: no perf here"; exit 0; }
for f in o.json.gz o.pftrace.gz; do
	perfrec $f 1 30
done
