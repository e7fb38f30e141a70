#!/bin/bash
# bench/dev-targets.sh -- one call on the 16-core GPU machine for the open targets of issues 24, 25
# and 30 on the 1 GB pair (tiled by bench/tile-pair from the 200M pair): the default -j against
# CARRY/cm-718 (718cce1) and CARRY/cm-start, -o against >, two CPUs against json_reformat -m, the
# -j curve; the 60-file split and .pftrace against the plain merge, plain and gzip.  Runs from the
# repo root with the binaries in carry/bench (bench/gpu-machine.sh lists them); ~110 s.
set -u
C=carry/bench; export LD_LIBRARY_PATH=$C/lib
[ -x /usr/bin/time ] || install -m 755 $C/time /usr/bin/time
T=/usr/bin/time
NEW=$C/cuptimerge BASE=$C/cm-718 START=$C/cm-start
date -u; nproc; uptime
B=/tmp/cuptimerge-bench/inputs/200M-seed1-ops504000-dev2-pretty
mkdir -p $B /tmp/1g /tmp/o
t0=$(date +%s)
python3 $C/shared/tools/gen_trace --seed 1 --ops 504000 --pretty --devices 2 --quiet $B/cpu.json $B/win.json
$C/tile-pair -n 5 --cpu-out /tmp/1g/cpu.json --window-out /tmp/1g/win.json $B/cpu.json $B/win.json
CPU=/tmp/1g/cpu.json WIN=/tmp/1g/win.json
echo "inputs in $(( $(date +%s) - t0 )) s"
r() { local label=$1; shift; $T -f "$label: %e s %U u %S s %M KB" "$@" 2>&1 >/dev/null | grep -E "^$label: |^cuptimerge: (time|threads|CPU after)" ; }
ro() { local label=$1 out=$2; shift 2; $T -f "$label: %e s %U u %S s %M KB" "$@" 2>&1 >/dev/null | grep "^$label: "; rm -rf $out; mkdir -p /tmp/o; }
echo "## issue 30, 1G, rounds taking turns"
for i in 1 2 3; do
  r "new default -o /dev/null" $NEW -w $WIN -o /dev/null $CPU
  r "718 default -o /dev/null" $BASE -w $WIN -o /dev/null $CPU
  r "start default -o /dev/null" $START -w $WIN -o /dev/null $CPU
  ro "new -o out.json" /tmp/o/out.json $NEW -w $WIN -o /tmp/o/out.json $CPU
  $T -f "new > out.json: %e s %U u %S s %M KB" sh -c "$NEW -w $WIN $CPU > /tmp/o/out.json"; rm -f /tmp/o/out.json
done
r "new -v default" $NEW -v -w $WIN -o /dev/null $CPU
for i in 1 2; do
  r "new taskset 0,1 1G" taskset -c 0,1 $NEW -w $WIN -o /dev/null $CPU
  $T -f "json_reformat taskset 0,1 1G: %e s %U u %S s" taskset -c 0,1 sh -c "$C/json_reformat -m < $CPU > /dev/null"
done
for i in 1 2 3; do
  r "new taskset 0,1 200M" taskset -c 0,1 $NEW -w $B/win.json -o /dev/null $B/cpu.json
  $T -f "json_reformat taskset 0,1 200M: %e s %U u %S s" taskset -c 0,1 sh -c "$C/json_reformat -m < $B/cpu.json > /dev/null"
done
for j in 1 2 4 8 12 16 24; do r "new -j $j" $NEW -j $j -w $WIN -o /dev/null $CPU; done
echo "at $(( $(date +%s) - t0 )) s"
echo "## issue 24 and 25, 1G, rounds taking turns"
n=$(grep -c '"ProfilerStep#' $CPU); k=$(( (n + 59) / 60 )); echo "ProfilerStep events $n, --split=steps:$k"
for i in 1 2; do
  ro "plain -o out.json" /tmp/o $NEW -w $WIN -o /tmp/o/out.json $CPU
  ro "split 60 .json" /tmp/o $NEW --split=steps:$k -w $WIN -o '/tmp/o/m_%s.json' $CPU
  ro "plain -o out.json.gz" /tmp/o $NEW -w $WIN -o /tmp/o/out.json.gz $CPU
  ro "split 60 .json.gz" /tmp/o $NEW --split=steps:$k -w $WIN -o '/tmp/o/z_%s.json.gz' $CPU
  ro "-o out.pftrace" /tmp/o $NEW -w $WIN -o /tmp/o/out.pftrace $CPU
  ro "-o out.pftrace.gz" /tmp/o $NEW -w $WIN -o /tmp/o/out.pftrace.gz $CPU
  $T -f "json > /dev/null: %e s %U u %S s" sh -c "$NEW -w $WIN $CPU > /dev/null"
  $T -f "--format=perfetto > /dev/null: %e s %U u %S s" sh -c "$NEW --format=perfetto -w $WIN $CPU > /dev/null"
done
$NEW -w $WIN -o /tmp/o/a.json $CPU; $NEW -w $WIN -o /tmp/o/a.pftrace $CPU; ls -l /tmp/o; rm -rf /tmp/o/*
echo "at $(( $(date +%s) - t0 )) s"
for h in ${MIDS:-}; do
  [ -f carry/mid/$h/dev-$h.sh ] || continue
  echo "## dev-$h.sh"; mkdir -p carry/mid/$h; cp $NEW carry/mid/$h/cuptimerge
  CPU=$CPU WIN=$WIN T=$T timeout 45 bash carry/mid/$h/dev-$h.sh 2>&1 | tail -40
  echo "at $(( $(date +%s) - t0 )) s"
done
