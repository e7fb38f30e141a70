#!/bin/sh
# io.sh - output handling: -o (atomic, gzip by name), -z, write errors,
# a reader that closes the pipe early, stdin as the CPU trace.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compare JSON"

W=$FIX/window.json
C=$FIX/cpu.json

# nobody_can_run: the cases that run cuptimerge as a second user can run
# here (root, runuser and a user nobody)
nobody_can_run() {
	[ "$(id -u)" = 0 ] && command -v runuser >/dev/null 2>&1 && id nobody >/dev/null 2>&1
}

# nobody_dir DIR MODE: $tmp/DIR made with MODE, which the user nobody can
# reach, holding copies of the pair that nobody can read
nobody_dir() {
	chmod 711 "$tmp"
	mkdir "$tmp/$1"
	chmod "$2" "$tmp/$1"
	cp "$W" "$C" "$tmp/$1/"
	chmod 644 "$tmp/$1/window.json" "$tmp/$1/cpu.json"
}

tcase "-o FILE.gz writes gzip"
$CUPTIMERGE --trace-name example -w "$W" -o "$tmp/out.json.gz" "$C" || fail "-o .gz: exit $?"
[ "$(head -c 2 "$tmp/out.json.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "-o .gz did not write gzip"
$JSONCMP "$FIX/expected.json" "$tmp/out.json.gz" || fail "-o .gz: output differs"

# every level class: stored (0), ISA-L's where the build has it (1-3), zlib's
# (6, 9)
for z in -z0 -z1 -z2 -z3 -z6 -z9; do
	tcase "$z writes gzip"
	# to a file first: in `cuptimerge | gzip -dc` the status of cuptimerge is lost
	$CUPTIMERGE $z --trace-name example -w "$W" "$C" >"$tmp/z.gz" || fail "$z: exit $?"
	gzip -dc "$tmp/z.gz" >"$tmp/z.json" || fail "$z: gzip -d failed"
	$JSONCMP "$FIX/expected.json" "$tmp/z.json" || fail "$z: output differs"
done

# the default traceName is the -o name, as the reference's output path
tcase "the default traceName is the -o path"
$CUPTIMERGE -w "$W" -o "$tmp/named.json" "$C" || fail "-o: exit $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["traceName"] != sys.argv[1])' \
	"$tmp/named.json" || fail "traceName is not the -o path"

tcase "the CPU trace on stdin"
$CUPTIMERGE --trace-name example -w "$W" <"$C" >"$tmp/stdin.json" || fail "stdin: exit $?"
$JSONCMP "$FIX/expected.json" "$tmp/stdin.json" || fail "stdin: output differs"
tcase "the window on stdin"
$CUPTIMERGE --trace-name example -w - "$C" <"$W" >"$tmp/wstdin.json" || fail "window on stdin: exit $?"
$JSONCMP "$FIX/expected.json" "$tmp/wstdin.json" || fail "window on stdin: output differs"

# a full disk is an error with a message
if [ ! -w /dev/full ]; then
	skip ">/dev/full is a write error" "no writable /dev/full"
else
	tcase ">/dev/full is a write error"
	set +e
	$CUPTIMERGE -w "$W" "$C" >/dev/full 2>"$tmp/err"
	rc=$?
	set -e
	[ $rc -eq 3 ] || fail ">/dev/full: exit $rc, wanted 3"
	grep -q "write error" "$tmp/err" || fail ">/dev/full: no write error message: $(cat "$tmp/err")"
fi

# a reader that stops early: quiet, status 0 (bigger than the pipe buffer; the
# process, base time and times of the window's, so that the pair is not refused)
tcase "a reader that closes the pipe early: quiet, status 0"
python3 - "$tmp/big.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "cpu_op", "name": "op%d" % i, "pid": 4242, "tid": 1, "ts": 5000000 + i, "dur": 1,
       "args": {}} for i in range(60000)]
json.dump({"baseTimeNanoseconds": 1759300074000000000, "traceEvents": ev}, open(sys.argv[1], "w"))
PY
# -j 1, 2 write on the threads that make the output, 4 and 8 through a
# writing thread (io/outwriter.c), plain and gzip'd
for j in 1 2 4 8; do
	for z in "" -z1; do
		set +e
		( $CUPTIMERGE -j $j $z -w "$W" "$tmp/big.json" 2>"$tmp/err"; echo $? >"$tmp/rc" ) | head -c 100 >/dev/null
		set -e
		[ "$(cat "$tmp/rc")" = 0 ] || fail "closed pipe, -j $j $z: exit $(cat "$tmp/rc"), wanted 0"
		[ ! -s "$tmp/err" ] || fail "closed pipe, -j $j $z: not quiet: $(cat "$tmp/err")"
	done
