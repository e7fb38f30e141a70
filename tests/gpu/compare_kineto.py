#!/usr/bin/env python3
"""compare_kineto.py - a merged trace against stock Kineto for the same workload (issues 10, 26).

Usage: compare_kineto.py STOCK MERGED [--stock-info INFO] [--merged-info INFO]
                         [--span NAME] [--all | --clipped [--cpu-trace CPU]]

STOCK is the Chrome trace of kineto_workload.py under torch.profiler(CPU,
CUDA); MERGED is the same workload's CPU-only trace merged with a cuptirec
window by cuptimerge.  Both may be gzip.  The INFO files are the thread maps
that kineto_workload.py wrote in each run (pid, main thread, workers' gettid,
pthread and ident_i32).

The two runs are two processes, so ids (correlation, External id, thread ids)
differ and only what the workload fixes can be compared.  A cuptirec window
also holds what ran before the profiler started (the workload's unprofiled
warm-up step); so in both traces only the GPU work launched inside the
profiled step counts: the runtime events of the host process whose start lies
within the user_annotation NAME (default "step_main"), and the GPU events
(kernel, gpu_memcpy, gpu_memset) whose correlation is one of theirs.  --all
turns the filter off.  --clipped also turns it off, for a MERGED made with
cuptimerge --clip (issue 24), whose window the merge itself cut to the CPU
trace's span: what is left must be what stock Kineto recorded, whole, and
the check "clip" is added.

Checks (a failed one makes the exit status 1):
  kernel_counts   kernels per name equal.
  launch_config   for each kernel name, the instances paired in order of
                  (grid, block, registers, shared memory, start): grid, block,
                  "registers per thread" and "shared memory" equal, "est.
                  achieved occupancy %" within 1 point, "blocks per SM" and
                  "warps per SM" equal to 6 decimals (their text is
                  compared too and reported, not failed).
  copy_counts     gpu_memcpy and gpu_memset events per name equal.
  arg_keys        every arg key that stock writes on kernel, gpu_memcpy,
                  gpu_memset, cuda_runtime and cuda_sync events is in ours:
                  a key stock writes on every event of a group (a category,
                  and for all but kernels a name) must be on every event of
                  ours in that group (but "External id", whose presence
                  depends on the op around the call, except on cuda_sync), a
                  key it writes on some on at least one of ours in the
                  category.
  sync            the cuda_sync names (Stream Sync, Event Sync, Stream Wait
                  Event, Context Sync) stock has are in ours; the flows that
                  end on cuda_sync events.
  external_id     GPU events with an "External id": no fewer in ours.
  graph           kernels launched by cudaGraphLaunch (their correlation is a
                  cudaGraphLaunch's): the same count per name; distinct
                  ("graph id", "graph node id") pairs: no fewer in ours.
  flows           kernels, copies and sets joined to their launch by an ac2g
                  flow ("s" on the launch, "f" on the GPU event, one id): no
                  fewer in ours.
  device_props    top-level deviceProperties in ours when stock has them,
                  with all its keys.
  threads         (with both INFO files) the workers' CUDA API events in
                  ours on their gettid rows, none on the rows Kineto would
                  use (abs(int32(pthread_self))) nor on any row too large for
                  a thread id (other rows are reported); in stock they must
                  be on those bogus rows.
  user_annotations (issue 26) the gpu_user_annotation spans, whole trace:
                  per name, the same number of spans on the same (device,
                  stream) rows, and the same arg keys.  A window's warm-up
                  lies in no annotation of the CPU trace, so it adds none.
  metadata        (issue 26) every process_name, process_labels,
                  process_sort_index, thread_name and thread_sort_index
                  event, as (name, pid, tid, args), ts aside: the same
                  multiset in both (one process_name a pid, processes named
                  after the program).  The runs' own ids are written as
                  names first: the host pid "PID", the main thread "MAIN",
                  worker i's gettid "Wi" and its Kineto row "Bi" (from the
                  INFO files), in pids, tids, sort indexes and names.  The
                  rows of a GPU process count only where the step's GPU work
                  or syncs ran (a window's warm-up opens streams, such as
                  the step's new side stream, that the profiled step never
                  used); --all counts them all.
  clip            (--clipped) every cuda_runtime and cuda_driver event of
                  ours starts within the CPU trace's span (the CPU events'
                  smallest ts to largest ts + dur, and the "PyTorch Profiler
                  (0)" event of CPU, the trace that was merged, when given:
                  the span --clip cuts to), and every GPU event with
                  a correlation has its launch in ours when stock's has one.
                  The timelines (smallest ts to largest ts + dur of the X
                  events) are reported as figures.
cuda_driver events are reported, not checked.

Prints one JSON line of figures on stdout and a readable report on stderr.
"""
import argparse
import json
import sys
from collections import Counter, defaultdict
import jsonfile

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
KEY_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_sync")
PID_MAX_LIMIT = 1 << 22      # Linux's ceiling for pid_max: no thread id reaches it


