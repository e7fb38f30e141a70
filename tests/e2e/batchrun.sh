#!/bin/sh
# batchrun.sh - cuptimerge-batch's runs as a cluster user meets them (issue
# 28): resume however the paths are typed (P5); options after "--" reach
# each merge, and a merge's refusal names the batch's way to override (P6);
# planning reads a plain window's head and tail only (P7); SIGTERM (Slurm's
# time limit) says what finished and what was stopped (P8); a manifest on
# standard input (P13).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
[ -x "$BATCH" ] || skip_all "no $BATCH"
BATCH=$(cd "$(dirname "$BATCH")" && pwd)/${BATCH##*/}
CUPTIMERGE=$(cd "$(dirname "$CUPTIMERGE")" && pwd)/${CUPTIMERGE##*/}
FIX=$(cd "$FIX" && pwd)

. "$srcdir/tests/e2e/mkranks.sh"

# summary FILE: the batch's summary line in FILE, the time left out
summary() {
	sed -n 's/^cuptimerge-batch: \([0-9]* merged, .*\), [0-9.]* s$/\1/p' "$1"
}

# P5: the joblog compared output paths as strings: the same directories
# typed another way merged every rank again.  Three spellings, from the
# same directory: relative, absolute, and ./ with trailing slashes.
tcase "P5: resume skips every rank however the directories are typed"
mkranks "$tmp/x" 3 '{host}_{pid}.1759300079000.pt.trace.json'
touch -d '1 hour ago' "$tmp"/x/traces/* "$tmp"/x/windows/*
(cd "$tmp" && "$BATCH" -q x/traces x/windows 2>/dev/null) || fail "first run: exit $?"
n=1
for spelling in "$tmp/x/traces $tmp/x/windows" "./x/traces/ ./x/windows/" "x/traces x/windows"; do
	# shellcheck disable=SC2086 # two words on purpose
	(cd "$tmp" && "$BATCH" --no-progress $spelling) 2>"$tmp/err" || fail "$spelling: exit $?: $(cat "$tmp/err")"
	[ "$(summary "$tmp/err")" = "0 merged, 3 skipped, 0 failed" ] || fail "$spelling: $(cat "$tmp/err")"
	n=$((n + 1))
done
[ "$(ls "$tmp/x/traces/merged")" = "cuptimerge-batch.tsv
gpu-node7_5000.1759300079000.merged.json.gz
gpu-node7_5001.1759300079000.merged.json.gz
gpu-node7_5002.1759300079000.merged.json.gz" ] || fail "outputs: $(ls "$tmp/x/traces/merged")"

# P6: the batch's --force means "merge again", and nothing reached a
# merge: a rank whose merge says "(use --force to merge anyway)" could not
# be merged by the batch at all, nor written with -z9.  A manifest pairs
# rank 0's trace with rank 1's window (another pid: the merge refuses it).
tcase "P6: options after -- reach each merge (--force, -z9); a refusal names the batch's way"
mkranks "$tmp/p6" 2 '{host}_{pid}.1759300079000.pt.trace.json'
t0=$tmp/p6/traces/gpu-node7_5000.1759300079000.pt.trace.json
# (rank 1's window says rank 0 in its "source", so that the plan's own rank
# check (P4) lets it through to the merge's pid check)
python3 -c 'import json, sys
w = json.load(open(sys.argv[1])); w["source"]["rank"] = 0; json.dump(w, open(sys.argv[1], "w"))' "$tmp/p6/windows/w1.json"
printf 'key\ttrace\twindow\toutput\nwrong\t%s\t%s\t\n' "$t0" "$tmp/p6/windows/w1.json" >"$tmp/p6/m.tsv"
rc=0
"$BATCH" --no-progress -m "$tmp/p6/m.tsv" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
hint="(to merge anyway, run the batch again with -- --force: cuptimerge-batch(1))"
grep -qF "cuptimerge-batch: wrong: exit 1: cuptimerge: $tmp/p6/windows/w1.json: the window's API records come from pid 5001, which has no events in the CPU trace (pids 5000, 9999): a window of another process or rank? $hint" \
	"$tmp/err" || fail "stderr: $(cat "$tmp/err")"
grep -qF "	1	" "$tmp/p6/merged/cuptimerge-batch.tsv" && grep -qF "$hint" "$tmp/p6/merged/cuptimerge-batch.tsv" ||
	fail "joblog: $(cat "$tmp/p6/merged/cuptimerge-batch.tsv")"
[ ! -e "$tmp/p6/merged/wrong.merged.json.gz" ] || fail "an output for the refused rank"
rc=0
"$BATCH" --no-progress -m "$tmp/p6/m.tsv" -- --force -z9 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "with -- --force -z9: exit $rc: $(cat "$tmp/err")"
[ "$(summary "$tmp/err")" = "1 merged, 0 skipped, 0 failed" ] || fail "summary: $(cat "$tmp/err")"
# the output is the direct merge's with --force -z9, and not the default level's
"$CUPTIMERGE" -q --force -z9 --trace-name "${t0##*/}" -w "$tmp/p6/windows/w1.json" -o "$tmp/z9.json.gz" "$t0" ||
	fail "direct -z9"
"$CUPTIMERGE" -q --force --trace-name "${t0##*/}" -w "$tmp/p6/windows/w1.json" -o "$tmp/zdef.json.gz" "$t0" ||
	fail "direct"
cmp -s "$tmp/z9.json.gz" "$tmp/p6/merged/wrong.merged.json.gz" || fail "the output is not the direct --force -z9 merge's"
cmp -s "$tmp/zdef.json.gz" "$tmp/z9.json.gz" && fail "-z9 makes the same bytes as the default: the test shows nothing"
grep -q "merged anyway: --force" "$tmp/p6/merged/cuptimerge-batch.tsv" || fail "joblog: $(cat "$tmp/p6/merged/cuptimerge-batch.tsv")"

tcase "P6: a directory named after -- is an option of the merges, not a directory of the batch"
rc=0
"$BATCH" -n "$tmp/p6/traces" -- "$tmp/p6/windows" >"$tmp/out" 2>&1 || rc=$?
# (it was planned without windows, each rank "no window", exit 4; an
# operand after -- is refused now, as every merge would refuse it: cli11)
[ $rc -eq 2 ] || fail "exit $rc, wanted 2 (an operand after --): $(cat "$tmp/out")"
grep -q "^cuptimerge-batch: -- $tmp/p6/windows: an operand; the batch gives each merge its trace" "$tmp/out" ||
	fail "$(cat "$tmp/out")"

# P13: "-m -" was refused (no file "-"), and "-m /dev/stdin" planned the
# outputs into /dev/merged/.  A manifest that is no regular file puts them
# in ./merged.
tcase "P13: -m - and -m /dev/stdin read the manifest from standard input, outputs in ./merged"
mkranks "$tmp/p13" 1 '{host}_{pid}.1759300079000.pt.trace.json'
t0=$tmp/p13/traces/gpu-node7_5000.1759300079000.pt.trace.json
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t\n' "$t0" "$tmp/p13/windows/w0.json" >"$tmp/p13/m.tsv"
mkdir "$tmp/p13/run"
for m in - /dev/stdin; do
	rc=0
	(cd "$tmp/p13/run" && "$BATCH" -n -m "$m" <"$tmp/p13/m.tsv") >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "-m $m: exit $rc: $(cat "$tmp/err")"
	[ "$(cat "$tmp/out")" = "r0	$t0	$tmp/p13/windows/w0.json	merged/r0.merged.json.gz	merge" ] ||
		fail "-m $m: $(cat "$tmp/out" "$tmp/err")"
done
(cd "$tmp/p13/run" && "$BATCH" -q -m - <"$tmp/p13/m.tsv" 2>/dev/null) || fail "run: exit $?"
[ -s "$tmp/p13/run/merged/r0.merged.json.gz" ] && [ -s "$tmp/p13/run/merged/cuptimerge-batch.tsv" ] ||
	fail "no ./merged output: $(ls -R "$tmp/p13/run")"
# a regular manifest keeps its outputs beside it, as before
"$BATCH" -n -m "$tmp/p13/m.tsv" >"$tmp/out" 2>"$tmp/err" || fail "file: exit $?"
grep -q "	$tmp/p13/merged/r0.merged.json.gz	merge\$" "$tmp/out" || fail "file: $(cat "$tmp/out")"
# a bad line names standard input
printf 'key\nbad line\n' | "$BATCH" -n -m - >"$tmp/out" 2>"$tmp/err" && fail "bad line accepted"
grep -q "^cuptimerge-batch: <stdin>: line 2: want key" "$tmp/err" || fail "bad line: $(cat "$tmp/err")"

# P8: SIGTERM, as Slurm sends at the time limit: the merges it stops are
# recorded (F23), and stderr says what finished and what was stopped, not
# "exit 143" failures.  Four ranks, two at a time: k0 merges; k1, k2 and
# k3's traces are FIFOs no one writes, so k1 and k2 hang and k3 never
# starts.  A wrapper notes each merge that starts.
tcase "P8: SIGTERM says what merged, what was interrupted and what never started; the joblog agrees"
d=$tmp/p8
mkranks "$d" 1 '{host}_{pid}.1759300079000.pt.trace.json'
touch -d '1 hour ago' "$d"/traces/* "$d"/windows/*
printf 'key\tcpu trace\twindow or map\toutput\n' >"$d/m.tsv"
printf 'k0\t%s\t%s\t\n' "$d/traces/gpu-node7_5000.1759300079000.pt.trace.json" "$d/windows/w0.json" >>"$d/m.tsv"
for r in 1 2 3; do
	mkfifo "$d/fifo$r"
	printf 'k%s\t%s\t%s\t\n' $r "$d/fifo$r" "$d/windows/w0.json" >>"$d/m.tsv"
done
cat >"$d/wrap" <<EOW
#!/bin/sh
echo \$\$ >>"$d/started"
exec "$CUPTIMERGE" "\$@"
EOW
chmod +x "$d/wrap"
"$BATCH" --no-progress -j 2 --cuptimerge "$d/wrap" -m "$d/m.tsv" -O "$d/out" >"$tmp/out" 2>"$tmp/err" &
b=$!
i=0
while [ "$(cat "$d/started" 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 1200 ]; do
	i=$((i + 1))
	sleep 0.05
done
kill -TERM $b
rc=0
{ wait $b; } 2>/dev/null || rc=$?
[ $rc -eq 143 ] || fail "exit $rc, wanted 143: $(cat "$tmp/err")"
[ "$(summary "$tmp/err")" = "1 merged, 0 skipped, 0 failed, 2 interrupted, 1 not started" ] || fail "summary: $(cat "$tmp/err")"
[ "$(tail -n 1 "$tmp/err")" = "cuptimerge-batch: stopped by SIGTERM: 1 merged before it; interrupted: k1 k2; not started: k3; the joblog records every rank, and the same command resumes the rest" ] ||
	fail "last line: $(cat "$tmp/err")"
grep -q "exit 143\|failed:" "$tmp/err" && fail "the interrupted ranks are called failed: $(cat "$tmp/err")"
J=$d/out/cuptimerge-batch.tsv
[ "$(wc -l <"$J")" -eq 5 ] || fail "joblog: $(cat "$J")"
grep -q "^k0	.*	0	[0-9.]*	[0-9]*	-\$" "$J" || fail "k0: $(cat "$J")"
grep -q "^k3	.*	-	0.000	0	not started: cuptimerge-batch got SIGTERM\$" "$J" || fail "k3: $(cat "$J")"
[ "$(grep -c "	143	.*	interrupted: cuptimerge-batch got SIGTERM\$" "$J")" -eq 2 ] || fail "k1, k2: $(cat "$J")"
# the next run resumes: k0 is done, the others run
"$BATCH" -n -m "$d/m.tsv" -O "$d/out" >"$tmp/out" 2>&1 || true
[ "$(cut -f1,5 "$tmp/out" | tr '\t\n' ':,')" = "k0:up to date, skipped,k1:merge,k2:merge,k3:merge," ] || fail "resume: $(cat "$tmp/out")"

# P7: planning read every window in full (1.4 s for two 118 MB windows).
# A plain window that ends with its "source" is read at its head and its
# last 64 KiB only.  Shown without timing: rank 0's window has a 2 GiB
# hole of NUL bytes (sparse, no disk) inside its "events"; the full scan
# would call it "not JSON", the plan pairs it.  Its merge would fail: the
# plan is all this case runs.
tcase "P7: the plan reads a plain window's head and tail, not the 2 GiB between"
mkranks "$tmp/p7" 1 '{host}_{pid}.1759300079000.pt.trace.json'
python3 - "$tmp/p7/windows/w0.json" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("}, {") + 3            # between two events
with open(p, "w") as f:
    f.write(s[:i])
    f.seek(i + 2**31)              # a hole: NUL bytes, no blocks
    f.write(s[i:])
PY
rc=0
"$BATCH" -n "$tmp/p7/traces" "$tmp/p7/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/out" "$tmp/err")"
grep -q "	$tmp/p7/windows/w0.json	.*	merge\$" "$tmp/out" || fail "$(cat "$tmp/out" "$tmp/err")"
# a window left without a trace is read in full: its GPU work is counted
rm "$tmp/p7/traces/"*
rc=0
"$BATCH" -n "$tmp/p7/traces" "$tmp/p7/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/out" "$tmp/err")"
grep -q "	FAIL: a damaged window (pid 5000, rank 0, host gpu-node7) and no trace for it: not JSON at byte " "$tmp/out" ||
	fail "left over: $(cat "$tmp/out")"
rm -r "$tmp/p7"

finish
