#!/bin/sh
# kineto.sh - issue 10 against a real Kineto: the corpus window
# (threads_window.json, cut out of the stock CPU+CUDA trace threads_full.json
# of an H200) made a version-2 window with each kernel's launch members
# (copied from the stock kernel's grid, block, registers and shared memory),
# merged into the CPU part (threads_base.json, whose deviceProperties the
# merge uses): every arg the real Kineto wrote on every kernel, copy and
# runtime call (External id, blocks and warps per SM, occupancy, bandwidth
# among them, all computed by the merge) is in the merged event, with the
# same value, and no event has an External id that Kineto did not write.
# Then the same against a stock trace that has everything (syncs, a CUDA
# graph, copies and sets both ways, and, issue 26, the gpu_user_annotation
# spans of step_main on two streams).  Once with the parallel readers, once
# with the careful ones.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the window and compare"

# the window of version 2: the stock kernel of the same correlation and start
# lends its launch configuration ("shared memory" as static, 0 dynamic)
python3 - "$FIX/threads_window.json" "$FIX/threads_full.json" "$tmp/win2.json" <<'EOF'
import json, sys
from decimal import Decimal
win = json.load(open(sys.argv[1]))
full = json.load(open(sys.argv[2]), parse_float=Decimal)
base = full["baseTimeNanoseconds"]
stock = {(e["args"]["correlation"], int(base + e["ts"] * 1000)): e["args"]
         for e in full["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"}
for ev in win["events"]:
    if ev["kind"] == "kernel":
        a = stock[(ev["correlation_id"], ev["start_ns"])]
        ev.update(grid_x=a["grid"][0], grid_y=a["grid"][1], grid_z=a["grid"][2], block_x=a["block"][0],
                  block_y=a["block"][1], block_z=a["block"][2], registers_per_thread=a["registers per thread"],
                  static_shared_memory=a["shared memory"], dynamic_shared_memory=0, queued_ns=a["queued"])
win["window_version"] = 2
json.dump(win, open(sys.argv[3], "w"))
EOF

# The stock trace with synchronization events and a CUDA graph
# (kineto_stock_full.json.gz, torch 2.11 on an H200, enable_cuda_sync_events):
# cut into the CPU trace a CPU-only profiler would write and the version-2
# window a collector would record (no external correlation records: a real
# cuptirec window beside a CPU-only profiler has none, so the External ids
# must come from the operators the calls were made in).
python3 - "$FIX/kineto_stock_full.json.gz" "$tmp/scpu.json" "$tmp/swin.json" <<'EOF'
import gzip, json, sys
from decimal import Decimal
full = json.load(gzip.open(sys.argv[1]), parse_float=Decimal)
B = full["baseTimeNanoseconds"]
ns = lambda us: int(B + us * 1000)
gpu = ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cuda_sync", "overhead", "gpu_user_annotation")
syncs = {"Event Sync": 1, "Stream Wait Event": 2, "Stream Sync": 3, "Context Sync": 4}
cpu, win = [], []
for e in full["traceEvents"]:
    if e.get("cat") == "ac2g":
        continue
    if e.get("ph") != "X" or e.get("cat") not in gpu:
        cpu.append(e)
        continue
    a, c = e.get("args", {}), e["cat"]
    w = {"kind": c, "start_ns": ns(e["ts"]), "end_ns": ns(e["ts"] + e["dur"]), "correlation_id": a.get("correlation", 0),
         "name": e["name"]}
    if c in ("cuda_runtime", "cuda_driver"):
        w.update(cbid=a["cbid"], process_id=e["pid"], thread_id=e["tid"], return_value=0)
    elif c == "cuda_sync":
        w.update(sync_type=syncs[e["name"]], context_id=a["context"], stream_id=a["stream"] & 0xFFFFFFFF,
                 cuda_event_id=a.get("wait_on_cuda_event_id", 0), device_id=a["device"], return_value=0)
    elif c in ("kernel", "gpu_memcpy", "gpu_memset"):
        w.update(device_id=a["device"], context_id=a["context"], stream_id=a["stream"], graph_id=0, graph_node_id=0,
                 annotation=None)
        if c == "kernel":
            w.update(grid_x=a["grid"][0], grid_y=a["grid"][1], grid_z=a["grid"][2], block_x=a["block"][0],
                     block_y=a["block"][1], block_z=a["block"][2], registers_per_thread=a["registers per thread"],
                     static_shared_memory=a["shared memory"], dynamic_shared_memory=0, queued_ns=a["queued"])
        elif c == "gpu_memcpy":
            w.update(bytes=a["bytes"], copy_kind=0, src_kind=0, dst_kind=0, flags=0, runtime_correlation_id=0)
        else:
            w.update(bytes=a["bytes"], value=0, memory_kind=0, flags=0)
    elif c == "overhead":
        w["overhead_kind"] = 0
    else:
        continue  # gpu_user_annotation: made from kind-4 records, which this window has not
    win.append(w)
full["traceEvents"] = cpu
json.dump(full, open(sys.argv[2], "w"), default=float)
json.dump({"events": win, "window_version": 2}, open(sys.argv[3], "w"))
EOF

for mode in parallel careful; do
	tcase "stock trace with syncs and a graph, window format 2, $mode readers: every kernel, copy, set, API call and sync as Kineto wrote it"
	careful=0
	[ $mode = careful ] && careful=1
	rc=0
	CUPTIMERGE_CAREFUL=$careful $CUPTIMERGE -v --trace-name s -w "$tmp/swin.json" "$tmp/scpu.json" \
		>"$tmp/out.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "exit $rc: $(cat "$tmp/err")"
		continue
	fi
	grep -q "read by: window $mode, CPU trace $mode" "$tmp/err" || fail "not read by the $mode readers"
	python3 - "$FIX/kineto_stock_full.json.gz" "$tmp/out.json" >"$tmp/cmp" <<'EOF' || fail "$(head -n 12 "$tmp/cmp")"
import collections, gzip, json, sys
cats = ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cuda_sync")
stock = json.load(gzip.open(sys.argv[1]))["traceEvents"]
ours = json.load(open(sys.argv[2]))["traceEvents"]
def index(evs):
    return {(e["cat"], e["pid"], e["tid"], e["args"]["correlation"], e["ts"]): e for e in evs
            if e.get("ph") == "X" and e.get("cat") in cats}
st, ou = index(stock), index(ours)
bad = args = 0
kinds = collections.Counter()
for key, want in st.items():
    got = ou.get(key)
    if got is None:
        bad += 1
        print("no merged event on the same row at the same time:", key[:4], want["name"])
        continue
    kinds[key[0]] += 1
    if (got["name"], got["dur"]) != (want["name"], want["dur"]):
        bad += 1
        print(key[:4], "name, dur", want["name"], want["dur"], "merged", got["name"], got["dur"])
    for k, v in want["args"].items():
        args += 1
        if k not in got["args"] or got["args"][k] != v or type(got["args"][k]) is bool:
            bad += 1
            print(key[:4], repr(k), "stock", v, "merged", got["args"].get(k, "(none)"))
    if "External id" in got["args"] and "External id" not in want["args"]:
        bad += 1
        print(key[:4], "an External id Kineto did not write:", got["args"]["External id"])
# every flow of the stock trace is ours too, but the "f" Kineto puts on runtime
# calls that start no flow (the merge does not write these dangling ends)
def flows(evs):
    return {(e["ph"], e["id"], e["pid"], e["tid"], e["ts"]) for e in evs if e.get("cat") == "ac2g"}
api = {(e["pid"], e["tid"], e["ts"]) for e in stock if e.get("cat") in ("cuda_runtime", "cuda_driver")}
lost = [f for f in flows(stock) - flows(ours) if not (f[0] == "f" and f[2:] in api)]
for f in lost[:5]:
    print("flow not in the merged trace:", f)
rows = any(e.get("ph") == "M" and e["pid"] == 0 and e["tid"] == 1 and e["args"].get("name") == "Device 0"
           for e in ours)
# issue 26: Kineto's gpu_user_annotation spans of the CPU trace's user
# annotations, the same (name, row, ts, dur, args) to the bit
def uspans(evs):
    return sorted(json.dumps([e["name"], e["pid"], e["tid"], e["ts"], e["dur"], e["args"]]) for e in evs
                  if e.get("cat") == "gpu_user_annotation")
us, uo = uspans(stock), uspans(ours)
if us != uo:
    bad += 1
    print("gpu_user_annotation spans: stock", us, "merged", uo)
# and the metadata as stock wrote it: the CPU part kept all of stock's, and
# the merge adds none (a second process_name of a pid, "python" for GPU 0,
# "thread N" rows of the API threads, the overhead process: issue 26)
def meta(evs):
    return sorted(json.dumps([e["name"], e["pid"], e["tid"], e["args"]]) for e in evs if e.get("ph") == "M")
ms, mo = meta(stock), meta(ours)
if ms != mo:
    bad += 1
    print("metadata: stock only", [m for m in ms if m not in mo][:4], "merged only", [m for m in mo if m not in ms][:4])
print("%s: %d args: %d wrong, %d flows lost, Device 0 row: %s, %d annotation spans" %
      (dict(kinds), args, bad, len(lost), rows, len(uo)))
sys.exit(1 if bad or lost or not rows or kinds["cuda_sync"] < 29 or kinds["kernel"] < 116 or len(us) < 2 else 0)
EOF
done

# the GPU run's comparison (tests/gpu/compare_kineto.py) on the stock trace
# and this merge of its split: every check passes, issue 26's among them;
# and its selftest, with a thread map written for the stock trace (pid 757;
# the workers' gettids made up, their Kineto rows the stock trace's)
tcase "tests/gpu/compare_kineto.py: the merge of the stock trace's split passes every check; its selftest"
$CUPTIMERGE --trace-name s -w "$tmp/swin.json" "$tmp/scpu.json" >"$tmp/out.json" 2>"$tmp/err" || fail "exit: $(cat "$tmp/err")"
python3 "$srcdir/tests/gpu/compare_kineto.py" "$FIX/kineto_stock_full.json.gz" "$tmp/out.json" >"$tmp/fig" 2>"$tmp/rep" ||
	fail "$(grep FAIL "$tmp/rep" | head -n 6)"
cat >"$tmp/info.json" <<'EOF'
{"pid": 757, "main": {"gettid": 757, "pthread": 1, "ident_i32": 1, "name": "MainThread"},
 "workers": [{"gettid": 800, "pthread": 2, "ident_i32": 561571520, "name": "worker_0"},
             {"gettid": 801, "pthread": 3, "ident_i32": 569964224, "name": "worker_1"}]}
EOF
python3 "$srcdir/tests/gpu/selftest_compare_kineto.py" "$FIX/kineto_stock_full.json.gz" "$tmp/info.json" \
	>"$tmp/fig" 2>"$tmp/rep" || fail "$(grep BAD "$tmp/rep" | head -n 6)"

for mode in parallel careful; do
	tcase "corpus as window format 2, $mode readers: every arg Kineto wrote on kernels, copies and API calls, equal"
	careful=0
	[ $mode = careful ] && careful=1
	rc=0
	CUPTIMERGE_CAREFUL=$careful $CUPTIMERGE -v --trace-name k -w "$tmp/win2.json" "$FIX/threads_base.json" \
		>"$tmp/out.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "exit $rc: $(cat "$tmp/err")"
		continue
	fi
	grep -q "read by: window $mode, CPU trace $mode" "$tmp/err" || fail "not read by the $mode readers"
	python3 - "$FIX/threads_full.json" "$tmp/out.json" >"$tmp/cmp" <<'EOF' || fail "$(head -n 12 "$tmp/cmp")"
import json, sys
cats = ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver")
def index(path):
    return {(e["cat"], e["args"]["correlation"], e["ts"]): e["args"] for e in json.load(open(path))["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") in cats}
stock, ours = index(sys.argv[1]), index(sys.argv[2])
bad = args = ext = 0
for key, want in stock.items():
    got = ours.get(key)
    if got is None:
        print("no merged event for", key)
        bad += 1
        continue
    for k, v in want.items():
        args += 1
        if k not in got or got[k] != v or type(got[k]) is bool:
            bad += 1
            print(key[:2], repr(k), "stock", v, "merged", got.get(k, "(none)"))
    ext += "External id" in want
    if "External id" in got and "External id" not in want:
        bad += 1
        print(key[:2], "an External id Kineto did not write:", got["External id"])
print("%d stock events, %d args (%d External ids): %d wrong" % (len(stock), args, ext, bad))
sys.exit(1 if bad or not ext or len(stock) < 200 else 0)
EOF
done
finish