class FText(float):
    """A float that keeps the text it was parsed from (Kineto's %f vs ours)."""

    def __new__(cls, text):
        f = float.__new__(cls, text)
        f.text = text
        return f


def load(path):
    """The JSON document at PATH (plain or gzip), floats keeping their text."""
    return jsonfile.load(path, parse_float=FText)


def text_of(v):
    """A number's text as written in the trace."""
    return v.text if isinstance(v, FText) else json.dumps(v)


def sanitize_tid(i32):
    """Kineto's row for a raw int32 thread id: its absolute value (INT_MIN -> 0)."""
    return 0 if i32 == -(1 << 31) else abs(i32)


class Trace:
    """One trace's events of interest, restricted to the profiled step."""

    def __init__(self, doc, label, span_name, use_all, host_pid=None):
        self.doc = doc
        self.label = label
        ev = doc["traceEvents"]
        xs = [e for e in ev if e.get("ph") == "X"]
        self.span = None
        if not use_all:
            anns = [e for e in xs if e.get("cat") == "user_annotation" and e.get("name") == span_name]
            if anns:
                a = anns[0]
                self.span = (float(a["ts"]), float(a["ts"]) + float(a.get("dur", 0)))
                host_pid = host_pid if host_pid is not None else a.get("pid")
        self.host_pid = host_pid
        rt_all = [e for e in xs if e.get("cat") in ("cuda_runtime", "cuda_driver")]
        if self.span is not None:
            lo, hi = self.span
            rt = [e for e in rt_all if (host_pid is None or e.get("pid") == host_pid)
                  and lo <= float(e["ts"]) <= hi]
        else:
            rt = rt_all
        self.runtime = [e for e in rt if e.get("cat") == "cuda_runtime"]
        self.driver = [e for e in rt if e.get("cat") == "cuda_driver"]
        self.corr_launch = {}
        for e in rt:
            c = e.get("args", {}).get("correlation")
            if c is not None:
                self.corr_launch[c] = e
        self.gpu = defaultdict(list)
        for e in xs:
            cat = e.get("cat")
            if cat in GPU_CATS:
                c = e.get("args", {}).get("correlation")
                if self.span is None or c in self.corr_launch:
                    self.gpu[cat].append(e)
        # cuda_sync: a sync whose correlation is a kept runtime call, or (no
        # correlation to a call, e.g. a wait event) whose start is in the span
        self.sync = []
        for e in xs:
            if e.get("cat") != "cuda_sync":
                continue
            c = e.get("args", {}).get("correlation")
            if self.span is None or c in self.corr_launch or \
                    self.span[0] <= float(e["ts"]) <= self.span[1]:
                self.sync.append(e)
        self.flows = [e for e in ev if e.get("ph") in ("s", "f", "t")]

    def kernels(self):
        """The kernels within the step."""
        return self.gpu["kernel"]


def launch_key(k):
    """A kernel's launch configuration, as a sortable tuple."""
    a = k.get("args", {})
    return (tuple(a.get("grid", [])), tuple(a.get("block", [])),
            a.get("registers per thread", -1), a.get("shared memory", -1))


def short(name, n=70):
    """NAME cut to N characters for a report line (kernel names run to kilobytes)."""
    return name if len(name) <= n else name[:n - 3] + "..."


class Report:
    """Failures (check: why) and figures; every line also goes to stderr."""

    def __init__(self):
        self.fails = []
        self.fig = {}

    def fail(self, check, why):
        self.fails.append(f"{check}: {why}")
        print(f"FAIL {check}: {why}", file=sys.stderr)

    def note(self, msg):
        print(msg, file=sys.stderr)


