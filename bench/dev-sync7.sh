#!/bin/bash
# bench/dev-sync7.sh - issue 30 target 1 on the 16-core machine once -o no longer syncs by
# default: `-o out.json` (atomic, not synced) against `> out.json`, `-o out.json --sync`
# (today's durable way: early write-back, fsync before the name, and the directory's after)
# and `-o /dev/null`; then --split=steps:K to about 60 files, plain and with --sync.
# Two rounds taking turns, `sync` and a fresh name before each timed run (untimed), so that
# one run's dirty pages are not the next one's cost.  Run from the repository root with CPU
# and WIN set (the 1 GB pair); binary carry/bench/cuptimerge (BIN=...), GNU time
# carry/bench/time.  Stops starting runs after 50 s (the call has 60).
set -u
: "${CPU:?CPU: the CPU trace}" "${WIN:?WIN: the window}"
BIN=${BIN:-carry/bench/cuptimerge}
TIME=${TIME:-carry/bench/time}
[ -x "$TIME" ] || TIME=/usr/bin/time
export LD_LIBRARY_PATH=carry/bench/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
D=${OUTDIR:-$(dirname "$CPU")}
O=$D/out7.json
S=$D/split7
t0=$(date +%s%N)
elapsed() { echo $((($(date +%s%N) - t0) / 1000000)); } # ms

# one LABEL TARGET [OPTION...]: a timed run; TARGET is file (-o), redirect (>), null
# (-o /dev/null) or split (--split=steps:$K into $S)
one() {
	local label=$1 target=$2
	shift 2
	if [ "$(elapsed)" -gt 50000 ]; then
		echo "$label: skipped (time)"
		return
	fi
	rm -rf "$O" "$S"
	mkdir -p "$S"
	sync
	case $target in
	file) set -- "$@" -o "$O" ;;
	null) set -- "$@" -o /dev/null ;;
	split) set -- "$@" --split=steps:"$K" -o "$S/m_%s.json" ;;
	redirect) ;;
	esac
	"$TIME" -f "$label: %e s wall %U user %S sys %M KB" \
		sh -c 'r=$1; shift; if [ "$r" = redirect ]; then exec "$@" >"$OUT7"; else exec "$@"; fi' sh \
		"$target" "$BIN" -v "$@" -w "$WIN" "$CPU" 2>&1 | grep -E "wall|time:" | sed 's/^cuptimerge: time: /  /'
	[ ! -s "$O" ] || osize=$(stat -c %s "$O")
	[ "$target" != split ] || nsplit=$(ls "$S" | wc -l)
}
osize='?' nsplit='?'
export OUT7=$O

nsteps=$(grep -c '"ProfilerStep#' "$CPU" || true)
K=$(((nsteps + 59) / 60))
[ "$K" -ge 1 ] || K=1
echo "== bench/dev-sync7.sh on $(nproc) CPUs, $(df -h "$D" | tail -n 1 | awk '{print $1, $2}'), $(uname -r);" \
	"$($BIN --version | head -n 1); $nsteps steps, --split=steps:$K"
for round in 1 2; do
	echo "-- round $round ($(elapsed) ms)"
	# the deciding rows first, in case the time runs out
	one "-o out.json" file
	one "> out.json" redirect
	one "-o out.json --sync" file --sync
	one "-o /dev/null" null
	one "--split" split
	one "--split --sync" split --sync
done
echo "output: $osize B; split files: $nsplit"
rm -rf "$O" "$S"
echo "-- done at $(elapsed) ms"
