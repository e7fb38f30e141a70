#!/bin/bash
# bench/pftrace.sh -- Perfetto's protobuf output against JSON (issue 25): size,
# write time and peak RSS of the merge written as .json, .json.gz, .pftrace
# and .pftrace.gz; then Perfetto's trace processor (../shared/tools/perfetto,
# v55.3 under Node.js) loading the JSON and the .pftrace: wall time and peak
# RSS of the whole node process.
#
# Usage: bench/pftrace.sh [--ops N] [--jobs J] [--no-tp] [--pretty]
#   (default: --ops 200000 --jobs the CPUs; a gen_trace pair: --seed 1 --devices 2,
#   as bench/bench.sh makes them; --ops 252000 --pretty is its 100M pair)
# Needs ../shared/tools/gen_trace; the trace-processor part node and the
# engine (TP_DIR or $HOME/.cache/perfetto-tp).  Prints figures only; never
# asserts a timing.  Each write is run twice and the faster run printed (the
# inputs are in the page cache for both).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
shared=${SHARED:-$top/../shared}
CM="$top/src/cuptimerge"
ops=200000 jobs=$(nproc) tp=1 pretty=
while [ $# -gt 0 ]; do
	case $1 in
	--ops) ops=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--no-tp) tp=0; shift ;;
	--pretty) pretty=--pretty; shift ;;
	*) echo "usage: $0 [--ops N] [--jobs J] [--no-tp] [--pretty]" >&2; exit 2 ;;
	esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/cuptimerge-pftrace.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$shared/tools/gen_trace" --seed 1 --devices 2 --ops "$ops" $pretty --quiet "$work/cpu.json" "$work/win.json"
echo "gen_trace --seed 1 --devices 2 --ops $ops $pretty: CPU trace $(($(stat -c %s "$work/cpu.json") / 1000000)) MB," \
	"window $(($(stat -c %s "$work/win.json") / 1000000)) MB; -j $jobs; $(nproc) CPUs"
printf '%-14s %10s %8s %8s %8s %12s\n' output "MB" "x JSON" "wall s" "user s" "peak RSS MB"
json_size=
for out in merged.json merged.json.gz merged.pftrace merged.pftrace.gz; do
	best=
	for run in 1 2; do
		/usr/bin/time -f "%e %U %M" -o "$work/time" "$CM" -q -j "$jobs" -w "$work/win.json" \
			-o "$work/$out" "$work/cpu.json"
		read -r wall user rss <"$work/time"
		if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" = 1 ]; then
			best=$wall buser=$user brss=$rss
		fi
	done
	size=$(stat -c %s "$work/$out")
	[ -n "$json_size" ] || json_size=$size
	printf '%-14s %10.1f %8.3f %8s %8s %12.1f\n' "$out" "$(echo "$size / 1000000" | bc -l)" \
		"$(echo "$size / $json_size" | bc -l)" "$best" "$buser" "$(echo "$brss / 1024" | bc -l)"
done
[ $tp = 1 ] || exit 0
TP_DIR=${TP_DIR:-$HOME/.cache/perfetto-tp}
if ! command -v node >/dev/null || [ ! -f "$TP_DIR/trace_processor.wasm" ]; then
	echo "no node or engine in $TP_DIR: no trace-processor figures"
	exit 0
fi
export TP_DIR
printf '%-16s %8s %12s %10s %8s\n' "trace processor" "load s" "peak RSS MB" slices flows
for f in merged.json merged.pftrace; do
	/usr/bin/time -f "%e %M" -o "$work/time" node "$shared/tools/perfetto/tp.mjs" "$work/$f" \
		"select count(*) from slice" "select count(*) from flow" >"$work/tp.out" 2>/dev/null
	read -r wall rss <"$work/time"
	printf '%-16s %8s %12.1f %10s %8s\n' "$f" "$wall" "$(echo "$rss / 1024" | bc -l)" \
		"$(sed -n 2p "$work/tp.out")" "$(sed -n 4p "$work/tp.out")"
done
