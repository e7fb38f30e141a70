#!/bin/sh
# closedfds.sh - F20: cuptimerge and cuptimerge-batch run with a standard
# descriptor closed (`2>&-`, `<&-`, `>&-`, as cron, daemons and some job
# launchers run programs).  No file they open may take the closed number:
# warnings written into the -o file made it invalid JSON (exit 0), and a
# window opened as descriptor 0 was read as the CPU trace.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compare JSON"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}

W=$FIX/window.json
C=$FIX/cpu.json

# the --force merge of a window of another process warns twice: with
# standard error closed, the warnings must go nowhere, not into the output
tcase "F20: 2>&- with warnings: the -o file is the same JSON as with 2>/dev/null"
$CUPTIMERGE --force --trace-name t -w "$W" -o "$tmp/ref.json" "$FIX/kineto_cpu.json" 2>/dev/null ||
	fail "2>/dev/null: exit $?"
rc=0
$CUPTIMERGE --force --trace-name t -w "$W" -o "$tmp/closed.json" "$FIX/kineto_cpu.json" 2>&- || rc=$?
[ $rc -eq 0 ] || fail "2>&-: exit $rc"
cmp -s "$tmp/ref.json" "$tmp/closed.json" || fail "2>&-: the output differs: $(head -c 200 "$tmp/closed.json")"
$JSONCMP "$tmp/ref.json" "$tmp/closed.json" >/dev/null 2>&1 || fail "2>&-: the output is not the JSON"

tcase "F20: 2>&- on a failing run: nothing in the old -o file, the status kept"
echo OLD >"$tmp/old.json"
rc=0
$CUPTIMERGE -w "$FIX/bad_window_missing_end_ns.json" -o "$tmp/old.json" "$C" 2>&- || rc=$?
[ $rc -eq 1 ] || fail "exit $rc, wanted 1"
[ "$(cat "$tmp/old.json")" = OLD ] || fail "the old -o file changed: $(head -c 200 "$tmp/old.json")"

# standard input closed and no CPU trace named: "-" is the closed standard
# input, which cannot be read (exit 3), never the window opened as fd 0
tcase "F20: <&- with the CPU trace on standard input: a read error, the window not read as the trace"
rc=0
$CUPTIMERGE -w "$W" <&- >"$tmp/out" 2>"$tmp/err" || rc=$?
[ $rc -eq 3 ] || fail "exit $rc, wanted 3: $(cat "$tmp/err")"
grep -q "^cuptimerge: <stdin>: read error: Bad file descriptor\$" "$tmp/err" || fail "message: $(cat "$tmp/err")"
! grep -q "swapped" "$tmp/err" || fail "the window was read as the CPU trace: $(cat "$tmp/err")"

tcase "F20: <&- with the CPU trace named: merged"
$CUPTIMERGE --trace-name example -w "$W" "$C" <&- >"$tmp/out" || fail "exit $?"
$JSONCMP "$FIX/expected.json" "$tmp/out" || fail "output differs"

tcase "F20: >&- with -o: merged into the file; without -o: a write error"
$CUPTIMERGE --trace-name example -w "$W" -o "$tmp/o.json" "$C" >&- || fail "-o: exit $?"
$JSONCMP "$FIX/expected.json" "$tmp/o.json" || fail "-o: output differs"
rc=0
$CUPTIMERGE -w "$W" "$C" >&- 2>"$tmp/err" || rc=$?
[ $rc -eq 3 ] || fail "no -o: exit $rc, wanted 3: $(cat "$tmp/err")"
grep -q "^cuptimerge: <stdout>: write error: Bad file descriptor\$" "$tmp/err" || fail "message: $(cat "$tmp/err")"

