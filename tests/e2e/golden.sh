#!/bin/sh
# golden.sh - every case of tests/fixtures/cases.txt merged by the real binary
# equals the expected output (the reference merge's, plus Kineto's args for
# windows that carry them); again with read chunks of 1..31 bytes
# (chunk-boundary bugs), with gzip inputs and the CPU trace on a pipe, and
# with both inputs read by the careful (yajl) readers instead of the parallel
# ones.  Four TAP cases per line of cases.txt.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compare JSON"

# The cases come from the file on fd 3, not through a pipe: the body of a
# `... | while` loop runs in a subshell, and its failures were lost (F2).
rows=0
while read -r name cpu win exp opts <&3; do
	case $name in '' | '#'*) continue ;; esac
	rows=$((rows + 1))

	t_tiny="$name: the same bytes with --buffer-size 1..31 (read ahead at 3, 7, .., 31)${CUPTIMERGE_TEST_SAMPLE:+, a sample (CUPTIMERGE_TEST_SAMPLE)}"
	t_pipe="$name: the same bytes from gzip inputs, the CPU trace on a pipe"
	t_careful="$name: the same bytes from the careful readers (CUPTIMERGE_CAREFUL)"
	tcase "$name: merge equals $exp"
	rc=0
	# shellcheck disable=SC2086 # opts is a word list
	$CUPTIMERGE $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/$name.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name: exit $rc: $(cat "$tmp/err")"
		skip "$t_tiny" "no output to compare with"
		skip "$t_pipe" "no output to compare with"
		skip "$t_careful" "no output to compare with"
		continue
	fi
	$JSONCMP "$FIX/$exp" "$tmp/$name.json" || fail "$name: differs from $exp"

	# the small cases again with every tiny read size: the same bytes
	if [ "$(wc -c <"$FIX/$cpu")" -lt 20000 ]; then
		tcase "$t_tiny"
		# (a sample of the sizes where CUPTIMERGE_TEST_SAMPLE is set:
		# common.sh's sample)
		for bs in $(sample $(seq 1 31)); do
			rc=0
			# every fourth size read ahead on threads of the inputs' own
			# (by default only chunks of 64 KiB and up are)
			ra=$((bs % 4 == 3))
			# shellcheck disable=SC2086
			CUPTIMERGE_READAHEAD=$ra $CUPTIMERGE --buffer-size $bs $opts -w "$FIX/$win" "$FIX/$cpu" \
				>"$tmp/bs.json" 2>"$tmp/err" || rc=$?
			if [ $rc -ne 0 ]; then
				fail "$name: --buffer-size $bs (read-ahead $ra): exit $rc: $(cat "$tmp/err")"
			elif ! cmp -s "$tmp/bs.json" "$tmp/$name.json"; then
				fail "$name: --buffer-size $bs (read-ahead $ra) output differs"
			fi
		done
	else
		skip "$t_tiny" "$cpu is too big to merge 31 times"
	fi

	# gzip inputs (detected by magic), CPU trace on a pipe: the same bytes out
	tcase "$t_pipe"
	gzip -c "$FIX/$cpu" >"$tmp/cpu.gz"
	gzip -c "$FIX/$win" >"$tmp/win.gz"
	rc=0
	# shellcheck disable=SC2086,SC2002 # cat: the CPU trace must come on a pipe
	cat "$tmp/cpu.gz" | CUPTIMERGE_BUFSIZE=7 $CUPTIMERGE $opts -w "$tmp/win.gz" >"$tmp/pipe.json" 2>"$tmp/err" ||
		rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name: gzip on a pipe: exit $rc: $(cat "$tmp/err")"
	else
		cmp -s "$tmp/pipe.json" "$tmp/$name.json" || fail "$name: gzip/pipe output differs"
	fi

	# the careful readers (yajl), which the parallel ones hand a fault to,
	# give the same bytes; -v says which read
	tcase "$t_careful"
	rc=0
	# shellcheck disable=SC2086
	CUPTIMERGE_CAREFUL=1 $CUPTIMERGE -v $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/careful.json" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name: careful readers: exit $rc: $(cat "$tmp/err")"
	else
		grep -q 'read by: window careful, CPU trace careful' "$tmp/err" ||
			fail "$name: not read by the careful readers: $(tail -n 1 "$tmp/err")"
		cmp -s "$tmp/careful.json" "$tmp/$name.json" || fail "$name: the careful readers' output differs"
	fi
done 3<"$FIX/cases.txt"

# a case file that cannot be read ends the loop at once: that is no pass
tcase "cases.txt was read"
[ $rows -gt 0 ] || fail "no cases read from $FIX/cases.txt"
finish
