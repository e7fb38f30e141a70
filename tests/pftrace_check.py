#!/usr/bin/env python3
"""pftrace_check.py - does a .pftrace show in Perfetto what its JSON shows?

Usage: pftrace_check.py JSON PFTRACE   (TP_DIR and TPJS in the environment;
either file may be gzip)
       pftrace_check.py --pair JSON PFTRACE_A PFTRACE_B   (two .pftrace files of
the same JSON show the same: slices, args, flows, counters, threads,
processes, stats, and each thread's slices on the same lanes)

Loads both into Perfetto's trace processor (tp.mjs) and compares, per
thread (pid, tid; a string pid or tid, which each import numbers its own
way, by its name): the slices (name, category, ts, dur), the args of each
(the JSON's "args.K" against the protobuf's debug annotation "debug.K",
value and type), the instants on process and global tracks, the counters,
the flows (from which slice to which), the processes' and threads' names,
labels and sort indexes, and that neither load has error or data-loss
stats.  Where Perfetto's JSON import mangles a value that the protobuf
keeps (an integer beyond int64, which the JSON import reads as a wrong
double, or a double a bit off its text), the protobuf is checked against the
JSON text instead.  A time is compared exactly: both give integer ns rounded
from the decimal text.

Slices that overlap without nesting: Perfetto's JSON import drops the one
that begins later (its stat slice_drop_overlapping_complete_event, N); the
.pftrace keeps it on a track of the same thread (a lane, pflanes.c).  So the
.pftrace must show, per thread, every slice the JSON shows and N more in all,
each of them overlapping a slice the JSON shows on that thread without
nesting; a flow to such a slice the JSON import binds to the slice around it
(or loses), so a flow of the JSON that the .pftrace lacks must be a flow of
the .pftrace to such a slice, with the same other end, bound instead to a
slice of the JSON's on that thread around it.
Exit 0 when all agree, 1 with the first differences, 2 on a load failure.
"""
import collections, gzip, json, math, os, subprocess, sys, tempfile

SLICES = """select 'S', s.id, s.ts, s.dur, hex(s.name), hex(coalesce(s.category, '')), s.arg_set_id,
  t.tid, hex(coalesce(t.name, '')), p.pid, hex(coalesce(p.name, '')),
  p2.pid, hex(coalesce(p2.name, '')), s.track_id
  from slice s left join thread_track tt on s.track_id = tt.id left join thread t using (utid)
  left join process p on t.upid = p.upid left join process_track pt on s.track_id = pt.id
  left join process p2 on pt.upid = p2.upid"""
ARGS = """select 'A', a.arg_set_id, hex(a.key), a.int_value, hex(coalesce(a.string_value, '')), a.real_value,
  a.value_type from args a where a.arg_set_id in (select arg_set_id from slice)"""
FLOWS = "select 'F', slice_out, slice_in from flow"
COUNTERS = """select 'C', hex(ct.name), c.ts, c.value, p.pid, hex(coalesce(p.name, ''))
  from counter c join process_counter_track ct on c.track_id = ct.id join process p using (upid)"""
THREADS = """select 'T', t.tid, hex(coalesce(t.name, '')), p.pid, hex(coalesce(p.name, '')),
  (select count(*) from thread_track tt join slice s on s.track_id = tt.id where tt.utid = t.utid)
  from thread t left join process p using (upid)"""
PROCS = """select 'P', p.pid, hex(coalesce(p.name, '')),
  (select group_concat(hex(a.string_value), ',') from args a
   where a.arg_set_id = p.arg_set_id and a.key like 'chrome.process_label%')
  from process p"""
STATS = """select 'E', name, idx, value from stats where value > 0 and severity in ('error', 'data_loss')"""


