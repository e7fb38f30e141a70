#!/bin/bash
# bench/dev-knobs29.sh -- the .pftrace.gz's copy phase on 16 CPUs (issue 25): fewer copy threads
# (CUPTIMERGE_COPY_THREADS=12), larger parts (CUPTIMERGE_PFT_PART_STRIDES=8 and 16: fewer batches for the
# serial chain; other bytes), the render on 14 threads (CUPTIMERGE_RENDER_THREADS=14), the passer's queue of 16
# buffers (CUPTIMERGE_PFT_PASS_QUEUE, 4), alone, with two packet writers, and with four and none written in order
# (CUPTIMERGE_PFT_PASSER_ONLY=1); $ROUNDS rounds (4) taking turns with
# the .json.gz and main; then -v's time lines of main and of parts of 16 strides, and -v's transcoder and gzip
# lines of the .json.gz, main and the queue of 16.
# The pair in $CPU and $WIN; GNU time as $T; the binary $CM.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-knobs29
for round in $(seq 1 "${ROUNDS:-4}"); do
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o o.pftrace.gz, main ($round)" "" o.pftrace.gz
	one "  12 copy threads ($round)" "" o.pftrace.gz CUPTIMERGE_COPY_THREADS=12
	one "  parts of 8 strides ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PART_STRIDES=8
	one "  parts of 16 strides ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PART_STRIDES=16
	one "  render on 14 ($round)" "" o.pftrace.gz CUPTIMERGE_RENDER_THREADS=14
	one "  passer's queue of 16 ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PASS_QUEUE=16
	one "  queue of 16, 2 writers ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PASS_QUEUE=16 CUPTIMERGE_PFT_WRITERS=2
	one "  q 16, 4 writers, none in order ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_PASS_QUEUE=16 CUPTIMERGE_PFT_WRITERS=4 \
		CUPTIMERGE_PFT_PASSER_ONLY=1
done
one "-v -o out.json.gz" -v o.json.gz
one "-v -o out.pftrace.gz" -v o.pftrace.gz
one "-v  passer's queue of 16" -v o.pftrace.gz CUPTIMERGE_PFT_PASS_QUEUE=16
one "-v  q 16, 4 writers, none in order" -v o.pftrace.gz CUPTIMERGE_PFT_PASS_QUEUE=16 CUPTIMERGE_PFT_WRITERS=4 \
	CUPTIMERGE_PFT_PASSER_ONLY=1
for r in 1 2; do
	timelines "$CM" o.pftrace.gz
	echo "(parts of 16 strides)"
	CUPTIMERGE_PFT_PART_STRIDES=16 timelines "$CM" o.pftrace.gz
done
