#!/bin/sh
# reread.sh - the merge reads its inputs more than once.  A regular file that
# changes between the passes fails the run with status 3 and leaves no
# output (F16), and inputs that cannot be opened twice (a named pipe, what
# `-w <(zcat ...)` gives) are read once and spooled, never opened again.
# (timeout only guards against a hang, as the old build had on a FIFO window.)
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compare JSON"
need mkfifo "to make named pipes"

W=$FIX/window.json
C=$FIX/cpu.json
timeout 60 "$CUPTIMERGE" -q --trace-name t -w "$W" "$C" >"$tmp/want.json"

# The window comes through a named pipe, in two parts; between them (the
# merge is then still reading the window, the CPU trace is open) the CPU
# trace is edited in place, the same length.  The merge cannot finish before
# the second part, so the edit always falls inside the run.
tcase "a same-length edit of the CPU trace during the run: status 3, no output"
cp "$C" "$tmp/cpu.json"
mkfifo "$tmp/win.fifo"
rc=0
{
	head -c 100 "$W"
	sleep 1
	printf 'x' | dd of="$tmp/cpu.json" bs=1 seek=300 conv=notrunc 2>/dev/null
	tail -c +101 "$W"
} >"$tmp/win.fifo" &
timeout 60 "$CUPTIMERGE" -q -w "$tmp/win.fifo" -o "$tmp/out.json" "$tmp/cpu.json" 2>"$tmp/err" || rc=$?
wait
[ "$rc" -eq 3 ] || fail "exit $rc, wanted 3: $(cat "$tmp/err")"
grep -q "cpu.json: the file changed while it was being read" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
[ ! -e "$tmp/out.json" ] || fail "an output file was left"
ls "$tmp" | grep -q 'out\.json' && fail "a temporary output file was left: $(ls "$tmp")"

tcase "the same run without the edit merges"
rm -f "$tmp/win.fifo"
mkfifo "$tmp/win.fifo"
cp "$C" "$tmp/cpu.json"
{
	head -c 100 "$W"
	sleep 1
	tail -c +101 "$W"
} >"$tmp/win.fifo" &
rc=0
timeout 60 "$CUPTIMERGE" -q --trace-name t -w "$tmp/win.fifo" -o "$tmp/out.json" "$tmp/cpu.json" 2>"$tmp/err" || rc=$?
wait
[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
cmp -s "$tmp/want.json" "$tmp/out.json" || fail "output differs from the merge of plain files"

# The window through a pipe that has a name: /dev/fd/N of a pipe, as a
# shell's process substitution gives.  Opening it again gives nothing.
tcase "the window on a pipe named /dev/fd/N (-w <(...))"
rc=0
cat "$W" | timeout 60 "$CUPTIMERGE" -q --trace-name t -w /dev/fd/0 "$C" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
cmp -s "$tmp/want.json" "$tmp/out.json" || fail "output differs from the merge of plain files"

tcase "the CPU trace and the window both on named pipes, gzip on one"
rm -f "$tmp/win.fifo"
mkfifo "$tmp/win.fifo" "$tmp/cpu.fifo"
gzip -c "$W" >"$tmp/win.fifo" &
cat "$C" >"$tmp/cpu.fifo" &
rc=0
timeout 60 "$CUPTIMERGE" -q --trace-name t -w "$tmp/win.fifo" "$tmp/cpu.fifo" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
wait
[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
cmp -s "$tmp/want.json" "$tmp/out.json" || fail "output differs from the merge of plain files"
finish
