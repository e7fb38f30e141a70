#!/bin/bash
# bench/dev-steal33.sh -- where the 16 CPUs' time goes during the 1 GB pair's merge, the .json.gz and
# the .pftrace.gz taking turns, $ROUNDS rounds (2): /proc/stat's counters (user, system, idle, iowait,
# steal ...) read before and after each run, as CPU seconds and as CPUs on average over its wall time.
# The question of "cgroup32": why about 12 of the 16 CPUs at most are busy (BENCHMARKS.md "steal33").
set -u
CM=${CM:-carry/bench/cuptimerge}
echo "$(nproc) CPUs; SMT $(cat /sys/devices/system/cpu/smt/active 2>/dev/null || echo unknown);" \
	"$(lscpu | grep -iE '^(Hypervisor vendor|Virtualization type|Socket|Core|NUMA node\(s\))' | tr -s ' ' | tr '\n' ';')"
out=${TMPDIR:-/tmp}/dev-steal33.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
for round in $(seq 1 "${ROUNDS:-2}"); do
	for o in json.gz pftrace.gz; do
		a=$(head -1 /proc/stat) t0=$(date +%s.%N)
		"$CM" -o "$out/o.$o" -w "$WIN" "$CPU" || echo "$o: rc $?"
		t1=$(date +%s.%N) b=$(head -1 /proc/stat)
		python3 - "$a" "$b" "$o ($round)" "$t0" "$t1" "$(getconf CLK_TCK)" <<'PY'
import sys
a, b = (list(map(int, x.split()[1:])) for x in sys.argv[1:3])
d = [y - x for x, y in zip(a, b)]
hz, w = int(sys.argv[6]), float(sys.argv[5]) - float(sys.argv[4])
names = "user nice system idle iowait irq softirq steal guest guest_nice".split()
busy = (d[0] + d[1] + d[2] + d[5] + d[6]) / hz
print(f"{sys.argv[3]:18s} wall {w:.2f} s; CPU s: " + ", ".join(f"{n} {v / hz:.2f}" for n, v in zip(names, d) if v)
      + f"; on average {busy / w:.1f} CPUs busy, {d[3] / hz / w:.1f} idle, {d[7] / hz / w:.2f} stolen")
PY
		rm -f "$out/o.$o"
	done
done
