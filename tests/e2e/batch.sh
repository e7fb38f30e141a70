#!/bin/sh
# batch.sh - cuptimerge-batch (issue 9) on eight generated ranks on two hosts
# (the same pids on both), a launcher's window without GPU work, and two
# planted failures: a truncated trace and a missing window.  The plan, the
# outputs (byte for byte a direct cuptimerge merge), the joblog, the summary
# and the exit status, and the re-runs (only the failed ranks; --force all);
# --shard K/N.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
need gzip "to read the outputs"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
[ -x "$BATCH" ] || skip_all "no $BATCH"

R=$tmp/run
mkdir "$R"
# rank r: host node(r/4), pid 5000 + r%4, a trace named as torch names it
# ({host}_{pid}.{ms}.pt.trace.json, rank 2's gzipped) and a window named w{r}.json
e2e_python - "$FIX/cpu.json" "$FIX/window_source.json" "$R" <<'PY'
import gzip, json, sys
import ranks
cpu, win, out = sys.argv[1:4]
for r in range(8):
    host, pid = "node%d" % (r // 4), 5000 + r % 4
    d = ranks.trace(cpu, r, pid, 8)
    name = "%s/%s_%d.1759300079000.pt.trace.json" % (out, host, pid)
    if r == 2:
        with gzip.open(name + ".gz", "wt") as f: json.dump(d, f, indent=1)
    else:
        json.dump(d, open(name, "w"), indent=1)
    w = ranks.window(win, r, pid, host)
    if r in (4, 5):  # no RANK in their environment: told apart from ranks 0, 1 by host alone
        del w["source"]["rank"], w["source"]["rank_from"]
    json.dump(w, open("%s/w%d.json" % (out, r), "w"), indent=1)
# torchrun's agent: no trace
json.dump(ranks.agent(win), open(out + "/agent.json", "w"))
PY
T6=$R/node1_5002.1759300079000.pt.trace.json
cp "$T6" "$tmp/t6.good"
head -c 1600 "$tmp/t6.good" >"$T6" # truncated, but its first events are there
mv "$R/w7.json" "$tmp/w7.json"    # rank 7's window is missing
touch -d '1 hour ago' "$R"/*.json*

key() { # key R: rank R's key
	echo "node$(($1 / 4))_$((5000 + $1 % 4)).1759300079000"
}

# run NAME ARGS...: run cuptimerge-batch; status in $rc, stdout/stderr in $tmp/out, $tmp/err
run() {
	rc=0
	"$BATCH" --no-progress "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

tcase "dry run: exit 4, a line per rank, the right windows, the failures and the launcher named"
run -n "$R"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" -eq 9 ] || fail "$(wc -l <"$tmp/out") plan lines, wanted 9: $(cat "$tmp/out")"
for r in 0 1 2 3 4 5 6; do
	grep -q "^$(key $r)	[^	]*	$R/w$r.json	$R/merged/$(key $r).merged.json.gz	merge\$" "$tmp/out" ||
		fail "rank $r is not planned with w$r.json: $(grep "$(key $r)" "$tmp/out")"
done
grep -q "^$(key 7)	.*	-	.*FAIL: no window for this trace (pid 5003, rank 7, host node1)\$" "$tmp/out" ||
	fail "rank 7's missing window is not reported: $(grep "$(key 7)" "$tmp/out")"
grep -q "^agent	-	$R/agent.json	-	no GPU work, skipped" "$tmp/out" ||
	fail "the launcher's window is not 'no GPU work': $(grep agent "$tmp/out")"
[ ! -e "$R/merged" ] || fail "a dry run made the output directory"

tcase "run: 6 merged, 2 failed (listed), exit 4"
run "$R"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 6 merged, 0 skipped, 2 failed, 1 without GPU work, [0-9.]* s\$" "$tmp/err" ||
	fail "summary: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: failed: $(key 6) $(key 7)\$" "$tmp/err" && [ -n "$(key 6)" ] ||
	grep -q "^cuptimerge-batch: failed: $(key 7) $(key 6)\$" "$tmp/err" || fail "failed keys: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: $(key 6): exit 1: " "$tmp/err" || fail "rank 6's failure: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "output on stdout: $(cat "$tmp/out")"

tcase "outputs: byte for byte a direct cuptimerge merge, nothing for the failures"
mkdir "$tmp/direct"
for r in 0 1 2 3 4 5; do
	t=$(ls "$R/$(key $r)".pt.trace.json*)
	"$CUPTIMERGE" -q --trace-name "${t##*/}" -w "$R/w$r.json" -o "$tmp/direct/$r.json.gz" "$t" ||
		fail "direct merge of rank $r: exit $?"
	cmp -s "$tmp/direct/$r.json.gz" "$R/merged/$(key $r).merged.json.gz" || fail "rank $r differs from the direct merge"
