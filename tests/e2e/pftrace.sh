#!/bin/sh
# pftrace.sh - Perfetto's protobuf output (-o FILE.pftrace, --format=perfetto):
# every .pftrace decodes as a perfetto.protos.Trace with protoc against
# Perfetto's own schema, and Perfetto's trace processor shows for it what it
# shows for the JSON of the same run (tests/pftrace_check.py: per thread the
# same slices with their names, times and args, the same flows, counters,
# processes and threads).  Traces: the oracle examples, gen_trace pairs (plain
# and --edge-cases), the real H200 pair, the real CPU-only trace split and
# merged again, the real full trace repaired with -t, and a CPU-only trace
# merged with its cuptirec window (H200), with slices that overlap.  Also:
# the same bytes at read sizes 1 to 31, to standard output, gzip,
# --format=json over the name, the -v line, and the refusal of what the format cannot
# hold (one line, exit 1, no file).  Events of tid 0, which Perfetto's JSON
# import shows on the pid's main thread; pids and tids of every JSON type
# (floats, missing, bool, null, "", strings), the names of string ones at
# each of their events, and what the JSON import drops or refuses of them;
# counters with an id, sort indexes with a fraction.
#
# Needs protoc (Debian: protobuf-compiler) and ../shared/tools/perfetto; the
# trace-processor cases also node and the engine (see perfetto.sh).
. "${srcdir:-.}/tests/e2e/common.sh"
. "${srcdir:-.}/tests/e2e/pfcommon.sh"
NOW="--now 1795974776"

# decodes NAME FILE: FILE is a Trace to protoc, with slices in it.
decodes() {
	tcase "$1: decodes as perfetto.protos.Trace (protoc)"
	if ! protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$2" >"$tmp/decoded" 2>"$tmp/protoc.err"; then
		fail "$1: protoc: $(head -3 "$tmp/protoc.err")"
	elif ! grep -q "TYPE_SLICE_BEGIN" "$tmp/decoded"; then
		fail "$1: no slice in $(wc -l <"$tmp/decoded") lines"
	fi
}

# both NAME ARGS...: run cuptimerge ARGS twice, into $tmp/NAME.json and
# $tmp/NAME.pftrace; then the two checks.
both() {
	name=$1
	shift
	rc=0
	$CUPTIMERGE -q "$@" -o "$tmp/$name.json" 2>"$tmp/err" &&
		$CUPTIMERGE -q "$@" -o "$tmp/$name.pftrace" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		tcase "$name: runs"
		fail "$name: exit $rc: $(cat "$tmp/err")"
		return
	fi
	decodes "$name" "$tmp/$name.pftrace"
	same "$name" "$tmp/$name.json" "$tmp/$name.pftrace"
}

ex=$shared/oracle/examples
if [ -d "$ex" ]; then
	both example $NOW -w "$ex/window.json" "$ex/cpu.json"
	# its "no id" X event has "dur": null: Perfetto refuses the whole JSON
	# ("JSON trace file is incomplete"); the protobuf writer says which event
	tcase "example-edge: an X event with \"dur\": null is refused, in one line"
	rc=0
	$CUPTIMERGE -q $NOW -w "$ex/edge_window.json" -o "$tmp/edge.pftrace" "$ex/edge_cpu.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 1 ] || fail "exit $rc, not 1"
	grep -q '^cuptimerge: .*edge.pftrace:[0-9]*: a "X" event whose dur is not a number cannot be written as Perfetto protobuf$' \
		"$tmp/err" || fail "says: $(cat "$tmp/err")"
	[ ! -e "$tmp/edge.pftrace" ] || fail "the file appeared"
	both example-nobase --now 1764441600 -w "$ex/window.json" "$ex/cpu_nobase.json"
else
	skip "oracle examples" "no $ex"
fi

# gen_trace pairs; Perfetto 55.3 refuses a JSON with a UTF-16 surrogate-pair
# escape (perfetto.sh says more), so that one name is written as UTF-8 first.
if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --seed 11 --ops 600 --quiet "$tmp/gen.cpu" "$tmp/gen.win"
	both gen $NOW -w "$tmp/gen.win" "$tmp/gen.cpu"
	"$shared/tools/gen_trace" --seed 11 --ops 400 --edge-cases --pretty --quiet "$tmp/edge.cpu" "$tmp/edge.win"
	python3 -c 'import sys
t = open(sys.argv[1], encoding="utf-8").read().replace(r"\ud83d\ude80", "\U0001F680")
open(sys.argv[1], "w", encoding="utf-8").write(t)' "$tmp/edge.cpu"
	both gen-edge $NOW -w "$tmp/edge.win" "$tmp/edge.cpu"
else
	skip "gen_trace pairs" "no $shared/tools/gen_trace"
fi

# The real traces: the H200 pair; the CPU-only run split and merged again;
# the full trace repaired.
both real $NOW -w "$FIX/threads_window.json" "$FIX/threads_base.json"
if [ -x "$shared/tools/kineto_split" ] && [ -f "$shared/corpus/threads_cpu.json" ]; then
	"$shared/tools/kineto_split" "$shared/corpus/threads_cpu.json" "$tmp/split.cpu" "$tmp/split.win" \
		--thread-map "$FIX/thread_map.json" --quiet
	both split $NOW -w "$tmp/split.win" "$tmp/split.cpu"
else
	skip "real CPU-only trace, split and merged" "no $shared/tools/kineto_split or corpus"
