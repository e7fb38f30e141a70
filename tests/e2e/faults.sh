#!/bin/sh
# faults.sh - every failure is reported exactly once, whichever thread finds
# it, and an interrupted or failed run loses nothing and leaves nothing.
. "${srcdir:-.}/tests/e2e/common.sh"

W=$FIX/window.json
C=$FIX/cpu.json

# F3: a bad window event is met by pass 2 (main thread) and by pass 3, run
# ahead on a second thread; only one of them may speak.  The race lost in
# about one run in ten, so try each case many times.
for case in missing_end_ns:'events\[[0-9]+\]: missing field "end_ns"' \
	huge_start:'"start_ns": [0-9]+ is infinite or beyond 128 bits' \
	badmap:'thread_resource_map entry for thread_id 5 is not an integer'; do
	name=${case%%:*} msg=${case#*:}
	tcase "F3: one message line for bad_window_$name, 40 runs"
	i=0
	while [ $i -lt 40 ]; do
		expect_exit 1 "^cuptimerge: [^ ]*bad_window_$name.json:[0-9]+: .*$msg" \
			$CUPTIMERGE -w "$FIX/bad_window_$name.json" "$C"
		i=$((i + 1))
	done
done

# F4: an unusable TMPDIR fails the window's pass (main thread) and the CPU
# pass (second thread, spooling a pipe) alike: one line, status 3.
tcase "F4: one message line when TMPDIR is unusable, 10 runs"
i=0
while [ $i -lt 10 ]; do
	expect_exit 3 "^cuptimerge: /nonexistent[:/].*cannot create a temporary file" \
		sh -c 'TMPDIR=/nonexistent "$1" -q -w "$2" <"$3"' sh "$CUPTIMERGE" "$W" "$C"
	i=$((i + 1))
done

# A temporary file that stops growing (RLIMIT_FSIZE, SIGXFSZ ignored: write
# fails with EFBIG) fails whichever thread writes it: the splitting thread,
# or the worker that drains the results (opool.c), which must hand its
# error to the reading thread, not print it.  One line, status 3, at every
# -j.  The pair is generated: its temporary files must outgrow 1 MiB.
GEN=${SHARED:-$srcdir/../shared}/tools/gen_trace
if [ -x "$GEN" ] && command -v python3 >/dev/null 2>&1; then
	tcase "one message line when a temporary file cannot grow, -j 1 to 8"
	"$GEN" --seed 3 --ops 20000 --quiet "$tmp/big_cpu.json" "$tmp/big_win.json"
	for j in 1 2 3 4 8; do
		expect_exit 3 "^cuptimerge: cannot (write|make|map|grow).* a temporary file" \
			sh -c 'trap "" XFSZ; ulimit -f 1024; exec "$@"' sh \
			$CUPTIMERGE -j $j -w "$tmp/big_win.json" "$tmp/big_cpu.json"
	done
	# The output itself cannot grow (its 16 MB against 4 MiB) once the
	# write phase has begun: from 4 jobs up a writing thread of its own
	# meets the error (io/outwriter.c) and the thread that made the bytes
	# reports it.  One line, status 3, the old file kept, nothing beside
	# it; plain, gzip'd (level 0: as large), and standard output.
	tcase "one message line when the output cannot grow, -j 1 to 8, -o and >"
	mkdir "$tmp/efbig"
	echo old >"$tmp/efbig/out.json"
	echo old >"$tmp/efbig/out.json.gz"
	for j in 1 2 4 8; do
		for notmp in 0 1; do
			for f in out.json out.json.gz; do
				z=
				[ "$f" = out.json ] || z=-z0
				expect_exit 3 "^cuptimerge: $tmp/efbig/$f: write error: File too large\$" \
					env CUPTIMERGE_NO_TMPFILE=$notmp sh -c 'trap "" XFSZ; ulimit -f 4096; exec "$@"' sh \
					$CUPTIMERGE -j $j $z -w "$tmp/big_win.json" -o "$tmp/efbig/$f" "$tmp/big_cpu.json"
				[ "$(cat "$tmp/efbig/$f")" = old ] || fail "-j $j -o $f: the old file was not kept"
				[ "$(ls -A "$tmp/efbig" | wc -l)" -eq 2 ] || fail "-j $j -o $f: left $(ls -A "$tmp/efbig")"
			done
		done
		expect_exit 3 "^cuptimerge: <stdout>: write error: File too large\$" \
			sh -c 'trap "" XFSZ; ulimit -f 4096; exec "$@" >"$0"' "$tmp/efbig/stdout.json" \
			$CUPTIMERGE -j $j -w "$tmp/big_win.json" "$tmp/big_cpu.json"
		rm -f "$tmp/efbig/stdout.json"
	done
	rm -f "$tmp/big_cpu.json" "$tmp/big_win.json"
else
	skip "one message line when a temporary file cannot grow" "no gen_trace or python3"
fi

# F6: repair alone reads its input once, so a pipe needs no copy in TMPDIR
# (the map on a pipe neither).
tcase "F6: repair alone reads a piped trace and a piped map without TMPDIR"
set +e
TMPDIR=/nonexistent $CUPTIMERGE -q -t "$FIX/thread_map.json" <"$FIX/threads_full.json" >"$tmp/rep_file.json"
cat "$FIX/threads_full.json" | TMPDIR=/nonexistent $CUPTIMERGE -q -t "$FIX/thread_map.json" \
	>"$tmp/rep_pipe.json" 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 0 ] || fail "repair of a pipe with TMPDIR unusable: exit $rc: $(cat "$tmp/err")"
