#!/usr/bin/env python3
"""selftest_compare_kineto.py - compare_kineto.py must pass a good trace and fail doctored ones.

Usage: selftest_compare_kineto.py STOCK INFO

STOCK is a stock Kineto trace of kineto_workload.py (--profile full) and INFO
its thread map.  "Ours" is made from STOCK: first a copy with the worker
threads' runtime events (and their flows) moved from Kineto's bogus rows to
their gettid rows, as a correct merge puts them; compare_kineto.py must pass
it.  Then copies of that with one fault each, which compare_kineto.py must
fail, each for the check that the fault is about.  Also: STOCK against itself
with the thread maps fails (stock has the workers on bogus rows).  Prints one
line per case on stderr and a JSON summary on stdout; exits 1 when a case went
the wrong way.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile
from jsonfile import load

HERE = os.path.dirname(os.path.abspath(__file__))


def bogus_row(i32):
    return 0 if i32 == -(1 << 31) else abs(i32)


def fixed_rows(doc, info):
    """doc with the workers' runtime events and flows on their gettid rows."""
    d = copy.deepcopy(doc)
    move = {bogus_row(w["ident_i32"]): w["gettid"] for w in info["workers"]}
    for e in d["traceEvents"]:
        if e.get("pid") == info["pid"] and e.get("tid") in move:
            e["tid"] = move[e["tid"]]
    return d


def kernels(d):
    return [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]


def of_cat(d, cat):
    return [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat]


# each fault: (name, the check that must fail, function doc -> None)
def f_grid(d):
    kernels(d)[0]["args"]["grid"][0] += 1


def f_registers(d):
    kernels(d)[-1]["args"]["registers per thread"] += 8


def f_occupancy(d):
    kernels(d)[3]["args"]["est. achieved occupancy %"] += 2


def f_blocks(d):
    kernels(d)[5]["args"]["blocks per SM"] *= 2


def f_drop_kernel(d):
    d["traceEvents"].remove(kernels(d)[7])


def f_bandwidth(d):
    del of_cat(d, "gpu_memcpy")[0]["args"]["memory bandwidth (GB/s)"]


def f_memset_name(d):
    for e in of_cat(d, "gpu_memset"):
        e["name"] = "Memset"


def f_memcpy_name(d):
    for e in of_cat(d, "gpu_memcpy"):
        e["name"] = "Memcpy"


def f_kernel_ext(d):
    for e in kernels(d):
        e["args"].pop("External id", None)


def f_runtime_cbid(d):
    del of_cat(d, "cuda_runtime")[0]["args"]["cbid"]


def f_no_sync(d):
    d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") != "cuda_sync"]


def f_wait_on(d):
    for e in of_cat(d, "cuda_sync"):
        e["args"].pop("wait_on_stream", None)


def f_no_devprops(d):
    del d["deviceProperties"]


def f_worker_bogus(d, info):
    w = info["workers"][0]
    for e in of_cat(d, "cuda_runtime"):
        if e.get("tid") == w["gettid"]:
            e["tid"] = bogus_row(w["ident_i32"])
            break


def f_graph(d):
    """A graph kernel's correlation made a plain launch's: graph counts differ."""
    rt = {e["args"]["correlation"]: e for e in of_cat(d, "cuda_runtime")}
    plain = next(e for e in of_cat(d, "cuda_runtime") if e["name"] == "cudaLaunchKernel")
    for k in kernels(d):
        if rt.get(k["args"]["correlation"], {}).get("name") == "cudaGraphLaunch":
            k["args"]["correlation"] = plain["args"]["correlation"]
            break


def f_no_start_flows(d):
    d["traceEvents"] = [e for e in d["traceEvents"]
                        if not (e.get("ph") == "s" and e.get("cat") == "ac2g")]


def f_no_user_spans(d):
    """What the merge wrote before issue 26: no gpu_user_annotation span."""
    d["traceEvents"] = [e for e in d["traceEvents"] if e.get("cat") != "gpu_user_annotation"]


def f_user_span_stream(d):
    spans = of_cat(d, "gpu_user_annotation")
    spans[0]["tid"] = spans[0]["tid"] + 1000


def f_gpu_named_python(d, info):
    """The reference's second process_name of GPU 0, "python" (before issue 26)."""
    d["traceEvents"].insert(0, {"ph": "M", "name": "process_name", "ts": 0.0, "pid": 0, "tid": 0,
                                "args": {"name": "python"}})


def f_api_thread_named(d, info):
    """The reference's "thread N" row of a worker's API thread (before issue 26)."""
    w = info["workers"][0]["gettid"]
    d["traceEvents"].insert(0, {"ph": "M", "name": "thread_name", "ts": 0.0, "pid": info["pid"], "tid": w,
                                "args": {"name": f"thread {w}"}})


