#!/bin/sh
# batchrun.sh - cuptimerge-batch's runs as a cluster user meets them (issue
# 28): resume however the paths are typed (P5).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
[ -x "$BATCH" ] || skip_all "no $BATCH"
BATCH=$(cd "$(dirname "$BATCH")" && pwd)/${BATCH##*/}
CUPTIMERGE=$(cd "$(dirname "$CUPTIMERGE")" && pwd)/${CUPTIMERGE##*/}
FIX=$(cd "$FIX" && pwd)

# mkranks DIR N NAME [HOST] [SHIFT_S]: as in batchpair.sh
mkranks() {
	mkdir -p "$1/traces" "$1/windows"
	python3 - "$FIX/cpu.json" "$FIX/window_source.json" "$1" "$2" "$3" "${4:-gpu-node7}" "${5:-0}" <<'PY'
import json, sys
cpu, win, out, n, name, host, shift = sys.argv[1:8]
n, shift = int(n), int(shift) * 10**9
for r in range(n):
    pid = 5000 + r
    d = {"distributedInfo": {"backend": "nccl", "rank": r, "world_size": n}}
    d.update(json.load(open(cpu)))
    for e in d["traceEvents"]:
        if e.get("pid") == 4242: e["pid"] = pid
        if e.get("tid") == 4242: e["tid"] = pid
    json.dump(d, open("%s/traces/%s" % (out, name.format(r=r, pid=pid, host=host)), "w"))
    w = json.load(open(win))
    for e in w["events"]:
        if e.get("process_id") == 4242: e["process_id"] = pid
    w["thread_resource_map"] = {str(pid): v for k, v in w["thread_resource_map"].items()}
    w["source"] = {"host": host, "pid": pid, "rank": r, "rank_from": "RANK",
                   "start_ns": 1759300078000000000 + shift, "end_ns": 1759300080000000000 + shift}
    json.dump(w, open("%s/windows/w%d.json" % (out, r), "w"))
PY
}

# summary FILE: the batch's summary line in FILE, the time left out
summary() {
	sed -n 's/^cuptimerge-batch: \([0-9]* merged, .*\), [0-9.]* s$/\1/p' "$1"
}

# P5: the joblog compared output paths as strings: the same directories
# typed another way merged every rank again.  Three spellings, from the
# same directory: relative, absolute, and ./ with trailing slashes.
tcase "P5: resume skips every rank however the directories are typed"
mkranks "$tmp/x" 3 '{host}_{pid}.1759300079000.pt.trace.json'
touch -d '1 hour ago' "$tmp"/x/traces/* "$tmp"/x/windows/*
(cd "$tmp" && "$BATCH" -q x/traces x/windows 2>/dev/null) || fail "first run: exit $?"
n=1
for spelling in "$tmp/x/traces $tmp/x/windows" "./x/traces/ ./x/windows/" "x/traces x/windows"; do
	# shellcheck disable=SC2086 # two words on purpose
	(cd "$tmp" && "$BATCH" --no-progress $spelling) 2>"$tmp/err" || fail "$spelling: exit $?: $(cat "$tmp/err")"
	[ "$(summary "$tmp/err")" = "0 merged, 3 skipped, 0 failed" ] || fail "$spelling: $(cat "$tmp/err")"
	n=$((n + 1))
done
[ "$(ls "$tmp/x/traces/merged")" = "cuptimerge-batch.tsv
gpu-node7_5000.1759300079000.merged.json.gz
gpu-node7_5001.1759300079000.merged.json.gz
gpu-node7_5002.1759300079000.merged.json.gz" ] || fail "outputs: $(ls "$tmp/x/traces/merged")"

finish
