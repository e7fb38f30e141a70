#!/usr/bin/env python3
"""check_merged.py - check a torch trace merged with a cuptirec window, or repaired with a thread map.

Usage: check_merged.py MERGED INFO [CPU_TRACE] [--original TRACE]

INFO is torch_workers.py's thread information.  Checks that the CUDA runtime
events sit on gettid rows (the workers' events on the workers' rows), that
every kernel's flow end ("f") has its start ("s"), and that the main thread's
runtime events within the profiled span (the extent of the cpu_op and
user_annotation events; a window also holds what ran before the profiler
started) fall inside an enclosing cpu_op or user_annotation of the main
thread.  When CPU_TRACE is given, also counts its cuda_runtime events (0 when
the collector kept Kineto CPU-only).  With --original (a trace repaired with
a thread map), the flows and the event counts per category must be those of
the original, whose flaws (Kineto writes flow ends without starts) are not
the repair's, and containment is only reported.  Prints one JSON line; exits 1
on a failure.
"""
import json
import sys
from collections import Counter
from jsonfile import load


def main():
    args = sys.argv[1:]
    original = None
    if "--original" in args:
        i = args.index("--original")
        original = load(args[i + 1])
        del args[i:i + 2]
    merged, info = load(args[0]), load(args[1])
    fails = []
    pid = info["pid"]
    main_tid = info["main"]["gettid"]
    workers = {w["gettid"] for w in info["workers"]}
    known = workers | {main_tid}
    ev = merged["traceEvents"]
    rt = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and e.get("pid") == pid]
    rows = Counter(e["tid"] for e in rt)
    stray = {t: n for t, n in rows.items() if t not in known}
    if stray:
        fails.append(f"cuda_runtime events on non-gettid rows: {stray}")
    for w in workers:
        if rows.get(w, 0) == 0:
            fails.append(f"worker {w} has no cuda_runtime events on its row")
    s_ids = Counter(e["id"] for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g")
    f_ids = [e["id"] for e in ev if e.get("ph") == "f" and e.get("cat") == "ac2g"]
    unpaired = [i for i in f_ids if i not in s_ids]
    if original is not None:
        oev = original["traceEvents"]
        o_s = {e["id"] for e in oev if e.get("ph") == "s" and e.get("cat") == "ac2g"}
        o_unpaired = sum(1 for e in oev if e.get("ph") == "f" and e.get("cat") == "ac2g" and e["id"] not in o_s)
        if len(unpaired) != o_unpaired:
            fails.append(f"{len(unpaired)} flow ends without a start, the original had {o_unpaired}")
        cats = Counter((e.get("cat"), e.get("ph")) for e in ev if e.get("ph") != "M")
        o_cats = Counter((e.get("cat"), e.get("ph")) for e in oev if e.get("ph") != "M")
        if cats != o_cats:
            fails.append(f"event counts per category changed: {cats - o_cats} / {o_cats - cats}")
    elif unpaired:
        fails.append(f"{len(unpaired)} flow ends without a start")
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    if not kernels:
        fails.append("no kernels")
    # enclosing cpu_op / user_annotation on the main thread
    spans = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in ev
                   if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")
                   and e.get("pid") == pid and e.get("tid") == main_tid)
    ops = [(e["ts"], e["ts"] + e.get("dur", 0)) for e in ev
           if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e.get("pid") == pid and e.get("tid") == main_tid]
    prof = [(e["ts"], e["ts"] + e.get("dur", 0)) for e in ev
            if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    lo, hi = min(a for a, _ in prof), max(b for _, b in prof)
    main_rt = [e for e in rt if e["tid"] == main_tid and lo <= e["ts"] and e["ts"] + e["dur"] <= hi]
    inside = sum(1 for e in main_rt if any(a <= e["ts"] and e["ts"] + e["dur"] <= b for a, b in spans))
    inside_op = sum(1 for e in main_rt if any(a <= e["ts"] and e["ts"] + e["dur"] <= b for a, b in ops))
    if original is None and inside < len(main_rt):
        fails.append(f"{len(main_rt) - inside} main-thread runtime events outside every cpu_op/user_annotation")
    figures = {
        "merged": args[0], "cuda_runtime": len(rt), "rows": {str(k): v for k, v in rows.items()},
        "main": main_tid, "workers": sorted(workers), "kernels": len(kernels),
        "flows_s": sum(s_ids.values()), "flows_f": len(f_ids), "unpaired_f": len(unpaired),
        "main_runtime": len(main_rt), "inside_op_or_annotation": inside, "inside_cpu_op": inside_op,
    }
    if len(args) > 2:
        cpu = load(args[2])
        figures["cpu_trace_cuda_runtime"] = sum(1 for e in cpu["traceEvents"] if e.get("cat") == "cuda_runtime")
    figures["fails"] = fails[:10]
    print(json.dumps(figures))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