done

# F30: a replaced file keeps its permission bits (a private trace stays
# private), with O_TMPFILE and with the named temporary file; a new file
# gets what the umask gives
for notmp in 0 1; do
	tcase "F30: -o over a 0600 / 0640 / 0604 file keeps its mode (CUPTIMERGE_NO_TMPFILE=$notmp)"
	for m in 600 640 604; do
		rm -f "$tmp/m.json"
		echo old >"$tmp/m.json"
		chmod $m "$tmp/m.json"
		CUPTIMERGE_NO_TMPFILE=$notmp $CUPTIMERGE -q --trace-name example -w "$W" -o "$tmp/m.json" "$C" ||
			fail "$m: exit $?"
		[ "$(stat -c %a "$tmp/m.json")" = $m ] || fail "$m came back $(stat -c %a "$tmp/m.json")"
		$JSONCMP "$FIX/expected.json" "$tmp/m.json" || fail "$m: output differs"
	done
	ln -sf m.json "$tmp/mlink.json"
	chmod 600 "$tmp/m.json"
	CUPTIMERGE_NO_TMPFILE=$notmp $CUPTIMERGE -q -w "$W" -o "$tmp/mlink.json" "$C" || fail "link: exit $?"
	[ -L "$tmp/mlink.json" ] && [ "$(stat -c %a "$tmp/m.json")" = 600 ] ||
		fail "through a link: $(stat -c %a "$tmp/m.json")"
	rm -f "$tmp/new.json"
	(umask 027 && CUPTIMERGE_NO_TMPFILE=$notmp $CUPTIMERGE -q -w "$W" -o "$tmp/new.json" "$C") || fail "new: exit $?"
	[ "$(stat -c %a "$tmp/new.json")" = 640 ] || fail "a new file under umask 027: $(stat -c %a "$tmp/new.json")"
done

# the owner and group too, where permitted: root keeps them; a user who may
# replace a file but not give it its group gets its own, without the group's
# permission bits (they were granted to the old group)
if ! nobody_can_run; then
	skip "F30: the owner and group are kept where permitted" "needs root and runuser"
else
	tcase "F30: the owner and group are kept where permitted"
	nobody_dir own 777
	echo old >"$tmp/own/o.json"
	chown nobody:"$(id -gn nobody)" "$tmp/own/o.json"
	chmod 640 "$tmp/own/o.json"
	for notmp in 0 1; do
		CUPTIMERGE_NO_TMPFILE=$notmp $CUPTIMERGE -q -w "$W" -o "$tmp/own/o.json" "$C" || fail "as root: exit $?"
		[ "$(stat -c '%U:%G %a' "$tmp/own/o.json")" = "nobody:$(id -gn nobody) 640" ] ||
			fail "as root, NO_TMPFILE=$notmp: $(stat -c '%U:%G %a' "$tmp/own/o.json")"
	done
	echo old >"$tmp/own/r.json"
	chmod 664 "$tmp/own/r.json" # root's file, root's group; nobody may replace it (the directory is 777)
	runuser -u nobody -- "$CUPTIMERGE" -q -w "$tmp/own/window.json" -o "$tmp/own/r.json" "$tmp/own/cpu.json" ||
		fail "as nobody: exit $?"
	[ "$(stat -c '%U %a' "$tmp/own/r.json")" = "nobody 604" ] ||
		fail "as nobody: $(stat -c '%U:%G %a' "$tmp/own/r.json"), wanted nobody's, 604"
fi

