#!/bin/sh
# cut.sh - cutting traces to what users look at (issue 24): --clip.
#
# The fixtures (tests/fixtures/cut_cpu.json, cut_window.json) are made so that
# every rule has a case; the expected events (tests/fixtures/cut_*.txt, one
# line per event as tests/cut_summary.py prints them) were worked out by hand:
#   CPU trace: ProfilerStep#1-3 at 1000, 1100, 1200 us (100 us each), the CPU
#     span 1000-1300 us, the profiler's span event 995-1320; aten::across
#     (1090-1120, thread 101) crosses the step 1/2 boundary; a fwdbwd flow
#     from step 1 (1015) to step 3 (1255).
#   window (us from the base): launches of correlations 1 (500: warm-up),
#     2 (1020: its kernel comes first in the window), 3 (1290: its kernel runs
#     to 1400, past the span), 4 (1350: after the span), 5 (990-1005: starts
#     before the span, ends in it), 7 (a driver launch, 1260), 8 (1115, in
#     step 2: its kernel runs at 1230, in step 3); a stream sync (6, 1160) and
#     its cuda_sync; a launch at 1310 (9: in the profiler's span, after the
#     last operator); syncs without a call (97 at 1180, 96 at 400); kernels
#     without a call (99 at 1100, 98 at 600); overhead at 1290-1310 and 700.
#   --clip keeps the calls that start in 995-1320 (2, 3, 6, 7, 8, 9) and their
#     work (late_k too), the work without a call that overlaps the span
#     (orphan_in), sync 97, ov_in; the profiler span becomes 1000-1400.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to read the outputs"
SUM="python3 $srcdir/tests/cut_summary.py"
CPU=$FIX/cut_cpu.json
WIN=$FIX/cut_window.json

# same NAME EXPECTED TRACE: TRACE's events are EXPECTED's.
same() {
	$SUM "$3" >"$tmp/got.txt" 2>"$tmp/sum.err" || { fail "$1: cannot read the output: $(tail -1 "$tmp/sum.err")"; return; }
	diff -u "$2" "$tmp/got.txt" >"$tmp/diff" || fail "$1: $(head -20 "$tmp/diff")"
}

# run NAME ARGS...: cuptimerge ARGS, which must succeed.
run() {
	name=$1
	shift
	rc=0
	$CUPTIMERGE -q --now 1795974776 --trace-name cut "$@" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "$name: exit $rc: $(cat "$tmp/err")"
}

tcase "no --clip: every window event, as the reference merge writes them"
run full -w "$WIN" -o "$tmp/full.json" "$CPU"
same full "$FIX/cut_full_expected.txt" "$tmp/full.json"

tcase "--clip: the calls that start in the CPU span, their GPU work, overlapping overhead"
run clip --clip -w "$WIN" -o "$tmp/clip.json" "$CPU"
same clip "$FIX/cut_clip_expected.txt" "$tmp/clip.json"

tcase "--clip, gzip output (-o .gz) and -j 1"
run clipgz --clip -j 1 -w "$WIN" -o "$tmp/clip.json.gz" "$CPU"
same clipgz "$FIX/cut_clip_expected.txt" "$tmp/clip.json.gz"

tcase "--clip at read sizes 1 to 31: the same output"
for bs in $(seq 1 31); do
	CUPTIMERGE_BUFSIZE=$bs run "clip bs $bs" --clip -w "$WIN" -o "$tmp/clip_bs.json" "$CPU"
	cmp -s "$tmp/clip.json" "$tmp/clip_bs.json" || fail "read size $bs: the output differs"
done

tcase "--clip with the careful readers: the same output"
CUPTIMERGE_CAREFUL=1 run "clip careful" --clip -w "$WIN" -o "$tmp/clip_careful.json" "$CPU"
cmp -s "$tmp/clip.json" "$tmp/clip_careful.json" || fail "the careful readers' output differs"

tcase "cuptimerge-batch --clip passes --clip on to the merge"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
printf 'key\tcpu trace\twindow or map\toutput\n' >"$tmp/m.tsv"
printf 'r0\t%s\t%s\t%s\n' "$CPU" "$WIN" "$tmp/batch/r0.json" >>"$tmp/m.tsv"
rc=0
"$BATCH" -q --clip -m "$tmp/m.tsv" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "batch: exit $rc: $(cat "$tmp/err")"
same batch "$FIX/cut_clip_expected.txt" "$tmp/batch/r0.json"

tcase "--clip: a window of another run (an hour later) is still refused, not cut to nothing"
python3 -c 'import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r"\"(start_ns|end_ns)\": (\d+)", lambda m: "\"%s\": %d" % (m.group(1), int(m.group(2)) + 3600 * 10**9), s)
open(sys.argv[2], "w").write(s)' "$WIN" "$tmp/late.json"
rc=0
$CUPTIMERGE -q --clip -w "$tmp/late.json" -o "$tmp/late_out.json" "$CPU" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "exit $rc, not 1"
grep -q "do not overlap" "$tmp/err" || fail "no 'do not overlap' message: $(cat "$tmp/err")"
[ ! -e "$tmp/late_out.json" ] || fail "an output was left"

tcase "--clip with -t: the window cut, its API rows repaired"
run cliprepair --clip -t "$WIN" -w "$WIN" -o "$tmp/cliprepair.json" "$CPU"
same cliprepair "$FIX/cut_clip_expected.txt" "$tmp/cliprepair.json"

# perfetto NAME TRACE: TRACE loads in Perfetto's trace processor with no error
# or data-loss stats, no unclosed slice (dur -1), a slice per X or instant event
# (tests/perfetto_check.py; skipped without node and the engine, see perfetto.sh).
shared=${SHARED:-$srcdir/../shared}
TP_DIR=${TP_DIR:-${HOME:-/nonexistent}/.cache/perfetto-tp}
export TP_DIR
perfetto() {
	if ! command -v node >/dev/null 2>&1 || [ ! -f "$shared/tools/perfetto/tp.mjs" ] ||
		[ ! -f "$TP_DIR/trace_processor.wasm" ]; then
		skip "$1: loads in Perfetto" "no node, tp.mjs or engine (TP_DIR)"
		return
	fi
	tcase "$1: loads in Perfetto, no error or data-loss stats, no unclosed slice, a slice an event"
	rc=0
	node "$shared/tools/perfetto/tp.mjs" "$2" \
		"select 'stat' as tag, name, idx, severity, value from stats where value > 0 and severity in ('error', 'data_loss')" \
		"select 'baddur' as tag, count(*) from slice where dur < 0" \
		"select 'cat' as tag, category, count(*) from slice group by category" >"$tmp/tp.out" 2>"$tmp/tp.err" || rc=$?
	[ $rc -eq 0 ] || fail "$1: tp.mjs exit $rc: $(tail -3 "$tmp/tp.err")"
	for what in clean slices; do
		python3 "$srcdir/tests/perfetto_check.py" $what "$2" "$tmp/tp.out" >"$tmp/check" 2>&1 ||
			fail "$1: $what: $(head -12 "$tmp/check")"
	done
}
perfetto "--clip output" "$tmp/clip.json.gz"

tcase "--clip: bad uses are usage errors (exit 2, one line)"
for args in "--clip=1 -w $WIN $CPU" "--clip -t $FIX/thread_map.json $CPU"; do
	rc=0
	# shellcheck disable=SC2086
	$CUPTIMERGE $args >/dev/null 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "$args: exit $rc, not 2"
	grep -q '^cuptimerge: ' "$tmp/err" || fail "$args: no message: $(cat "$tmp/err")"
done

finish
