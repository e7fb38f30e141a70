#!/bin/sh
# run.sh SRCDIR SECONDS FLAGS NAME... - run each fuzz harness for SECONDS,
# one after the other, from its seed corpus (SRCDIR/tests/fuzz/corpus/NAME)
# with the JSON dictionary (and tests/fuzz/NAME.dict after it, where there
# is one: libFuzzer takes one -dict).  New inputs go to fuzz-work/NAME, crashes to
# fuzz-work/NAME-crash-*.  Prints one line of figures per harness and fails
# when a harness found a crash or a failed property, or left anything in
# the TMPDIR it ran with (a directory of its own, removed at the end).
set -eu
srcdir=$1 seconds=$2 flags=$3
shift 3
status=0
mkdir -p fuzz-work
fuzz_tmp=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && fuzz_tmp=/dev/shm
# a directory of the harnesses' own there, which each must leave empty (a
# harness once left its output directory behind at every start)
fuzz_tmp=$(mktemp -d "$fuzz_tmp/cuptimerge-fuzzrun.XXXXXX")
trap 'rm -rf "$fuzz_tmp"' EXIT
# UBSan stops at its first report: the fuzz build's checks print a report
# and go on, which neither libFuzzer nor this script would notice (an input
# with undefined behaviour passed as clean); stopped, libFuzzer keeps the
# input as a crash.  UBSAN_OPTIONS set by the caller still wins.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export UBSAN_OPTIONS
# LeakSanitizer stops the world with ptrace; where a container forbids that,
# every run would "crash" at its first leak check: fuzz without it, and say so.
if ! FUZZ_DATA=$srcdir TMPDIR=$fuzz_tmp "tests/fuzz/fuzz_$1" -runs=1 -detect_leaks=1 \
	"$srcdir/tests/fuzz/corpus/$1" >fuzz-work/lsan-probe.log 2>&1; then
	if grep -q 'LeakSanitizer has encountered a fatal error' fuzz-work/lsan-probe.log; then
		echo "WARNING: LeakSanitizer cannot run here; fuzzing without leak detection" >&2
		flags="$flags -detect_leaks=0"
	else
		cat fuzz-work/lsan-probe.log >&2
		exit 1
	fi
fi
for name in "$@"; do
	mkdir -p "fuzz-work/$name"
	log=fuzz-work/$name.log
	dict=$srcdir/tests/fuzz/json.dict
	if [ -f "$srcdir/tests/fuzz/$name.dict" ]; then
		cat "$dict" "$srcdir/tests/fuzz/$name.dict" >"fuzz-work/$name.dict"
		dict=fuzz-work/$name.dict
	fi
	# the output directory on tmpfs where there is one: each run renames an output into place (and syncs it)
	rc=0
	t0=$(date +%s)
	# shellcheck disable=SC2086 # FLAGS is a word list
	FUZZ_DATA=$srcdir TMPDIR=$fuzz_tmp "tests/fuzz/fuzz_$name" -max_total_time="$seconds" -max_len=16384 -timeout=20 \
		-rss_limit_mb=4096 -dict="$dict" -artifact_prefix="fuzz-work/$name-" \
		-print_final_stats=1 $flags "fuzz-work/$name" "$srcdir/tests/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
	t1=$(date +%s)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	corp=$(grep -o 'corp: [0-9]*' "$log" | tail -n 1)
	echo "fuzz_$name: ${execs:-?} executions in $((t1 - t0)) s, ${cov:-cov: ?} (edges), ${corp:-corp: ?} inputs, exit $rc"
	left=$(ls -A "$fuzz_tmp")
	if [ "$rc" -eq 0 ] && [ -n "$left" ]; then
		echo "fuzz_$name: left in its TMPDIR: $left" >&2
		rm -rf "${fuzz_tmp:?}"/*
		status=1
	fi
	if [ "$rc" -ne 0 ]; then
		status=1
		grep -E 'property failed|ERROR: |SUMMARY: ' "$log" | head -n 5 >&2 || true
		ls fuzz-work/"$name"-* 2>/dev/null >&2 || true
	fi
done
exit $status
