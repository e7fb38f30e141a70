#!/bin/sh
# ttyout.sh - binary output onto a terminal is refused, as gzip(1) refuses
# it: -z, -o - with -z, --format=perfetto on standard output that is a
# terminal give a usage error (status 2) and write nothing; JSON text to a
# terminal, and binary output to a pipe or -o FILE, still work.  And no
# trace named with standard input a terminal is a usage error, not a wait.
# The terminal is script(1)'s pseudo-terminal.
. "${srcdir:-.}/tests/e2e/common.sh"
need script "to give the program a terminal"

W=$FIX/window.json
C=$FIX/cpu.json

# ontty CMD: run the shell command CMD with stdin, stdout and stderr on a
# pseudo-terminal; what it wrote in $tmp/tty, its status in $rc
ontty() {
	rc=0
	script -qec "$1" /dev/null </dev/null >"$tmp/tty" 2>&1 || rc=$?
}

for how in "-z" "-z9 -o -" "--gzip=1" "--format=perfetto" "--format=perfetto -z"; do
	tcase "binary output onto a terminal is refused: $how"
	ontty "$CUPTIMERGE -q $how -w '$W' '$C'"
	[ $rc -eq 2 ] || fail "exit $rc, wanted 2"
	grep -q "^cuptimerge: .* is not written to a terminal: give -o FILE or a pipe" "$tmp/tty" ||
		fail "message: $(head -c 300 "$tmp/tty" | od -c | head -5)"
	[ "$(grep -vc "^cuptimerge: \|^Try 'cuptimerge --help'" "$tmp/tty")" -eq 0 ] ||
		fail "wrote more than the message: $(head -c 200 "$tmp/tty" | od -c | head -5)"
done

# no trace named and standard input a terminal: the run sat waiting for a
# trace typed in (gzip -d and zstd refuse a terminal as their input too)
tcase "no trace named, standard input a terminal: a usage error, not a wait"
ontty "$CUPTIMERGE -q -w '$W'"
[ $rc -eq 2 ] || fail "exit $rc, wanted 2: $(head -c 300 "$tmp/tty")"
grep -q "^cuptimerge: no trace given, and standard input is a terminal: give CPU_TRACE (or - to read the terminal)" "$tmp/tty" ||
	fail "message: $(head -c 300 "$tmp/tty")"
tcase "'-' reads the terminal still, and a pipe is read as before"
ontty "$CUPTIMERGE -q -w '$W' -"
[ $rc -eq 1 ] && grep -q "<stdin>:0: no JSON: the input is empty" "$tmp/tty" || fail "-: exit $rc: $(head -c 300 "$tmp/tty")"
ontty "cat '$C' | $CUPTIMERGE -q -w '$W' | grep -c traceEvents"
[ $rc -eq 0 ] && [ "$(tr -d '\r' <"$tmp/tty")" = 1 ] || fail "a pipe: exit $rc: $(head -c 300 "$tmp/tty")"

tcase "JSON onto a terminal, and binary output onto a pipe or a file, still go"
ontty "$CUPTIMERGE -q -w '$W' '$C'"
[ $rc -eq 0 ] || fail "JSON to a terminal: exit $rc: $(head -c 300 "$tmp/tty")"
grep -q traceEvents "$tmp/tty" || fail "no JSON on the terminal"
ontty "$CUPTIMERGE -q -z -w '$W' '$C' | gzip -dc | grep -c traceEvents"
[ $rc -eq 0 ] && [ "$(tr -d '\r' <"$tmp/tty")" = 1 ] || fail "-z to a pipe: exit $rc: $(head -c 300 "$tmp/tty")"
ontty "$CUPTIMERGE -q -w '$W' -o '$tmp/o.pftrace' '$C'"
[ $rc -eq 0 ] && [ -s "$tmp/o.pftrace" ] || fail "-o FILE.pftrace from a terminal: exit $rc: $(head -c 300 "$tmp/tty")"

finish