done
[ ! -e "$R/merged/$(key 6).merged.json.gz" ] || fail "rank 6 has an output"
[ ! -e "$R/merged/$(key 7).merged.json.gz" ] || fail "rank 7 has an output"
gzip -dc "$R/merged/$(key 0).merged.json.gz" | grep -q '"traceName":"node0_5000.1759300079000.pt.trace.json"' ||
	fail "traceName is not the trace's file name"

tcase "joblog: header, a line per rank, statuses, RSS, messages"
J=$R/merged/cuptimerge-batch.tsv
[ "$(head -1 "$J")" = "key	cpu_trace	window	output	exit	seconds	peak_rss_kb	message" ] || fail "header: $(head -1 "$J")"
[ "$(wc -l <"$J")" -eq 10 ] || fail "$(wc -l <"$J") lines, wanted 10"
for r in 0 1 2 3 4 5; do
	grep -q "^$(key $r)	.*	0	[0-9.]*	[1-9][0-9]*	-\$" "$J" || fail "rank $r: $(grep "^$(key $r)" "$J")"
done
grep -q "^$(key 6)	$T6	$R/w6.json	.*	1	[0-9.]*	[1-9][0-9]*	cuptimerge: .*$T6" "$J" ||
	fail "rank 6: $(grep "^$(key 6)" "$J")"
grep -q "^$(key 7)	[^	]*	-	[^	]*	-	0.000	0	no window" "$J" || fail "rank 7: $(grep "^$(key 7)" "$J")"
grep -q "^agent	-	$R/agent.json	-	-	0.000	0	no GPU work" "$J" || fail "agent: $(grep "^agent" "$J")"

tcase "re-run with the failures fixed: only the two failed ranks run"
cp "$tmp/t6.good" "$T6"
cp "$tmp/w7.json" "$R/w7.json"
cp -p "$R/merged/$(key 0).merged.json.gz" "$tmp/keep0"
run "$R"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 2 merged, 6 skipped, 0 failed, 1 without GPU work, [0-9.]* s\$" "$tmp/err" ||
	fail "summary: $(cat "$tmp/err")"
[ "$R/merged/$(key 0).merged.json.gz" -ot "$tmp/keep0" ] || [ ! "$R/merged/$(key 0).merged.json.gz" -nt "$tmp/keep0" ] ||
	fail "rank 0 was merged again"
grep -q "^$(key 0)	.*	0	0.000	0	up to date, skipped\$" "$J" || fail "rank 0 in the joblog: $(grep "^$(key 0)" "$J")"
"$CUPTIMERGE" -q --trace-name "${T6##*/}" -w "$R/w6.json" -o "$tmp/direct/6.json.gz" "$T6"
cmp -s "$tmp/direct/6.json.gz" "$R/merged/$(key 6).merged.json.gz" || fail "rank 6 differs from the direct merge"

tcase "re-run with nothing to do, then --force: all eight again"
run "$R"
grep -q "^cuptimerge-batch: 0 merged, 8 skipped, 0 failed" "$tmp/err" || fail "summary: $(cat "$tmp/err")"
run --force -j 3 "$R"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 8 merged, 0 skipped, 0 failed" "$tmp/err" || fail "--force: $(cat "$tmp/err")"
cmp -s "$tmp/direct/0.json.gz" "$R/merged/$(key 0).merged.json.gz" || fail "rank 0 differs after --force"

tcase "a window changed after its merge: that rank runs again"
touch "$R/w3.json"
run "$R"
grep -q "^cuptimerge-batch: 1 merged, 7 skipped, 0 failed" "$tmp/err" || fail "summary: $(cat "$tmp/err")"

tcase "manifest: -O and the output column, a thread map as the third column"
printf 'key\tcpu trace\twindow or map\toutput\n' >"$tmp/m.tsv"
printf 'r0\t%s\t%s\t\n' "$R/$(key 0).pt.trace.json" "$R/w0.json" >>"$tmp/m.tsv"
printf 'rep\t%s\t%s\t%s\n' "$FIX/threads_full.json" "$FIX/thread_map.json" "$tmp/mo/rep.json" >>"$tmp/m.tsv"
printf 'gone\t%s\t%s\t\n' "$R/$(key 1).pt.trace.json" "$R/nowhere.json" >>"$tmp/m.tsv"
run -m "$tmp/m.tsv" -O "$tmp/mo"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
cmp -s "$tmp/direct/0.json.gz" "$tmp/mo/r0.merged.json.gz" || fail "r0 differs from the direct merge"
"$CUPTIMERGE" -q --trace-name threads_full.json -t "$FIX/thread_map.json" "$FIX/threads_full.json" >"$tmp/rep.json"
cmp -s "$tmp/rep.json" "$tmp/mo/rep.json" || fail "the repair differs from a direct cuptimerge -t"
grep -q "^cuptimerge-batch: gone: window $R/nowhere.json: No such file or directory\$" "$tmp/err" ||
	fail "the missing window: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: failed: gone\$" "$tmp/err" || fail "failed keys: $(cat "$tmp/err")"

