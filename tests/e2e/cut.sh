#!/bin/sh
# cut.sh - cutting traces to what users look at (issue 24): --clip, --steps, --range,
# in a merge, on a trace alone (no -w, no -t) and in a repair (-t); --split.
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
#     before the span, ends in it, on thread 101: its row's metadata comes
#     and goes with it), 7 (a driver launch, 1260), 8 (1115, in step 2: its
#     kernel runs at 1230, in step 3); a stream sync (6, 1160) and
#     its cuda_sync; a launch at 1310 (9: in the profiler's span, after the
#     last operator); syncs without a call (97 at 1180, 96 at 400); kernels
#     without a call (99 at 1100, 98 at 600); overhead at 1290-1310 and 700.
#   --clip keeps the calls that start in 995-1320 (2, 3, 6, 7, 8, 9) and their
#     work (late_k too), the work without a call that overlaps the span
#     (orphan_in), sync 97, ov_in; the profiler span becomes 1000-1400.
#   --steps=2 is [1100, 1200): ProfilerStep#2, op_b, aten::across (kept
#     whole, 1090-1120), the metadata; the calls that overlap it (8, 6) and
#     their work, step2_k too (it runs at 1230, in step 3); sync 97 and
#     orphan_in (no call, in the range); not the fwdbwd flow (its ends lie in
#     steps 1 and 3); the profiler span 1090-1240.
#   --steps=1 is [1000, 1100): the flow's start lies in it, its end does not:
#     both ends are cut; call 5 (990-1005) overlaps it and is kept with its
#     kernel (under --clip it was cut: it starts before the span).
#   --steps=1-3 keeps every step, the flow whole.
#   --range=1250,1300: op_c, ProfilerStep#3, calls 7 and 3 (late_k to 1400),
#     ov_in; not call 9 (1310).
#   The window is of format 2, so (issue 26) each ProfilerStep#N, a
#   user_annotation of the CPU trace, gets Kineto's gpu_user_annotation span
#   over the kept GPU work of the calls made inside it (1 ns before the first
#   to 1 ns after the last: it widens the profiler span and the window's end
#   by 1 ns), and the metadata are stock's: no second process_name for pid
#   100, no names for the API threads nor for the overhead process (-1).
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
for bs in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
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

tcase "cuptimerge-batch --steps=2 passes the cut on (--force: the output is up to date)"
rc=0
"$BATCH" -q --force --steps=2 -m "$tmp/m.tsv" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "batch: exit $rc: $(cat "$tmp/err")"
same batch_steps "$FIX/cut_steps2_expected.txt" "$tmp/batch/r0.json"
for bad in --steps=x --range=2,1 "--steps=1 --range=1,2"; do
	rc=0
	# shellcheck disable=SC2086
	"$BATCH" -q $bad -m "$tmp/m.tsv" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "batch $bad: exit $rc, not 2"
done

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

. "$srcdir/tests/e2e/tploads.sh"
perfetto "--clip output" "$tmp/clip.json.gz"

# cutcase NAME EXPECTED ARGS...: the merge with ARGS, plain; its events are
# EXPECTED's (tests/fixtures/cut_EXPECTED_expected.txt).
cutcase() {
	name=$1 exp=$2
	shift 2
	tcase "$name"
	run "$name" "$@" -w "$WIN" -o "$tmp/$exp.json" "$CPU"
	same "$name" "$FIX/cut_${exp}_expected.txt" "$tmp/$exp.json"
}
cutcase "--steps=2: a step boundary inside a slice, GPU work outliving its step" steps2 --steps=2
cutcase "--steps=1: a flow across the cut is cut whole" steps1 --steps=1
cutcase "--steps=1-3: the flow kept whole" steps13 --steps=1-3
cutcase "--range=1250,1300: trace us, half-open" range --range=1250,1300

tcase "--steps=2: gzip output, -j 1, the careful readers: the same events"
run steps2gz --steps=2 -j 1 -w "$WIN" -o "$tmp/steps2.json.gz" "$CPU"
same steps2gz "$FIX/cut_steps2_expected.txt" "$tmp/steps2.json.gz"
CUPTIMERGE_CAREFUL=1 run "steps2 careful" --steps=2 -w "$WIN" -o "$tmp/steps2_careful.json" "$CPU"
cmp -s "$tmp/steps2.json" "$tmp/steps2_careful.json" || fail "the careful readers' output differs"

