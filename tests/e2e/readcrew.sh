#!/bin/sh
# readcrew.sh - the two readers' workers as one crew (base/opool.h's cm_ocrew;
# mergejobs.c's mergejobs_read_crew, from 4 jobs on where the CPU trace would have workers
# of its own): forced by the testing aid CUPTIMERGE_READ_WORKERS=N whatever
# the CPUs, so that a 2-CPU machine runs it too.  The golden cases at every
# read size, a generated pair of many batches with crews of 1 to 16 and the
# two pools apart, and windows and CPU traces refused by the parallel
# readers (a block's fault in one reader while the other goes on): the same
# bytes, counts, messages and statuses as without the crew.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to run gen_trace"
GEN=${SHARED:-$srcdir/../shared}/tools/gen_trace

fast='read by: window parallel, CPU trace parallel'
crew='read workers shared by both inputs'

# crewed NAME ERR: the -v lines in ERR say both readers were parallel, on a crew
crewed() {
	grep -q "$fast" "$2" || fail "$1: not read by the parallel readers: $(grep 'read by' "$2")"
	grep -q "$crew" "$2" || fail "$1: no crew: $(grep '^cuptimerge: threads' "$2")"
}

golden_read_sizes "a crew of 3 takes it at read sizes 1, 2, 3, 7, 31 and the default: the expected bytes" \
	CUPTIMERGE_READ_WORKERS=3 "$fast" "$crew"

# refused inputs: the careful reader names the fault, as without the crew
printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}, {"ph": "X",]}\n' \
	>"$tmp/bad_cpu.json"
tcase "refused inputs: the same status and message with a crew of 3 as with -j 1"
for pair in "bad_window_badmap.json cpu.json" "bad_window_huge_start.json cpu.json" \
	"bad_window_missing_end_ns.json cpu.json" "window.json $tmp/bad_cpu.json"; do
	set -- $pair
	w=$FIX/$1
	c=$2
	[ "${c#/}" != "$c" ] || c=$FIX/$c
	rc1=0
	$CUPTIMERGE -j 1 -w "$w" "$c" >/dev/null 2>"$tmp/err1" || rc1=$?
	rc2=0
	CUPTIMERGE_READ_WORKERS=3 $CUPTIMERGE -w "$w" "$c" >/dev/null 2>"$tmp/err2" || rc2=$?
	[ $rc1 -ne 0 ] || fail "$1 $2: accepted"
	[ $rc1 -eq $rc2 ] || fail "$1 $2: exit $rc2 with the crew, $rc1 without"
	cmp -s "$tmp/err1" "$tmp/err2" || fail "$1 $2: with the crew: $(cat "$tmp/err2"); without: $(cat "$tmp/err1")"
done

# a pair big enough for many batches of both readers
if [ -x "$GEN" ]; then
	"$GEN" --seed 43 --ops 30000 --pretty --devices 2 --quiet "$tmp/cpu.json" "$tmp/win.json"
	$CUPTIMERGE -v -j 1 --trace-name gen -w "$tmp/win.json" "$tmp/cpu.json" >"$tmp/j1.json" 2>"$tmp/err1"
	grep '^cuptimerge: merged' "$tmp/err1" | sed 's/; read by.*//' >"$tmp/counts1"
	tcase "generated pair: crews of 1, 2, 3 and 16 (and the two pools apart, 3,2): the bytes and counts of -j 1"
	[ -s "$tmp/counts1" ] || fail "-j 1 -v: no counts line: $(cat "$tmp/err1")"
	for n in 1 2 3 16 3,2; do
		for j in 2 8; do
			rc=0
			CUPTIMERGE_READ_WORKERS=$n $CUPTIMERGE -v -j $j --trace-name gen -w "$tmp/win.json" "$tmp/cpu.json" \
				>"$tmp/j.json" 2>"$tmp/err" || rc=$?
			if [ $rc -ne 0 ]; then
				fail "crew $n, -j $j: exit $rc: $(cat "$tmp/err")"
				continue
			fi
			if [ "$n" = 3,2 ]; then
				grep -q "$fast" "$tmp/err" || fail "pools 3,2: not the parallel readers"
				! grep -q "$crew" "$tmp/err" || fail "pools 3,2: a crew"
			else
				crewed "crew $n, -j $j" "$tmp/err"
			fi
			cmp -s "$tmp/j1.json" "$tmp/j.json" || fail "crew $n, -j $j: output differs from -j 1"
			grep '^cuptimerge: merged' "$tmp/err" | sed 's/; read by.*//' | cmp -s "$tmp/counts1" - ||
				fail "crew $n, -j $j: other counts than -j 1"
		done
	done
else
	skip "generated pair: crews of 1, 2, 3 and 16" "no gen_trace at $GEN"
fi
finish
