#!/bin/sh
# strict.sh - every input is judged by the same JSON rules in every pass:
# form feed and vertical tab are not whitespace, UTF-8 must be well formed
# (no overlong forms, no surrogates), nesting stops at 512 levels.  Each bad
# text is tried as the CPU trace, the window and the thread map, and through
# the repair alone; each must be refused with status 1 and one message, and
# nothing on standard output.  (Findings F8, F9, F11.)
. "${srcdir:-.}/tests/e2e/common.sh"

# expect_refused LABEL PATTERN CMD...: status 1, one line matching PATTERN, no output
expect_refused() {
	label=$1 pattern=$2
	shift 2
	tcase "$label"
	rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -ne 1 ]; then
		fail "$label: exit $rc, expected 1: $(head -c 300 "$tmp/err")"
	elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q "$pattern" "$tmp/err"; then
		fail "$label: expected one line matching '$pattern', got: $(cat "$tmp/err")"
	elif [ -s "$tmp/out" ]; then
		fail "$label: output written although the input was refused"
	fi
}

# expect_ok LABEL CMD...: status 0
expect_ok() {
	label=$1
	shift
	tcase "$label"
	rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "$label: exit $rc, expected 0: $(head -c 300 "$tmp/err")"
}

# inject FILE WHAT: a copy of FILE with WHAT (printf text) before its first comma
inject() {
	awk -v ins="$2" 'BEGIN { done = 0 } !done && index($0, ",") {
		i = index($0, ","); printf "%s%s%s\n", substr($0, 1, i - 1), ins, substr($0, i); done = 1; next }
		{ print }' "$1"
}

ff=$(printf '\f') vt=$(printf '\v')
overlong=$(printf '\300\257') surrogate=$(printf '\355\240\200') big=$(printf '\364\220\200\200')

# whitespace: between tokens of the CPU trace, the window and the map
for kind in ff vt; do
	eval "ch=\$$kind"
	inject "$FIX/cpu.json" "$ch" >"$tmp/cpu_$kind.json"
	inject "$FIX/window.json" "$ch" >"$tmp/win_$kind.json"
	inject "$FIX/thread_map.json" "$ch" >"$tmp/map_$kind.json"
	inject "$FIX/threads_full.json" "$ch" >"$tmp/full_$kind.json"
	expect_refused "$kind in the CPU trace" 'not JSON whitespace' \
		"$CUPTIMERGE" -q -w "$FIX/window.json" "$tmp/cpu_$kind.json"
	expect_refused "$kind in the window" 'not JSON whitespace' \
		"$CUPTIMERGE" -q -w "$tmp/win_$kind.json" "$FIX/cpu.json"
	expect_refused "$kind in the thread map" 'not JSON whitespace' \
		"$CUPTIMERGE" -q -t "$tmp/map_$kind.json" "$FIX/threads_full.json"
	expect_refused "$kind in a trace to repair" 'not JSON whitespace' \
		"$CUPTIMERGE" -q -t "$FIX/thread_map.json" "$tmp/full_$kind.json"
	# the same on a pipe, where the repair streams
	expect_refused "$kind in a piped trace to repair" 'not JSON whitespace' \
		sh -c '"$1" -q -t "$2" <"$3"' sh "$CUPTIMERGE" "$FIX/thread_map.json" "$tmp/full_$kind.json"
done

# UTF-8 inside a string value: an overlong "/", a surrogate, a code point past U+10FFFF
for kind in overlong surrogate big; do
	eval "seq=\$$kind"
	sed "s/\"name\": *\"/&$seq/" "$FIX/cpu.json" >"$tmp/cpu_$kind.json"
	sed "s/\"name\": *\"/&$seq/" "$FIX/window.json" >"$tmp/win_$kind.json"
	sed "s/\"name\": *\"/&$seq/" "$FIX/threads_full.json" >"$tmp/full_$kind.json"
	tcase "$kind UTF-8 fixtures made"
	cmp -s "$FIX/cpu.json" "$tmp/cpu_$kind.json" && fail "$kind: the fixture was not changed"
	expect_refused "$kind UTF-8 in the CPU trace" 'invalid UTF-8' \
		"$CUPTIMERGE" -q -w "$FIX/window.json" "$tmp/cpu_$kind.json"
	expect_refused "$kind UTF-8 in the window" 'invalid UTF-8' \
		"$CUPTIMERGE" -q -w "$tmp/win_$kind.json" "$FIX/cpu.json"
	expect_refused "$kind UTF-8 in a trace to repair" 'invalid UTF-8' \
		"$CUPTIMERGE" -q -t "$FIX/thread_map.json" "$tmp/full_$kind.json"
