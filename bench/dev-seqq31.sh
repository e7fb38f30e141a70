#!/bin/bash
# bench/dev-seqq31.sh -- the sequential part's queue since the CPU trace's parts (copydirect28) and the
# runs (runs30), on 16 CPUs (issue 25): the parts' in-order sink waited 0.12 s for room in that queue (4
# batches) while the sequential part waited 0.13 s for batches (BENCHMARKS.md "timed31").  $ROUNDS rounds
# (3), rows taking turns, one binary ($CM): the JSON and the .pftrace, the .json.gz and the .pftrace.gz
# as they are, with queues of 16 and 64 (CUPTIMERGE_PFT_SEQ_QUEUE), with 8 deflate threads
# (CUPTIMERGE_GZIP_THREADS), and with the sequential part run by the in-order sinks themselves, no thread
# of its own and so no handoff (CUPTIMERGE_PFT_SEQ_THREAD=0); then -v's time lines of the .json.gz and
# the .pftrace.gz, -v's transcoder lines with a queue of 64, and the CPUs busy over time
# (bench/cpuuse.py) of the .json.gz and the .pftrace.gz.  The bytes of every .pftrace.gz row are the same.
set -u
T=${T:-/usr/bin/time}
CM=${CM:-carry/bench/cuptimerge}
. "$(dirname "$0")/devrow.sh" dev-seqq31
for round in $(seq 1 "${ROUNDS:-3}"); do
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "" o.pftrace
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  queue of 16 ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_SEQ_QUEUE=16
	one "  queue of 64 ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_SEQ_QUEUE=64
	one "  8 deflate threads ($round)" "" o.pftrace.gz CUPTIMERGE_GZIP_THREADS=8
	one "  no thread of its own ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_SEQ_THREAD=0
done
timelines "$CM" o.json.gz
timelines "$CM" o.pftrace.gz
one "-v -o out.pftrace.gz, queue of 64" -v o.pftrace.gz CUPTIMERGE_PFT_SEQ_QUEUE=64
# the CPUs busy over time (bench/cpuuse.py, bins of 50 ms), with -v's time line to place the phases
for o in o.json.gz o.pftrace.gz; do
	echo "== bench/cpuuse.py, -o $o"
	python3 "$(dirname "$0")/cpuuse.py" -b 50 -- "$CM" -v -o "$out/$o" -w "$WIN" "$CPU" 2>"$out/err"
	grep -E "^cuptimerge: (time|CPU after):" "$out/err" | cut -c1-400
	rm -f "$out/$o"
done
