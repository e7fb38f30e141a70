#!/bin/bash
# bench/mkcarry.sh [REV...] -- fill carry/ (git-ignored) for the device machine, which has no
# compiler for C libraries and no package mirror: run on the build machine, from the repo root,
# after `make` (configure --with-isal, with CUDA found, so that the collector is built).
#   carry/bench    what bench/devrun.sh and the bench/dev-*.sh scripts use:
#                  cuptimerge (this tree's build), cuptimerge-REV for each REV given (built from
#                  that commit in a scratch worktree, configure --with-isal --without-cuda),
#                  with EXP=FILE.diff cuptimerge-exp (HEAD with that patch: bench/exp/'s
#                  experiments not landed, for $CM_EXP of the scripts that take one),
#                  lib/ (libyajl.so.2, libisal.so.2: what `ldd cuptimerge` names outside libc),
#                  with PERF=1 perf and perflib/ (its libraries: bench/dev-perf16.sh),
#                  time (GNU time), tile-pair, shared/tools/gen_trace (the generator)
#   carry/gpubin   what tests/gpu/run.sh takes as BINDIR (tests/gpu/README.md): cuptirec,
#                  cuptimerge, cuptimerge-batch, threads_cuda and bench_launch (nvcc),
#                  lib/libcuptirec.so and libcuptirec_threads.so, deps/ (libyajl.so.2 and the
#                  others cuptimerge needs, libcupti.so.13)
# Then: run carry=["carry/bench","carry/gpubin"] with bench/devrun.sh (its comment says how).
set -eu
[ -x src/cuptimerge ] || { echo "mkcarry.sh: build first (src/cuptimerge missing)" >&2; exit 1; }
SHARED=${SHARED:-../shared}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
B=carry/bench G=carry/gpubin
rm -rf "$B" "$G"
mkdir -p "$B/lib" "$B/shared/tools" "$G/lib" "$G/deps"

# the shared libraries a binary needs beyond the C library's own, into DIR
libs_of() {
	ldd "$1" | awk '$3 ~ /^\// { print $3 }' | grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
		while read -r so; do cp -L "$so" "$2/"; done
}

cp src/cuptimerge "$B/cuptimerge"
libs_of src/cuptimerge "$B/lib"
cp /usr/bin/time "$B/time"
make -s bench/tile-pair >/dev/null
cp bench/tile-pair "$B/tile-pair"
cp "$SHARED/tools/gen_trace" "$B/shared/tools/gen_trace"
if [ "${PERF:-0}" = 1 ]; then
	mkdir -p "$B/perflib"
	cp /usr/bin/perf "$B/perf"
	libs_of /usr/bin/perf "$B/perflib"
fi

# build REV's cuptimerge, with PATCH applied if one is named, as $B/NAME (a scratch worktree)
build_rev() {
	local wt
	wt=$(mktemp -d /tmp/mkcarry.XXXXXX)
	git worktree add -q --detach "$wt/src" "$1"
	[ -z "${3:-}" ] || git -C "$wt/src" apply "$(pwd)/$3"
	(cd "$wt/src" && autoreconf -fi >/dev/null 2>&1 && ./configure -q --with-isal --without-cuda >/dev/null &&
		make -s -j"$(nproc)" src/cuptimerge >/dev/null)
	cp "$wt/src/src/cuptimerge" "$B/$2"
	git worktree remove --force "$wt/src"
	rm -rf "$wt"
	echo "mkcarry.sh: $B/$2"
}
for rev in "$@"; do
	build_rev "$rev" "cuptimerge-$(git rev-parse --short=7 "$rev")"
done
# EXP=FILE.diff: HEAD with an experiment not landed (bench/exp/) as cuptimerge-exp
[ -z "${EXP:-}" ] || build_rev HEAD cuptimerge-exp "$EXP"

if [ -x cuptirec ] && [ -x "$NVCC" ]; then
	cp cuptirec src/cuptimerge src/cuptimerge-batch "$G/"
	cp .libs/libcuptirec.so .libs/libcuptirec_threads.so "$G/lib/"
	libs_of src/cuptimerge "$G/deps"
	cupti=$(find "$(dirname "$NVCC")/.." -name 'libcupti.so.13' | head -n 1)
	[ -n "$cupti" ] && cp -L "$cupti" "$G/deps/"
	"$NVCC" -O2 -arch=sm_90 -cudart static -o "$G/threads_cuda" tests/gpu/threads_cuda.cu -ldl -lpthread
	"$NVCC" -O2 -arch=sm_90 -cudart static -o "$G/bench_launch" tests/gpu/bench_launch.cu -ldl -lpthread
else
	echo "mkcarry.sh: no collector build or no nvcc: carry/gpubin left empty (GPU=1 cannot run)" >&2
fi
du -sh carry/bench carry/gpubin | sed "s|^|mkcarry.sh: |"
