#!/bin/bash
# bench/dev-pf10.sh -- one run on the 16-core machine (the lead's device run,
# issue 25's last target): on the 1 GB pair, does .pftrace take no longer to
# write than the JSON, plain and gzip?  Rows taking turns, two rounds:
# -o out.json against -o out.pftrace, .json.gz against .pftrace.gz, and
# standard output to /dev/null (JSON against --format=perfetto); wall, user
# and sys s and peak RSS by GNU time, the output's size; the last round's
# .pftrace rows with -v (the transcoder's line).  Binary: $CM (a build of
# the branch); the 1 GB pair in $CPU and $WIN; GNU time as $T (or
# /usr/bin/time).  pf10: the .pftrace rows of round 2 with
# -v both plain and gzip (the transcoder's line says which batches came
# inserted as batches: "batches inserted" in its perfetto: line); and the
# .pftrace the old way (CUPTIMERGE_PFT_TEXT=1: the window's events as
# text, walked and cut by the transcoder), for the same call's A/B.
# About 35 s.
set -u
CM=${CM:-carry/mid/pf10/cuptimerge}
T=${T:-/usr/bin/time}
out=${TMPDIR:-/tmp}/dev-pf10.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
echo "$(nproc) CPUs; $(ls -l "$CPU" "$WIN" | awk '{print $5, $9}' | tr '\n' ' ')"
one() { # one LABEL VERBOSE OUTPUT ARGS...: a merge (OUTPUT: a file name, or - for > /dev/null)
	local label=$1 v=$2 o=$3
	shift 3
	if [ "$o" = - ]; then
		"$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" $v "$@" -w "$WIN" "$CPU" >/dev/null 2>"$out/err"
	else
		"$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" $v "$@" -o "$out/$o" -w "$WIN" "$CPU" >"$out/stdout" 2>"$out/err"
	fi
	rc=$?
	printf '%-30s rc %d  %s' "$label" "$rc" "$(cat "$out/time")"
	[ "$o" != - ] && [ -f "$out/$o" ] && printf '  size %s' "$(stat -c %s "$out/$o")"
	echo
	[ -n "$v" ] && grep -E "perfetto:" "$out/err" | sed 's/^cuptimerge: /    /'
	grep -vE "time:|perfetto:|threads:|cut:|merged|CPU after|read:|copy:|window|render|plan" "$out/err" | head -3
	rm -f "$out"/o.* "$out/stdout"
}
for round in 1 2; do
	v=; [ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "$v" o.pftrace
	CUPTIMERGE_PFT_TEXT=1 one "-o out.pftrace, text ($round)" "$v" o.pftrace
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "$v" o.pftrace.gz
	one "json > /dev/null ($round)" "" -
	one "pftrace > /dev/null ($round)" "" - --format=perfetto
done
