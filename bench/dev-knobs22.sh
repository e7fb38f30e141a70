#!/bin/bash
# bench/dev-knobs22.sh -- the .pftrace's testing aids on 16 CPUs after the session of 2026-12-06's
# three cuts (issue 25): which of them, if any, moves the wall against the JSON.  Four rounds,
# rows taking turns: the JSON; the .pftrace as landed, with the packet writers off
# (CUPTIMERGE_PFT_WRITERS=0), with the sequential part's queue 16 long (CUPTIMERGE_PFT_SEQ_QUEUE),
# with 14 transcoder workers (CUPTIMERGE_PFT_THREADS), with the window's render on 14
# (CUPTIMERGE_RENDER_THREADS); the same for gzip, less the queue and the render.  Then the -v time
# lines of the JSON and the .pftrace.  The bytes do not depend on any of them.
# Binary $CM; the pair in $CPU and $WIN (the 1 GB pair on the device); GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-knobs22
for round in 1 2 3 4; do
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "" o.pftrace
	one "  writers 0 ($round)" "" o.pftrace CUPTIMERGE_PFT_WRITERS=0
	one "  queue 16 ($round)" "" o.pftrace CUPTIMERGE_PFT_SEQ_QUEUE=16
	one "  transcoder on 14 ($round)" "" o.pftrace CUPTIMERGE_PFT_THREADS=14
	one "  render on 14 ($round)" "" o.pftrace CUPTIMERGE_RENDER_THREADS=14
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	one "  writers 0 ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_WRITERS=0
	one "  transcoder on 14 ($round)" "" o.pftrace.gz CUPTIMERGE_PFT_THREADS=14
done
timelines "$CM" o.json
timelines "$CM" o.pftrace
timelines "$CM" o.pftrace.gz
