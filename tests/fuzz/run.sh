#!/bin/sh
# run.sh SRCDIR SECONDS FLAGS NAME... - run each fuzz harness for SECONDS,
# FUZZ_JOBS at a time (1: one after the other, the default; .ci/run gives
# its CPUs' count), from its seed corpus (SRCDIR/tests/fuzz/corpus/NAME)
# with the JSON dictionary (and tests/fuzz/NAME.dict after it, where there
# is one: libFuzzer takes one -dict).  New inputs go to fuzz-work/NAME, crashes to
# fuzz-work/NAME-crash-*.  Prints one line of figures per harness and fails
# when a harness found a crash or a failed property, or left anything in
# the TMPDIR it ran with (a directory of its own, removed at the end).
# The lines come in the harnesses' order, whichever finished first.
set -eu
srcdir=$1 seconds=$2 flags=$3
shift 3
jobs=${FUZZ_JOBS:-1}
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: FUZZ_JOBS must be a count of 1 or more, not '$jobs'" >&2; exit 2 ;; esac
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
# fuzz NAME: run harness NAME for SECONDS in a TMPDIR of its own under
# fuzz_tmp (which it must leave empty); its line of figures, and what went
# wrong, into fuzz-work/NAME.out; 1 when it failed.
fuzz() {
	name=$1
	tmp=$fuzz_tmp/$name
	mkdir -p "fuzz-work/$name" "$tmp"
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
	FUZZ_DATA=$srcdir TMPDIR=$tmp "tests/fuzz/fuzz_$name" -max_total_time="$seconds" -max_len=16384 -timeout=20 \
		-rss_limit_mb=4096 -dict="$dict" -artifact_prefix="fuzz-work/$name-" \
		-print_final_stats=1 $flags "fuzz-work/$name" "$srcdir/tests/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
	t1=$(date +%s)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	corp=$(grep -o 'corp: [0-9]*' "$log" | tail -n 1)
	echo "fuzz_$name: ${execs:-?} executions in $((t1 - t0)) s, ${cov:-cov: ?} (edges), ${corp:-corp: ?} inputs, exit $rc"
	left=$(ls -A "$tmp")
	if [ "$rc" -eq 0 ] && [ -n "$left" ]; then
		echo "fuzz_$name: left in its TMPDIR: $left"
		return 1
	fi
	if [ "$rc" -ne 0 ]; then
		grep -E 'property failed|ERROR: |SUMMARY: ' "$log" | head -n 5 || true
		ls fuzz-work/"$name"-* 2>/dev/null || true
		return 1
	fi
	return 0
}

# the harnesses FUZZ_JOBS at a time: each in the background, its status
# kept in fuzz-work/NAME.rc; a batch waited for before the next starts
set -- "$@" ""
batch=
for name in "$@"; do
	if [ -n "$name" ]; then
		(rc=0; fuzz "$name" >"fuzz-work/$name.out" 2>&1 || rc=$?; echo $rc >"fuzz-work/$name.rc") &
		batch="$batch $name"
		[ "$(echo $batch | wc -w)" -lt "$jobs" ] && continue
	fi
	wait
	for done_name in $batch; do
		# the line of figures to stdout, what went wrong to stderr
		head -n 1 "fuzz-work/$done_name.out"
		tail -n +2 "fuzz-work/$done_name.out" >&2
		[ "$(cat "fuzz-work/$done_name.rc")" = 0 ] || status=1
	done
	batch=
done
exit $status
