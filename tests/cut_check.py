#!/usr/bin/env python3
"""cut_check.py - is a cut trace the uncut one filtered by the cutting rules?
(tests/e2e/cut.sh, on generated pairs too large to work out by hand.)

Usage: cut_check.py FULL CUT (--steps A B | --range LO HI)

FULL is the merge without cutting, CUT the merge of the same inputs with
--steps=A-B or --range=LO,HI.  The rules (cuptimerge(1)), checked event by
event from the JSON alone: the range is [LO, HI) (for --steps: from the
first ts to the last ts + dur of the ProfilerStep#N events, A <= N <= B);
an event with a duration is kept when it overlaps it, an instant when it
falls in it; GPU work and cuda_sync events go with the cuda_runtime or
cuda_driver event of their correlation (kept when it is), and without one
by their own times; a flow (s, f, t events of one cat and id) is kept whole
or not at all; CUT's metadata events are all FULL's (but for ts: the first
start of a GPU row is that of its first kept event); a gpu_user_annotation
span of CUT lies within FULL's of the same annotation and row (it spans the
kept work).  The profiler span events the merge makes again are left out.  Prints the differences and
exits 1, or exits 0."""
import collections
import gzip
import json
import sys

GPU = ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync")
API = ("cuda_runtime", "cuda_driver")
REMADE = ("PyTorch Profiler (0)", "Iteration Start: PyTorch Profiler", "Record Window End")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)["traceEvents"]


def inside(lo, hi, e):
    ts = float(e["ts"])
    dur = float(e.get("dur", 0) or 0) if e.get("ph") == "X" else 0.0
    return ts < hi and ts + dur > lo if dur > 0 else lo <= ts < hi


def key(e):
    return json.dumps(e, sort_keys=True)


def main(argv):
    full, cut = load(argv[1]), load(argv[2])
    if argv[3] == "--steps":
        a, b = int(argv[4]), int(argv[5])
        steps = [e for e in full if e.get("ph") == "X" and e.get("cat") != "gpu_user_annotation"
                 and str(e.get("name", "")).startswith("ProfilerStep#")
                 and a <= int(e["name"][13:]) <= b]
        lo = min(float(e["ts"]) for e in steps)
        hi = max(float(e["ts"]) + float(e["dur"]) for e in steps)
    else:
        lo, hi = float(argv[4]), float(argv[5])
    calls = {}
    for e in full:
        if e.get("ph") == "X" and e.get("cat") in API:
            c = e.get("args", {}).get("correlation")
            calls[c] = calls.get(c, False) or inside(lo, hi, e)
    flows = collections.defaultdict(list)
    want = collections.Counter()
    for e in full:
        if e.get("name") in REMADE:
            continue
        ph = e.get("ph")
        if ph == "M":
            continue
        if ph in ("s", "f", "t"):
            flows[(e.get("cat"), e.get("id"))].append(e)
            continue
        if e.get("cat") == "gpu_user_annotation":
            continue
        if ph == "X" and e.get("cat") in GPU:
            c = e.get("args", {}).get("correlation")
            keep = calls[c] if c in calls else inside(lo, hi, e)
        elif "ts" not in e:
            keep = True
        else:
            keep = inside(lo, hi, e)
        if keep:
            want[key(e)] += 1
    got = collections.Counter(key(e) for e in cut if e.get("ph") not in ("M", "s", "f", "t")
                              and e.get("name") not in REMADE and e.get("cat") != "gpu_user_annotation")
    bad = []
    for k in (want - got):
        bad.append("missing: " + k[:200])
    for k in (got - want):
        bad.append("not to be kept: " + k[:200])
    cut_flows = collections.Counter((e.get("cat"), e.get("id")) for e in cut if e.get("ph") in ("s", "f", "t"))
    for fk, n in cut_flows.items():
        if n != len(flows.get(fk, [])):
            bad.append(f"flow {fk}: {n} of its {len(flows.get(fk, []))} events kept")
    def no_ts(e):
        return key({k: v for k, v in e.items() if k != "ts"})
    full_m = collections.Counter(no_ts(e) for e in full if e.get("ph") == "M")
    for k in collections.Counter(no_ts(e) for e in cut if e.get("ph") == "M") - full_m:
        bad.append("metadata not in the uncut merge: " + k[:200])
    spans = collections.defaultdict(list)
    for e in full:
        if e.get("cat") == "gpu_user_annotation":
            spans[(e.get("name"), e.get("pid"), e.get("tid"))].append(e)
    for e in cut:
        if e.get("cat") != "gpu_user_annotation":
            continue
        ts, end = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        if not any(float(f["ts"]) <= ts and end <= float(f["ts"]) + float(f["dur"]) + 1e-6
                   for f in spans.get((e.get("name"), e.get("pid"), e.get("tid")), [])):
            bad.append("gpu_user_annotation span not within the uncut one: " + key(e)[:200])
    for line in bad[:20]:
        print(line)
    kept = sum(got.values())
    print(f"range {lo:.3f} to {hi:.3f} us: {kept} events kept of {sum(1 for e in full if e.get('ph') != 'M')}, "
          f"{len(cut_flows)} flows; {len(bad)} differences", file=sys.stderr)
    return 1 if bad or not kept else 0


sys.exit(main(sys.argv))
