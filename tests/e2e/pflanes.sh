#!/bin/sh
# pflanes.sh - the lanes of a .pftrace (src/pftrace/pflanes.c) where a
# thread's slices reach them far behind its latest begin: a merge's CUDA
# runtime calls of a CPU thread come from the window after the CPU trace's
# slices of that thread, a late one among them (pflanewin.c: the window of
# trace time that the lanes remember follows each thread's own latest
# begin).  A pair made here: a CPU trace whose thread has a slice at 20 s,
# and a window of N runtime calls of that thread from 1 ms, 1 us apart and
# 1.5 us long, each over the begin of the next (Perfetto's JSON import drops
# every other one; the .pftrace puts them on two tracks of the thread), so
# many that the lanes' table is full and placed again while they come
# (2,500; and 20,000, over what a shard remembers: the window halves).  The
# bytes do not depend on -j, protoc decodes them, and Perfetto's trace
# processor shows for the .pftrace what it shows for the JSON (no call
# paired with another's end: where it is found, tests/e2e/pfcommon.sh).
# Before lanes25 the lanes forgot the calls at each rebuild (they ended
# more than the window behind the late slice): the next call went on the
# track of the one it overlapped.
. "${srcdir:-.}/tests/e2e/common.sh"
. "${srcdir:-.}/tests/e2e/pfcommon.sh"