fi
both repaired -t "$FIX/thread_map.json" "$FIX/threads_full.json"
# Every kind of event and arg the format takes, through the repair with an
# empty map (which copies the events as they are): names, labels and sort
# indexes, a tie of begins (a second track of the thread), B/E, instants of
# thread, process and global scope, counters (one with an id), flows from
# one launch to two kernels (one of zero duration), string, negative and
# wide ids, args of every type, nested, dotted, beyond int64.
echo '{"threads":{}}' >"$tmp/nomap.json"
both kinds -t "$tmp/nomap.json" "$FIX/pftrace_kinds.json"
# tid 0: Perfetto's JSON import shows it as the pid, so its events, a
# thread_name and thread_sort_index of it land on the process's main thread
# (tid == pid), flows from and to it too; with an integer pid, pid 0 (the
# GPU's device 0, where the protobuf's (0, 0) is the idle thread), Kineto's
# overhead pid -1 (taken as 0), a string pid, and a negative tid beside it;
# a tie of begins and an overlap across tid 0 and tid == pid (a lane).
cat >"$tmp/tid0.in.json" <<'EOF'
{"schemaVersion": 1, "traceEvents": [
{"ph": "M", "name": "process_name", "pid": 5, "tid": 0, "args": {"name": "python"}},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": 1, "args": {"name": "worker"}},
{"ph": "M", "name": "thread_name", "pid": 7, "tid": 0, "args": {"name": "named as tid 0"}},
{"ph": "M", "name": "thread_sort_index", "pid": 7, "tid": 0, "args": {"sort_index": 3}},
{"ph": "X", "name": "a0", "cat": "c", "pid": 5, "tid": 0, "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "s", "id": 1, "pid": 5, "tid": 0, "ts": 10, "cat": "ac2g", "name": "ac2g"},
{"ph": "X", "name": "a0 inner", "cat": "c", "pid": 5, "tid": 5, "ts": 11, "dur": 2},
{"ph": "X", "name": "a1", "cat": "c", "pid": 5, "tid": 1, "ts": 10, "dur": 5},
{"ph": "X", "name": "tie short", "cat": "c", "pid": 5, "tid": 5, "ts": 100, "dur": 2},
{"ph": "X", "name": "tie long", "cat": "c", "pid": 5, "tid": 0, "ts": 100, "dur": 5},
{"ph": "X", "name": "overlap a", "cat": "c", "pid": 5, "tid": 0, "ts": 110, "dur": 5},
{"ph": "X", "name": "overlap b", "cat": "c", "pid": 5, "tid": 5, "ts": 112, "dur": 5},
{"ph": "i", "s": "t", "name": "i0", "pid": 5, "tid": 0, "ts": 16},
{"ph": "X", "name": "k0", "cat": "kernel", "pid": 0, "tid": 0, "ts": 12, "dur": 5, "args": {"correlation": 1}},
{"ph": "f", "id": 1, "pid": 0, "tid": 0, "ts": 12, "cat": "ac2g", "name": "ac2g", "bp": "e"},
{"ph": "X", "name": "k7", "cat": "kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 5},
{"ph": "X", "name": "c0", "cat": "c", "pid": 7, "tid": 0, "ts": 30, "dur": 5},
{"ph": "X", "name": "c7", "cat": "c", "pid": 7, "tid": 7, "ts": 40, "dur": 5},
{"ph": "X", "name": "cneg", "cat": "c", "pid": 7, "tid": -1, "ts": 50, "dur": 5},
{"ph": "X", "name": "o0", "cat": "overhead", "pid": -1, "tid": 0, "ts": 60, "dur": 5},
{"ph": "X", "name": "s0", "cat": "Trace", "pid": "Spans", "tid": 0, "ts": 70, "dur": 5},
{"ph": "X", "name": "s1", "cat": "Trace", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 70, "dur": 5}
]}
EOF
both tid0 "$tmp/tid0.in.json"
# and in batches of a few elements on 1 to 4 threads: tid 0 and tid == pid
# share their lanes' shard (pflaneq.c's key), so the same bytes
tcase "tid 0 in batches of a few elements on 1 to 4 threads: the same bytes"
for j in 1 2 3 4; do
	CUPTIMERGE_PFT_BATCH=100 $CUPTIMERGE -q -j $j -o "$tmp/tid0_$j.pftrace" "$tmp/tid0.in.json" || fail "-j $j: exit $?"
	cmp -s "$tmp/tid0_$j.pftrace" "$tmp/tid0_1.pftrace" || { fail "-j $j: other bytes than -j 1"; break; }
done
same "tid 0 in batches of a few elements, 4 threads" "$tmp/tid0.json" "$tmp/tid0_4.pftrace"
# Slices that overlap without nesting, as CUPTI reports a CUDA sync on a
# stream over the end of a memcpy: Perfetto's JSON import drops the later
# one, the .pftrace shows it on a second (or third) track of the same thread,
# nothing nested wrongly (pftrace_check.py says what it checks).  A
# hand-made trace with each shape, then the real run they come from (a
# CPU-only torch.profiler trace and the cuptirec window of the same H200
# run, 11 such slices).
both overlap -t "$tmp/nomap.json" "$FIX/pftrace_overlap.json"
both h200 $NOW -w "$FIX/h200_kwindow.json.gz" "$FIX/h200_kcpu.json.gz"

# The same bytes whatever the read size, to standard output, and gzip.  (The
# output reaches the transcoder in pieces cut between elements, whatever the
# read size; check_pfstream's "stream" cuts them anywhere.)
tcase "the same .pftrace at read sizes 1 to 31"
for n in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	CUPTIMERGE_BUFSIZE=$n $CUPTIMERGE -q -t "$FIX/thread_map.json" -o "$tmp/rs.pftrace" "$FIX/threads_full.json" ||
		fail "read size $n: exit $?"
	cmp -s "$tmp/rs.pftrace" "$tmp/repaired.pftrace" || { fail "read size $n: other bytes"; break; }
done
tcase "--format=perfetto writes the same bytes to standard output"
$CUPTIMERGE -q --format=perfetto -t "$FIX/thread_map.json" "$FIX/threads_full.json" >"$tmp/stdout.pftrace" ||
	fail "exit $?"
cmp -s "$tmp/stdout.pftrace" "$tmp/repaired.pftrace" || fail "other bytes than -o repaired.pftrace"
tcase "-o FILE.pftrace.gz: the same protobuf, gzip"
$CUPTIMERGE -q -t "$FIX/thread_map.json" -o "$tmp/repaired.pftrace.gz" "$FIX/threads_full.json" || fail "exit $?"
gzip -dc "$tmp/repaired.pftrace.gz" | cmp -s - "$tmp/repaired.pftrace" || fail "not the .pftrace, gzip"
same "repaired, gzip" "$tmp/repaired.json" "$tmp/repaired.pftrace.gz"
# The interning tables started over every few events (CUPTIMERGE_PFT_INTERN,
# a testing aid): each packet after says so, and the names come again.
rc=0
CUPTIMERGE_PFT_INTERN=200 $CUPTIMERGE -q -t "$FIX/thread_map.json" -o "$tmp/reset.pftrace" "$FIX/threads_full.json" || rc=$?
tcase "interning tables started over: runs"
[ $rc -eq 0 ] || fail "exit $rc"
tcase "interning tables started over: they did"
[ "$(protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/reset.pftrace" |
	grep -c 'sequence_flags: 1')" -gt 10 ] || fail "10 or fewer clearings"
same "interning tables started over" "$tmp/repaired.json" "$tmp/reset.pftrace"
# Batches of a few elements (CUPTIMERGE_PFT_BATCH, a testing aid; the
# window's events in groups of a few records, CUPTIMERGE_PFT_GROUP) encoded on
# 1 to 4 threads: the same bytes for any count, each batch defining its
# strings again, and Perfetto shows what it shows for the JSON.
tcase "batches of a few elements on 1 to 4 threads: the same bytes"
for j in 1 2 3 4; do
	CUPTIMERGE_PFT_BATCH=1000 CUPTIMERGE_PFT_GROUP=5 $CUPTIMERGE -q -j $j $NOW -w "$FIX/threads_window.json" -o "$tmp/batch$j.pftrace" \
		"$FIX/threads_base.json" || fail "-j $j: exit $?"
	cmp -s "$tmp/batch$j.pftrace" "$tmp/batch1.pftrace" || { fail "-j $j: other bytes than -j 1"; break; }
done
tcase "batches of a few elements: each starts the interning over"
[ "$(protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/batch4.pftrace" |
	grep -c 'sequence_flags: 1')" -gt 50 ] || fail "50 or fewer clearings"
same "batches of a few elements, 4 threads" "$tmp/real.json" "$tmp/batch4.pftrace"
# The lanes of the threads in shards placed on 1 to 4 threads (pflaneq.c:
# by the workers, each shard's batches in order, whichever thread gets
# there): the same bytes for any count, and the H200 run's overlaps still
# on lanes that Perfetto pairs.
tcase "lanes in shards on 1 to 4 threads: the same bytes"
for j in 1 2 3 4; do
	CUPTIMERGE_PFT_BATCH=3000 $CUPTIMERGE -q -j $j $NOW -w "$FIX/h200_kwindow.json.gz" \
		-o "$tmp/shard$j.pftrace" "$FIX/h200_kcpu.json.gz" || fail "-j $j: exit $?"
	cmp -s "$tmp/shard$j.pftrace" "$tmp/shard1.pftrace" || { fail "-j $j: other bytes than -j 1"; break; }
done
same "lanes in shards, 4 threads" "$tmp/h200.json" "$tmp/shard4.pftrace"
# From -j 2 the workers walk the text themselves, a chunk of one batch's
# span each (pfstream.c), each from a guess at where its first element
# begins, checked against the walk of the chunk before: chunks of 100
# bytes (CUPTIMERGE_PFT_BATCH), cut inside names, numbers and elements
# longer than a chunk, make the same bytes as the writer's own walk at -j 1.
tcase "chunks of 100 bytes walked by 2 to 4 workers: the same bytes as -j 1"
CUPTIMERGE_PFT_BATCH=100 $CUPTIMERGE -q -j 1 $NOW -w "$FIX/h200_kwindow.json.gz" -o "$tmp/chunk1.pftrace" \
	"$FIX/h200_kcpu.json.gz" || fail "-j 1: exit $?"
for j in 2 3 4; do
	CUPTIMERGE_PFT_BATCH=100 $CUPTIMERGE -q -j $j $NOW \
		-w "$FIX/h200_kwindow.json.gz" -o "$tmp/chunk$j.pftrace" "$FIX/h200_kcpu.json.gz" || fail "-j $j: exit $?"
	cmp -s "$tmp/chunk$j.pftrace" "$tmp/chunk1.pftrace" || { fail "-j $j: other bytes than -j 1"; break; }
done
same "chunks of 100 bytes, 4 workers" "$tmp/h200.json" "$tmp/chunk4.pftrace"
# Guesses that do not hold: "}, {" inside strings (a name, an arg, a key)
# and between the objects of an array in args, where a worker's guess
# takes it for the start of an element; the chunk is then walked again
# from the walk handed on, and the bytes are -j 1's.
tcase "guesses inside strings and arrays of objects: walked again, the same bytes as -j 1"
{
	printf '{"schemaVersion": 1, "deviceProperties": [{"id": 0}, {"id": 1}, {"name": "}, {"}],\n"traceEvents": [\n'
	for i in $(seq 1 60); do
		printf '{"ph": "X", "name": "a}, {\\"b\\": \\"}, {%d", "cat": "x}, {y", "pid": 1, "tid": %d, "ts": %d.5, "dur": 3, ' $i $((i % 3 + 1)) $((i * 10))
		printf '"args": {"list": [{"k": 1}, {"k": "}, {"}, {"}, {": [{}, {}]}], "s": "},\\n{"}},\n'
		printf '  {"ph": "i", "s": "t", "name": "}, {", "pid": 1, "tid": 1, "ts": %d},\n' $((i * 10 + 1))
	done
	printf '{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t}, {1"}}\n], "traceName": "}, {x"}\n'
} >"$tmp/guess.json"
$CUPTIMERGE -q -o "$tmp/guess.json.out" "$tmp/guess.json" || fail "JSON: exit $?"
CUPTIMERGE_PFT_BATCH=150 $CUPTIMERGE -q -j 1 -o "$tmp/guess1.pftrace" "$tmp/guess.json" || fail "-j 1: exit $?"
for j in 2 3 4; do
	CUPTIMERGE_PFT_BATCH=150 $CUPTIMERGE -v -j $j -o "$tmp/guess$j.pftrace" "$tmp/guess.json" 2>"$tmp/gerr" ||
		fail "-j $j: exit $?"
	cmp -s "$tmp/guess$j.pftrace" "$tmp/guess1.pftrace" || { fail "-j $j: other bytes than -j 1"; break; }
done
grep -q "chunks walked again [1-9]" "$tmp/gerr" || fail "no chunk walked again: $(grep perfetto "$tmp/gerr")"
mv "$tmp/guess.json.out" "$tmp/guess.json"
same "guesses that do not hold, 4 workers" "$tmp/guess.json" "$tmp/guess4.pftrace"
# Batches of a few elements of every kind on 1 to 4 threads, their packets
# written by the passer (pfseg.c, from -j 2) or the sink (-j 1): the state
# each carries on to the next (the held-back X end, the last X for a flow,
# the clock, a "C" element's values) makes the same bytes for any count,
# and Perfetto shows what it shows for the JSON.
tcase "every kind in batches of a few elements, both ways, on 1 to 4 threads: the same bytes"
for j in 1 2 3 4; do
	CUPTIMERGE_PFT_BATCH=200 $CUPTIMERGE -q -j $j -t "$tmp/nomap.json" \
		-o "$tmp/kinds$j.pftrace" "$FIX/pftrace_kinds.json" || fail "-j $j: exit $?"
	cmp -s "$tmp/kinds$j.pftrace" "$tmp/kinds1.pftrace" || { fail "-j $j: other bytes than -j 1"; break; }
done
same "every kind in batches of a few elements, 3 threads" "$tmp/kinds.json" "$tmp/kinds3.pftrace"
# -v: the transcoder says where its time went, a line for each .pftrace
# written (its figures are timings: only its shape is checked).
tcase "-v: a line on where the encoding's time went"
$CUPTIMERGE -v -j 3 $NOW -w "$FIX/threads_window.json" -o "$tmp/v.pftrace" "$FIX/threads_base.json" \
	2>"$tmp/verr" || fail "exit $?"
grep -q "^cuptimerge: $tmp/v.pftrace: perfetto: [0-9.]* s from the first text: .* 3 workers: [0-9]* batches, busy [0-9.]* s and idle [0-9.]* s, the text walked in [0-9.]* s of their CPU (guesses held [0-9]*, chunks walked again [0-9]*; .*), lanes placed in [0-9.]* s .*; the sequential part [0-9.]* s, .* in order, .* bytes passed on (written) in [0-9.]* s; batches inserted: [0-9]*, encoded by the writer's threads\( and handed straight to the sequential part\)\{0,1\}$" \
	"$tmp/verr" || fail "says: $(grep perfetto "$tmp/verr")"
# -v's second line: the first's figures by phase (the text before the
# inserted batches: the CPU trace's events; the window's events inserted
# as batches; the text after), each with when it ran.  The phases' batches
# add up to the first line's, the inserted phase's are the batches
# inserted (in batches of little text and groups of 3 records: many of
# each), at -j 1 (no passer), 3 (the sequential part on the pool's
# sink) and 4 (on a thread of its own), plain and gzip (whose line says
# what the sink waited for); a conversion inserts none.  The inserted
# batches go straight to the sequential part (pfinsert.c's direct path:
# the pool's batches are the text's, and the inserted phase says how
# many went) or, with CUPTIMERGE_PFT_DIRECT=0, through the pool.
# phases_add_up ERR: ERR's two lines agree.
phases_add_up() {
	ph=$(grep "perfetto by phase" "$1") || { fail "no line by phase: $(grep perfetto "$1")"; return; }
	echo "$ph" | grep -q "^cuptimerge: .*: perfetto by phase (s from the first text): the text before the inserted batches: the writer's thread [0-9.]*-[0-9.]*, .*; the inserted batches: .*; the text after: .*" ||
		{ fail "the line by phase says: $ph"; return; }
	total=$(sed -n 's/.*perfetto: .* workers: \([0-9]*\) batches, busy.*/\1/p' "$1")
	ins=$(sed -n 's/.*; batches inserted: \([0-9]*\), encoded by.*/\1/p' "$1")
	sum=0
	for n in $(echo "$ph" | grep -o '[0-9]* batches, the workers busy' | cut -d' ' -f1); do
		sum=$((sum + n))
	done
	nins=$(echo "$ph" | sed -n 's/.*; the inserted batches: [^;]*; \([0-9]*\) batches, the workers busy.*/\1/p')
	if grep -q "batches inserted: [0-9]*, encoded by the writer's threads and handed straight" "$1"; then
		# (none through the pool: the inserted phase says how many went straight)
		nins=$(echo "$ph" | sed -n 's/.*; the inserted batches: [^;]*([^)]*); \([0-9]*\) batches straight to the sequential part, none through the pool; .*/\1/p')
	fi
	[ -n "$total" ] && [ "$sum" -eq "$total" ] || fail "the phases' batches add up to $sum, not ${total:-?}: $ph"
	[ "${nins:-0}" -eq "${ins:-x}" ] || fail "the inserted phase has ${nins:-no} batches, not ${ins:-?} inserted: $ph"
}
tcase "-v: a second line, by phase; the phases' batches add up to the first line's"
for j in 1 3 4; do
	for o in v$j.pftrace v$j.pftrace.gz; do
		CUPTIMERGE_PFT_BATCH=300 CUPTIMERGE_PFT_GROUP=3 $CUPTIMERGE -v -j $j $NOW -w "$FIX/threads_window.json" \
			-o "$tmp/$o" "$FIX/threads_base.json" 2>"$tmp/verr" || fail "-j $j, $o: exit $?"
		phases_add_up "$tmp/verr"
		grep "perfetto by phase" "$tmp/verr" | grep -q "; the inserted batches: the writer's thread [0-9.]*-[0-9.]*, handed on for [0-9.]* s and waited [0-9.]* s ([0-9.]* s for the text's batches before them to be handed on, [0-9.]* s for room in the sequential part's queue, [0-9]* waits over 0.2 ms, the longest [0-9.]* ms); [1-9][0-9]* batches straight to the sequential part, none through the pool; " ||
			fail "-j $j, $o: no batch inserted: $(grep "perfetto by" "$tmp/verr")"
		CUPTIMERGE_PFT_DIRECT=0 CUPTIMERGE_PFT_BATCH=300 CUPTIMERGE_PFT_GROUP=3 $CUPTIMERGE -v -j $j $NOW \
			-w "$FIX/threads_window.json" -o "$tmp/$o" "$FIX/threads_base.json" 2>"$tmp/verr" ||
			fail "-j $j, $o, CUPTIMERGE_PFT_DIRECT=0: exit $?"
		phases_add_up "$tmp/verr"
		grep "perfetto by phase" "$tmp/verr" | grep -q "; the inserted batches: the writer's thread [0-9.]*-[0-9.]*, inserted for [0-9.]* s and waited [0-9.]* s for a slot; [1-9][0-9]* batches, " ||
			fail "-j $j, $o, CUPTIMERGE_PFT_DIRECT=0: no batch inserted through the pool: $(grep "perfetto by" "$tmp/verr")"
	done
	# (the passer's sink calls, from -j 2; -j 1's on the sequential part)
	grep "perfetto by phase" "$tmp/verr" | grep -q "passed on by [0-9.]* ([0-9]* buffers: .*, of it the sink waited [0-9.]* s for its workers and wrote on [0-9.]* s)" ||
		fail "-j $j, gzip: the sink's waits not said: $(grep "perfetto by" "$tmp/verr")"
done
CUPTIMERGE_PFT_BATCH=300 $CUPTIMERGE -v -j 3 -o "$tmp/vconv.pftrace" "$FIX/threads_base.json" 2>"$tmp/verr" ||
	fail "a conversion: exit $?"
phases_add_up "$tmp/verr"
grep -q "perfetto by phase .*; the inserted batches: none; the text after: none$" "$tmp/verr" ||
	fail "a conversion's line by phase: $(grep "perfetto by" "$tmp/verr")"
# From 4 workers the sequential part (the records placed in order) runs on
# a thread of its own (pfstream.c's batch_sink, an ordered handoff), the
# pool's sink only handing it the batches; CUPTIMERGE_PFT_SEQ_THREAD (a
# testing aid) says where: the same
# bytes either way, -v says which, and a refusal made there (a pid beyond a
# double's range, found when the tracks are made in order) is one line, the
# batches after it dropped, no file.
tcase "the sequential part on a thread of its own or on the pool's workers: the same bytes, -v says which"
for w in 0 1; do
	CUPTIMERGE_PFT_SEQ_THREAD=$w CUPTIMERGE_PFT_BATCH=200 $CUPTIMERGE -v -j 4 -t "$tmp/nomap.json" \
		-o "$tmp/seq$w.pftrace" "$FIX/pftrace_kinds.json" 2>"$tmp/seqerr$w" || fail "SEQ_THREAD=$w: exit $?"
	cmp -s "$tmp/seq$w.pftrace" "$tmp/kinds1.pftrace" || fail "SEQ_THREAD=$w: other bytes than -j 1"
done
grep -q "waiting for lanes, on a thread of its own that waited [0-9.]* s for batches" "$tmp/seqerr1" ||
	fail "-v with its own thread says: $(grep perfetto "$tmp/seqerr1")"
! grep -q "thread of its own" "$tmp/seqerr0" || fail "-v on the workers says: $(grep perfetto "$tmp/seqerr0")"
tcase "the sequential part on a thread of its own: a refusal made there is one line, no file"
{
	printf '{"traceEvents": [\n'
	for i in $(seq 1 400); do
		printf '{"ph": "X", "name": "a%d", "cat": "c", "pid": 1, "tid": %d, "ts": %d, "dur": 3},\n' $i $((i % 5)) $((i * 10))
	done
	printf '{"ph": "X", "name": "z", "cat": "c", "pid": 1e400, "tid": 1, "ts": 5000, "dur": 3},\n'
	for i in $(seq 401 800); do
		printf '{"ph": "X", "name": "a%d", "cat": "c", "pid": 1, "tid": %d, "ts": %d, "dur": 3},\n' $i $((i % 5)) $((i * 10))
	done
	printf '{"ph": "i", "name": "end", "pid": 1, "tid": 1, "ts": 9000, "s": "t"}]}\n'
} >"$tmp/seqbad.json"
for w in 0 1; do
	rc=0
	CUPTIMERGE_PFT_SEQ_THREAD=$w CUPTIMERGE_PFT_BATCH=300 $CUPTIMERGE -q -j 4 -o "$tmp/seqbad$w.pftrace" \
		"$tmp/seqbad.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 1 ] || fail "SEQ_THREAD=$w: exit $rc, not 1"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^cuptimerge: .*seqbad$w.pftrace:[0-9]*: .*pid is a number beyond a double's range" "$tmp/err" ||
		fail "SEQ_THREAD=$w says: $(cat "$tmp/err")"
	[ ! -e "$tmp/seqbad$w.pftrace" ] || fail "SEQ_THREAD=$w: the file appeared"
done
if [ -d "$ex" ]; then
	tcase "batches of a few elements on 3 threads: a refusal is one line, the first bad event's"
	rc=0
	CUPTIMERGE_PFT_BATCH=200 $CUPTIMERGE -q -j 3 $NOW -w "$ex/edge_window.json" -o "$tmp/edge3.pftrace" "$ex/edge_cpu.json" \
		2>"$tmp/err" || rc=$?
	[ $rc -eq 1 ] || fail "exit $rc, not 1"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^cuptimerge: .*edge3.pftrace:2774: a "X" event whose dur is not a number' "$tmp/err" ||
		fail "says: $(cat "$tmp/err")"
	[ ! -e "$tmp/edge3.pftrace" ] || fail "the file appeared"
	# a worker meets it in a chunk of its own while the writer still
	# writes chunks, and the chunks after it stop waiting for its walk
	tcase "chunks of 64 bytes on 3 threads: a refusal is one line, the first bad event's"
	rc=0
	CUPTIMERGE_PFT_BATCH=64 $CUPTIMERGE -q -j 3 $NOW -w "$ex/edge_window.json" \
		-o "$tmp/edge3.pftrace" "$ex/edge_cpu.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 1 ] || fail "exit $rc, not 1"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^cuptimerge: .*edge3.pftrace:2774: a "X" event whose dur is not a number' "$tmp/err" ||
		fail "says: $(cat "$tmp/err")"
	[ ! -e "$tmp/edge3.pftrace" ] || fail "the file appeared"
fi
# the name gives the format: --format=json over a .pftrace name wrote JSON
# into it; a contradiction is a usage error now (options.sh has the rest)
tcase "--format=json over a .pftrace name: a usage error naming both, no file"
rc=0
$CUPTIMERGE -q --format=json -t "$FIX/thread_map.json" -o "$tmp/named.pftrace" "$FIX/threads_full.json" \
	2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "exit $rc, not 2"
grep -q "^cuptimerge: --format=json: the output $tmp/named.pftrace is named for Perfetto's protobuf, and would hold JSON" \
	"$tmp/err" || fail "says: $(cat "$tmp/err")"
[ ! -e "$tmp/named.pftrace" ] || fail "the file appeared"
tcase "--format=xml is a usage error"
rc=0
$CUPTIMERGE --format=xml -t "$FIX/thread_map.json" "$FIX/threads_full.json" >/dev/null 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "exit $rc, not 2"
grep -q "format needs json or perfetto" "$tmp/err" || fail "says: $(cat "$tmp/err")"

# Refusals: what the format cannot hold, one line naming it, exit 1, no file.
refuses() {
	tcase "refuses $1"
	printf '%s' "$2" >"$tmp/in.json"
	rm -f "$tmp/out.pftrace"
	rc=0
	$CUPTIMERGE -q -t "$tmp/nomap.json" -o "$tmp/out.pftrace" "$tmp/in.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 1 ] || fail "exit $rc, not 1"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
	grep -q "^cuptimerge: $tmp/out.pftrace:[0-9]*: $3" "$tmp/err" || fail "says: $(cat "$tmp/err")"
	[ ! -e "$tmp/out.pftrace" ] || fail "the file appeared"
}
refuses "an async event" '{"traceEvents":[{"ph":"b","name":"a","id":1,"pid":1,"tid":1,"ts":1}]}' \
	'a "b" event cannot be written as Perfetto protobuf'
refuses "a negative time" '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":-5,"dur":1}]}' \
	'a "X" event whose ts is negative or too large cannot be written as Perfetto protobuf'
refuses "a flow with a string id" '{"traceEvents":[{"ph":"s","name":"a","cat":"c","id":"x","pid":1,"tid":1,"ts":1}]}' \
	'a flow ("s") event whose id is not an integer'
# (a negative id read from the value kept as it was parsed, 18 digits at most;
# 2^64 from its text)
refuses "a flow with a negative id" '{"traceEvents":[{"ph":"f","bp":"e","name":"a","cat":"c","id":-3,"pid":1,"tid":1,"ts":1}]}' \
	'a flow ("f") event whose id is not an integer from 0 to 2^64-1'
refuses "a flow with an id of 2^64" '{"traceEvents":[{"ph":"t","name":"a","cat":"c","id":18446744073709551616,"pid":1,"tid":1,"ts":1}]}' \
	'a flow ("t") event whose id is not an integer from 0 to 2^64-1'
refuses "a flow with a fractional id" '{"traceEvents":[{"ph":"s","name":"a","cat":"c","id":2.5,"pid":1,"tid":1,"ts":1}]}' \
	'a flow ("s") event whose id is not an integer'
# A pid or tid that is not an integer (issue 25), as Perfetto's JSON import
# takes it: a float cut to its integer part (3.5 is 3; -0.5, 1e300 and
# 4294967296.0 are outside 0..2^32-1), a missing one, true, null, an object
# or an array as 0 (so a tid is the pid's main thread, and a pid is 0); a
# string, "" and "7" too, a thread or process of its own named by it.
# Slices, B/E, a flow's two ends, instants, names and counters on each.
cat >"$tmp/tidtypes.in.json" <<'EOF'
{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "name": "main", "cat": "c", "pid": 5, "tid": 5, "ts": 10, "dur": 100},
{"ph": "X", "name": "no tid", "cat": "c", "pid": 5, "ts": 11, "dur": 2},
{"ph": "s", "id": 1, "pid": 5, "ts": 11, "cat": "ac2g", "name": "ac2g"},
{"ph": "B", "name": "B no tid", "cat": "c", "pid": 5, "ts": 14},
{"ph": "E", "pid": 5, "ts": 15},
{"ph": "X", "name": "tid 0.0", "cat": "c", "pid": 5, "tid": 0.0, "ts": 16, "dur": 2},
{"ph": "i", "s": "t", "name": "i tid -0.0", "pid": 5, "tid": -0.0, "ts": 17},
{"ph": "X", "name": "tid -0.5", "cat": "c", "pid": 5, "tid": -0.5, "ts": 19, "dur": 1},
{"ph": "X", "name": "tid 1e300", "cat": "c", "pid": 5, "tid": 1e300, "ts": 20, "dur": 1},
{"ph": "X", "name": "tid -1e300", "cat": "c", "pid": 5, "tid": -1e300, "ts": 21, "dur": 1},
{"ph": "X", "name": "tid true", "cat": "c", "pid": 5, "tid": true, "ts": 22, "dur": 1},
{"ph": "X", "name": "tid null", "cat": "c", "pid": 5, "tid": null, "ts": 23, "dur": 1},
{"ph": "X", "name": "tid {}", "cat": "c", "pid": 5, "tid": {}, "ts": 24, "dur": 1},
{"ph": "X", "name": "tid []", "cat": "c", "pid": 5, "tid": [1], "ts": 25, "dur": 1},
{"ph": "X", "name": "tid 4294967296.0", "cat": "c", "pid": 5, "tid": 4294967296.0, "ts": 26, "dur": 1},
{"ph": "M", "name": "thread_name", "pid": 5, "args": {"name": "main, named with no tid"}},
{"ph": "X", "name": "tid 3.0", "cat": "c", "pid": 5, "tid": 3.0, "ts": 30, "dur": 5},
{"ph": "X", "name": "tid 3.5", "cat": "c", "pid": 5, "tid": 3.5, "ts": 40, "dur": 5},
{"ph": "X", "name": "tid 3e0", "cat": "c", "pid": 5, "tid": 3e0, "ts": 50, "dur": 5},
{"ph": "X", "name": "tid 0.3e1", "cat": "c", "pid": 5, "tid": 0.3e1, "ts": 60, "dur": 5},
{"ph": "f", "id": 1, "pid": 5, "tid": 3.9, "ts": 61, "cat": "ac2g", "name": "ac2g", "bp": "e"},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": 3.25, "args": {"name": "three"}},
{"ph": "M", "name": "thread_sort_index", "pid": 5, "tid": 3.75, "args": {"sort_index": 2}},
{"ph": "X", "name": "tid 4294967295.5", "cat": "c", "pid": 5, "tid": 4294967295.5, "ts": 70, "dur": 5},
{"ph": "X", "name": "tid 7", "cat": "c", "pid": 5, "tid": 7, "ts": 80, "dur": 5},
{"ph": "X", "name": "tid \"7\"", "cat": "c", "pid": 5, "tid": "7", "ts": 80, "dur": 5},
{"ph": "X", "name": "tid \"\"", "cat": "c", "pid": 5, "tid": "", "ts": 90, "dur": 5},
{"ph": "X", "name": "pid 6.0", "cat": "c", "pid": 6.0, "tid": 1, "ts": 10, "dur": 5},
{"ph": "X", "name": "pid 6.75 tid 0", "cat": "c", "pid": 6.75, "tid": 0, "ts": 20, "dur": 5},
{"ph": "M", "name": "process_name", "pid": 6.5, "args": {"name": "six"}},
{"ph": "X", "name": "no pid", "cat": "c", "tid": 9, "ts": 10, "dur": 5},
{"ph": "X", "name": "pid null", "cat": "c", "pid": null, "tid": 9, "ts": 20, "dur": 5},
{"ph": "X", "name": "pid false", "cat": "c", "pid": false, "tid": 9, "ts": 30, "dur": 5},
{"ph": "X", "name": "pid -2.5", "cat": "c", "pid": -2.5, "tid": 9, "ts": 40, "dur": 5},
{"ph": "X", "name": "pid \"\"", "cat": "c", "pid": "", "tid": 9, "ts": 10, "dur": 5},
{"ph": "i", "s": "g", "name": "pid \"\" tid \"\"", "pid": "", "tid": "", "ts": 20},
{"ph": "i", "s": "p", "name": "process instant, tid null", "pid": 5, "tid": null, "ts": 95},
{"ph": "i", "s": "g", "name": "global instant, no pid or tid", "ts": 96},
{"ph": "C", "name": "ctr", "pid": 5.5, "ts": 97, "args": {"v": 1}},
{"ph": "C", "name": "ctr0", "ts": 97, "args": {"v": 2}}
]}
EOF
both tidtypes "$tmp/tidtypes.in.json"
tcase "pids and tids of every type in batches of a few elements on 1 to 4 threads: the same bytes"
for j in 1 2 3 4; do
	CUPTIMERGE_PFT_BATCH=100 $CUPTIMERGE -q -j $j -o "$tmp/tidtypes_$j.pftrace" "$tmp/tidtypes.in.json" || fail "-j $j: exit $?"
	cmp -s "$tmp/tidtypes_$j.pftrace" "$tmp/tidtypes_1.pftrace" || { fail "-j $j: other bytes than -j 1"; break; }
