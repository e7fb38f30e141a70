#!/bin/bash
# bench/dev-pf11.sh -- one run on the 16-core machine (issue 25's last
# target: the .pftrace no longer to write than the JSON).  pf11: the
# window's events reach the .pftrace encoder with their members, as the
# render wrote them (gpu/gpumembers.h), instead of being parsed back from
# their text.  On the 1 GB pair, rows taking turns, two rounds: -o out.json;
# -o out.pftrace; the same with CUPTIMERGE_PFT_REPARSE=1 (each element
# parsed from its text, the way before: the same call's A/B, the same
# bytes); and the 200M pair's .pftrace both ways.  Wall, user and sys s and
# peak RSS by GNU time, the output's size and md5 (the two ways must agree);
# the last round's .pftrace rows with -v (the transcoder's line).  Binary:
# $CM (a build of the branch); the 1 GB pair in $CPU and $WIN, the 200M
# pair in $CPU2 and $WIN2; GNU time as $T (or /usr/bin/time).  About 35 s.
set -u
CM=${CM:-carry/mid/pf11/cuptimerge}
T=${T:-/usr/bin/time}
out=${TMPDIR:-/tmp}/dev-pf11.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
echo "$(nproc) CPUs; $(ls -l "$CPU" "$WIN" "$CPU2" "$WIN2" | awk '{print $5, $9}' | tr '\n' ' ')"
one() { # one LABEL VERBOSE OUTPUT CPU WIN: a merge into $out/OUTPUT
	local label=$1 v=$2 o=$3 cpu=$4 win=$5
	"$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" $v -o "$out/$o" -w "$win" "$cpu" >"$out/stdout" 2>"$out/err"
	rc=$?
	printf '%-34s rc %d  %s' "$label" "$rc" "$(cat "$out/time")"
	[ -f "$out/$o" ] && printf '  size %s md5 %.8s' "$(stat -c %s "$out/$o")" "$(md5sum <"$out/$o")"
	echo
	[ -n "$v" ] && grep -E "perfetto:" "$out/err" | sed 's/^cuptimerge: /    /'
	grep -vE "time:|perfetto:|threads:|cut:|merged|CPU after|read:|copy:|window|render|plan" "$out/err" | head -3
	rm -f "$out"/o.* "$out/stdout"
}
for round in 1 2; do
	v=; [ "$round" = 2 ] && v=-v
	one "1G -o out.json ($round)" "" o.json "$CPU" "$WIN"
	one "1G -o out.pftrace ($round)" "$v" o.pftrace "$CPU" "$WIN"
	CUPTIMERGE_PFT_REPARSE=1 one "1G -o out.pftrace, reparse ($round)" "$v" o.pftrace "$CPU" "$WIN"
	one "200M -o out.pftrace ($round)" "" o.pftrace "$CPU2" "$WIN2"
	CUPTIMERGE_PFT_REPARSE=1 one "200M -o out.pftrace, reparse ($round)" "" o.pftrace "$CPU2" "$WIN2"
done
