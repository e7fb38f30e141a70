#!/bin/bash
# bench/devrun.sh -- the one command of a device call: makes the 1 GB pair (the 200M pair of
# gen_trace --seed 1, tiled 5 times by tile-pair; cached in $PAIR while the machine lives, ~60 s
# the first time), runs each bench/dev-NAME.sh named in SCRIPTS with CPU and WIN set, then with
# GPU=1 the GPU checks (tests/gpu/run.sh carry/gpubin $OUT/gpu all, ~140 s).
# The binaries come from carry/ (bench/mkcarry.sh fills it on the build machine), e.g.
#   run command='SCRIPTS="phase15" GPU=1 bash bench/devrun.sh > $OUT/dev.txt 2>&1; tail -c 11800 $OUT/dev.txt'
#       carry=["carry/bench","carry/gpubin"] timeout_s=480
# Prints the date, CPUs, load and each script's output under a heading.
set -u
C=carry/bench
export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -x /usr/bin/time ] || install -m 755 $C/time /usr/bin/time
export T=/usr/bin/time
PAIR=${PAIR:-/tmp/devrun}
B=$PAIR/200M
date -u
echo "$(nproc) CPUs; $(uptime)"
mkdir -p "$B" "$PAIR/1g"
if [ ! -s "$PAIR/1g/win.json" ]; then
	t0=$(date +%s)
	python3 $C/shared/tools/gen_trace --seed 1 --ops 504000 --pretty --devices 2 --quiet "$B/cpu.json" "$B/win.json" &&
		$C/tile-pair -n 5 --cpu-out "$PAIR/1g/cpu.json" --window-out "$PAIR/1g/win.json" "$B/cpu.json" "$B/win.json" ||
		{ echo "devrun.sh: the 1 GB pair could not be made" >&2; exit 1; }
	echo "the 1 GB pair made in $(($(date +%s) - t0)) s"
fi
export CPU=$PAIR/1g/cpu.json WIN=$PAIR/1g/win.json
rc=0
for s in ${SCRIPTS:-}; do
	echo
	echo "######## bench/dev-$s.sh"
	bash "bench/dev-$s.sh" || rc=1
done
if [ "${GPU:-0}" = 1 ]; then
	echo
	echo "######## tests/gpu/run.sh carry/gpubin \$OUT/gpu all"
	bash tests/gpu/run.sh carry/gpubin "${OUT:-/tmp}/gpu" all >"${OUT:-/tmp}/gpu-run.txt" 2>&1 || rc=1
	tail -n 40 "${OUT:-/tmp}/gpu-run.txt"
fi
exit $rc
