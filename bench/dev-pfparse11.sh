#!/bin/bash
# bench/dev-pfparse11.sh -- one run on the 16-core machine (issue 25's write time, pfparse11):
# the .pftrace transcoder's text route, whose elements pfparse.c now reads straight into
# their members with spaces and nested args (the CPU trace's indented elements, which the
# tree's reading took before), against the JSON; rows taking turns, two rounds:
#   - the 1 GB pair merged to JSON (the pace to meet) and to .pftrace (the merge's own
#     route: the GPU elements as records, the CPU trace's as text);
#   - the same .pftrace by the text route (CUPTIMERGE_PFT_TEXT=1: every element as text);
#   - the 1 GB CPU trace alone converted to .pftrace (all of it indented text).
# With $CM0 (a build of main) each .pftrace row runs it too, just before: the A/B of this
# branch on one machine.  Wall, user and sys s and peak RSS by GNU time, the output's size;
# the second round's .pftrace rows with -v (the transcoder's line: the workers' busy time).
# First, the bytes: the 200M pair's .pftrace md5 by the text route (17f1ee1c... on main)
# and by the merge's (c5bc0cd8...), at -j 16 and the default.  Binaries: $CM (this branch)
# [and $CM0]; the 1 GB pair in $CPU and $WIN, the 200M pair in $CPU2 and $WIN2; GNU time
# as $T (or /usr/bin/time).  About 40 s with $CM0, 25 s without.
set -u
CM=${CM:-carry/mid/pfparse11/cuptimerge}
CM0=${CM0:-}
T=${T:-/usr/bin/time}
out=${TMPDIR:-/tmp}/dev-pfparse11.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
echo "$(nproc) CPUs; $(ls -l "$CPU" "$WIN" | awk '{print $5, $9}' | tr '\n' ' ')"
if [ -n "${CPU2:-}" ] && [ -n "${WIN2:-}" ]; then
	for j in 16 ""; do
		at=${j:+-j $j}
		CUPTIMERGE_PFT_TEXT=1 "$CM" $at -w "$WIN2" -o "$out/m.pftrace" "$CPU2" &&
			echo "md5 200M .pftrace text route ${at:-default}: $(md5sum <"$out/m.pftrace")"
		"$CM" $at -w "$WIN2" -o "$out/m.pftrace" "$CPU2" &&
			echo "md5 200M .pftrace merge route ${at:-default}: $(md5sum <"$out/m.pftrace")"
	done
	rm -f "$out/m.pftrace"
fi
# one LABEL BIN VERBOSE OUTPUT WINDOW ENV...: BIN [-w WINDOW] -o OUTPUT $CPU under the
# environment ENV (NAME=VALUE words, or none)
one() {
	local label=$1 bin=$2 v=$3 o=$4 w=$5
	shift 5
	env "$@" "$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$bin" $v -o "$out/$o" \
		${w:+-w "$w"} "$CPU" >"$out/stdout" 2>"$out/err"
	rc=$?
	printf '%-42s rc %d  %s' "$label" "$rc" "$(cat "$out/time")"
	[ -f "$out/$o" ] && printf '  size %s' "$(stat -c %s "$out/$o")"
	echo
	[ -n "$v" ] && grep -E "perfetto:" "$out/err" | sed 's/^cuptimerge: /    /'
	grep -vE "time:|perfetto:|threads:|cut:|merged|CPU after|read:|copy:|window|render|plan" "$out/err" | head -3
	rm -f "$out"/o.* "$out/stdout"
}
# pft LABEL VERBOSE WINDOW ENV...: the .pftrace row, main's build first where there is one
pft() {
	local label=$1 v=$2 w=$3
	shift 3
	[ -n "$CM0" ] && one "main: $label" "$CM0" "$v" o.pftrace "$w" "$@"
	one "$label" "$CM" "$v" o.pftrace "$w" "$@"
}
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "$CM" "" o.json "$WIN"
	pft "-o out.pftrace ($round)" "$v" "$WIN"
	pft "-o out.pftrace, text route ($round)" "$v" "$WIN" CUPTIMERGE_PFT_TEXT=1
	pft "CPU trace alone -o out.pftrace ($round)" "$v" ""
	echo "elapsed $(($(date +%s) - start)) s"
done
