#!/bin/bash
# bench/pfspans21.sh -- the spans as batches (issue 25, BENCHMARKS.md "pfspans21"): ROUNDS
# rounds (default 5) taking turns of the binaries BEFORE and AFTER, each writing the pair's
# .pftrace with -v (-j JOBS, default the CPUs): GNU time's wall and user, the inserted
# batches' phase (its writer's end) and the text after's (its writer's thread, its batches,
# when its last buffer was passed on), and the seconds from the window's render's end to the
# output's (-v's "time:" line: the spans, the text after, the transcoder's end), then the min
# and median of each for each binary.
# Figures only: a shared machine's wall times are noisy.
# Usage: BEFORE=... AFTER=... bench/pfspans21.sh [DIR with cpu.json, win.json]
set -u
DIR=${1:-/tmp/cuptimerge-bench/inputs/200M-seed1-ops504000-dev2-pretty}
ROUNDS=${ROUNDS:-5}
JOBS=${JOBS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$ROUNDS"); do
	for b in BEFORE AFTER; do
		bin=${!b}
		/usr/bin/time -f "%e %U" -o "$out/time" "$bin" -v -j "$JOBS" -o "$out/x.pftrace" -w "$DIR/win.json" "$DIR/cpu.json" \
			2>"$out/err"
		read -r wall user <"$out/time"
		echo "$b $wall $user" >>"$out/all"
		ph=$(grep "perfetto by phase" "$out/err")
		ins=$(echo "$ph" | sed -n "s/.*; the inserted batches: the writer's thread \([0-9.]*-[0-9.]*\),.* \([0-9]*\) batches straight.*/\1 s, \2 batches/p")
		after=$(echo "$ph" | sed -n "s/.*; the text after: the writer's thread \([0-9.]*-[0-9.]*\),[^;]*; \([0-9]*\) batches, the workers busy \([0-9.]*\) s.*passed on by \([0-9.]*\) .*/\1 s, \2 batches, workers busy \3 s, passed on by \4/p")
		tail=$(sed -n "s/^cuptimerge: time: .*window events rendered \([0-9.]*\) s, output done \([0-9.]*\) s.*/\1 \2/p" "$out/err" |
			awk '{ printf "%.3f", $2 - $1 }')
		echo "$b $tail" >>"$out/tails"
		printf '%-6s round %d: wall %s s, user %s s; inserted %s; text after %s; render end to output done %s s\n' \
			"$b" "$r" "$wall" "$user" "$ins" "$after" "$tail"
	done
done
for b in BEFORE AFTER; do
	grep "^$b " "$out/tails" | cut -d' ' -f2 | sort -n >"$out/v"
	printf '%-6s render end to output done: min %s median %s\n' "$b" "$(head -1 "$out/v")" "$(sed -n "$(( (ROUNDS + 1) / 2 ))p" "$out/v")"
	for k in 2 3; do
		grep "^$b " "$out/all" | cut -d' ' -f$k | sort -n >"$out/v"
		printf '%-6s %s: min %s median %s\n' "$b" "$([ $k = 2 ] && echo wall || echo user)" "$(head -1 "$out/v")" \
			"$(sed -n "$(( (ROUNDS + 1) / 2 ))p" "$out/v")"
	done
done
