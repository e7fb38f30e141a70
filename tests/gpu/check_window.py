#!/usr/bin/env python3
"""check_window.py - check a cuptirec window recorded from threads_cuda.

Usage: check_window.py WINDOW PROGRAM_STDOUT [--expect-drops] [--expect-queued]

Checks that the window is complete and well-formed (members in streaming
order), that every CUDA runtime record carries the gettid of the thread that
issued it (kernels k_<role> must join a launch by correlation id on <role>'s
gettid), that memcpy/memset records join their thread's launches, that the
user annotations and external ids of the C API landed on the right threads,
that the noisy calls are filtered, and that the thread map agrees with what
the threads printed, and that "source" names this host, process and rank.
Window format 2 (issue 10): "window_version" is 2; every kernel carries its
launch (threads_cuda launches <<<256, 256>>> with no shared memory), with
queued_ns <= submitted_ns <= start_ns when present (required with
--expect-queued, i.e. under --latency-timestamps); copies and sets carry
Kineto's names ("Memcpy DtoH (Device -> Pinned)", "Memset (Device)"); every
cuda_sync carries the device of its context; "device_properties" describes each
device the events name, with Kineto's keys, matching what torch (when
importable) or nvidia-smi says of the device.
Prints one JSON line of figures; exits 1 on a failure.
"""
import ctypes
import json
import os
import socket
import subprocess
import sys
from collections import Counter, defaultdict
from jsonfile import load

NOISY_RUNTIME = {10, 16, 17, 133, 134, 136}  # GetLastError SetDevice GetDevice EventCreate(WithFlags) EventDestroy
# Kineto's deviceProperties keys in its order, then the two the occupancy calculator adds
DEVPROP_KEYS = ["id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "maxThreadsPerBlock",
                "maxThreadsPerMultiprocessor", "regsPerBlock", "warpSize", "sharedMemPerBlock", "numSms",
                "regsPerMultiprocessor", "sharedMemPerBlockOptin", "sharedMemPerMultiprocessor",
                "reservedSharedMemPerBlock", "maxBlocksPerMultiProcessor"]
LAUNCH_KEYS = ["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers_per_thread",
               "static_shared_memory", "dynamic_shared_memory", "channel_id", "channel_type"]
# threads_cuda: a cudaMallocHost buffer, 4 round trips and 1 memset per thread
COPY_NAMES = {"Memcpy DtoH (Device -> Pinned)": 4, "Memcpy HtoD (Pinned -> Device)": 4, "Memset (Device)": 1}