# F21: an -o file whose name is 237 to 255 bytes long (its temporary name
# .NAME.cuptimerge-XXXXXX would pass NAME_MAX) is created and replaced, as
# `>` would, with O_TMPFILE and with the named temporary file
long=$(printf '%0245d' 0).json
for notmp in 0 1; do
	tcase "F21: -o a 250-byte name, created then replaced (CUPTIMERGE_NO_TMPFILE=$notmp)"
	mkdir "$tmp/long$notmp"
	for run in create replace; do
		CUPTIMERGE_NO_TMPFILE=$notmp $CUPTIMERGE -q --trace-name example -w "$W" -o "$tmp/long$notmp/$long" "$C" ||
			fail "$run: exit $?"
		$JSONCMP "$FIX/expected.json" "$tmp/long$notmp/$long" || fail "$run: output differs"
	done
	[ "$(ls -A "$tmp/long$notmp")" = "$long" ] || fail "left in the directory: $(ls -A "$tmp/long$notmp")"
done

# F21: in a sticky directory (like /tmp) a user may write another user's
# file with `>` but rename(2) may not replace it: found before any input is
# read (the CPU trace here is not JSON: exit 3 for -o, not 1 for the
# trace), the old file kept; its owner and root replace it
if ! nobody_can_run; then
	skip "F21: another user's file in a sticky directory: refused before any input is read" "needs root and runuser"
else
	tcase "F21: another user's file in a sticky directory: refused before any input is read"
	nobody_dir sticky 1777
	echo '{"traceEvents": [' >"$tmp/sticky/bad.json"
	chmod 644 "$tmp/sticky/bad.json"
	echo OLD >"$tmp/sticky/out.json"
	chmod 666 "$tmp/sticky/out.json"
	rc=0
	runuser -u nobody -- "$CUPTIMERGE" -w "$tmp/sticky/window.json" -o "$tmp/sticky/out.json" "$tmp/sticky/bad.json" \
		2>"$tmp/err" || rc=$?
	[ $rc -eq 3 ] || fail "exit $rc, wanted 3: $(cat "$tmp/err")"
	grep -q "^cuptimerge: $tmp/sticky/out.json: cannot replace another user's file in a sticky directory" "$tmp/err" ||
		fail "message: $(cat "$tmp/err")"
	[ "$(cat "$tmp/sticky/out.json")" = OLD ] || fail "the old file changed"
	CUPTIMERGE_NO_TMPFILE=1 runuser -u nobody -- "$CUPTIMERGE" -q -w "$tmp/sticky/window.json" \
		-o "$tmp/sticky/out.json" "$tmp/sticky/cpu.json" 2>"$tmp/err" && fail "NO_TMPFILE: exit 0"
	grep -q "cannot replace another user's file" "$tmp/err" || fail "NO_TMPFILE: $(cat "$tmp/err")"
	[ "$(ls -A "$tmp/sticky" | sort | tr '\n' ' ')" = "bad.json cpu.json out.json window.json " ] ||
		fail "left in the directory: $(ls -A "$tmp/sticky")"
	# nobody's own file there, and root over nobody's: replaced
	echo OLD >"$tmp/sticky/mine.json"
	chown nobody "$tmp/sticky/mine.json"
	runuser -u nobody -- "$CUPTIMERGE" -q --trace-name example -w "$tmp/sticky/window.json" \
		-o "$tmp/sticky/mine.json" "$tmp/sticky/cpu.json" || fail "nobody over its own file: exit $?"
	$JSONCMP "$FIX/expected.json" "$tmp/sticky/mine.json" || fail "nobody over its own file: output differs"
	$CUPTIMERGE -q --trace-name example -w "$W" -o "$tmp/sticky/mine.json" "$C" || fail "root over nobody's: exit $?"
fi

# -o into a directory that is missing, is a file or cannot be written: the
# directory is named with what is wrong with it ("cannot create a temporary
# file beside it" sent the user looking for a temporary file), both ways of
# making the file (unnamed, and named where O_TMPFILE is not supported)
touch "$tmp/afile"
for notmp in 0 1; do
	tcase "-o into a missing directory or under a file names the directory (CUPTIMERGE_NO_TMPFILE=$notmp)"
	for o in "nodir/sub/x.json:nodir/sub: No such file or directory" "afile/x.json:afile: Not a directory" \
		"nodir/:nodir: No such file or directory"; do
		rc=0
		CUPTIMERGE_NO_TMPFILE=$notmp $CUPTIMERGE -w "$W" -o "$tmp/${o%%:*}" "$C" 2>"$tmp/err" || rc=$?
		[ $rc -eq 3 ] || fail "-o ${o%%:*}: exit $rc, not 3"
		[ "$(cat "$tmp/err")" = "cuptimerge: $tmp/${o%%:*}: cannot write in $tmp/${o#*:}" ] ||
			fail "-o ${o%%:*}: says: $(cat "$tmp/err")"
	done
	[ ! -e "$tmp/nodir" ] || fail "something was made"