def tp(path):
    # into a file: Node writes a file synchronously, where output to a
    # pipe still pending when tp.mjs exits is lost
    with tempfile.TemporaryFile("w+") as out:
        r = subprocess.run(["node", os.environ["TPJS"], path, SLICES, ARGS, FLOWS, COUNTERS, THREADS, PROCS, STATS],
                           stdout=out, stderr=subprocess.PIPE, text=True)
        out.seek(0)
        text = out.read()
    if r.returncode:
        print(f"{path}: tp.mjs exit {r.returncode}: {r.stderr.strip().splitlines()[-3:]}")
        sys.exit(2)
    rows = collections.defaultdict(list)
    for line in text.split("\n"):
        f = line.split("\t")
        if len(f[0]) == 1 and f[0] in "SAFCTPE":
            rows[f[0]].append(f[1:])
    return rows


def unhex(h):
    return bytes.fromhex(h).decode("utf-8", "replace")


def load(path):
    """The JSON document at PATH (gzip or not, by its magic bytes)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8", "surrogatepass"))


def coerce(v, pid=0):
    """A pid (PID 0) or tid of the JSON as Perfetto's JSON import takes it:
    a string is None (numbered its own way); a float is cut to its integer
    part, anything else (missing, bool, null) is 0; then outside 0..2^32-1
    it is 0, and a tid 0 is the pid."""
    if isinstance(v, str):
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        v = 0
    elif isinstance(v, float):
        v = int(v) if math.isfinite(v) and abs(v) < 2.0 ** 63 else 0
    return v if 0 < v < 1 << 32 else pid


def ids(path):
    """The integer pids and tids of the JSON (as the JSON import takes
    them), its string pids and tids, and its process labels."""
    doc = load(path)
    ipids, itids, labels = set(), set(), {}
    for e in doc.get("traceEvents", []):
        pid, tid = e.get("pid"), e.get("tid")
        p = coerce(pid)
        if p is not None:
            ipids.add(str(p))
            t = coerce(tid, p)
            if t is not None:
                itids.add((str(p), str(t)))
        if e.get("ph") == "M" and e.get("name") == "process_labels" and isinstance(e.get("args"), dict):
            ts = e.get("ts") if isinstance(e.get("ts"), (int, float)) else 0
            k = str(p) if p is not None else pid
            if k not in labels or ts >= labels[k][0]:  # the last in time, as Perfetto orders them
                labels[k] = (ts, e["args"].get("labels"))
    return ipids, itids, {k: v[1] for k, v in labels.items()}


def thread_key(tid, tname, pid, pname, ipids, itids):
    """A thread as the user sees it: (pid, tid), or the names of a string
    pid or tid (each import numbers those its own way)."""
    pk = ("pid", pid) if pid in ipids else ("name", pname)
    if tid == "null":
        return (pk, None)
    if (pid, tid) in itids:
        return (pk, ("tid", tid))
    return (pk, "main") if tid == pid else (pk, ("name", tname))


def norm_value(row):
    key, iv, sv, rv, vt = unhex(row[1]), row[2], unhex(row[3]), row[4], row[5]
    key = key.split(".", 1)[1] if "." in key else key
    if vt == "string":
        v = sv
    elif vt == "real":
        v = float(rv)
    elif vt in ("int", "uint", "bool", "pointer"):
        v = int(iv)
        if vt == "uint" and v < 0:
            v += 1 << 64
    else:
        v = None
    return key, vt, v


def digest(rows, ipids, itids, proto):
    args = collections.defaultdict(list)
    for a in rows["A"]:
        args[a[0]].append(norm_value(a))
    key_of, durs = {}, {}
    per = collections.defaultdict(list)
    for s in rows["S"]:
        sid, ts, dur, name, cat, asid, tid, tname, pid, pname, p2pid, p2name, track = s
        if tid != "null":
            k = thread_key(tid, unhex(tname), pid, unhex(pname), ipids, itids)
        elif p2pid != "null":
            k = (("pid", p2pid) if p2pid in ipids else ("name", unhex(p2name)), "process")
        else:
            k = "global"
        a = tuple(sorted(args.get(asid, [])))
        key_of[sid] = (k, ts, unhex(name))
        durs[key_of[sid]] = int(dur)
        per[k].append((int(ts), int(dur), unhex(name), unhex(cat), a))
    flows = sorted(((key_of[o], key_of[i]) for o, i in rows["F"]), key=repr)
    counters = sorted([(unhex(c[0]), int(c[1]), float(c[2]), c[3] if c[3] in ipids else unhex(c[4]))
                       for c in rows["C"]], key=repr)
    # pid 0 tid 0 is the idle thread of a protobuf trace: Perfetto names it
    # "swapper" there and takes no other name for it (each import has it,
    # with no slice, whether the trace has it or not)
    threads = sorted([(thread_key(t[0], unhex(t[1]), t[2], unhex(t[3]), ipids, itids),
                       "" if (t[0], t[2]) == ("0", "0") else unhex(t[1]), t[4])
                      for t in rows["T"] if (t[4] != "0" or unhex(t[1]) or unhex(t[3])) and
                      (t[0], t[2], t[4]) != ("0", "0", "0")], key=repr)
    procs = sorted([(p[0] if p[0] in ipids else ("name", unhex(p[1])), unhex(p[1])) for p in rows["P"]
                    if unhex(p[1])], key=repr)
    labels = {p[0]: ",".join(unhex(x) for x in p[2].split(",")) for p in rows["P"] if p[2] != "null"}
    return {"slices": {k: sorted(v, key=repr) for k, v in per.items()}, "flows": flows, "counters": counters,
            "threads": threads, "processes": procs, "labels": labels, "stats": rows["E"], "durs": durs}


def big_ints(path, reals=None):
    """Arg values that are integers beyond int64 in the JSON text (the JSON
    import reads them as a wrong double): key -> the integer.  REALS, when
    given, gets the doubles of the text: key -> the set of them."""
    out = {}

    def walk(prefix, v):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else k, x)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(f"{prefix}[{i}]", x)
        elif isinstance(v, int) and not isinstance(v, bool) and not -(1 << 63) <= v < (1 << 63):
            out.setdefault(prefix, set()).add(v)
        elif isinstance(v, float) and reals is not None:
            reals.setdefault(prefix, set()).add(v)
    doc = load(path)
    for e in doc.get("traceEvents", []):
        if isinstance(e.get("args"), dict):
            walk("", e["args"])
    return out


def fix_big(dj, dp, bigs):
    """Where the JSON import mangled an integer beyond int64, take the
    protobuf's value when the JSON text has it (uint) and drop both."""
    if not bigs:
        return
    for k in list(dj["slices"]):
        if k not in dp["slices"] or len(dj["slices"][k]) != len(dp["slices"][k]):
            continue
        out_j, out_p = [], []
        for sj, sp in zip(dj["slices"][k], dp["slices"][k]):
            aj = [a for a in sj[4] if not (a[0] in bigs and a[1] == "real")]
            ap = [a for a in sp[4] if not (a[0] in bigs and ((a[1] == "uint" and a[2] in bigs[a[0]]) or
                                                             (a[1] == "real" and a[2] in map(float, bigs[a[0]]))))]
            out_j.append(sj[:4] + (tuple(aj),))
            out_p.append(sp[:4] + (tuple(ap),))
        dj["slices"][k], dp["slices"][k] = out_j, out_p


