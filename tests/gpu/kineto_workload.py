#!/usr/bin/env python3
"""kineto_workload.py - one torch workload for the Kineto-parity comparison (issue 10).

Usage: kineto_workload.py TRACE INFO --profile full|cpu [--steps N]

The workload, inside record_function("step_main"), on the main thread:
matmuls, cuDNN convolutions, copies host->device and device->host from and
to pageable and pinned memory, a device->device copy, memsets (torch.zeros,
zero_() and a cudaMemsetAsync through the process's own libcudart, since
ATen may fill with a kernel rather than a memset), an explicit
torch.cuda.synchronize, an event recorded on one stream, waited on by
another (wait_event) and synchronized on, a stream synchronize, a CUDA graph
(captured before profiling) replayed three times, and two ThreadPoolExecutor
workers doing matmuls, convolutions and copies on their own streams.  Two
user annotations nest inside step_main (issue 26: Kineto's gpu_user_annotation
spans belong to the innermost one): "copies" around the copies and memsets,
"side_stream" around the work on the second stream.

Everything runs once unprofiled first, so that lazy initialisation (cuBLAS
and cuDNN handles per thread, the allocator's pool, the graph's capture)
stays out of the profiled step and the two runs of the comparison (stock
Kineto; CPU-only profiler + cuptirec) see the same kernels.

--profile full: torch.profiler with activities [CPU, CUDA], record_shapes,
                and _ExperimentalConfig(enable_cuda_sync_events=True): the
                stock Kineto trace.
--profile cpu:  activities [CPU] only, record_shapes: the CPU trace that
                cuptirec's window is merged into.

TRACE receives the Chrome trace.  INFO receives the thread map: the pid and,
per thread, gettid (threading.get_native_id), pthread (threading.get_ident),
ident_i32 (the low 32 bits of pthread_self as a signed int: the row on which
stock Kineto puts a worker's CUDA runtime events) and name; and what ran
(memset_via_cudart, graph replays, checksums).
"""
import argparse
import ctypes
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

GRAPH_REPLAYS = 3
WORKERS = 2
TASKS = 4


def thread_info():
    """This thread's ids: gettid, pthread_self, its int32 view, name."""
    ident = threading.get_ident()
    i32 = ident & 0xFFFFFFFF
    if i32 >= 1 << 31:
        i32 -= 1 << 32
    return {"gettid": threading.get_native_id(), "pthread": ident, "ident_i32": i32,
            "name": threading.current_thread().name}


def find_cudart():
    """The libcudart already mapped into this process (torch's), or None.

    Loading the same file again by path returns the mapped copy, so the
    memset goes through the runtime that torch uses, on its primary context.
    """
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "libcudart.so" in os.path.basename(path):
                    return ctypes.CDLL(path)
    except OSError:
        pass
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


CUDART = None