def device_truth(dev):
    """What torch (cudaGetDeviceProperties, as Kineto) or else nvidia-smi says of device DEV:
    a dict of deviceProperties keys, or {}."""
    try:
        import torch
        p = torch.cuda.get_device_properties(dev)
        t = {"name": p.name, "totalGlobalMem": p.total_memory, "computeMajor": p.major,
             "computeMinor": p.minor, "numSms": p.multi_processor_count}
        for key, attr in (("maxThreadsPerMultiprocessor", "max_threads_per_multi_processor"),
                          ("regsPerMultiprocessor", "regs_per_multiprocessor"), ("warpSize", "warp_size"),
                          ("sharedMemPerBlock", "shared_memory_per_block"),
                          ("sharedMemPerBlockOptin", "shared_memory_per_block_optin"),
                          ("sharedMemPerMultiprocessor", "shared_memory_per_multiprocessor")):
            if hasattr(p, attr):
                t[key] = getattr(p, attr)
        return t
    except Exception:
        pass
    try:
        out = subprocess.run(["nvidia-smi", "-i", str(dev), "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        return {"name": out} if out else {}
    except Exception:
        return {}


def main():
    win_path, out_path = sys.argv[1], sys.argv[2]
    expect_drops = "--expect-drops" in sys.argv
    expect_queued = "--expect-queued" in sys.argv
    fails = []
    w = load(win_path)
    tids, pthreads, pid, t0, t1, api = {}, {}, None, 0, 0, False
    for line in open(out_path):
        f = line.split()
        if f[:1] == ["PROC"]:
            pid, t0 = int(f[1]), int(f[2])
        elif f[:1] == ["THREAD"]:
            tids[f[1]] = int(f[2])
            pthreads[f[1]] = int(f[3])
        elif f[:1] == ["DONE"]:
            t1 = int(f[1])
        elif f[:1] == ["API"]:
            api = f[1] == "yes"
    role_of_tid = {v: k for k, v in tids.items()}

    keys = list(w.keys())
    if keys[:5] != ["events", "user_annotations", "thread_resource_map", "start_ns", "dropped_records"]:
        fails.append(f"member order {keys}")
    ev = w["events"]
    kinds = Counter(e["kind"] for e in ev)
    api_by_corr = {}
    for e in ev:
        if e["kind"] in ("cuda_runtime", "cuda_driver"):
            api_by_corr.setdefault(e["correlation_id"], e)
    runtime = [e for e in ev if e["kind"] == "cuda_runtime"]
    bad_tid = [e for e in runtime if e["thread_id"] not in role_of_tid]
    if bad_tid:
        fails.append(f"{len(bad_tid)} runtime records on unknown thread ids, e.g. {bad_tid[0]}")
    if any(e["process_id"] != pid for e in runtime):
        fails.append("runtime record with another process id")
    noisy = [e for e in runtime if e["cbid"] in NOISY_RUNTIME]
    if noisy:
        fails.append(f"{len(noisy)} noisy runtime records, e.g. {noisy[0]['name']}")
    per_thread = Counter(role_of_tid.get(e["thread_id"], "?") for e in runtime)

    # kernels: k_<role>(float*, int) joins a launch on <role>'s thread
    stream_of_role = defaultdict(set)
    kernel_ok = kernel_bad = 0
    for e in ev:
        if e["kind"] != "kernel":
            continue
        role = e["name"].split("(")[0][2:] if e["name"].startswith("k_") else None
        launch = api_by_corr.get(e["correlation_id"])
        if role is None or launch is None or launch["thread_id"] != tids.get(role):
            kernel_bad += 1
            if kernel_bad <= 3:
                fails.append(f"kernel {e['name']} corr {e['correlation_id']} launch {launch}")
        else:
            kernel_ok += 1
            stream_of_role[role].add((e["device_id"], e["stream_id"]))
        if not (t0 <= e["start_ns"] <= e["end_ns"] <= t1):
            fails.append(f"kernel time outside the run: {e['start_ns']}..{e['end_ns']}")
    expect_kernels = 40 * len(tids)
    if not expect_drops and kernel_ok != expect_kernels:
        fails.append(f"{kernel_ok} kernels joined, expected {expect_kernels}")

    # window format 2: the launch of every kernel; threads_cuda's are <<<256, 256>>>
    if w.get("window_version") != 2:
        fails.append(f"window_version {w.get('window_version')!r}, expected 2")
    kernels = [e for e in ev if e["kind"] == "kernel"]
    regs, queued, latency_ns = set(), 0, []
    for e in kernels:
        missing = [k for k in LAUNCH_KEYS if not isinstance(e.get(k), int)]
        if missing:
            fails.append(f"kernel {e['name']} lacks {missing}")
            continue
        if e["name"].startswith("k_") and (
                (e["grid_x"], e["grid_y"], e["grid_z"], e["block_x"], e["block_y"], e["block_z"]) !=
                (256, 1, 1, 256, 1, 1) or e["static_shared_memory"] or e["dynamic_shared_memory"]):
            fails.append(f"kernel {e['name']} launch {[e[k] for k in LAUNCH_KEYS[:9]]}")
        if not 1 <= e["registers_per_thread"] <= 255:
            fails.append(f"kernel {e['name']} registers {e['registers_per_thread']}")
        regs.add(e["registers_per_thread"])
        if "queued_ns" in e or "submitted_ns" in e:
            queued += 1
            q, sub = e.get("queued_ns"), e.get("submitted_ns")
            if q is None or sub is None or not q <= sub <= e["start_ns"]:
                fails.append(f"kernel {e['name']} queued {q} submitted {sub} start {e['start_ns']}")
            else:
                latency_ns.append(e["start_ns"] - q)
    if expect_queued and queued != len(kernels):
        fails.append(f"{queued} of {len(kernels)} kernels have queued/submitted times")
    if not expect_queued and queued:
        fails.append(f"{queued} kernels have queued times without --latency-timestamps")

    # Kineto's copy and set names
    names = Counter(e["name"] for e in ev if e["kind"] in ("gpu_memcpy", "gpu_memset"))
    want = {k: v * len(tids) for k, v in COPY_NAMES.items()}
    if not expect_drops and dict(names) != want:
        fails.append(f"copy/set names {dict(names)}, expected {want}")

    # cuda_sync: the device of the context (kernels say which device a context is on)
    dev_of_ctx = {e["context_id"]: e["device_id"] for e in kernels}
    syncs = [e for e in ev if e["kind"] == "cuda_sync"]
    sync_bad = [e for e in syncs if e.get("device_id") != dev_of_ctx.get(e["context_id"])]
    if sync_bad:
        fails.append(f"{len(sync_bad)} of {len(syncs)} cuda_sync without their context's device, "
                     f"e.g. {sync_bad[0]}")

    # device_properties: one per device named, Kineto's keys, the device's values
    used = sorted({e["device_id"] for e in ev if e["kind"] in ("kernel", "gpu_memcpy", "gpu_memset")})
    props = w.get("device_properties")
    truth = {}
    if not isinstance(props, list) or [p.get("id") for p in props] != used:
        fails.append(f"device_properties ids {props if not isinstance(props, list) else [p.get('id') for p in props]}"
                     f", devices used {used}")
    else:
        for p in props:
            if list(p.keys()) != DEVPROP_KEYS:
                fails.append(f"device_properties keys {list(p.keys())}")
            if not all(isinstance(p.get(k), int) for k in DEVPROP_KEYS if k != "name"):
                fails.append(f"device_properties values {p}")
            if p.get("warpSize") != 32 or not p.get("numSms", 0) > 0 or \
                    not 0 < p.get("reservedSharedMemPerBlock", 0) <= p.get("sharedMemPerBlock", 0) or \
                    not 0 < p.get("maxBlocksPerMultiProcessor", 0) <= 64:
                fails.append(f"device_properties not sane: {p}")
            truth = device_truth(p["id"])
            diff = {k: (p.get(k), v) for k, v in truth.items() if p.get(k) != v}
            if diff:
                fails.append(f"device {p['id']} properties differ from torch/nvidia-smi (ours, theirs): {diff}")

    # memcpy / memset: joined to a call of the thread whose kernels share the stream
    copy_ok = 0
    for e in ev:
        if e["kind"] not in ("gpu_memcpy", "gpu_memset"):
            continue
        call = api_by_corr.get(e["correlation_id"])
        role = role_of_tid.get(call["thread_id"]) if call else None
        if role is None or (e["device_id"], e["stream_id"]) not in stream_of_role[role]:
            fails.append(f"{e['kind']} corr {e['correlation_id']} not joined to its thread")
        else:
            copy_ok += 1
    if not expect_drops and copy_ok != 9 * len(tids):   # 8 copies + 1 memset per thread
        fails.append(f"{copy_ok} memcpy/memset joined, expected {9 * len(tids)}")

    # C API: CUSTOM1 user annotations and CUSTOM0 external ids on the worker threads
    ann = {int(k): v for k, v in w["user_annotations"].items()}
    ext_ok = ann_ok = 0
    for e in ev:
        if e["kind"] != "external_correlation":
            continue
        call = api_by_corr.get(e["correlation_id"])
        role = role_of_tid.get(call["thread_id"]) if call else None
        if e["external_kind"] == 4:
            if ann.get(e["external_id"]) == f"region_{role}":
                ann_ok += 1
            else:
                fails.append(f"user annotation {e['external_id']} ({ann.get(e['external_id'])}) on {role}")
        elif e["external_kind"] == 3:
            if role and role != "main" and e["external_id"] == 1000 + int(role[1:]) + 1:
                ext_ok += 1
            else:
                fails.append(f"external id {e['external_id']} on {role}")
    if api and not expect_drops and (ann_ok == 0 or ext_ok == 0):
        fails.append("C API annotations / external ids missing")

    # thread map: int32(pthread_self) -> gettid, entries left out only when the key looks like a tid
    tmap = w["thread_resource_map"].get(str(pid), {})
    map_ok = map_omitted = 0
    for role, pt in pthreads.items():
        key = ctypes.c_int32(pt & 0xFFFFFFFF).value
        if str(key) in tmap:
            if tmap[str(key)] == tids[role]:
                map_ok += 1
            else:
                fails.append(f"thread map {key} -> {tmap[str(key)]}, {role} is {tids[role]}")
        elif 0 < key <= 4194304:
            map_omitted += 1
        else:
            fails.append(f"thread {role} missing from the thread map")

    dropped = w.get("dropped_records", 0)
    if expect_drops and dropped == 0:
        fails.append("expected dropped records, none reported")
    if not expect_drops and dropped:
        fails.append(f"{dropped} records dropped")
    if not (t0 <= w["start_ns"] <= t1):
        fails.append("start_ns outside the run")

    # "source" (issue 9): this host and process, the span recording was on,
    # the rank when the environment had one
    src = w.get("source")
    if not isinstance(src, dict):
        fails.append("no \"source\" member")
    else:
        if src.get("pid") != pid:
            fails.append(f"source pid {src.get('pid')}, the program's is {pid}")
        if src.get("host") != socket.gethostname().replace("/", "_"):
            fails.append(f"source host {src.get('host')!r}")
        if src.get("start_ns") != w["start_ns"] or not src["start_ns"] <= src.get("end_ns", 0):
            fails.append(f"source span {src.get('start_ns')}..{src.get('end_ns')}")
        starts = [e["start_ns"] for e in runtime]
        if starts and not src["start_ns"] <= min(starts) <= max(starts) <= src.get("end_ns", 0):
            fails.append("runtime records outside the source span")
        env_rank = next((os.environ[v] for v in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK")
                         if os.environ.get(v, "").isdigit()), None)
        if (str(src["rank"]) if "rank" in src else None) != (str(int(env_rank)) if env_rank else None):
            fails.append(f"source rank {src.get('rank')}, the environment's {env_rank}")

    figures = {
        "window": win_path, "events": len(ev), "kinds": dict(kinds), "threads": len(tids),
        "runtime_per_thread": dict(per_thread), "runtime_on_wrong_tid": len(bad_tid),
        "kernels_joined_on_right_thread": kernel_ok, "kernels_bad": kernel_bad,
        "window_version": w.get("window_version"), "registers_per_thread": sorted(regs),
        "kernel_example": next((e for e in kernels if e["name"].startswith("k_")), None),
        "kernels_with_queued": queued,
        "queued_to_start_us_median": sorted(latency_ns)[len(latency_ns) // 2] / 1e3 if latency_ns else None,
        "copy_names": dict(names), "cuda_sync": len(syncs), "cuda_sync_with_device": len(syncs) - len(sync_bad),
        "sync_example": syncs[0] if syncs else None, "device_properties": props,
        "device_truth_compared": sorted(truth),
        "copies_joined": copy_ok, "user_annotation_links": ann_ok, "external_id_links": ext_ok,
        "thread_map_ok": map_ok, "thread_map_omitted": map_omitted, "dropped_records": dropped,
        "cuptirec": w.get("cuptirec"), "source": w.get("source"), "fails": fails[:10],
    }
    print(json.dumps(figures))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
