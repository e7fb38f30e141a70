#!/bin/sh
# outfd.sh - -o naming a descriptor the process already holds (/dev/stdout,
# /dev/fd/N, /proc/self/fd/N, a symbolic link to one) is written through
# that descriptor, as standard output is.  It was opened by name: a regular
# file behind it was replaced by a temporary file renamed over it, so
# `cuptimerge ... -o /dev/stdout >> log` lost log's earlier lines, and the
# trace was named "/dev/stdout" (traceName), unlike a plain stdout run.
. "${srcdir:-.}/tests/e2e/common.sh"

W=$FIX/window.json
C=$FIX/cpu.json
PREFIX='an earlier line of the log'

# the plain standard output run, which every way below must write byte for byte
$CUPTIMERGE -w "$W" "$C" >"$tmp/plain.json"

# appended_ok FILE WHAT: FILE holds PREFIX's line, then plain.json's bytes
appended_ok() {
	[ "$(head -n 1 "$1")" = "$PREFIX" ] || fail "$2: the earlier line is gone: $(head -c 100 "$1")"
	tail -n +2 "$1" >"$tmp/rest"
	cmp -s "$tmp/plain.json" "$tmp/rest" || fail "$2: after the earlier line, not the stdout run's bytes"
}

tcase "-o /dev/stdout >> log: appended after log's lines, the bytes of a stdout run"
echo "$PREFIX" >"$tmp/log"
$CUPTIMERGE -w "$W" -o /dev/stdout "$C" >>"$tmp/log" || fail "exit $?"
appended_ok "$tmp/log" "/dev/stdout"

tcase "-o /dev/fd/3 with 3>>file, and /proc/self/fd/3: appended"
for o in /dev/fd/3 /proc/self/fd/3; do
	echo "$PREFIX" >"$tmp/log3"
	$CUPTIMERGE -w "$W" -o $o "$C" 3>>"$tmp/log3" || fail "$o: exit $?"
	appended_ok "$tmp/log3" "$o"
done

tcase "-o a symbolic link to /dev/stdout >> log: appended, the link kept"
ln -s /dev/stdout "$tmp/so"
echo "$PREFIX" >"$tmp/log"
$CUPTIMERGE -w "$W" -o "$tmp/so" "$C" >>"$tmp/log" || fail "exit $?"
appended_ok "$tmp/log" "a link to /dev/stdout"
[ -L "$tmp/so" ] || fail "the link is gone"

tcase "-o /dev/stdout > log: what the shell truncated, then the trace"
echo "$PREFIX" >"$tmp/log"
$CUPTIMERGE -w "$W" -o /dev/stdout "$C" >"$tmp/log" || fail "exit $?"
cmp -s "$tmp/plain.json" "$tmp/log" || fail "not the stdout run's bytes"

tcase "-o /dev/stdout into a pipe: the bytes of a stdout run"
# the status of cuptimerge is lost in a pipeline: kept in a file
{ $CUPTIMERGE -w "$W" -o /dev/stdout "$C" || echo $? >"$tmp/rc"; } | cat >"$tmp/piped"
[ ! -e "$tmp/rc" ] || fail "exit $(cat "$tmp/rc")"
cmp -s "$tmp/plain.json" "$tmp/piped" || fail "not the stdout run's bytes: $(head -c 100 "$tmp/piped")"

