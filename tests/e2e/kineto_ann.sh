#!/bin/sh
# kineto_ann.sh - issue 26: the gpu_user_annotation spans Kineto draws of the
# CPU trace's user annotations, for a window of version 2 (gpu/gpuanns.c).
# kineto_ann_cpu.json + kineto_ann_window.json: every expected span below is
# worked out by hand from Kineto's rule (tests/fixtures/KINETO.md, "User
# annotations"): the innermost user_annotation open on the call's thread
# (the window's thread map gives a worker's), one span an annotation and
# (device, stream) from its first GPU op's start to its last one's end,
# 1 ns earlier and 2 ns longer; none for a call inside an annotation whose
# name is not a string (it still hides the one around it); the window's own
# annotation wins for a call its CUSTOM1 record names.  A version-1 window
# gets the reference's spans only.  Then a generated trace with 12,000
# annotations under --memory 1M (the index sorted in runs on disk).
# And the process and thread metadata of a version-2 window as stock Kineto
# writes it (cuptimerge(1)): nothing the CPU trace already names (it names
# pid 100, its thread 100, GPU 1 and stream 7 of device 0), processes named
# after the program (its process_name, "python3"), no names for the API
# threads (100 and the worker's 300) nor for the overhead row; GPU 0 to 15
# named whatever the window used, as Kineto names them.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compare the spans"
shared=${SHARED:-$srcdir/../shared}

# spans OUT: the gpu_user_annotation events of the merged trace OUT, one a
# line, sorted, as (name, pid, tid, ts, dur, args)
spans() {
	python3 - "$1" <<'EOF'
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
rows = sorted(json.dumps([e["name"], e["pid"], e["tid"], e["ts"], e["dur"], e["args"]])
              for e in evs if e.get("cat") == "gpu_user_annotation")
print("\n".join(rows))
EOF
}

# the hand-worked spans of the fixture (KINETO.md), sorted as spans() sorts
cat >"$tmp/want_v2" <<'EOF'
["cpu\"win\u00e9", 0, 7, 731.999, 3.002, {"External id": 9}]
["from window", 0, 7, 711.999, 2.002, {"External id": 8}]
["inner", 0, 7, 129.999, 10.002, {"External id": 2}]
["inner", 0, 9, 169.999, 10.002, {"External id": 2}]
["late", 1, 13, 551.999, 8.002, {"External id": 6}]
["outer", 0, 7, 19.999, 245.002, {"External id": 1}]
["worker", 0, 11, 59.999, 10.002, {"External id": 4}]
EOF
echo '["from window", 0, 7, 711.999, 2.002, {"External id": 8}]' >"$tmp/want_v1"

for mode in parallel careful; do
	tcase "version 2, $mode readers: the spans of the CPU trace's user annotations, as Kineto draws them"
	careful=0
	[ $mode = careful ] && careful=1
	rc=0
	CUPTIMERGE_CAREFUL=$careful $CUPTIMERGE -v --trace-name a -w "$FIX/kineto_ann_window.json" \
		"$FIX/kineto_ann_cpu.json" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "exit $rc: $(cat "$tmp/err")"
		continue
	fi
	grep -q "read by: window $mode, CPU trace $mode" "$tmp/err" || fail "not read by the $mode readers"
	spans "$tmp/out.json" >"$tmp/got" || fail "no trace"
	cmp -s "$tmp/want_v2" "$tmp/got" || fail "spans differ: $(diff "$tmp/want_v2" "$tmp/got" | head -n 12)"
done

