#!/bin/sh
# io.sh - output handling: -o (atomic, gzip by name), -z, write errors,
# a reader that closes the pipe early, stdin as the CPU trace.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compare JSON"

W=$FIX/window.json
C=$FIX/cpu.json

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
set +e
( $CUPTIMERGE -w "$W" "$tmp/big.json" 2>"$tmp/err"; echo $? >"$tmp/rc" ) | head -c 100 >/dev/null
set -e
[ "$(cat "$tmp/rc")" = 0 ] || fail "closed pipe: exit $(cat "$tmp/rc"), wanted 0"
[ ! -s "$tmp/err" ] || fail "closed pipe: not quiet: $(cat "$tmp/err")"

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