def check_kernel_counts(st, ours, rep):
    """Kernels per name in the step: equal in both."""
    cs = Counter(k["name"] for k in st.kernels())
    co = Counter(k["name"] for k in ours.kernels())
    rep.fig["kernels"] = {"stock": sum(cs.values()), "ours": sum(co.values()),
                          "names_stock": len(cs), "names_ours": len(co)}
    diff = {n: [cs.get(n, 0), co.get(n, 0)] for n in set(cs) | set(co) if cs.get(n, 0) != co.get(n, 0)}
    rep.fig["kernel_count_diffs"] = len(diff)
    rep.note(f"kernels in the step: stock {sum(cs.values())} ({len(cs)} names), "
             f"ours {sum(co.values())} ({len(co)} names)")
    for n, (a, b) in sorted(diff.items(), key=lambda x: x[0]):
        rep.note(f"  count differs: stock {a} ours {b}  {short(n)}")
    if diff:
        rep.fail("kernel_counts", f"{len(diff)} kernel names with other counts")
    return cs, co


def check_launch_config(st, ours, rep):
    """Per kernel name, instances paired in launch-config order: config equal,
    occupancy within 1 point, blocks/warps per SM equal to Kineto's 6 decimals."""
    by_s, by_o = defaultdict(list), defaultdict(list)
    for k in st.kernels():
        by_s[k["name"]].append(k)
    for k in ours.kernels():
        by_o[k["name"]].append(k)
    pairs = bad_cfg = bad_occ = bad_num = text_diff = 0
    max_occ = 0
    examples = []
    for name in sorted(set(by_s) & set(by_o)):
        ls = sorted(by_s[name], key=lambda k: (launch_key(k), float(k["ts"])))
        lo = sorted(by_o[name], key=lambda k: (launch_key(k), float(k["ts"])))
        for a, b in zip(ls, lo):
            pairs += 1
            aa, ba = a.get("args", {}), b.get("args", {})
            if launch_key(a) != launch_key(b):
                bad_cfg += 1
                if len(examples) < 5:
                    examples.append(f"config stock {launch_key(a)} ours {launch_key(b)}  {short(name)}")
            oa, ob = aa.get("est. achieved occupancy %"), ba.get("est. achieved occupancy %")
            if oa is None or ob is None or not isinstance(ob, (int, float)) or \
                    not isinstance(oa, (int, float)):
                if oa != ob:
                    bad_occ += 1
                    if len(examples) < 5:
                        examples.append(f"occupancy stock {oa!r} ours {ob!r}  {short(name)}")
            else:
                d = abs(float(oa) - float(ob))
                max_occ = max(max_occ, d)
                if d > 1:
                    bad_occ += 1
                    if len(examples) < 5:
                        examples.append(f"occupancy stock {oa} ours {ob}  {short(name)}")
            for key in ("blocks per SM", "warps per SM"):
                va, vb = aa.get(key), ba.get(key)
                if isinstance(va, (int, float)) and isinstance(vb, (int, float)):
                    if abs(float(va) - float(vb)) > 5e-6 * max(1.0, abs(float(va))):
                        bad_num += 1
                        if len(examples) < 5:
                            examples.append(f"{key} stock {text_of(va)} ours {text_of(vb)}  {short(name)}")
                    elif text_of(va) != text_of(vb):
                        text_diff += 1
                elif va != vb:
                    bad_num += 1
                    if len(examples) < 5:
                        examples.append(f"{key} stock {va!r} ours {vb!r}  {short(name)}")
    rep.fig["launch_config"] = {"pairs": pairs, "config_mismatch": bad_cfg,
                                "occupancy_over_1pt": bad_occ, "occupancy_max_diff": max_occ,
                                "per_sm_mismatch": bad_num, "per_sm_text_differs": text_diff}
    rep.note(f"matched kernels: {pairs}; config mismatches {bad_cfg}; occupancy > 1 point: "
             f"{bad_occ} (max diff {max_occ}); blocks/warps per SM mismatches {bad_num}, "
             f"same value other text {text_diff}")
    for x in examples:
        rep.note("  " + x)
    if pairs == 0:
        rep.fail("launch_config", "no kernel matched")
    if bad_cfg:
        rep.fail("launch_config", f"{bad_cfg} kernels with another grid/block/registers/shared memory")
    if bad_occ:
        rep.fail("launch_config", f"{bad_occ} kernels with occupancy more than 1 point off")
    if bad_num:
        rep.fail("launch_config", f"{bad_num} blocks/warps per SM values differ")


