#!/bin/sh
# endless.sh - a value that never ends, on a pipe, is refused once it passes
# its bound (json/docsplit.h; cuptimerge(1), LIMITS), at its first byte, by
# every reader that meets it: the fast readers of the trace and the window,
# the careful reader (CUPTIMERGE_CAREFUL=1), the thread map (-t) and the
# trace a repair reads.  Each was held until memory ran out (a stream of
# 'a' after '{"traceEvents":[{"name":"').  Each run here is under a memory
# limit and a timeout, so that the old behaviour fails the case instead of
# taking the machine; its peak RSS (its own and its children's, from
# Python's getrusage) must stay near the bound.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to measure the peak memory"
need timeout "to stop a run that reads on"

C=$FIX/cpu.json
W=$FIX/window.json
M=$FIX/thread_map.json
T=$FIX/threads_full.json

# ASan reserves terabytes of address space at its start and holds freed
# memory back: an instrumented build is bounded in time alone, its RSS unjudged
unit=a
asan=0
grep -q __asan_init "$CUPTIMERGE" 2>/dev/null && asan=1

# endless MAXKB PREFIX ENV ARGS...: the text PREFIX then $unit ('a' unless
# set) without end,
# on the standard input of cuptimerge ARGS (under the environment ENV,
# VAR=VALUE words or ''), run under a limit of 2 GB of address space, of
# 200 MB a file (the pipe's copy, a spilled member: a few MB once refused)
# and a timeout of 60 s; its status in $got, its messages in $tmp/err, and a
# failure of the open case when its peak RSS passes MAXKB.  The text's
# writer is cut off when cuptimerge stops reading.
endless() {
	en_max=$1 en_pre=$2 en_env=$3
	shift 3
	capture python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc if rc >= 0 else 128 - rc)' "$tmp/rss" \
		sh -c 'pre=$1 unit=$2 asan=$3 env=$4; shift 4
			[ "$asan" = 1 ] || ulimit -v 2000000
			ulimit -f 400000
			{ printf %s "$pre"; yes "$unit" | tr -d "\n"; } | env $env timeout 60 "$@" >/dev/null' sh \
		"$en_pre" "$unit" "$asan" "$en_env" "$CUPTIMERGE" "$@"
	rss=$(cat "$tmp/rss")
	[ "$asan" = 1 ] || [ "$rss" -le "$en_max" ] || fail "peak RSS $rss KB, more than $en_max KB"
}

# refused MAXKB STATUS PATTERN PREFIX ENV ARGS...: endless, exiting STATUS
# with one line matching PATTERN (grep -E).
refused() {
	rf_max=$1 rf_want=$2 rf_pat=$3
	shift 3
	endless "$rf_max" "$@"
	[ "$got" -eq "$rf_want" ] || fail "exit $got, wanted $rf_want ($(head -c 300 "$tmp/err"))"
	grep -Eq -- "$rf_pat" "$tmp/err" || fail "message '$(cat "$tmp/err")' does not match '$rf_pat'"
	[ "$(wc -l <"$tmp/err")" -le 1 ] || fail "stderr is not one line: $(cat "$tmp/err")"
}

ELEM='is longer than 16 MiB, the most an element may be \(an event that never ends\?\)$'
# an element of 16 MiB is held (a copy as it is cut, the careful reader's
# token): 100 MB is about six times it
for how in default "-j 1" "-j 1 --buffer-size 4097" careful; do
	env='' opts=''
	case $how in
	careful) env=CUPTIMERGE_CAREFUL=1 ;;
	-j*) opts=$how ;;
	esac
	tcase "a trace event that never ends, on a pipe: refused at its first byte past 16 MiB ($how)"
	# shellcheck disable=SC2086 # opts is a word list
	refused 100000 1 "^cuptimerge: <stdin>:16: traceEvents\\[0\\] $ELEM" '{"traceEvents":[{"name":"' "$env" \
		-q $opts -w "$W" -
	tcase "a window event that never ends, on a pipe: refused likewise ($how)"
	# shellcheck disable=SC2086
	refused 100000 1 "^cuptimerge: <stdin>:11: events\\[0\\] $ELEM" '{"events":[{"name":"' "$env" \
		-q $opts -w - "$C"
