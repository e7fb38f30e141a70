#!/bin/bash
# bench/lanes27.sh -- what the lanes' filter of ties costs (lanes27, BENCHMARKS.md "lanes27"): for
# each pair, callgrind of a -j 2 merge to .pftrace by $CM_OLD and $CM, the whole program's
# instructions and the inclusive ones of the lanes' placing and of the filter's making (the plan's
# notes of the calls, the walk of the spans, the filter made), and each .pftrace's md5; then peak
# RSS of three runs each (GNU time's %M: a noisy shared machine, say so).  Pairs: the directories
# given (each with cpu.json and win.json), by default the 50k and 200M pairs of this machine.
set -u
CM=${CM:-src/cuptimerge}
CM_OLD=${CM_OLD:-/tmp/lanes27/cuptimerge-main}
T=${T:-/usr/bin/time}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ $# -gt 0 ] || set -- /tmp/pfbe11-50k /tmp/cuptimerge-bench/inputs/200M-seed1-ops504000-dev2-pretty
fns='pflanes.c:cm_pflanes_place |gpuplan.c:plan_record |mergepft.c:call_note |gpurows.c:cm_gpu_each_span |pflanetie.c:cm_pfties_new |pflanetie.c:cm_pflanes_tied |pflanetie.c:cm_pflanes_tie_keep '
for d in "$@"; do
	for c in "$CM_OLD" "$CM"; do
		echo "== $(basename "$d"), $c"
		valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$c" -q -j 2 -w "$d/win.json" \
			-o "$out/x.pftrace" "$d/cpu.json" 2>"$out/err"
		grep -E "Collected" "$out/err"
		callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null | grep -E "^ *[0-9,]+ .*($fns)" |
			awk '{print "  " $1, $4}'
		md5sum "$out/x.pftrace" | cut -c1-8
		for r in 1 2 3; do
			"$T" -f "  %e s, max RSS %M KB" "$c" -q -j 2 -w "$d/win.json" -o "$out/x.pftrace" "$d/cpu.json"
		done
	done
done
