#!/bin/sh
# pffuzz.sh - what fuzz_pftrace (tests/fuzz/fuzz_pftrace.c) and probes by
# hand found in the Perfetto transcoder (-o FILE.pftrace), each kept as a
# case: a trace a user converts, as the JSON import of Perfetto would take
# it.  Each case is either converted (protoc decodes the .pftrace, and
# Perfetto's trace processor shows for it what it shows for the JSON:
# tests/pftrace_check.py) or refused in one line "cuptimerge: FILE:OFFSET:
# WHAT", exit 1, no file.  Runs under MALLOC_PERTURB_ (glibc fills freed
# memory), so that a read of freed memory shows in the bytes even without
# ASan.
#
# Needs protoc (Debian: protobuf-compiler); the trace-processor checks also
# node and the engine (see pftrace.sh).
. "${srcdir:-.}/tests/e2e/common.sh"
. "${srcdir:-.}/tests/e2e/pfcommon.sh"
MALLOC_PERTURB_=165
export MALLOC_PERTURB_

# refuses NAME FILE PATTERN: one line matching "cuptimerge: OUT:N: PATTERN",
# exit 1, no file, at -j 1 and -j 3.
refuses() {
	for j in 1 3; do
		tcase "$1: refused in one line (-j $j)"
		rm -f "$tmp/out.pftrace"
		rc=0
		$CUPTIMERGE -q -j $j -o "$tmp/out.pftrace" "$2" 2>"$tmp/err" || rc=$?
		[ $rc -eq 1 ] || fail "exit $rc, not 1: $(head -c 500 "$tmp/err")"
		[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "not one line: $(head -c 500 "$tmp/err")"
		grep -q "^cuptimerge: $tmp/out.pftrace:[0-9]*: $3" "$tmp/err" || fail "says: $(head -c 500 "$tmp/err")"
		[ ! -e "$tmp/out.pftrace" ] || fail "the file appeared"
	done
}

# Twelve tracks (a process, eleven threads), then an event of a thread met
# before: the tracks' table grew on a lookup of a track it held, moving the
# tracks, and the cache of thread tracks (pftrack.c) kept pointers into the
# freed table, which the next event of a cached thread read (ASan:
# heap-use-after-free in place_all, pfseg.c).  Found by fuzz_pftrace in its
# seed corpus (gen_trace --edge-cases).
{
	printf '{"traceEvents": [\n'
	for t in 1 2 3 4 5 6 7 8 9 10 11; do
		printf '{"ph": "X", "name": "a%d", "cat": "c", "pid": 1, "tid": %d, "ts": 1, "dur": 1},\n' $t $t
	done
	printf '{"ph": "X", "name": "b", "cat": "c", "pid": 1, "tid": 2, "ts": 2, "dur": 1},\n'
	printf '{"ph": "X", "name": "c", "cat": "c", "pid": 1, "tid": 11, "ts": 3, "dur": 1}\n]}\n'
} >"$tmp/tracks12.in.json"
converts tracks12 "$tmp/tracks12.in.json"

# An empty category or arg key, met twice: the interning table's first
# string was "" (its blob still NULL), and the next lookup of it compared
# NULL + 0 with memcmp (UBSan: null pointer passed as argument 1, in
# cm_strtab_get, pfutil.c); found by probing keys of dots only.
cat >"$tmp/emptystr.in.json" <<'EOF2'
{"traceEvents": [
{"ph": "X", "name": "a", "cat": "", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"": 1}},
{"ph": "X", "name": "b", "cat": "", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"": 2}}
]}
EOF2
converts emptystr "$tmp/emptystr.in.json"

# An arg beyond a double's range (1e400, also in an array or an object):
# Perfetto's JSON import keeps none of that event's args, where the
# .pftrace had them all, the number as inf.  Found by probing numbers.
cat >"$tmp/argsinf.in.json" <<'EOF2'
{"traceEvents": [
{"ph": "X", "name": "a", "cat": "c", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"o": {"y": 1e400, "z": 1}, "k": 2}},
{"ph": "X", "name": "b", "cat": "c", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"a": [1, -1e400], "k": 3}},
{"ph": "i", "s": "t", "name": "c", "pid": 1, "tid": 1, "ts": 3, "args": {"t": 1e-400, "k": 4, "u": 1.5e308}}
]}
EOF2
converts argsinf "$tmp/argsinf.in.json"

# An arg key of many dots, each a level of dictionaries (so that Perfetto
# names it as the JSON import does): put_annotation (pfbody.c) recursed
# once a dot, and a key of a million of them overflowed the stack (ASan:
# stack-overflow; SIGSEGV without).  Refused past 4096 levels; fewer are
# still written (50 here: protoc stops at 100 levels).  Found by probing keys.
python3 -c 'import sys
print("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"" + "a." * int(sys.argv[1]) + "b\": 1}}]}")' 1000000 >"$tmp/dots1m.in.json"
refuses "a key of a million dots" "$tmp/dots1m.in.json" \
	"an event whose args nest more than 4096 deep (objects, arrays and the dots of keys) cannot be written as Perfetto protobuf"