done

tcase "the index is the element's: a string, the array's third element"
refused 100000 1 "^cuptimerge: <stdin>:40: traceEvents\\[2\\] $ELEM" '{"traceEvents":[{"ph":"M"}, {"ph":"M"}, "' '' \
	-q -w "$W" -

tcase "a window from a named pipe: refused likewise"
mkfifo "$tmp/win.fifo"
# the pipe's writer, stopped by SIGPIPE once the run ends (or by its timeout)
timeout 60 sh -c '{ printf %s "$1"; yes a | tr -d "\n"; } >"$2"' sh '{"events":[{"kind":"kernel","name":"' \
	"$tmp/win.fifo" 2>/dev/null &
capture sh -c 'ulimit -f 400000; exec timeout 60 "$@"' sh "$CUPTIMERGE" -q -w "$tmp/win.fifo" "$C"
[ "$got" -eq 1 ] || fail "exit $got, wanted 1 ($(head -c 300 "$tmp/err"))"
grep -Eq "^cuptimerge: $tmp/win.fifo:11: events\\[0\\] $ELEM" "$tmp/err" || fail "message: $(cat "$tmp/err")"
wait

tcase "a key that never ends: refused at its quote past 16 MiB, by both readers"
for env in '' CUPTIMERGE_CAREFUL=1; do
	refused 100000 1 '^cuptimerge: <stdin>:1: a key longer than 16 MiB, the most a key may be$' '{"' "$env" -q -w "$W" -
done

# A member's value is spilled to a file past 1 MiB (docmember.c); its bound
# is 256 MiB, made smaller here (the testing aid CUPTIMERGE_MEMBER_MAX) so
# that the cases stay quick: nothing of it is left in TMPDIR.
mkdir "$tmp/spool"
MEMB='its value is longer than 4 MiB, the most a member.s value may be$'
for env in '' CUPTIMERGE_CAREFUL=1; do
	tcase "a trace member's value that never ends: refused at its first byte (${env:-default})"
	refused 60000 1 "^cuptimerge: <stdin>:5: member \"x\": $MEMB" '{"x":"' \
		"TMPDIR=$tmp/spool CUPTIMERGE_MEMBER_MAX=4194304 $env" -q -w "$W" -
	[ -z "$(ls -A "$tmp/spool")" ] || fail "left in TMPDIR: $(ls -A "$tmp/spool")"
	tcase "a window member's value that never ends: refused likewise (${env:-default})"
	refused 60000 1 "^cuptimerge: <stdin>:20: member \"user_annotations\": $MEMB" '{"user_annotations":[{"' \
		"TMPDIR=$tmp/spool CUPTIMERGE_MEMBER_MAX=4194304 $env" -q -w - "$C"
done

# The careful reader held a member's value in memory until its bound: its
# text (a wanted member of many tokens) and its last token (a string, a
# number) cut by the chunks' ends; both go to a file now, past the spill
# size and past an element's bound.  A bound of 64 MiB here: 70 MB of RSS
# before, some 20 MB now.
MEMB64='its value is longer than 64 MiB, the most a member.s value may be$'
for env in '' CUPTIMERGE_CAREFUL=1; do
	tcase "a window's user_annotations of tiny values that never end: spilled, not held (${env:-default})"
	unit=1,
	refused 40000 1 "^cuptimerge: <stdin>:20: member \"user_annotations\": $MEMB64" '{"user_annotations":[' \
		"TMPDIR=$tmp/spool CUPTIMERGE_MEMBER_MAX=67108864 $env" -q -w - "$C"
	unit=a
	[ -z "$(ls -A "$tmp/spool")" ] || fail "left in TMPDIR: $(ls -A "$tmp/spool")"
