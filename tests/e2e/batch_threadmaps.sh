#!/bin/sh
# batch_threadmaps.sh - cuptimerge-batch pairing torch traces with thread maps
# from directories (issue 9): a repair-only batch of six ranks on three hosts
# (the same pids on each), paired by the maps' "source" (host, pid, rank, time
# span); one map holding two processes, which repairs both their traces; a
# missing map; a data loader worker's map with no trace; two maps that fit one
# trace; a map of the same process an hour earlier; maps without "source" and
# in the Python snippet's shape; a trace that has a window too.  The plan, the
# outputs (byte for byte a direct `cuptimerge -t MAP TRACE`), the joblog, the
# summary, the exit status and the re-runs.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
need gzip "to read the outputs"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
[ -x "$BATCH" ] || skip_all "no $BATCH"

R=$tmp/run
mkdir "$R" "$tmp/spare"
# threads_full.json is process 470's trace, whose CUDA calls sit on the rows of
# two workers' pthread_self (511690432, 352294592); thread_map.json (the
# snippet's shape) maps those to tids 611 and 562.  Rank r: host node(r/2),
# pid 6000 + r%2, its trace named as torch names it, and a v1 map m{r}.json
# whose workers have tids 611 + 1000(r+1) and 562 + 1000(r+1), so that each
# rank's repair is told apart.  Ranks 4 and 5 (node2) share one map, node2.json,
# holding both processes; its "source" is rank 4's.  The trace's time is
# baseTimeNanoseconds + 1000 x the ts of its first CPU event
# (cuptimerge-batch(1)); the maps' spans hold it.
python3 - "$FIX/threads_full.json" "$FIX/thread_map.json" "$R" "$tmp/spare" <<'PY'
import json, sys
cpu, snip, out, spare = sys.argv[1:5]
base = json.load(open(cpu))
first = next(e for e in base["traceEvents"] if e.get("ph") == "X" and
             e.get("cat") in ("cpu_op", "user_annotation", "python_function"))
t0 = base["baseTimeNanoseconds"] + int(first["ts"] * 1000)
threads = json.load(open(snip))["threads"]

def entries(pid, r):
    return [{"tid": pid if t["native_id"] == 470 else t["native_id"] + 1000 * (r + 1),
             "pthread": int(ident), "name": t["name"]} for ident, t in threads.items()]

def source(host, pid, rank, shift=0):
    s = {"host": host, "pid": pid, "start_ns": t0 - 10 * 10**9 + shift, "end_ns": t0 + 60 * 10**9 + shift}
    if rank is not None:
        s["rank"], s["rank_from"] = rank, "RANK"
    return s