done
if ! nobody_can_run; then
	skip "-o into a directory the user cannot write names the directory" "needs root and runuser"
else
	nobody_dir rodir 755
	for notmp in 0 1; do
		tcase "-o into a directory the user cannot write names the directory (CUPTIMERGE_NO_TMPFILE=$notmp)"
		rc=0
		CUPTIMERGE_NO_TMPFILE=$notmp runuser -u nobody -- "$CUPTIMERGE" -w "$tmp/rodir/window.json" \
			-o "$tmp/rodir/x.json" "$tmp/rodir/cpu.json" 2>"$tmp/err" || rc=$?
		[ $rc -eq 3 ] || fail "exit $rc, not 3"
		[ "$(cat "$tmp/err")" = "cuptimerge: $tmp/rodir/x.json: cannot write in $tmp/rodir: Permission denied" ] ||
			fail "says: $(cat "$tmp/err")"
		rc=0
		(cd "$tmp/rodir" && CUPTIMERGE_NO_TMPFILE=$notmp runuser -u nobody -- "$CUPTIMERGE" -w window.json \
			-o x.json cpu.json) 2>"$tmp/err" || rc=$?
		[ $rc -eq 3 ] || fail "in it: exit $rc, not 3"
		[ "$(cat "$tmp/err")" = "cuptimerge: x.json: cannot write in the working directory: Permission denied" ] ||
			fail "in it: says: $(cat "$tmp/err")"
	done
fi

# an -o name too long for its file system was found only when the finished
# output was to take it, after the whole merge; now before any input is
# read (the CPU trace, a FIFO without a writer, would block the read)
tcase "-o a name too long: status 3, one line, before any input is read"
long=$(printf '%0300d' 0)
mkfifo "$tmp/nowriter"
for notmp in 0 1; do
	rc=0
	CUPTIMERGE_NO_TMPFILE=$notmp timeout 10 $CUPTIMERGE -w "$W" -o "$tmp/$long.json" "$tmp/nowriter" 2>"$tmp/err" || rc=$?
	[ $rc -eq 3 ] || fail "NO_TMPFILE=$notmp: exit $rc, not 3 (124: it read the input)"
	[ "$(cat "$tmp/err")" = "cuptimerge: $tmp/$long.json: cannot create it: File name too long" ] ||
		fail "NO_TMPFILE=$notmp: says: $(cat "$tmp/err")"
done

# -o naming an input, by its name, a symbolic or a hard link: the merge
# replaced it with its output once done, and -o naming the window lost the
# window; refused now, as cuptimerge-batch refuses a rank's output that is
# its input (cli11)
tcase "-o naming the CPU trace, the window or the thread map (or a link to it): a usage error, the input kept"
cp "$C" "$tmp/in_c.json"
cp "$W" "$tmp/in_w.json"
cp "$FIX/thread_map.json" "$tmp/in_m.json"
ln -s in_c.json "$tmp/in_sym.json"
ln "$tmp/in_w.json" "$tmp/in_hard.json"
for o in "in_c.json:the CPU trace" "in_sym.json:the CPU trace $tmp/in_c.json" "in_w.json:the window" \
	"in_hard.json:the window $tmp/in_w.json" "in_m.json:the thread map"; do
	rc=0
	$CUPTIMERGE -w "$tmp/in_w.json" -t "$tmp/in_m.json" -o "$tmp/${o%%:*}" "$tmp/in_c.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "-o ${o%%:*}: exit $rc, not 2"
	[ "$(head -n 1 "$tmp/err")" = "cuptimerge: -o $tmp/${o%%:*} is ${o#*:}, which the output would replace: write to another file" ] ||
		fail "-o ${o%%:*}: says: $(cat "$tmp/err")"
done
cmp -s "$C" "$tmp/in_c.json" && cmp -s "$W" "$tmp/in_w.json" && cmp -s "$FIX/thread_map.json" "$tmp/in_m.json" ||
	fail "an input was replaced"