def check_copy_counts(st, ours, rep):
    """gpu_memcpy and gpu_memset events per name (Kineto's names): equal."""
    for cat in ("gpu_memcpy", "gpu_memset"):
        cs = Counter(e["name"] for e in st.gpu[cat])
        co = Counter(e["name"] for e in ours.gpu[cat])
        rep.fig[cat] = {"stock": dict(cs), "ours": dict(co)}
        rep.note(f"{cat}: stock {dict(cs)}; ours {dict(co)}")
        if cs != co:
            rep.fail("copy_counts", f"{cat} names/counts differ")


def key_groups(events, by_name):
    """(name or '*') -> (keys on every event, keys on some event, count)."""
    groups = {}
    for e in events:
        g = e.get("name") if by_name else "*"
        keys = set(e.get("args", {}).keys())
        if g in groups:
            every, some, n = groups[g]
            groups[g] = (every & keys, some | keys, n + 1)
        else:
            groups[g] = (set(keys), set(keys), 1)
    return groups


def cat_events(t, cat):
    """Trace T's events of category CAT within the step."""
    if cat in GPU_CATS:
        return t.gpu[cat]
    if cat == "cuda_runtime":
        return t.runtime
    return t.sync


def check_arg_keys(st, ours, rep):
    """Every arg key stock writes on the KEY_CATS events is in ours (see the usage)."""
    missing_total = 0
    figs = {}
    for cat in KEY_CATS:
        se, oe = cat_events(st, cat), cat_events(ours, cat)
        if not se:
            figs[cat] = {"stock_events": 0}
            continue
        s_union = set().union(*(set(e.get("args", {})) for e in se))
        o_union = set().union(*(set(e.get("args", {})) for e in oe)) if oe else set()
        absent = sorted(s_union - o_union)
        # per group: keys stock always writes must be on every one of ours
        by_name = cat != "kernel"
        sg, og = key_groups(se, by_name), key_groups(oe, by_name)
        short_events = 0
        detail = []
        for g, (every, _some, _n) in sg.items():
            if g not in og:
                continue
            if cat != "cuda_sync":
                # whether a call ran inside a profiled op can change from run to
                # run (an allocator's cudaMalloc, say); the external_id check
                # counts them.  A cuda_sync always has one (its own correlation
                # when unlinked).
                every = every - {"External id"}
            for e in (x for x in oe if (x.get("name") if by_name else "*") == g):
                lack = every - set(e.get("args", {}))
                if lack:
                    short_events += 1
                    if len(detail) < 3:
                        detail.append(f"{short(str(g), 40)} lacks {sorted(lack)}")
        figs[cat] = {"stock_events": len(se), "ours_events": len(oe),
                     "stock_keys": sorted(s_union), "keys_absent": absent,
                     "events_lacking_keys": short_events}
        rep.note(f"{cat}: stock {len(se)} events, keys {sorted(s_union)}")
        if absent:
            rep.fail("arg_keys", f"{cat}: keys never in ours: {absent}")
            missing_total += len(absent)
        if short_events:
            rep.fail("arg_keys", f"{cat}: {short_events} of our events lack keys stock always "
                     f"writes ({'; '.join(detail)})")
            missing_total += 1
        if not oe:
            rep.fail("arg_keys", f"{cat}: stock has {len(se)} events, ours none")
    rep.fig["arg_keys"] = figs


def check_sync(st, ours, rep):
    """cuda_sync kinds of stock present in ours; flows ending on them likewise."""
    cs = Counter(e["name"] for e in st.sync)
    co = Counter(e["name"] for e in ours.sync)

    def flows_on_sync(t):
        syncs = {(e.get("pid"), e.get("tid"), text_of(e["ts"])) for e in t.doc["traceEvents"]
                 if e.get("ph") == "X" and e.get("cat") == "cuda_sync"}
        return Counter(f"{f['ph']}/{f.get('cat')}/{f.get('bp', '-')}" for f in t.flows
                       if (f.get("pid"), f.get("tid"), text_of(f["ts"])) in syncs)
    fs, fo = flows_on_sync(st), flows_on_sync(ours)
    rep.fig["cuda_sync"] = {"stock": dict(cs), "ours": dict(co),
                            "flows_on_sync_stock": dict(fs), "flows_on_sync_ours": dict(fo)}
    rep.note(f"cuda_sync: stock {dict(cs)}; ours {dict(co)}; flows ending on them: "
             f"stock {dict(fs)}, ours {dict(fo)}")
    lack = sorted(n for n in cs if n not in co)
    if lack:
        rep.fail("sync", f"cuda_sync kinds absent in ours: {lack}")
    for k in fs:
        if k not in fo:
            rep.fail("sync", f"stock has flows {k} on cuda_sync events, ours none")