tcase "time tells an hour-earlier window of the same process apart; an exact copy is ambiguous"
mkdir "$tmp/tm" "$tmp/amb"
cp "$R/$(key 0).pt.trace.json" "$R/w0.json" "$tmp/tm/"
python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))
w["source"]["start_ns"] -= 3600 * 10**9
w["source"]["end_ns"] -= 3600 * 10**9
json.dump(w, open(sys.argv[2], "w"))' "$R/w0.json" "$tmp/tm/earlier.json"
run -n "$tmp/tm"
grep -q "^$(key 0)	[^	]*	$tmp/tm/w0.json	.*	merge\$" "$tmp/out" || fail "not paired with w0.json: $(cat "$tmp/out")"
grep -q "^earlier	-	$tmp/tm/earlier.json	-	FAIL: no trace for this window (pid 5000, rank 0, host node0, [0-9]* GPU events)\$" \
	"$tmp/out" || fail "the earlier window: $(cat "$tmp/out")"
cp "$R/$(key 0).pt.trace.json" "$R/w0.json" "$tmp/amb/"
cp "$R/w0.json" "$tmp/amb/w0copy.json"
run -n "$tmp/amb"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4"
grep -q "FAIL: 2 windows fit this trace (pid 5000, rank 0, host node0): $tmp/amb/w0.json, $tmp/amb/w0copy.json: ambiguous" \
	"$tmp/out" || fail "ambiguity: $(cat "$tmp/out")"
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "the ambiguous windows are reported again: $(cat "$tmp/out")"

tcase "--shard K/N: shard K holds the plan's lines K, K+N, ...; each rank runs in exactly one shard"
run -n "$R"
[ $rc -eq 0 ] || fail "full plan: exit $rc: $(cat "$tmp/err")"
cp "$tmp/out" "$tmp/plan.all"
[ "$(wc -l <"$tmp/plan.all")" -eq 9 ] || fail "the plan has $(wc -l <"$tmp/plan.all") lines, wanted 9"
for k in 0 1 2; do
	run -n --shard "$k/3" "$R"
	[ $rc -eq 0 ] || fail "--shard $k/3: exit $rc: $(cat "$tmp/err")"
	awk -v k=$k '(NR - 1) % 3 == k' "$tmp/plan.all" | cmp -s - "$tmp/out" ||
		fail "--shard $k/3 -n: $(cat "$tmp/out")"
done
rm -f "$tmp"/sj*.tsv
for k in 0 1; do
	run --force --shard "$k/2" --joblog "$tmp/sj$k.tsv" "$R"
	[ $rc -eq 0 ] || fail "--shard $k/2: exit $rc: $(cat "$tmp/err")"
done
# 9 plan lines: shard 0 has 5 (one of them maybe the launcher's), shard 1 has 4
[ "$(($(wc -l <"$tmp/sj0.tsv") + $(wc -l <"$tmp/sj1.tsv")))" -eq 11 ] || fail "joblogs: $(cat "$tmp"/sj*.tsv)"
cut -f1 "$tmp/sj0.tsv" "$tmp/sj1.tsv" | grep -v '^key$' | sort >"$tmp/keys.sharded"
cut -f1 "$tmp/plan.all" | sort | cmp -s - "$tmp/keys.sharded" || fail "the shards' keys are not the plan's, once each"
run --shard 1/2 --joblog "$tmp/sj1.tsv" "$R"
grep -q "^cuptimerge-batch: 0 merged, 4 skipped, 0 failed, [0-9.]* s\$" "$tmp/err" || fail "shard 1 again: $(cat "$tmp/err")"
run --shard 0/2 --joblog "$tmp/sj1.tsv" "$R"
grep -q "^cuptimerge-batch: 4 merged, 0 skipped, 0 failed, 1 without GPU work, [0-9.]* s\$" "$tmp/err" ||
	fail "shard 0 with shard 1's joblog: $(cat "$tmp/err")"
for bad in 3/3 1 0/0 /2 1/ -1/2 1/2x 2/1000001; do
	run -n --shard "$bad" "$R"
	[ $rc -eq 2 ] || fail "--shard $bad: exit $rc, wanted 2"
done

tcase "usage errors: exit 2"
run
[ $rc -eq 2 ] || fail "no operands: exit $rc"
run -j 0 "$R"
[ $rc -eq 2 ] || fail "-j 0: exit $rc"
run -m "$tmp/m.tsv" "$R"
[ $rc -eq 2 ] || fail "a manifest and a directory: exit $rc"

tcase "no cuptimerge to run: exit 3"
run --force --cuptimerge "$tmp/none" "$R"
[ $rc -eq 3 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: $tmp/none: cannot run: " "$tmp/err" || fail "message: $(cat "$tmp/err")"
finish