done
# well-formed multi-byte UTF-8 (2, 3 and 4 bytes) is still fine
sed "s/\"name\": *\"/&$(printf '\303\251\342\202\254\360\237\230\200')/" "$FIX/cpu.json" >"$tmp/cpu_utf8.json"
expect_ok "valid UTF-8 in the CPU trace" "$CUPTIMERGE" -q -w "$FIX/window.json" "$tmp/cpu_utf8.json"

# depth: the top object is level 1; a CPU event's args at level 4 (--force: the
# one-event trace does not belong with the window; only its depth matters here)
deep() { # deep N: a one-event CPU trace whose args hold N-4 nested arrays
	awk -v n="$1" 'BEGIN { printf "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"x\":";
		for (i = 4; i < n; i++) printf "["; for (i = 4; i < n; i++) printf "]"; print "}}]}" }'
}
deep 512 >"$tmp/deep512.json"
deep 513 >"$tmp/deep513.json"
expect_ok "512 levels, merged" "$CUPTIMERGE" -q --force --now 0 -w "$FIX/window.json" "$tmp/deep512.json"
expect_ok "512 levels, repaired" "$CUPTIMERGE" -q -t "$FIX/thread_map.json" "$tmp/deep512.json"
expect_refused "513 levels, merged" 'nesting deeper than 512' \
	"$CUPTIMERGE" -q --force --now 0 -w "$FIX/window.json" "$tmp/deep513.json"
expect_refused "513 levels, repaired" 'nesting deeper than 512' \
	"$CUPTIMERGE" -q -t "$FIX/thread_map.json" "$tmp/deep513.json"

# an unterminated string after the document: yajl alone takes it for the end
# of the text (the merge then failed with a false status 3, the repair wrote
# a trace and exited 0); found by the fuzz harnesses' scanner property
{ cat "$FIX/cpu.json"; printf '"x'; } >"$tmp/cpu_tail.json"
{ cat "$FIX/window.json"; printf ' "'; } >"$tmp/win_tail.json"
expect_refused "an unterminated string after the CPU trace" 'trailing garbage' \
	"$CUPTIMERGE" -q -w "$FIX/window.json" "$tmp/cpu_tail.json"
expect_refused "an unterminated string after the window" 'trailing garbage' \
	"$CUPTIMERGE" -q -w "$tmp/win_tail.json" "$FIX/cpu.json"
expect_refused "an unterminated string after a trace to repair" 'trailing garbage' \
	"$CUPTIMERGE" -q -t "$FIX/thread_map.json" -o "$tmp/repaired.json" "$tmp/cpu_tail.json"

# the error's offset is the offending byte's, at every read size
inject "$FIX/cpu.json" "$ff" >"$tmp/cpu_ff.json"
want=$(awk 'index($0, ",") { print n + index($0, ",") - 1; exit } { n += length($0) + 1 }' "$FIX/cpu.json")
for bs in 1 2 3 7 64; do
	tcase "the offset of a form feed at read size $bs"
	rc=0
	"$CUPTIMERGE" -q --buffer-size $bs -w "$FIX/window.json" "$tmp/cpu_ff.json" >/dev/null 2>"$tmp/err" || rc=$?
	grep -q ":$want: invalid JSON: form feed" "$tmp/err" || fail "offset at read size $bs: want $want, got: $(cat "$tmp/err")"
done
finish