done
same "pids and tids of every type in batches of a few elements, 4 threads" "$tmp/tidtypes.json" "$tmp/tidtypes_4.pftrace"
# Where Perfetto's JSON import drops the event (its stat json_parser_failure):
# an instant of a thread without a tid, of a process without a pid.
refuses "an instant of a thread without a tid" '{"traceEvents":[{"ph":"i","s":"t","name":"a","pid":1,"ts":1}]}' \
	'an "i" event of a thread without a tid (a number or a string) cannot be written as Perfetto protobuf'
refuses "an instant without a tid" '{"traceEvents":[{"ph":"I","name":"a","pid":1,"tid":null,"ts":1}]}' \
	'an "I" event of a thread without a tid (a number or a string) cannot be written as Perfetto protobuf'
refuses "an instant of a process without a pid" '{"traceEvents":[{"ph":"i","s":"p","name":"a","pid":true,"tid":1,"ts":1}]}' \
	'an "i" event of a process without a pid (a number or a string) cannot be written as Perfetto protobuf'
# Where Perfetto refuses the whole JSON ("Double overflow/underflow"): a pid
# or tid beyond a double's range, on a slice, a counter, a name.
refuses "a tid beyond a double's range" '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1e400,"ts":1,"dur":1}]}' \
	"an event whose tid is a number beyond a double's range cannot be written as Perfetto protobuf"
