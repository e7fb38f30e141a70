#!/bin/sh
# errors.sh - bad input gets a one-line "cuptimerge: FILE:OFFSET: ..." message,
# the documented exit status, and no output file.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compare JSON"

W=$FIX/window.json
C=$FIX/cpu.json

# expect NAME STATUS PATTERN CMD...: the case NAME: expect_exit STATUS
# PATTERN CMD (common.sh).
expect() {
	tcase "$1"
	shift
	expect_exit "$@"
}

printf '{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2}' >"$tmp/trunc.json"
expect 'truncated JSON, with its offset' 1 "^cuptimerge: $tmp/trunc.json:47: truncated JSON" $CUPTIMERGE -w "$W" "$tmp/trunc.json"
: >"$tmp/empty.json"
printf ' \n\t\r\n' >"$tmp/blank.json"
# an empty trace (a rank that died before writing it) is said to be empty,
# not "truncated"; the trace, the window and the map alike, and from gzip
expect 'an empty trace' 1 "^cuptimerge: $tmp/empty.json:0: no JSON: the input is empty\$" $CUPTIMERGE -w "$W" "$tmp/empty.json"
expect 'an empty window' 1 "^cuptimerge: $tmp/empty.json:0: no JSON: the input is empty\$" $CUPTIMERGE -w "$tmp/empty.json" "$C"
expect 'an empty thread map' 1 "^cuptimerge: $tmp/empty.json:0: no JSON: the input is empty\$" $CUPTIMERGE -t "$tmp/empty.json" "$C"
gzip -c <"$tmp/empty.json" >"$tmp/empty.json.gz"
expect 'an empty gzip trace' 1 "^cuptimerge: $tmp/empty.json.gz:0: no JSON: the input is empty\$" $CUPTIMERGE -w "$W" "$tmp/empty.json.gz"
expect 'a trace of white space only' 1 "^cuptimerge: $tmp/blank.json:5: no JSON: the input is only white space\$" $CUPTIMERGE -w "$W" "$tmp/blank.json"
printf '{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2,}]}' >"$tmp/bad.json"
expect 'invalid JSON' 1 "^cuptimerge: $tmp/bad.json:[0-9]+: invalid JSON" $CUPTIMERGE -w "$W" "$tmp/bad.json"
printf '{"traceEvents": []} {}' >"$tmp/trail.json"
expect 'trailing garbage after the JSON' 1 "^cuptimerge: $tmp/trail.json:[0-9]+: invalid JSON: trailing garbage" $CUPTIMERGE -w "$W" "$tmp/trail.json"
printf '[{"ph": "X"}]' >"$tmp/array.json"
expect 'top level is not an object' 1 "top level is not an object" $CUPTIMERGE -w "$W" "$tmp/array.json"
printf '{"traceEvents": {"ph": "X"}}' >"$tmp/notarray.json"
expect 'traceEvents is not an array' 1 'traceEvents" is not an array' $CUPTIMERGE -w "$W" "$tmp/notarray.json"
printf '{"traceEvents": [{"ph": "X"}, 3]}' >"$tmp/elem.json"
expect 'an event is not an object' 1 'traceEvents\[1\] is not an object' $CUPTIMERGE -w "$W" "$tmp/elem.json"
printf '{"traceEvents": [{"ph": "X", "name": "a\377b"}]}' >"$tmp/utf8.json"
expect 'invalid UTF-8' 1 "invalid JSON" $CUPTIMERGE -w "$W" "$tmp/utf8.json"

# gzip: truncated, trailing garbage, concatenated members are fine
gzip -c "$C" >"$tmp/c.gz"
head -c 300 "$tmp/c.gz" >"$tmp/ctrunc.gz"
expect 'truncated gzip, with its offset' 1 "ctrunc.gz:[0-9]+: truncated gzip data .*compressed byte 300" $CUPTIMERGE -w "$W" "$tmp/ctrunc.gz"
{ cat "$tmp/c.gz"; printf 'junk'; } >"$tmp/cjunk.gz"
expect 'trailing garbage after the gzip data' 1 "cjunk.gz:[0-9]+: trailing garbage after the gzip data" $CUPTIMERGE -w "$W" "$tmp/cjunk.gz"
head -c 1000 "$C" | gzip -c >"$tmp/m1.gz"
tail -c +1001 "$C" | gzip -c >"$tmp/m2.gz"
cat "$tmp/m1.gz" "$tmp/m2.gz" >"$tmp/multi.gz"
tcase "two gzip members"
$CUPTIMERGE --trace-name example -w "$W" "$tmp/multi.gz" >"$tmp/multi.json" || fail "two gzip members: exit $?"
$JSONCMP "$FIX/expected.json" "$tmp/multi.json" || fail "two gzip members: output differs"

