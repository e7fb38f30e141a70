#!/bin/sh
# ttyout.sh - binary output onto a terminal is refused, as gzip(1) refuses
# it: -z, -o - with -z, --format=perfetto on standard output that is a
# terminal give a usage error (status 2) and write nothing; JSON text to a
# terminal, and binary output to a pipe or -o FILE, still work.  Binary
# output is refused too where -o names a terminal (/dev/tty, a link to
# one), where a file of --split leads to one, and in cuptimerge-batch's
# outputs (its merges').  And no
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

# -o naming a terminal (/dev/tty, the terminal's own /dev/pts/N, a link to
# one with a .pftrace or .gz name) was opened and written through, as any
# device is: the binary went onto the terminal all the same.  Refused when
# the output is opened, before any input is read: the message, and
# nothing else on the terminal.  -t reads its thread map after that, and
# the repair (-t without -w) and --steps take the same way.
ln -s /dev/tty "$tmp/tty.pftrace"
ln -s /dev/tty "$tmp/tty.json.gz"
M=$FIX/thread_map.json
for how in "-z -o /dev/tty -w '$W'" "--format=perfetto -o /dev/tty -w '$W'" "-z -o \$(tty) -w '$W'" \
	"-o '$tmp/tty.pftrace' -w '$W'" "-o '$tmp/tty.json.gz' -w '$W'" "-z -o /dev/tty -t '$M' -w '$W'" \
	"-z -o /dev/tty -t '$M'" "-z9 -o /dev/tty --steps 1"; do
	tcase "binary output onto a terminal that -o names is refused: $how"
	ontty "$CUPTIMERGE -q $how '$C'"
	[ $rc -eq 2 ] || fail "exit $rc, wanted 2: $(head -c 300 "$tmp/tty" | od -c | head -5)"
	grep -q "^cuptimerge: .*: \\(gzip\\|Perfetto's protobuf\\) output is not written to a terminal: give -o FILE or a pipe" \
		"$tmp/tty" || fail "message: $(head -c 300 "$tmp/tty" | od -c | head -5)"
	[ "$(grep -vc "^cuptimerge: " "$tmp/tty")" -eq 0 ] ||
		fail "wrote more than the message: $(head -c 200 "$tmp/tty" | od -c | head -5)"
done

# a file of --split whose name leads to a terminal: its name is known only
# once the steps are, after the input is read; refused then, and no file
# of the split is left
mkdir "$tmp/split"
ln -s /dev/tty "$tmp/split/2.json.gz"
for how in "-w '$FIX/cut_window.json'" ""; do
	tcase "a --split file onto a terminal is refused: ${how:-the trace alone}"
	ontty "$CUPTIMERGE -q --split=steps $how -o '$tmp/split/%s.json.gz' '$FIX/cut_cpu.json'"
	[ $rc -eq 2 ] || fail "exit $rc, wanted 2: $(head -c 300 "$tmp/tty" | od -c | head -5)"
	grep -q "^cuptimerge: $tmp/split/2.json.gz: gzip output is not written to a terminal: give -o FILE or a pipe" \
		"$tmp/tty" || fail "message: $(head -c 300 "$tmp/tty" | od -c | head -5)"
	[ "$(grep -vc "^cuptimerge: " "$tmp/tty")" -eq 0 ] ||
		fail "wrote more than the message: $(head -c 200 "$tmp/tty" | od -c | head -5)"
	[ ! -e "$tmp/split/1.json.gz" ] && [ ! -e "$tmp/split/3.json.gz" ] || fail "files of the split were left"
done

# cuptimerge-batch's outputs are its cuptimerge's -o files: a rank whose
# output leads to a terminal fails (status 4), with that merge's message
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}
for out in tty.json.gz tty.pftrace; do
	tcase "cuptimerge-batch: a rank whose output is a terminal fails: $out"
	printf 'key\tcpu\twindow\toutput\nr0\t%s\t%s\t%s\n' "$C" "$W" "$tmp/$out" >"$tmp/m.tsv"
	ontty "$BATCH -q --force --joblog='$tmp/joblog.tsv' -m '$tmp/m.tsv'"
	[ $rc -eq 4 ] || fail "exit $rc, wanted 4: $(head -c 300 "$tmp/tty" | od -c | head -5)"
	grep -q "^cuptimerge-batch: r0: exit 2: cuptimerge: $tmp/$out: .* output is not written to a terminal" "$tmp/tty" ||
		fail "message: $(head -c 300 "$tmp/tty" | od -c | head -5)"
	[ "$(grep -vc "^cuptimerge" "$tmp/tty")" -eq 0 ] ||
		fail "wrote more than the messages: $(head -c 200 "$tmp/tty" | od -c | head -5)"
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
ontty "$CUPTIMERGE -q -w '$W' -o /dev/tty '$C'"
[ $rc -eq 0 ] && grep -q traceEvents "$tmp/tty" || fail "JSON to -o /dev/tty: exit $rc: $(head -c 300 "$tmp/tty")"
ontty "$CUPTIMERGE -q -z -w '$W' '$C' | gzip -dc | grep -c traceEvents"
[ $rc -eq 0 ] && [ "$(tr -d '\r' <"$tmp/tty")" = 1 ] || fail "-z to a pipe: exit $rc: $(head -c 300 "$tmp/tty")"
ontty "$CUPTIMERGE -q -w '$W' -o '$tmp/o.pftrace' '$C'"
[ $rc -eq 0 ] && [ -s "$tmp/o.pftrace" ] || fail "-o FILE.pftrace from a terminal: exit $rc: $(head -c 300 "$tmp/tty")"

finish
