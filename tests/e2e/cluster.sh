#!/bin/sh
# cluster.sh - what jobs of many ranks rely on (issue 9): a window that says
# where and when it was recorded ("source", cuptimerge-window(5)) merges to
# the same bytes as one that does not; a repaired trace keeps its top-level
# members as they were written, so that HTA, which finds a trace's rank with
# the pattern `"rank": N` (Kineto's spacing), still tells the ranks apart.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to rearrange the fixtures"

WIN=$FIX/window.json
SRC=$FIX/window_source.json
CPU=$FIX/cpu.json

# the baseline: the window without the member
$CUPTIMERGE -q --trace-name example -w "$WIN" "$CPU" >"$tmp/plain.json"

tcase "window source: the merge is the same bytes as without it"
rc=0
$CUPTIMERGE -q --trace-name example -w "$SRC" "$CPU" >"$tmp/src.json" 2>"$tmp/err" || rc=$?
if [ $rc -ne 0 ]; then
	fail "exit $rc: $(cat "$tmp/err")"
else
	cmp -s "$tmp/plain.json" "$tmp/src.json" || fail "the merge with \"source\" differs from the merge without it"
fi

# a reader may meet the member anywhere: first, before "events", it is read
# ahead of the events by the window's first pass
tcase "window source: first in the window, at every read size 1..31"
python3 - "$SRC" "$tmp/first.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
first = {"source": w.pop("source")}
first.update(w)
json.dump(first, open(sys.argv[2], "w"), indent=1)
PY
bs=1
while [ $bs -le 31 ]; do
	rc=0
	$CUPTIMERGE -q --buffer-size $bs --trace-name example -w "$tmp/first.json" "$CPU" >"$tmp/bs.json" 2>"$tmp/err" ||
		rc=$?
	if [ $rc -ne 0 ]; then
		fail "--buffer-size $bs: exit $rc: $(cat "$tmp/err")"
	elif ! cmp -s "$tmp/bs.json" "$tmp/plain.json"; then
		fail "--buffer-size $bs: the merge differs from the merge without \"source\""
	fi
	bs=$((bs + 1))
done

tcase "window source: the window as a thread map repairs the same"
python3 - "$FIX/threads_window.json" "$tmp/tw_src.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["source"] = {"host": "h", "pid": 470, "start_ns": 1, "end_ns": 2}
json.dump(w, open(sys.argv[2], "w"))
PY
$CUPTIMERGE -t "$FIX/threads_window.json" "$FIX/threads_full.json" >"$tmp/rep_plain.json" 2>"$tmp/err" ||
	fail "repair with threads_window.json: exit $?"
grep -q "moved [1-9]" "$tmp/err" || fail "the repair moved nothing: $(cat "$tmp/err")"
$CUPTIMERGE -q -t "$tmp/tw_src.json" "$FIX/threads_full.json" >"$tmp/rep_src.json" ||
	fail "repair with a window carrying \"source\": exit $?"
cmp -s "$tmp/rep_plain.json" "$tmp/rep_src.json" || fail "the repair with \"source\" differs"

# ---- the rank survives the repair -----------------------------------------

MAP=$FIX/thread_map.json

# rank_trace RANK OUT [TRACE]: TRACE (threads_full.json) with the
# distributedInfo torch writes for RANK (json.dumps spacing, as in a real
# 4-rank run)
rank_trace() {
	awk -v d="\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": $1, \"world_size\": 4, \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": 4, \"ranks\": [0, 1, 2, 3]}], \"nccl_version\": \"2.27.5\"}," \
		'{ print } !done && /"schemaVersion": 1,/ { print "    " d; done = 1 }' "${3:-$FIX/threads_full.json}" >"$2"
}

# same_members IN OUT [KEY...]: every top-level member of IN but traceEvents
# and the KEYs is in OUT as the same text, key and value, in the same order
same_members() {
	python3 - "$@" <<'PY'
import json, sys
def members(path):
    s = open(path, encoding="utf-8").read()
    dec = json.JSONDecoder()
    i = s.index("{") + 1
    out = []
    while True:
        while s[i] in " \t\r\n,":
            i += 1
        if s[i] == "}":
            return out
        key, j = dec.raw_decode(s, i)
        kraw, i = s[i:j], j
        while s[i] in " \t\r\n:":
            i += 1
        _, j = dec.raw_decode(s, i)
        out.append((key, kraw, s[i:j]))
        i = j
skip = {"traceEvents", *sys.argv[3:]}
a = [m for m in members(sys.argv[1]) if m[0] not in skip]
b = [m for m in members(sys.argv[2]) if m[0] not in skip]
for x, y in zip(a, b):
    if x != y:
        sys.exit("%s: was %.200s, is %.200s" % (x[0], x[1] + ":" + x[2], y[1] + ":" + y[2]))
if len(a) != len(b):
    sys.exit("%d members other than traceEvents, then %d" % (len(a), len(b)))
PY
}

rank_trace 3 "$tmp/rank3.json"
grep -q '"rank": 3,' "$tmp/rank3.json" || fail "the test trace has no distributedInfo"

tcase "repair: the top-level members keep their text (\"rank\": 3)"
rc=0
$CUPTIMERGE -q -t "$MAP" "$tmp/rank3.json" >"$tmp/rep3.json" 2>"$tmp/err" || rc=$?
if [ $rc -ne 0 ]; then
	fail "exit $rc: $(cat "$tmp/err")"
