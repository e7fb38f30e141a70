#!/bin/bash
# bench/jvalid.sh -- MB/s of the fast validator (src/json/jvalid.c) against yajl.
#
# Usage: bench/jvalid.sh [BUILDDIR] [OPS]   (default: ./build, 100000)
#
# Builds BUILDDIR/bench/jvalid-bench (`make bench/jvalid-bench`, not part of
# `make all`), generates a trace pair with /work/shared/tools/gen_trace (seed
# 300, --pretty: about 40 MB of CPU trace and 60 MB of window for 100000 ops)
# into $TMPDIR/jv unless it is there already, and prints, for each file and
# in one run, the MB/s of cm_jvalid_value over each event array element, of
# cm_jvalid_value over the whole file, of yajl_parse without callbacks over the
# whole file and of yajl after jcheck (the reading path's validation), with the
# ratio.  Prints figures only; never asserts a timing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${1:-$top/build}
ops=${2:-100000}
gen=${GEN_TRACE:-/work/shared/tools/gen_trace}
work=${TMPDIR:-/tmp}/jv
make -s -C "$build" bench/jvalid-bench
mkdir -p "$work"
if [ ! -s "$work/cpu-$ops.json" ] || [ ! -s "$work/win-$ops.json" ]; then
	"$gen" --seed 300 --ops "$ops" --pretty --quiet "$work/cpu-$ops.json" "$work/win-$ops.json"
fi
"$build/bench/jvalid-bench" "$work/cpu-$ops.json" "$work/win-$ops.json"