cmp -s "$tmp/rep_file.json" "$tmp/rep_pipe.json" || fail "repair of a pipe differs from repair of the file"
set +e
cat "$FIX/thread_map.json" | TMPDIR=/nonexistent $CUPTIMERGE -q -t - "$FIX/threads_full.json" \
	>"$tmp/rep_mpipe.json" 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 0 ] || fail "map from a pipe with TMPDIR unusable: exit $rc: $(cat "$tmp/err")"
cmp -s "$tmp/rep_file.json" "$tmp/rep_mpipe.json" || fail "repair with the map from a pipe differs"

# A window named by a path that is a pipe (as <(...) gives) is not a file
# that a second thread can open again: the merge must read the copy.
tcase "a window on a FIFO or /dev/stdin merges"
mkfifo "$tmp/wfifo"
cat "$W" >"$tmp/wfifo" &
writer=$!
set +e
timeout 10 $CUPTIMERGE --trace-name example -w "$tmp/wfifo" "$C" >"$tmp/fifo_out.json" 2>"$tmp/err"
rc=$?
kill $writer 2>/dev/null # still waiting for a reader when the merge failed early
wait
set -e
[ $rc -eq 0 ] || fail "window from a FIFO: exit $rc (124: hung): $(cat "$tmp/err")"
set +e
timeout 10 $CUPTIMERGE --trace-name example -w /dev/stdin "$C" <"$W" >"$tmp/stdin_out.json" 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 0 ] || fail "window from /dev/stdin: exit $rc: $(cat "$tmp/err")"
$JSONCMP "$FIX/expected.json" "$tmp/stdin_out.json" || fail "window from /dev/stdin: output differs"
cat "$W" | timeout 10 $CUPTIMERGE --trace-name example -w /dev/stdin "$C" >"$tmp/stdin_out.json" 2>"$tmp/err" ||
	fail "window piped to /dev/stdin: exit $?: $(cat "$tmp/err")"
$JSONCMP "$FIX/expected.json" "$tmp/stdin_out.json" || fail "window piped to /dev/stdin: output differs"
$JSONCMP "$FIX/expected.json" "$tmp/fifo_out.json" || fail "window from a FIFO: output differs"

# ---- -o FILE: what each kind of FILE gets ----

