#!/usr/bin/env python3
"""check_window.py - check a cuptirec window recorded from threads_cuda.

Usage: check_window.py WINDOW PROGRAM_STDOUT [--expect-drops]

Checks that the window is complete and well-formed (members in streaming
order), that every CUDA runtime record carries the gettid of the thread that
issued it (kernels k_<role> must join a launch by correlation id on <role>'s
gettid), that memcpy/memset records join their thread's launches, that the
user annotations and external ids of the C API landed on the right threads,
that the noisy calls are filtered, and that the thread map agrees with what
the threads printed, and that "source" names this host, process and rank.
Prints one JSON line of figures; exits 1 on a failure.
"""
import ctypes
import gzip
import json
import os
import socket
import sys
from collections import Counter, defaultdict

NOISY_RUNTIME = {10, 16, 17, 133, 134, 136}  # GetLastError SetDevice GetDevice EventCreate(WithFlags) EventDestroy


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    win_path, out_path = sys.argv[1], sys.argv[2]
    expect_drops = "--expect-drops" in sys.argv
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
        "copies_joined": copy_ok, "user_annotation_links": ann_ok, "external_id_links": ext_ok,
        "thread_map_ok": map_ok, "thread_map_omitted": map_omitted, "dropped_records": dropped,
        "cuptirec": w.get("cuptirec"), "source": w.get("source"), "fails": fails[:10],
    }
    print(json.dumps(figures))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
