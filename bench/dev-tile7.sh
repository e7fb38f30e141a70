#!/bin/bash
# bench/dev-tile7.sh -- helper tile7's mid-session run on the 16-core GPU machine (60 s):
# the figures that size bench/scale.sh's 10 GB pipe there.  Run from the repo root with
# carry/bench as bench/devcommon.sh describes ($CPU, $WIN: the 1 GB pair).  bench/tile-pair
# is carry/bench/tile-pair when the lead built it, else compiled here from bench/tile_pair.c
# and tile_scan.c (standalone: libc and pthreads) when there is a C compiler.
#  1. tile-pair alone on the 1 GB pair, 2 copies to /dev/null: its scan and each output
#     stream's MB/s (the pipe must never wait for it);
#  2. bench/scale.sh --only pipe on a 2 GB pair (a 50M gen_trace pair, ~6 s, tiled 40x,
#     gzip'd by 16 tile-pair | gzip -1 pipes), under a 42 s limit: how fast the .gz
#     inputs are made, and the pipe's pace (zcat's feed, gzip -1's reads of the merged
#     output, cuptimerge's RSS and the disk it used), which says how far 10 GB gets in 9 min.
set -u
. bench/devcommon.sh
W=$(mktemp -d /tmp/tile7.XXXXXX)
trap 'rm -rf "$W"' EXIT
TP=$C/tile-pair
if ! [ -x "$TP" ]; then
	TP=$W/tile-pair
	cc -O2 -pthread -o "$TP" bench/tile_pair.c bench/tile_scan.c 2>"$W/cc.err" || { echo "no tile-pair: $(head -c 300 "$W/cc.err")"; exit 1; }
fi
echo "== 1. tile-pair -v -n 2 on the 1 GB pair, both outputs to /dev/null"
"$T" -f "%e s wall %U user %S sys %M KB" "$TP" -v -n 2 --cpu-out /dev/null --window-out /dev/null "$CPU" "$WIN" 2>&1
echo "== 2. bench/scale.sh --only pipe --pipe 2G from a 50M pair, limit 42 s"
BENCH_DIR=$W PROGRESS=5 bench/scale.sh --carry "$C" --tile "$TP" --source 50M --only pipe --pipe 2G --limit 42 2>&1