# window problems: no events, an event without a field the merge needs
printf '{"user_annotations": {}}' >"$tmp/noev.json"
expect 'window without events' 1 "noev.json: window: no \"events\" member" $CUPTIMERGE -w "$tmp/noev.json" "$C"
printf '{"events": [{"kind": "kernel", "device_id": 0, "stream_id": 7}]}' >"$tmp/nofield.json"
expect 'window event without start_ns' 1 'nofield.json:[0-9]+: window: events\[0\]: missing field "start_ns"' $CUPTIMERGE -w "$tmp/nofield.json" "$C"
printf '{"events": [{"device_id": 0}]}' >"$tmp/nokind.json"
expect 'window event without kind' 1 'events\[0\]: missing field "kind"' $CUPTIMERGE -w "$tmp/nokind.json" "$C"
printf '{"events": [], "user_annotations": {"x": "a"}}' >"$tmp/badkey.json"
expect 'user_annotations key not an integer' 1 'user_annotations key "x" is not an integer' $CUPTIMERGE -w "$tmp/badkey.json" "$C"
printf '{"events": [{"kind": "cuda_runtime", "cbid": 211, "process_id": 1, "thread_id": 5, "correlation_id": 1, "start_ns": 1e999, "end_ns": 0}]}' >"$tmp/inf.json"
expect 'infinite start_ns' 1 'events\[0\]: "start_ns": 1e999 is infinite' $CUPTIMERGE -w "$tmp/inf.json" "$C"
printf '{"events": [{"kind": "cuda_runtime", "cbid": 211, "process_id": 1, "thread_id": 5, "correlation_id": 1, "start_ns": 1, "end_ns": 2}], "thread_resource_map": {"1": {"5": null}}}' >"$tmp/badmap.json"
expect 'thread_resource_map entry not an integer' 1 'thread_resource_map entry for thread_id 5 is not an integer' $CUPTIMERGE -w "$tmp/badmap.json" "$C"

# the reference's own error: nothing to span
printf '{"traceEvents": [{"ph": "M", "name": "process_name"}]}' >"$tmp/nox.json"
printf '{"events": []}' >"$tmp/empty.json"
expect 'nothing to span' 1 "no duration" $CUPTIMERGE -w "$tmp/empty.json" "$tmp/nox.json"
# ...while a trace without traceEvents is valid input
printf '{"schemaVersion": 1}' >"$tmp/noevents.json"
tcase "a trace without traceEvents"
$CUPTIMERGE -w "$W" "$tmp/noevents.json" >"$tmp/out.json" || fail "trace without traceEvents: exit $?"

# files that cannot be read, usage errors
expect 'missing CPU trace' 3 "^cuptimerge: $tmp/missing.json: cannot open: No such file" $CUPTIMERGE -w "$W" "$tmp/missing.json"
expect 'missing window' 3 "cannot open" $CUPTIMERGE -w "$tmp/missing.json" "$C"
expect 'a directory as the CPU trace' 3 "is a directory" $CUPTIMERGE -w "$W" "$tmp"
# (a trace alone, without -w or -t, is copied and cut: tests/e2e/cut.sh)
expect 'usage: too many operands' 2 "too many operands" $CUPTIMERGE -w "$W" "$C" "$C"
expect 'usage: two inputs on stdin' 2 "only one input can be standard input" $CUPTIMERGE -w - -
expect 'usage: --now nan' 2 "needs a finite number" $CUPTIMERGE --now nan -w "$W" "$C"
expect 'usage: unknown option' 2 "unrecognized option" $CUPTIMERGE --bogus -w "$W" "$C"
expect 'usage: -z12' 2 "gzip level" $CUPTIMERGE -z12 -w "$W" "$C"

