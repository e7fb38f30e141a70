# mkranks.sh - sourced by batchpair.sh and batchrun.sh (after common.sh):
# the ranks of a job, made from the fixtures.

# mkranks DIR N NAME [HOST] [SHIFT_S]: N ranks, pids 5000.., the traces in
# DIR/traces named by the Python format NAME (r: rank, pid, host), windows
# DIR/windows/w{r}.json recording HOST (default gpu-node7), rank and pid;
# the windows' spans SHIFT_S seconds later than the traces (default 0)
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
