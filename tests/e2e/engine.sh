#!/bin/sh
# engine.sh - the engine's parallel readers and id tables: on valid inputs
# the window and the CPU trace are read by the parallel readers (not handed
# to the careful ones) at every read size, and the output is the same bytes
# whatever the number of threads (-j) and the memory budget (--memory).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to run gen_trace"
GEN=${SHARED:-$srcdir/../shared}/tools/gen_trace

fast='read by: window parallel, CPU trace parallel'

# parallel NAME OUT ERR: the -v summary in ERR says both readers were parallel
parallel() {
	grep -q "$fast" "$3" || fail "$1: not read by the parallel readers: $(tail -n 1 "$3")"
}

golden_read_sizes "the parallel readers take it at read sizes 1, 2, 3, 7, 31 and the default" '' "$fast"

# member values spilled to a temporary file and read through a mapping
# (CUPTIMERGE_SPILL=1: every value longer than a byte): the same bytes, at
# small read sizes too, and the same message for a window that is refused
while read -r name cpu win exp opts <&3; do
	case $name in '' | '#'*) continue ;; esac
	tcase "$name: every member value spilled to a file: still the parallel readers, the same bytes at read sizes 1, 7 and the default"
	rc=0
	# shellcheck disable=SC2086 # opts is a word list
	$CUPTIMERGE $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/plain.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "$name: exit $rc: $(cat "$tmp/err")"
	for bs in 1 7 default; do
		set -- --buffer-size "$bs"
		[ "$bs" = default ] && set --
		[ "$bs" = 1 ] && [ "$(wc -c <"$FIX/$win")" -ge 20000 ] && continue
		rc=0
		# shellcheck disable=SC2086 # opts is a word list
		CUPTIMERGE_SPILL=1 $CUPTIMERGE "$@" -v $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/spill.json" 2>"$tmp/err" || rc=$?
		[ $rc -eq 0 ] || fail "$name: read size $bs: exit $rc: $(cat "$tmp/err")"
		parallel "$name: read size $bs, spilled" "$tmp/spill.json" "$tmp/err"
		cmp -s "$tmp/plain.json" "$tmp/spill.json" || fail "$name: read size $bs: other bytes when spilled"
	done
done 3<"$FIX/cases.txt"
# the CPU trace's events copied in parts on threads (cpu/cpucopypar.c), a
# part at every element (CUPTIMERGE_COPY_STRIDE=8: a mark every 8 bytes,
# and an element over 32 strides walked on the one thread between parts):
# the bytes of the copy on one thread, at small read sizes too
parted=0
while read -r name cpu win exp opts <&3; do
	case $name in '' | '#'*) continue ;; esac
	tcase "$name: the CPU trace's events copied in parts on 3 threads, a part an element (the long ones walked): the same bytes at read sizes 1, 7 and the default"
	rc=0
	# shellcheck disable=SC2086 # opts is a word list
	CUPTIMERGE_COPY_THREADS=1 $CUPTIMERGE $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/plain.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "$name: exit $rc: $(cat "$tmp/err")"
	for bs in 1 7 default; do
		set -- --buffer-size "$bs"
		[ "$bs" = default ] && set --
		[ "$bs" = 1 ] && [ "$(wc -c <"$FIX/$cpu")" -ge 20000 ] && continue
		rc=0
		# shellcheck disable=SC2086 # opts is a word list
		CUPTIMERGE_COPY_STRIDE=8 CUPTIMERGE_COPY_THREADS=3 $CUPTIMERGE "$@" -v $opts -w "$FIX/$win" "$FIX/$cpu" \
			>"$tmp/parts.json" 2>"$tmp/err" || rc=$?
		[ $rc -eq 0 ] || fail "$name: read size $bs: exit $rc: $(cat "$tmp/err")"
		grep -q "copy: the CPU trace's events in [1-9][0-9]* parts on 3 threads" "$tmp/err" && parted=$((parted + 1))
		cmp -s "$tmp/plain.json" "$tmp/parts.json" || fail "$name: read size $bs: other bytes in parts"
	done