# F12 (findings): a top-level key "" made the readers add 0 bytes to a NULL
# buffer (UBSan); these fuzzer inputs hold one and then fail on bad JSON
expect 'F12: an empty key, then bad JSON, in a window' 1 "f12_fuzz_window.json:17: invalid JSON" $CUPTIMERGE -w "$FIX/f12_fuzz_window.json" "$C"
expect 'F12: an empty key, then bad JSON, in a thread map' 1 "f12_fuzz_map.json:4: invalid JSON" $CUPTIMERGE -t "$FIX/f12_fuzz_map.json" "$FIX/threads_full.json"

# with -o, a failed run leaves no file and keeps an existing one
expect '-o: a failed run leaves no file' 1 "truncated JSON" $CUPTIMERGE -w "$W" -o "$tmp/new.json" "$tmp/trunc.json"
[ ! -e "$tmp/new.json" ] || fail "-o: a failed run left $tmp/new.json"
echo keep >"$tmp/old.json"
expect '-o: a failed run keeps an existing file' 1 "truncated JSON" $CUPTIMERGE -w "$W" -o "$tmp/old.json" "$tmp/trunc.json"
[ "$(cat "$tmp/old.json")" = keep ] || fail "-o: a failed run clobbered an existing file"
# a message is one line even when it quotes input holding a newline: a key
# "a\nb" (decoded: a real newline) repeated, in a trace to repair and in a
# window (found by the fuzz harnesses)
printf '{"a\\nb": 1, "a\\nb": 2, "traceEvents": []}' >"$tmp/nlkey.json"
expect 'a repeated key with a newline in a trace to repair: one line' 1 'member "a\\nb" appears twice' \
	$CUPTIMERGE -q -t "$FIX/thread_map.json" -o "$tmp/nlkey.out" "$tmp/nlkey.json"
printf '{"events": [], "thread_resource_map": {"1\\n\\u00012": {}}}' >"$tmp/nlwin.json"
expect 'a map key with a newline and a control character in a window: one line' 1 'key "1\\n\\x012" is not an integer' \
	$CUPTIMERGE -q -w "$tmp/nlwin.json" "$C"

tcase "-o: no temporary file left behind"
ls -A "$tmp" | grep -q '\.cuptimerge-' && fail "-o: a temporary file was left behind: $(ls -A "$tmp")"
expect '-o, named temporary file: a failed run' 1 "truncated JSON" env CUPTIMERGE_NO_TMPFILE=1 $CUPTIMERGE -w "$W" -o "$tmp/old.json" "$tmp/trunc.json"
[ "$(cat "$tmp/old.json")" = keep ] || fail "-o, named temporary file: a failed run clobbered an existing file"
ls -A "$tmp" | grep -q '\.cuptimerge-' && fail "-o, named temporary file: it was left behind"
# --range that keeps nothing named no file ("cuptimerge: no duration ("X")
# event lies in the range ..."): the trace it was looked for in is named
expect '--range that keeps nothing names the trace' 1 "^cuptimerge: $C: no duration \\(\"X\"\\) event lies in the range 1.000 to 2.000 us: nothing to keep" \
	$CUPTIMERGE --range=1,2 -w "$W" "$C"

# --split's files are opened as their steps come, so a pattern in a
# directory that is not there failed only after the first pass (0.9 s of
# the 200 MB pair); found now before any input is read, as -o's is
tcase '--split: a pattern in a directory that is not there fails at once, status 3'
capture $CUPTIMERGE -q --split=steps -w "$FIX/cut_window.json" -o "$tmp/none/s_%s.json" "$FIX/cut_cpu.json"
[ "$got" -eq 3 ] || fail "exit $got, wanted 3: $(cat "$tmp/err")"
[ "$(cat "$tmp/err")" = "cuptimerge: $tmp/none: cannot write the --split files in it: No such file or directory" ] ||
	fail "message: $(cat "$tmp/err")"
capture $CUPTIMERGE -q --split=steps -w "$FIX/cut_window.json" -o "$C/s_%s.json" "$FIX/cut_cpu.json"
[ "$got" -eq 3 ] && grep -qx "cuptimerge: $C: cannot write the --split files in it: Not a directory" "$tmp/err" ||
	fail "a file as the directory: exit $got: $(cat "$tmp/err")"

finish