# -o naming standard output (/dev/stdout, /dev/fd/1, a link to one) reopens
# what descriptor 1 holds: with it closed, the stand-in /dev/null, where the
# trace went, status 0.  Now the same as writing to the closed descriptor
# (status 3), said in one line before any input is read; open, written to.
tcase "-o /dev/stdout (or a link to it) with >&-: status 3, one line; with it open, the trace there"
ln -s /dev/stdout "$tmp/so"
for o in /dev/stdout /dev/fd/1 "$tmp/so"; do
	expect_exit 3 "^cuptimerge: $o: cannot write to it: standard output is closed\$" \
		sh -c '"$@" >&-' sh $CUPTIMERGE -w "$W" -o "$o" "$C"
	$CUPTIMERGE --trace-name example -w "$W" -o "$o" "$C" >"$tmp/out" || fail "$o, open: exit $?"
	$JSONCMP "$FIX/expected.json" "$tmp/out" || fail "$o, open: output differs"
done
expect_exit 3 "^cuptimerge: /dev/stdout: cannot write to it: standard output is closed\$" \
	sh -c '"$@" >&-' sh $CUPTIMERGE -w "$W" -o /dev/stdout - <"$C"

tcase "F20: all three closed: -o merged"
$CUPTIMERGE --trace-name example -w "$W" -o "$tmp/all.json" "$C" <&- >&- 2>&- || fail "exit $?"
$JSONCMP "$FIX/expected.json" "$tmp/all.json" || fail "output differs"

# the batch writes its progress and summary on standard error: with it
# closed, the joblog (the first file the batch opens for writing) must not get
# them.  Its progress line shows once a second has passed: each merge here
# takes longer than that (a sleep before cuptimerge).
if [ ! -x "$BATCH" ]; then
	skip "F20: cuptimerge-batch 2>&-: the joblog holds only its lines" "no $BATCH"
else
	tcase "F20: cuptimerge-batch 2>&-: the joblog holds only its lines"
	printf '#!/bin/sh\nsleep 1.1\nexec "%s" "$@"\n' "$(cd "$(dirname "$CUPTIMERGE")" && pwd)/${CUPTIMERGE##*/}" \
		>"$tmp/slow"
	chmod +x "$tmp/slow"
	printf 'key\tcpu trace\twindow or map\toutput\n' >"$tmp/m.tsv"
	printf 'r0\t%s\t%s\t%s\n' "$C" "$W" "$tmp/b/r0.json" >>"$tmp/m.tsv"
	printf 'r1\t%s\t%s\t%s\n' "$C" "$W" "$tmp/b/r1.json" >>"$tmp/m.tsv"
	printf 'gone\t%s\t%s\t\n' "$C" "$tmp/nowhere.json" >>"$tmp/m.tsv"
	$CUPTIMERGE -q --trace-name cpu.json -w "$W" "$C" >"$tmp/direct.json"
	for closed in 2 012; do
		rm -rf "$tmp/b"
		rc=0
		case $closed in
		2) "$BATCH" --progress -j 1 --cuptimerge "$tmp/slow" -m "$tmp/m.tsv" -O "$tmp/b" 2>&- || rc=$? ;;
		*) "$BATCH" --progress -j 1 --cuptimerge "$tmp/slow" -m "$tmp/m.tsv" -O "$tmp/b" <&- >&- 2>&- || rc=$? ;;
		esac
		[ $rc -eq 4 ] || fail "fds $closed closed: exit $rc, wanted 4"
		J=$tmp/b/cuptimerge-batch.tsv
		[ "$(wc -l <"$J")" -eq 4 ] || fail "fds $closed closed: $(wc -l <"$J") joblog lines, wanted 4: $(cat "$J")"
		! grep -q "cuptimerge-batch:" "$J" || fail "fds $closed closed: messages in the joblog: $(cat "$J")"
		for k in r0 r1; do
			grep -q "^$k	.*	0	[0-9.]*	[0-9]*	-\$" "$J" || fail "fds $closed closed: $k: $(cat "$J")"
			cmp -s "$tmp/direct.json" "$tmp/b/$k.json" || fail "fds $closed closed: $k differs from a direct merge"
		done
	done
fi
finish
