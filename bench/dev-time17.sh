#!/bin/bash
# bench/dev-time17.sh -- where the .pftrace.gz's extra wall goes (issue 25): on 16 CPUs
# (2026-12-06 07:29, bench/dev-ahead17.sh) the .pftrace.gz took ~0.3 s longer than the
# .pftrace while its transcoder's phases (first text to last byte passed on) took 1.01 s
# against 0.95.  Three rounds taking turns of the JSON, the .pftrace, the .json.gz and the
# .pftrace.gz, each with -v: GNU time's wall, then the merge's "time:" and "CPU after:" lines
# (read, joins, plan, copy, render, output done), so the wall after "output done" shows too.
# Binary $CM; the 1 GB pair in $CPU and $WIN.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-time17
for round in 1 2 3; do
	for o in o.json o.pftrace o.json.gz o.pftrace.gz; do
		env "$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" -v -o "$out/$o" -w "$WIN" "$CPU" 2>"$out/err"
		printf '%-16s (%d) rc %d  %s\n' "$o" "$round" $? "$(cat "$out/time")"
		grep -E "^cuptimerge: (time|CPU after):" "$out/err" | sed 's/^cuptimerge: /    /' | cut -c1-400
		rm -f "$out/$o"
	done
done