cp "$tmp/in_c.json" "$tmp/in_copy.json"
$CUPTIMERGE -q -w "$tmp/in_w.json" -o "$tmp/in_copy.json" "$tmp/in_c.json" || fail "-o over a copy of the input: exit $?"
# and standard output on an input (`>> FILE`, as cat(1) refuses it): the
# output was appended to the input as it was read
tcase "standard output on an input (>> FILE, or < FILE for -): a usage error, the input kept"
for o in "in_c.json:the CPU trace $tmp/in_c.json" "in_w.json:the window $tmp/in_w.json"; do
	rc=0
	$CUPTIMERGE -w "$tmp/in_w.json" "$tmp/in_c.json" >>"$tmp/${o%%:*}" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail ">> ${o%%:*}: exit $rc, not 2"
	[ "$(head -n 1 "$tmp/err")" = "cuptimerge: standard output is ${o#*:}, which the output would write over as it is read: write to another file" ] ||
		fail ">> ${o%%:*}: says: $(cat "$tmp/err")"
done
rc=0
$CUPTIMERGE -w "$tmp/in_w.json" - <"$tmp/in_c.json" >>"$tmp/in_c.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] && [ "$(head -n 1 "$tmp/err")" = "cuptimerge: standard output is the CPU trace (standard input), which the output would write over as it is read: write to another file" ] ||
	fail "- < in_c.json >> in_c.json: exit $rc: $(cat "$tmp/err")"
cmp -s "$C" "$tmp/in_c.json" && cmp -s "$W" "$tmp/in_w.json" || fail "an input was changed"

# F26: without /proc (a chroot, a sandbox) the unnamed output could not be
# named through /proc/self/fd, and -o fell back to a named temporary file
# that SIGKILL leaves behind.  Now linkat(2) names it by its descriptor
# (AT_EMPTY_PATH) where the kernel allows that: no name while the run lasts,
# none after SIGKILL.  /proc is hidden by a tmpfs in a mount namespace of the
# test's own (root only).  The run is held after it opened the output (which
# comes before any input is read): its CPU trace is a FIFO that the test
# opens for writing, which returns once cuptimerge opened it for reading.
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1 ||
	! unshare -m sh -c 'mount -t tmpfs none /proc' 2>/dev/null; then
	skip "F26: without /proc, -o leaves nothing after SIGKILL" "needs root and a mount namespace (unshare -m)"
elif ! unshare -m sh -c 'mount -t tmpfs none /proc && "$@"' sh $CUPTIMERGE --version >/dev/null 2>&1; then
	# LeakSanitizer reads /proc at exit
	skip "F26: without /proc, -o leaves nothing after SIGKILL" "this build of cuptimerge cannot run without /proc"
else
	tcase "F26: without /proc, -o leaves nothing after SIGKILL"
	mkdir "$tmp/np"
	cp "$W" "$tmp/np/w.json"
	echo OLD >"$tmp/np/out.json"
	unshare -m sh -c 'mount -t tmpfs none /proc && [ ! -e /proc/self ] && "$@"' sh \
		$CUPTIMERGE -q --trace-name example -w "$W" -o "$tmp/np/new.json" "$C" || fail "a run: exit $?"
	$JSONCMP "$FIX/expected.json" "$tmp/np/new.json" || fail "a run: output differs"
	mkfifo "$tmp/np/fifo"
	unshare -m sh -c 'mount -t tmpfs none /proc && echo $$ >"$1" && shift && exec "$@"' sh "$tmp/np/pid" \
		$CUPTIMERGE -q -w "$tmp/np/w.json" -o "$tmp/np/out.json" "$tmp/np/fifo" 2>"$tmp/err" &
	np=$!
	exec 7>"$tmp/np/fifo" # returns once cuptimerge has opened it: the output is open by then
	names=$(ls -A "$tmp/np" | tr '\n' ' ')
	kill -9 "$(cat "$tmp/np/pid")"
	exec 7>&-
	{ wait $np; } 2>/dev/null || true # quiet: no "Killed" from the shell
	[ "$names" = "fifo new.json out.json pid w.json " ] || fail "names while it ran: $names"
	[ "$(ls -A "$tmp/np" | tr '\n' ' ')" = "fifo new.json out.json pid w.json " ] ||
		fail "left after SIGKILL: $(ls -A "$tmp/np")"
	[ "$(cat "$tmp/np/out.json")" = OLD ] || fail "the old file changed"
fi

