#!/usr/bin/env python3
# bench/exp/tlsum.py TIMELINE [BIN_MS] -- sums of a timeline22 experiment's marks (CUPTIMERGE_TIMELINE,
# bench/exp/timeline22.diff): per kind, count, wall and CPU; then the window phase in bins: how
# many threads of each kind were busy (wall) and running (CPU) on average, the sink's wait for room.
# Kinds: R render piece (.pftrace), J render block (JSON), K the render's in-order sink call,
# S the sink's wait for room in the sequential part's queue, A the sequential part's batch,
# B a transcoder worker's batch, N a spans' piece, W a batch's packets written (a passer's writer),
# X bytes passed on (the passer), E a piece's lanes put (and placed up to it), I a pool's idle work
# (the lanes placed), P a phase change (id: 0 text before, 1 inserted, 2 text after).
import sys
ev = []
for line in open(sys.argv[1]):
    k, th, t0, t1, c, i = line.split()
    ev.append((k, int(th), float(t0), float(t1), float(c), int(i)))
binw = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.02
if not ev:
    sys.exit("no marks")
T0 = min(e[2] for e in ev)
print("kind  count  wall s  cpu s  threads  p50 ms  p90 ms  max ms")
for k in sorted(set(e[0] for e in ev)):
    xs = [e for e in ev if e[0] == k]
    d = sorted(e[3] - e[2] for e in xs)
    print("%-4s %6d %7.3f %6.3f %8d %7.2f %7.2f %7.2f" % (k, len(xs), sum(d), sum(e[4] for e in xs),
          len(set(e[1] for e in xs)), d[len(d) // 2] * 1e3, d[int(len(d) * 0.9)] * 1e3, d[-1] * 1e3))
ph = {e[5]: e[2] - T0 for e in ev if e[0] == 'P'}
lo = min(e[2] for e in ev if e[0] in 'RJB') - T0
hi = max(e[3] for e in ev) - T0
print("phases (s from the first mark): %s; marks %.3f-%.3f" % (
    ", ".join("%d at %.3f" % (k, v) for k, v in sorted(ph.items())), lo, hi))
kinds = "RJBNEIKSAWX"
nb = int((hi - lo) / binw) + 1
busy = {k: [0.0] * nb for k in kinds}
run = {k: [0.0] * nb for k in kinds}
for k, th, t0, t1, c, i in ev:
    if k not in kinds:
        continue
    a, b = t0 - T0 - lo, t1 - T0 - lo
    w = b - a
    j = int(a / binw)
    while j < nb and j * binw < b:
        ov = min(b, (j + 1) * binw) - max(a, j * binw)
        if ov > 0:
            busy[k][j] += ov / binw
            if w > 0:
                run[k][j] += c * ov / w / binw
        j += 1
print("bin from  " + "  ".join("%-9s" % (k + " busy/run") for k in kinds))
for j in range(nb):
    print("%7.3f  " % (lo + j * binw) + "  ".join("%4.1f/%4.1f" % (busy[k][j], run[k][j]) for k in kinds))

# the window phase's start: the first pieces' render, the first sink calls, the first batches in order
if 1 in ph:
    p1 = ph[1]
    print("window phase start at %.3f: pieces 0-15 rendered (ms from it: start-end, cpu)" % p1)
    rs = sorted((e for e in ev if e[0] == 'R'), key=lambda e: e[5])[:16]
    print("  " + "; ".join("%d: %.1f-%.1f %.1f" % (e[5], (e[2] - T0 - p1) * 1e3, (e[3] - T0 - p1) * 1e3, e[4] * 1e3) for e in rs))
    for k in "KSA":
        xs = sorted((e for e in ev if e[0] == k and e[2] - T0 >= p1 - 0.001), key=lambda e: e[2])[:8]
        print("  first %s: " % k + "; ".join("%.1f-%.1f" % ((e[2] - T0 - p1) * 1e3, (e[3] - T0 - p1) * 1e3) for e in xs))
    a = sorted((e for e in ev if e[0] == 'A' and e[2] - T0 >= p1), key=lambda e: e[2])
    gaps = sorted(a[i + 1][2] - a[i][3] for i in range(len(a) - 1))
    if gaps:
        print("  gaps between batches in order from then: %d, sum %.3f s, p50 %.3f ms, p90 %.3f ms, over 1 ms %d (sum %.3f s)" % (
            len(gaps), sum(gaps), gaps[len(gaps) // 2] * 1e3, gaps[int(len(gaps) * .9)] * 1e3,
            sum(1 for g in gaps if g > 1e-3), sum(g for g in gaps if g > 1e-3)))
    rend = max((e[3] for e in ev if e[0] == 'R'), default=0) - T0
    print("  last piece rendered at %.3f; spans' pieces %.3f-%.3f; last in order %.3f; last passed on %.3f" % (
        rend, min((e[2] for e in ev if e[0] == 'N'), default=T0) - T0, max((e[3] for e in ev if e[0] == 'N'), default=T0) - T0,
        max((e[3] for e in ev if e[0] == 'A'), default=T0) - T0, max((e[3] for e in ev if e[0] == 'X'), default=T0) - T0))
