#!/bin/sh
# cluster.sh - what jobs of many ranks rely on (issue 9): a window that says
# where and when it was recorded ("source", cuptimerge-window(5)) merges to
# the same bytes as one that does not.
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

finish