def check_external_id(st, ours, rep):
    """GPU and runtime events carrying an External id: no fewer in ours."""
    def count(t):
        return {cat: sum(1 for e in t.gpu[cat] if "External id" in e.get("args", {})) for cat in GPU_CATS}
    a, b = count(st), count(ours)
    ra = sum(1 for e in st.runtime if "External id" in e.get("args", {}))
    rb = sum(1 for e in ours.runtime if "External id" in e.get("args", {}))
    a["cuda_runtime"], b["cuda_runtime"] = ra, rb
    rep.fig["external_id"] = {"stock": a, "ours": b}
    rep.note(f"events with External id: stock {a}; ours {b}")
    for cat in a:
        if b[cat] < a[cat]:
            rep.fail("external_id", f"{cat}: ours {b[cat]} < stock {a[cat]}")


def check_graph(st, ours, rep):
    """Kernels whose launch is a cudaGraphLaunch: the same per name; graph ids."""
    def graph_kernels(t):
        c = Counter()
        streams = Counter()
        for k in t.kernels():
            launch = t.corr_launch.get(k.get("args", {}).get("correlation"))
            if launch is not None and launch.get("name", "").startswith("cudaGraphLaunch"):
                c[k["name"]] += 1
                streams[k.get("tid")] += 1
        launches = sum(1 for e in t.runtime if e.get("name", "").startswith("cudaGraphLaunch"))
        gid = Counter((k["args"].get("graph id"), k["args"].get("graph node id"))
                      for k in t.kernels() if k.get("args", {}).get("graph id"))
        return c, launches, streams, gid
    cs, ls, ss, gs = graph_kernels(st)
    co, lo, so, go = graph_kernels(ours)
    rep.fig["graph"] = {"launches_stock": ls, "launches_ours": lo,
                        "kernels_stock": sum(cs.values()), "kernels_ours": sum(co.values()),
                        "streams_stock": len(ss), "streams_ours": len(so),
                        "node_ids_stock": len(gs), "node_ids_ours": len(go)}
    rep.note(f"cudaGraphLaunch: stock {ls}, ours {lo}; graph kernels stock {sum(cs.values())} "
             f"on {len(ss)} streams, ours {sum(co.values())} on {len(so)}; distinct (graph id, "
             f"node id) stock {len(gs)}, ours {len(go)}")
    if cs != co:
        diff = {short(n, 50): [cs.get(n, 0), co.get(n, 0)] for n in set(cs) | set(co)
                if cs.get(n, 0) != co.get(n, 0)}
        rep.fail("graph", f"graph kernels per name differ (stock, ours): {diff}")
    if ls and not cs:
        rep.note("  (stock links no kernel to its cudaGraphLaunch)")
    if len(go) < len(gs):      # more is fine: torch 2.11's Kineto writes none
        rep.fail("graph", f"distinct (graph id, graph node id): stock {len(gs)}, ours {len(go)}")


def check_flows(st, ours, rep):
    """Kernels and copies joined to their launch by an ac2g flow (s on the
    launch, f on the GPU event, same id): no fewer in ours."""
    def joined(t):
        at = {}
        for f in t.flows:
            if f.get("cat") == "ac2g":
                at.setdefault((f["ph"], f.get("pid"), f.get("tid"), text_of(f["ts"])), set()).add(f["id"])
        starts = {i for (ph, *_), ids in at.items() if ph == "s" for i in ids}
        n = {}
        for cat in GPU_CATS:
            n[cat] = 0
            for e in t.gpu[cat]:
                ids = at.get(("f", e.get("pid"), e.get("tid"), text_of(e["ts"])), set())
                launch = t.corr_launch.get(e.get("args", {}).get("correlation"))
                if launch is None:
                    continue
                lids = at.get(("s", launch.get("pid"), launch.get("tid"), text_of(launch["ts"])), set())
                if ids & lids & starts:
                    n[cat] += 1
        return n
    a, b = joined(st), joined(ours)
    rep.fig["flows_joined"] = {"stock": a, "ours": b}
    rep.note(f"GPU events joined to their launch by an ac2g flow: stock {a}; ours {b}")
    for cat in a:
        if b[cat] < a[cat]:
            rep.fail("flows", f"{cat}: {b[cat]} joined to their launch in ours, {a[cat]} in stock")


