#!/bin/sh
# batchpair.sh - cuptimerge-batch pairs by what the files record (issue 28):
# traces named as a training script names them pair with their windows (P1);
# a truncated or corrupt window fails its rank with what is wrong (P2); a
# window of another run is named on the trace's failure, and why it was
# refused (P3); a window of another rank or host is refused, by cuptimerge
# and in a manifest, unless --force (P4).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
[ -x "$BATCH" ] || skip_all "no $BATCH"

. "$srcdir/tests/e2e/mkranks.sh"

# plan_pairs DIR N KEYFMT: the dry run of DIR pairs rank r's trace (key
# KEYFMT with {r} and {pid}) with windows/w{r}.json, to be merged
plan_pairs() {
	rc=0
	"$BATCH" -n "$1/traces" "$1/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/out" "$tmp/err")"
	r=0
	while [ $r -lt "$2" ]; do
		k=$(python3 -c 'import sys; print(sys.argv[1].format(r=int(sys.argv[2]), pid=5000 + int(sys.argv[2]), host="gpu-node7"))' "$3" $r)
		grep -q "^$k	[^	]*	$1/windows/w$r.json	$1/traces/merged/$k.merged.json.gz	merge\$" "$tmp/out" ||
			fail "rank $r ($k): $(cat "$tmp/out")"
		r=$((r + 1))
	done
}

