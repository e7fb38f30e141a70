#!/bin/bash
# bench/dev-cgroup32.sh -- whether the device's 16 CPUs are all the run's (issue 25): every phase of
# the 1 GB pair's merge kept at most about 12 of them busy ("seqq31"'s bench/cpuuse.py), and the
# copy's parts ran longer as more of them ran at once ("copy32").  Prints the cgroup's CPU quota
# (cpu.max) and its throttling (cpu.stat) around a .json.gz and a .pftrace.gz merge, and the
# CPUs the scheduler lets the process use (nproc, taskset).
set -u
T=${T:-/usr/bin/time}
CM=${CM:-carry/bench/cuptimerge}
. "$(dirname "$0")/devrow.sh" dev-cgroup32
echo "nproc $(nproc); taskset: $(taskset -p $$ 2>/dev/null)"
cg=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup 2>/dev/null)
echo "cgroup: $cg"
for f in cpu.max cpu.weight cpuset.cpus.effective; do
	[ -r "$cg/$f" ] && echo "$f: $(cat "$cg/$f")"
done
[ -r /sys/fs/cgroup/cpu.max ] && echo "root cpu.max: $(cat /sys/fs/cgroup/cpu.max)"
stat_line() { [ -r "$cg/cpu.stat" ] && tr '\n' ' ' <"$cg/cpu.stat"; echo; }
for o in o.json.gz o.pftrace.gz o.json.gz o.pftrace.gz; do
	echo "cpu.stat before: $(stat_line)"
	one "-o out${o#o}" "" "$o"
	echo "cpu.stat after:  $(stat_line)"
done
grep -E "^(processor|model name|cpu MHz)" /proc/cpuinfo | sort | uniq -c | head -5