def check_driver(st, ours, rep):
    """cuda_driver: not among the issue's categories; reported, not failed."""
    s_keys = sorted(set().union(*(set(e.get("args", {})) for e in st.driver))) if st.driver else []
    o_keys = sorted(set().union(*(set(e.get("args", {})) for e in ours.driver))) if ours.driver else []
    rep.fig["cuda_driver"] = {"stock": len(st.driver), "ours": len(ours.driver),
                              "stock_keys": s_keys, "ours_keys": o_keys}
    rep.note(f"cuda_driver (reported only): stock {len(st.driver)} events keys {s_keys}; "
             f"ours {len(ours.driver)} keys {o_keys}")


def check_device_props(st, ours, rep):
    """Top-level deviceProperties with stock's keys in ours when stock has them."""
    s, o = st.doc.get("deviceProperties"), ours.doc.get("deviceProperties")
    rep.fig["device_properties"] = {"stock": s is not None, "ours": o is not None}
    if s is not None and o is None:
        rep.fail("device_props", "ours has no top-level deviceProperties")
    elif s is not None and o is not None:
        ks = set().union(*(set(d) for d in s)) if s else set()
        ko = set().union(*(set(d) for d in o)) if o else set()
        if ks - ko:
            rep.fail("device_props", f"deviceProperties keys absent in ours: {sorted(ks - ko)}")


def check_user_annotations(st, ours, rep):
    """gpu_user_annotation spans per name: count, (device, stream) rows, arg keys."""
    def spans(t):
        by = defaultdict(list)
        keys = defaultdict(set)
        for e in t.doc["traceEvents"]:
            if e.get("ph") == "X" and e.get("cat") == "gpu_user_annotation":
                by[e.get("name")].append((e.get("pid"), e.get("tid")))
                keys[e.get("name")] |= set(e.get("args", {}))
        return {n: sorted(v, key=repr) for n, v in by.items()}, keys
    (ss, sk), (so, ok) = spans(st), spans(ours)
    rep.fig["user_annotations"] = {
        "stock": {n: {"spans": len(v), "rows": [list(r) for r in v]} for n, v in ss.items()},
        "ours": {n: {"spans": len(v), "rows": [list(r) for r in v]} for n, v in so.items()}}
    rep.note(f"gpu_user_annotation spans (name: (device, stream) rows): stock {ss}; ours {so}")
    for n in sorted(set(ss) | set(so), key=repr):
        a, b = ss.get(n, []), so.get(n, [])
        if a != b:
            rep.fail("user_annotations", f"{short(str(n), 50)}: stock {len(a)} spans on {a}, ours {len(b)} on {b}")
        elif sk[n] != ok[n]:
            rep.fail("user_annotations", f"{short(str(n), 50)}: arg keys stock {sorted(sk[n])}, ours {sorted(ok[n])}")
    if not ss:
        rep.note("  (stock has no gpu_user_annotation span)")


META_NAMES = ("process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index")


def id_names(t, info):
    """The run's own ids -> names, for a comparison across two runs."""
    names = {}
    if t.host_pid is not None:
        names[t.host_pid] = "PID"
    if info:
        names[info["pid"]] = "PID"
        names[info["main"]["gettid"]] = "MAIN"
        for i, w in enumerate(info["workers"]):
            names[w["gettid"]] = f"W{i}"
            names.setdefault(sanitize_tid(w["ident_i32"]), f"B{i}")
    return names