def trace(path, pid, rank):
    d = {"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 6}}
    d.update(json.load(open(cpu)))
    for e in d["traceEvents"]:
        if e.get("pid") == 470: e["pid"] = pid
        if e.get("tid") == 470: e["tid"] = pid
    json.dump(d, open(path, "w"), indent=1)

for r in range(6):
    host, pid = "node%d" % (r // 2), 6000 + r % 2
    trace("%s/%s_%d.1795974781921.pt.trace.json" % (out, host, pid), pid, r)
    if r < 4:
        m = {"thread_map_version": 1, "source": source(host, pid, r), "processes": {str(pid): entries(pid, r)}}
        json.dump(m, open("%s/m%d.json" % (out, r), "w"), indent=1)
json.dump({"thread_map_version": 1, "source": source("node2", 6000, 4),
           "processes": {"6000": entries(6000, 4), "6001": entries(6001, 5)}},
          open(out + "/node2.json", "w"), indent=1)
# a data loader worker of rank 0: it started threads, so it wrote a map
json.dump({"thread_map_version": 1, "source": source("node0", 6100, 0),
           "processes": {"6100": entries(6100, 0)}}, open(out + "/worker.json", "w"))
# for the other directories: rank 0's map an hour earlier (a process of the same
# pid before), without "source" (the map of an older cuptirec, its span from
# the main thread's start_ns and a worker's end_ns), in the snippet's shape
m = json.load(open(out + "/m0.json"))
m["source"] = source("node0", 6000, 0, -3600 * 10**9)
json.dump(m, open(spare + "/earlier.json", "w"))
m = json.load(open(out + "/m0.json"))
del m["source"]
m["processes"]["6000"][0]["start_ns"] = t0 - 10**9
json.dump(m, open(spare + "/nosource.json", "w"))
d = json.load(open(snip))
d["meta"]["pid"] = 6000
json.dump(d, open(spare + "/snippet.json", "w"))
del d["meta"]["pid"]
json.dump(d, open(spare + "/snippet_nopid.json", "w"))
PY
mv "$R/m3.json" "$tmp/m3.json" # rank 3's map is missing
touch -d '1 hour ago' "$R"/*.json

key() { # key R: rank R's key
	echo "node$(($1 / 2))_$((6000 + $1 % 2)).1795974781921"
}
map() { # map R: rank R's map
	if [ "$1" -ge 4 ]; then echo "$R/node2.json"; else echo "$R/m$1.json"; fi
}

# run ARGS...: run cuptimerge-batch; status in $rc, stdout/stderr in $tmp/out, $tmp/err
run() {
	rc=0
	"$BATCH" --no-progress "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

tcase "dry run: each trace with its process's map, one map for two pids, the missing map, the worker's map"
run -n "$R"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" -eq 7 ] || fail "$(wc -l <"$tmp/out") plan lines, wanted 7: $(cat "$tmp/out")"
for r in 0 1 2 4 5; do
	grep -q "^$(key $r)	$R/$(key $r).pt.trace.json	$(map $r)	$R/merged/$(key $r).merged.json.gz	repair\$" "$tmp/out" ||
		fail "rank $r is not planned for repair with $(map $r): $(grep "$(key $r)" "$tmp/out")"
done
grep -q "^$(key 3)	[^	]*	-	[^	]*	FAIL: no thread map for this trace (pid 6001, rank 3, host node1)\$" "$tmp/out" ||
	fail "rank 3's missing map is not reported: $(grep "$(key 3)" "$tmp/out")"
grep -q "^worker	-	$R/worker.json	-	no trace, skipped (thread map of pid 6100, rank 0, host node0)\$" "$tmp/out" ||
	fail "the worker's map: $(grep worker "$tmp/out")"
[ ! -e "$R/merged" ] || fail "a dry run made the output directory"

tcase "run: 5 repaired, 1 failed (listed), 1 map without a trace, exit 4"
run "$R"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: $(key 3): no thread map for this trace" "$tmp/err" || fail "not said before the run: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 5 merged, 0 skipped, 1 failed, 1 thread map without a trace, [0-9.]* s\$" "$tmp/err" ||
	fail "summary: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: failed: $(key 3)\$" "$tmp/err" || fail "failed keys: $(cat "$tmp/err")"

tcase "outputs: byte for byte a direct cuptimerge -t MAP TRACE, each repaired with its own rank's map"
mkdir "$tmp/direct"
for r in 0 1 2 4 5; do
	t=$R/$(key $r).pt.trace.json
	"$CUPTIMERGE" -q --trace-name "${t##*/}" -t "$(map $r)" -o "$tmp/direct/$r.json.gz" "$t" ||
		fail "direct repair of rank $r: exit $?"
	cmp -s "$tmp/direct/$r.json.gz" "$R/merged/$(key $r).merged.json.gz" || fail "rank $r differs from the direct repair"
	# the workers' rows moved to this rank's tids, none left on the pthread ids
	gzip -dc "$R/merged/$(key $r).merged.json.gz" | python3 -c 'import json, sys
r = int(sys.argv[1]); pid = 6000 + r % 2
tids = {e["tid"] for e in json.load(sys.stdin)["traceEvents"] if e.get("pid") == pid}
assert {611 + 1000 * (r + 1), 562 + 1000 * (r + 1)} <= tids, sorted(t for t in tids if isinstance(t, int))
assert not {511690432, 352294592} & tids, "rows left on pthread ids"' "$r" || fail "rank $r is not repaired with its map"
done
[ ! -e "$R/merged/$(key 3).merged.json.gz" ] || fail "rank 3 has an output"
# cuptimerge -t does not read "source" (cuptimerge-threadmap(5))
python3 -c 'import json, sys
m = json.load(open(sys.argv[1])); del m["source"]; json.dump(m, open(sys.argv[2], "w"))' "$R/m0.json" "$tmp/m0nosrc.json"
"$CUPTIMERGE" -q --trace-name "$(key 0).pt.trace.json" -t "$tmp/m0nosrc.json" -o "$tmp/nosrc.json.gz" "$R/$(key 0).pt.trace.json"
cmp -s "$tmp/nosrc.json.gz" "$R/merged/$(key 0).merged.json.gz" || fail "\"source\" changes the repair"

tcase "joblog: a line per rank and one for the worker's map"
J=$R/merged/cuptimerge-batch.tsv
# the last line a repair writes on stderr: cuptimerge(1)'s note of what moved
moved="cuptimerge: thread repair: moved 216 events of 2 threads .*"
[ "$(wc -l <"$J")" -eq 8 ] || fail "$(wc -l <"$J") lines, wanted 8: $(cat "$J")"
for r in 0 1 2 4 5; do
	grep -q "^$(key $r)	$R/$(key $r).pt.trace.json	$(map $r)	[^	]*	0	[0-9.]*	[1-9][0-9]*	$moved\$" "$J" ||
		fail "rank $r: $(grep "^$(key $r)" "$J")"
done
grep -q "^$(key 3)	[^	]*	-	[^	]*	-	0.000	0	no thread map for this trace" "$J" || fail "rank 3: $(grep "^$(key 3)" "$J")"
grep -q "^worker	-	$R/worker.json	-	-	0.000	0	no trace, skipped" "$J" || fail "worker: $(grep "^worker" "$J")"

tcase "re-run with the map back: only rank 3; a changed two-process map: both its ranks again"
cp "$tmp/m3.json" "$R/m3.json"
run "$R"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 1 merged, 5 skipped, 0 failed, 1 thread map without a trace, [0-9.]* s\$" "$tmp/err" ||
	fail "summary: $(cat "$tmp/err")"
"$CUPTIMERGE" -q --trace-name "$(key 3).pt.trace.json" -t "$R/m3.json" -o "$tmp/direct/3.json.gz" "$R/$(key 3).pt.trace.json"
cmp -s "$tmp/direct/3.json.gz" "$R/merged/$(key 3).merged.json.gz" || fail "rank 3 differs from the direct repair"
touch "$R/node2.json"
run "$R"
grep -q "^cuptimerge-batch: 2 merged, 4 skipped, 0 failed" "$tmp/err" || fail "summary: $(cat "$tmp/err")"
grep -q "^$(key 4)	.*	0	[0-9.]*	[1-9][0-9]*	$moved\$" "$J" && grep -q "^$(key 5)	.*	0	[0-9.]*	[1-9][0-9]*	$moved\$" "$J" ||
	fail "ranks 4 and 5 did not run: $(cat "$J")"

tcase "two maps that fit one trace: ambiguous, both named, reported once"
mkdir "$tmp/amb"
cp "$R/$(key 0).pt.trace.json" "$R/m0.json" "$tmp/amb/"
cp "$R/m0.json" "$tmp/amb/m0copy.json"
run -n "$tmp/amb"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4"
grep -q "^$(key 0)	.*	-	.*	FAIL: 2 thread maps fit this trace (pid 6000, rank 0, host node0): $tmp/amb/m0.json, $tmp/amb/m0copy.json: ambiguous, name the pair in a manifest\$" \
	"$tmp/out" || fail "ambiguity: $(cat "$tmp/out")"
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "the ambiguous maps are listed again: $(cat "$tmp/out")"

tcase "time: the map of the process an hour earlier is passed over, not ambiguous"
mkdir "$tmp/tm"
cp "$R/$(key 0).pt.trace.json" "$R/m0.json" "$tmp/spare/earlier.json" "$tmp/tm/"
run -n "$tmp/tm"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/out")"
grep -q "^$(key 0)	[^	]*	$tmp/tm/m0.json	.*	repair\$" "$tmp/out" || fail "not paired with m0.json: $(cat "$tmp/out")"
grep -q "^earlier	-	$tmp/tm/earlier.json	-	no trace, skipped" "$tmp/out" || fail "the earlier map: $(cat "$tmp/out")"

tcase "maps without \"source\" pair by pid and their threads' span; the snippet's by meta.pid"
for m in nosource snippet; do
	rm -rf "$tmp/$m"
	mkdir "$tmp/$m"
	cp "$R/$(key 0).pt.trace.json" "$tmp/spare/$m.json" "$tmp/$m/"
	run -n "$tmp/$m"
	[ $rc -eq 0 ] && grep -q "^$(key 0)	[^	]*	$tmp/$m/$m.json	.*	repair\$" "$tmp/out" ||
		fail "$m: exit $rc: $(cat "$tmp/out" "$tmp/err")"
done
# an hour later, the threads of the map without "source" had all ended
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["baseTimeNanoseconds"] += 3600 * 10**9
json.dump(d, open(sys.argv[1], "w"))' "$tmp/nosource/$(key 0).pt.trace.json"
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
for e in m["processes"]["6000"]: e.setdefault("end_ns", m["processes"]["6000"][0]["start_ns"] + 10**9)
json.dump(m, open(sys.argv[1], "w"))' "$tmp/nosource/nosource.json"
run -n "$tmp/nosource"
grep -q "FAIL: no thread map for this trace" "$tmp/out" || fail "an ended process's map fits a later trace: $(cat "$tmp/out")"
mkdir "$tmp/nopid"
cp "$R/$(key 0).pt.trace.json" "$tmp/spare/snippet_nopid.json" "$tmp/nopid/"
run -n "$tmp/nopid"
[ $rc -eq 4 ] || fail "a snippet map without meta.pid: exit $rc"
grep -q "^cuptimerge-batch: $tmp/nopid/snippet_nopid.json: a thread map without \"meta.pid\" applies to every process: pair it in a manifest\$" \
	"$tmp/err" || fail "no warning for the map without a pid: $(cat "$tmp/err")"

tcase "a trace with a window and a map: merged with the window, the map not left over"
mkdir "$tmp/both"
python3 - "$FIX/threads_window.json" "$tmp/both/w.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
for e in w["events"]:
    if e.get("process_id") == 470: e["process_id"] = 6000
w["thread_resource_map"] = {"6000": v for v in w["thread_resource_map"].values()}
w["source"] = {"host": "node0", "pid": 6000}
json.dump(w, open(sys.argv[2], "w"))
PY
cp "$R/$(key 0).pt.trace.json" "$R/m0.json" "$tmp/both/"
run -n "$tmp/both"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/out")"
[ "$(cat "$tmp/out")" = "$(key 0)	$tmp/both/$(key 0).pt.trace.json	$tmp/both/w.json	$tmp/both/merged/$(key 0).merged.json.gz	merge" ] ||
	fail "plan: $(cat "$tmp/out")"
finish
