#!/bin/bash
# bench/dev-spans22.sh -- pfspans22 on 16 CPUs (issue 25): the spans' pieces in the window's render
# pool, after its pieces, against a pool of their own after the window's has ended, in the same
# binary (CUPTIMERGE_PFT_SPANS_ALONG=0, the way before; the same bytes).  Four rounds, rows taking
# turns: the JSON, the .pftrace both ways, the JSON gzip, the .pftrace.gz both ways; then the -v
# lines of the .pftrace both ways and the -v time lines.
# Binary $CM; the pair in $CPU and $WIN; GNU time as $T.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-spans22
ab_rounds 4 "spans after the pool, as before" CUPTIMERGE_PFT_SPANS_ALONG=0
one "-o out.pftrace (-v)" -v o.pftrace
one "  spans after the pool, as before (-v)" -v o.pftrace CUPTIMERGE_PFT_SPANS_ALONG=0
timelines "$CM" o.json
timelines "$CM" o.pftrace
