#!/bin/bash
# bench/dev-split.sh -- issue 24's merge --split of the 1 GB pair on the 16-core machine, in
# under 60 s: the split (60 files) against the plain merge to a file, each with -v's phases,
# GNU time's wall, user, sys and peak RSS; the split with its files written by the default (-j / 4: 4), 0 (on the
# threads that make the bytes, as before), 2 and 8 writer threads (CUPTIMERGE_SPLIT_WRITERS,
# a benchmarking aid; a binary without it ignores it); and how write(2) into the page cache
# scales on this machine: the 60 files copied by cat into new files, by 1 and by 4 processes.
#
# Run from the repo root on the device machine, the 1 GB pair in $CPU and $WIN, binaries in
# carry/bench (cuptimerge, lib, time).  Asserts nothing.
set -u
. bench/devcommon.sh
D=$(mktemp -d "${TMPDIR:-/tmp}/split6.XXXXXX")
trap 'rm -rf "$D"' EXIT
mkdir -p "$D/sp"
nproc
$C/cuptimerge --version | head -1
steps=$(grep -c '"ProfilerStep#' "$CPU")
k=$(((steps + 59) / 60))
echo "ProfilerStep events: $steps; --split=steps:$k"
run() { # label, then the command's leading words (env and options) before -w
	local label=$1
	shift
	echo "== $label"
	"$T" -f "%e s wall %U user %S sys %M KB" "$@" 2>&1 | grep -E "^cuptimerge: time:|wall"
}
start=$SECONDS
for round in 1 2; do
	run "plain -o out.json" $C/cuptimerge -v -w "$WIN" -o "$D/o.json" "$CPU"
	rm -f "$D/o.json"
	for w in default 0 2 8; do
		if [ $w = default ]; then e=(); else e=(env CUPTIMERGE_SPLIT_WRITERS=$w); fi
		run "split, writers $w" "${e[@]}" $C/cuptimerge -v -w "$WIN" --split=steps:$k -o "$D/sp/m_%s.json" "$CPU"
	done
	echo "elapsed $((SECONDS - start)) s"
done
echo "files: $(ls "$D/sp" | wc -l), $(du -cb "$D"/sp/* | tail -1 | cut -f1) bytes"
# write(2) into the page cache: one writer, then four at once (each a quarter of the files)
mkdir -p "$D/c"
s=$(date +%s.%N)
cat "$D"/sp/* >"$D/c/all"
e=$(date +%s.%N)
echo "cat of the 60 files into one, 1 process: $(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }') s"
rm -f "$D/c/all"
s=$(date +%s.%N)
for q in 0 1 2 3; do
	# shellcheck disable=SC2046
	cat $(ls "$D"/sp/* | awk -v q=$q 'NR % 4 == q') >"$D/c/q$q" &
done
wait
e=$(date +%s.%N)
echo "the same by 4 processes at once: $(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }') s"
[ $((SECONDS - start)) -lt 48 ] && run "split -j 8" $C/cuptimerge -v -j 8 -w "$WIN" --split=steps:$k -o "$D/sp/m_%s.json" "$CPU"
echo "elapsed $((SECONDS - start)) s"
