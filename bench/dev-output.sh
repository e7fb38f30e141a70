#!/bin/bash
# bench/dev-output.sh - issue 30's output target on the 16-core machine: `-o out.json` against
# `> out.json` and `-o /dev/null`, the output path's variants side by side (the benchmarking
# knobs of io/output.c and io/writeback.c, cuptimerge(1) ENVIRONMENT):
#   old    the landed tree's way: write(2) and the write-back on the thread that makes the output
#   wbt    the write-back (sync_file_range) on a thread of its own
#   new    that, and a writing thread taking the write(2) copies (1000 KiB buffers)
#   newal  the same with 1 MiB buffers (each write a page-cache large folio: output.c)
#   nowb   new without the early write-back: the fsync at the end writes it all
# Two rounds taking turns, `sync` and a fresh name before each timed run.  Run from the
# repository root with CPU and WIN set (the 1 GB pair); binary carry/bench/cuptimerge
# (BIN=...), GNU time carry/bench/time.  Stops starting runs after 52 s (the call has 60).
set -u
: "${CPU:?CPU: the CPU trace}" "${WIN:?WIN: the window}"
BIN=${BIN:-carry/bench/cuptimerge}
TIME=${TIME:-carry/bench/time}
[ -x "$TIME" ] || TIME=/usr/bin/time
export LD_LIBRARY_PATH=carry/bench/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
D=${OUTDIR:-$(dirname "$CPU")}
O=$D/out6.json
t0=$(date +%s%N)
elapsed() { echo $((($(date +%s%N) - t0) / 1000000)); } # ms

declare -A knobs=(
	[old]="CUPTIMERGE_WRITER=0 CUPTIMERGE_WBTHREAD=0"
	[wbt]="CUPTIMERGE_WRITER=0 CUPTIMERGE_WBTHREAD=1"
	[new]="CUPTIMERGE_WRITER=1 CUPTIMERGE_WBTHREAD=1"
	[newal]="CUPTIMERGE_WRITER=1 CUPTIMERGE_WBTHREAD=1 CUPTIMERGE_WRITE_UNIT=1024"
	[nowb]="CUPTIMERGE_WRITER=1 CUPTIMERGE_WBTHREAD=1 CUPTIMERGE_WRITEBACK=0"
)

# one VARIANT TARGET: a timed run; TARGET is file (-o), redirect (>) or null (-o /dev/null)
one() {
	local v=$1 target=$2 out
	if [ "$(elapsed)" -gt 52000 ]; then
		echo "$v $target: skipped (time)"
		return
	fi
	rm -f "$O"
	sync
	case $target in
	file) out=$O ;;
	null) out=/dev/null ;;
	redirect) out=- ;;
	esac
	# shellcheck disable=SC2086
	env ${knobs[$v]} "$TIME" -f "$v $target: %e s wall %U user %S sys %M KB" \
		sh -c 'o=$1; shift; if [ "$o" = - ]; then exec "$@" >"$OUT6"; else exec "$@" -o "$o"; fi' sh \
		"$out" "$BIN" -v -w "$WIN" "$CPU" 2>&1 | grep -E "wall|time:" | sed 's/^cuptimerge: time: /  /'
}
export OUT6=$O

echo "== bench/dev-output.sh on $(nproc) CPUs, $(df -h "$D" | tail -n 1 | awk '{print $1, $2}'), $(uname -r)"
for round in 1 2; do
	echo "-- round $round ($(elapsed) ms)"
	# the deciding pairs first, in case the time runs out
	one old file
	one new file
	one old redirect
	one new redirect
	one newal file
	one nowb file
	one wbt file
	one new null
done
rm -f "$O"
echo "-- done at $(elapsed) ms"