def fix_reals(dj, reals):
    """Where the JSON import read a double a few ulps off its text (its
    parser does not always round correctly), take the text's double: the
    protobuf carries the correctly rounded one."""
    def fix(a):
        if a[1] != "real" or a[0] not in reals or a[2] in reals[a[0]]:
            return a
        near = [t for t in reals[a[0]] if abs(t - a[2]) <= 2 * math.ulp(t)]
        return (a[0], a[1], near[0]) if len(near) == 1 else a
    for k, v in dj["slices"].items():
        if any(a[1] == "real" and a[0] in reals and a[2] not in reals[a[0]] for s in v for a in s[4]):
            dj["slices"][k] = sorted((s[:4] + (tuple(sorted(map(fix, s[4]))),) for s in v), key=repr)


def crosses(x, y):
    """1 when the slices X and Y ((ts, dur, ...)) overlap without nesting."""
    (b1, e1), (b2, e2) = (x[0], x[0] + x[1]), (y[0], y[0] + y[1])
    return b1 < b2 < e1 < e2 or b2 < b1 < e2 < e1


def overlaps(dj, dp):
    """The slices the JSON import dropped as overlapping (its stat says how
    many) and the .pftrace keeps: checked (see the top), then taken out of
    the .pftrace's slices, flows and thread counts.  A list of problems."""
    bad = []
    dropped = sum(int(e[2]) for e in dj["stats"] if e[0] == "slice_drop_overlapping_complete_event")
    dj["stats"] = [e for e in dj["stats"] if e[0] != "slice_drop_overlapping_complete_event"]
    extra, nextra = {}, 0
    for k in set(dj["slices"]) & set(dp["slices"]):
        cj, cp = collections.Counter(dj["slices"][k]), collections.Counter(dp["slices"][k])
        if cj - cp:  # the JSON shows one the .pftrace does not: left to the comparison
            continue
        more = list((cp - cj).elements())
        for x in more:
            if not any(crosses(x, y) for y in dj["slices"][k]):
                bad.append(f"the .pftrace has a slice of {k} the JSON has not, and it overlaps none: {repr(x)[:200]}")
        if more:
            extra[k] = more
            nextra += len(more)
            dp["slices"][k] = sorted((cp - collections.Counter(more)).elements(), key=repr)
    if nextra != dropped:
        bad.append(f"the JSON import dropped {dropped} overlapping slices, the .pftrace has {nextra} more")
        return bad
    gone = {(k, str(x[0]), x[2]) for k, v in extra.items() for x in v}
    # the .pftrace's flows to a slice the JSON import dropped, and the JSON's
    # flows the .pftrace lacks: the second bound to a slice around the first's
    fp = [f for f in dp["flows"] if f[0] in gone or f[1] in gone]
    dp["flows"] = [f for f in dp["flows"] if not (f[0] in gone or f[1] in gone)]
    cj, cp = collections.Counter(map(repr, dj["flows"])), collections.Counter(map(repr, dp["flows"]))
    only = [f for f in dj["flows"] if repr(f) in cj - cp]
    for f in only:
        def bound(g):
            x, o = (g[1], g[0]) if g[1] in gone else (g[0], g[1])
            for y, z in ((f[0], f[1]), (f[1], f[0])):
                if z == o and y[0] == x[0] and y in dj["durs"] and int(y[1]) <= int(x[1]) <= int(y[1]) + dj["durs"][y]:
                    return True
            return False
        m = [g for g in fp if bound(g)]
        if not m:
            bad.append(f"a flow of the JSON the .pftrace lacks: {f}")
        else:
            fp.remove(m[0])
    dj["flows"] = [f for f in dj["flows"] if repr(f) not in cj - cp]
    dp["threads"] = sorted([(t[0], t[1], str(int(t[2]) - len(extra.get(t[0], [])))) for t in dp["threads"]],
                           key=repr)
    return bad