def check_metadata(st, ours, si, oi, rep, use_all=False):
    """Every row-naming metadata event as (name, pid, tid, args), ids named."""
    import re
    left_out = {}

    def events(t, info):
        names = id_names(t, info)
        word = re.compile(r"-?\d+")
        gpu_pids = {e.get("pid") for cat in GPU_CATS for e in t.gpu[cat]} | {e.get("pid") for e in t.sync}
        step_rows = {(e.get("pid"), e.get("tid")) for cat in GPU_CATS for e in t.gpu[cat]} | \
            {(e.get("pid"), e.get("tid")) for e in t.sync}
        left_out[t.label] = 0

        def sub(v):
            if isinstance(v, bool) or not isinstance(v, (int, str)):
                return v
            if isinstance(v, int):
                return names.get(v, v)
            return word.sub(lambda m: names.get(int(m.group()), m.group()), v)
        c = Counter()
        for e in t.doc["traceEvents"]:
            if e.get("ph") == "M" and e.get("name") in META_NAMES:
                if not use_all and e["name"].startswith("thread_") and e.get("pid") in gpu_pids and \
                        (e.get("pid"), e.get("tid")) not in step_rows:
                    left_out[t.label] += 1
                    continue
                args = {k: sub(v) for k, v in sorted(e.get("args", {}).items())}
                c[json.dumps([e["name"], sub(e.get("pid")), sub(e.get("tid")), args])] += 1
        return c
    cs, co = events(st, si), events(ours, oi)
    only_s, only_o = cs - co, co - cs
    per_pid = Counter(json.loads(k)[1] for k, n in co.items() if json.loads(k)[0] == "process_name"
                      for _ in range(n))
    rep.fig["metadata"] = {"stock": sum(cs.values()), "ours": sum(co.values()),
                           "gpu_rows_outside_step": left_out,
                           "stock_only": sum(only_s.values()), "ours_only": sum(only_o.values()),
                           "pids_named_twice": sorted((str(p) for p, n in per_pid.items() if n > 1))}
    rep.note(f"metadata events: stock {sum(cs.values())}, ours {sum(co.values())}; "
             f"stock only {sum(only_s.values())}, ours only {sum(only_o.values())} "
             f"(GPU rows with no GPU work of the step, left out: {left_out})")
    for k in sorted(only_s)[:6]:
        rep.note(f"  stock only: {k} x{only_s[k]}")
    for k in sorted(only_o)[:6]:
        rep.note(f"  ours only:  {k} x{only_o[k]}")
    if only_s or only_o:
        rep.fail("metadata", f"{sum(only_s.values())} events only in stock, {sum(only_o.values())} only in ours")
    if rep.fig["metadata"]["pids_named_twice"]:
        rep.fail("metadata", f"process_name twice for {rep.fig['metadata']['pids_named_twice']}")


def check_threads(st, ours, si, oi, rep):
    """Rows of the CUDA API events per the thread maps SI (stock run), OI (ours)."""
    def rows(t, info):
        pid = info["pid"]
        r = Counter(e.get("tid") for e in t.runtime + t.driver if e.get("pid") == pid)
        gettid = {w["gettid"] for w in info["workers"]}
        main = info["main"]["gettid"]
        bogus = {sanitize_tid(w["ident_i32"]) for w in info["workers"]} - gettid - {main}
        other = {x: n for x, n in r.items() if x not in gettid and x not in bogus and x != main}
        return {"on_gettid": sum(r[x] for x in gettid), "on_bogus": sum(r[x] for x in bogus),
                "on_main": r[main],
                # a row above pid_max's ceiling (2^22) cannot be a thread id: pthread-derived
                "on_pthread_like": sum(n for x, n in other.items()
                                       if not isinstance(x, int) or x >= PID_MAX_LIMIT),
                "on_other_rows": {str(x): n for x, n in other.items()
                                  if isinstance(x, int) and x < PID_MAX_LIMIT},
                "workers": len(gettid),
                "workers_with_rows": sum(1 for x in gettid if r[x])}
    a, b = rows(st, si), rows(ours, oi)
    rep.fig["threads"] = {"stock": a, "ours": b}
    rep.note(f"CUDA API events per row: stock {a}; ours {b}")
    if b["on_bogus"] or b["on_pthread_like"]:
        rep.fail("threads", f"ours has runtime events off the gettid rows: {b}")
    if b["workers_with_rows"] != b["workers"]:
        rep.fail("threads", f"ours: {b['workers'] - b['workers_with_rows']} workers without events on their row")
    if a["on_bogus"] == 0:
        rep.fail("threads", "stock has no worker runtime events on pthread rows (the bug this fixes?)")


NON_CPU_CATS = GPU_CATS + ("cuda_runtime", "cuda_driver", "cuda_sync", "overhead", "Trace",
                           "gpu_user_annotation")


