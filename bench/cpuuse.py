#!/usr/bin/env python3
"""bench/cpuuse.py -- how many CPUs a command keeps busy, bin by bin.

usage: cpuuse.py [-b MS] [-i MS] -- COMMAND...

Runs COMMAND (its stderr and stdout go where this script's go) and, every
-i ms (4), reads the CPU time of each of its threads from
/proc/PID/task/*/schedstat (ns run, the scheduler's own count); then
prints, for each bin of -b ms (20) from the start, the CPUs busy on
average in it (the threads' ns of the bin over its length) and as many
'#', so that the phases of a run (-v's time lines, seconds from the
start) can be read against the machine's use.  Last, the run's CPU
seconds and its wall.  A thread that ends between two reads loses what it
ran since the last; the figures are what was read.  Linux only.
"""
import os
import subprocess
import sys
import time


def threads_ns(pid):
    """{tid: ns run} of PID's threads now ({} once it is gone)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def main(argv):
    bin_ms, every_ms = 20.0, 4.0
    while argv and argv[0] != "--":
        opt = argv.pop(0)
        if opt == "-b":
            bin_ms = float(argv.pop(0))
        elif opt == "-i":
            every_ms = float(argv.pop(0))
        else:
            sys.exit(f"cpuuse.py: unknown option {opt}")
    if not argv or len(argv) < 2:
        sys.exit("usage: cpuuse.py [-b MS] [-i MS] -- COMMAND...")
    cmd = argv[1:]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd)
    last = {}
    bins = {}
    total = 0
    while p.poll() is None:
        now = threads_ns(p.pid)
        t = time.monotonic() - t0
        d = 0
        for tid, ns in now.items():
            d += ns - last.get(tid, 0)
        last.update(now)
        total += d
        b = int(t * 1000 / bin_ms)
        bins[b] = bins.get(b, 0) + d
        time.sleep(every_ms / 1000)
    wall = time.monotonic() - t0
    for b in range(max(bins) + 1 if bins else 0):
        cpus = bins.get(b, 0) / (bin_ms * 1e6)
        print(f"  {b * bin_ms / 1000:6.2f} s {cpus:5.1f} {'#' * int(round(cpus))}")
    print(f"  CPU {total / 1e9:.2f} s over {wall:.2f} s wall (rc {p.returncode})")
    return p.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