done 3<"$FIX/cases.txt"
tcase "the copy in parts: taken for most cases"
[ $parted -ge 30 ] || fail "in parts $parted times"
tcase "the copy in parts from a CPU trace on a pipe (its spool read at offsets): the same bytes"
rc=0
CUPTIMERGE_COPY_THREADS=1 $CUPTIMERGE --trace-name p -w "$FIX/window.json" "$FIX/cpu.json" >"$tmp/plain.json" 2>"$tmp/err" ||
	rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
rc=0
cat "$FIX/cpu.json" | CUPTIMERGE_COPY_STRIDE=8 CUPTIMERGE_COPY_THREADS=3 $CUPTIMERGE -v --trace-name p \
	-w "$FIX/window.json" - >"$tmp/parts.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q "copy: the CPU trace's events in [1-9][0-9]* parts on 3 threads" "$tmp/err" || fail "$(grep copy: "$tmp/err")"
cmp -s "$tmp/plain.json" "$tmp/parts.json" || fail "other bytes in parts"
tcase "refused windows: the same status and message when their members are spilled"
printf '{"events": [], "user_annotations": {"1": "a", "2": }}\n' >"$tmp/bad_ua.json"
printf '{"events": [], "user_annotations": {"1": "a" "2": "b"}}\n' >"$tmp/bad_ua2.json"
printf '{"events": [], "thread_resource_map": {"1": [}}\n' >"$tmp/bad_trm.json"
for w in "$FIX/bad_window_badmap.json" "$FIX/bad_window_huge_start.json" "$FIX/bad_window_missing_end_ns.json" \
	"$tmp/bad_ua.json" "$tmp/bad_ua2.json" "$tmp/bad_trm.json"; do
	rc=0
	$CUPTIMERGE -w "$w" "$FIX/cpu.json" >/dev/null 2>"$tmp/err1" || rc=$?
	rc2=0
	CUPTIMERGE_SPILL=1 $CUPTIMERGE -w "$w" "$FIX/cpu.json" >/dev/null 2>"$tmp/err2" || rc2=$?
	[ $rc -ne 0 ] || fail "${w##*/}: accepted"
	[ $rc -eq $rc2 ] || fail "${w##*/}: exit $rc2 spilled, $rc not"
	cmp -s "$tmp/err1" "$tmp/err2" || fail "${w##*/}: spilled: $(cat "$tmp/err2"); not: $(cat "$tmp/err1")"
done

