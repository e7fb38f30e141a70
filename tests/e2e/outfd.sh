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