else
	grep -q '"rank": 3,' "$tmp/rep3.json" || fail "\"rank\": 3 is lost: $(grep -o '"distributedInfo"[^}]*' "$tmp/rep3.json")"
	msg=$(same_members "$tmp/rank3.json" "$tmp/rep3.json" 2>&1) || fail "$msg"
fi

tcase "repair: the same bytes at every read size 1..31 and from a gzip pipe"
bs=1
while [ $bs -le 31 ]; do
	rc=0
	$CUPTIMERGE -q --buffer-size $bs -t "$MAP" "$tmp/rank3.json" >"$tmp/bs.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "--buffer-size $bs: exit $rc: $(cat "$tmp/err")"
	elif ! cmp -s "$tmp/bs.json" "$tmp/rep3.json"; then
		fail "--buffer-size $bs: the repair differs"
	fi
	bs=$((bs + 1))
done
rc=0
gzip -c "$tmp/rank3.json" | CUPTIMERGE_BUFSIZE=5 $CUPTIMERGE -q -t "$MAP" >"$tmp/pipe.json" 2>"$tmp/err" || rc=$?
if [ $rc -ne 0 ]; then
	fail "gzip pipe: exit $rc: $(cat "$tmp/err")"
else
	cmp -s "$tmp/pipe.json" "$tmp/rep3.json" || fail "the repair from a gzip pipe differs"
fi

tcase "repair: --trace-name replaces traceName, the rest keeps its text"
rc=0
$CUPTIMERGE -q --trace-name rank3 -t "$MAP" "$tmp/rank3.json" >"$tmp/named.json" 2>"$tmp/err" || rc=$?
if [ $rc -ne 0 ]; then
	fail "exit $rc: $(cat "$tmp/err")"
else
	msg=$(same_members "$tmp/rank3.json" "$tmp/named.json" traceName 2>&1) || fail "$msg"
	grep -q '"traceName":"rank3"' "$tmp/named.json" || fail "traceName not replaced"
fi

# members written every way JSON allows: odd spacing, escapes in keys and
# values, numbers of every form (a top-level number ends only where the next
# byte is read), members after traceEvents, a duplicate-looking escaped key
tcase "repair: members of every shape keep their text at every read size 1..31"
printf '%s\n' '{ "schemaVersion" :1 ,"distributedInfo" : { "rank" : 2 , "x": [ 1.50, -0, 1E+3 ] } ,' \
	'"esc\u0061ped\"key\\" :	"v\u00e9\n}" ,"t": true, "f":false,"n" : null,"": 0 ,' \
	' "traceEvents" : [ {"ph": "X", "name": "a", "pid": 1, "tid": 2, "ts": 1.0, "dur": 1} ] ,' \
	'"after": {"deep": [[[]]], "s": "}\"]"}, "trace\u004eame": "orig" , "num": -12345678901234567890.5e-7' \
	'  }' >"$tmp/shapes.json"
bs=1
while [ $bs -le 31 ]; do
	rc=0
	$CUPTIMERGE -q --buffer-size $bs -t "$MAP" "$tmp/shapes.json" >"$tmp/shapes.out" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "--buffer-size $bs: exit $rc: $(cat "$tmp/err")"
	else
		msg=$(same_members "$tmp/shapes.json" "$tmp/shapes.out" 2>&1) || fail "--buffer-size $bs: $msg"
	fi
	bs=$((bs + 1))
done

# the merge copies the members as they were too, with and without -t
tcase "merge, and merge with -t: \"rank\": 5 kept"
rank_trace 5 "$tmp/cpu5.json" "$CPU"
rc=0
$CUPTIMERGE -q -w "$WIN" "$tmp/cpu5.json" >"$tmp/m5.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "merge: exit $rc: $(cat "$tmp/err")"
grep -q '"rank": 5,' "$tmp/m5.json" || fail "the merge lost \"rank\": 5"
rc=0
$CUPTIMERGE -q -w "$WIN" -t "$WIN" "$tmp/cpu5.json" >"$tmp/mt5.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "merge with -t: exit $rc: $(cat "$tmp/err")"
grep -q '"rank": 5,' "$tmp/mt5.json" || fail "the merge with -t lost \"rank\": 5"

# a directory of per-rank repaired traces, as HTA's TraceAnalysis reads it:
# each file's rank by its pattern, four files, four ranks
tcase "repair: a directory of 4 repaired ranks keeps 4 distinct ranks"
mkdir "$tmp/ranks" "$tmp/repaired"
for r in 0 1 2 3; do
	rank_trace $r "$tmp/ranks/rank$r.json"
	$CUPTIMERGE -q -t "$MAP" -o "$tmp/repaired/rank$r.json" "$tmp/ranks/rank$r.json" ||
		fail "rank $r: exit $?"
done
msg=$(python3 - "$tmp/repaired" <<'PY' 2>&1
import os, re, sys
pattern = re.compile(r'"rank": (\d+)')
seen = {}
for f in sorted(os.listdir(sys.argv[1])):
    m = pattern.search(open(os.path.join(sys.argv[1], f)).read())
    if not m:
        sys.exit(f + ": no rank found")
    if f != "rank%s.json" % m.group(1):
        sys.exit(f + ": found rank " + m.group(1))
    seen[int(m.group(1))] = f
if sorted(seen) != [0, 1, 2, 3]:
    sys.exit("ranks found: %s" % sorted(seen))
PY
) || fail "$msg"

finish
