#!/bin/sh
# recipes.sh - the README's xargs and GNU parallel recipes for many ranks
# keep each rank's own exit status (xargs alone turns them into 123, GNU
# parallel into a count): four ranks, rank 2's trace truncated.  The xargs
# recipe is plain POSIX; the parallel one is skipped where GNU parallel is
# missing.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compare JSON"

W=$FIX/window.json
C=$FIX/cpu.json
mkdir "$tmp/job" "$tmp/job/out"
for r in 0 1 2 3; do
	cp "$C" "$tmp/job/rank$r.json"
	cp "$W" "$tmp/job/win$r.json"
done
head -c 500 "$C" >"$tmp/job/rank2.json"

# check_outputs HOW: ranks 0, 1, 3 equal the reference merge; rank 2 left no file
check_outputs() {
	for r in 0 1 3; do
		gzip -dc "$tmp/job/out/merged$r.json.gz" >"$tmp/got.json" 2>/dev/null || :
		$JSONCMP "$FIX/expected.json" "$tmp/got.json" >/dev/null 2>&1 ||
			fail "$1: rank $r's output differs from the reference merge"
	done
	[ ! -e "$tmp/job/out/merged2.json.gz" ] || fail "$1: the failed rank left an output"
}

# The xargs recipe: each rank appends "rank status" to a file of its own line.
tcase "xargs -P: every rank's own exit status kept"
(
	cd "$tmp/job"
	# shellcheck disable=SC2016 # $1 and $? belong to the inner shell
	printf '%s\n' 0 1 2 3 | CUPTIMERGE=$CUPTIMERGE xargs -P 4 -I{} sh -c \
		'"$CUPTIMERGE" -q --trace-name example -w win$1.json -o out/merged$1.json.gz rank$1.json;
		 echo "$1 $?" >>status.txt' sh {}
)
sort "$tmp/job/status.txt" >"$tmp/status"
printf '0 0\n1 0\n2 1\n3 0\n' | cmp -s - "$tmp/status" || fail "statuses: $(tr '\n' ' ' <"$tmp/status")"
check_outputs xargs

rm -f "$tmp/job/out/"*
if parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
	tcase "GNU parallel --joblog: every rank's own exit status kept"
	rc=0
	(
		cd "$tmp/job"
		parallel --will-cite -j 4 --joblog joblog.tsv \
			"$CUPTIMERGE" -q --trace-name example -w win{}.json -o out/merged{}.json.gz rank{}.json \
			::: 0 1 2 3
	) 2>"$tmp/err" || rc=$?
	# parallel's own status counts the failed jobs; the joblog has each one's (column 7, Exitval)
	[ "$rc" -eq 1 ] || fail "parallel exit $rc, wanted 1 (one failed job): $(cat "$tmp/err")"
	awk -F '\t' 'NR > 1 { split($9, a, " "); print a[length(a)], $7 }' "$tmp/job/joblog.tsv" |
		sed 's/^rank//; s/\.json / /' | sort >"$tmp/status"
	printf '0 0\n1 0\n2 1\n3 0\n' | cmp -s - "$tmp/status" || fail "joblog statuses: $(tr '\n' ' ' <"$tmp/status")"
	check_outputs parallel
else
	skip "GNU parallel --joblog: every rank's own exit status kept" "GNU parallel is not installed"
fi
finish