# P1: "rank0_5000.pt.trace.json" gave the host "rank0", and no window fit.
for fmt in 'rank{r}_{pid}.pt.trace.json' 'trace_rank{r}.json' 'rank{r}.pt.trace.json' \
	'{host}_{pid}.1759300079000.pt.trace.json' '{host}_{pid}.1759300079000.pt.trace.json.gz'; do
	tcase "P1: traces named $fmt pair by pid, rank and time"
	d=$tmp/p1.$(echo "$fmt" | tr -c 'a-z0-9\n' _)
	mkranks "$d" 3 "$fmt"
	case $fmt in *.gz) for f in "$d"/traces/*.gz; do mv "$f" "${f%.gz}"; gzip "${f%.gz}"; done ;; esac
	key=${fmt%.gz}
	key=${key%.json}
	key=${key%.pt.trace}
	plan_pairs "$d" 3 "$key"
	[ ! -s "$tmp/err" ] || fail "warnings: $(cat "$tmp/err")"
done

tcase "P1: the ranks of rank{r}_{pid}.pt.trace.json merge, as the same files named by tensorboard_trace_handler"
d=$tmp/p1.rank_r___pid__pt_trace_json
"$BATCH" -q "$d/traces" "$d/windows" 2>"$tmp/err" || fail "exit $?: $(cat "$tmp/err")"
mkranks "$tmp/p1tb" 3 '{host}_{pid}.1759300079000.pt.trace.json'
"$BATCH" -q "$tmp/p1tb/traces" "$tmp/p1tb/windows" 2>"$tmp/err" || fail "exit $?: $(cat "$tmp/err")"
for r in 0 1 2; do
	# the outputs differ only by the trace's name (--trace-name)
	"$CUPTIMERGE" -q --trace-name "rank${r}_$((5000 + r)).pt.trace.json" -w "$d/windows/w$r.json" -o "$tmp/direct.json.gz" \
		"$d/traces/rank${r}_$((5000 + r)).pt.trace.json" || fail "direct merge of rank $r"
	cmp -s "$tmp/direct.json.gz" "$d/traces/merged/rank${r}_$((5000 + r)).merged.json.gz" ||
		fail "rank $r: the batch's output is not the direct merge's"
	[ -s "$tmp/p1tb/traces/merged/gpu-node7_$((5000 + r)).1759300079000.merged.json.gz" ] || fail "tensorboard rank $r"
done

# A rank in a name is weaker than the rank the files record: pid, rank and
# time agree, so the pair is made, with a warning (names off by one, as a
# script counting from 1 writes them).
tcase "P1: a rank in the name that the files contradict warns, and pairs on what they record"
mkranks "$tmp/p1h" 2 'trace_rank{pid}.json'
for r in 0 1; do mv "$tmp/p1h/traces/trace_rank$((5000 + r)).json" "$tmp/p1h/traces/trace_rank$((r + 1)).json"; done
rc=0
"$BATCH" -n "$tmp/p1h/traces" "$tmp/p1h/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/out" "$tmp/err")"
grep -q "^cuptimerge-batch: $tmp/p1h/traces/trace_rank2.json: its name says rank 2, its distributedInfo records rank 1: paired with $tmp/p1h/windows/w1.json on what the files record\$" \
	"$tmp/err" || fail "warning: $(cat "$tmp/err")"
grep -q "^trace_rank1	.*	$tmp/p1h/windows/w0.json	.*	merge\$" "$tmp/out" || fail "$(cat "$tmp/out")"

# Two windows of the same pid, rank and time on two hosts (pids repeat
# across nodes): a name in full tensorboard form decides, as before.
tcase "P1: the name's host still tells apart windows that agree on everything else"
mkranks "$tmp/p1a" 1 'gpu-node7_{pid}.1759300079000.pt.trace.json'
mkranks "$tmp/p1b" 1 'x' gpu-node8
cp "$tmp/p1b/windows/w0.json" "$tmp/p1a/windows/w0b.json"
rc=0
"$BATCH" -n "$tmp/p1a/traces" "$tmp/p1a/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4 (w0b.json has no trace): $(cat "$tmp/out" "$tmp/err")"
grep -q "^gpu-node7_5000.1759300079000	.*	$tmp/p1a/windows/w0.json	.*	merge\$" "$tmp/out" || fail "$(cat "$tmp/out")"

# P2: a window cut short (as a killed process leaves it: cuptirec(1)) or
# corrupt was "not a trace, a window or a thread map, ignored", and its
# rank failed as "no window for this trace".  Four ranks: rank 1's window
# truncated, as cuptirec names it; rank 2's gzip cut short; rank 3's window
# empty (killed before it wrote anything: its pid is unknown); rank 4's with
# a stray byte in the middle.  The byte offsets are cuptimerge's own for the same files.
tcase "P2: a truncated, cut-short gzip, empty or corrupt window fails its rank with what is wrong"
D=$tmp/p2
mkranks "$D" 5 'rank{r}_{pid}.pt.trace.json'
head -c 3000 "$D/windows/w1.json" >"$D/windows/cuptirec_5001.json"
gzip -c "$D/windows/w2.json" | head -c 700 >"$D/windows/w2.json.gz"
: >"$D/windows/cuptirec_node9_5003.json.gz"
python3 -c 'import sys
s = open(sys.argv[1]).read(); i = s.index("}, {", 1500)
open(sys.argv[1], "w").write(s[:i] + "}@ {" + s[i + 4:])' "$D/windows/w4.json"
rm "$D/windows/w1.json" "$D/windows/w2.json" "$D/windows/w3.json"
# the offsets are cuptimerge's for the same files
"$CUPTIMERGE" -w "$D/windows/w4.json" -o "$tmp/x.json" "$D/traces/rank4_5004.pt.trace.json" 2>"$tmp/err" && fail "w4 merged"
o4=$(sed -n 's/.*w4\.json:\([0-9]*\): invalid JSON.*/\1/p' "$tmp/err")
[ -n "$o4" ] || fail "cuptimerge: $(cat "$tmp/err")"
"$CUPTIMERGE" -w "$D/windows/w2.json.gz" -o "$tmp/x.json" "$D/traces/rank2_5002.pt.trace.json" 2>"$tmp/err" && fail "w2 merged"
o2=$(sed -n 's/.*w2\.json\.gz:\([0-9]*\): truncated gzip data.*/\1/p' "$tmp/err")
[ -n "$o2" ] || fail "cuptimerge: $(cat "$tmp/err")"
rc=0
"$BATCH" -n "$D/traces" "$D/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/out" "$tmp/err")"
killed="(a process killed before its window was closed leaves it so: cuptirec(1))"
while IFS='	' read -r k w want; do
	grep -qxF "$k	$D/traces/$k.pt.trace.json	$w	$D/traces/merged/$k.merged.json.gz	FAIL: $want" "$tmp/out" ||
		fail "$k: $(grep "^$k" "$tmp/out")"