# An input that cannot be JSON is refused at its first byte: a pipe was read
# whole into $TMPDIR first (cat /dev/zero | cuptimerge: 3 GB in 3 s, never
# ending), a thread map's whole into memory.  The 100 MB of zeros go through
# a pipe under a file size limit of 10 MB, which a spool would pass (the
# shell's limit is in 512-byte blocks); the refusal names the byte.
mkdir "$tmp/spool"
for bs in 1 7 default; do
	rs=; [ $bs = default ] || rs="--buffer-size $bs"
	tcase "a pipe of zeros as the window is refused at its first byte (read size $bs)"
	expect_exit 1 "^cuptimerge: <stdin>:0: invalid JSON: the text starts with byte 0x00, where '[{]' must be\$" \
		sh -c 'zeros() { head -c 100000000 /dev/zero; }; ulimit -f 20000; zeros | TMPDIR="$1" "$2" $3 -w - "$4"' sh \
		"$tmp/spool" "$CUPTIMERGE" "$rs" "$C"
	tcase "a pipe of zeros as the CPU trace is refused at its first byte (read size $bs)"
	expect_exit 1 "^cuptimerge: <stdin>:0: invalid JSON: the text starts with byte 0x00" \
		sh -c 'zeros() { head -c 100000000 /dev/zero; }; ulimit -f 20000; zeros | TMPDIR="$1" "$2" $3 -w "$4"' sh \
		"$tmp/spool" "$CUPTIMERGE" "$rs" "$W"
	tcase "a pipe of zeros as the thread map is refused at its first byte (read size $bs)"
	expect_exit 1 "^cuptimerge: /dev/stdin:0: invalid JSON: the text starts with byte 0x00" \
		sh -c 'zeros() { head -c 100000000 /dev/zero; }; zeros | "$1" $2 -t /dev/stdin "$3" >/dev/null' sh \
		"$CUPTIMERGE" "$rs" "$C"
	# the same past a good first byte: a control byte outside a string
	# belongs to no token, and yajl was handed none until the token's end
	# (the thread map held it all)
	tcase "zeros after '{\"a\":' in a piped thread map are refused at the first (read size $bs)"
	expect_exit 1 "^cuptimerge: /dev/stdin:5: invalid JSON: a control byte outside a string\$" \
		sh -c 'zeros() { printf "{\"a\":"; head -c 100000000 /dev/zero; }; zeros | "$1" $2 -t /dev/stdin "$3" >/dev/null' sh \
		"$CUPTIMERGE" "$rs" "$C"
	# past a good start, in a value or a key: the splitter held the
	# value as it grew (a pipe of zeros after '['), then the careful
	# reader's rewind read the rest of the pipe into $TMPDIR before it
	# began (after '{'), then yajl was handed no string until its end
	# (after '"').  Now each stops at the byte, as with a file: the
	# zeros' writer is cut off ($tmp/all: it wrote them all), the spool
	# stays under the file size limit, and the timeout fails a run that
	# reads on instead of hanging the test (cat /dev/zero never ended).
	for z in 'cpu:18:invalid char in json text:{"traceEvents":[ x' \
		'cpu:1:a control byte outside a string:{' \
		'cpu:19:invalid character inside string:{"traceEvents":[{"a' \
		'cpu:17:a control byte outside a string:{"traceEvents":[1' \
		'cpu:22:invalid .non-hex. character occurs after ..u. inside string:{"traceEvents":[{"a\u1' \
		'win:13:invalid char in json text:{"events":[ x' \
		'win:6:a control byte outside a string:{"x":[' \
		'win:2:invalid character inside string:{"' \
		'map:6:invalid character inside string:{"a":"'; do
		role=${z%%:*} z=${z#*:} at=${z%%:*} z=${z#*:} why=${z%%:*} pre=${z#*:}
		case $role in
		cpu) args="-w $W -" name='<stdin>' ;;
		win) args="-w - $C" name='<stdin>' ;;
		map) args="-t /dev/stdin -w $W $C" name=/dev/stdin ;;
		esac
		tcase "zeros after '$pre' in a piped $role input are refused at the first, read no further (read size $bs)"
		rm -f "$tmp/all"
		expect_exit 1 "^cuptimerge: $name:$at: invalid JSON: $why\$" \
			sh -c 'ulimit -f 20000; { printf %s "$1"; head -c 100000000 /dev/zero && : >"$2"; } |
				TMPDIR="$3" timeout 60 "$4" $5 $6 >/dev/null' sh \
			"$pre" "$tmp/all" "$tmp/spool" "$CUPTIMERGE" "$rs" "$args"
		[ ! -e "$tmp/all" ] || fail "all 100 MB of zeros were read"
	done
	[ -z "$(ls -A "$tmp/spool")" ] || fail "left in TMPDIR: $(ls -A "$tmp/spool")"
	tcase "text is checked from its first byte past white space and a byte order mark (read size $bs)"
	printf '\357\273\277 \r\n\tx{}' >"$tmp/x.json"
	expect_exit 1 "^cuptimerge: $tmp/x.json:7: invalid JSON: the text starts with 'x' \\(0x78\\)" \
		$CUPTIMERGE $rs -w "$W" "$tmp/x.json"
	tcase "the text of a gzip stream is checked (read size $bs)"
	head -c 1000000 /dev/zero | gzip -1 >"$tmp/zeros.gz"
	expect_exit 1 "^cuptimerge: $tmp/zeros.gz:0: invalid JSON: the text starts with byte 0x00" \
		$CUPTIMERGE $rs -w "$tmp/zeros.gz" "$C"
