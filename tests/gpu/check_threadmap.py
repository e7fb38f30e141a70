#!/usr/bin/env python3
"""check_threadmap.py - check a cuptirec --threads-only map against torch_workers.py's INFO.

Usage: check_threadmap.py MAP INFO

Every thread that torch_workers.py saw (main and workers, by gettid and
threading.get_ident(), which is pthread_self) must have an entry with both
values; worker lifetimes must be disjoint per pthread value.  Prints one JSON
line; exits 1 on a failure.
"""
import json
import sys


def main():
    m = json.load(open(sys.argv[1]))
    info = json.load(open(sys.argv[2]))
    fails = []
    if m.get("thread_map_version") != 1:
        fails.append("thread_map_version is not 1")
    entries = m["processes"].get(str(info["pid"]), [])
    by_tid = {}
    for e in entries:
        by_tid.setdefault(e["tid"], []).append(e)
    seen = [info["main"]] + info["workers"]
    for t in seen:
        es = [e for e in by_tid.get(t["gettid"], []) if e["pthread"] == t["pthread"]]
        if len(es) != 1:
            fails.append(f"thread {t} has {len(es)} matching entries")
    main = by_tid.get(info["main"]["gettid"], [{}])[0]
    if main.get("tid") != info["pid"]:
        fails.append("main thread's tid is not the pid")
    by_pt = {}
    for e in entries:
        by_pt.setdefault(e["pthread"], []).append(e)
    overlaps = 0
    for es in by_pt.values():
        es.sort(key=lambda e: e["start_ns"])
        for a, b in zip(es, es[1:]):
            if "end_ns" not in a or a["end_ns"] > b["start_ns"]:
                overlaps += 1
    if overlaps:
        fails.append(f"{overlaps} overlapping lifetimes of one pthread_t")
    figures = {"map": sys.argv[1], "entries": len(entries), "named": sum(1 for e in entries if "name" in e),
               "ended": sum(1 for e in entries if "end_ns" in e),
               "reused_pthreads": sum(1 for es in by_pt.values() if len(es) > 1),
               "checked_threads": len(seen), "fails": fails[:10]}
    print(json.dumps(figures))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
