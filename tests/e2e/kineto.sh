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
# Once with the parallel readers, once with the careful ones.
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
