#!/bin/sh
# recout.sh - where cuptirec's thread map goes (-T -o PATH), as a user may
# name it (cli11): the map replaced whatever PATH was by a rename from
# PATH.tmp.PID, and as root `-o /dev/full` or `-o /dev/stdout` replaced the
# device node or the link itself with a regular file, and said "written".
# A regular file is still replaced whole, a symbolic link followed (the
# link stays); a device or a FIFO is written through, as `> PATH` would,
# its errors said; a FIFO without a reader is waited for (--fifo-wait), then
# an error, not a process that hangs in its exit; a name of standard output is that descriptor.  No GPU
# needed: -T records threads only.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to start a thread"
CUPTIREC=${CUPTIREC:-./cuptirec}
[ -x "$CUPTIREC" ] || skip_all "$CUPTIREC is not built"

# Under --enable-sanitizers with gcc the recorder is instrumented: the
# shared ASan runtime has to come first in python's LD_PRELOAD (cuptirec
# keeps it ahead of its own library), and python's own leaks are not ours.
asan_runtime=$(sed -n 's/^ASAN_RUNTIME = //p' Makefile 2>/dev/null || true)

# rec PATH [OPTION...]: a Python process that starts a thread, under
# cuptirec -T OPTION... -o PATH; its stderr in $tmp/err, its status in $rc
rec() {
	rc=0
	o=$1
	shift
	${asan_runtime:+env LD_PRELOAD=$asan_runtime ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0} \
		timeout 20 "$CUPTIREC" -T "$@" -o "$o" -- python3 -c \
		'import threading; t = threading.Thread(target=lambda: 0); t.start(); t.join()' 2>"$tmp/err" || rc=$?
}

tcase "-o a regular file: replaced whole, nothing else left in its directory"
mkdir "$tmp/d"
echo old >"$tmp/d/map.json"
rec "$tmp/d/map.json"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q '"thread_map_version": 1' "$tmp/d/map.json" || fail "not a map: $(head -c 100 "$tmp/d/map.json")"
[ "$(ls -A "$tmp/d")" = map.json ] || fail "left: $(ls -A "$tmp/d")"

tcase "-o a symbolic link: the file it names is replaced, the link stays"
echo old >"$tmp/d/real.json"
ln -s real.json "$tmp/d/link.json"
rec "$tmp/d/link.json"
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
[ -L "$tmp/d/link.json" ] || fail "the link was replaced"
grep -q '"thread_map_version": 1' "$tmp/d/real.json" || fail "its file holds: $(head -c 100 "$tmp/d/real.json")"

# a private copy of /dev/full's node: the real one must never be at stake
if mknod "$tmp/d/full" c 1 7 2>/dev/null; then
	tcase "-o a full device: written through, the error said, the device kept"
	rec "$tmp/d/full"
	[ -c "$tmp/d/full" ] || fail "the device node was replaced: $(ls -l "$tmp/d/full")"
	grep -q "cannot write the thread map $tmp/d/full: No space left on device" "$tmp/err" ||
		fail "said: $(cat "$tmp/err")"
	[ -z "$(find "$tmp/d" -name 'full.tmp.*')" ] || fail "a temporary file was left"
else
	skip "-o a full device: written through, the error said, the device kept" "mknod not permitted"
fi

tcase "-o a FIFO: written through to its reader; without one, --fifo-wait seconds, then an error, not a hang"
mkfifo "$tmp/d/fifo"
t0=$(date +%s%N)
rec "$tmp/d/fifo" --fifo-wait 0.5
t1=$(date +%s%N)
[ $rc -eq 0 ] || fail "no reader: exit $rc (124: it hung)"
[ -p "$tmp/d/fifo" ] || fail "no reader: the FIFO was replaced"
grep -q "cannot write the thread map $tmp/d/fifo: a FIFO without a reader for 0.5 s" "$tmp/err" ||
	fail "no reader: said: $(cat "$tmp/err")"
[ $((t1 - t0)) -ge 500000000 ] || fail "no reader: gave up after $(((t1 - t0) / 1000000)) ms, not 500"
timeout 20 cat "$tmp/d/fifo" >"$tmp/fromfifo" &
reader=$!
rec "$tmp/d/fifo"
wait $reader || true
[ $rc -eq 0 ] || fail "with a reader: exit $rc"
grep -q '"thread_map_version": 1' "$tmp/fromfifo" || fail "the reader got: $(head -c 100 "$tmp/fromfifo")"
[ -p "$tmp/d/fifo" ] || fail "with a reader: the FIFO was replaced"

