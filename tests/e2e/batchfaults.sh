#!/bin/sh
# batchfaults.sh - cuptimerge-batch under faults (issue 27): an unreadable
# window names itself on its rank's failure (F25); a second run on the same
# joblog is refused while the first holds it (F22); SIGTERM, SIGINT and SIGHUP
# reach the merges, which are waited for and recorded (F23).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make the ranks"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
[ -x "$BATCH" ] || skip_all "no $BATCH"
CM_ABS=$(cd "$(dirname "$CUPTIMERGE")" && pwd)/${CUPTIMERGE##*/}

# mkranks DIR N: N ranks of host node0, pids 5000.., traces in DIR/traces,
# windows DIR/windows/w{r}.json, an hour old
mkranks() {
	mkdir -p "$1/traces" "$1/windows"
	e2e_python - "$FIX/cpu.json" "$FIX/window_source.json" "$1" "$2" <<'PY'
import json, sys
import ranks
cpu, win, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for r in range(n):
    pid = 5000 + r
    json.dump(ranks.trace(cpu, r, pid, n), open("%s/traces/node0_%d.1759300079000.pt.trace.json" % (out, pid), "w"))
    json.dump(ranks.window(win, r, pid, "node0"), open("%s/windows/w%d.json" % (out, r), "w"))
PY
	touch -d '1 hour ago' "$1"/traces/* "$1"/windows/*
}
key() { # key R: rank R's key
	echo "node0_$((5000 + $1)).1759300079000"
}

# F25: a window that cannot be read was a warning ("not a trace, a window or
# a thread map, ignored"), and its rank failed as "no window for this
# trace", the cause unsaid.  Now the warning says it was not read, and the
# rank's failure names the file and why.  Unreadable two ways: a gzip
# window whose deflate data is damaged (a read error), and one without read
# permission (as nobody when root).
tcase "F25: a window that cannot be read is named on its rank's failure"
mkranks "$tmp/r25" 3
gzip -c "$tmp/r25/windows/w1.json" | python3 -c 'import sys
b = bytearray(sys.stdin.buffer.read())
for i in range(40, len(b) - 20, 7): b[i] ^= 0x55
sys.stdout.buffer.write(b)' >"$tmp/r25/windows/w1.json.gz"
rm "$tmp/r25/windows/w1.json"
rc=0
"$BATCH" -n "$tmp/r25/traces" "$tmp/r25/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: $tmp/r25/windows/w1.json.gz: cannot read: .*: unreadable, ignored" "$tmp/err" ||
	fail "warning: $(cat "$tmp/err")"
grep -q "^$(key 1)	.*	FAIL: no window for this trace (pid 5001, rank 1, host node0); not read, maybe its window: $tmp/r25/windows/w1.json.gz (cannot read: " \
	"$tmp/out" || fail "rank 1: $(grep "$(key 1)" "$tmp/out")"
grep -q "^$(key 0)	.*	merge\$" "$tmp/out" || fail "rank 0: $(grep "$(key 0)" "$tmp/out")"
if [ "$(id -u)" = 0 ]; then
	if command -v runuser >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
		asuser="runuser -u nobody --"
	else
		asuser=
	fi
else
	asuser=" "
fi
if [ -z "$asuser" ]; then
	skip "F25: a window without read permission is named on its rank's failure" "root without runuser"
else
	tcase "F25: a window without read permission is named on its rank's failure"
	mkranks "$tmp/p25" 3
	chmod 711 "$tmp"
	chmod -R a+rX "$tmp/p25"
	chmod 777 "$tmp/p25"
	chmod 600 "$tmp/p25/windows/w2.json"
	rc=0
	$asuser "$BATCH" --no-progress --cuptimerge "$CM_ABS" -O "$tmp/p25/merged" "$tmp/p25/traces" "$tmp/p25/windows" \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
	grep -q "^cuptimerge-batch: $tmp/p25/windows/w2.json: cannot open: Permission denied: unreadable, ignored" "$tmp/err" ||
		fail "warning: $(cat "$tmp/err")"
	grep -q "^cuptimerge-batch: $(key 2): no window for this trace (pid 5002, rank 2, host node0); not read, maybe its window: $tmp/p25/windows/w2.json (cannot open: Permission denied)\$" \
		"$tmp/err" || fail "rank 2: $(cat "$tmp/err")"
	grep -q "^$(key 2)	.*	-	0.000	0	no window for this trace .*w2.json (cannot open: Permission denied)\$" \
		"$tmp/p25/merged/cuptimerge-batch.tsv" || fail "joblog: $(cat "$tmp/p25/merged/cuptimerge-batch.tsv")"
	grep -q "^cuptimerge-batch: 2 merged, 0 skipped, 1 failed" "$tmp/err" || fail "summary: $(cat "$tmp/err")"
fi

# gated: a cuptimerge that says it started (its pid, a line in
# $tmp/started) and waits for $tmp/go before it merges, so that a batch is
# held mid-run for as long as a case needs, without timing
cat >"$tmp/gated" <<EOF
#!/bin/sh
echo \$\$ >>"$tmp/started"
while [ ! -e "$tmp/go" ]; do sleep 0.05; done
exec "$CM_ABS" "\$@"
EOF
chmod +x "$tmp/gated"
# wait_started N: until N merges have started (at most about 60 s)
wait_started() {
	ws_i=0
	while [ "$(cat "$tmp/started" 2>/dev/null | wc -l)" -lt "$1" ]; do
		ws_i=$((ws_i + 1))
		[ $ws_i -lt 1200 ] || { fail "$1 merges did not start"; return 1; }
		sleep 0.05
	done
}

# F22: two runs on the same directories, the second started while the
# first's merges run: the second is refused at once (status 5), before it
# reads or rewrites the joblog; the first's joblog has every rank once.  A
# dry run still runs beside it, and so does a shard with a joblog of its own.
tcase "F22: a second run on the same joblog is refused (status 5) while the first runs"
mkranks "$tmp/r22" 4
rm -f "$tmp/started" "$tmp/go"
J=$tmp/r22/traces/merged/cuptimerge-batch.tsv
"$BATCH" --no-progress -j 2 --cuptimerge "$tmp/gated" "$tmp/r22/traces" "$tmp/r22/windows" \
	>"$tmp/out1" 2>"$tmp/err1" &
b1=$!
if wait_started 2; then
	rc=0
	"$BATCH" --no-progress -j 2 --cuptimerge "$CM_ABS" "$tmp/r22/traces" "$tmp/r22/windows" >"$tmp/out" 2>"$tmp/err" ||
		rc=$?
	[ $rc -eq 5 ] || fail "the second run: exit $rc, wanted 5: $(cat "$tmp/err")"
	grep -q "^cuptimerge-batch: $J: another cuptimerge-batch is running with this joblog: nothing run" "$tmp/err" ||
		fail "message: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "more than one line: $(cat "$tmp/err")"
	[ "$(ls "$tmp/r22/traces/merged" | grep -c 'merged\.json\.gz$')" -eq 0 ] || fail "the second run merged"
	rc=0
	"$BATCH" -n "$tmp/r22/traces" "$tmp/r22/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c 'merge$' "$tmp/out")" -eq 4 ] ||
		fail "a dry run beside it: exit $rc: $(cat "$tmp/out" "$tmp/err")"
	rc=0
	"$BATCH" --no-progress --shard 1/2 --joblog "$tmp/shard1.tsv" -O "$tmp/s22" --cuptimerge "$CM_ABS" \
		"$tmp/r22/traces" "$tmp/r22/windows" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "a shard with its own joblog beside it: exit $rc: $(cat "$tmp/err")"
fi
touch "$tmp/go"
rc=0
wait $b1 || rc=$?
[ $rc -eq 0 ] || fail "the first run: exit $rc: $(cat "$tmp/err1")"
grep -q "^cuptimerge-batch: 4 merged, 0 skipped, 0 failed" "$tmp/err1" || fail "first run: $(cat "$tmp/err1")"
[ "$(wc -l <"$J")" -eq 5 ] || fail "joblog: $(wc -l <"$J") lines, wanted 5: $(cat "$J")"
for r in 0 1 2 3; do
	[ "$(grep -c "^$(key $r)	.*	0	[0-9.]*	[0-9]*	-\$" "$J")" -eq 1 ] || fail "rank $r: $(grep "$(key $r)" "$J")"
done
rc=0
"$BATCH" --no-progress --cuptimerge "$CM_ABS" "$tmp/r22/traces" "$tmp/r22/windows" 2>"$tmp/err" || rc=$?
grep -q "^cuptimerge-batch: 0 merged, 4 skipped, 0 failed" "$tmp/err" || fail "the run after: exit $rc: $(cat "$tmp/err")"

# the joblog is made and locked only by a run that can start: one without a
# cuptimerge to run leaves no empty joblog (nor output directory) behind
tcase "F22: a run that cannot start makes no joblog"
rc=0
"$BATCH" --no-progress --cuptimerge "$tmp/none" -O "$tmp/o22" "$tmp/r22/traces" "$tmp/r22/windows" 2>"$tmp/err" || rc=$?
[ $rc -eq 3 ] || fail "exit $rc, wanted 3: $(cat "$tmp/err")"
[ ! -e "$tmp/o22" ] || fail "it made $(ls -A "$tmp/o22")"

# F23: SIGTERM, SIGHUP or SIGINT sent to the batch alone (not its process
# group) was not passed on: its merges ran on as orphans, unrecorded.  Now
# it reaches them, they are waited for and recorded as interrupted, the
# ranks not started get a line, and the batch dies of the signal.  The
# merges are held by their CPU traces, FIFOs no one writes (a manifest's
# trace is not read before its merge); a wrapper notes each merge's pid,
# then execs cuptimerge.  The batch starts with SIGINT, SIGHUP and SIGTERM
# at their defaults (a shell's background job would have SIGINT ignored, a
# run under nohup SIGHUP, and the batch keeps what it finds ignored).
cat >"$tmp/pidwrap" <<EOF
#!/bin/sh
echo \$\$ >>"$tmp/started"
exec "$CM_ABS" "\$@"
EOF
chmod +x "$tmp/pidwrap"
for sig in TERM:15 HUP:1 INT:2; do
	want=$((128 + ${sig#*:}))
	sig=${sig%:*}
	tcase "F23: SIG$sig to the batch reaches its merges; they are waited for and recorded"
	d=$tmp/r23$sig
	mkdir -p "$d/out"
	printf 'key\tcpu trace\twindow or map\toutput\n' >"$d/m.tsv"
	for r in 0 1 2; do
		mkfifo "$d/fifo$r"
		printf 'k%s\t%s\t%s\t\n' $r "$d/fifo$r" "$FIX/window.json" >>"$d/m.tsv"
	done
	rm -f "$tmp/started"
	python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
    signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$BATCH" --no-progress -j 2 --cuptimerge "$tmp/pidwrap" -m "$d/m.tsv" -O "$d/out" \
		>"$tmp/out" 2>"$tmp/err" &
	b=$!
	wait_started 2 || true
	kill -$sig $b
	rc=0
	{ wait $b; } 2>/dev/null || rc=$? # quiet: no "Terminated" from the shell
	[ $rc -eq $want ] || fail "exit $rc, wanted $want: $(cat "$tmp/err")"
	for pid in $(cat "$tmp/started"); do
		if kill -0 "$pid" 2>/dev/null; then
			fail "merge $pid runs on after the batch"
			kill -9 "$pid" 2>/dev/null || true
		fi
	done
	J=$d/out/cuptimerge-batch.tsv
	[ "$(wc -l <"$J")" -eq 4 ] || fail "joblog: $(wc -l <"$J") lines, wanted 4: $(cat "$J")"
	for k in k0 k1; do
		grep -q "^$k	.*	$want	[0-9.]*	[0-9]*	interrupted: cuptimerge-batch got SIG$sig\$" "$J" ||
			fail "$k: $(grep "^$k" "$J")"
	done
	grep -q "^k2	.*	-	0.000	0	not started: cuptimerge-batch got SIG$sig\$" "$J" || fail "k2: $(grep "^k2" "$J")"
	grep -q "^cuptimerge-batch: stopped by SIG$sig: 0 merged before it; interrupted: k0 k1; not started: k2; the joblog records every rank, and the same command resumes the rest\$" "$tmp/err" ||
		fail "message: $(cat "$tmp/err")"
	[ "$(ls -A "$d/out")" = cuptimerge-batch.tsv ] || fail "left in the output directory: $(ls -A "$d/out")"
	"$BATCH" -n -m "$d/m.tsv" -O "$d/out" >"$tmp/out" 2>&1 || true
	[ "$(grep -c '	merge$' "$tmp/out")" -eq 3 ] || fail "a rerun would not merge all three: $(cat "$tmp/out")"
done

# a signal ignored when the batch starts (nohup) stays ignored: the run
# goes on, and so do its merges
tcase "F23: SIGHUP ignored at start stays ignored, merges and all"
mkranks "$tmp/r23n" 2
rm -f "$tmp/started" "$tmp/go"
nohup "$BATCH" --no-progress -j 2 --cuptimerge "$tmp/gated" "$tmp/r23n/traces" "$tmp/r23n/windows" \
	>"$tmp/out" 2>"$tmp/err" </dev/null &
b=$!
wait_started 2 || true
kill -HUP $b
touch "$tmp/go"
rc=0
wait $b || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 2 merged, 0 skipped, 0 failed" "$tmp/err" || fail "summary: $(cat "$tmp/err")"


# a merge that refuses its command line (options after "--" it does not
# take) ends its stderr with "Try 'cuptimerge --help' for more
# information.": that line, taken as the rank's failure, said nothing of
# what was wrong.  The line before it is the reason.
tcase "a rank refused as a usage error is reported with the reason, not the --help hint"
mkranks "$tmp/rusage" 2
rc=0
"$BATCH" --no-progress "$tmp/rusage/traces" "$tmp/rusage/windows" -- --bogus >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
for r in 0 1; do
	grep -qx "cuptimerge-batch: $(key $r): exit 2: cuptimerge: unrecognized option: --bogus" "$tmp/err" ||
		fail "rank $r: $(grep "$(key $r)" "$tmp/err")"
	grep -q "^$(key $r)	.*	2	[0-9.]*	[0-9]*	cuptimerge: unrecognized option: --bogus\$" "$tmp/rusage/traces/merged/cuptimerge-batch.tsv" ||
		fail "joblog: $(cat "$tmp/rusage/traces/merged/cuptimerge-batch.tsv")"
done
! grep -q "Try 'cuptimerge --help'" "$tmp/err" || fail "the hint is the reason: $(cat "$tmp/err")"


# the same directory named twice (a glob that overlaps, "dir dir/.", a
# symlink to it) listed every file twice: every rank failed as "2 windows
# fit this trace: w0.json, w0.json: ambiguous", and was planned twice.  A
# directory is read once, with a warning.
tcase "a directory named twice is read once"
mkranks "$tmp/rtwice" 2
ln -s windows "$tmp/rtwice/wlink"
rc=0
"$BATCH" --no-progress "$tmp/rtwice/traces" "$tmp/rtwice/windows" "$tmp/rtwice/windows/." "$tmp/rtwice/wlink" \
	>"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc, wanted 0: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 2 merged, 0 skipped, 0 failed" "$tmp/err" || fail "summary: $(cat "$tmp/err")"
for d in windows/. wlink; do
	grep -qx "cuptimerge-batch: $tmp/rtwice/$d: the same directory as $tmp/rtwice/windows: read once" "$tmp/err" ||
		fail "no warning for $d: $(cat "$tmp/err")"
done
[ "$(grep -c . "$tmp/rtwice/traces/merged/cuptimerge-batch.tsv")" -eq 3 ] ||
	fail "joblog: $(cat "$tmp/rtwice/traces/merged/cuptimerge-batch.tsv")"


# a directory that holds the ranks only in its subdirectories (run/traces,
# run/windows), which are not read: "0 merged, 0 skipped, 0 failed", status
# 0, and not a word that nothing was found.  Now a warning names it.
tcase "a directory with no trace, window or map in it is warned about"
mkranks "$tmp/rnone" 1
rc=0
"$BATCH" --no-progress "$tmp/rnone" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc, wanted 0: $(cat "$tmp/err")"
grep -qx "cuptimerge-batch: $tmp/rnone: no trace, window or thread map in it (its subdirectories are not read)" "$tmp/err" ||
	fail "no warning: $(cat "$tmp/err")"
rc=0
"$BATCH" -q --no-progress "$tmp/rnone" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] && ! grep -q "no trace, window" "$tmp/err" || fail "-q: exit $rc: $(cat "$tmp/err")"


# -- --format=perfetto went to every merge, which wrote Perfetto's protobuf
# (gzipped) into KEY.merged.json.gz: exit 0, and files that no JSON reader
# can read.  Refused before anything runs (a manifest names .pftrace outputs).
tcase "-- --format=perfetto is refused: the outputs are named .json.gz"
mkranks "$tmp/rpf" 1
for how in "--format=perfetto" "--form=perfetto" "--format perfetto"; do
	rc=0
	# shellcheck disable=SC2086 # $how is split on purpose
	"$BATCH" --no-progress "$tmp/rpf/traces" "$tmp/rpf/windows" -- $how >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "$how: exit $rc, wanted 2: $(cat "$tmp/err")"
	grep -q "^cuptimerge-batch: -- $how: the outputs are named KEY.merged.json.gz" "$tmp/err" ||
		fail "$how: message: $(cat "$tmp/err")"
	[ ! -e "$tmp/rpf/traces/merged/$(key 0).merged.json.gz" ] || fail "$how: merged anyway"
done


# a file whose name holds a tab or a line break went into the joblog (a TSV)
# as it was: the line split into several, and the next run found no record
# of the rank and merged it again.  Now such a file is a failed rank, its
# name's control characters shown as '?', and the joblog stays whole.
tcase "a file name with a tab or a line break is a failed rank, the joblog whole"
mkranks "$tmp/rtab" 2
t1=$(cd "$tmp/rtab/traces" && ls | grep 5001)
mv "$tmp/rtab/traces/$t1" "$tmp/rtab/traces/we	ird
$t1"
rc=0
"$BATCH" --no-progress "$tmp/rtab/traces" "$tmp/rtab/windows" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
J=$tmp/rtab/traces/merged/cuptimerge-batch.tsv
[ "$(wc -l <"$J")" -eq 4 ] && [ "$(awk -F'\t' 'NF != 8' "$J" | wc -l)" -eq 0 ] || fail "joblog: $(cat -A "$J")"
grep -q "^we?ird?$t1	-	-	-	-	0.000	0	its name holds a tab, a line break or another control character, which the joblog cannot record: rename it\$" "$J" ||
	fail "joblog: $(cat -A "$J")"
grep -q "^$(key 0)	.*	0	" "$J" || fail "rank 0 not merged: $(cat -A "$J")"

# The plan read a manifest's window before its merge, a FIFO too: it took
# what the pipe's writer wrote, and the merge then waited for a writer that
# had gone, for ever; an endless one it read until memory ran out (54 MB
# after 20 s, slower with every read: yajl reads a token cut by a read's end
# again from its first byte).  Now a window that is no regular file is read
# by its merge alone, which refuses an endless value (cuptimerge(1),
# LIMITS); and the plan's own scan, of a gzip window it reads in full,
# refuses a value past its bound as the merge would (json/docsplit.h), at
# its first byte.  Each run under a timeout, 2 GB of address space (not
# under ASan, which reserves terabytes) and 200 MB a file, so that the old
# behaviour fails the case rather than take the machine.
asan=0
grep -q __asan_init "$BATCH" 2>/dev/null && asan=1
# bounded ARGS...: cuptimerge-batch --no-progress --cuptimerge CM ARGS so
# bounded for 30 s; its status in $got (124: it ran on), messages in
# $tmp/err, its peak RSS and its merges' (KB) in $rss
bounded() {
	capture python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc if rc >= 0 else 128 - rc)' "$tmp/rss" \
		sh -c 'asan=$1; shift
			[ "$asan" = 1 ] || ulimit -v 2000000
			ulimit -f 400000
			exec timeout 30 "$@"' sh "$asan" "$BATCH" --no-progress --cuptimerge "$CM_ABS" "$@"
	rss=$(cat "$tmp/rss")
}
# fifo_manifest DIR: DIR/m.tsv, ranks 0..2 of DIR (mkranks), rank 1's window
# the FIFO DIR/w1.fifo, the outputs DIR/out/kR.json
fifo_manifest() {
	mkfifo "$1/w1.fifo"
	mkdir "$1/out"
	{
		printf 'key\tcpu trace\twindow\toutput\n'
		for r in 0 1 2; do
			w=$1/windows/w$r.json
			[ $r != 1 ] || w=$1/w1.fifo
			printf 'k%s\t%s\t%s\t%s\n' $r "$1/traces/node0_$((5000 + r)).1759300079000.pt.trace.json" "$w" "$1/out/k$r.json"
		done
	} >"$1/m.tsv"
}
ELEM='is longer than 16 MiB, the most an element may be \(an event that never ends\?\)'

tcase "a manifest's window on a FIFO is read by its merge alone: every rank merges"
mkranks "$tmp/rfifo" 3
fifo_manifest "$tmp/rfifo"
# the pipe's writer, once (a second open of the pipe would find none)
timeout 60 sh -c 'cat "$1" >"$2"' sh "$tmp/rfifo/windows/w1.json" "$tmp/rfifo/w1.fifo" 2>/dev/null &
bounded -m "$tmp/rfifo/m.tsv"
[ "$got" -eq 0 ] || fail "exit $got, wanted 0: $(cat "$tmp/err")"
grep -q "^cuptimerge-batch: 3 merged, 0 skipped, 0 failed" "$tmp/err" || fail "summary: $(cat "$tmp/err")"
"$CM_ABS" -q --trace-name node0_5001.1759300079000.pt.trace.json -w "$tmp/rfifo/windows/w1.json" \
	-o "$tmp/rfifo/direct1.json" "$tmp/rfifo/traces/node0_5001.1759300079000.pt.trace.json" ||
	fail "direct merge: exit $?"
cmp -s "$tmp/rfifo/direct1.json" "$tmp/rfifo/out/k1.json" || fail "rank 1 differs from the direct merge of its window"
wait

tcase "a manifest's endless window on a FIFO: its rank fails with the merge's refusal, the others merge"
mkranks "$tmp/rendless" 3
fifo_manifest "$tmp/rendless"
# the pipe's writer, stopped by SIGPIPE once the merge refuses (or by its timeout)
timeout 60 sh -c '{ printf %s "$1"; yes a | tr -d "\n"; } >"$2"' sh '{"events":[{"kind":"kernel","name":"' \
	"$tmp/rendless/w1.fifo" 2>/dev/null &
bounded -m "$tmp/rendless/m.tsv"
[ "$got" -eq 4 ] || fail "exit $got, wanted 4: $(head -c 500 "$tmp/err")"
grep -Eq "^cuptimerge-batch: k1: exit 1: cuptimerge: $tmp/rendless/w1.fifo:11: events\\[0\\] $ELEM\$" "$tmp/err" ||
	fail "rank 1: $(head -c 500 "$tmp/err")"
grep -q "^cuptimerge-batch: 2 merged, 0 skipped, 1 failed" "$tmp/err" || fail "summary: $(head -c 500 "$tmp/err")"
[ -s "$tmp/rendless/out/k0.json" ] && [ -s "$tmp/rendless/out/k2.json" ] || fail "ranks 0 and 2 not merged"
[ "$asan" = 1 ] || [ "$rss" -le 100000 ] || fail "peak RSS $rss KB, more than 100000 KB"
wait

# a gzip window of one string of 512 MiB, in half a megabyte: 64 members of
# 8 MiB of 'a' (a gzip stream may be members end to end)
e2e_python - "$tmp/bomb.json.gz" <<'PY'
import gzip, sys
a = gzip.compress(b"a" * (8 << 20), 1)
with open(sys.argv[1], "wb") as f:
    f.write(gzip.compress(b'{"events":[{"kind":"kernel","name":"'))
    for _ in range(64):
        f.write(a)
PY
tcase "a gzip window of an endless string in a manifest: the plan fails its rank at the string's first byte"
mkranks "$tmp/rbomb" 2
{
	printf 'key\tcpu trace\twindow\toutput\n'
	printf 'k0\t%s\t%s\t%s\n' "$tmp/rbomb/traces/$(key 0).pt.trace.json" "$tmp/rbomb/windows/w0.json" "$tmp/rbomb/k0.json"
	printf 'k1\t%s\t%s\t%s\n' "$tmp/rbomb/traces/$(key 1).pt.trace.json" "$tmp/bomb.json.gz" "$tmp/rbomb/k1.json"
} >"$tmp/rbomb/m.tsv"
bounded -m "$tmp/rbomb/m.tsv"
[ "$got" -eq 4 ] || fail "exit $got, wanted 4: $(head -c 500 "$tmp/err")"
grep -Eq "^cuptimerge-batch: k1: window $tmp/bomb.json.gz: byte 11: events\\[0\\] $ELEM\$" "$tmp/err" ||
	fail "rank 1: $(head -c 500 "$tmp/err")"
grep -q "^cuptimerge-batch: 1 merged, 0 skipped, 1 failed" "$tmp/err" || fail "summary: $(head -c 500 "$tmp/err")"
[ "$asan" = 1 ] || [ "$rss" -le 100000 ] || fail "peak RSS $rss KB, more than 100000 KB"

# a gzip window of a member's string of 80 MiB, in 360 KB: the plan's scan
# gave yajl each read as it came, and yajl kept the string cut by a read's
# end and lexed it again from its first byte with every read (at the real
# bound of 256 MiB: 276 MB and 6 s before it refused the string); now yajl
# gets whole tokens, and the string waits past 16 MiB in a temporary file.
# The bound made 64 MiB here (the testing aid CUPTIMERGE_MEMBER_MAX), so
# that the file stays under bounded's limit on one
e2e_python - "$tmp/mbomb.json.gz" <<'PY'
import gzip, sys
a = gzip.compress(b"a" * (8 << 20), 1)
with open(sys.argv[1], "wb") as f:
    f.write(gzip.compress(b'{"x":"'))
    for _ in range(10):
        f.write(a)
PY
tcase "a gzip window of a member's string past its bound in a manifest: refused at its first byte, not held"
mkdir "$tmp/mspool"
{
	printf 'key\tcpu trace\twindow\toutput\n'
	printf 'k0\t%s\t%s\t%s\n' "$tmp/rbomb/traces/$(key 0).pt.trace.json" "$tmp/rbomb/windows/w0.json" "$tmp/rbomb/k0.json"
	printf 'k1\t%s\t%s\t%s\n' "$tmp/rbomb/traces/$(key 1).pt.trace.json" "$tmp/mbomb.json.gz" "$tmp/rbomb/k1.json"
} >"$tmp/rbomb/m2.tsv"
TMPDIR=$tmp/mspool CUPTIMERGE_MEMBER_MAX=67108864 bounded --force -m "$tmp/rbomb/m2.tsv"
[ "$got" -eq 4 ] || fail "exit $got, wanted 4: $(head -c 500 "$tmp/err")"
grep -Eq "^cuptimerge-batch: k1: window $tmp/mbomb.json.gz: byte 5: member \"x\": its value is longer than 64 MiB, the most a member's value may be\$" "$tmp/err" ||
	fail "rank 1: $(head -c 500 "$tmp/err")"
grep -q "^cuptimerge-batch: 1 merged, 0 skipped, 1 failed" "$tmp/err" || fail "summary: $(head -c 500 "$tmp/err")"
[ "$asan" = 1 ] || [ "$rss" -le 50000 ] || fail "peak RSS $rss KB, more than 50000 KB"
[ -z "$(ls -A "$tmp/mspool")" ] || fail "left in TMPDIR: $(ls -A "$tmp/mspool")"

tcase "a gzip window of an endless string in a directory: named on its trace's failure, the others merge"
mkranks "$tmp/dbomb" 3
rm "$tmp/dbomb/windows/w1.json"
cp "$tmp/bomb.json.gz" "$tmp/dbomb/windows/w1.json.gz"
bounded "$tmp/dbomb/traces" "$tmp/dbomb/windows"
[ "$got" -eq 4 ] || fail "exit $got, wanted 4: $(head -c 500 "$tmp/err")"
grep -Eq "^cuptimerge-batch: $tmp/dbomb/windows/w1.json.gz: byte 11: events\\[0\\] $ELEM: a damaged window" "$tmp/err" ||
	fail "warning: $(head -c 500 "$tmp/err")"
grep -Eq "^cuptimerge-batch: $(key 1): no window for this trace .*; not read, maybe its window: $tmp/dbomb/windows/w1.json.gz \\(byte 11: events\\[0\\] $ELEM\\)\$" \
	"$tmp/err" || fail "rank 1: $(head -c 500 "$tmp/err")"
grep -q "^cuptimerge-batch: 2 merged, 0 skipped, 1 failed" "$tmp/err" || fail "summary: $(head -c 500 "$tmp/err")"
[ "$asan" = 1 ] || [ "$rss" -le 100000 ] || fail "peak RSS $rss KB, more than 100000 KB"


# The plan's scan cuts each read before the token it ends in, where the
# bounds' watchers say whether the read ends inside a string: a look back
# from the read's end for the string's opening quote (past escaped ones)
# or the number's first digit, and on from the next read's start for that
# token's end (batch/batchtok.h).  Every byte must reach yajl once, in
# order, whatever the reads: windows of escaped quotes, runs of
# backslashes, numbers and literals at a member's end, a byte order mark,
# a gzip one, one damaged and one cut short (read in full: a nested object
# in "source"), planned with reads of 1 to 31
# bytes (the testing aid CUPTIMERGE_PLAN_READ), plan as with the usual ones
mkdir "$tmp/cuts"
e2e_python - "$FIX/cpu.json" "$FIX/window_source.json" "$tmp/cuts" <<'PY'
import gzip, json, sys
import ranks
cpu, win, out = sys.argv[1:4]
json.dump(ranks.trace(cpu, 0, 5000, 1), open(out + "/t.json", "w"))
w = ranks.window(win, 0, 5000, "node0")
odd = ['a\\"b', '\\\\', '\\\\\\"', 'q"', '\\', '"\\"\\\\"', '\u00e9\u4e2d', ',:{}[]', '']
w["events"][0]["name"] = "".join(odd)
w["x"] = {k: [1.5e-3, -0, True, None, False, 12345678901234567890, k] for k in odd}
w["y"] = 123456789
w["source"]["future"] = {"nested": 1}  # read in full, not by its tail (batchtail.c)
docs = {
    "w0.json": json.dumps(w).encode(),
    "w1.json": json.dumps(w, indent=3, ensure_ascii=False).encode(),
    "w2.json": b"\xef\xbb\xbf" + json.dumps(w, separators=(",", ":")).encode(),
}
t = json.dumps(w).encode()
docs["w3.json"] = t.replace(b'"y": 1234', b'"y": 12\\34')  # not JSON at a number
docs["w4.json"] = t[:len(t) * 2 // 3]                       # cut short
docs["w6.json"] = t.replace(b'"y": 1234', b'"y": "1234\\q')      # not JSON in a string
with open(out + "/m.tsv", "w") as m:
    m.write("key\tcpu trace\twindow\n")
    for i, (name, text) in enumerate(sorted(docs.items())):
        open(out + "/" + name, "wb").write(text)
        m.write("k%d\t%s/t.json\t%s/%s\n" % (i, out, out, name))
    open(out + "/w5.json.gz", "wb").write(gzip.compress(docs["w1.json"]))
    m.write("k9\t%s/t.json\t%s/w5.json.gz\n" % (out, out))
PY
tcase "the plan's scan at reads of 1 to 31 bytes: the plan of odd windows as at the usual reads"
capture "$BATCH" -n -m "$tmp/cuts/m.tsv"
[ "$got" -eq 4 ] || fail "exit $got, wanted 4: $(cat "$tmp/err")"
mv "$tmp/out" "$tmp/cuts/plan"
[ "$(grep -c '	merge$' "$tmp/cuts/plan")" -eq 4 ] || fail "plan: $(cat "$tmp/cuts/plan")"
grep -q '^k3	.*	FAIL: window .*/w3.json: not JSON at byte [0-9]*$' "$tmp/cuts/plan" || fail "plan: $(cat "$tmp/cuts/plan")"
grep -q '^k4	.*	FAIL: window .*/w4.json: truncated JSON' "$tmp/cuts/plan" || fail "plan: $(cat "$tmp/cuts/plan")"
grep -q '^k5	.*	FAIL: window .*/w6.json: not JSON at byte [0-9]*$' "$tmp/cuts/plan" || fail "plan: $(cat "$tmp/cuts/plan")"
for r in $(seq 1 31); do
	capture env CUPTIMERGE_PLAN_READ=$r "$BATCH" -n -m "$tmp/cuts/m.tsv"
	cmp -s "$tmp/out" "$tmp/cuts/plan" || fail "reads of $r bytes: $(diff "$tmp/cuts/plan" "$tmp/out")"
done

# a gzip window of a member's string of 40 MiB, which ends: handed to yajl
# whole from its temporary file, as the reads were cut before the colon
# that leads it; cut at its opening quote, it was the first token of
# yajl's piece, which yajl copies (a member's string of 200 MiB cost 432 MB)
e2e_python - "$FIX/window_source.json" "$tmp/long40.json.gz" <<'PY'
import gzip, json, sys
import ranks
w = json.dumps(ranks.window(sys.argv[1], 1, 5001, "node0")).encode()
a = gzip.compress(b"a" * (8 << 20), 1)
with open(sys.argv[2], "wb") as f:
    f.write(gzip.compress(b'{"x": "'))
    for _ in range(5):
        f.write(a)
    f.write(gzip.compress(b'", ' + w[1:]))
PY
tcase "a gzip window of a member's string of 40 MiB in a manifest: planned, the string not copied"
{
	printf 'key\tcpu trace\twindow\toutput\n'
	printf 'k1\t%s\t%s\t%s\n' "$tmp/rbomb/traces/$(key 1).pt.trace.json" "$tmp/long40.json.gz" "$tmp/rbomb/k1.json"
} >"$tmp/rbomb/m3.tsv"
bounded -n -m "$tmp/rbomb/m3.tsv"
[ "$got" -eq 0 ] || fail "exit $got, wanted 0: $(head -c 500 "$tmp/err")"
grep -q "^k1	.*	merge\$" "$tmp/out" || fail "plan: $(head -c 500 "$tmp/out")"
[ "$asan" = 1 ] || [ "$rss" -le 85000 ] || fail "peak RSS $rss KB, more than 85000 KB"

# a gzip window of 64 MiB of white space after a member's colon, in 64 KB:
# no bound holds white space between tokens, so the cut before the value,
# at the colon, must not keep it waiting (it did, in a temporary file, read
# back mapped: 70 MB here, and without end for a window of endless blanks)
e2e_python - "$FIX/window_source.json" "$tmp/blank64.json.gz" <<'PY'
import gzip, json, sys
import ranks
w = json.dumps(ranks.window(sys.argv[1], 1, 5001, "node0")).encode()
a = gzip.compress(b" " * (8 << 20), 1)
with open(sys.argv[2], "wb") as f:
    f.write(gzip.compress(w[:-1] + b', "x":'))
    for _ in range(8):
        f.write(a)
    f.write(gzip.compress(b"1}"))
PY
tcase "a gzip window of 64 MiB of white space after a colon in a manifest: planned, the blanks not held"
{
	printf 'key\tcpu trace\twindow\toutput\n'
	printf 'k1\t%s\t%s\t%s\n' "$tmp/rbomb/traces/$(key 1).pt.trace.json" "$tmp/blank64.json.gz" "$tmp/rbomb/k1.json"
} >"$tmp/rbomb/m4.tsv"
bounded -n -m "$tmp/rbomb/m4.tsv"
[ "$got" -eq 0 ] || fail "exit $got, wanted 0: $(head -c 500 "$tmp/err")"
grep -q "^k1	.*	merge\$" "$tmp/out" || fail "plan: $(head -c 500 "$tmp/out")"
[ "$asan" = 1 ] || [ "$rss" -le 30000 ] || fail "peak RSS $rss KB, more than 30000 KB"

finish
