#!/bin/bash
# bench/dev-final23.sh -- the session's .pftrace against the JSON on 16 CPUs (issue 25, 2026-12-06
# afternoon: lanes23, lanes24, no packet writers by default): four rounds taking turns of the
# JSON, the .pftrace, the .json.gz and the .pftrace.gz.  The pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-final23
for round in 1 2 3 4; do
	for o in o.json o.pftrace o.json.gz o.pftrace.gz; do
		one "-o out${o#o} ($round)" "" "$o"
	done
done
