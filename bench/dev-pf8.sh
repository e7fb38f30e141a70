#!/bin/bash
# bench/dev-pf8.sh -- one run on the 16-core machine (the lead's device run,
# issue 25's last target): on the 1 GB pair, does .pftrace take no longer to
# write than the JSON, plain and gzip?  Times -o out.json against
# -o out.pftrace, .json.gz against .pftrace.gz, and standard output (JSON
# > /dev/null against --format=perfetto > /dev/null), 2 rounds each, the
# two formats alternating, the outputs deleted between runs; the last
# round with -v, for the transcoder's line (is one thread still the pace?).
# Binary: carry/mid/pf8/cuptimerge (built from this branch); the pair in
# $CPU and $WIN; GNU time as $T (or /usr/bin/time).  About 45 s.
set -u
CM=${CM:-carry/mid/pf8/cuptimerge}
T=${T:-/usr/bin/time}
out=${TMPDIR:-/tmp}/dev-pf8.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
echo "$(nproc) CPUs; $(ls -l "$CPU" "$WIN" | awk '{print $5, $9}' | tr '\n' ' ')"
one() { # one LABEL VERBOSE ARGS...: a merge, its time (and -v lines)
	label=$1 v=$2
	shift 2
	"$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" $v "$@" -w "$WIN" "$CPU" >"$out/stdout" 2>"$out/err"
	rc=$?
	printf '%-34s rc %d  %s' "$label" "$rc" "$(cat "$out/time")"
	for f in "$out"/o.*; do [ -f "$f" ] && printf '  size %s' "$(stat -c %s "$f")"; done
	[ -s "$out/stdout" ] && printf '  stdout %s' "$(stat -c %s "$out/stdout")"
	echo
	[ -n "$v" ] && grep -E "perfetto:|time:" "$out/err" | sed 's/^cuptimerge: /    /'
	grep -vE "time:|perfetto:|threads:|cut:|merged|CPU after" "$out/err" | head -3
	rm -f "$out"/o.* "$out/stdout"
}
for round in 1 2; do
	v=; [ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "$v" -o "$out/o.json"
	one "-o out.pftrace ($round)" "$v" -o "$out/o.pftrace"
	one "-o out.json.gz ($round)" "$v" -o "$out/o.json.gz"
	one "-o out.pftrace.gz ($round)" "$v" -o "$out/o.pftrace.gz"
done
for round in 1 2; do
	"$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" -w "$WIN" "$CPU" >/dev/null 2>"$out/err"
	echo "json > /dev/null ($round)            rc $?  $(cat "$out/time")"
	"$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" --format=perfetto -w "$WIN" "$CPU" >/dev/null 2>"$out/err"
	echo "pftrace > /dev/null ($round)         rc $?  $(cat "$out/time")"
done