# F14: an empty name is a usage error, found before any input is opened.
tcase "F14: -o '' is a usage error"
expect_exit 2 "^cuptimerge: -o needs a file name" $CUPTIMERGE -q -w "$W" -o '' "$tmp/missing.json"
expect_exit 2 "^cuptimerge: -o needs a file name" $CUPTIMERGE -q -t "$FIX/thread_map.json" --output= "$tmp/missing.json"

# absent FIFO readers and writers must not hang the suite: bounded runs
tm() { timeout 10 "$@"; }

# F13: a directory is refused up front, before any input is read: a CPU
# trace that is a FIFO without a writer would block the read for ever.
tcase "F13: -o DIR and -o into a missing directory fail before any input is read"
mkdir "$tmp/odir"
mkfifo "$tmp/nowriter"
expect_exit 3 "^cuptimerge: $tmp/odir: is a directory" tm $CUPTIMERGE -w "$W" -o "$tmp/odir" "$tmp/nowriter"
expect_exit 3 "^cuptimerge: $tmp/odir: is a directory" tm $CUPTIMERGE -t "$FIX/thread_map.json" -o "$tmp/odir" "$tmp/nowriter"
expect_exit 3 "^cuptimerge: $tmp/nodir/out.json: cannot write in $tmp/nodir: No such file or directory" \
	tm $CUPTIMERGE -w "$W" -o "$tmp/nodir/out.json" "$tmp/nowriter"
[ -z "$(ls -A "$tmp/odir")" ] || fail "-o DIR: something was written into it: $(ls -A "$tmp/odir")"

# a character device is written through, not replaced (a private copy of
# /dev/null's node: the real one must never be at stake in a test)
if mknod -m 666 "$tmp/null" c 1 3 2>/dev/null; then
	tcase "F13: -o a character device writes through, never replaces it"
	$CUPTIMERGE -q -w "$W" -o "$tmp/null" "$C" || fail "-o a character device: exit $?"
	[ -c "$tmp/null" ] || fail "-o a character device replaced it: $(ls -l "$tmp/null")"
	$CUPTIMERGE -q -t "$FIX/thread_map.json" -o "$tmp/null" "$FIX/threads_full.json" || fail "-t -o a character device: exit $?"
	[ -c "$tmp/null" ] || fail "-t -o a character device replaced it: $(ls -l "$tmp/null")"
	mknod -m 666 "$tmp/full" c 1 7
	expect_exit 3 "^cuptimerge: $tmp/full: write error: No space left" $CUPTIMERGE -q -w "$W" -o "$tmp/full" "$C"
	[ -c "$tmp/full" ] || fail "-o a full device replaced it: $(ls -l "$tmp/full")"
else
	skip "F13: -o a character device writes through, never replaces it" "mknod not permitted"
fi

# a FIFO is written through, to its reader
tcase "F13: -o a FIFO writes through to its reader"
mkfifo "$tmp/ofifo"
# (the reader gives up after 10 s: a run that replaced the FIFO never opens it)
tm cat "$tmp/ofifo" >"$tmp/from_fifo.json" &
reader=$!
tm $CUPTIMERGE --trace-name example -w "$W" -o "$tmp/ofifo" "$C" || fail "-o a FIFO: exit $?"
wait $reader || fail "-o a FIFO: the reader got no end of file: $?"
[ -p "$tmp/ofifo" ] || fail "-o a FIFO replaced it: $(ls -l "$tmp/ofifo")"
$JSONCMP "$FIX/expected.json" "$tmp/from_fifo.json" || fail "-o a FIFO: the reader got something else"