done <<EOT
rank1_5001	$D/windows/cuptirec_5001.json	its window is damaged: truncated JSON: the text ends inside the document at byte 3000 $killed
rank2_5002	$D/windows/w2.json.gz	its window is damaged: truncated gzip data, after byte $o2 of text $killed
rank3_5003	-	no window for this trace (pid 5003, rank 3); not read, maybe its window: $D/windows/cuptirec_node9_5003.json.gz (empty)
EOT
grep -q "^rank0_5000	.*	merge\$" "$tmp/out" || fail "rank 0: $(cat "$tmp/out")"
[ "$(cat "$tmp/err")" = "cuptimerge-batch: $D/windows/cuptirec_node9_5003.json.gz: empty: a damaged window (no API record tells its pid), ignored" ] ||
	fail "warnings: $(cat "$tmp/err")"
# A plain window that ends with its "source" is planned from its head and
# tail (P7): damage inside it is found by its merge, which names it, at
# the same offset, on that rank.  A gzip window is read in full: planned
# damaged.
grep -qx "rank4_5004	$D/traces/rank4_5004.pt.trace.json	$D/windows/w4.json	$D/traces/merged/rank4_5004.merged.json.gz	merge" \
	"$tmp/out" || fail "rank4_5004: $(grep "^rank4" "$tmp/out")"
gzip "$D/windows/w4.json"
"$BATCH" -n "$D/traces" "$D/windows" >"$tmp/out" 2>"$tmp/err" || true
grep -qxF "rank4_5004	$D/traces/rank4_5004.pt.trace.json	$D/windows/w4.json.gz	$D/traces/merged/rank4_5004.merged.json.gz	FAIL: its window is damaged: not JSON at byte $o4" \
	"$tmp/out" || fail "rank4_5004, gzip: $(grep "^rank4" "$tmp/out")"
gunzip "$D/windows/w4.json.gz"
rc=0
"$BATCH" --no-progress "$D/traces" "$D/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "run: exit $rc, wanted 4: $(cat "$tmp/err")"
grep -q "^rank4_5004	.*	1	[0-9.]*	[0-9]*	cuptimerge: $D/windows/w4.json:$o4: invalid JSON" "$D/traces/merged/cuptimerge-batch.tsv" ||
	fail "rank 4's joblog line: $(cat "$D/traces/merged/cuptimerge-batch.tsv")"

tcase "P2: a truncated window in a manifest fails its rank with what is wrong"
printf 'key\ttrace\twindow\toutput\nr1\t%s\t%s\t\n' "$D/traces/rank1_5001.pt.trace.json" "$D/windows/cuptirec_5001.json" >"$tmp/m.tsv"
rc=0
"$BATCH" -n -m "$tmp/m.tsv" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/out" "$tmp/err")"
grep -qF "FAIL: window $D/windows/cuptirec_5001.json: truncated JSON: the text ends inside the document at byte 3000 $killed" "$tmp/out" ||
	fail "$(cat "$tmp/out")"