# a pair big enough for many batches of every stage
if [ -x "$GEN" ]; then
	"$GEN" --seed 41 --ops 30000 --pretty --devices 2 --quiet "$tmp/cpu.json" "$tmp/win.json"
	$CUPTIMERGE -v -j 1 --trace-name gen -w "$tmp/win.json" "$tmp/cpu.json" >"$tmp/j1.json" 2>"$tmp/err1"
	tcase "generated pair: the same bytes and counts at -j 1, 2, 3, 5, 8 and 16"
	# the counts of -v's first line too: the joins' walks split the ids
	# among threads (gpuscan.c), and an id taken twice or never shows there
	grep '^cuptimerge: merged' "$tmp/err1" | sed 's/; read by.*//' >"$tmp/counts1"
	[ -s "$tmp/counts1" ] || fail "-j 1 -v: no counts line: $(cat "$tmp/err1")"
	for j in 2 3 5 8 16; do
		rc=0
		$CUPTIMERGE -v -j $j --trace-name gen -w "$tmp/win.json" "$tmp/cpu.json" >"$tmp/j.json" 2>"$tmp/err" || rc=$?
		if [ $rc -ne 0 ]; then
			fail "-j $j: exit $rc: $(cat "$tmp/err")"
			continue
		fi
		parallel "-j $j" "$tmp/j.json" "$tmp/err"
		cmp -s "$tmp/j1.json" "$tmp/j.json" || fail "-j $j: output differs from -j 1"
		grep '^cuptimerge: merged' "$tmp/err" | sed 's/; read by.*//' | cmp -s "$tmp/counts1" - ||
			fail "-j $j: other counts than -j 1: $(grep merged "$tmp/err")"
	done
	tcase "generated pair: the CPU trace's events copied in parts at -j 16"
	grep -q "copy: the CPU trace's events in [1-9][0-9]* parts on 16 threads" "$tmp/err" ||
		fail "-j 16: $(grep copy: "$tmp/err")"
	tcase "generated pair: gzip output, the same compressed bytes at -j 1, 2 and 5"
	for j in 1 2 5; do
		$CUPTIMERGE -j $j --trace-name gen -w "$tmp/win.json" -o "$tmp/j$j.json.gz" "$tmp/cpu.json" 2>"$tmp/err" ||
			fail "-j $j -o .gz: exit $?: $(cat "$tmp/err")"
	done
	gzip -dc "$tmp/j1.json.gz" | cmp -s - "$tmp/j1.json" || fail "-j 1 -o .gz: not the plain output"
	cmp -s "$tmp/j1.json.gz" "$tmp/j2.json.gz" || fail "-j 2 -o .gz: other bytes than -j 1"
	cmp -s "$tmp/j1.json.gz" "$tmp/j5.json.gz" || fail "-j 5 -o .gz: other bytes than -j 1"
	tcase "generated pair: the id tables are arrays, and --memory=1M changes no byte"
	rc=0
	$CUPTIMERGE -v --memory=1M --trace-name gen -w "$tmp/win.json" "$tmp/cpu.json" >"$tmp/m.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "--memory=1M: exit $rc: $(cat "$tmp/err")"
	else
		grep -q 'id tables: arrays' "$tmp/err" || fail "--memory=1M: $(tail -n 1 "$tmp/err")"
		cmp -s "$tmp/j1.json" "$tmp/m.json" || fail "--memory=1M: output differs"
	fi
	tcase "generated pair: one progress line for the run, its percentage never goes back and ends at 100"
	rc=0
	CUPTIMERGE_PROGRESS_DELAY=0 $CUPTIMERGE --progress --trace-name gen -w "$tmp/win.json" "$tmp/cpu.json" \
		>"$tmp/pr.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "--progress: exit $rc"
	else
		tr '\r' '\n' <"$tmp/err" | sed -n 's/.*: *\([0-9][0-9]*\)%.*/\1/p' >"$tmp/pct"
		[ -s "$tmp/pct" ] || fail "--progress: no percentage in: $(tr '\r' '\n' <"$tmp/err" | head -n 3)"
		awk 'NR > 1 && $1 < last { bad = 1 } { last = $1 } END { exit bad || last != 100 }' "$tmp/pct" ||
			fail "--progress: percentages $(tr '\n' ' ' <"$tmp/pct")"
		cmp -s "$tmp/j1.json" "$tmp/pr.json" || fail "--progress: output differs"
	fi
	tcase "generated pair: gzip inputs on pipes, the same bytes"
	gzip -c "$tmp/cpu.json" >"$tmp/cpu.gz"
	gzip -c "$tmp/win.json" >"$tmp/win.gz"
	rc=0
	mkfifo "$tmp/win.fifo"
	cat "$tmp/win.gz" >"$tmp/win.fifo" &
	# shellcheck disable=SC2002 # the inputs must come on pipes
	cat "$tmp/cpu.gz" | $CUPTIMERGE -v --trace-name gen -w "$tmp/win.fifo" >"$tmp/p.json" 2>"$tmp/err" || rc=$?
	wait
	if [ $rc -ne 0 ]; then
		fail "pipes: exit $rc: $(cat "$tmp/err")"
	else
		parallel "pipes" "$tmp/p.json" "$tmp/err"
		cmp -s "$tmp/j1.json" "$tmp/p.json" || fail "pipes: output differs"
	fi
	# the joins' walks read only the chunks of the pairs file whose ids
	# reach into a thread's range (gpujoin.c): with the window's events in
	# blocks taken backwards and shuffled within each, the chunks' ranges
	# overlap and run down, and each walk still takes every pair once
	tcase "generated pair, the window's events out of id order: the same bytes and counts at -j 1, 3 and 8"
	python3 - "$tmp/win.json" "$tmp/win_mixed.json" <<'PY'