def cudart_memset(t):
    """cudaMemsetAsync(t, 0, bytes, current stream); True when it ran."""
    if CUDART is None:
        return False
    fn = CUDART.cudaMemsetAsync
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
    rc = fn(ctypes.c_void_p(t.data_ptr()), 0, t.numel() * t.element_size(),
            ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
    return rc == 0


_local = threading.local()


def worker_task(seed):
    """A worker's CUDA work on its own stream (one stream per pool thread)."""
    info = thread_info()
    if not hasattr(_local, "stream"):
        _local.stream = torch.cuda.Stream()
    stream = _local.stream
    with torch.cuda.stream(stream):
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = torch.randn(384, 384, device="cuda", generator=g)
        for _ in range(3):
            x = torch.relu(x @ x) * 0.01
        img = torch.randn(4, 8, 32, 32, device="cuda", generator=g)
        wt = torch.randn(16, 8, 3, 3, device="cuda", generator=g)
        y = F.conv2d(img, wt, padding=1)
        z = torch.zeros(1024, device="cuda")
        host = x.cpu()                      # D2H pageable, synchronous
    stream.synchronize()
    info["checksum"] = float(host.sum()) + float(y.sum().item()) + float(z.sum().item())
    return info


class Graph:
    """A captured CUDA graph: a matmul, a relu and an add on static tensors."""

    def __init__(self):
        self.inp = torch.randn(256, 256, device="cuda")
        self.w = torch.randn(256, 256, device="cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):          # warm-up outside capture, as the docs ask
            for _ in range(2):
                self.out = torch.relu(self.inp @ self.w) + 1.0
        torch.cuda.current_stream().wait_stream(side)
        self.g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.g):
            self.out = torch.relu(self.inp @ self.w) + 1.0
        torch.cuda.synchronize()

    def replay(self, n):
        for _ in range(n):
            self.inp.mul_(0.5)
            self.g.replay()
        return float(self.out.sum().item())


def step(pool, graph, res):
    """One step of the workload; fills res with what ran."""
    dev = "cuda"
    s2 = torch.cuda.Stream()
    # matmuls
    a = torch.randn(512, 512, device=dev)
    for _ in range(3):
        a = torch.tanh(a @ a)
    # workers start while the main thread goes on
    futs = [pool.submit(worker_task, i) for i in range(TASKS)]
    # convolutions (cuDNN)
    img = torch.randn(8, 16, 64, 64, device=dev)
    w1 = torch.randn(32, 16, 3, 3, device=dev)
    w2 = torch.randn(32, 32, 1, 1, device=dev)
    c = F.conv2d(F.relu(F.conv2d(img, w1, padding=1)), w2)
    with record_function("copies"):
        # copies: H2D pageable and pinned, D2H pageable and pinned, D2D
        host_pg = torch.randn(1 << 20)
        host_pin = torch.randn(1 << 20).pin_memory()
        d1 = host_pg.to(dev)
        d2 = host_pin.to(dev, non_blocking=True)
        d3 = d1.clone()
        back_pg = d2.cpu()
        back_pin = torch.empty(1 << 20, pin_memory=True)
        back_pin.copy_(d3, non_blocking=True)
        # memsets
        z1 = torch.zeros(1 << 20, device=dev)
        d3.zero_()
        buf = torch.empty(1 << 20, device=dev)
        res["memset_via_cudart"] = cudart_memset(buf)
    # event record on the current stream, wait_event on s2, event synchronize
    ev = torch.cuda.Event()
    ev.record()
    s2.wait_event(ev)
    with record_function("side_stream"), torch.cuda.stream(s2):
        e = c.sum() + z1.sum() + buf.sum()
    ev2 = torch.cuda.Event()
    ev2.record(s2)
    ev2.synchronize()
    torch.cuda.current_stream().wait_stream(s2)
    # the CUDA graph
    res["graph_sum"] = graph.replay(GRAPH_REPLAYS)
    # stream synchronize and device synchronize
    s2.synchronize()
    res["main_checksum"] = float(a.sum().item()) + float(e.item()) + \
        float(back_pg.sum()) + float(back_pin[:16].sum())
    res["workers"] = [f.result() for f in futs]
    torch.cuda.synchronize()


def main():
    global CUDART
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("info")
    ap.add_argument("--profile", choices=["full", "cpu"], required=True)
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    CUDART = find_cudart()
    infos = {"pid": os.getpid(), "main": thread_info(), "profile": args.profile,
             "torch": torch.__version__, "graph_replays": GRAPH_REPLAYS}
    graph = Graph()
    activities = [ProfilerActivity.CPU]
    kw = {"record_shapes": True}
    if args.profile == "full":
        activities.append(ProfilerActivity.CUDA)
        kw["experimental_config"] = torch._C._profiler._ExperimentalConfig(
            enable_cuda_sync_events=True)
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="worker") as pool:
        warm = {}
        with record_function("warmup"):
            step(pool, graph, warm)         # unprofiled: lazy init happens here
        res = {}
        with profile(activities=activities, **kw) as prof:
            with record_function("step_main"):
                step(pool, graph, res)
        prof.export_chrome_trace(args.trace)
    ws = {}
    for w in res["workers"]:
        ws.setdefault(w["gettid"], {k: w[k] for k in ("gettid", "pthread", "ident_i32", "name")})
    infos["workers"] = sorted(ws.values(), key=lambda w: w["name"])
    infos["memset_via_cudart"] = res["memset_via_cudart"]
    infos["graph_sum"] = res["graph_sum"]
    infos["main_checksum"] = res["main_checksum"]
    with open(args.info, "w") as f:
        json.dump(infos, f, indent=1)
    print(f"torch {torch.__version__} pid {os.getpid()} main {infos['main']['gettid']} "
          f"workers {[w['gettid'] for w in infos['workers']]} "
          f"memset_via_cudart {res['memset_via_cudart']}")


if __name__ == "__main__":
    main()
