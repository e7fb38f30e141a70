#!/bin/bash
# bench/pfab.sh -- user and system CPU seconds of a .pftrace merge by two or
# more cuptimerge builds, the runs taking turns (helper pfcpu16).
#
# Usage: bench/pfab.sh [--pair DIR] [--repeat N] [--jobs J] [--gz] BINARY...
#
# DIR holds cpu.json and win.json (default: the cached 200M pair).  Each round
# runs every BINARY once (-j J, default 2) into a .pftrace (.pftrace.gz with
# --gz) in $TMPDIR, so that a noisy minute hits every build alike; it prints
# each run's user, system and wall seconds and the output's md5, then per
# build the median and lowest user seconds.  It never asserts a timing (exit 1
# only when a command failed, 2 for usage).
set -eu

BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench}
PAIR=$BENCH_DIR/inputs/200M-seed1-ops504000-dev2-pretty REPEAT=3 JOBS=2 EXT=pftrace
usage() { sed -n '5,5p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--pair) PAIR=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	--gz) EXT=pftrace.gz; shift ;;
	-h|--help) usage 0 ;;
	--*) echo "pfab.sh: unknown argument: $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
case $REPEAT in ''|*[!0-9]*|0) echo "pfab.sh: --repeat needs a count >= 1" >&2; exit 2 ;; esac
[ -r "$PAIR/cpu.json" ] && [ -r "$PAIR/win.json" ] || { echo "pfab.sh: no pair in $PAIR" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "pfab.sh: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$REPEAT"); do
	i=0
	for b in "$@"; do
		i=$((i + 1))
		/usr/bin/time -f "%U %S %e" -o "$tmp/t" "$b" -j "$JOBS" -w "$PAIR/win.json" "$PAIR/cpu.json" -o "$tmp/o.$EXT"
		echo "$i $(cat "$tmp/t") $(md5sum < "$tmp/o.$EXT" | cut -c1-8) $b" | tee -a "$tmp/log"
	done
done
python3 - "$tmp/log" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    rows.setdefault((int(p[0]), p[5]), []).append(float(p[1]))
print("| build | user s median | user s lowest | runs |")
print("|---|---:|---:|---:|")
for (i, b), v in sorted(rows.items()):
    print(f"| {b} | {statistics.median(v):.2f} | {min(v):.2f} | {len(v)} |")
PY
