#!/bin/bash
# bench/dev-parts32.sh -- the .pftrace.gz's copy phase on 16 CPUs with smaller parts, and with its
# ring and the sequential part's queue both deeper (issue 25).  "copy32" found the copy's ring full
# for 0.30 s of its 0.33 (the walk waiting for a free slot), the 16 workers idle 2.25 s of 5.2, a part
# 2.8 ms on average and the longest 14.1; a ring of 40 alone, or 14 threads, gained nothing.  Here
# $ROUNDS rounds (3), rows taking turns, one binary ($CM): the .json.gz and the .pftrace.gz, the latter
# with parts of 1 and of 2 strides (CUPTIMERGE_PFT_PART_STRIDES; 4 by default: more batches, each its
# strings interned anew, so other bytes), and with the copy's ring of 40 and the sequential part's
# queue of 64 together (CUPTIMERGE_COPY_SLOTS, CUPTIMERGE_PFT_SEQ_QUEUE); then -v's time and copy lines
# of each.
set -u
T=${T:-/usr/bin/time}
CM=${CM:-carry/bench/cuptimerge}
. "$(dirname "$0")/devrow.sh" dev-parts32
rows() {
	one "-o out.json.gz ($1)" "" o.json.gz
	one "-o out.pftrace.gz ($1)" "" o.pftrace.gz
	one "  parts of 1 stride ($1)" "" o.pftrace.gz CUPTIMERGE_PFT_PART_STRIDES=1
	one "  parts of 2 strides ($1)" "" o.pftrace.gz CUPTIMERGE_PFT_PART_STRIDES=2
	one "  ring 40, queue 64 ($1)" "" o.pftrace.gz CUPTIMERGE_COPY_SLOTS=40 CUPTIMERGE_PFT_SEQ_QUEUE=64
}
for round in $(seq 1 "${ROUNDS:-3}"); do
	rows "$round"
done
for v in "" CUPTIMERGE_PFT_PART_STRIDES=1 CUPTIMERGE_PFT_PART_STRIDES=2 "CUPTIMERGE_COPY_SLOTS=40 CUPTIMERGE_PFT_SEQ_QUEUE=64"; do
	echo "== -v, -o o.pftrace.gz $v"
	env $v "$CM" -v -o "$out/o.pftrace.gz" -w "$WIN" "$CPU" 2>&1 | grep -E "^cuptimerge: (time|copy):" | cut -c1-700
	rm -f "$out/o.pftrace.gz"
done
