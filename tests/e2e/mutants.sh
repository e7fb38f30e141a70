#!/bin/sh
# mutants.sh - the end-to-end scripts can fail.  Each is run against programs
# that are wrong on purpose; one TAP case per (program, script) passes only
# when that run reports a failed case and exits non-zero, and names the
# program that survived otherwise.  The mutants are built by make check from
# the real sources with one line changed (tests/Makefile.inc,
# tests/mutants/*.sed); CUPTIMERGE_MUTANTS is the folder that holds them.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "by the scripts under test"
mdir=${CUPTIMERGE_MUTANTS:-./tests/mutants}

# against PROGRAM LABEL SCRIPT...: run each SCRIPT with CUPTIMERGE=PROGRAM.
# differential.sh gets one seed (4 merges) to keep this quick.
against() {
	prog=$1 label=$2
	shift 2
	for script in "$@"; do
		rc=0
		CUPTIMERGE=$prog DIFF_SEEDS=1 sh "$srcdir/tests/e2e/$script" >"$tmp/out" 2>&1 </dev/null || rc=$?
		if grep -q '^1\.\.0 # SKIP' "$tmp/out"; then
			skip "$label: $script fails" "$script skipped: $(grep '^1\.\.0' "$tmp/out")"
			continue
		fi
		tcase "$label: $script fails"
		if [ $rc -eq 0 ]; then
			fail "$label SURVIVED $script: it exited 0 ($(grep -c '^ok' "$tmp/out") cases ok, $(grep -c '^not ok' "$tmp/out") not ok)"
		elif ! grep -q '^not ok' "$tmp/out"; then
			fail "$label: $script exited $rc without a failed case: $(tail -5 "$tmp/out")"
		else
			diag "$label: $script exit $rc; first failed case: $(grep -m1 '^not ok' "$tmp/out")"
		fi
	done
}

for m in cuptimerge-corr cuptimerge-shortread; do
	[ -x "$mdir/$m" ] || { not_ok "$mdir/$m is built (make check builds it)"; finish; }
done

# a program that always fails: what golden.sh let through (F2)
against false "false (always fails)" golden.sh errors.sh io.sh repair.sh
# a wrong value in the output: every script that compares a merge.  Not
# errors.sh: its one comparison (two gzip members) is in golden.sh and io.sh
# too, and while F3 (a window error reported twice, now and then) is open its
# one-line-message cases fail by chance, which would pass for a kill.
against "$mdir/cuptimerge-corr" "mutant corr (correlation + 1)" \
	golden.sh io.sh repair.sh differential.sh
# a byte lost on reads under 32 bytes: the scripts that merge with tiny reads
against "$mdir/cuptimerge-shortread" "mutant shortread (byte lost on small reads)" \
	golden.sh repair.sh
finish
