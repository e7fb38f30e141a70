#!/bin/bash
# bench/cut.sh -- what cutting costs (issue 24): the plain merge against --clip and --steps,
# in one run.
#
# Usage: bench/cut.sh [--ops N] [--repeat N] [--seed N] [--cuptimerge PATH] [--base PATH] [--split-only]
#                     [--sync]
#
# Makes (once; cached in $BENCH_DIR, default /tmp/cuptimerge-bench/cut) a gen_trace pair of
# N profiled ops (default 200,000: a ~80 MB CPU trace, --pretty --devices 2, as bench.sh),
# then times with /usr/bin/time -f "%e %M" (wall seconds, peak RSS KB), the fastest of
# --repeat rounds (default 3) each:
#   the plain merge, the merge with --clip and with --steps of two steps from the middle of
#   the trace, to /dev/null and to -o FILE.json.gz; and the two-step cut of the CPU trace
#   alone (no window) against a plain copy of it (cuptimerge TRACE, no options); and the
#   merged trace (made once, before the rounds) alone: copied, and --split=steps:K into at
#   most 64 files (K: the steps over 60, rounded up), to $dir/split/; and the merge itself
#   split in its own pass (-w, --split=steps:K, to $dir/msplit/), against the plain merge and
#   the two-step cut to a file (-o out.json: each atomic and not synced, as a split's files
#   are by default; with --sync, every row's files synced alike, as cuptimerge --sync does).
# Each row also gets the user + system CPU seconds of its fastest round (%U + %S).
# --base PATH: an older binary, whose plain merge and merge --split to files run in the same
# rounds, taking turns with the others (so that one run compares two builds).
# --split-only: only the merge --split rows and the plain merge to a file (and --base's), and
# the split with --sync with its files' write-back left to the kernel until each file's fsync
# (CUPTIMERGE_WRITEBACK=0; without --sync nothing is synced, and the setting means nothing).
# --sync: pass --sync to every row (--base's too, which must know it), so that the rows stay
# like for like: the files of a split and the plain merge's file all synced.
# The 1 GB pair of issue 24 (2,520,000 ops: a 1 GB CPU trace and a 1.5 GB window, as
# bench/bench.sh's 1G) on the 16-core GPU machine, from a folder CARRY as bench/gpu-machine.sh
# describes it (the binary, its libraries, GNU time, shared/tools/gen_trace):
#   LD_LIBRARY_PATH=$CARRY/lib SHARED=$CARRY/shared BENCH_DIR=/tmp/cut \
#     bench/cut.sh --ops 2520000 --repeat 2 --cuptimerge $CARRY/cuptimerge
#   (with --base $CARRY/cuptimerge-base --split-only: the split against the plain merge, old and new)
# (about 90 s to generate the pair, then some 3 minutes; the disk needs ~9 GB.)
# gen_trace's window lies within its CPU trace's span, so --clip keeps nearly every event:
# the figure is the cost of the cut's bookkeeping (a note an API call as the window is read,
# the table built from them, a lookup a record in the plan and the render), its worst case.
# --steps notes every CPU event too (25 bytes, in a temporary file) and reads the notes twice
# more; it writes far less. The outputs' sizes are printed.
# It prints figures and never asserts timings; exit 1 when a command failed.
# Environment: BENCH_DIR, SHARED (default ../shared beside the checkout).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
ops=200000 repeat=3 seed=1 cm=$top/src/cuptimerge base='' only='' sync=''
while [ $# -gt 0 ]; do
	case $1 in
	--ops) ops=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--cuptimerge) cm=$2; shift 2 ;;
	--base) base=$2; shift 2 ;;
	--split-only) only=1; shift ;;
	--sync) sync=--sync; shift ;;
	*) echo "bench/cut.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
shared=${SHARED:-$top/../shared}
dir=${BENCH_DIR:-/tmp/cuptimerge-bench/cut}
mkdir -p "$dir"
cpu=$dir/cpu_$ops.json win=$dir/win_$ops.json
if [ ! -s "$cpu" ] || [ ! -s "$win" ]; then
	"$shared/tools/gen_trace" --seed "$seed" --ops "$ops" --pretty --devices 2 --quiet "$cpu" "$win"