tcase "-z and --format=perfetto -o /dev/stdout >> log: appended, the bytes of a stdout run"
$CUPTIMERGE -z -w "$W" "$C" >"$tmp/plain.gz"
$CUPTIMERGE --format=perfetto -w "$W" "$C" >"$tmp/plain.pftrace"
for f in -z --format=perfetto; do
	echo "$PREFIX" >"$tmp/log"
	$CUPTIMERGE $f -w "$W" -o /dev/stdout "$C" >>"$tmp/log" || fail "$f: exit $?"
	[ "$(head -n 1 "$tmp/log")" = "$PREFIX" ] || fail "$f: the earlier line is gone"
	case $f in -z) want=$tmp/plain.gz ;; *) want=$tmp/plain.pftrace ;; esac
	tail -c +$((${#PREFIX} + 2)) "$tmp/log" >"$tmp/rest"
	cmp -s "$want" "$tmp/rest" || fail "$f: after the earlier line, not the stdout run's bytes"
done

tcase "a failed run with -o /dev/stdout >> log: log as it was"
echo "$PREFIX" >"$tmp/log"
sh -c '"$@" >>"$0" 2>/dev/null' "$tmp/log" $CUPTIMERGE -w "$FIX/bad_window_missing_end_ns.json" -o /dev/stdout "$C" &&
	fail "exit 0"
[ "$(cat "$tmp/log")" = "$PREFIX" ] || fail "log changed: $(head -c 100 "$tmp/log")"

tcase "-o /dev/stdout with >&-: still 'standard output is closed', status 3"
expect_exit 3 "^cuptimerge: /dev/stdout: cannot write to it: standard output is closed\$" \
	sh -c '"$@" >&-' sh $CUPTIMERGE -w "$W" -o /dev/stdout "$C"

tcase "-o /dev/stdout with standard output on an input: refused, the input kept"
cp "$C" "$tmp/cpu.json"
for redir in append stdin; do
	rc=0
	case $redir in
	append) $CUPTIMERGE -w "$W" -o /dev/stdout "$tmp/cpu.json" >>"$tmp/cpu.json" 2>"$tmp/err" || rc=$? ;;
	*) $CUPTIMERGE -w "$W" -o /dev/stdout - <"$tmp/cpu.json" >>"$tmp/cpu.json" 2>"$tmp/err" || rc=$? ;;
	esac
	[ $rc -eq 2 ] || fail "$redir: exit $rc, wanted 2: $(cat "$tmp/err")"
	grep -q "^cuptimerge: -o /dev/stdout is the CPU trace .*, which the output would write over as it is read" \
		"$tmp/err" || fail "$redir: message: $(cat "$tmp/err")"
	cmp -s "$C" "$tmp/cpu.json" || fail "$redir: the input changed"
done

tcase "-o a descriptor not open, or open only for reading: status 3 before any input is read"
expect_exit 3 "^cuptimerge: /dev/fd/7: cannot write to it: descriptor 7 is not open\$" \
	$CUPTIMERGE -w "$W" -o /dev/fd/7 "$tmp/none.json"
expect_exit 3 "^cuptimerge: /dev/fd/4: cannot write to it: descriptor 4 is open only for reading\$" \
	sh -c '"$@" 4<"$0"' "$FIX/expected.json" $CUPTIMERGE -w "$W" -o /dev/fd/4 "$tmp/none.json"
# cuptimerge-batch's joblog is read for the ranks done, then rewritten from
# its first byte: --joblog=/dev/stdout >> log reopened log and emptied it.
# A rank's output that names a descriptor went to the merge's own (its
# standard output is /dev/null), reported merged, or to one that all merges
# share (3>>file): both refused, nothing written.
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
if [ ! -x "$BATCH" ]; then
	skip "cuptimerge-batch --joblog=/dev/stdout >> log: refused, log kept" "no $BATCH"
	skip "cuptimerge-batch: a rank's output /dev/stdout or /dev/fd/3: that rank fails, nothing written" "no $BATCH"
else
	tcase "cuptimerge-batch --joblog=/dev/stdout >> log: refused, log kept"
	printf 'key\tcpu trace\twindow or map\toutput\n' >"$tmp/m.tsv"
	printf 'r0\t%s\t%s\t%s\n' "$C" "$W" "$tmp/b/r0.json" >>"$tmp/m.tsv"
	for j in /dev/stdout "$tmp/so"; do
		echo "$PREFIX" >"$tmp/log"
		rc=0
		"$BATCH" -q -m "$tmp/m.tsv" -O "$tmp/b" --joblog="$j" >>"$tmp/log" 2>"$tmp/err" || rc=$?
		[ $rc -eq 2 ] || fail "$j: exit $rc, wanted 2: $(cat "$tmp/err")"
		grep -q "^cuptimerge-batch: the joblog $j names a descriptor, not a file" "$tmp/err" ||
			fail "$j: message: $(cat "$tmp/err")"
		[ "$(cat "$tmp/log")" = "$PREFIX" ] || fail "$j: log changed: $(head -c 200 "$tmp/log")"
	done
	[ ! -e "$tmp/b/r0.json" ] || fail "a rank was merged"

	tcase "cuptimerge-batch: a rank's output /dev/stdout or /dev/fd/3: that rank fails, nothing written"
	printf 'key\tcpu trace\twindow or map\toutput\n' >"$tmp/m2.tsv"
	printf 'so\t%s\t%s\t/dev/stdout\n' "$C" "$W" >>"$tmp/m2.tsv"
	printf 'fd3\t%s\t%s\t/dev/fd/3\n' "$C" "$W" >>"$tmp/m2.tsv"
	printf 'ok\t%s\t%s\t%s\n' "$C" "$W" "$tmp/b2/ok.json" >>"$tmp/m2.tsv"
	echo "$PREFIX" >"$tmp/log3"
	rc=0
	"$BATCH" -q -m "$tmp/m2.tsv" -O "$tmp/b2" 3>>"$tmp/log3" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(cat "$tmp/err")"
	for k in so:/dev/stdout fd3:/dev/fd/3; do
		grep -q "^cuptimerge-batch: ${k%%:*}: the output ${k#*:} names a descriptor, not a file" "$tmp/err" ||
			fail "${k%%:*}: message: $(cat "$tmp/err")"
	done
	[ "$(cat "$tmp/log3")" = "$PREFIX" ] || fail "3>>log3 changed: $(head -c 200 "$tmp/log3")"
	[ ! -s "$tmp/out" ] || fail "standard output: $(head -c 200 "$tmp/out")"
	[ -s "$tmp/b2/ok.json" ] || fail "the rank with a file's name was not merged"
fi

# A standard output left non-blocking (O_NONBLOCK on the pipe's open file
# description, which cuptimerge shares with whoever set it: a parent, a
# shell's other program): every write the pipe had no room for failed with
# EAGAIN, "write error: Resource temporarily unavailable", and the trace
# was cut.  The reader here is slow, not gone: a one-page pipe it starts
# draining late, in small pieces.  Python sets the flag and reads.
if ! command -v python3 >/dev/null 2>&1; then
	skip "standard output non-blocking, a slow reader: every byte, status 0" "no python3"
else
	tcase "standard output non-blocking, a slow reader: every byte, status 0"
	cat >"$tmp/slowread.py" <<'EOF2'
import fcntl, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
p = subprocess.Popen(sys.argv[2:], stdout=w)
os.close(w)
time.sleep(0.2)
with open(sys.argv[1], "wb") as out:
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        out.write(b)
        time.sleep(0.0005)
sys.exit(p.wait())
EOF2
	for f in "" -z --format=perfetto "-o /dev/stdout"; do
		case $f in -z) want=$tmp/plain.gz ;; --format=perfetto) want=$tmp/plain.pftrace ;; *) want=$tmp/plain.json ;; esac
		rc=0
		# shellcheck disable=SC2086 # $f is an option, or two, or none
		python3 "$tmp/slowread.py" "$tmp/nb" $CUPTIMERGE $f -w "$W" "$C" 2>"$tmp/err" || rc=$?
		[ $rc -eq 0 ] || fail "${f:-stdout}: exit $rc: $(cat "$tmp/err")"
		cmp -s "$want" "$tmp/nb" || fail "${f:-stdout}: $(wc -c <"$tmp/nb") bytes, not the $(wc -c <"$want") of a plain run"
	done
fi

# binary output onto a terminal is refused on standard output (ttyout.sh):
# so it is through -o /dev/stdout on one; the terminal is script(1)'s
if ! command -v script >/dev/null 2>&1; then
	skip "-z or --format=perfetto -o /dev/stdout on a terminal: refused as on standard output" "no script(1)"
else
	tcase "-z or --format=perfetto -o /dev/stdout on a terminal: refused as on standard output"
	for f in -z --format=perfetto; do
		rc=0
		script -qec "$CUPTIMERGE -q $f -w '$W' -o /dev/stdout '$C'" /dev/null </dev/null >"$tmp/tty" 2>&1 || rc=$?
		[ $rc -eq 2 ] || fail "$f: exit $rc, wanted 2"
		grep -q "^cuptimerge: .* is not written to a terminal" "$tmp/tty" ||
			fail "$f: message: $(head -c 200 "$tmp/tty" | od -c | head -3)"
	done
fi
finish
