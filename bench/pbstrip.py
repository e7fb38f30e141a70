#!/usr/bin/env python3
# bench/pbstrip.py IN OUT MODE -- a .pftrace (perfetto.protos.Trace) written again with MODE taken out,
# to tell what of it Perfetto's trace processor spends its load on (bench/tpload.sh; BENCHMARKS.md
# "load32"): "annot" every TrackEvent's debug_annotations (field 4, the args), "flows" every packet
# whose TrackEvent has a legacy_event (field 6: the flows' packets), "both".  Field numbers are
# perfetto_trace.proto's: Trace.packet 1, TracePacket.track_event 11.  A slow walker (about 15 s
# for 45 MB), for measuring, never for output anyone keeps.
import sys
def varint(b, i):
    r = 0; s = 0
    while True:
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def enc(v):
    out = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        if v: out.append(c | 0x80)
        else: out.append(c); return bytes(out)
def fields(b, i, end):
    while i < end:
        s = i
        k, i = varint(b, i); f, w = k >> 3, k & 7
        if w == 0: _, i = varint(b, i); yield f, s, i, None, None
        elif w == 2:
            n, j = varint(b, i); yield f, s, j + n, j, j + n; i = j + n
        elif w == 1: i += 8; yield f, s, i, None, None
        elif w == 5: i += 4; yield f, s, i, None, None
if len(sys.argv) != 4 or sys.argv[3] not in ('annot', 'flows', 'both'):
    sys.exit('usage: pbstrip.py IN OUT annot|flows|both')
b = open(sys.argv[1], 'rb').read(); mode = sys.argv[3]
out = bytearray()
for f, s, e, a, ae in fields(b, 0, len(b)):
    if f != 1: out += b[s:e]; continue
    pkt = bytearray(); drop = False
    for pf, ps, pe, pa, pae in fields(b, a, ae):
        if pf == 11:
            te = bytearray()
            for tf, ts, tend, ta, tae in fields(b, pa, pae):
                if tf == 6 and mode in ('flows', 'both'): drop = True
                if tf == 4 and mode in ('annot', 'both'): continue
                te += b[ts:tend]
            pkt += enc((11 << 3) | 2) + enc(len(te)) + te
        else:
            pkt += b[ps:pe]
    if drop: continue
    out += enc((1 << 3) | 2) + enc(len(pkt)) + pkt
open(sys.argv[2], 'wb').write(out)