python3 -c 'import sys
print("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"" + "a." * int(sys.argv[1]) + "b\": 1}}]}")' 50 >"$tmp/dots50.in.json"
converts dots50 "$tmp/dots50.in.json"

# A lone UTF-16 surrogate ("\ud800" with no "\udc00" after it) in a string
# the .pftrace holds: the JSON reader keeps it as its 3-byte WTF-8 form,
# which the .pftrace carried as it was, no UTF-8 (protoc: "String field
# ... contains invalid UTF-8 data"), where Perfetto's JSON import refuses
# the trace (or, in args, drops them from there).  Refused, wherever it
# is; a pair is the UTF-8 of its character.  Found by fuzz_pftrace.
n=0
for ev in '{"ph": "X", "name": "a\ud800b", "pid": 1, "tid": 1, "ts": 1, "dur": 1}' \
	'{"ph": "B", "name": "a", "cat": "\udfff", "pid": 1, "tid": 1, "ts": 1}' \
	'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"o": {"k": ["x\udc00"]}}}' \
	'{"ph": "i", "name": "a", "pid": 1, "tid": 1, "ts": 1, "args": {"k\ud83d": 1}}' \
	'{"ph": "X", "name": "a", "pid": 1, "tid": "t\ud800", "ts": 1, "dur": 1}' \
	'{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "\udc00"}}' \
	'{"ph": "C", "name": "c", "pid": 1, "ts": 1, "args": {"v\udbff": 1}}'; do
	n=$((n + 1))
	printf '{"traceEvents": [\n{"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 0, "dur": 1},\n%s\n]}\n' "$ev" \
		>"$tmp/lone$n.in.json"
	refuses "a lone surrogate ($n)" "$tmp/lone$n.in.json" \
		"a string with a lone UTF-16 surrogate (a .ud800-.udfff escape without its pair) cannot be written as Perfetto protobuf, whose strings are UTF-8"
done
tcase "a surrogate pair is written as the UTF-8 of its character"
printf '%s\n' '{"traceEvents": [{"ph": "X", "name": "a\ud83d\ude00", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}' \
	>"$tmp/pair.in.json"
rc=0
$CUPTIMERGE -q -o "$tmp/pair.pftrace" "$tmp/pair.in.json" 2>"$tmp/err" || rc=$?
protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/pair.pftrace" \
	>"$tmp/decoded" 2>"$tmp/protoc.err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(head -c 500 "$tmp/err")"
grep -q 'name: "a\\360\\237\\230\\200"' "$tmp/decoded" || fail "no UTF-8 of U+1F600: $(grep name: "$tmp/decoded")"
[ ! -s "$tmp/protoc.err" ] || fail "protoc: $(head -3 "$tmp/protoc.err")"

# A "C" value beyond a double's range (1e400): the .pftrace had it as
# inf, where Perfetto's JSON import (v55.3) never ends (its counter loop
# tries the value it could not read again), so the two cannot be set side
# by side.  The values of that event up to it are kept, none from it on,
# as of an event's args (argsinf above).  Found by fuzz_pftrace.
cat >"$tmp/ctrinf.in.json" <<'EOF2'
{"traceEvents": [
{"ph": "C", "name": "ctr", "pid": 1, "ts": 1, "args": {"a": 1, "b": 1e400, "c": 2}},
{"ph": "C", "name": "ctr", "pid": 1, "ts": 2, "args": {"a": -1e999, "c": 3}},
{"ph": "C", "name": "ctr", "pid": 1, "ts": 3, "args": {"a": 5, "c": 1.5e308, "d": 1e-400}}
]}
EOF2
tcase "a counter value of 1e400: the event's values before it, none from it"
rc=0
$CUPTIMERGE -q -o "$tmp/ctrinf.pftrace" "$tmp/ctrinf.in.json" 2>"$tmp/err" || rc=$?
protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/ctrinf.pftrace" \
	>"$tmp/decoded" 2>"$tmp/protoc.err" || rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(head -c 500 "$tmp/err") $(head -3 "$tmp/protoc.err")"
got=$(sed -n 's/.*double_counter_value: //p' "$tmp/decoded" | tr '\n' ' ')
[ "$got" = "1 5 1.5e+308 0 " ] || fail "the values: $got"
got=$(sed -n 's/^ *name: "ctr \(.\)"/\1/p' "$tmp/decoded" | tr -d '\n')
[ "$got" = "acd" ] || fail "the counter tracks: $got"