import json, random, sys
with open(sys.argv[1]) as f:
    w = json.load(f)
ev, rnd, out = w["events"], random.Random(7), []
for at in range(len(ev) - len(ev) % 5000, -1, -5000):
    block = ev[at:at + 5000]
    rnd.shuffle(block)
    out += block
w["events"] = out
with open(sys.argv[2], "w") as f:
    json.dump(w, f)
PY
	$CUPTIMERGE -v -j 1 --trace-name gen -w "$tmp/win_mixed.json" "$tmp/cpu.json" >"$tmp/x1.json" 2>"$tmp/err1" ||
		fail "-j 1: exit $?: $(cat "$tmp/err1")"
	grep '^cuptimerge: merged' "$tmp/err1" | sed 's/; read by.*//' >"$tmp/xcounts1"
	for j in 3 8; do
		rc=0
		$CUPTIMERGE -v -j $j --trace-name gen -w "$tmp/win_mixed.json" "$tmp/cpu.json" >"$tmp/x.json" 2>"$tmp/err" ||
			rc=$?
		if [ $rc -ne 0 ]; then
			fail "-j $j: exit $rc: $(cat "$tmp/err")"
			continue
		fi
		cmp -s "$tmp/x1.json" "$tmp/x.json" || fail "-j $j: output differs from -j 1"
		grep '^cuptimerge: merged' "$tmp/err" | sed 's/; read by.*//' | cmp -s "$tmp/xcounts1" - ||
			fail "-j $j: other counts than -j 1: $(grep merged "$tmp/err")"
	done
else
	skip "generated pair" "no gen_trace at $GEN"
fi

# sparse ids: the same merge with the id tables as hash maps
tcase "sparse ids: hash maps, the same events as with dense ids"
python3 - "$FIX/window.json" "$tmp/sparse_window.json" "$FIX/cpu.json" "$tmp/sparse_cpu.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[3]))
K = 10**15  # spread every id: too sparse for an array
for e in w["events"]:
    for k in ("correlation_id", "external_id"):
        if isinstance(e.get(k), int) and e[k]:
            e[k] = e[k] * K
ua = w.get("user_annotations")
if isinstance(ua, dict):
    w["user_annotations"] = {str(int(k) * K): v for k, v in ua.items()}
for e in c["traceEvents"]:
    a = e.get("args")
    if isinstance(a, dict) and isinstance(a.get("External id"), int):
        a["External id"] *= K
json.dump(w, open(sys.argv[2], "w")); json.dump(c, open(sys.argv[4], "w"))
PY
rc=0
$CUPTIMERGE -v --trace-name s -w "$tmp/sparse_window.json" "$tmp/sparse_cpu.json" >"$tmp/s.json" 2>"$tmp/err" || rc=$?
if [ $rc -ne 0 ]; then
	fail "sparse: exit $rc: $(cat "$tmp/err")"
else
	grep -q 'id tables: hash maps' "$tmp/err" || fail "sparse ids: $(tail -n 1 "$tmp/err")"
	# the rows and threads are those of the dense merge: only ids differ
	$CUPTIMERGE --trace-name s -w "$FIX/window.json" "$FIX/cpu.json" >"$tmp/d.json"
	python3 - "$tmp/d.json" "$tmp/s.json" <<'PY' || fail "sparse ids: other rows than with dense ids"
import json, sys
def rows(p):
    t = json.load(open(p))["traceEvents"]
    return sorted((str(e.get("ph")), str(e.get("cat")), str(e.get("name")), str(e.get("pid")), str(e.get("tid"))) for e in t)
sys.exit(rows(sys.argv[1]) != rows(sys.argv[2]))
PY
fi
finish