fi
echo "pair: $ops ops, CPU trace $(($(stat -L -c %s "$cpu") / 1000000)) MB, window $(($(stat -L -c %s "$win") / 1000000)) MB; $(nproc) CPUs; $("$cm" --version | head -1)"
# The commands run in rounds, each command once a round, so that a shared machine's load
# falls on all of them alike; each keeps its fastest of the $repeat rounds.
nsteps=$(grep -c '"ProfilerStep#' "$cpu" || true)
mid=$((nsteps / 2)) mid2=$((nsteps / 2 + 1))
echo "ProfilerStep events: $nsteps; --steps=$mid-$mid2"
[ -n "$only" ] || "$cm" -q -w "$win" -o "$dir/merged.json" "$cpu"
k=$(((nsteps + 59) / 60))
mkdir -p "$dir/split" "$dir/msplit"
labels=("plain, -o /dev/null" "--clip, -o /dev/null" "--steps (2), -o /dev/null"
	"plain, -o out.json.gz" "--clip, -o out.json.gz" "--steps (2), -o out.json.gz"
	"trace alone, copy" "trace alone, --steps (2)" "merged alone, copy" "merged, --split=steps:$k"
	"merged, --split, .json.gz" "plain, -o out.json" "--steps (2), -o out.json"
	"merge --split=steps:$k (-w)" "merge --split, .json.gz")
cmds=("-w $win -o /dev/null $cpu" "--clip -w $win -o /dev/null $cpu" "--steps=$mid-$mid2 -w $win -o /dev/null $cpu"
	"-w $win -o $dir/out.json.gz $cpu" "--clip -w $win -o $dir/out.json.gz $cpu"
	"--steps=$mid-$mid2 -w $win -o $dir/out.json.gz $cpu" "-o /dev/null $cpu" "--steps=$mid-$mid2 -o /dev/null $cpu"
	"-o /dev/null $dir/merged.json" "--split=steps:$k -o $dir/split/m_%s.json $dir/merged.json"
	"--split=steps:$k -o $dir/split/z_%s.json.gz $dir/merged.json"
	"-w $win -o $dir/out.json $cpu" "--steps=$mid-$mid2 -w $win -o $dir/out.json $cpu"
	"--split=steps:$k -w $win -o $dir/msplit/m_%s.json $cpu"
	"--split=steps:$k -w $win -o $dir/msplit/z_%s.json.gz $cpu")
# the binary of each row: this one's, or --base's; and what runs it (env, for a setting)
bins=() pre=()
for i in "${!cmds[@]}"; do bins[i]=$cm pre[i]=''; done
if [ -n "$only" ]; then # the plain merge to a file and the merge's split, plain and gzip
	keep=(11 13 14 3)
	nl=() nc=()
	for i in "${keep[@]}"; do nl+=("${labels[$i]}"); nc+=("${cmds[$i]}"); done
	labels=("${nl[@]}" "merge --split --sync, wb off") cmds=("${nc[@]}" "--sync ${nc[1]}") bins=()
	for i in "${!cmds[@]}"; do bins[i]=$cm pre[i]=''; done
	pre[${#cmds[@]} - 1]="env CUPTIMERGE_WRITEBACK=0"
fi
if [ -n "$base" ]; then # the old binary's plain merge and split to files, in the same rounds
	n=${#cmds[@]}
	labels+=("plain, -o out.json (--base)" "merge --split=steps:$k (--base)")
	cmds+=("-w $win -o $dir/out.json $cpu" "--split=steps:$k -w $win -o $dir/msplit/m_%s.json $cpu")
	bins[n]=$base bins[n+1]=$base pre[n]='' pre[n+1]=''
fi
declare -a best bestkb bestcpu
for _ in $(seq "$repeat"); do
	for i in "${!cmds[@]}"; do
		# shellcheck disable=SC2086
		/usr/bin/time -f "%e %M %U %S" -o "$dir/time" ${pre[$i]} "${bins[$i]}" -q $sync ${cmds[$i]} >/dev/null ||
			{ echo "${labels[$i]}: failed" >&2; exit 1; }
		read -r s kb us ss <"$dir/time"
		if [ -z "${best[$i]:-}" ] || awk -v a="$s" -v b="${best[$i]}" 'BEGIN { exit !(a < b) }'; then
			best[$i]=$s bestkb[$i]=$kb bestcpu[$i]=$(awk -v u="$us" -v s="$ss" 'BEGIN { printf "%.2f", u + s }')
		fi
	done
done
for i in "${!cmds[@]}"; do
	printf '%-32s %6s s %8s KB %7s s user+sys\n' "${labels[$i]}" "${best[$i]}" "${bestkb[$i]}" "${bestcpu[$i]}"
done
if [ -z "$only" ]; then
	"$cm" -q --steps=$mid-$mid2 -w "$win" -o "$dir/out.json" "$cpu"
	echo "two-step merge: $(stat -c %s "$dir/out.json") bytes; merged trace $(stat -c %s "$dir/merged.json") bytes," \
		"split into $(ls "$dir/split"/m_* | wc -l) files of $(du -cb "$dir/split"/m_* | tail -1 | cut -f1) bytes;"
fi
echo "the merge split into $(ls "$dir/msplit"/m_* | wc -l) files of $(du -cb "$dir/msplit"/m_* | tail -1 | cut -f1) bytes;" \
	"uptime: $(uptime)"
rm -rf "$dir/split" "$dir/msplit" "$dir/merged.json"
rm -f "$dir/out.json.gz" "$dir/out.json"
