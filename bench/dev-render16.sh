#!/bin/bash
# bench/dev-render16.sh -- one run on the 16-core machine (issue 25's write time): whether the
# .pftrace's window phase waits because its threads outnumber the CPUs.  On the direct path
# (pfinsert.c) the render's 16 workers encode the window's groups while three more threads must
# run for them: the render's in-order thread, the sequential part and the passer.  bench/
# dev-direct16.sh (2026-12-06) had the in-order thread waiting 0.23-0.38 s for room in the
# sequential part's queue while the sequential part waited 0.06-0.25 s for batches, even with a
# queue of 16: each wakes the other, and a thread woken when every CPU runs a render worker waits
# for one.  Rows: the JSON and the .pftrace with the render's workers at 16 (-j 16's), 14, 12, 10
# and 8 (CUPTIMERGE_RENDER_THREADS, a testing aid; the same bytes), with the transcoder's workers
# at 12 too (CUPTIMERGE_PFT_THREADS), and -j 12 for the whole run; then gzip.  Three rounds,
# rows taking turns; round 2's .pftrace rows with the transcoder's -v lines.  With $CM_EXP (main
# plus bench/exp/inorder-apply.diff, not landed, `EXP=bench/exp/inorder-apply.diff bench/mkcarry.sh`: CUPTIMERGE_PFT_INORDER_APPLY=1 has the render's
# in-order thread work the window's batches through itself, once the sequential part's thread has
# worked through those queued before them: one thread and one queue fewer) its rows too.  Binary $CM; the
# pair in $CPU and $WIN; GNU time as $T.  ROUNDS, RENDER and RENDER_GZ (counts) and NO_PFT12=1 trim
# it.  With $CM_OLD (bench/mkcarry.sh REV), that build's .pftrace rows too.  About 120 s on the
# 1 GB pair.
set -u
CM=${CM:-carry/bench/cuptimerge}
CM_EXP=${CM_EXP:-}
CM_OLD=${CM_OLD:-}            # a build before, for its .pftrace rows (bench/mkcarry.sh REV)
ROUNDS=${ROUNDS:-3}           # (round 2 has the -v lines)
RENDER=${RENDER:-14 12 10 8}  # the render's workers of the plain rows
RENDER_GZ=${RENDER_GZ:-13 10} # ... of the gzip rows
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-render16
for round in $(seq "$ROUNDS"); do
	v=
	[ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "$v" o.pftrace
	for n in $RENDER; do
		one "  render on $n ($round)" "$v" o.pftrace CUPTIMERGE_RENDER_THREADS=$n
	done
	[ -z "${NO_PFT12:-}" ] && one "  render and transcoder on 12 ($round)" "" o.pftrace CUPTIMERGE_RENDER_THREADS=12 CUPTIMERGE_PFT_THREADS=12
	one "  -j 12 ($round)" "-j 12" o.pftrace # (its -v grep finds nothing)
	if [ -n "$CM_EXP" ]; then
		main=$CM CM=$CM_EXP
		one "  exp: in-order apply ($round)" "$v" o.pftrace CUPTIMERGE_PFT_INORDER_APPLY=1
		one "  exp: in-order apply, render on 13 ($round)" "$v" o.pftrace CUPTIMERGE_PFT_INORDER_APPLY=1 CUPTIMERGE_RENDER_THREADS=13
		one "  exp: as main ($round)" "" o.pftrace
		CM=$main
	fi
	if [ -n "$CM_OLD" ]; then
		main=$CM CM=$CM_OLD
		one "  before: $(basename "$CM_OLD") ($round)" "" o.pftrace
		CM=$main
	fi
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "$v" o.pftrace.gz
	for n in $RENDER_GZ; do
		one "  render on $n ($round)" "$v" o.pftrace.gz CUPTIMERGE_RENDER_THREADS=$n
	done
	if [ -n "$CM_EXP" ]; then
		main=$CM CM=$CM_EXP
		one "  exp: in-order apply ($round)" "$v" o.pftrace.gz CUPTIMERGE_PFT_INORDER_APPLY=1
		CM=$main
	fi
	if [ -n "$CM_OLD" ]; then
		main=$CM CM=$CM_OLD
		one "  before: $(basename "$CM_OLD") ($round)" "" o.pftrace.gz
		CM=$main
	fi
done
timelines "$CM" o.json
timelines "$CM" o.pftrace
echo "== render on 12"
CUPTIMERGE_RENDER_THREADS=12 "$CM" -v -o "$out/o.pftrace" -w "$WIN" "$CPU" 2>&1 | grep -E "^cuptimerge: (time|CPU after):" | cut -c1-600
rm -f "$out/o.pftrace"