# the metadata: the CPU trace's ten, then the merge's, worked out by hand
cat >"$tmp/want_meta" <<'EOF'
["process_labels", 0, 0, 20.0, {"labels": "GPU 0"}]
["process_labels", 1, 0, 0.0, {"labels": "GPU 1"}]
["process_labels", 100, 0, 0.0, {"labels": "CPU"}]
["process_name", 0, 0, 20.0, {"name": "python3"}]
["process_name", 1, 0, 0.0, {"name": "python3"}]
["process_name", 100, 0, 0.0, {"name": "python3"}]
["process_sort_index", 0, 0, 20.0, {"sort_index": 5000000}]
["process_sort_index", 1, 0, 0.0, {"sort_index": 5000001}]
["process_sort_index", 100, 0, 0.0, {"sort_index": 100}]
["thread_name", 0, 11, 0.0, {"name": "stream 11 "}]
["thread_name", 0, 7, 0.0, {"name": "stream 7 "}]
["thread_name", 0, 9, 0.0, {"name": "stream 9 "}]
["thread_name", 1, 13, 0.0, {"name": "stream 13 "}]
["thread_name", 100, 100, 0.0, {"name": "thread 100 (python3)"}]
["thread_sort_index", 0, 11, 0.0, {"sort_index": 11}]
["thread_sort_index", 0, 7, 0.0, {"sort_index": 7}]
["thread_sort_index", 0, 9, 0.0, {"sort_index": 9}]
["thread_sort_index", 1, 13, 0.0, {"sort_index": 13}]
["thread_sort_index", 100, 100, 0.0, {"sort_index": 100}]
EOF
# and Kineto's GPU 2 to 15, which stock names in every GPU run, at the
# earliest device's first event (device 0's, 20 us)
for d in 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
	echo "[\"process_labels\", $d, 0, 20.0, {\"labels\": \"GPU $d\"}]"
	echo "[\"process_name\", $d, 0, 20.0, {\"name\": \"python3\"}]"
	echo "[\"process_sort_index\", $d, 0, 20.0, {\"sort_index\": $((5000000 + d))}]"
done >>"$tmp/want_meta"
LC_ALL=C sort -o "$tmp/want_meta" "$tmp/want_meta"
for mode in parallel careful; do
	tcase "version 2, $mode readers: the metadata as stock Kineto writes it, one of each per row"
	careful=0
	[ $mode = careful ] && careful=1
	CUPTIMERGE_CAREFUL=$careful $CUPTIMERGE --trace-name a -w "$FIX/kineto_ann_window.json" \
		"$FIX/kineto_ann_cpu.json" >"$tmp/out.json" 2>"$tmp/err" || fail "exit: $(cat "$tmp/err")"
	python3 - "$tmp/out.json" >"$tmp/got" <<'EOF' || fail "no trace"
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
print("\n".join(sorted(json.dumps([e["name"], e["pid"], e["tid"], e["ts"], e["args"]])
                       for e in evs if e.get("ph") == "M")))
EOF
	cmp -s "$tmp/want_meta" "$tmp/got" || fail "metadata differ: $(diff "$tmp/want_meta" "$tmp/got" | head -n 12)"
done

tcase "version 2: the same bytes with --buffer-size 1..31 and with -j 1"
$CUPTIMERGE --trace-name a -w "$FIX/kineto_ann_window.json" "$FIX/kineto_ann_cpu.json" >"$tmp/ref.json"
for bs in 1 2 3 5 7 11 13 17 19 23 29 31; do
	$CUPTIMERGE --buffer-size $bs --trace-name a -w "$FIX/kineto_ann_window.json" \
		"$FIX/kineto_ann_cpu.json" >"$tmp/bs.json" || fail "--buffer-size $bs: exit $?"
	cmp -s "$tmp/ref.json" "$tmp/bs.json" || fail "--buffer-size $bs: other bytes"
done
$CUPTIMERGE -j 1 --trace-name a -w "$FIX/kineto_ann_window.json" "$FIX/kineto_ann_cpu.json" >"$tmp/j1.json" ||
	fail "-j 1: exit $?"
cmp -s "$tmp/ref.json" "$tmp/j1.json" || fail "-j 1: other bytes"

