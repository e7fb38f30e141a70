#!/bin/bash
# bench/dev-pfcpu10.sh -- one run on the 16-core machine (the lead's device run,
# issue 25's write time, pfcpu10): on the 1 GB pair, the .pftrace against the
# JSON, plain and gzip, and two settings of the transcoder's pace, rows taking
# turns, two rounds:
#   - the ordered pool's slots (CUPTIMERGE_POOL_SLOTS=40: 40 where 16 workers
#     get 20 by default; the writer's thread waited 0.49 s for a slot in the
#     last call);
#   - batches of 2 MiB of text (CUPTIMERGE_PFT_BATCH; 1 MiB by default): half
#     the batches, the strings defined again half as often (other bytes: its
#     size is printed);
#   - every batch's packets written by the passer (CUPTIMERGE_PFT_PASSER_ONLY=1),
#     as before this branch, where the sequential part writes those of a batch
#     itself when the passer's queue is full.
# Wall, user and sys s and peak RSS by GNU time, the output's size; the second
# round's .pftrace rows with -v (the transcoder's line).  First, the bytes: the
# 200M pair's .pftrace md5 at -j 16 and the default (17f1ee1c... on main) and
# the JSON's (0f39a0c1...).  Binary: $CM (a build of the branch); the 1 GB pair
# in $CPU and $WIN, the 200M pair in $CPU2 and $WIN2; GNU time as $T (or
# /usr/bin/time).  About 35 s.
set -u
CM=${CM:-carry/mid/pfcpu10/cuptimerge}
T=${T:-/usr/bin/time}
out=${TMPDIR:-/tmp}/dev-pfcpu10.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
echo "$(nproc) CPUs; $(ls -l "$CPU" "$WIN" | awk '{print $5, $9}' | tr '\n' ' ')"
if [ -n "${CPU2:-}" ] && [ -n "${WIN2:-}" ]; then
	"$CM" -j 16 -w "$WIN2" -o "$out/m.pftrace" "$CPU2" && echo "md5 200M .pftrace -j 16: $(md5sum <"$out/m.pftrace")"
	"$CM" -w "$WIN2" -o "$out/m.pftrace" "$CPU2" && echo "md5 200M .pftrace default: $(md5sum <"$out/m.pftrace")"
	echo "md5 200M json default: $("$CM" -w "$WIN2" "$CPU2" | md5sum)"
	rm -f "$out/m.pftrace"
fi
one() { # one LABEL VERBOSE OUTPUT ENV...: a merge -o OUTPUT, under the environment ENV (NAME=VALUE, or none)
	local label=$1 v=$2 o=$3
	shift 3
	env "$@" "$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" $v -o "$out/$o" -w "$WIN" "$CPU" >"$out/stdout" 2>"$out/err"
	rc=$?
	printf '%-34s rc %d  %s' "$label" "$rc" "$(cat "$out/time")"
	[ -f "$out/$o" ] && printf '  size %s' "$(stat -c %s "$out/$o")"
	echo
	[ -n "$v" ] && grep -E "perfetto:" "$out/err" | sed 's/^cuptimerge: /    /'
	grep -vE "time:|perfetto:|threads:|cut:|merged|CPU after|read:|copy:|window|render|plan" "$out/err" | head -3
	rm -f "$out"/o.* "$out/stdout"
}
for round in 1 2; do
	v=
	[ "$round" = 2 ] && v=-v
	one "-o out.json ($round)" "" o.json
	one "-o out.pftrace ($round)" "$v" o.pftrace
	one "-o out.pftrace, 40 slots ($round)" "$v" o.pftrace CUPTIMERGE_POOL_SLOTS=40
	one "-o out.pftrace, 2 MiB batches ($round)" "$v" o.pftrace CUPTIMERGE_PFT_BATCH=2097152
	one "-o out.pftrace, passer only ($round)" "$v" o.pftrace CUPTIMERGE_PFT_PASSER_ONLY=1
	one "-o out.json.gz ($round)" "" o.json.gz
	one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
	echo "elapsed $(($(date +%s) - start)) s"
done