# -o naming standard output.  With it closed, COMMAND inherited it closed:
# the map went nowhere, or into whatever file COMMAND put on descriptor 1,
# and as root the rename made a regular file of the link itself (/dev/stdout
# once, here: these cases use a link of their own to /proc/self/fd/1, so
# that the code before the fix cannot harm /dev/stdout).  Now it is refused
# before COMMAND runs, as --help with standard output closed is; open, the
# map goes through it, after what COMMAND wrote there.
ln -s /proc/self/fd/1 "$tmp/d/so"
tcase "-o a name of standard output, closed: status 125, one line, COMMAND not run, the link kept"
for o in "$tmp/d/so" /dev/fd/1; do
	rc=0
	timeout 20 "$CUPTIREC" -T -o "$o" -- sh -c ': >"$1"' sh "$tmp/ran" >&- 2>"$tmp/err" || rc=$?
	[ $rc -eq 125 ] || fail "$o: exit $rc, wanted 125"
	[ "$(cat "$tmp/err")" = "cuptirec: -o $o: standard output is closed" ] || fail "$o: said: $(cat "$tmp/err")"
	[ ! -e "$tmp/ran" ] || fail "$o: COMMAND ran"
done
[ -L "$tmp/d/so" ] || fail "the link was replaced"

tcase "-o a name of standard output, open on a file: the map goes after COMMAND's output"
rc=0
${asan_runtime:+env LD_PRELOAD=$asan_runtime ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0} \
	timeout 20 "$CUPTIREC" -T -o "$tmp/d/so" -- python3 -c \
	'import sys, threading; print("before"); sys.stdout.flush(); t = threading.Thread(target=lambda: 0); t.start(); t.join()' \
	>"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
[ "$(head -n 1 "$tmp/out")" = before ] || fail "COMMAND's output was lost: $(head -c 100 "$tmp/out")"
sed -n 2p "$tmp/out" | grep -q '"thread_map_version": 1' || fail "no map after it: $(head -c 200 "$tmp/out")"
[ -L "$tmp/d/so" ] || fail "the link was replaced"

# /dev/null and /dev/stdout are written through: nothing is made in /dev, which
# only root may write, and the directory check refused them to everyone else
# (a usage error, "cannot write in /dev").  Run as nobody, from root.
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	skip "-o /dev/null or /dev/stdout by a user who cannot write /dev: written through" "needs root and setpriv"
else
	tcase "-o /dev/null or /dev/stdout by a user who cannot write /dev: written through"
	for o in /dev/null /dev/stdout; do
		rc=0
		${asan_runtime:+env LD_PRELOAD=$asan_runtime ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0} \
			timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups "$CUPTIREC" -T -o "$o" -- python3 -c \
			'import threading; t = threading.Thread(target=lambda: 0); t.start(); t.join()' >"$tmp/out" 2>"$tmp/err" ||
			rc=$?
		[ $rc -eq 0 ] || fail "$o: exit $rc: $(cat "$tmp/err")"
		grep -q "thread map of 2 threads written to $o" "$tmp/err" || fail "$o: said: $(cat "$tmp/err")"
	done
	grep -q '"thread_map_version": 1' "$tmp/out" || fail "/dev/stdout: got $(head -c 100 "$tmp/out")"
fi

tcase "-o a name of standard output that COMMAND closed: the error said, the link kept"
rc=0
${asan_runtime:+env LD_PRELOAD=$asan_runtime ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0} \
	timeout 20 "$CUPTIREC" -T -o "$tmp/d/so" -- python3 -c \
	'import os, threading; t = threading.Thread(target=lambda: 0); t.start(); t.join(); os.close(1)' \
	>"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
grep -q "cannot write the thread map $tmp/d/so: Bad file descriptor" "$tmp/err" || fail "said: $(cat "$tmp/err")"
[ -L "$tmp/d/so" ] || fail "the link was replaced: $(ls -l "$tmp/d/so")"
[ -z "$(find "$tmp/d" -name 'so.tmp.*')" ] || fail "a temporary file was left"

finish
