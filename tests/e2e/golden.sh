#!/bin/sh
# golden.sh - every case of tests/fixtures/cases.txt merged by the real binary
# equals the reference merge's output; again with read chunks of 1..31 bytes
# (chunk-boundary bugs), with gzip inputs, and with the CPU trace on a pipe.
. "${srcdir:-.}/tests/e2e/common.sh"

# The cases come from the file on fd 3, not through a pipe: the body of a
# `... | while` loop runs in a subshell, and its failures were lost (F2).
while read -r name cpu win exp opts <&3; do
	case $name in '' | '#'*) continue ;; esac
	rc=0
	# shellcheck disable=SC2086 # opts is a word list
	$CUPTIMERGE $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/$name.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name: exit $rc: $(cat "$tmp/err")"
		continue
	fi
	$JSONCMP "$FIX/$exp" "$tmp/$name.json" || fail "$name: differs from $exp"

	# the small cases again with every tiny read size
	if [ "$(wc -c <"$FIX/$cpu")" -lt 20000 ]; then
		bs=1
		while [ $bs -le 31 ]; do
			# shellcheck disable=SC2086
			$CUPTIMERGE --buffer-size $bs $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/bs.json" ||
				fail "$name: --buffer-size $bs: exit $?"
			cmp -s "$tmp/bs.json" "$tmp/$name.json" || fail "$name: --buffer-size $bs output differs"
			bs=$((bs + 1))
		done
	fi

	# gzip inputs (detected by magic), CPU trace on a pipe: the same bytes out
	gzip -c "$FIX/$cpu" >"$tmp/cpu.gz"
	gzip -c "$FIX/$win" >"$tmp/win.gz"
	# shellcheck disable=SC2086
	cat "$tmp/cpu.gz" | CUPTIMERGE_BUFSIZE=7 $CUPTIMERGE $opts -w "$tmp/win.gz" >"$tmp/pipe.json" ||
		fail "$name: gzip on a pipe: exit $?"
	cmp -s "$tmp/pipe.json" "$tmp/$name.json" || fail "$name: gzip/pipe output differs"
done 3<"$FIX/cases.txt"
finish