done

# Python's json writes NaN, Infinity and -Infinity for floats JSON cannot
# hold: each is refused as not JSON, named, where yajl's word was "invalid
# char in json text" (-Infinity's "a digit is required after the minus
# sign"), at the byte after its first, as before; never "beyond a double's
# range", 1e400's word (a .pftrace), whichever the output
for lit in NaN Infinity -Infinity; do
	case $lit in
	NaN) what="a float that is not a number" ;;
	Infinity) what="an infinite float" ;;
	*) what="a negative infinite float" ;;
	esac
	for where in cpu:pid cpu:tid win:process_id win:thread_id map:native_id; do
		role=${where%%:*} key=${where#*:}
		case $role in
		cpu) src=$C ;;
		win) src=$W ;;
		*) src=$FIX/thread_map.json ;;
		esac
		# the first "KEY": N of the file, N made the literal
		sed "0,/\"$key\": [0-9]*/s//\"$key\": $lit/" "$src" >"$tmp/lit.json"
		at=$(($(grep -bo "\"$key\": $lit" "$tmp/lit.json" | head -n 1 | cut -d: -f1) + ${#key} + 5))
		case $role in
		cpu) args="-w $W $tmp/lit.json" ;;
		win) args="-w $tmp/lit.json $C" ;;
		*) args="-t $tmp/lit.json -w $W $C" ;;
		esac
		for fmt in json perfetto; do
			tcase "a $key of $lit in the $role input, --format=$fmt: named as not JSON"
			expect_exit 1 "^cuptimerge: $tmp/lit.json:$at: invalid JSON: $lit \\(Python's literal for $what\\) is not JSON\$" \
				$CUPTIMERGE -q --format=$fmt -o "$tmp/lit.out" $args
		done
	done
done

# --help and --version go to stdout and succeed
tcase "--help"
$CUPTIMERGE --help >"$tmp/help" || fail "--help: exit $?"
grep -q -- "--window" "$tmp/help" || fail "--help lacks --window"
tcase "--version"
$CUPTIMERGE --version >"$tmp/version" || fail "--version: exit $?"
grep -q "^cuptimerge " "$tmp/version" || fail "--version: $(cat "$tmp/version")"
# the deflate of each gzip level, with its version
tcase "--version names the deflate of each gzip level"
grep -Eq '^gzip levels 1-3: (ISA-L( [0-9]+\.[0-9]+\.[0-9]+)?|zlib [0-9.]+)$' "$tmp/version" ||
	fail "--version: no line for levels 1-3: $(cat "$tmp/version")"
grep -Eq '^gzip levels 0, 4-9: zlib [0-9.]+$' "$tmp/version" ||
	fail "--version: no line for levels 0, 4-9: $(cat "$tmp/version")"
# and the one configure chose (the build tree's config.h, where the binary
# under test is the build's)
cfg=$(dirname "$CUPTIMERGE")/../config.h
if [ -f "$cfg" ]; then
	want=zlib
	! grep -q '^#define HAVE_ISAL 1' "$cfg" || want=ISA-L
	grep -q "^gzip levels 1-3: $want" "$tmp/version" ||
		fail "--version: the build has $want for levels 1-3 (config.h), but: $(cat "$tmp/version")"
fi
finish
