#!/usr/bin/env python3
"""perfetto_check CHECK TRACE TP_OUT [--summary S] [--map M]: does what Perfetto's
trace processor made of TRACE agree with TRACE itself?

TP_OUT is the standard output of `tp.mjs TRACE` run with the queries of
tests/e2e/perfetto.sh: TSV whose first column tags each row (stat, baddur, cat,
api, flow; the header rows say "tag").  The expectation is computed here from
the JSON of TRACE (gzip detected), independently of Perfetto:

  clean   no stats row of severity error or data_loss, no slice with dur < 0
  slices  one slice per X or instant (i/I) event, per category ("" for none)
  api     the cuda_runtime/cuda_driver slices sit on the (pid, tid) of their X
          event, with its name and args.correlation (a multiset, event by event)
  expect  with --summary (gen_trace --summary): API slices per (pid, tid) as the
          generator expects them, whatever the merged JSON says
  bogus   with --map (a window's thread_resource_map or a thread map): no API
          slice on a row numbered abs(int32(pthread_self())) of a mapped thread
          whose kernel tid is another number
  flows   one flow per ac2g f event whose id has an earlier s event, from the slice of
          the s (an API call) to the slice of the f (a GPU op) of the same
          correlation, counted per (from, to) category
  anns    the gpu_user_annotation slices sit on the (pid, tid) of their X
          event (a device's stream), with its name (a multiset)
  procs   each pid the trace names has one process_name, and Perfetto's
          process of that pid carries that name and its process_sort_index
          (issue 26; Perfetto 55 keeps no process_labels of a JSON trace)
Print the differences and exit 1, or exit 0; exit 2 on bad arguments or input.
"""
import collections
import sys

from jsoncmp import load  # the JSON at a path, plain or gzip

API = ("cuda_runtime", "cuda_driver")