# A runtime call tied with an operator forgotten (lanes26, lanes27): the
# CPU trace's operator "op" at 5 ms, 2 us long, and "late" at 20 s; the
# window's 1,500 calls from 1 ms (the lanes' table full and placed again
# while they come: "op" is forgotten, 10 s behind "late"), then one at the
# nanosecond of "op", 5 us long.  On "op"'s lane its begin would come
# after "op"'s in the file and "op"'s end close it (the JSON shows the call
# around "op").  Before lanes27 it went there: "op" is kept now, its
# (thread, begin) a call's (src/pftrace/pflanetie.c).
tied() {
	python3 - "$1" <<'PY'
import json, sys
out = sys.argv[1]
base, pid = 1759300074000000000, 4242
ev = [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": pid, "tid": pid, "ts": 5000, "dur": 2, "args": {}},
      {"ph": "X", "cat": "cpu_op", "name": "late", "pid": pid, "tid": pid, "ts": 20000000, "dur": 10, "args": {}},
      {"ph": "M", "name": "process_name", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python"}}]
with open(out + "/cpu.json", "w") as f:
    json.dump({"schemaVersion": 1, "baseTimeNanoseconds": base, "traceEvents": ev}, f)
at = [base + 1000000 + i * 2000 for i in range(1500)] + [base + 5000000]
w = [{"kind": "cuda_runtime", "cbid": 211, "start_ns": b, "end_ns": b + (5000 if i == 1500 else 1000),
      "process_id": pid, "thread_id": pid, "correlation_id": i + 1, "return_value": 0, "name": "cbid_211"}
     for i, b in enumerate(at)]
with open(out + "/win.json", "w") as f:
    json.dump({"events": w, "start_ns": base}, f)
PY
}

# A GPU span tied with a kernel forgotten (lanes27; the 200M pair's 503):
# a window whose user annotation 9 ("ann") holds two calls, which launch
# kernels on stream 7 at T0 (1 us long) and T0 + 3 us (2 us), then 1,500
# calls and their kernels from T0 + 20 s (the lanes' table full and placed
# again: the first kernel forgotten, 10 s behind); the CPU trace's
# operator "late" there too.  The span of "ann" on stream 7 is drawn from
# 1 ns before the first kernel, as a double of microseconds (gpurules.c's
# gpu_span_times), which at T0, 59 days from the trace's zero as on the
# 200M pair, is the first kernel's nanosecond; it ends with the second,
# written after all kernels: on the first kernel's lane that kernel's end
# would close it.  Before lanes27 it went there.
span() {
	python3 - "$1" <<'PY'
import json, sys
out = sys.argv[1]
base, pid, t0 = 1759300074000000000, 4242, 5117756150827188
ev = [{"ph": "X", "cat": "cpu_op", "name": "late", "pid": pid, "tid": pid, "ts": (t0 + 20000000000) / 1000, "dur": 10000,
       "args": {}},
      {"ph": "M", "name": "process_name", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python"}}]
with open(out + "/cpu.json", "w") as f:
    json.dump({"schemaVersion": 1, "baseTimeNanoseconds": base, "traceEvents": ev}, f)
w = []
calls = [(t0 - 5000, t0, 1000), (t0 - 3000, t0 + 3000, 2000)] + \
        [(t0 + 20000000000 + i * 4000, t0 + 20000001000 + i * 4000, 1000) for i in range(1500)]
for i, (c, k, d) in enumerate(calls):
    if i < 2:
        w.append({"kind": "external_correlation", "external_kind": 4, "external_id": 9, "correlation_id": 1001 + i,
                  "name": "external_correlation"})
    w.append({"kind": "cuda_runtime", "cbid": 211, "start_ns": base + c, "end_ns": base + c + 500,
              "process_id": pid, "thread_id": pid, "correlation_id": 1001 + i, "return_value": 0,
              "name": "cudaLaunchKernel"})
    w.append({"kind": "kernel", "device_id": 0, "context_id": 1, "stream_id": 7, "correlation_id": 1001 + i,
              "graph_node_id": 0, "graph_id": 0, "start_ns": base + k, "end_ns": base + k + d,
              "annotation": None, "name": "k"})
with open(out + "/win.json", "w") as f:
    json.dump({"events": w, "start_ns": base, "user_annotations": {"9": "ann"}}, f)
PY
}

# pair N DIR: the CPU trace and the window of N runtime calls, in DIR.
pair() {
	python3 - "$1" "$2" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
base, pid = 1759300074000000000, 4242
ev = [{"ph": "X", "cat": "cpu_op", "name": "early", "pid": pid, "tid": pid, "ts": 500, "dur": 4000000, "args": {}},
      {"ph": "X", "cat": "cpu_op", "name": "late", "pid": pid, "tid": pid, "ts": 20000000, "dur": 10, "args": {}},
      {"ph": "M", "name": "process_name", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python"}}]
with open(out + "/cpu.json", "w") as f:
    json.dump({"schemaVersion": 1, "baseTimeNanoseconds": base, "traceEvents": ev}, f)
w = [{"kind": "cuda_runtime", "cbid": 211, "start_ns": base + 1000000 + i * 1000, "end_ns": base + 1001500 + i * 1000,
      "process_id": pid, "thread_id": pid, "correlation_id": i + 1, "return_value": 0, "name": "cbid_211"}
     for i in range(n)]
with open(out + "/win.json", "w") as f:
    json.dump({"events": w, "start_ns": base}, f)
PY
}

for n in 2500 20000 tied span; do
	name="$n calls behind"
	[ $n = tied ] && name="a call tied with an operator forgotten"
	[ $n = span ] && name="a GPU span tied with a kernel forgotten"
	mkdir "$tmp/$n"
	tcase "$name: the pair made"
	if [ $n = tied ] || [ $n = span ]; then
		$n "$tmp/$n" || { fail "python3 exit $?"; continue; }
	else
		pair $n "$tmp/$n" || { fail "python3 exit $?"; continue; }
	fi
	tcase "$name: merges, to JSON and .pftrace at -j 1 and 3: the same bytes"
	rc=0
	$CUPTIMERGE -q -w "$tmp/$n/win.json" -o "$tmp/$n/x.json" "$tmp/$n/cpu.json" 2>"$tmp/err" &&
		$CUPTIMERGE -q -j 1 -w "$tmp/$n/win.json" -o "$tmp/$n/x.pftrace" "$tmp/$n/cpu.json" 2>"$tmp/err" &&
		$CUPTIMERGE -q -j 3 -w "$tmp/$n/win.json" -o "$tmp/$n/j3.pftrace" "$tmp/$n/cpu.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "exit $rc: $(cat "$tmp/err")"
		continue
	fi
	cmp -s "$tmp/$n/x.pftrace" "$tmp/$n/j3.pftrace" || fail "-j 3 wrote other bytes than -j 1"
	tcase "$name: decodes as perfetto.protos.Trace (protoc)"
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/$n/x.pftrace" \
		>"$tmp/decoded" 2>"$tmp/protoc.err" || fail "protoc: $(head -3 "$tmp/protoc.err")"
	same "$name" "$tmp/$n/x.json" "$tmp/$n/x.pftrace"
done
finish
