"""ranks.py - the ranks of a job made from the fixtures, for the scripts of
cuptimerge-batch (batch.sh, slurm.sh, batchfaults.sh, docs.sh, mkranks.sh):
a rank's CPU trace and window, and torchrun's agent window.  Imported by
their Python through e2e_python (common.sh).

The fixtures' process is pid 4242 (cpu.json, window_source.json); a rank
takes a pid of its own, so that the batch must pair its trace and window by
host, pid and rank, as on a cluster."""
import json

# the fixture window's span, ns since the epoch (the trace's events lie in it)
START_NS, END_NS = 1759300078000000000, 1759300080000000000


def trace(cpu, r, pid, world):
    """Rank R's CPU trace, as a dict: the fixture CPU trace at path CPU with
    its pid and tid 4242 made PID, and distributedInfo naming rank R of
    WORLD ahead of traceEvents, where Kineto writes it."""
    d = {"distributedInfo": {"backend": "nccl", "rank": r, "world_size": world}}
    d.update(json.load(open(cpu)))
    for e in d["traceEvents"]:
        if e.get("pid") == 4242:
            e["pid"] = pid
        if e.get("tid") == 4242:
            e["tid"] = pid
    return d


def window(win, r, pid, host, shift_ns=0):
    """Rank R's window, as a dict: the fixture window at path WIN with its
    process 4242 made PID, and a source recording HOST, PID and rank R (its
    RANK variable); its span SHIFT_NS later than the trace's."""
    w = json.load(open(win))
    for e in w["events"]:
        if e.get("process_id") == 4242:
            e["process_id"] = pid
    w["thread_resource_map"] = {str(pid): v for v in w["thread_resource_map"].values()}
    w["source"] = {"host": host, "pid": pid, "rank": r, "rank_from": "RANK",
                   "start_ns": START_NS + shift_ns, "end_ns": END_NS + shift_ns}
    return w


def agent(win):
    """torchrun's agent's window, as a dict: driver calls only (no GPU work),
    pid 4999 on node0, no thread map, a span around the ranks'."""
    w = json.load(open(win))
    w["events"] = [e for e in w["events"] if e["kind"] == "cuda_driver"]
    for e in w["events"]:
        e["process_id"] = 4999
    w["thread_resource_map"] = {}
    w["source"] = {"host": "node0", "pid": 4999, "start_ns": 1759300070000000000, "end_ns": 1759300090000000000}
    return w