def tp_rows(path, tag):
    """The rows of TP_OUT tagged TAG, each a tuple of strings (tag dropped)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[0] == tag:
                rows.append(tuple(cols[1:]))
    return rows


def s(v):
    """A JSON value as tp.mjs prints it (String() of the SQL value)."""
    if v is None:
        return "null"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def compare(what, expected, got):
    """Compare two Counters; print the differences; True when equal."""
    if expected == got:
        return True
    print(f"{what}: {sum(expected.values())} expected, {sum(got.values())} in Perfetto")
    shown = 0
    for k in sorted(set(expected) | set(got), key=str):
        if expected[k] != got[k] and shown < 20:
            print(f"  {k}: expected {expected[k]}, Perfetto {got[k]}")
            shown += 1
    return False


def bogus_rows(path):
    """(pid or None, tid) rows that a mapped thread's pthread_self() would give."""
    doc = load(path)
    out = set()
    trm = doc.get("thread_resource_map")
    if isinstance(trm, dict):            # a window: {pid: {raw: native}}
        for pid, m in trm.items():
            for raw, native in m.items():
                r = abs((int(raw) + 2**31) % 2**32 - 2**31)
                if r != native:
                    out.add((int(pid), r))
    if isinstance(doc.get("threads"), dict):   # a thread map: {ident: {native_id, ident_i32}}
        pid = (doc.get("meta") or {}).get("pid")
        for t in doc["threads"].values():
            r = abs(int(t["ident_i32"]))
            if r != t["native_id"]:
                out.add((pid, r))
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    check, trace, tp_out = argv[:3]
    opts = dict(zip(argv[3::2], argv[4::2]))
    try:
        doc = load(trace)
    except (OSError, ValueError) as e:
        print(f"perfetto_check: {trace}: {e}", file=sys.stderr)
        return 2
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    xs = [e for e in events if e.get("ph") == "X"]
    api_got = collections.Counter(tp_rows(tp_out, "api"))

    if check == "clean":
        ok = True
        for r in tp_rows(tp_out, "stat"):
            print("stat", *r)
            ok = False
        bad = tp_rows(tp_out, "baddur")
        if bad != [("0",)]:
            print("slices with dur < 0:", bad)
            ok = False
        return 0 if ok else 1

    if check == "slices":
        exp = collections.Counter(e.get("cat") or "" for e in events if e.get("ph") in ("X", "i", "I"))
        got = collections.Counter({r[0] if r[0] != "null" else "": int(r[1]) for r in tp_rows(tp_out, "cat")})
        if not exp:
            print("no X events in the trace")
            return 1
        return 0 if compare("slices per category", exp, got) else 1

    if check == "api":
        exp = collections.Counter((s(e.get("pid")), s(e.get("tid")), e.get("name"),
                                   s((e.get("args") or {}).get("correlation")))
                                  for e in xs if e.get("cat") in API)
        if not exp:
            print("no cuda_runtime or cuda_driver X events in the trace")
            return 1
        return 0 if compare("API slices (pid, tid, name, correlation)", exp, api_got) else 1

    if check == "expect":
        summary = load(opts["--summary"])
        exp = collections.Counter()
        for th in summary["threads"]:
            for tid, n in th["expected_merged_tids"].items():
                if not tid.startswith("("):
                    exp[(str(th["pid"]), tid)] += n
        got = collections.Counter()
        for (pid, tid, _name, _corr), n in api_got.items():
            got[(pid, tid)] += n
        return 0 if compare("API slices per (pid, tid) against the summary", exp, got) else 1

    if check == "bogus":
        rows = bogus_rows(opts["--map"])
        if not rows:
            print("the map names no thread whose pthread_self() row differs from its tid")
            return 1
        tids = {str(t) for _p, t in rows}
        ok = True
        for (pid, tid, name, corr), n in sorted(api_got.items()):
            if tid in tids:
                print(f"{n} x {name} (correlation {corr}) on pid {pid} tid {tid}, a pthread_self() row")
                ok = False
        if not api_got:
            print("no API slices in Perfetto")
            ok = False
        return 0 if ok else 1

    if check == "flows":
        # Perfetto's JSON importer keeps a v1 flow open after its "f": a graph launch
        # (one s, one f per kernel of the graph) gives one flow per f.  It reads the
        # events in time order, so an f before its s (a kernel timed before the
        # trace's base) ends no flow ("flow_end_without_start", an info stat).
        # Both measured on v55.3.
        starts = {e.get("id"): e for e in events if e.get("cat") == "ac2g" and e.get("ph") == "s"}
        ends = [e for e in events if e.get("cat") == "ac2g" and e.get("ph") == "f"]
        by_corr = {}
        for e in xs:
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                by_corr.setdefault((e.get("pid"), e.get("tid"), corr), e.get("cat"))
        exp = collections.Counter()
        for b in ends:
            a = starts.get(b.get("id"))
            if a is not None and b.get("ts", 0) >= a.get("ts", 0):
                exp[(by_corr.get((a.get("pid"), a.get("tid"), b["id"]), "?"),
                     by_corr.get((b.get("pid"), b.get("tid"), b["id"]), "?"))] += 1
        got = collections.Counter()
        ok = True
        for out_cat, in_cat, n, same in tp_rows(tp_out, "flow"):
            got[(out_cat, in_cat)] += int(n)
            if same != n:
                print(f"{out_cat} -> {in_cat}: {n} flows, only {same} between equal correlations")
                ok = False
        if not exp and not got:
            print("no ac2g flow in the trace nor in Perfetto")
        return 0 if compare("flows (from, to)", exp, got) and ok else 1

    if check == "anns":
        exp = collections.Counter((s(e.get("pid")), s(e.get("tid")), e.get("name"))
                                  for e in xs if e.get("cat") == "gpu_user_annotation")
        got = collections.Counter(tp_rows(tp_out, "ann"))
        if not exp:
            print("no gpu_user_annotation X events in the trace")
            return 1
        return 0 if compare("gpu_user_annotation slices (pid, tid, name)", exp, got) else 1

    if check == "procs":
        names, sort = collections.defaultdict(list), {}
        for e in events:
            if e.get("ph") == "M" and isinstance(e.get("pid"), int):
                if e.get("name") == "process_name":
                    names[e["pid"]].append((e.get("args") or {}).get("name"))
                elif e.get("name") == "process_sort_index":
                    sort[e["pid"]] = s((e.get("args") or {}).get("sort_index"))
        got = collections.defaultdict(set)   # Perfetto may keep a nameless pid 0 of its own too
        for pid, name, hint in tp_rows(tp_out, "proc"):
            got[pid].add((name, hint))
        ok = bool(names)
        for pid, n in sorted(names.items()):
            if len(n) != 1:
                print(f"pid {pid}: {len(n)} process_name events: {n}")
                ok = False
            elif (n[0], sort.get(pid, "null")) not in got[str(pid)]:
                print(f"pid {pid}: named {n[0]!r}, sort index {sort.get(pid)}; Perfetto: {sorted(got[str(pid)])}")
                ok = False
        return 0 if ok else 1

    print(f"perfetto_check: unknown check {check}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