# P3: the windows of a run an hour earlier, beside the traces of this one:
# "no window for this trace" and "no trace for this window", unrelated.
# Now each names the other, and the hour between them.
tcase "P3: a window of another run is named on the trace's failure, with the hour that refused it"
mkranks "$tmp/p3" 1 'rank{r}_{pid}.pt.trace.json' gpu-node7 -3600
mkranks "$tmp/p3b" 1 'rank{r}_{pid}.pt.trace.json' gpu-node7 3600
mv "$tmp/p3b/windows/w0.json" "$tmp/p3/windows/w0later.json"
rm -r "$tmp/p3b"
rc=0
"$BATCH" -n "$tmp/p3/traces" "$tmp/p3/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/out" "$tmp/err")"
t=$tmp/p3/traces/rank0_5000.pt.trace.json
w=$tmp/p3/windows/w0.json
[ "$(cat "$tmp/out")" = "rank0_5000	$t	-	$tmp/p3/traces/merged/rank0_5000.merged.json.gz	FAIL: no window for this trace (pid 5000, rank 0); nearest: $w (pid 5000, rank 0, host gpu-node7), refused: the trace starts 59 min 59 s after the window ends (another run?)
w0	-	$w	-	FAIL: no trace for this window (pid 5000, rank 0, host gpu-node7, 5 GPU events); nearest: $t (pid 5000, rank 0), refused: the trace starts 59 min 59 s after the window ends (another run?)
w0later	-	${w%.json}later.json	-	FAIL: no trace for this window (pid 5000, rank 0, host gpu-node7, 5 GPU events); nearest: $t (pid 5000, rank 0), refused: the trace starts 59 min 59 s before the window" ] ||
	fail "$(cat "$tmp/out")"

# P4: the window's "source" says rank 33 on node-b, the trace's
# distributedInfo rank 1 (same pid, same time): the merge exited 0.
tcase "P4: cuptimerge refuses a window of another rank or host (--force overrides)"
mkranks "$tmp/p4" 2 'gpu-node7_{pid}.1759300079000.pt.trace.json'
t1=$tmp/p4/traces/gpu-node7_5001.1759300079000.pt.trace.json
w1=$tmp/p4/windows/w1.json
# setsrc FILE RANK HOST: the window FILE's "source" records RANK and HOST
setsrc() {
	python3 -c 'import json, sys
w = json.load(open(sys.argv[1])); w["source"]["rank"] = int(sys.argv[2]); w["source"]["host"] = sys.argv[3]
json.dump(w, open(sys.argv[1], "w"))' "$@"
}
setsrc "$w1" 33 node-b
rc=0
"$CUPTIMERGE" -w "$w1" -o "$tmp/p4/o.json" "$t1" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "exit $rc, wanted 1: $(cat "$tmp/err")"
[ "$(cat "$tmp/err")" = "cuptimerge: $w1: its \"source\" records rank 33 on node-b, the CPU trace's distributedInfo rank 1: a window of another rank? (use --force to merge anyway)" ] ||
	fail "message: $(cat "$tmp/err")"
[ ! -e "$tmp/p4/o.json" ] || fail "an output"
"$CUPTIMERGE" --force -w "$w1" -o "$tmp/p4/o.json" "$t1" 2>"$tmp/err" || fail "--force: exit $?: $(cat "$tmp/err")"
grep -q "a window of another rank? (merged anyway: --force)\$" "$tmp/err" || fail "--force: $(cat "$tmp/err")"
# the host: the trace records none, but its tensorboard name does
setsrc "$w1" 1 node-b
rc=0
"$CUPTIMERGE" -w "$w1" -o "$tmp/p4/o.json" "$t1" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "host: exit $rc, wanted 1: $(cat "$tmp/err")"
[ "$(cat "$tmp/err")" = "cuptimerge: $w1: its \"source\" records host node-b, the CPU trace's name host gpu-node7: a window of another node? (use --force to merge anyway)" ] ||
	fail "host: $(cat "$tmp/err")"
# a trace named otherwise records no host: only the rank counts
cp "$t1" "$tmp/p4/rank1.pt.trace.json"
"$CUPTIMERGE" -w "$w1" -o "$tmp/p4/o.json" "$tmp/p4/rank1.pt.trace.json" 2>"$tmp/err" ||
	fail "no host in the name: exit $?: $(cat "$tmp/err")"

tcase "P4: a manifest pairing a window of another rank fails that rank, gzip or plain; -- --force merges it"
setsrc "$w1" 33 node-b
gzip -c "$w1" >"$tmp/p4/windows/w1z.json.gz"
t0=$tmp/p4/traces/gpu-node7_5000.1759300079000.pt.trace.json
printf 'key\ttrace\twindow\toutput\nr1\t%s\t%s\t\nr1z\t%s\t%s\t\nr0\t%s\t%s\t\n' "$t1" "$w1" "$t1" \
	"$tmp/p4/windows/w1z.json.gz" "$t0" "$tmp/p4/windows/w0.json" >"$tmp/p4/m.tsv"
rc=0
"$BATCH" -n -m "$tmp/p4/m.tsv" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/out" "$tmp/err")"
for k in r1:$w1 r1z:$tmp/p4/windows/w1z.json.gz; do
	grep -qxF "${k%%:*}	$t1	${k#*:}	$tmp/p4/merged/${k%%:*}.merged.json.gz	FAIL: window ${k#*:} records rank 33 on node-b, the trace's distributedInfo rank 1: a window of another rank? (to merge anyway, run the batch again with -- --force: cuptimerge-batch(1))" \
		"$tmp/out" || fail "${k%%:*}: $(cat "$tmp/out")"
done
grep -q "^r0	.*	merge\$" "$tmp/out" || fail "r0: $(cat "$tmp/out")"
rc=0
"$BATCH" --no-progress -m "$tmp/p4/m.tsv" -- --force >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "-- --force: exit $rc: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 3 merged, 0 skipped, 0 failed" "$tmp/err" || fail "-- --force: $(cat "$tmp/err")"

finish
