#!/bin/sh
# tile.sh - bench/tile-pair (N copies of a gen_trace pair as one pair, the
# scale benchmarks' inputs) makes pairs that merge as N times the pair: no
# warning; the reference merge agrees; 3 times the GPU events and flows of the
# pair's own merge; --steps over a step of the third copy gives the first
# copy's step, moved; the plan's shifts as worked out by hand; one copy is the
# input byte for byte; the --part pieces concatenate to the whole; FIFOs fed by
# one process; inputs it does not understand refused with one line.
# Fixtures: tile_cpu.json + tile_window.json (gen_trace --seed 1 --ops 60
# --pretty --devices 2: steps 1-4) and gen11_* (compact, --edge-cases).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to count the merged events"
TILE=${TILE_PAIR:-${CUPTIMERGE%/src/cuptimerge}/bench/tile-pair}
[ -x "$TILE" ] || { echo "Bail out! $TILE is not built (make check builds it)"; exit 1; }
shared=${SHARED:-$srcdir/../shared}
CPU=$FIX/tile_cpu.json
WIN=$FIX/tile_window.json

# tile N CPU WIN OUTPREFIX: tile-pair -n N, which must succeed silently
tile() {
	expect_exit 0 '' "$TILE" -n "$1" --cpu-out "$4c.json" --window-out "$4w.json" "$2" "$3"
}
# merge CPU WIN OUT [ARGS...]: cuptimerge, which must succeed without a word
merge() {
	m_cpu=$1 m_win=$2 m_out=$3
	shift 3
	expect_exit 0 '' $CUPTIMERGE --trace-name T --now 1795974776 "$@" -w "$m_win" -o "$m_out" "$m_cpu"
}

tcase "the plan of the fixture pair: the shifts worked out by hand"
# the pair spans 1,251.072 us (first event to last end, both files): S = 2,000 us;
# largest External id 83 -> 100, correlation id 99 -> 100, step 4 -> 10
capture "$TILE" -n 3 --plan "$CPU" "$WIN"
[ "$got" -eq 0 ] || fail "exit $got: $(cat "$tmp/err")"
grep -q '^copies=3 shift_us=2000 external=100 correlation=100 step=10 ' "$tmp/out" || fail "plan: $(cat "$tmp/out")"

tcase "one copy is the input, byte for byte"
tile 1 "$CPU" "$WIN" "$tmp/one"
cmp -s "$CPU" "$tmp/onec.json" || fail "the CPU trace differs"
cmp -s "$WIN" "$tmp/onew.json" || fail "the window differs"

tcase "3 copies merge without a word; 3 times the GPU events and flows of one"
tile 3 "$CPU" "$WIN" "$tmp/t3"
merge "$CPU" "$WIN" "$tmp/m1.json"
merge "$tmp/t3c.json" "$tmp/t3w.json" "$tmp/m3.json"
python3 - "$tmp/m1.json" "$tmp/m3.json" >"$tmp/counts" 2>&1 <<'PY' || fail "$(cat "$tmp/counts")"
import collections, json, sys
def count(path):
    c = collections.Counter()
    for e in json.load(open(path))["traceEvents"]:
        cat = e.get("cat")
        if cat == "ac2g":  # each flow's own id (the correlation id): unique a copy
            c[("id", e["ph"], e["id"])] = 1
        if cat in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                   "gpu_user_annotation", "ac2g", "cpu_op", "user_annotation"):
            c[(e["ph"], cat)] += 1
    return c
one, three = count(sys.argv[1]), count(sys.argv[2])
for c in (one, three):
    for ph in ("s", "f"):
        c[("distinct flow ids", ph)] = sum(1 for k in c if k[:2] == ("id", ph))
    for k in [k for k in c if k[0] == "id"]:
        del c[k]
for k in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "gpu_user_annotation", "ac2g"):
    if not any(key[1] == k for key in one):
        sys.exit("no %s in the pair's merge" % k)
bad = ["%s: %d, 3 x %d" % (k, three[k], one[k]) for k in one if three[k] != 3 * one[k]]
if bad or set(three) != set(one):
    sys.exit("counts: " + "; ".join(bad) + " (%s)" % sorted(set(three) ^ set(one)))
PY

tcase "the reference merge of the 3 copies equals cuptimerge's (tracecmp)"
if [ -x "$shared/oracle/refmerge" ]; then
	"$shared/oracle/refmerge" "$tmp/t3c.json" "$tmp/t3w.json" "$tmp/r3.json" --trace-name T --now-s 1795974776 \
		>"$tmp/ref.err" 2>&1 || fail "refmerge: $(tail -1 "$tmp/ref.err")"
	"$shared/oracle/tracecmp" "$tmp/r3.json" "$tmp/m3.json" >"$tmp/cmp" || fail "$(head -3 "$tmp/cmp")"
else
	skip "refmerge" "no $shared/oracle"
fi

tcase "--steps=22 (copy 2's step 2) gives copy 0's step 2, moved by 2 x 2,000 us"
merge "$CPU" "$WIN" "$tmp/s1.json" --steps=2
merge "$tmp/t3c.json" "$tmp/t3w.json" "$tmp/s3.json" --steps=22
python3 - "$tmp/s1.json" "$tmp/s3.json" >"$tmp/steps" 2>&1 <<'PY' || fail "$(cat "$tmp/steps")"
import json, re, sys
from decimal import Decimal
def rows(path, shift):
    out = []
    for e in json.load(open(path))["traceEvents"]:
        if e.get("ph") == "M" or e.get("cat") == "Trace" or "ts" not in e:
            continue
        name = re.sub(r"^ProfilerStep#2(\d)$", r"ProfilerStep#\1", str(e.get("name")))
        ts = Decimal(repr(e["ts"])) - shift
        out.append((e["ph"], str(e.get("cat")), name, ts.quantize(Decimal("0.001")), str(e.get("dur"))))
    return sorted(out)
