#!/usr/bin/env python3
"""torch_workers.py - a torch workload with CUDA work on worker threads (after seed 000).

Usage: torch_workers.py TRACE INFO [cpu|cpu,cuda]

The main thread runs profiled ops inside record_function("step_main"); a
ThreadPoolExecutor with two workers ("worker_0", "worker_1") runs matmuls and
elementwise ops on their own CUDA streams.  torch.profiler records the given
activities (default cpu) and exports a Chrome trace to TRACE; INFO gets the
pid and, per thread, gettid, pthread_self (threading.get_ident) and name.
"""
import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def thread_info():
    return {"gettid": threading.get_native_id(), "pthread": threading.get_ident(),
            "name": threading.current_thread().name}


def worker_task(seed):
    info = thread_info()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = torch.randn(256, 256, device="cuda", generator=g)
        for _ in range(5):
            x = torch.relu(x @ x) * 0.5
        y = x.cpu()
    stream.synchronize()
    info["checksum"] = float(y.sum())
    return info


def main():
    trace, info_path = sys.argv[1], sys.argv[2]
    acts = sys.argv[3] if len(sys.argv) > 3 else "cpu"
    activities = [ProfilerActivity.CPU]
    if "cuda" in acts:
        activities.append(ProfilerActivity.CUDA)
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    infos = {"pid": os.getpid(), "main": thread_info(), "workers": []}
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="worker") as pool:
        with profile(activities=activities) as prof:
            with record_function("step_main"):
                a = torch.randn(512, 512, device="cuda")
                for _ in range(5):
                    a = torch.tanh(a @ a)
                futs = [pool.submit(worker_task, i) for i in range(4)]
                b = a.sum().item()
                for f in futs:
                    infos["workers"].append(f.result())
                torch.cuda.synchronize()
        prof.export_chrome_trace(trace)
    infos["main_checksum"] = b
    with open(info_path, "w") as f:
        json.dump(infos, f)
    print(f"torch {torch.__version__} pid {os.getpid()} main {infos['main']['gettid']} "
          f"workers {sorted({w['gettid'] for w in infos['workers']})}")


if __name__ == "__main__":
    main()