def lanes(rows, ipids, itids):
    """Each thread's slices as its tracks hold them (the lanes: which
    slices share a track), whatever the tracks' ids."""
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for s in rows["S"]:
        sid, ts, dur, name, cat, asid, tid, tname, pid, pname, p2pid, p2name, track = s
        if tid == "null":
            continue
        k = thread_key(tid, unhex(tname), pid, unhex(pname), ipids, itids)
        per[k][track].append((int(ts), int(dur), unhex(name)))
    return {k: sorted(tuple(sorted(v)) for v in t.values()) for k, t in per.items()}


def pair(jpath, apath, bpath):
    """--pair JSON A B: the .pftrace files A and B of the same JSON show the
    same in Perfetto, their slices on the same lanes."""
    ipids, itids, _ = ids(jpath)
    ra, rb = tp(apath), tp(bpath)
    da, db = digest(ra, ipids, itids, True), digest(rb, ipids, itids, True)
    da["lanes"], db["lanes"] = lanes(ra, ipids, itids), lanes(rb, ipids, itids)
    bad = 0
    for what in da:
        if da[what] != db[what]:
            bad += 1
            items = (lambda d: d.items() if isinstance(d, dict) else d)
            sa, sb = collections.Counter(map(repr, items(da[what]))), collections.Counter(map(repr, items(db[what])))
            print(f"{what} differ:")
            for x in list((sa - sb).elements())[:3]:
                print(f"  {apath} only: {x[:300]}")
            for x in list((sb - sa).elements())[:3]:
                print(f"  {bpath} only: {x[:300]}")
    if bad:
        sys.exit(1)
    print(f"OK {sum(len(v) for v in da['slices'].values())} slices, {len(da['flows'])} flows, "
          f"{sum(len(v) for v in da['lanes'].values())} lanes")


