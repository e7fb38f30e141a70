#!/usr/bin/env python3
"""cut_summary.py - one line per event of a Chrome trace, sorted, for the tests
of --clip, --steps, --range and --split (tests/e2e/cut.sh), whose expected
lines are written by hand (tests/fixtures/cut_*.txt).

Usage: cut_summary.py TRACE[.gz]

A line: ph, cat, name, the key (args.correlation of an X event, the id of a
flow event, else -), ts and dur (three decimals; - when absent); metadata
events as M, name, pid, tid.  Then the top-level members other than
traceEvents, by name.  The document must load as JSON (gzip or plain)."""
import gzip
import json
import sys


def num(v):
    return "-" if v is None else "%.3f" % float(v)


def main():
    path = sys.argv[1]
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    lines = []
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "M":
            lines.append("M %s %s %s" % (e.get("name"), e.get("pid"), e.get("tid")))
            continue
        args = e.get("args") or {}
        if ph in ("s", "f"):
            key = e.get("id")
        else:
            key = args.get("correlation", "-")
        lines.append("%s %s %s %s %s %s" % (ph, e.get("cat", "-"), e.get("name"), key, num(e.get("ts")),
                                            num(e.get("dur"))))
    for line in sorted(lines):
        print(line)
    print("members: " + " ".join(sorted(k for k in doc if k != "traceEvents")))


main()