a, b = rows(sys.argv[1], 0), rows(sys.argv[2], 4000)
if not any(r[2] == "ProfilerStep#2" for r in a) or not any(r[1] == "kernel" for r in a):
    sys.exit("the step-2 cut of the pair has no step or no kernel")
if a != b:
    sys.exit("%d against %d rows; first difference: %s" % (len(a), len(b),
             next(((x, y) for x, y in zip(a, b) if x != y), "length")))
PY

tcase "compact --edge-cases pair (gen11): 3 copies merge alike in cuptimerge and the reference"
tile 3 "$FIX/gen11_cpu.json" "$FIX/gen11_window.json" "$tmp/e3"
merge "$tmp/e3c.json" "$tmp/e3w.json" "$tmp/me.json"
if [ -x "$shared/oracle/refmerge" ]; then
	"$shared/oracle/refmerge" "$tmp/e3c.json" "$tmp/e3w.json" "$tmp/re.json" --trace-name T --now-s 1795974776 \
		>"$tmp/ref.err" 2>&1 || fail "refmerge: $(tail -1 "$tmp/ref.err")"
	"$shared/oracle/tracecmp" "$tmp/re.json" "$tmp/me.json" >"$tmp/cmp" || fail "$(head -3 "$tmp/cmp")"
fi

tcase "--part 1/3, 2/3, 3/3 concatenate to the whole output (5 copies)"
tile 5 "$CPU" "$WIN" "$tmp/t5"
for i in 1 2 3; do
	expect_exit 0 '' "$TILE" -n 5 --part $i/3 --cpu-out "$tmp/p$i.c" --window-out "$tmp/p$i.w" "$CPU" "$WIN"
done
cat "$tmp/p1.c" "$tmp/p2.c" "$tmp/p3.c" | cmp -s - "$tmp/t5c.json" || fail "CPU trace parts"
cat "$tmp/p1.w" "$tmp/p2.w" "$tmp/p3.w" | cmp -s - "$tmp/t5w.json" || fail "window parts"

tcase "FIFOs fed by one tile-pair, and by two: cuptimerge's output the same bytes as from files"
if mkfifo "$tmp/fc" "$tmp/fw" 2>/dev/null; then
	"$TILE" -n 3 --cpu-out "$tmp/fc" --window-out "$tmp/fw" "$CPU" "$WIN" 2>"$tmp/tile.err" &
	tpid=$!
	$CUPTIMERGE --trace-name T --now 1795974776 -w "$tmp/fw" -o "$tmp/mf.json" "$tmp/fc" 2>"$tmp/m.err" ||
		fail "cuptimerge: $(cat "$tmp/m.err")"
	wait $tpid || fail "tile-pair: exit $?: $(cat "$tmp/tile.err")"
	cmp -s "$tmp/m3.json" "$tmp/mf.json" || fail "other bytes from the FIFOs"
	# two processes, one output each: the same plan from the same two inputs
	"$TILE" -n 3 --window-out "$tmp/fw" "$CPU" "$WIN" 2>"$tmp/tile.err" &
	wpid=$!
	"$TILE" -n 3 --cpu-out - "$CPU" "$WIN" 2>"$tmp/tile2.err" |
		$CUPTIMERGE --trace-name T --now 1795974776 -w "$tmp/fw" -o "$tmp/mp.json" - 2>"$tmp/m.err" ||
		fail "cuptimerge from two processes: $(cat "$tmp/m.err" "$tmp/tile2.err")"
	wait $wpid || fail "tile-pair --window-out: exit $?: $(cat "$tmp/tile.err")"
	cmp -s "$tmp/m3.json" "$tmp/mp.json" || fail "other bytes from two processes"
else
	skip "FIFOs" "mkfifo failed"
fi

tcase "inputs it does not understand: one line, exit 1; usage: exit 2"
gzip -c "$CPU" >"$tmp/c.json.gz"
expect_exit 1 '^tile-pair: .*c\.json\.gz:0: gzip input' "$TILE" --plan "$tmp/c.json.gz" "$WIN"
sed 's/"baseTimeNanoseconds"/"baseTime"/' "$CPU" >"$tmp/nobase.json"
expect_exit 1 '^tile-pair: .*nobase\.json: no baseTimeNanoseconds' "$TILE" --plan "$tmp/nobase.json" "$WIN"
sed '0,/"ts": 5/s/"ts": 5/"ts": -5/' "$CPU" >"$tmp/neg.json"
expect_exit 1 '^tile-pair: .*neg\.json:[0-9]+: a time that is not "us\.nnn" text' "$TILE" --plan "$tmp/neg.json" "$WIN"
head -c 3000 "$WIN" >"$tmp/cut.json"
expect_exit 1 '^tile-pair: .*cut\.json:[0-9]+: ' "$TILE" --plan "$CPU" "$tmp/cut.json"
expect_exit 2 '^tile-pair: -n needs a count' "$TILE" -n 0 --plan "$CPU" "$WIN"
expect_exit 3 '^tile-pair: /dev/full: write error' "$TILE" --cpu-out /dev/full "$CPU" "$WIN"
finish
