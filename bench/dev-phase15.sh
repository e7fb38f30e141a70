#!/bin/bash
# bench/dev-phase15.sh -- one run on the 16-core machine (issue 25's write time): where the
# .pftrace's waits fall.  On 16 CPUs the writer's thread waits 0.3-0.5 s for a pool slot while
# the sequential part waits 0.4-0.6 s for batches and the workers idle ~10 s (BENCHMARKS.md,
# 2026-12-05); -v's second perfetto line (pfphase15) splits those figures by phase: the text
# before the inserted batches (the CPU trace's events, as text: the writer's thread copies it
# into chunks that the workers walk and encode), the inserted batches (the window's events,
# encoded by the render's pool and inserted as records), the text after (spans, profiler
# spans, the end), each with when it ran (the writer's thread, in order, passed on), and for
# gzip what the passer's sink waited for inside the gzip stream (its deflate workers) and spent
# writing the blocks on.
# On the 1 GB pair, rows taking turns, two rounds: the JSON, the .pftrace, the JSON gzip and
# the .pftrace.gz.  Wall, user and sys s and peak RSS by GNU time, the output's size and md5
# prefix (38185c35 for the .pftrace); round 2's .pftrace rows with the transcoder's two -v
# lines (devrow.sh's one: the line by phase a phase a line), then the -v time lines ("CPU
# events copied" to "window events rendered": the window's phase, as the merge sees it).
# Binary: $CM; the 1 GB pair in $CPU and $WIN; GNU time as $T (or /usr/bin/time).  About 40 s.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-phase15
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "$v" o.pftrace
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "$v" o.pftrace.gz
done
timelines "$CM" o.json
timelines "$CM" o.pftrace
