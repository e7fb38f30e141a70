#!/usr/bin/env python3
"""torchrun_rank.py - one rank of a torchrun job for the batch check (issue 28).

Usage: torchrun --nproc-per-node 2 torchrun_rank.py TRACEDIR INFODIR

Each rank joins a gloo process group (so that torch.profiler writes
"distributedInfo" with its rank), runs torch_workers.py's workload (the
main thread and two ThreadPoolExecutor workers doing CUDA work) under
torch.profiler(CPU), and exports its trace as a training script might,
TRACEDIR/rank{RANK}_{PID}.pt.trace.json: not tensorboard_trace_handler's
name, so cuptimerge-batch must pair it by what the files record.  Its
thread information goes to INFODIR/info_rank{RANK}.json, for
check_merged.py.
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_workers  # noqa: E402


def main():
    tracedir, infodir = sys.argv[1], sys.argv[2]
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo")
    torch.cuda.set_device(rank % torch.cuda.device_count())
    sys.argv = [sys.argv[0], "%s/rank%d_%d.pt.trace.json" % (tracedir, rank, os.getpid()),
                "%s/info_rank%d.json" % (infodir, rank), "cpu"]
    torch_workers.main()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