refuses "a counter's tid beyond a double's range" '{"traceEvents":[{"ph":"C","name":"a","pid":1,"tid":-1e400,"ts":1,"args":{"v":1}}]}' \
	"an event whose pid or tid is a number beyond a double's range cannot be written as Perfetto protobuf"
refuses "a thread_name's pid beyond a double's range" '{"traceEvents":[{"ph":"M","name":"thread_name","pid":1e999,"tid":1,"args":{"name":"a"}}]}' \
	"an event whose pid or tid is a number beyond a double's range cannot be written as Perfetto protobuf"
# The name of a string pid's process or tid's thread (issue 25): Perfetto's
# JSON import names it by its string at each of its events, of any phase,
# and a process_name or thread_name names it after that event, so the last
# in its order of the events wins: by time, then "E", then "X" (the longest
# first), then the others in the order of the file.  A tid of the pid's
# string, and a tid 0, are the string pid's main thread.
cat >"$tmp/strnames.in.json" <<'EOF'
{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "name": "a", "cat": "c", "pid": 5, "tid": "T1", "ts": 20, "dur": 5},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T1", "ts": 30, "args": {"name": "T1: a thread_name after its events"}},
{"ph": "X", "name": "b", "cat": "c", "pid": 5, "tid": "T2", "ts": 20, "dur": 5},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T2", "ts": 20, "args": {"name": "T2: a thread_name at the time of its X, after it"}},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T3", "ts": 20, "args": {"name": "T3: a thread_name at the time of its X, before it"}},
{"ph": "X", "name": "c", "cat": "c", "pid": 5, "tid": "T3", "ts": 20, "dur": 5},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T4", "ts": 40, "args": {"name": "T4: not shown, a counter after"}},
{"ph": "X", "name": "d", "cat": "c", "pid": 5, "tid": "T4", "ts": 20, "dur": 5},
{"ph": "C", "name": "ctr", "pid": 5, "tid": "T4", "ts": 50, "args": {"v": 1}},
{"ph": "X", "name": "e", "cat": "c", "pid": 5, "tid": "T5", "ts": 20, "dur": 15},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T5", "ts": 30, "args": {"name": "T5: not shown, an instant after at its time"}},
{"ph": "i", "s": "t", "name": "i5", "pid": 5, "tid": "T5", "ts": 30},
{"ph": "X", "name": "f", "cat": "c", "pid": 5, "tid": "T6", "ts": 20, "dur": 15},
{"ph": "i", "s": "t", "name": "i6", "pid": 5, "tid": "T6", "ts": 30},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T6", "ts": 30, "args": {"name": "T6: an instant before at its time"}},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T7", "ts": 50, "args": {"name": "T7: a thread_name later in time, earlier in the file"}},
{"ph": "X", "name": "g", "cat": "c", "pid": 5, "tid": "T7", "ts": 10, "dur": 5},
{"ph": "B", "name": "h", "cat": "c", "pid": 5, "tid": "T8", "ts": 10},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T8", "ts": 20, "args": {"name": "T8: a thread_name at the time of its E, before it"}},
{"ph": "E", "pid": 5, "tid": "T8", "ts": 20},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "T9", "ts": 30, "args": {"name": "T9: not shown, another M after"}},
{"ph": "X", "name": "j", "cat": "c", "pid": 5, "tid": "T9", "ts": 20, "dur": 5},
{"ph": "M", "name": "thread_sort_index", "pid": 5, "tid": "T9", "ts": 40, "args": {"sort_index": 1}},
{"ph": "X", "name": "k", "cat": "c", "pid": 5, "tid": "", "ts": 20, "dur": 5},
{"ph": "M", "name": "thread_name", "pid": 5, "tid": "", "ts": 10, "args": {"name": "not shown, before its event"}},
{"ph": "X", "name": "l", "cat": "c", "pid": "P1", "tid": 1, "ts": 20, "dur": 5},
{"ph": "M", "name": "process_name", "pid": "P1", "tid": 1, "ts": 30, "args": {"name": "P1: a process_name after its events"}},
{"ph": "M", "name": "process_name", "pid": "P2", "tid": 1, "args": {"name": "P2: not shown, before its events"}},
{"ph": "X", "name": "m", "cat": "c", "pid": "P2", "tid": 1, "ts": 20, "dur": 5},
{"ph": "M", "name": "process_name", "pid": "P3", "tid": 1, "ts": 50, "args": {"name": "P3: not shown, a global instant after"}},
{"ph": "X", "name": "n", "cat": "c", "pid": "P3", "tid": 1, "ts": 20, "dur": 5},
{"ph": "i", "s": "g", "name": "g3", "pid": "P3", "tid": 1, "ts": 60},
{"ph": "X", "name": "o", "cat": "c", "pid": "P4", "tid": "P4", "ts": 20, "dur": 5},
{"ph": "X", "name": "p", "cat": "c", "pid": "P4", "tid": 0, "ts": 21, "dur": 2},
{"ph": "M", "name": "thread_name", "pid": "P4", "tid": 0, "ts": 40, "args": {"name": "P4's main thread"}},
{"ph": "X", "name": "q", "cat": "c", "pid": "P5", "tid": 0, "ts": 20, "dur": 5},
{"ph": "X", "name": "r", "cat": "c", "pid": "P5", "tid": "P5", "ts": 21, "dur": 2}
]}
EOF
both strnames "$tmp/strnames.in.json"
tcase "string pids and tids named in batches of a few elements on 1 to 4 threads: the same bytes"
for j in 1 2 3 4; do
	CUPTIMERGE_PFT_BATCH=100 $CUPTIMERGE -q -j $j -o "$tmp/strnames_$j.pftrace" "$tmp/strnames.in.json" || fail "-j $j: exit $?"
	cmp -s "$tmp/strnames_$j.pftrace" "$tmp/strnames_1.pftrace" || { fail "-j $j: other bytes than -j 1"; break; }
