#!/bin/bash
# bench/pftrace.sh -- Perfetto's protobuf output against JSON (issue 25): size,
# write time and peak RSS of the merge written as .json, .json.gz, .pftrace
# and .pftrace.gz; then Perfetto's trace processor (../shared/tools/perfetto,
# v55.3 under Node.js) loading the JSON and the .pftrace: wall time and peak
# RSS of the whole node process.
#
# Usage: bench/pftrace.sh [--ops N] [--jobs J] [--no-tp] [--pretty] [--pair DIR] [--bin CM]...
#   (default: --ops 200000 --jobs the CPUs; a gen_trace pair: --seed 1 --devices 2,
#   as bench/bench.sh makes them; --ops 252000 --pretty is its 100M pair)
#   --pair DIR: the pair in DIR (cpu.json, win.json) instead of a new one
#   --bin CM: time this cuptimerge (given twice or more: each in turn, run
#   after run, for a build against another; the files the trace processor
#   loads are the last one's).  Default: src/cuptimerge.
# Needs ../shared/tools/gen_trace; the trace-processor part node and the
# engine (TP_DIR or $HOME/.cache/perfetto-tp).  Prints figures only; never
# asserts a timing.  Each write is run twice and the faster run printed (the
# inputs are in the page cache for both).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
shared=${SHARED:-$top/../shared}
CM="$top/src/cuptimerge"
ops=200000 jobs=$(nproc) tp=1 pretty= pair= bins=() json_size=()
while [ $# -gt 0 ]; do
	case $1 in
	--ops) ops=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--no-tp) tp=0; shift ;;
	--pretty) pretty=--pretty; shift ;;
	--pair) pair=$2; shift 2 ;;
	--bin) bins+=("$2"); shift 2 ;;
	*) echo "usage: $0 [--ops N] [--jobs J] [--no-tp] [--pretty] [--pair DIR] [--bin CM]..." >&2; exit 2 ;;
	esac
done
[ ${#bins[@]} -gt 0 ] || bins=("$CM")
CM=${bins[0]}
work=$(mktemp -d "${TMPDIR:-/tmp}/cuptimerge-pftrace.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -n "$pair" ]; then
	cpu=$pair/cpu.json win=$pair/win.json
	echo "the pair in $pair: CPU trace $(($(stat -L -c %s "$cpu") / 1000000)) MB," \
		"window $(($(stat -L -c %s "$win") / 1000000)) MB; -j $jobs; $(nproc) CPUs"
else
	cpu=$work/cpu.json win=$work/win.json
	"$shared/tools/gen_trace" --seed 1 --devices 2 --ops "$ops" $pretty --quiet "$cpu" "$win"
	echo "gen_trace --seed 1 --devices 2 --ops $ops $pretty: CPU trace $(($(stat -L -c %s "$cpu") / 1000000)) MB," \
		"window $(($(stat -L -c %s "$win") / 1000000)) MB; -j $jobs; $(nproc) CPUs"
fi
for i in "${!bins[@]}"; do echo "build $((i + 1)): ${bins[$i]}"; done
printf '%-6s %-18s %10s %8s %8s %8s %8s %12s\n' build output "MB" "x JSON" "wall s" "user s" "sys s" "peak RSS MB"
for out in merged.json merged.json.gz merged.pftrace merged.pftrace.gz; do
	declare -A best=() buser=() bsys=() brss=() bsize=()
	for run in 1 2; do
		for b in "${bins[@]}"; do # each build in turn, run after run
			/usr/bin/time -f "%e %U %S %M" -o "$work/time" "$b" -q -j "$jobs" -w "$win" \
				-o "$work/$out" "$cpu"
			read -r wall user sys rss <"$work/time"
			bsize[$b]=$(stat -c %s "$work/$out")
			if [ -z "${best[$b]:-}" ] || [ "$(echo "$wall < ${best[$b]}" | bc)" = 1 ]; then
				best[$b]=$wall buser[$b]=$user bsys[$b]=$sys brss[$b]=$rss
			fi
		done
	done
	for i in "${!bins[@]}"; do
		b=${bins[$i]}
		[ "$out" != merged.json ] || json_size[$i]=${bsize[$b]}
		printf '%-6s %-18s %10.1f %8.3f %8s %8s %8s %12.1f\n' "$((i + 1))" "$out" \
			"$(echo "${bsize[$b]} / 1000000" | bc -l)" "$(echo "${bsize[$b]} / ${json_size[$i]}" | bc -l)" "${best[$b]}" \
			"${buser[$b]}" "${bsys[$b]}" "$(echo "${brss[$b]} / 1024" | bc -l)"
	done
	unset best buser bsys brss bsize
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