# a symlink is followed: its target is replaced atomically, in the target's
# directory, and the link stays
tcase "F13: -o a symlink replaces its target, keeps the link"
mkdir "$tmp/sl" "$tmp/sl/real"
echo old >"$tmp/sl/real/target.json"
ln -s real/target.json "$tmp/sl/link.json"
ln -s link.json "$tmp/sl/link2.json"
$CUPTIMERGE -q --trace-name example -w "$W" -o "$tmp/sl/link2.json" "$C" || fail "-o a symlink: exit $?"
[ -L "$tmp/sl/link.json" ] && [ -L "$tmp/sl/link2.json" ] || fail "-o a symlink replaced the link: $(ls -l "$tmp/sl")"
$JSONCMP "$FIX/expected.json" "$tmp/sl/real/target.json" || fail "-o a symlink: the target was not written"
ln -s real/new.json "$tmp/sl/dangling.json"
$CUPTIMERGE -q --trace-name example -w "$W" -o "$tmp/sl/dangling.json" "$C" || fail "-o a dangling symlink: exit $?"
[ -L "$tmp/sl/dangling.json" ] || fail "-o a dangling symlink replaced the link"
$JSONCMP "$FIX/expected.json" "$tmp/sl/real/new.json" || fail "-o a dangling symlink: its target was not created"
ln -s odir "$tmp/dirlink"
expect_exit 3 "^cuptimerge: $tmp/dirlink: is a directory" tm $CUPTIMERGE -w "$W" -o "$tmp/dirlink" "$tmp/nowriter"
ln -s loop1 "$tmp/loop2"
ln -s loop2 "$tmp/loop1"
expect_exit 3 "^cuptimerge: $tmp/loop1: .*(symbolic links|Too many levels)" tm $CUPTIMERGE -w "$W" -o "$tmp/loop1" "$tmp/nowriter"
[ "$(ls -A "$tmp/sl" | sort | tr '\n' ' ')" = "dangling.json link.json link2.json real " ] &&
	[ "$(ls -A "$tmp/sl/real" | sort | tr '\n' ' ')" = "new.json target.json " ] ||
	fail "-o a symlink left files behind: $(ls -AR "$tmp/sl")"

# ---- F5: an interrupted -o run leaves the old file and nothing else ----

# An asynchronous command of a non-interactive shell starts with SIGINT
# ignored (and under nohup, make check's caller may have ignored SIGHUP); the
# runs to interrupt are started through this, with the default for each.
dfl='import os, signal, sys
for s in (signal.SIGINT, signal.SIGPIPE, signal.SIGHUP, signal.SIGTERM):
    signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'

# out_size PID: the size of the file PID has open in $tmp/sig (named or not;
# /proc shows an unnamed one as "DIR/#INODE (deleted)"), or nothing.
out_size() {
	for fd in /proc/$1/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		"$tmp/sig/"*) stat -L -c %s "$fd" 2>/dev/null && return ;;
		esac
	done
}

# wait_out PID MIN WHAT: wait (10 s at most) until PID has its output open
# with at least MIN bytes in it.
wait_out() {
	n=0
	until size=$(out_size "$1") && [ -n "$size" ] && [ "$size" -ge "$2" ]; do
		n=$((n + 1))
		[ $n -lt 200 ] || { fail "$3: the run never got that far"; return; }
		sleep 0.05
	done
}

