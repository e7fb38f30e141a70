#!/usr/bin/env python3
"""pftrace_check.py - does a .pftrace show in Perfetto what its JSON shows?

Usage: pftrace_check.py JSON PFTRACE   (TP_DIR and TPJS in the environment;
either file may be gzip)

Loads both into Perfetto's trace processor (tp.mjs) and compares, per
thread (pid, tid; a string pid or tid, which each import numbers its own
way, by its name): the slices (name, category, ts, dur), the args of each
(the JSON's "args.K" against the protobuf's debug annotation "debug.K",
value and type), the instants on process and global tracks, the counters,
the flows (from which slice to which), the processes' and threads' names,
labels and sort indexes, and that neither load has error or data-loss
stats.  Where Perfetto's JSON import mangles a value that the protobuf
keeps (an integer beyond int64, which the JSON import reads as a wrong
double), the protobuf is checked against the JSON text instead.  A time is
compared exactly: both give integer ns rounded from the decimal text.
Exit 0 when all agree, 1 with the first differences, 2 on a load failure.
"""
import collections, gzip, json, os, subprocess, sys, tempfile

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
    """A pid or tid as Perfetto's JSON import takes an integer: outside
    0..2^32-1, a pid is 0 and a tid the pid."""
    return v if 0 <= v < 1 << 32 else pid


def ids(path):
    """The integer pids and tids of the JSON (as the JSON import takes
    them), its string pids and tids, and its process labels."""
    doc = load(path)
    ipids, itids, labels = set(), set(), {}
    for e in doc.get("traceEvents", []):
        pid, tid = e.get("pid"), e.get("tid")
        p = coerce(pid) if isinstance(pid, int) else 0 if pid == "" else None
        if p is not None:
            ipids.add(str(p))
            if isinstance(tid, int):
                itids.add((str(p), str(coerce(tid, p))))
            elif tid == "":
                itids.add((str(p), "0"))
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
    key_of = {}
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
        per[k].append((int(ts), int(dur), unhex(name), unhex(cat), a))
    flows = sorted(((key_of[o], key_of[i]) for o, i in rows["F"]), key=repr)
    counters = sorted([(unhex(c[0]), int(c[1]), float(c[2]), c[3] if c[3] in ipids else unhex(c[4]))
                       for c in rows["C"]], key=repr)
    # pid 0 tid 0 is the idle thread of a protobuf trace: Perfetto names it
    # "swapper" there and takes no other name for it
    threads = sorted([(thread_key(t[0], unhex(t[1]), t[2], unhex(t[3]), ipids, itids),
                       "" if (t[0], t[2]) == ("0", "0") else unhex(t[1]), t[4])
                      for t in rows["T"] if (t[4] != "0" or unhex(t[1]) or unhex(t[3])) and
                      not ((t[0], t[2], t[4]) == ("0", "0", "0") and "0" not in ipids)], key=repr)
    procs = sorted([(p[0] if p[0] in ipids else ("name", unhex(p[1])), unhex(p[1])) for p in rows["P"]
                    if unhex(p[1])], key=repr)
    labels = {p[0]: ",".join(unhex(x) for x in p[2].split(",")) for p in rows["P"] if p[2] != "null"}
    return {"slices": {k: sorted(v, key=repr) for k, v in per.items()}, "flows": flows, "counters": counters,
            "threads": threads, "processes": procs, "labels": labels, "stats": rows["E"]}


def big_ints(path):
    """Arg values that are integers beyond int64 in the JSON text (the JSON
    import reads them as a wrong double): key -> the integer."""
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


def main():
    jpath, ppath = sys.argv[1], sys.argv[2]
    ipids, itids, labels = ids(jpath)
    dj = digest(tp(jpath), ipids, itids, False)
    dp = digest(tp(ppath), ipids, itids, True)
    # Perfetto's JSON import keeps no process label: the protobuf's are
    # checked against the JSON text
    dj["labels"] = {p: l for p, l in labels.items() if isinstance(l, str)}
    fix_big(dj, dp, big_ints(jpath))
    bad = 0
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
