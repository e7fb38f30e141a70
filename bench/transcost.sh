#!/bin/bash
# bench/transcost.sh [--pair DIR] [--bin BINARY] -- what a CPU event costs each output, in
# instructions: callgrind (-j 1) on the CPU trace of a pair converted alone, to JSON and to
# .pftrace, and the .pftrace's share for the parse of the event's text against the rest of its
# encoding (BENCHMARKS.md "study33").  Prints figures only; exit 1 when a run failed, 2 for usage.
#
# The rows, each an inclusive count over the run's every thread divided by the CPU events
# (cm_pf_parse_flat's calls in the .pftrace's run: one an element of traceEvents, the CPU
# trace's parts' and the text's alike):
#   C1's read        cm_cpuscan_run_cut (the first pass, both outputs: the same code)
#   the JSON's copy  cm_cpucopy_run of the JSON run (the second pass: bytes, not parsed)
#   the .pftrace's   cm_cpucopy_run of the .pftrace run (the second pass: each event parsed
#                    and encoded on the copy's threads, src/mergepftcpu.c), then of it
#                    cm_pf_parse_flat (the parse) and the rest (the encoding, the lanes, the
#                    sequential part's packets)
#   whole run        every instruction of the run
# DIR holds cpu.json (default /tmp/pfbe11-50k, the BENCHMARKS' 50k pair: gen_trace --seed 1
# --ops 50000 --pretty --devices 2); BINARY defaults to src/cuptimerge of this tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
PAIR=/tmp/pfbe11-50k BIN=$here/../src/cuptimerge
while [ $# -gt 0 ]; do
	case $1 in
	--pair) PAIR=$2; shift 2 ;;
	--bin) BIN=$2; shift 2 ;;
	*) echo "usage: $0 [--pair DIR] [--bin BINARY]" >&2; exit 2 ;;
	esac
done
[ -r "$PAIR/cpu.json" ] || { echo "transcost.sh: no $PAIR/cpu.json" >&2; exit 2; }
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
	{ echo "transcost.sh: needs valgrind (callgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ext in json pftrace; do
	valgrind --tool=callgrind --callgrind-out-file="$work/cg.$ext" "$BIN" -j 1 -o "$work/o.$ext" \
		"$PAIR/cpu.json" 2>"$work/vg.$ext" || { tail -3 "$work/vg.$ext" >&2; exit 1; }
	callgrind_annotate --tree=caller --inclusive=yes "$work/cg.$ext" >"$work/tree.$ext" 2>/dev/null
done
# incl EXT FUNCTION and calls EXT FUNCTION: the function's inclusive Ir in run EXT, and its
# calls, summed over the calls to it (the "<" lines above its own in callgrind_annotate's
# caller tree: a call's cost is inclusive, where a function's own lines are split by the file
# of the code inlined into it); 0 when it did not run
sum_callers() {
	awk -v f=":$2" -v col="$3" '
		/^ *[0-9,]+ .*< / { c = $1; gsub(",", "", c); k = 0
			if (match($0, /\([0-9,]+x\)/)) { k = substr($0, RSTART + 1, RLENGTH - 3); gsub(",", "", k) }
			ir += c; n += k; next }
		/^ *[0-9,]+ .*\*  / { split($0, w, "\\*  "); split(w[2], x, " ")
			if (substr(x[1], length(x[1]) - length(f) + 1) == f) { IR += ir; N += n } }
		{ ir = 0; n = 0 }
		END { print (col == 1 ? IR : N) + 0 }' "$work/tree.$1"
}
incl() { sum_callers "$1" "$2" 1; }
calls() { sum_callers "$1" "$2" 2; }
total() { sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' "$work/tree.$1" | tr -d , | head -1; }
ev=$(calls pftrace cm_pf_parse_flat)
[ "$ev" -gt 0 ] || { echo "transcost.sh: no CPU event parsed in the .pftrace run" >&2; exit 1; }
printf 'CPU trace %s: %d events (%s)\n' "$PAIR/cpu.json" "$ev" "$("$BIN" --version | head -1)"
row() { awk -v t="$1" -v n="$2" -v ev="$ev" 'BEGIN { printf "  %-34s %8.0f instructions an event\n", t, n / ev }'; }
row "C1's read (either output)" "$(incl pftrace cm_cpuscan_run_cut)"
row "the JSON's copy" "$(incl json cm_cpucopy_run)"
copy=$(incl pftrace cm_cpucopy_run) parse=$(incl pftrace cm_pf_parse_flat)
row "the .pftrace's copy" "$copy"
row "  of it the parse" "$parse"
row "  of it the rest" "$((copy - parse))"
row "whole run, JSON" "$(total json)"
row "whole run, .pftrace" "$(total pftrace)"
