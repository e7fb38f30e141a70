#!/bin/bash
# bench/dev-perf16.sh -- where the CPU of a 16-CPU merge goes, by perf (issue 25): the 1 GB
# pair's .pftrace took 16-18 user s on an H100 host where the JSON took 8.6-9.4 (bench/
# dev-render16.sh, 2026-12-06 04:49), about twice what the two cost on 2 CPUs (200M pair x 5).
# First rows (two rounds taking turns): the JSON and the .pftrace with the render's pieces of 4
# blocks (the default), 1, 2 and 8 (CUPTIMERGE_PFT_PIECE, a testing aid: the same bytes), and
# with every pool's ring of 40 slots, not 20 (CUPTIMERGE_POOL_SLOTS: the render's pieces further
# ahead of the in-order thread, in case its pieces come in waves): the
# 16-CPU run's -v had the window phase's two halves apart, not together (the in-order thread
# waiting for room in the sequential part's queue 0.27-0.30 s, the sequential part waiting for
# batches 0.21-0.26 s of a 0.49 s phase), as if the render's pieces came in waves.
# Then for the JSON and the .pftrace: perf stat's task clock, context switches and migrations, then
# perf record's samples (cpu-clock, no call graphs) by symbol, and by thread.  perf comes from
# the build machine in carry/bench/perf with its libraries in carry/bench/perflib (bench/
# mkcarry.sh PERF=1); where the device forbids it, the script says so and ends.  Binary $CM; the
# pair in $CPU and $WIN.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
P=carry/bench/perf
. "$(dirname "$0")/devrow.sh" dev-perf16
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "$v" o.pftrace
	for n in 1 2 8; do
		one "  pieces of $n blocks ($round)" "$v" o.pftrace CUPTIMERGE_PFT_PIECE=$n
	done
	one "  pools of 40 slots ($round)" "$v" o.pftrace CUPTIMERGE_POOL_SLOTS=40
done
export LD_LIBRARY_PATH=carry/bench/perflib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "$(nproc) CPUs; perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
"$P" --version || { echo "dev-perf16.sh: no perf here"; exit 0; }
for f in o.json o.pftrace; do
	echo "== perf stat, -o $f"
	"$P" stat -e task-clock,context-switches,cpu-migrations,page-faults -- "$CM" -o "$out/$f" -w "$WIN" "$CPU" 2>&1 |
		grep -E "task-clock|context|migrations|faults|elapsed|user|sys"
	rm -f "$out/$f"
done
for f in o.json o.pftrace; do
	perfrec $f 0.4 60 || continue
	echo "-- by dso"
	"$P" report -i "$out/perf.data" --no-children --sort dso -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -10
done