def timeline(doc):
    """Smallest ts and largest ts + dur of DOC's X events (us), or None."""
    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X" and "ts" in e]
    if not xs:
        return None
    return (min(float(e["ts"]) for e in xs), max(float(e["ts"]) + float(e.get("dur", 0)) for e in xs))


def check_clip(st, ours, cpu_doc, rep):
    """--clipped: the API calls of ours start within the CPU span; GPU work keeps its launch."""
    cpu = [e for e in ours.doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") not in NON_CPU_CATS]
    if not cpu:
        rep.fail("clip", "ours has no CPU events")
        return
    lo = min(float(e["ts"]) for e in cpu)
    hi = max(float(e["ts"]) + float(e.get("dur", 0)) for e in cpu)
    for e in (cpu_doc or {}).get("traceEvents", []):
        if e.get("ph") == "X" and e.get("cat") == "Trace" and e.get("name") == "PyTorch Profiler (0)":
            lo = min(lo, float(e["ts"]))
            hi = max(hi, float(e["ts"]) + max(float(e.get("dur", 0)), 0.0))
    api = ours.runtime + ours.driver
    outside = [e for e in api if not lo <= float(e["ts"]) <= hi]
    if outside:
        e = outside[0]
        rep.fail("clip", f"{len(outside)} API events of ours start outside the CPU span "
                 f"{lo:.3f}-{hi:.3f} us, e.g. {e.get('name')} at {e['ts']}")
    orphans = 0
    for cat in GPU_CATS:
        for e in ours.gpu[cat]:
            c = e.get("args", {}).get("correlation")
            if c and c not in ours.corr_launch:
                orphans += 1
    st_orphans = sum(1 for cat in GPU_CATS for e in st.gpu[cat]
                     if e.get("args", {}).get("correlation") and
                     e["args"]["correlation"] not in st.corr_launch)
    if orphans > st_orphans:
        rep.fail("clip", f"ours has {orphans} GPU events without their launch, stock {st_orphans}")
    tl = {"stock": timeline(st.doc), "ours": timeline(ours.doc)}
    rep.fig["timeline_us"] = {k: v and round(v[1] - v[0], 3) for k, v in tl.items()}
    rep.fig["cpu_span_us"] = round(hi - lo, 3)
    rep.fig["api_events"] = {"stock": len(st.runtime) + len(st.driver), "ours": len(api)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stock")
    ap.add_argument("merged")
    ap.add_argument("--stock-info")
    ap.add_argument("--merged-info")
    ap.add_argument("--span", default="step_main")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--clipped", action="store_true")
    ap.add_argument("--cpu-trace")
    a = ap.parse_args()
    a.all = a.all or a.clipped
    si = load(a.stock_info) if a.stock_info else None
    oi = load(a.merged_info) if a.merged_info else None
    st = Trace(load(a.stock), "stock", a.span, a.all, si["pid"] if si else None)
    ours = Trace(load(a.merged), "ours", a.span, a.all, oi["pid"] if oi else None)
    rep = Report()
    for t in (st, ours):
        if not a.all and t.span is None:
            rep.fail("span", f"{t.label}: no user_annotation {a.span!r}; use --all")
    rep.fig["span_us"] = {"stock": st.span and round(st.span[1] - st.span[0], 3),
                          "ours": ours.span and round(ours.span[1] - ours.span[0], 3)}
    check_kernel_counts(st, ours, rep)
    check_launch_config(st, ours, rep)
    check_copy_counts(st, ours, rep)
    check_arg_keys(st, ours, rep)
    check_sync(st, ours, rep)
    check_external_id(st, ours, rep)
    check_graph(st, ours, rep)
    check_flows(st, ours, rep)
    check_driver(st, ours, rep)
    check_device_props(st, ours, rep)
    check_user_annotations(st, ours, rep)
    check_metadata(st, ours, si, oi, rep, a.all)
    if a.clipped:
        check_clip(st, ours, load(a.cpu_trace) if a.cpu_trace else None, rep)
    if si and oi:
        check_threads(st, ours, si, oi, rep)
    else:
        rep.note("threads: not checked (needs --stock-info and --merged-info)")
    rep.fig["failures"] = rep.fails
    print(json.dumps(rep.fig))
    rep.note("FAILED: %d" % len(rep.fails) if rep.fails else "all checks passed")
    return 1 if rep.fails else 0


if __name__ == "__main__":
    sys.exit(main())
