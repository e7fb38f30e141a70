#!/bin/sh
# pgzip.sh - gzip output on several threads (-j, src/io/pgzip.c): at -j 1, 2, 3
# and 8 the file is one gzip member that gzip -t accepts, that decompresses to
# the plain output byte for byte, and whose trailer (CRC-32, ISIZE) is the
# one gzip itself writes for those bytes, and it is the same bytes at every
# -j; so at the default level (1), -z2 and -z3 (ISA-L's deflate where the
# build has it) and at -z6 (zlib's always).  Errors and a closed pipe behave
# as with plain output.  Inputs: the bundled example (under one block) and
# a pair from ../shared/tools/gen_trace (many blocks; skipped without it).
. "${srcdir:-.}/tests/e2e/common.sh"
need gzip "to check the gzip output"

shared=${SHARED:-$srcdir/../shared}
NOW=1764441600

# which deflate each level gets in this build (--version says), for the log
diag "$($CUPTIMERGE --version | grep '^gzip levels')"

# check_gz NAME PLAIN GZ: GZ is one valid gzip member of PLAIN's bytes.
check_gz() {
	gzip -t "$3" 2>"$tmp/gzerr" || fail "$1: gzip -t: $(cat "$tmp/gzerr")"
	gzip -dc "$3" >"$tmp/unz" 2>"$tmp/gzerr" || fail "$1: gzip -d: $(cat "$tmp/gzerr")"
	cmp -s "$2" "$tmp/unz" || fail "$1: decompresses to other bytes than the plain output"
	# the trailer gzip writes for the same bytes: CRC-32, then ISIZE
	[ "$(gzip -c "$2" | tail -c 8 | od -An -tx1)" = "$(tail -c 8 "$3" | od -An -tx1)" ] ||
		fail "$1: trailer $(tail -c 8 "$3" | od -An -tx1) is not gzip's $(gzip -c "$2" | tail -c 8 | od -An -tx1)"
	# gzip -l reads ISIZE: the plain size (below 4 GiB here)
	[ "$(gzip -l "$3" | awk 'NR == 2 { print $2 }')" = "$(wc -c <"$2" | tr -d ' ')" ] ||
		fail "$1: gzip -l: $(gzip -l "$3" | tail -1), plain $(wc -c <"$2") bytes"
	[ "$(head -c 3 "$3" | od -An -tx1 | tr -d ' ')" = 1f8b08 ] || fail "$1: not a gzip header"
}

# pair NAME WINDOW CPU: -o FILE.gz at each level and -j 1, 2, 3 and 8
# against -o FILE, and against -j 1's bytes at the same level.
pair() {
	tcase "$1: plain output"
	$CUPTIMERGE -q --trace-name T --now $NOW -w "$2" -o "$tmp/plain.json" "$3" ||
		fail "$1: plain: exit $?"
	# "": the level -o FILE.gz gets by default
	for z in "" -z6 -z2 -z3; do
		for j in 1 2 3 8; do
			tcase "$1: -o out.json.gz ${z:-(default level)} -j $j is one gzip member of the plain output"
			rm -f "$tmp/out.json.gz"
			$CUPTIMERGE -q $z -j $j --trace-name T --now $NOW -w "$2" -o "$tmp/out.json.gz" "$3" ||
				fail "$1 $z -j $j: exit $?"
			check_gz "$1 $z -j $j" "$tmp/plain.json" "$tmp/out.json.gz"
			# a run that failed wrote no file: the case has failed above,
			# and a missing file must not end the script (set -e)
			if [ $j -eq 1 ]; then
				rm -f "$tmp/j1.json.gz"
				[ ! -f "$tmp/out.json.gz" ] || cp "$tmp/out.json.gz" "$tmp/j1.json.gz"
			elif ! cmp -s "$tmp/j1.json.gz" "$tmp/out.json.gz"; then
				fail "$1 $z: -j $j wrote other bytes than -j 1 ($(wc -c <"$tmp/out.json.gz" 2>&1) against $(wc -c <"$tmp/j1.json.gz" 2>&1))"
			fi
		done
		if [ -z "$z" ]; then
			rm -f "$tmp/default.json.gz"
			[ ! -f "$tmp/j1.json.gz" ] || cp "$tmp/j1.json.gz" "$tmp/default.json.gz"
		fi
	done
	tcase "$1: -z -j 3 to standard output: the default level's bytes"
	$CUPTIMERGE -q -z -j 3 --trace-name T --now $NOW -w "$2" "$3" >"$tmp/stdout.gz" || fail "$1 -z: exit $?"
	check_gz "$1 -z -j 3" "$tmp/plain.json" "$tmp/stdout.gz"
	cmp -s "$tmp/default.json.gz" "$tmp/stdout.gz" || fail "$1: -z to standard output is not -o out.json.gz's bytes"
}