tcase "--steps=1 and --range at read sizes 1 to 31: the same output"
for bs in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	CUPTIMERGE_BUFSIZE=$bs run "steps1 bs $bs" --steps=1 -w "$WIN" -o "$tmp/bs.json" "$CPU"
	cmp -s "$tmp/steps1.json" "$tmp/bs.json" || fail "--steps=1, read size $bs: the output differs"
	CUPTIMERGE_BUFSIZE=$bs run "range bs $bs" --range=1250,1300 -w "$WIN" -o "$tmp/bs.json" "$CPU"
	cmp -s "$tmp/range.json" "$tmp/bs.json" || fail "--range, read size $bs: the output differs"
done

# the cut's CPU events copied in parts on threads (cpu/cpucopypar.c), each
# part deciding its events from the cut's notes (cm_cpucut_part_keep): a
# part at every element (CUPTIMERGE_COPY_STRIDE=8), 3 threads; the bytes of
# the copy on one thread, at small read sizes too
tcase "--steps and --range, the CPU events copied in parts on 3 threads, a part an element: the same bytes at read sizes 1, 7 and the default"
for cut in --steps=2 --steps=1 --steps=1-3 --range=1250,1300; do
	CUPTIMERGE_COPY_THREADS=1 run "$cut one thread" "$cut" -w "$WIN" -o "$tmp/one.json" "$CPU"
	for bs in 1 7 default; do
		rc=0
		CUPTIMERGE_BUFSIZE=${bs#default} CUPTIMERGE_COPY_STRIDE=8 CUPTIMERGE_COPY_THREADS=3 $CUPTIMERGE --now 1795974776 --trace-name cut -v \
			"$cut" -w "$WIN" -o "$tmp/parts.json" "$CPU" 2>"$tmp/err" || rc=$?
		[ $rc -eq 0 ] || fail "$cut, read size $bs: exit $rc: $(cat "$tmp/err")"
		grep -q "copy: the CPU trace's events in [1-9][0-9]* parts on 3 threads" "$tmp/err" ||
			fail "$cut, read size $bs: not in parts: $(grep copy: "$tmp/err")"
		cmp -s "$tmp/one.json" "$tmp/parts.json" || fail "$cut, read size $bs: other bytes in parts"
	done
done

perfetto "--steps=2 output" "$tmp/steps2.json.gz"
perfetto "--steps=1 output" "$tmp/steps1.json"
perfetto "--range output" "$tmp/range.json"

# A generated pair (gen_trace, 20,000 ops: a 6 MB CPU trace read in many
# batches, 1,352 ProfilerStep#N events): each cut checked event by event
# against the uncut merge by tests/cut_check.py, the same bytes from -j 1, -j 4,
# --memory=1M (the cut's tables in files) and the careful readers.
shared=${SHARED:-$srcdir/../shared}
if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --seed 3 --ops 20000 --quiet "$tmp/g.cpu" "$tmp/g.win"
	run gfull -w "$tmp/g.win" -o "$tmp/gfull.json" "$tmp/g.cpu"
	lo=$(python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(min(e["ts"] for e in ev if e.get("ph") == "X" and e.get("cat") != "Trace") + 100000)' "$tmp/g.cpu")
	hi=$(python3 -c 'import sys; print(float(sys.argv[1]) + 30000)' "$lo")
	for spec in "--steps=3-4:--steps 3 4" "--steps=1000:--steps 1000 1000" "--range=$lo,$hi:--range $lo $hi"; do
		opt=${spec%%:*} chk=${spec#*:}
		tcase "gen_trace pair, $opt: the uncut merge filtered by the rules; -j 1, -j 4, --memory=1M, careful: the same bytes"
		run "gen $opt" "$opt" -w "$tmp/g.win" -o "$tmp/gcut.json" "$tmp/g.cpu"
		# shellcheck disable=SC2086
		python3 "$srcdir/tests/cut_check.py" "$tmp/gfull.json" "$tmp/gcut.json" $chk >"$tmp/check" 2>&1 ||
			fail "$opt: $(head -12 "$tmp/check")"
		for how in "-j 1" "-j 4" "--memory=1M" careful; do
			if [ "$how" = careful ]; then
				CUPTIMERGE_CAREFUL=1 run "gen $opt $how" "$opt" -w "$tmp/g.win" -o "$tmp/gcut2.json" "$tmp/g.cpu"
			else
				# shellcheck disable=SC2086
				run "gen $opt $how" $how "$opt" -w "$tmp/g.win" -o "$tmp/gcut2.json" "$tmp/g.cpu"
			fi
			cmp -s "$tmp/gcut.json" "$tmp/gcut2.json" || fail "$opt $how: the output differs"
		done
	done
	perfetto "gen_trace pair --range output" "$tmp/gcut.json"
else
	skip "gen_trace pairs" "no $shared/tools/gen_trace"
fi

# A trace alone (no -w, no -t): copied, and cut by the same rules.
tcase "a trace alone, --steps=2: the CPU side of the merge's cut, the profiler's span event kept"
run alone --steps=2 -o "$tmp/alone.json" "$CPU"
same alone "$FIX/cut_alone_steps2_expected.txt" "$tmp/alone.json"

# cut_pairs.json: steps 1 and 2 at 0 and 100 (100 us each); a B/E pair
# (50-150) and an async b/e pair (60-160) that cross the boundary, an instant
# at 150, a counter at 20.  --steps=2 keeps the metadata, ProfilerStep#2,
# both pairs whole (never split: a lone B or E is an unclosed slice) and the
# instant; it cuts step 1 and the counter.
tcase "a trace alone, --steps=2: begin/end pairs kept whole, counters and instants by their ts"
run pairs --steps=2 -o "$tmp/pairs.json" "$FIX/cut_pairs.json"
same pairs "$FIX/cut_pairs_expected.txt" "$tmp/pairs.json"

tcase "a trace alone from a pipe, gzip output: the same events"
rc=0
$CUPTIMERGE -q --trace-name cut --steps=2 -o "$tmp/alone_pipe.json.gz" - <"$CPU" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
same alone_pipe "$FIX/cut_alone_steps2_expected.txt" "$tmp/alone_pipe.json.gz"

tcase "a trace alone, --steps=2 at read sizes 1 to 31 and with the careful reader: the same output"
for bs in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	CUPTIMERGE_BUFSIZE=$bs run "alone bs $bs" --steps=2 -o "$tmp/bs.json" "$CPU"
	cmp -s "$tmp/alone.json" "$tmp/bs.json" || fail "read size $bs: the output differs"
done
CUPTIMERGE_CAREFUL=1 run "alone careful" --steps=2 -o "$tmp/bs.json" "$CPU"
cmp -s "$tmp/alone.json" "$tmp/bs.json" || fail "the careful reader's output differs"

tcase "a stock Kineto trace (CPU and CUDA) alone, without options: copied, equal as JSON"
STOCK=$FIX/kineto_stock_full.json.gz
rc=0
$CUPTIMERGE -q -o "$tmp/stock.json" "$STOCK" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
json_same "$STOCK" "$tmp/stock.json" || fail "the copy differs from the input"

tcase "a stock Kineto trace, --range inside its step: kernels with their launches, flows whole"
slo=5232143880000 shi=5232143885000
run stockcut --range=$slo,$shi -o "$tmp/stockcut.json.gz" "$STOCK"
python3 "$srcdir/tests/cut_check.py" "$tmp/stock.json" "$tmp/stockcut.json.gz" --range $slo $shi >"$tmp/check" 2>&1 ||
	fail "$(head -12 "$tmp/check")"
perfetto "stock Kineto trace, cut" "$tmp/stockcut.json.gz"

perfetto "a trace alone with begin/end pairs, cut" "$tmp/pairs.json" clean

tcase "a repair (-t) cut by --range: the repaired trace filtered by the rules"
rlo=5117755926679 rhi=5117755931679
rc=0
$CUPTIMERGE -q -t "$FIX/thread_map.json" -o "$tmp/repaired.json" "$FIX/threads_full.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "repair: exit $rc: $(cat "$tmp/err")"
run repcut -t "$FIX/thread_map.json" --range=$rlo,$rhi -o "$tmp/repcut.json" "$FIX/threads_full.json"
python3 "$srcdir/tests/cut_check.py" "$tmp/repaired.json" "$tmp/repcut.json" --range $rlo $rhi >"$tmp/check" 2>&1 ||
	fail "$(head -12 "$tmp/check")"
python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
bad = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("tid") in (511690432, 352294592)]
sys.exit(1 if bad else 0)' "$tmp/repcut.json" || fail "an API event left on a pthread_self() row"
perfetto "repair cut by --range" "$tmp/repcut.json"

# --split=steps[:N]: a file for each step (or N), written in one pass over a
# trace alone; each file is what --steps gives for its steps (equal as JSON;
# split.sh checks the bytes, and --split in a merge and a repair).
tcase "--split=steps: three files, each the trace's --steps=N; file 2 as worked out by hand"
mkdir -p "$tmp/split"
run split --split=steps -o "$tmp/split/c_%s.json" "$CPU"
for n in 1 2 3; do
	run "steps $n" --steps=$n -o "$tmp/split_ref.json" "$CPU"
	json_same "$tmp/split/c_$n.json" "$tmp/split_ref.json" || fail "file $n differs from --steps=$n"
done
same split2 "$FIX/cut_alone_steps2_expected.txt" "$tmp/split/c_2.json"
[ "$(ls "$tmp/split" | wc -l)" -eq 3 ] || fail "not three files: $(ls "$tmp/split")"

tcase "--split=steps:2 of a merged trace, gzip: files 1-2 and 3, GPU work with its call, flows whole"
run merged -w "$WIN" -o "$tmp/merged.json" "$CPU"
mkdir -p "$tmp/msplit"
run msplit --split=steps:2 -o "$tmp/msplit/m_%s.json.gz" "$tmp/merged.json"
[ "$(ls "$tmp/msplit" | tr '\n' ' ')" = "m_1-2.json.gz m_3.json.gz " ] || fail "files: $(ls "$tmp/msplit")"
for spec in 1-2 3; do
	run "msteps $spec" --steps=$spec -o "$tmp/msplit_ref.json" "$tmp/merged.json"
	json_same "$tmp/msplit/m_$spec.json.gz" "$tmp/msplit_ref.json" || fail "file $spec differs from --steps=$spec"
done

tcase "--split at read sizes 1 to 31: the same files"
for bs in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	rm -rf "$tmp/split_bs"
	mkdir "$tmp/split_bs"
	CUPTIMERGE_BUFSIZE=$bs run "split bs $bs" --split=steps -o "$tmp/split_bs/c_%s.json" "$CPU"
	for n in 1 2 3; do
		cmp -s "$tmp/split/c_$n.json" "$tmp/split_bs/c_$n.json" || fail "read size $bs: file $n differs"
	done
done

# the events of a trace alone copied in parts on threads (cpu/cpucopypar.c)
# and routed to the files: with the trace's "M" events moved to its end, no
# file has an event before the parts begin, and a file's first in a part
# goes without the separator before it (cpucopypar.c part_sink)
tcase "--split of a trace alone, the events copied in parts on 3 threads, a part an element, the \"M\" events first and last: the files of the copy on one thread, at read sizes 1, 7 and the default"
python3 -c 'import sys
lines = open(sys.argv[1]).read().split("\n")
m = [l.rstrip().rstrip(",") for l in lines if "\"ph\": \"M\"" in l]
rest = [l for l in lines if "\"ph\": \"M\"" not in l]
last = max(i for i, l in enumerate(rest) if "\"ph\"" in l)
rest[last] = rest[last].rstrip() + ","
rest[last + 1:last + 1] = [l + "," for l in m[:-1]] + m[-1:]
open(sys.argv[2], "w").write("\n".join(rest))' "$CPU" "$tmp/late_m.json" || fail "cannot move the M events"
for trace in "$CPU" "$tmp/late_m.json"; do
	rm -rf "$tmp/split_one"
	mkdir "$tmp/split_one"
	CUPTIMERGE_COPY_THREADS=1 run "split one thread" -j 4 --split=steps -o "$tmp/split_one/c_%s.json" "$trace"
	for bs in 1 7 default; do
		rm -rf "$tmp/split_parts"
		mkdir "$tmp/split_parts"
		CUPTIMERGE_BUFSIZE=${bs#default} CUPTIMERGE_COPY_STRIDE=8 CUPTIMERGE_COPY_THREADS=3 run "split parts" -j 4 \
			--split=steps -o "$tmp/split_parts/c_%s.json" "$trace"
		for n in 1 2 3; do
			cmp -s "$tmp/split_one/c_$n.json" "$tmp/split_parts/c_$n.json" ||
				fail "$(basename "$trace"), read size $bs: file $n differs in parts"
		done
	done
done

tcase "--split with the careful reader (an event at a time, no layout): the same files as JSON"
rm -rf "$tmp/split_careful"
mkdir "$tmp/split_careful"
CUPTIMERGE_CAREFUL=1 run "split careful" --split=steps -o "$tmp/split_careful/c_%s.json" "$CPU"
for n in 1 2 3; do
	json_same "$tmp/split/c_$n.json" "$tmp/split_careful/c_$n.json" || fail "careful: file $n differs"
done

for n in 1-2 3; do
	perfetto "--split of a merged trace, file $n" "$tmp/msplit/m_$n.json.gz"
done

tcase "--split of a trace without ProfilerStep events: status 1, one line, no file"
mkdir -p "$tmp/nosplit"
rc=0
$CUPTIMERGE -q --split=steps -o "$tmp/nosplit/x_%s.json" "$FIX/kineto_cpu.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "exit $rc, not 1"
grep -q "no ProfilerStep#N events" "$tmp/err" || fail "$(cat "$tmp/err")"
[ -z "$(ls "$tmp/nosplit")" ] || fail "files were left: $(ls "$tmp/nosplit")"

if [ -f "$tmp/gfull.json" ]; then
	tcase "--split of the generated merge: more than 64 files refused; steps:50 gives 28 files, each its --steps"
	mkdir -p "$tmp/gsplit"
	rc=0
	$CUPTIMERGE -q --split=steps -o "$tmp/gsplit/g_%s.json" "$tmp/gfull.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 1 ] && grep -q "more than 64" "$tmp/err" || fail "exit $rc: $(cat "$tmp/err")"
	run gsplit --split=steps:50 -o "$tmp/gsplit/g_%s.json" "$tmp/gfull.json"
	[ "$(ls "$tmp/gsplit" | wc -l)" -eq 28 ] || fail "$(ls "$tmp/gsplit" | wc -l) files"
	for spec in 1-50 651-700 1351-1352; do
		run "gsteps $spec" --steps=$spec -o "$tmp/gsplit_ref.json" "$tmp/gfull.json"
		json_same "$tmp/gsplit/g_$spec.json" "$tmp/gsplit_ref.json" || fail "file $spec differs from --steps=$spec"
	done
fi

# refused NAME STATUS PATTERN ARGS...: cuptimerge ARGS fails with STATUS, one
# line matching PATTERN, and no output file.
refused() {
	name=$1 want=$2 pat=$3
	shift 3
	tcase "$name"
	rc=0
	rm -f "$tmp/refused.json"
	$CUPTIMERGE -q "$@" -o "$tmp/refused.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq "$want" ] || fail "exit $rc, not $want: $(cat "$tmp/err")"
	[ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
	grep -q "$pat" "$tmp/err" || fail "no '$pat': $(cat "$tmp/err")"
	[ ! -e "$tmp/refused.json" ] || fail "an output was left"
}
refused "--steps on a trace without ProfilerStep events: a clear error, status 1" 1 "no ProfilerStep#N events" \
	--steps=1 -w "$FIX/kineto_window.json" "$FIX/kineto_cpu.json"
refused "--steps of steps the trace lacks: status 1" 1 "no ProfilerStep#N event with N from 7 to 9" \
	--steps=7-9 -w "$WIN" "$CPU"
refused "--range where nothing lies: status 1" 1 "nothing to keep" --range=5000,6000 -w "$WIN" "$CPU"

tcase "bad option values: one line, exit 2"
for args in "--clip=1 -w $WIN $CPU" "--clip -t $FIX/thread_map.json $CPU" "--steps=a -w $WIN $CPU" \
	"--steps=3-1 -w $WIN $CPU" "--steps=-1 -w $WIN $CPU" "--steps= -w $WIN $CPU" "--steps=1- -w $WIN $CPU" \
	"--range=1 -w $WIN $CPU" "--range=2,1 -w $WIN $CPU" "--range=nan,3 -w $WIN $CPU" \
	"--range=1,2,3 -w $WIN $CPU" "--range=0x10,20 -w $WIN $CPU" "--steps=1 --range=1,2 -w $WIN $CPU" \
	"--steps=1 --steps=2 -w $WIN $CPU" "--clip --steps=1 -w $WIN $CPU" "--steps -w $WIN $CPU" \
	"--split=foo -o $tmp/x_%s.json $CPU" "--split=steps:0 -o $tmp/x_%s.json $CPU" \
	"--split=steps:x -o $tmp/x_%s.json $CPU" "--split=steps -o $tmp/x.json $CPU" "--split=steps $CPU" \
	"--split=steps -o $tmp/x_%s_%s.json $CPU" "--split=steps -o $tmp/x_%d.json $CPU" \
	"--split=steps --steps=1 -o $tmp/x_%s.json $CPU"; do
	rc=0
	# shellcheck disable=SC2086
	$CUPTIMERGE $args >/dev/null 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "$args: exit $rc, not 2"
	grep -q '^cuptimerge: ' "$tmp/err" || fail "$args: no message: $(cat "$tmp/err")"
done

finish