def warmup_copy(d):
    """d plus a copy of every launch and its GPU events 1 s before the
    profiled step, with fresh correlations, those of stream 7 on a stream of
    their own with its metadata rows: what a cuptirec window adds (the
    unprofiled warm-up).  The span filter must leave them out."""
    ev = d["traceEvents"]
    xs = [e for e in ev if e.get("ph") == "X"]
    top = max(e["args"].get("correlation", 0) for e in xs if "args" in e) + 1000000
    rt = [e for e in xs if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    add = []
    for e in xs:
        if e.get("cat") in ("cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset") \
                and "correlation" in e.get("args", {}):
            c = copy.deepcopy(e)
            c["ts"] = e["ts"] - 1e6
            c["args"]["correlation"] += top
            if c.get("cat") != "cuda_runtime" and c.get("cat") != "cuda_driver" and c.get("tid") == 7:
                c["tid"] = 9999     # a stream only the warm-up used, named as the merge names it
            add.append(c)
    ev.extend(add)
    ev[:0] = [{"ph": "M", "name": "thread_name", "ts": 0.0, "pid": 0, "tid": 9999, "args": {"name": "stream 9999 "}},
              {"ph": "M", "name": "thread_sort_index", "ts": 0.0, "pid": 0, "tid": 9999,
               "args": {"sort_index": 9999}}]
    return len(rt)


FAULTS = [
    ("no_flow_starts", "flows", f_no_start_flows),
    ("grid", "launch_config", f_grid),
    ("registers", "launch_config", f_registers),
    ("occupancy+2", "launch_config", f_occupancy),
    ("blocks_per_sm", "launch_config", f_blocks),
    ("drop_kernel", "kernel_counts", f_drop_kernel),
    ("no_bandwidth", "arg_keys", f_bandwidth),
    ("memset_name", "copy_counts", f_memset_name),
    ("memcpy_name", "copy_counts", f_memcpy_name),
    ("no_kernel_external_id", "arg_keys", f_kernel_ext),
    ("no_cbid", "arg_keys", f_runtime_cbid),
    ("no_cuda_sync", "sync", f_no_sync),
    ("no_wait_on_stream", "arg_keys", f_wait_on),
    ("no_deviceProperties", "device_props", f_no_devprops),
    ("worker_on_bogus_row", "threads", f_worker_bogus),
    ("graph_kernel_relinked", "graph", f_graph),
    ("no_gpu_user_annotation", "user_annotations", f_no_user_spans),
    ("user_annotation_other_stream", "user_annotations", f_user_span_stream),
    ("gpu_process_named_python", "metadata", f_gpu_named_python),
    ("api_thread_named", "metadata", f_api_thread_named),
]


def run(stock, ours_doc, info_path, tmp, name):
    p = os.path.join(tmp, name + ".json")
    with open(p, "w") as f:
        json.dump(ours_doc, f)
    r = subprocess.run([sys.executable, os.path.join(HERE, "compare_kineto.py"), stock, p,
                        "--stock-info", info_path, "--merged-info", info_path],
                       capture_output=True, text=True)
    fails = json.loads(r.stdout)["failures"] if r.stdout.strip() else ["no output: " + r.stderr[-300:]]
    return r.returncode, fails


def main():
    stock, info_path = sys.argv[1], sys.argv[2]
    doc, info = load(stock), load(info_path)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        rc, fails = run(stock, doc, info_path, tmp, "self")
        ok = rc == 1 and fails and all(x.startswith("threads:") for x in fails)
        print(f"{'ok ' if ok else 'BAD'} stock against itself fails only the thread check: rc {rc} {fails}", file=sys.stderr)
        if not ok:
            bad.append("self")
        good = fixed_rows(doc, info)
        rc, fails = run(stock, good, info_path, tmp, "good")
        print(f"{'ok ' if rc == 0 else 'BAD'} workers moved to gettid rows passes: rc {rc} {fails}", file=sys.stderr)
        if rc != 0:
            bad.append("good")
        w = copy.deepcopy(good)
        warmup_copy(w)
        rc, fails = run(stock, w, info_path, tmp, "warmup")
        print(f"{'ok ' if rc == 0 else 'BAD'} plus a warm-up copy of all GPU work before the step passes: rc {rc} {fails}", file=sys.stderr)
        if rc != 0:
            bad.append("warmup")
        for name, check, fn in FAULTS:
            d = copy.deepcopy(good)
            if fn.__code__.co_argcount == 2:
                fn(d, info)
            else:
                fn(d)
            rc, fails = run(stock, d, info_path, tmp, name)
            ok = rc == 1 and any(x.startswith(check + ":") for x in fails)
            print(f"{'ok ' if ok else 'BAD'} {name}: fails {check}: rc {rc} {fails}", file=sys.stderr)
            if not ok:
                bad.append(name)
    print(json.dumps({"cases": len(FAULTS) + 3, "wrong": bad}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