pair example "$srcdir/examples/window.json" "$srcdir/examples/cpu.json"

big=
if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --quiet --seed 8 --ops 20000 "$tmp/cpu.json" "$tmp/win.json"
	big=1
	pair "gen_trace seed 8, 20000 ops" "$tmp/win.json" "$tmp/cpu.json"
else
	skip "gen_trace pair" "no $shared/tools/gen_trace"
fi

tcase "-j 0 and -j x are usage errors"
for bad in 0 x -1 4097; do
	rc=0
	$CUPTIMERGE -j "$bad" -w "$srcdir/examples/window.json" "$srcdir/examples/cpu.json" >"$tmp/o" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "-j $bad: exit $rc, wanted 2"
	grep -q "^cuptimerge: -j needs a number of threads" "$tmp/err" || fail "-j $bad: $(cat "$tmp/err")"
done

# the workers never print: a write error is one line from the main thread,
# status 3 (a private copy of /dev/full's node, as faults.sh does)
if [ -n "$big" ] && mknod -m 666 "$tmp/full" c 1 7 2>/dev/null; then
	for j in 2 8; do
		tcase "-z -j $j -o a full device: one line, status 3"
		rc=0
		$CUPTIMERGE -q -z -j $j -w "$tmp/win.json" -o "$tmp/full" "$tmp/cpu.json" 2>"$tmp/err" || rc=$?
		[ $rc -eq 3 ] || fail "-j $j -o full: exit $rc, wanted 3"
		[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "-j $j -o full: not one line: $(cat "$tmp/err")"
		grep -q "^cuptimerge: $tmp/full: write error: No space left" "$tmp/err" ||
			fail "-j $j -o full: $(cat "$tmp/err")"
		[ -c "$tmp/full" ] || fail "-j $j: -o a full device replaced it"
	done
else
	skip "-z -j N -o a full device" "mknod not permitted, or no gen_trace pair"
fi

# a reader that goes away: quiet, status 0, as with plain output
if [ -n "$big" ]; then
	tcase "-z -j 4 | head: quiet, status 0"
	{
		rc=0
		$CUPTIMERGE -q -z -j 4 -w "$tmp/win.json" "$tmp/cpu.json" 2>"$tmp/err" || rc=$?
		echo $rc >"$tmp/rc"
	} | head -c 1000 >"$tmp/head"
	[ "$(cat "$tmp/rc")" -eq 0 ] || fail "| head: exit $(cat "$tmp/rc")"
	[ ! -s "$tmp/err" ] || fail "| head: said $(cat "$tmp/err")"
fi

# -v: one line of the gzip stream's waits for gzip output (JSON and
# .pftrace alike), none for plain output, none with -q
tcase "-v -o out.json.gz: a line of the gzip stream's waits; none for plain output or with -q"
gzline="^cuptimerge: gzip: the output's writes waited [0-9][0-9]*\\.[0-9][0-9] s for its compressor threads and [0-9][0-9]*\\.[0-9][0-9] s writing their blocks on\$"
for o in out.json.gz out.pftrace.gz out.json quiet.json.gz; do
	q=
	want=0
	case $o in
	quiet*) q=-q ;;
	*.gz) want=1 ;;
	esac
	rc=0
	$CUPTIMERGE -v $q -j 3 -w "$FIX/window_source.json" -o "$tmp/v.$o" "$FIX/cpu.json" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "-v $q -o $o: exit $rc: $(cat "$tmp/err")"
	n=$(grep -c "$gzline" "$tmp/err" || true)
	[ "$n" -eq "$want" ] || fail "-v $q -o $o: $n gzip lines, wanted $want: $(grep gzip: "$tmp/err")"
done

# a run that fails leaves the old file as it was, and nothing beside it
tcase "-j 4 -o out.json.gz: a failed merge keeps the old file, leaves nothing"
mkdir "$tmp/keep"
echo old >"$tmp/keep/out.json.gz"
rc=0
$CUPTIMERGE -q -j 4 -w "$FIX/bad_window_missing_end_ns.json" -o "$tmp/keep/out.json.gz" "$FIX/cpu.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "bad window: exit $rc, wanted 1: $(cat "$tmp/err")"
[ "$(cat "$tmp/keep/out.json.gz")" = old ] || fail "the old file was touched"
[ "$(ls -A "$tmp/keep")" = out.json.gz ] || fail "left behind: $(ls -A "$tmp/keep")"

finish