# A member of an event beyond a double's range, written with an exponent
# (1e400), other than those the format reads (pid, tid, ts, dur: refused
# above and in pftrace.sh), such as an "X" event's or a counter's id or a
# member of no meaning: Perfetto's JSON import refuses the whole trace
# ("Double overflow"), where the .pftrace had the event; in its args such
# a number only ends them (argsinf above); one of 400 digits it takes as a
# member (bigmember: converted).  Found by probing members.
printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "id": 1e400}]}' >"$tmp/idinf.in.json"
refuses "an X event whose id is 1e400" "$tmp/idinf.in.json" \
	"a \"X\" event whose id is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)"
printf '{"traceEvents": [{"ph": "C", "name": "a", "pid": 1, "ts": 1, "foo": -1E400, "args": {"v": 1}}]}' >"$tmp/foobig.in.json"
refuses "a counter with a member of -1E400" "$tmp/foobig.in.json" \
	"a \"C\" event whose foo is a number beyond a double's range cannot be written as Perfetto protobuf (Perfetto refuses the trace)"
big=$(python3 -c 'print("9" * 400)')
printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "zz": %s.5, "args": {"k": 1}},\n{"ph": "C", "name": "c", "pid": 1, "ts": 1, "id": -%s, "args": {"v": 1}}]}\n' "$big" "$big" >"$tmp/bigmember.in.json"
converts bigmember "$tmp/bigmember.in.json"
printf '{"traceEvents": [{"ph": "i", "s": "t", "name": "a", "pid": 1, "tid": 1, "ts": 1, "tts": 1.5e999}]}' >"$tmp/ttsinf.in.json"
refuses "an instant whose tts is 1.5e999" "$tmp/ttsinf.in.json" \
	"a \"i\" event whose tts is a number beyond a double's range"
if [ $have_tp -eq 1 ]; then
	tcase "a member of 1e400: Perfetto's JSON import refuses the trace"
	for f in idinf foobig ttsinf; do
		rc=0
		node "$TPJS" "$tmp/$f.in.json" "select count(*) from slice" >/dev/null 2>"$tmp/err" || rc=$?
		[ $rc -eq 2 ] || fail "$f: exit $rc, not 2 (refused): $(tail -3 "$tmp/err")"
	done
else
	skip "a member of 1e400: Perfetto's JSON import refuses the trace" "no node or trace-processor engine in $TP_DIR"
fi

# Python's literals NaN, Infinity and -Infinity (its json writes them) are
# no JSON: every input refuses them, and the merge writes one only after
# an event the .pftrace refuses first (the span's end past a double), so
# the transcoder meets them in no run; check_pfstream's python_literals
# has it write, for one in an arg or a "C" value, the bytes it writes
# with 1e400 there (argsinf above: what the JSON import shows), and
# refuse a ts or dur of one in one line.  What that rests on is
# Perfetto's: its JSON import (v55.3) reads each as it reads 1e400,
# keeping an event's args before it, in an object and an array too (and
# never finishing a "C" event's, not checked here).  Found by probing.
if [ $have_tp -eq 1 ]; then
	for lit in 1e400 NaN Infinity -Infinity; do
		cat >"$tmp/lit.in.json" <<EOF2
{"traceEvents": [
{"ph": "X", "name": "a", "cat": "c", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"k": 1, "n": $lit, "z": 2}},
{"ph": "X", "name": "b", "cat": "c", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"o": {"x": 2.5, "y": $lit, "w": 3}, "z": 2}},
{"ph": "X", "name": "b", "cat": "c", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"a": [1, $lit, 2], "z": 2}},
{"ph": "i", "s": "t", "name": "c", "pid": 1, "tid": 1, "ts": 3, "args": {"k": 4, "u": 1.5, "t": $lit}}
]}
EOF2
		cached node "$TPJS" "$tmp/lit.in.json" "select s.name, a.key, a.display_value from slice s join args a using (arg_set_id) order by s.id, a.id" \
			>"$tmp/lit.$lit" 2>"$tmp/err" || echo "exit $?: $(tail -3 "$tmp/err")" >>"$tmp/lit.$lit"
	done
	tcase "NaN, Infinity, -Infinity: Perfetto's JSON import keeps the args before one, as before 1e400"
	grep -q 'args.o.x' "$tmp/lit.1e400" || fail "1e400: $(cat "$tmp/lit.1e400")"
	for lit in NaN Infinity -Infinity; do
		cmp -s "$tmp/lit.1e400" "$tmp/lit.$lit" || fail "$lit: $(diff "$tmp/lit.1e400" "$tmp/lit.$lit" | head -8)"
	done
else
	skip "NaN, Infinity, -Infinity: Perfetto's JSON import keeps the args before one, as before 1e400" \
		"no node or trace-processor engine in $TP_DIR"
fi

finish
