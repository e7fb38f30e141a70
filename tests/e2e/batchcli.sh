#!/bin/sh
# batchcli.sh - cuptimerge-batch's command line and manifest against what a
# user would expect (cli10): --format and -z after "--" against the
# outputs' names, a manifest without its header line, paths the joblog (a
# TSV) cannot hold, a trace file name that is not UTF-8, one window fitting
# two traces, an output or a joblog that is an input, an output of -.
# (Options given twice are in options.sh.)  And what every merge would
# refuse after "--" (cli11).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
[ -x "$BATCH" ] || skip_all "no $BATCH"
CM_ABS=$(cd "$(dirname "$CUPTIMERGE")" && pwd)/${CUPTIMERGE##*/}

. "$srcdir/tests/e2e/mkranks.sh"
# ranks DIR N: N ranks of host node0, pids 5000.., traces in DIR/traces,
# windows DIR/windows/w{r}.json, an hour old (outputs are newer)
ranks() {
	mkranks "$1" "$2" 'node0_{pid}.1759300079000.pt.trace.json' node0
	touch -d '1 hour ago' "$1"/traces/* "$1"/windows/*
}
key() { # key R: rank R's key
	echo "node0_$((5000 + $1)).1759300079000"
}
trace() { # trace DIR R: rank R's trace in DIR
	echo "$1/traces/$(key "$2").pt.trace.json"
}
# run ARGS...: the batch, its stdout and stderr in $tmp/out and $tmp/err,
# its status in $rc
run() {
	rc=0
	"$BATCH" --no-progress --cuptimerge="$CM_ABS" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

# A manifest naming .pftrace outputs, with -- --format=json, wrote JSON into
# them (and -- --format=perfetto was refused even there, where the names
# say Perfetto).  The output's name says its format: a --format that
# contradicts one is refused before anything runs.
tcase "manifest: -- --format=json with a .pftrace output is refused, nothing run"
ranks "$tmp/fm" 2
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t%s\nr1\t%s\t%s\t%s\n' \
	"$(trace "$tmp/fm" 0)" "$tmp/fm/windows/w0.json" "$tmp/fm/out/r0.json.gz" \
	"$(trace "$tmp/fm" 1)" "$tmp/fm/windows/w1.json" "$tmp/fm/out/r1.pftrace" >"$tmp/fm/m.tsv"
for how in "--format=json" "--form json"; do
	# shellcheck disable=SC2086 # $how is split on purpose
	run -m "$tmp/fm/m.tsv" -- $how
	[ $rc -eq 2 ] || fail "$how: exit $rc, wanted 2: $(cat "$tmp/err")"
	[ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: -- $how: the output $tmp/fm/out/r1.pftrace is named for Perfetto's protobuf, and would hold JSON (the name of an output gives its format: leave --format out)" ] ||
		fail "$how: message: $(cat "$tmp/err")"
	[ ! -e "$tmp/fm/out" ] || fail "$how: ran anyway: $(ls "$tmp/fm/out")"
done
# and -z after -- wrote gzip into an output named x.json
tcase "manifest: -- -z with an output not named .gz is refused, nothing run; with .gz names it runs"
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t%s\n' \
	"$(trace "$tmp/fm" 0)" "$tmp/fm/windows/w0.json" "$tmp/fm/z/r0.json" >"$tmp/fm/z.tsv"
for how in "-z9" "-qz" "--gzip=3" "--gz"; do
	# shellcheck disable=SC2086 # $how is one word, unquoted as above
	run -m "$tmp/fm/z.tsv" -- $how
	[ $rc -eq 2 ] && [ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: -- $how: the output $tmp/fm/z/r0.json is not named .gz, and would hold gzip (the name of an output gives its format: leave -z out, or name it .gz)" ] ||
		fail "$how: exit $rc: $(cat "$tmp/err")"
	[ ! -e "$tmp/fm/z" ] || fail "$how: ran anyway"
done
sed 's/r0\.json$/r0.json.gz/' "$tmp/fm/z.tsv" >"$tmp/fm/zgz.tsv"
run -m "$tmp/fm/zgz.tsv" -- -z9
[ $rc -eq 0 ] && gzip -t "$tmp/fm/z/r0.json.gz" || fail "with a .gz name: exit $rc: $(cat "$tmp/err")"
run -m "$tmp/fm/z.tsv" -- -j 2 -q
[ $rc -eq 0 ] && [ "$(head -c 1 "$tmp/fm/z/r0.json")" = "{" ] || fail "without -z: exit $rc: $(cat "$tmp/err")"
tcase "manifest: -- --format=perfetto with .pftrace outputs runs; with a .json.gz one it is refused"
printf 'key\ttrace\twindow\toutput\nr1\t%s\t%s\t%s\n' \
	"$(trace "$tmp/fm" 1)" "$tmp/fm/windows/w1.json" "$tmp/fm/out/r1.pftrace" >"$tmp/fm/p.tsv"
run -m "$tmp/fm/p.tsv" -- --format=perfetto
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
[ -s "$tmp/fm/out/r1.pftrace" ] && [ "$(head -c 1 "$tmp/fm/out/r1.pftrace")" != "{" ] || fail "no protobuf in r1.pftrace"
run -m "$tmp/fm/m.tsv" -- --format=perfetto
[ $rc -eq 2 ] && grep -qF "cuptimerge-batch: -- --format=perfetto: the output $tmp/fm/out/r0.json.gz is named for JSON, and would hold Perfetto's protobuf" "$tmp/err" ||
	fail "exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/fm/out/r0.json.gz" ] || fail "r0 merged anyway"

# A manifest without its header line lost its first rank in silence (line 1
# was skipped whatever it held); a header after a comment or a blank line
# was read as a rank that failed.  The header is the first line that is not
# blank or a comment, and one whose trace and window are files is refused.
tcase "manifest: a first line that is a rank, not the header, is a usage error, nothing run"
ranks "$tmp/hd" 2
printf 'r0\t%s\t%s\t%s\nr1\t%s\t%s\t%s\n' \
	"$(trace "$tmp/hd" 0)" "$tmp/hd/windows/w0.json" "$tmp/hd/out/r0.json.gz" \
	"$(trace "$tmp/hd" 1)" "$tmp/hd/windows/w1.json" "$tmp/hd/out/r1.json.gz" >"$tmp/hd/m.tsv"
run -m "$tmp/hd/m.tsv"
[ $rc -eq 2 ] || fail "exit $rc, wanted 2: $(cat "$tmp/err")"
[ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: $tmp/hd/m.tsv: line 1: a rank (its cpu trace and window are files), where the header line goes: start the manifest with a header (key, cpu trace, window or map, output)" ] ||
	fail "message: $(cat "$tmp/err")"
[ ! -e "$tmp/hd/out" ] || fail "ran anyway: $(ls "$tmp/hd/out")"
tcase "manifest: the header may come after comments and blank lines"
{ printf '# made by hand\n\nkey\ttrace\twindow\toutput\n'; tail -n 1 "$tmp/hd/m.tsv"; } >"$tmp/hd/c.tsv"
run -m "$tmp/hd/c.tsv"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
[ -s "$tmp/hd/out/r1.json.gz" ] || fail "r1 not merged: $(cat "$tmp/err")"
J=$tmp/hd/merged/cuptimerge-batch.tsv
[ -s "$J" ] && ! grep -q "^key	trace	" "$J" || fail "the header was taken for a rank"

# A tab in the DIR or -O path itself went into every joblog line (cli9 made
# a file of such a name fail its rank): the lines split, and the next run
# found no rank done.  Such a directory is a usage error; a manifest's path
# of one fails that rank, its joblog line whole.
tcase "a tab or a line break in DIR or -O is a usage error, nothing run"
ranks "$tmp/tb" 1
mkdir "$tmp/tb/a	b"
cp "$(trace "$tmp/tb" 0)" "$tmp/tb/windows/w0.json" "$tmp/tb/a	b/"
run "$tmp/tb/a	b"
[ $rc -eq 2 ] || fail "DIR: exit $rc, wanted 2: $(cat "$tmp/err")"
[ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: DIR $tmp/tb/a?b: its name holds a tab, a line break or another control character, which the joblog cannot record: rename it" ] ||
	fail "DIR: message: $(cat "$tmp/err")"
[ ! -e "$tmp/tb/a	b/merged" ] || fail "DIR: ran anyway"
run -O "$tmp/tb/o
ut" "$tmp/tb/traces" "$tmp/tb/windows"
[ $rc -eq 2 ] && [ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: -O $tmp/tb/o?ut: its name holds a tab, a line break or another control character, which the joblog cannot record: rename it" ] ||
	fail "-O: exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/tb/o
ut" ] || fail "-O: ran anyway"
tcase "a manifest's default output under a tab fails its rank; the joblog's lines stay whole"
# (a manifest's own columns cannot hold a tab: its directory can, and the
# default outputs are made beside it)
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t\nr1\t%s\t%s\t%s\n' \
	"$(trace "$tmp/tb" 0)" "$tmp/tb/windows/w0.json" \
	"$(trace "$tmp/tb" 0)" "$tmp/tb/windows/w0.json" "$tmp/tb/out/r1.json.gz" >"$tmp/tb/a	b/m.tsv"
run -m "$tmp/tb/a	b/m.tsv"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
J="$tmp/tb/a	b/merged/cuptimerge-batch.tsv"
[ "$(wc -l <"$J")" -eq 3 ] && [ "$(awk -F'\t' 'NF != 8' "$J" | wc -l)" -eq 0 ] || fail "joblog: $(cat -A "$J")"
grep -q "^r1	.*	0	" "$J" || fail "r1 not merged: $(cat -A "$J")"
grep -qF "$tmp/tb/a?b/merged/r0.merged.json.gz	-	0.000	0	a path of it holds a tab, a line break or another control character, which the joblog cannot record: rename it" "$J" ||
	fail "r0's line: $(cat -A "$J")"

# A trace whose file name is not UTF-8 failed its rank: the batch named the
# trace after its file (--trace-name), which cuptimerge refuses unless it is
# UTF-8.  Its stray bytes are U+FFFD in traceName now, and the rank merges.
tcase "a trace file name that is not UTF-8 merges, its traceName with U+FFFD"
ranks "$tmp/u8" 1
bad=$(printf 'r\377x')
mv "$(trace "$tmp/u8" 0)" "$tmp/u8/traces/$bad.pt.trace.json"
run "$tmp/u8/traces" "$tmp/u8/windows"
[ $rc -eq 0 ] || fail "exit $rc, wanted 0: $(cat "$tmp/err")"
out=$tmp/u8/traces/merged/$bad.merged.json.gz
[ -s "$out" ] || fail "no output: $(ls "$tmp/u8/traces/merged")"
gzip -dc "$out" 2>/dev/null | grep -qF "\"traceName\":\"$(printf 'r\357\277\275x').pt.trace.json\"" ||
	fail "traceName: $(gzip -dc "$out" | grep -o '"traceName":"[^"]*"')"

# Two traces of one pid whose first events both lie in one window's span (a
# profiler that wrote a trace a cycle, a pid used again) both paired with
# that window: every output got all of its GPU work.  Refused now, unless
# the window is cut to each trace (--clip, --steps, --range).
tcase "a window that fits two traces fails both, unless --clip; one trace and its window still pair"
ranks "$tmp/w2" 1
e2e_python - "$(trace "$tmp/w2" 0)" "$tmp/w2/traces/$(key 0 | sed 's/9000$/9500/').pt.trace.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["baseTimeNanoseconds"] += 500000000  # half a second later, in the same window
json.dump(d, open(sys.argv[2], "w"))
PY
run -n "$tmp/w2/traces" "$tmp/w2/windows"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/out" "$tmp/err")"
[ "$(grep -c "	FAIL: the window $tmp/w2/windows/w0.json fits 2 traces ($(trace "$tmp/w2" 0), " "$tmp/out")" -eq 2 ] ||
	fail "plan: $(cat "$tmp/out")"
run -n --sync "$tmp/w2/traces" "$tmp/w2/windows"
[ $rc -eq 4 ] || fail "--sync: exit $rc, wanted 4: $(cat "$tmp/out" "$tmp/err")"
run -n --clip "$tmp/w2/traces" "$tmp/w2/windows"
[ $rc -eq 0 ] && [ "$(grep -c "	merge\$" "$tmp/out")" -eq 2 ] || fail "--clip: exit $rc: $(cat "$tmp/out" "$tmp/err")"
run -n "$tmp/w2/traces" "$tmp/w2/windows" -- --clip
[ $rc -eq 0 ] && [ "$(grep -c "	merge\$" "$tmp/out")" -eq 2 ] || fail "-- --clip: exit $rc: $(cat "$tmp/out" "$tmp/err")"
rm "$tmp/w2/traces/$(key 0 | sed 's/9000$/9500/').pt.trace.json"
run -n "$tmp/w2/traces" "$tmp/w2/windows"
[ $rc -eq 0 ] && [ "$(grep -c "	merge\$" "$tmp/out")" -eq 1 ] || fail "one trace: exit $rc: $(cat "$tmp/out" "$tmp/err")"

# A manifest line whose output was its own trace (or window, or another
# rank's trace) replaced that input with the merge: the trace was lost, and
# the next run failed as "already merged".  Such a rank fails, nothing of
# it run, however the path is typed.
tcase "manifest: an output that is a rank's cpu trace or window fails, the input kept"
ranks "$tmp/oi" 2
t0=$(trace "$tmp/oi" 0) t1=$(trace "$tmp/oi" 1)
sum0=$(cksum <"$t0")
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t%s\nr1\t%s\t%s\t%s\nr2\t%s\t%s\t%s\n' \
	"$t0" "$tmp/oi/windows/w0.json" "$tmp/oi/traces/../traces/$(key 0).pt.trace.json" \
	"$t1" "$tmp/oi/windows/w1.json" "$tmp/oi/windows/w0.json" \
	"$t1" "$tmp/oi/windows/w1.json" "$tmp/oi/windows/./w1.json" >"$tmp/oi/m.tsv"
run -m "$tmp/oi/m.tsv"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
[ "$(cksum <"$t0")" = "$sum0" ] || fail "the trace was replaced"
grep -qx "cuptimerge-batch: r0: the output is its own cpu trace: the merge would replace it" "$tmp/err" &&
	grep -qx "cuptimerge-batch: r1: the output is key r0's window: the merge would replace it" "$tmp/err" &&
	grep -qx "cuptimerge-batch: r2: the output is its own window: the merge would replace it" "$tmp/err" ||
	fail "messages: $(cat "$tmp/err")"

# A manifest output of "-" (cuptimerge -o -: standard output, /dev/null for
# each merge) was found out only after its merge, as one that "made no
# output".  It fails its rank when the manifest is read, as the plan says.
tcase "manifest: an output of - fails its rank before any merge, the others merged"
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t-\nr1\t%s\t%s\t%s\n' \
	"$t0" "$tmp/oi/windows/w0.json" "$t1" "$tmp/oi/windows/w1.json" "$tmp/oi/r1.json" >"$tmp/oi/dash.tsv"
dash_msg="the output - means standard output, not a file: each merge runs with its own (give a file's name)"
run -n -m "$tmp/oi/dash.tsv" -O "$tmp/oi/dash"
[ $rc -eq 4 ] && grep -q "^r0	.*	-	FAIL: $dash_msg\$" "$tmp/out" || fail "plan: exit $rc: $(cat "$tmp/out" "$tmp/err")"
run -m "$tmp/oi/dash.tsv" -O "$tmp/oi/dash"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
grep -qx "cuptimerge-batch: r0: $dash_msg" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ -s "$tmp/oi/r1.json" ] || fail "r1 was not merged: $(cat "$tmp/err")"

# --joblog naming a trace, a window or the manifest rewrote it as the
# joblog: the input was lost.  A usage error, nothing run.
tcase "--joblog naming an input or the manifest is a usage error, the file kept"
sum1=$(cksum <"$t1")
run --joblog="$tmp/oi/traces/./$(key 1).pt.trace.json" "$tmp/oi/traces" "$tmp/oi/windows"
[ $rc -eq 2 ] && [ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: the joblog $tmp/oi/traces/./$(key 1).pt.trace.json is key $(key 1)'s cpu trace, which it would replace" ] ||
	fail "trace: exit $rc: $(cat "$tmp/err")"
[ "$(cksum <"$t1")" = "$sum1" ] || fail "the trace was replaced"
cp "$tmp/oi/m.tsv" "$tmp/oi/m2.tsv"
run -m "$tmp/oi/m2.tsv" --joblog="$tmp/oi/m2.tsv"
[ $rc -eq 2 ] && [ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: the joblog $tmp/oi/m2.tsv is the manifest, which it would replace" ] ||
	fail "manifest: exit $rc: $(cat "$tmp/err")"
cmp -s "$tmp/oi/m.tsv" "$tmp/oi/m2.tsv" || fail "the manifest was replaced"

# What every merge refuses, or what makes every merge do nothing, after
# "--" (cli11): the batch ran every rank to find out, and ended with one
# failure a rank (a second --steps, -o, --split), or with "merged" ranks and
# no file (-- --help).  One usage line now, before anything runs.
ranks "$tmp/xo" 2
refused() { # refused LINE ARGS...: the batch on $tmp/xo with ARGS says LINE, status 2, nothing run
	want=$1
	shift
	rm -rf "$tmp/xo/merged"
	run -O "$tmp/xo/merged" "$@"
	[ $rc -eq 2 ] || fail "$*: exit $rc, wanted 2: $(cat "$tmp/err")"
	[ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: $want" ] || fail "$*: says: $(cat "$tmp/err")"
	[ ! -e "$tmp/xo/merged" ] || fail "$*: ran anyway"
}
tcase "a cut after -- that contradicts the batch's or another: one usage line, nothing run"
refused "--steps=1 and -- --steps=2: --steps and --range: one of them, once" \
	--steps=1 "$tmp/xo/traces" "$tmp/xo/windows" -- --steps=2
refused "--range=0,10 and -- --st 1: --steps and --range: one of them, once" \
	--range=0,10 "$tmp/xo/traces" "$tmp/xo/windows" -- --force --st 1
refused "--clip and -- --range 0,5: --clip and --steps/--range do not go together (those cut the window too)" \
	--clip "$tmp/xo/traces" "$tmp/xo/windows" -- --range 0,5
refused "--steps=1 and -- --clip: --clip and --steps/--range do not go together (those cut the window too)" \
	--steps=1 "$tmp/xo/traces" "$tmp/xo/windows" -- --clip
refused "-- --clip and -- --steps=3: --clip and --steps/--range do not go together (those cut the window too)" \
	"$tmp/xo/traces" "$tmp/xo/windows" -- --clip -q --steps=3
tcase "what the batch gives each merge, or what merges nothing, after --: one usage line, nothing run"
refused "-- -o x.json: the batch gives each merge its -o (-O or a manifest names the outputs)" \
	"$tmp/xo/traces" "$tmp/xo/windows" -- -o x.json
refused "-- -qw $tmp/xo/windows/w0.json: the batch gives each merge its -w or -t (the window or thread map paired with its trace)" \
	"$tmp/xo/traces" "$tmp/xo/windows" -- -qw "$tmp/xo/windows/w0.json"
refused "-- --split=steps: the batch writes one output a rank (split a merged trace with cuptimerge --split)" \
	"$tmp/xo/traces" "$tmp/xo/windows" -- --split=steps
refused "-- -h: each merge would print it and merge nothing (run cuptimerge --help)" \
	"$tmp/xo/traces" "$tmp/xo/windows" -- -h
refused "-- --vers: each merge would print it and merge nothing (run cuptimerge --version)" \
	"$tmp/xo/traces" "$tmp/xo/windows" -- --vers
# A cluster after -- is an option a letter: its reading had room for a
# word each, and -- -qqq...h wrote past it (a heap overflow; glibc
# aborted).  Its message names the word as typed, cut to 159 bytes.
tcase "a cluster of 1,000 letters after --: read whole, its -h refused, nothing run"
long="-- -$(printf '%01000d' 0 | tr 0 q)h"
refused "$(printf '%.159s' "$long"): each merge would print it and merge nothing (run cuptimerge --help)" \
	"$tmp/xo/traces" "$tmp/xo/windows" -- "${long#-- }"
tcase "--clip twice, and a cut once on either side of --, still run"
run -O "$tmp/xo/m1" --clip "$tmp/xo/traces" "$tmp/xo/windows" -- --clip
[ $rc -eq 0 ] && [ -s "$tmp/xo/m1/$(key 1).merged.json.gz" ] || fail "--clip -- --clip: exit $rc: $(cat "$tmp/err")"
for how in "--range=0,1e30 $tmp/xo/traces $tmp/xo/windows" "$tmp/xo/traces $tmp/xo/windows -- --range=0,1e30"; do
	rm -rf "$tmp/xo/m2"
	# shellcheck disable=SC2086 # $how is split on purpose
	run -O "$tmp/xo/m2" $how
	[ $rc -eq 0 ] && [ -s "$tmp/xo/m2/$(key 0).merged.json.gz" ] || fail "$how: exit $rc: $(cat "$tmp/err")"
done

# --joblog naming a device: /dev/full and /dev/zero read zeros for ever, and
# the batch's reading of the joblog grew until the kernel killed it (cli11);
# /dev/null kept nothing.  A usage error, nothing run.
# bounded COMMAND...: under a memory limit, so that the old unbounded read
# fails rather than takes the machine; ASan reserves terabytes of address
# space at its start, so an instrumented build is bounded in time instead
bounded() {
	if grep -q __asan_init "$BATCH" 2>/dev/null; then
		timeout 60 "$@"
	else
		(ulimit -v 4000000 && exec "$@")
	fi
}
tcase "--joblog that is no regular file (/dev/full, /dev/null, a directory) is a usage error, nothing run"
for j in /dev/full /dev/null "$tmp/xo"; do
	rm -rf "$tmp/xo/merged"
	rc=0
	bounded "$BATCH" --no-progress --cuptimerge="$CM_ABS" -O "$tmp/xo/merged" --joblog="$j" \
		"$tmp/xo/traces" "$tmp/xo/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] && [ "$(head -n 1 "$tmp/err")" = "cuptimerge-batch: the joblog $j is not a regular file (it is read, rewritten and locked: give a file's name)" ] ||
		fail "$j: exit $rc: $(head -c 300 "$tmp/err")"
	[ ! -e "$tmp/xo/merged" ] || fail "$j: ran anyway"
done

# Two ranks of a manifest naming one output (however typed): both merges
# wrote it, the second replacing the first, and the batch said "2 merged"
# (cli11).  The later rank fails, named with the first; the first runs.
tcase "manifest: two ranks with one output: the second fails before anything runs, the first merges"
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t%s\nr1\t%s\t%s\t%s\n' \
	"$(trace "$tmp/xo" 0)" "$tmp/xo/windows/w0.json" "$tmp/xo/same/m.json.gz" \
	"$(trace "$tmp/xo" 1)" "$tmp/xo/windows/w1.json" "$tmp/xo/same/.//m.json.gz" >"$tmp/xo/same.tsv"
run -m "$tmp/xo/same.tsv"
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
grep -qx "cuptimerge-batch: r1: the output is key r0's output too: two merges would write it, and the second replace the first" "$tmp/err" ||
	fail "says: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 1 merged, 0 skipped, 1 failed" "$tmp/err" || fail "summary: $(cat "$tmp/err")"
[ "$(gzip -dc "$tmp/xo/same/m.json.gz" | grep -c '"pid": 5000')" -gt 0 ] || fail "the output is not r0's"

# the dry run's plan onto a full disk said "writing the plan failed", not why
if [ -w /dev/full ]; then
	tcase "-n onto a full disk: status 3, and why"
	rc=0
	"$BATCH" --no-progress -n "$tmp/xo/traces" "$tmp/xo/windows" >/dev/full 2>"$tmp/err" || rc=$?
	[ $rc -eq 3 ] && [ "$(cat "$tmp/err")" = "cuptimerge-batch: <stdout>: cannot write the plan: No space left on device" ] ||
		fail "exit $rc: $(cat "$tmp/err")"
else
	skip "-n onto a full disk: status 3, and why" "no writable /dev/full"
fi

# --cuptimerge naming a directory passed access(X_OK), and every rank failed
# with status 127; said once now, before the joblog is made
tcase "--cuptimerge naming a directory: status 3, one line, nothing run"
rm -rf "$tmp/xo/merged"
rc=0
"$BATCH" --no-progress --cuptimerge="$tmp/xo" -O "$tmp/xo/merged" "$tmp/xo/traces" "$tmp/xo/windows" 2>"$tmp/err" || rc=$?
[ $rc -eq 3 ] && [ "$(cat "$tmp/err")" = "cuptimerge-batch: $tmp/xo: cannot run: Is a directory" ] ||
	fail "exit $rc: $(cat "$tmp/err")"
[ ! -e "$tmp/xo/merged" ] || fail "ran anyway"

# -- --clip went to every merge, and a thread map's merge refuses it: each
# map rank failed, where the batch's own --clip goes to the window ranks
# only (cli11).  The two are one now.
tcase "-- --clip with a thread map rank: the map rank repairs, the window rank clips as with --clip"
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t%s\nm0\t%s\t%s\t%s\n' \
	"$(trace "$tmp/xo" 0)" "$tmp/xo/windows/w0.json" "$tmp/xo/clip1/r0.json.gz" \
	"$FIX/threads_full.json" "$FIX/thread_map.json" "$tmp/xo/clip1/m0.json.gz" >"$tmp/xo/clip1.tsv"
sed 's|/clip1/|/clip2/|' "$tmp/xo/clip1.tsv" >"$tmp/xo/clip2.tsv"
run -m "$tmp/xo/clip1.tsv" -- --clip
[ $rc -eq 0 ] || fail "-- --clip: exit $rc: $(cat "$tmp/err")"
run -m "$tmp/xo/clip2.tsv" --clip
[ $rc -eq 0 ] || fail "--clip: exit $rc: $(cat "$tmp/err")"
cmp -s "$tmp/xo/clip1/r0.json.gz" "$tmp/xo/clip2/r0.json.gz" && cmp -s "$tmp/xo/clip1/m0.json.gz" "$tmp/xo/clip2/m0.json.gz" ||
	fail "-- --clip does not write what --clip writes"

# A --cuptimerge that exits 0 and writes nothing (/bin/true) had every rank
# reported merged, and no file made (cli11): a merge that exits 0 must have
# made its output, a new file, not empty; else its rank fails, status 3 in
# the joblog, with why
tcase "--cuptimerge=/bin/true: every rank fails, no output made, and the joblog says why"
rm -rf "$tmp/xo/true"
rc=0
"$BATCH" --no-progress --cuptimerge=/bin/true -O "$tmp/xo/true" "$tmp/xo/traces" "$tmp/xo/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q "0 merged, 0 skipped, 2 failed" "$tmp/err" || fail "the summary: $(cat "$tmp/err")"
n=$(grep -c "	3	[0-9.]*	[0-9]*	the merge exited 0, but made no output: $tmp/xo/true/.*\.merged\.json\.gz: No such file or directory\$" \
	"$tmp/xo/true/cuptimerge-batch.tsv" || true)
[ "$n" = 2 ] || fail "joblog: $(cat "$tmp/xo/true/cuptimerge-batch.tsv")"
tcase "--force --cuptimerge=/bin/true over merged outputs: every rank fails, the files were not written"
run -O "$tmp/xo/true" "$tmp/xo/traces" "$tmp/xo/windows"
[ $rc -eq 0 ] || fail "the real merge: exit $rc: $(cat "$tmp/err")"
rc=0
"$BATCH" --no-progress --force --cuptimerge=/bin/true -O "$tmp/xo/true" "$tmp/xo/traces" "$tmp/xo/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc: $(cat "$tmp/err")"
n=$(grep -c "	3	[0-9.]*	[0-9]*	the merge exited 0, but made no output: .*: the file is as it was, not written\$" "$tmp/xo/true/cuptimerge-batch.tsv" || true)
[ "$n" = 2 ] || fail "joblog: $(cat "$tmp/xo/true/cuptimerge-batch.tsv")"

# A manifest that is no text: -m /dev/zero read one line until memory ran
# out, and a file of NUL bytes was a header line and no ranks, status 0
# (cli11).  A NUL byte, or a line past 64 KiB, is a malformed manifest now:
# status 2, one line, nothing run, no joblog.
tcase "a manifest of NUL bytes on a pipe: status 2 at its first line, nothing run"
rm -rf "$tmp/nul"
mkdir "$tmp/nul"
expect_exit 2 "^cuptimerge-batch: <stdin>: line 1: a NUL byte: not a manifest \\(a text file\\)\$" \
	sh -c 'head -c 50000000 /dev/zero | "$1" --no-progress -O "$2/merged" -m -' sh "$BATCH" "$tmp/nul"
[ ! -e "$tmp/nul/merged" ] || fail "made $(ls -R "$tmp/nul/merged")"
tcase "a NUL byte in a manifest's rank line: status 2, the line named"
printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\0\t%s\n' "$(trace "$tmp/xo" 0)" "$tmp/xo/windows/w0.json" \
	"$tmp/nul/r0.json" >"$tmp/nul/m.tsv"
expect_exit 2 "^cuptimerge-batch: $tmp/nul/m.tsv: line 2: a NUL byte: not a manifest" \
	"$BATCH" --no-progress -m "$tmp/nul/m.tsv"
[ ! -e "$tmp/nul/r0.json" ] && [ ! -e "$tmp/nul/merged" ] || fail "ran anyway"
tcase "a manifest line past 64 KiB: status 2, the line named"
expect_exit 2 "^cuptimerge-batch: <stdin>: line 1: longer than 65536 bytes: not a manifest\$" \
	sh -c 'head -c 50000000 /dev/zero | tr "\0" a | "$1" --no-progress -O "$2/merged" -m -' sh "$BATCH" "$tmp/nul"
[ ! -e "$tmp/nul/merged" ] || fail "made $(ls -R "$tmp/nul/merged")"
# 65536 bytes was the bound in name only: the buffer doubled past it
# first, and lines up to 131070 bytes were read
tcase "a manifest line of 65,537 bytes is refused, the line named; one of 65,536 is read"
for n in 65536 65537; do
	{ printf 'key\ttrace\twindow\toutput\n#'; head -c $((n - 1)) /dev/zero | tr '\0' a; echo; } >"$tmp/nul/long.tsv"
	run -n -m "$tmp/nul/long.tsv"
	if [ $n -eq 65536 ]; then
		[ $rc -eq 0 ] || fail "$n bytes: exit $rc: $(cat "$tmp/err")"
	else
		[ $rc -eq 2 ] && [ "$(cat "$tmp/err")" = "cuptimerge-batch: $tmp/nul/long.tsv: line 2: longer than 65536 bytes: not a manifest" ] ||
			fail "$n bytes: exit $rc: $(cat "$tmp/err")"
	fi
done

# The joblog was read by getline(3), a line whole whatever its length: a
# line of 64 MiB took 64 MiB and more, and where that failed (ENOMEM) the
# lines after it were never read, and their merged ranks merged again.  A
# line past 128 KiB is passed over (it is no record of a merged rank: the
# batch writes one only for a rank that failed, whose reason repeats its
# paths).  Under 50 MB of address space (not under ASan, which reserves
# terabytes at its start).
tcase "a joblog line of 64 MiB before the records is passed over: the merged ranks still skipped"
rm -rf "$tmp/jl"
ranks "$tmp/jl" 2
run -O "$tmp/jl/m" --joblog="$tmp/jl/log.tsv" "$tmp/jl/traces" "$tmp/jl/windows"
[ $rc -eq 0 ] || fail "first run: exit $rc: $(cat "$tmp/err")"
{ head -n 1 "$tmp/jl/log.tsv"; head -c 67108864 /dev/zero | tr '\0' x; echo; tail -n +2 "$tmp/jl/log.tsv"; } >"$tmp/jl/log2.tsv"
mv "$tmp/jl/log2.tsv" "$tmp/jl/log.tsv"
limit=50000
! grep -q __asan_init "$BATCH" 2>/dev/null || limit=unlimited
rc=0
(ulimit -v $limit && exec "$BATCH" --no-progress -n -O "$tmp/jl/m" --joblog="$tmp/jl/log.tsv" "$tmp/jl/traces" \
	"$tmp/jl/windows") >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] && [ "$(grep -c 'up to date, skipped$' "$tmp/out")" -eq 2 ] ||
	fail "exit $rc: $(cat "$tmp/out" "$tmp/err")"
rm -rf "$tmp/jl"

finish