# the same window as version 1: no span of the CPU trace's annotations
python3 - "$FIX/kineto_ann_window.json" "$tmp/win1.json" <<'EOF'
import json, sys
w = json.load(open(sys.argv[1]))
del w["window_version"]
json.dump(w, open(sys.argv[2], "w"))
EOF
tcase "version 1: only the window's own annotation has a span (the reference's)"
if $CUPTIMERGE --trace-name a -w "$tmp/win1.json" "$FIX/kineto_ann_cpu.json" >"$tmp/v1.json" 2>"$tmp/err"; then
	spans "$tmp/v1.json" >"$tmp/got"
	cmp -s "$tmp/want_v1" "$tmp/got" || fail "spans differ: $(diff "$tmp/want_v1" "$tmp/got" | head -n 12)"
else
	fail "exit: $(cat "$tmp/err")"
fi
if [ -x "$shared/oracle/refmerge" ]; then
	tcase "version 1: the whole trace tracecmp-equal to the reference merge's"
	"$shared/oracle/refmerge" "$FIX/kineto_ann_cpu.json" "$tmp/win1.json" "$tmp/ref1.json" --trace-name a
	"$shared/oracle/tracecmp" "$tmp/ref1.json" "$tmp/v1.json" >"$tmp/cmp" || fail "$(head -n 8 "$tmp/cmp")"
else
	skip "version 1: the whole trace tracecmp-equal to the reference merge's" "no $shared/oracle"
fi

# 12,000 annotations, each i holding one call: odd i a nested annotation
# around it (the nested one wins), even i none; the kernel on stream
# 7 + i % 3.  Expected: one span per annotation that holds a call, at the
# kernel's start - 1 ns, 1 us + 2 ns long.
python3 - "$tmp/bcpu.json" "$tmp/bwin.json" "$tmp/bwant" <<'EOF'
import json, sys
B, N = 1700000000000000000, 12000
cpu, win, want = [], [], []
ext = 1
for i in range(N):
    t = i * 10
    cpu.append({"ph": "X", "cat": "user_annotation", "name": "a%d" % i, "pid": 100, "tid": 100, "ts": float(t),
                "dur": 8.0, "args": {"External id": ext}})
    holder, ext = ("a%d" % i, ext), ext + 1
    if i % 2:
        cpu.append({"ph": "X", "cat": "user_annotation", "name": "n%d" % i, "pid": 100, "tid": 100,
                    "ts": t + 1.0, "dur": 4.0, "args": {"External id": ext}})
        holder, ext = ("n%d" % i, ext), ext + 1
        call = t + 2
    else:
        call = t + 6
    corr = 1000 + i
    win.append({"kind": "cuda_runtime", "cbid": 211, "start_ns": B + call * 1000, "end_ns": B + call * 1000 + 500,
                "process_id": 100, "thread_id": 100, "correlation_id": corr, "return_value": 0,
                "name": "cudaLaunchKernel"})
    win.append({"kind": "kernel", "device_id": 0, "context_id": 1, "stream_id": 7 + i % 3, "correlation_id": corr,
                "graph_node_id": 0, "graph_id": 0, "start_ns": B + (t + 7) * 1000, "end_ns": B + (t + 8) * 1000,
                "annotation": None, "name": "k"})
    # the kernel starts at t + 7 us: the span 1 ns before, the decimal text
    want.append(json.dumps([holder[0], 0, 7 + i % 3, float("%d.999" % (t + 6)), 1.002, {"External id": holder[1]}]))
json.dump({"schemaVersion": 1, "baseTimeNanoseconds": B, "traceEvents": cpu}, open(sys.argv[1], "w"))
json.dump({"events": win, "window_version": 2}, open(sys.argv[2], "w"))
open(sys.argv[3], "w").write("\n".join(sorted(want)) + "\n")
EOF
tcase "12,000 annotations under --memory 1M: every span, nested ones winning"
if $CUPTIMERGE --memory 1M --trace-name b -w "$tmp/bwin.json" "$tmp/bcpu.json" >"$tmp/b.json" 2>"$tmp/err"; then
	spans "$tmp/b.json" >"$tmp/got"
	cmp -s "$tmp/bwant" "$tmp/got" || fail "spans differ: $(diff "$tmp/bwant" "$tmp/got" | head -n 6)"
else
	fail "exit: $(cat "$tmp/err")"
fi
finish
