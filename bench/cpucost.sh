#!/bin/bash
# bench/cpucost.sh -- CPU seconds (user + system) of cuptimerge builds against
# json_reformat -m on one pair, the runs taking turns.
#
# Usage: bench/cpucost.sh [--pair DIR] [--repeat N] [--jobs "1 2"] [--out EXT] BINARY...
#
# DIR holds cpu.json and win.json (default: bench.sh's cached 200M pair,
# $BENCH_DIR/inputs/200M-seed1-ops504000-dev2-pretty).  Each round runs every
# BINARY at every -j count (-o /dev/null; with --out EXT, -o a file named
# o.EXT in a temporary folder: .pftrace, .json.gz ..., whose md5 each run
# notes), then json_reformat -m on the CPU trace (where yajl-tools is
# installed), so that a noisy minute hits every row alike; the table gives,
# for each row, the median and the lowest of user + system seconds, the
# median user and system seconds and the fastest wall time, the ratio of
# json_reformat's median CPU to each row's, and with --out the outputs' md5
# prefixes (one, when every run of the row wrote the same bytes).  On a
# shared machine wall times say little; CPU seconds are what a build costs.
# It never asserts a timing (exit 1 only when a command failed, 2 for usage).
set -eu

BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench}
PAIR=$BENCH_DIR/inputs/200M-seed1-ops504000-dev2-pretty REPEAT=5 JOBS="1 2" EXT=
usage() { sed -n '5,5p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--pair) PAIR=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	--out) EXT=$2; shift 2 ;;
	-h|--help) usage 0 ;;
	--*) echo "cpucost.sh: unknown argument: $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
case $REPEAT in ''|*[!0-9]*|0) echo "cpucost.sh: --repeat needs a count >= 1" >&2; exit 2 ;; esac
case $EXT in */*) echo "cpucost.sh: --out takes a name's ending (pftrace, json.gz), not a path" >&2; exit 2 ;; esac
[ -r "$PAIR/cpu.json" ] && [ -r "$PAIR/win.json" ] || { echo "cpucost.sh: no pair in $PAIR" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "cpucost.sh: GNU time (/usr/bin/time) is needed" >&2; exit 2; }
command -v json_reformat >/dev/null || echo "cpucost.sh: no json_reformat (yajl-tools): its row and ratio left out" >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=/dev/null
[ -n "$EXT" ] && out=$tmp/o.$EXT
for r in $(seq "$REPEAT"); do
	for b in "$@"; do
		for j in $JOBS; do
			/usr/bin/time -f "$b -j$j %e %U %S" -a -o "$tmp/log" "$b" -j "$j" -o "$out" \
				-w "$PAIR/win.json" "$PAIR/cpu.json"
			[ -z "$EXT" ] || echo "$b -j$j $(md5sum <"$out" | cut -c1-8)" >>"$tmp/md5"
		done
	done
	if command -v json_reformat >/dev/null; then
		/usr/bin/time -f "json_reformat-m - %e %U %S" -a -o "$tmp/log" sh -c 'json_reformat -m < "$1" > /dev/null' sh \
			"$PAIR/cpu.json"
	fi
done
touch "$tmp/md5"
python3 - "$tmp/log" "$tmp/md5" "$EXT" <<'EOF2'
import sys, statistics
rows, md5 = {}, {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 5 and p[2][0].isdigit():
        rows.setdefault(p[0] + " " + p[1], []).append((float(p[2]), float(p[3]), float(p[4])))
for line in open(sys.argv[2]):
    p = line.split()
    md5.setdefault(p[0] + " " + p[1], []).append(p[2])
jr = [u + s for _, u, s in rows.get("json_reformat-m -", [])]
ext = sys.argv[3]
print("| run | CPU s median | CPU s lowest | user s median | sys s median | wall s fastest | json_reformat CPU / this |"
      + (" -o o.%s md5 |" % ext if ext else ""))
print("|---|---:|---:|---:|---:|---:|---:|" + ("---|" if ext else ""))
for k, v in rows.items():
    cpu = [u + s for _, u, s in v]
    ratio = "%.2f" % (statistics.median(jr) / statistics.median(cpu)) if jr else "-"
    sums = " %s |" % "/".join(sorted(set(md5.get(k, ["-"])))) if ext else ""
    print("| %s | %.3f | %.3f | %.3f | %.3f | %.2f | %s |%s" % (
        k, statistics.median(cpu), min(cpu), statistics.median([u for _, u, _ in v]),
        statistics.median([s for _, _, s in v]), min(w for w, _, _ in v), ratio, sums))
EOF2
