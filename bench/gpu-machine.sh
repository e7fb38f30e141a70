#!/bin/bash
# bench/gpu-machine.sh CARRY -- bench/bench.sh on a machine without a package mirror (the
# 16-core GPU machine): the tools come from CARRY, a folder made on the build machine:
#   CARRY/cuptimerge, CARRY/lib/libyajl.so.2   the binary under test and its libraries
#   (and CARRY/lib/libisal.so.2 for a build with ISA-L, configure --with-isal)
#   CARRY/json_reformat, CARRY/time            yajl-tools' reformatter, GNU time
#   CARRY/shared/tools/gen_trace               the generator (Python 3, standard library)
#   CARRY/cm-old (optional)                    an older binary, timed once for comparison
# The 1 GB pair is generated here (cached in $BENCH_DIR while the machine lives), then
# bench.sh runs with --sizes "${SIZES:-1G}" --scaling; the report goes to standard output.
set -eu
carry=$(cd "${1:?usage: bench/gpu-machine.sh CARRY}" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SHARED="$carry/shared" JSON_REFORMAT="$carry/json_reformat"
export BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench}
[ -x /usr/bin/time ] || install -m 755 "$carry/time" /usr/bin/time
"$here/bench.sh" --sizes "${SIZES:-1G}" --scaling --cuptimerge "$carry/cuptimerge" "$@"
if [ -x "$carry/cm-old" ]; then
	size=${SIZES:-1G}
	d=$(ls -d "$BENCH_DIR/inputs/${size##* }"-seed* 2>/dev/null | head -n 1)
	[ -d "$d" ] || { echo "gpu-machine.sh: no input pair for ${size##* } in $BENCH_DIR/inputs" >&2; exit 1; }
	echo
	echo "## the older binary (CARRY/cm-old), default -j, on $(basename "$d")"
	/usr/bin/time -f '  cm-old: %e s, %M KB peak RSS' "$carry/cm-old" -w "$d/win.json" "$d/cpu.json" >/dev/null
	/usr/bin/time -f '  cm-old taskset -c 0,1: %e s, %M KB peak RSS' taskset -c 0,1 "$carry/cm-old" \
		-w "$d/win.json" "$d/cpu.json" >/dev/null
fi