# interrupt SIGNAL NOTMPFILE PHASE OPTION...: start a run into
# $tmp/sig/out.json (which holds "old"), let it reach PHASE, send SIGNAL and
# check what is left.  The CPU trace is a FIFO that never ends, so the run
# waits for ever: PHASE read, with its output open and empty; PHASE write,
# with 2 MB in the FIFO, a repair (-t) that has written its first MiB.  A
# merge (-w) writes only once its input has ended: PHASE write then reads a
# 3 MB trace 2 bytes at a time, slow enough to be caught writing.
# NOTMPFILE 1: the named temporary file, as without O_TMPFILE.
interrupt() {
	sig=$1 notmp=$2 phase=$3
	shift 3
	what="$sig, $phase phase, O_TMPFILE off: $notmp, $*"
	tcase "F5: $sig in the $phase phase, O_TMPFILE $([ "$notmp" = 1 ] && echo off || echo on), $1"
	rm -rf "$tmp/sig" "$tmp/tmpd"
	mkdir "$tmp/sig" "$tmp/tmpd"
	echo old >"$tmp/sig/out.json"
	input=$tmp/cfifo min=0 bufsize= fed=
	case $phase:$1 in
	read:*) fed=1000 ;;
	write:-t) fed=2000000 min=1 ;;
	write:*) input=$tmp/big.json min=1 bufsize=2 ;;
	esac
	[ -z "$fed" ] || exec 3<>"$tmp/cfifo" # a writer that never closes
	CUPTIMERGE_BUFSIZE=$bufsize CUPTIMERGE_NO_TMPFILE=$notmp TMPDIR=$tmp/tmpd \
		python3 -c "$dfl" $CUPTIMERGE -q "$@" -o "$tmp/sig/out.json" "$input" 2>"$tmp/sigerr" 3>&- &
	pid=$!
	[ -z "$fed" ] || tm head -c $fed "$tmp/big.json" >&3 || fail "$what: the run did not read its input"
	wait_out $pid $min "$what"
	kill -s "$sig" $pid
	set +e
	wait $pid 2>/dev/null # not "Terminated" in the log
	rc=$?
	set -e
	[ -z "$fed" ] || exec 3>&-
	[ $rc -gt 128 ] || fail "$what: exit $rc, wanted death by the signal: $(cat "$tmp/sigerr")"
	[ "$(cat "$tmp/sig/out.json")" = old ] || fail "$what: the old output was changed"
	left=$(ls -A "$tmp/sig" | grep -v '^out\.json$' || :)
	if [ "$sig" = KILL ] && [ "$notmp" = 1 ]; then
		# the documented leftover of the fallback: a dot-file named after FILE
		echo "$left" | grep -Eqx '(\.out\.json\.cuptimerge-[A-Za-z0-9]{6})?' || fail "$what: left $left"
	else
		[ -z "$left" ] || fail "$what: left $left"
	fi
	[ -z "$(ls -A "$tmp/tmpd")" ] || fail "$what: left in TMPDIR: $(ls -A "$tmp/tmpd")"
}
if [ -d /proc/self/fd ]; then
	mkfifo "$tmp/cfifo"
	python3 - "$tmp/big.json" <<'PY'
import json, sys
# the window's process, base time and times, so that the pair is not refused
ev = [{"ph": "X", "cat": "cpu_op", "name": "op%d" % i, "pid": 4242, "tid": 1, "ts": 5000000 + i, "dur": 1,
       "args": {}} for i in range(30000)]
json.dump({"baseTimeNanoseconds": 1759300074000000000, "traceEvents": ev}, open(sys.argv[1], "w"))
PY
	for notmp in 0 1; do
		for sig in INT TERM HUP KILL; do
			interrupt $sig $notmp read -w "$W"
			interrupt $sig $notmp read -t "$FIX/thread_map.json"
			interrupt $sig $notmp write -t "$FIX/thread_map.json"
		done
	done
	# a merge mid-write costs seconds of CPU time: the two cases that
	# matter, no name with O_TMPFILE even after SIGKILL, and the handler's
	# clean-up of the named file
	interrupt KILL 0 write -w "$W"
	interrupt TERM 1 write -w "$W"

	# SIGHUP ignored (nohup) stays ignored, even where a handler is needed:
	# the run goes on to its end
	tcase "F5: SIGHUP ignored at start stays ignored"
	rm -rf "$tmp/sig"
	mkdir "$tmp/sig"
	exec 3<>"$tmp/cfifo"
	(
		trap '' HUP
		CUPTIMERGE_NO_TMPFILE=1 exec $CUPTIMERGE -q --trace-name example -w "$W" -o "$tmp/sig/out.json" <"$tmp/cfifo" 3>&-
	) &
	pid=$!
	wait_out $pid 0 "SIGHUP ignored"
	kill -s HUP $pid 2>/dev/null || :
	cat "$C" >&3
	exec 3>&-
	wait $pid || fail "SIGHUP ignored: exit $?"
	$JSONCMP "$FIX/expected.json" "$tmp/sig/out.json" || fail "SIGHUP ignored: output differs"
else
	skip "F5: interrupted -o runs" "no /proc"
fi

finish
