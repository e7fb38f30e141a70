#!/bin/bash
# bench/cpucost.sh -- CPU seconds (user + system) of cuptimerge builds against
# json_reformat -m on one pair, the runs taking turns.
#
# Usage: bench/cpucost.sh [--pair DIR] [--repeat N] [--jobs "1 2"] BINARY...
#
# DIR holds cpu.json and win.json (default: bench.sh's cached 200M pair,
# $BENCH_DIR/inputs/200M-seed1-ops504000-dev2-pretty).  Each round runs every
# BINARY at every -j count (-o /dev/null), then json_reformat -m on the CPU
# trace, so that a noisy minute hits every row alike; the table gives, for each
# row, the median and the lowest of user + system seconds, the median user and
# system seconds and the fastest wall time, and the ratio of json_reformat's
# median CPU to each row's.  On a shared machine wall times say little; CPU
# seconds are what a build costs.  It never asserts a timing (exit 1 only when a
# command failed, 2 for usage).
set -eu

BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench}
PAIR=$BENCH_DIR/inputs/200M-seed1-ops504000-dev2-pretty REPEAT=5 JOBS="1 2"
usage() { sed -n '5,5p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--pair) PAIR=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	-h|--help) usage 0 ;;
	--*) echo "cpucost.sh: unknown argument: $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
case $REPEAT in ''|*[!0-9]*|0) echo "cpucost.sh: --repeat needs a count >= 1" >&2; exit 2 ;; esac
[ -r "$PAIR/cpu.json" ] && [ -r "$PAIR/win.json" ] || { echo "cpucost.sh: no pair in $PAIR" >&2; exit 2; }
command -v json_reformat >/dev/null || { echo "cpucost.sh: json_reformat (yajl-tools) is needed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "cpucost.sh: GNU time (/usr/bin/time) is needed" >&2; exit 2; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for r in $(seq "$REPEAT"); do
	for b in "$@"; do
		for j in $JOBS; do
			/usr/bin/time -f "$b -j$j %e %U %S" -a -o "$log" "$b" -j "$j" -o /dev/null \
				-w "$PAIR/win.json" "$PAIR/cpu.json"
		done
	done
	/usr/bin/time -f "json_reformat-m - %e %U %S" -a -o "$log" sh -c 'json_reformat -m < "$1" > /dev/null' sh \
		"$PAIR/cpu.json"
done
python3 - "$log" <<'EOF'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 5 and p[2][0].isdigit():
        rows.setdefault(p[0] + " " + p[1], []).append((float(p[2]), float(p[3]), float(p[4])))
jr = [u + s for _, u, s in rows.get("json_reformat-m -", [(0, 1, 0)])]
print("| run | CPU s median | CPU s lowest | user s median | sys s median | wall s fastest | json_reformat CPU / this |")
print("|---|---:|---:|---:|---:|---:|---:|")
for k, v in rows.items():
    cpu = [u + s for _, u, s in v]
    print("| %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |" % (
        k, statistics.median(cpu), min(cpu), statistics.median([u for _, u, _ in v]),
        statistics.median([s for _, _, s in v]), min(w for w, _, _ in v),
        statistics.median(jr) / statistics.median(cpu)))
EOF
