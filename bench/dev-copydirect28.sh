#!/bin/bash
# bench/dev-copydirect28.sh -- copydirect28 (the CPU trace's parts encoded on the copy's threads and
# handed to the .pftrace transcoder as batches, not as text: src/mergepftcpu.c) on 16 CPUs, where the
# .pftrace.gz took ~1.22 s against the .json.gz's ~1.05 (issue 25): $ROUNDS rounds (4) taking turns
# of the JSON, the .json.gz, the .pftrace and the .pftrace.gz, each .pftrace with the parts encoded
# and as text (CUPTIMERGE_PFT_PARTS=0, the way before, in the same binary); then -v's time lines
# ("CPU events copied", "window events rendered") and the perfetto lines, both ways, -j 16 (the
# default) and -j 2.  The pair in $CPU and $WIN; GNU time as $T; the binary as $CM.
set -u
CM=${CM:-carry/bench/cuptimerge}
T=${T:-/usr/bin/time}
. "$(dirname "$0")/devrow.sh" dev-copydirect28
for round in $(seq 1 "${ROUNDS:-4}"); do
	one "-o out.json ($round)" "" o.json
	one "-o out.json.gz ($round)" "" o.json.gz
	for o in o.pftrace o.pftrace.gz; do
		one "-o $o, parts encoded ($round)" "" $o
		one "  parts as text ($round)" "" $o CUPTIMERGE_PFT_PARTS=0
	done
done
# vlines J LABEL OUTPUT ENV...: -v's time and copy lines and the transcoder's, of a merge at -j J into
# $out/OUTPUT under the environment ENV
vlines() {
	local j=$1 label=$2 o=$3
	shift 3
	echo "== -v -j $j, -o $o, $label"
	env "$@" "$CM" -v -j "$j" -o "$out/$o" -w "$WIN" "$CPU" 2>&1 |
		grep -E "^cuptimerge: (time|copy):|perfetto:|perfetto by phase" | cut -c1-1100
	rm -f "$out/$o"
}
for j in 16 2; do
	for r in 1 2; do
		vlines $j "($r)" o.json.gz
		vlines $j "parts encoded ($r)" o.pftrace.gz
		vlines $j "parts as text ($r)" o.pftrace.gz CUPTIMERGE_PFT_PARTS=0
	done
done