done
for doc in trace window; do
	tcase "a $doc member's string that never ends, read by the careful reader: spilled, not held"
	if [ $doc = trace ]; then set -- -w "$W" -; else set -- -w - "$C"; fi
	refused 40000 1 "^cuptimerge: <stdin>:5: member \"x\": $MEMB64" '{"x":"' \
		"TMPDIR=$tmp/spool CUPTIMERGE_MEMBER_MAX=67108864 CUPTIMERGE_CAREFUL=1" -q "$@"
	[ -z "$(ls -A "$tmp/spool")" ] || fail "left in TMPDIR: $(ls -A "$tmp/spool")"
done

tcase "a thread map (-t) whose value never ends: refused at its first byte"
refused 60000 1 "^cuptimerge: /dev/stdin:11: member \"threads\": $MEMB" '{"threads":{"1":{"name":"' \
	CUPTIMERGE_MEMBER_MAX=4194304 -q -t /dev/stdin "$T"
# the careful reader built a wanted member's tree as it read, some 36 bytes
# a byte of text for tiny values (150 MB at this bound, 36 GB at the real
# one); now it holds the text until the member ends
tcase "a thread map (-t) whose value, of tiny values, never ends: its text alone is held"
unit=1,
refused 60000 1 "^cuptimerge: /dev/stdin:11: member \"threads\": $MEMB" '{"threads":{"1":[' \
	CUPTIMERGE_MEMBER_MAX=4194304 -q -t /dev/stdin "$T"
unit=a

# the careful reader built an element's tree as it read, some 36 bytes a
# byte of text for tiny values: 600 MB by the bound; now it holds the text
# until the element ends, and builds the tree from it then
unit=1,
for env in '' CUPTIMERGE_CAREFUL=1; do
	tcase "a window event of tiny values that never ends: its text alone is held (${env:-default})"
	refused 60000 1 "^cuptimerge: <stdin>:11: events\\[0\\] $ELEM" '{"events":[{"a":{"b":[' "$env" \
		-q -w - "$C"
done
tcase "a trace event of tiny values that a repair (-t) reads, never ending: its text alone is held"
refused 60000 1 "^cuptimerge: <stdin>:16: traceEvents\\[0\\] $ELEM" '{"traceEvents":[{"a":[' '' -q -t "$M" -
unit=a

tcase "a trace that a repair (-t) reads, whose event never ends: refused likewise"
refused 100000 1 "^cuptimerge: <stdin>:16: traceEvents\\[0\\] $ELEM" '{"traceEvents":[{"name":"' '' -q -t "$M" -

tcase "a merge with -t, of a trace whose event never ends: refused likewise"
refused 100000 1 "^cuptimerge: <stdin>:16: traceEvents\\[0\\] $ELEM" '{"traceEvents":[{"name":"' '' \
	-q -t "$M" -w "$W" -

# The careful reader collected whatever lay past the last punctuation of a
# chunk for yajl, white space too: a run of it was held whole.
tcase "100 MB of white space between events: the careful reader holds none of it"
python3 -c 'import sys
t = open(sys.argv[1], "rb").read()
at = t.index(b"[", t.index(b"\"traceEvents\"")) + 1
open(sys.argv[2], "wb").write(t[:at])
open(sys.argv[3], "wb").write(t[at:])' "$C" "$tmp/head" "$tmp/tail"
capture python3 -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc if rc >= 0 else 128 - rc)' "$tmp/rss" \
	sh -c '{ cat "$1"; head -c 100000000 /dev/zero | tr "\0" " "; cat "$2"; } |
		CUPTIMERGE_CAREFUL=1 timeout 60 "$3" -q --trace-name t -w "$4" - >"$5"' sh \
	"$tmp/head" "$tmp/tail" "$CUPTIMERGE" "$W" "$tmp/ws.json"
[ "$got" -eq 0 ] || fail "exit $got: $(cat "$tmp/err")"
[ "$asan" = 1 ] || [ "$(cat "$tmp/rss")" -le 60000 ] || fail "peak RSS $(cat "$tmp/rss") KB, more than 60000 KB"
$CUPTIMERGE -q --trace-name t -w "$W" "$C" | cmp -s - "$tmp/ws.json" ||
	fail "the merge differs from the trace's without the white space"

finish