done
same "string pids and tids named in batches of a few elements, 4 threads" "$tmp/strnames.json" "$tmp/strnames_4.pftrace"
# Counters with an id (issue 25): Perfetto's JSON import puts the id in the
# track's name only when it is a string other than "", so those of an
# integer id, of "" and of none share the tracks "ctr a" and "ctr b".
cat >"$tmp/ctrid.in.json" <<'EOF'
{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "name": "a", "cat": "c", "pid": 1, "tid": 1, "ts": 10, "dur": 100},
{"ph": "C", "name": "ctr", "pid": 1, "ts": 10, "args": {"a": 1, "b": 2.5}},
{"ph": "C", "name": "ctr", "id": 7, "pid": 1, "ts": 20, "args": {"a": 5}},
{"ph": "C", "name": "ctr", "id": "", "pid": 1, "ts": 30, "args": {"b": 6}},
{"ph": "C", "name": "ctr", "id": "x", "pid": 1, "ts": 40, "args": {"a": 7, "b": -1}}
]}
EOF
both ctrid "$tmp/ctrid.in.json"
# A sort index with a fraction (issue 25): the JSON import casts it to an
# integer (3.7 is 3, -2.5 is -2); one beyond int32 or a string has no place
# in the descriptor (the JSON import drops the string too).
tcase "a sort index with a fraction is cut to its integer part"
cat >"$tmp/sortidx.json" <<'EOF'
{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "name": "a", "cat": "c", "pid": 1, "tid": 1, "ts": 10, "dur": 100},
{"ph": "X", "name": "b", "cat": "c", "pid": 1, "tid": 2, "ts": 10, "dur": 100},
{"ph": "X", "name": "c", "cat": "c", "pid": 2, "tid": 3, "ts": 10, "dur": 100},
{"ph": "X", "name": "d", "cat": "c", "pid": 3, "tid": 4, "ts": 10, "dur": 100},
{"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 1, "args": {"sort_index": 3.7}},
{"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 2, "args": {"sort_index": 5000000000}},
{"ph": "M", "name": "process_sort_index", "pid": 2, "args": {"sort_index": -2.5e0}},
{"ph": "M", "name": "process_sort_index", "pid": 3, "args": {"sort_index": "7"}}
]}
EOF
$CUPTIMERGE -q -o "$tmp/sortidx.pftrace" "$tmp/sortidx.json" || fail "exit $?"
protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/sortidx.pftrace" |
	grep 'legacy_sort_index' | tr -d ' ' | sort | tr '\n' ' ' >"$tmp/sortidx"
[ "$(cat "$tmp/sortidx")" = "legacy_sort_index:-2 legacy_sort_index:3 " ] || fail "sort indexes: $(cat "$tmp/sortidx")"
finish
