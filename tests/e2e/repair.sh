#!/bin/sh
# repair.sh - thread repair on the real H200 trace (tests/fixtures/threads_full.json):
# every cuda_runtime event lands on a native id of the thread map, nothing is
# lost or duplicated, flows still pair; the same with a merge.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to check the repaired traces"

FULL=$FIX/threads_full.json
MAP=$FIX/thread_map.json

tcase "repair: reported"
$CUPTIMERGE -t "$MAP" "$FULL" >"$tmp/rep.json" 2>"$tmp/err" || fail "repair: exit $?: $(cat "$tmp/err")"
grep -q "thread repair: moved [1-9][0-9]* events of 2 threads" "$tmp/err" || fail "repair: no report: $(cat "$tmp/err")"

tcase "repair: runtime rows on native ids, nothing lost, flows kept, rows named"
rc=0
python3 - "$FULL" "$tmp/rep.json" "$MAP" >"$tmp/check" 2>&1 <<'PY' || rc=$?
import collections, json, sys
before = json.load(open(sys.argv[1]))["traceEvents"]
after = json.load(open(sys.argv[2]))["traceEvents"]
tmap = json.load(open(sys.argv[3]))
native = {t["native_id"] for t in tmap["threads"].values()}
ok = True
def say(*a):
    global ok
    ok = False
    print(*a)
runtime = [e for e in after if e.get("cat") == "cuda_runtime"]
off = [e for e in runtime if e["tid"] not in native]
if not runtime or off:
    say("cuda_runtime events off the native ids:", len(off), off[:2])
# nothing lost or duplicated: counts per (ph, cat) equal, except the added names
cb = collections.Counter((e.get("ph"), e.get("cat")) for e in before)
ca = collections.Counter((e.get("ph"), e.get("cat")) for e in after)
for k in set(cb) | set(ca):
    if k != ("M", None) and cb[k] != ca[k]:
        say("count of", k, "was", cb[k], "is", ca[k])
# the same events but for tid: compare with tid left out
strip = lambda e: json.dumps({k: v for k, v in e.items() if k != "tid"}, sort_keys=True)
if collections.Counter(map(strip, before)) - collections.Counter(map(strip, after)):
    say("some events changed beyond their tid")
# flows: every s that had its f still has it, on the moved rows too
def pairs(ev):
    s = {e["id"] for e in ev if e.get("ph") == "s"}
    f = {e["id"] for e in ev if e.get("ph") == "f"}
    return s & f
if pairs(before) != pairs(after) or not pairs(after):
    say("flow pairs changed")
# the rows that gained events are named like Kineto's
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in after if e.get("ph") == "M" and e.get("name") == "thread_name"}
for tid in {e["tid"] for e in runtime}:
    if (470, tid) not in names:
        say("row", tid, "has no thread_name")
if names.get((470, 562)) != "thread 562 (worker_1)":
    say("row 562 is named", names.get((470, 562)))
sys.exit(0 if ok else 1)
PY
[ $rc -eq 0 ] || fail "repair: checks on the repaired trace: $(cat "$tmp/check")"

# one pass: a pipe and tiny reads give the same bytes; -q silences the report
tcase "repair: the same bytes from a gzip pipe with 3-byte reads; -q is quiet"
gzip -c "$FULL" | CUPTIMERGE_BUFSIZE=3 $CUPTIMERGE -q -t "$MAP" >"$tmp/pipe.json" 2>"$tmp/err" ||
	fail "repair from a gzip pipe: exit $?"
cmp -s "$tmp/pipe.json" "$tmp/rep.json" || fail "repair from a pipe differs"
[ ! -s "$tmp/err" ] || fail "-q is not quiet: $(cat "$tmp/err")"

# the window's own thread_resource_map serves as a map too
tcase "repair: the window's thread_resource_map as the map"
$CUPTIMERGE -q -t "$FIX/threads_window.json" "$FULL" >"$tmp/rep2.json" || fail "window as map: exit $?"
python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
bad = [e for e in ev if e.get("cat") == "cuda_runtime" and e["tid"] not in (470, 562, 611)]
sys.exit(1 if bad else 0)' "$tmp/rep2.json" || fail "window as map: runtime rows not moved"

# merge + repair: a window without thread_resource_map plus the Python map gives
# what the reference gives for the window that has the map
tcase "merge + repair equals the reference"
$CUPTIMERGE -q --trace-name threads_merged.ref.json -w "$FIX/threads_window_nomap.json" -t "$MAP" \
	"$FIX/threads_base.json" >"$tmp/merged.json" || fail "merge with -t: exit $?"
$JSONCMP "$FIX/threads_merged.ref.json" "$tmp/merged.json" || fail "merge with -t differs from the reference"

# an ambiguous id is left alone with a warning
tcase "repair: an ambiguous id is left alone with a warning"
printf '{"thread_map_version": 1, "processes": {"470": [{"tid": 562, "pthread": 140110775424704}, {"tid": 563, "pthread": 138538817394368}]}}' >"$tmp/amb.json"
$CUPTIMERGE -t "$tmp/amb.json" "$FULL" >"$tmp/amb.out" 2>"$tmp/err" || fail "ambiguous map: exit $?"
grep -q "pid 470 tid 352294592 was the id of several threads" "$tmp/err" || fail "no ambiguity warning: $(cat "$tmp/err")"
finish