def main():
    if sys.argv[1] == "--pair":
        pair(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    jpath, ppath = sys.argv[1], sys.argv[2]
    ipids, itids, labels = ids(jpath)
    dj = digest(tp(jpath), ipids, itids, False)
    dp = digest(tp(ppath), ipids, itids, True)
    # Perfetto's JSON import keeps no process label: the protobuf's are
    # checked against the JSON text
    dj["labels"] = {p: l for p, l in labels.items() if isinstance(l, str)}
    reals = {}
    fix_big(dj, dp, big_ints(jpath, reals))
    fix_reals(dj, reals)
    problems = overlaps(dj, dp)
    for p in problems:
        print(p)
    bad = len(problems)
    for what in ("stats", "processes", "labels", "threads", "counters", "flows"):
        if dj[what] != dp[what]:
            bad += 1
            print(f"{what} differ:")
            items = (lambda d: d.items() if isinstance(d, dict) else d)
            sj, sp = collections.Counter(map(repr, items(dj[what]))), collections.Counter(map(repr, items(dp[what])))
            for x in list((sj - sp).elements())[:5]:
                print(f"  JSON only: {x}")
            for x in list((sp - sj).elements())[:5]:
                print(f"  pftrace only: {x}")
    keys = set(dj["slices"]) | set(dp["slices"])
    for k in sorted(keys, key=repr):
        a, b = dj["slices"].get(k, []), dp["slices"].get(k, [])
        if a != b:
            bad += 1
            print(f"slices of {k} differ ({len(a)} JSON, {len(b)} pftrace):")
            sj, sp = collections.Counter(a), collections.Counter(b)
            oj, op = list((sj - sp).elements())[:3], list((sp - sj).elements())[:3]
            for x, y in zip(oj, op):
                if x[:4] == y[:4]:
                    print(f"  {x[:3]}: args JSON only {sorted(set(x[4]) - set(y[4]))[:4]}, "
                          f"pftrace only {sorted(set(y[4]) - set(x[4]))[:4]}")
                else:
                    print(f"  JSON only: {repr(x)[:300]}\n  pftrace only: {repr(y)[:300]}")
            for x in oj[len(op):]:
                print(f"  JSON only: {repr(x)[:300]}")
            for x in op[len(oj):]:
                print(f"  pftrace only: {repr(x)[:300]}")
    n = sum(len(v) for v in dj["slices"].values())
    if bad:
        sys.exit(1)
    print(f"OK {n} slices, {len(dj['flows'])} flows, {len(dj['counters'])} counter values, "
          f"{len(dj['threads'])} threads, {len(dj['processes'])} processes")


main()
