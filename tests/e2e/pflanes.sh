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

for n in 2500 20000; do
	name="$n calls behind"
	mkdir "$tmp/$n"
	tcase "$name: the pair made"
	pair $n "$tmp/$n" || { fail "python3 exit $?"; continue; }
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
