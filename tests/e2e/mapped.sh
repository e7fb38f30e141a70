#!/bin/sh
# mapped.sh - with CUPTIMERGE_MMAP=1 a regular file's plain text is mapped, not
# read, from its second chunk on, when the reads are whole pages of 64 KiB or
# more (io/inputraw.c, "Mapped reading"; off by default, a benchmarking aid).  The
# output is the same bytes mapped or read, with and without the read-ahead
# thread; and a CPU trace cut short or edited while the merge runs still fails
# it with status 3 and no output, as when it was read.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to run gen_trace"
need mkfifo "to make named pipes"
GEN=${SHARED:-$srcdir/../shared}/tools/gen_trace
[ -x "$GEN" ] || skip_all "no gen_trace (set SHARED=DIR)"

# A 6 MB CPU trace and its window: many chunks of 64 KiB.
"$GEN" --seed 3 --ops 20000 --quiet "$tmp/cpu.json" "$tmp/win.json"
# (-o names the output in its traceName: every run writes out.json)
CUPTIMERGE_MMAP=0 "$CUPTIMERGE" -q -j 1 -w "$tmp/win.json" -o "$tmp/out.json" "$tmp/cpu.json"
mv "$tmp/out.json" "$tmp/want.json"

for run in "-j 1 --buffer-size 65536" "-j 4 --buffer-size 65536" "-j 2 --buffer-size 1114112" "-j 4"; do
	tcase "gen_trace pair, $run: mapped, the bytes read"
	rc=0
	# shellcheck disable=SC2086 # the options are words
	CUPTIMERGE_MMAP=1 "$CUPTIMERGE" -q $run -w "$tmp/win.json" -o "$tmp/out.json" "$tmp/cpu.json" \
		2>"$tmp/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
	cmp -s "$tmp/want.json" "$tmp/out.json" || fail "output differs from the merge read with read(2)"
done

# The window comes through a named pipe, in two parts; between them (the CPU
# trace's first pass is then under way or done, its second not begun) the
# CPU trace is changed: cut to half its size, or edited in place in a chunk
# that is mapped (past the first 64 KiB).
for change in cut edit; do
	tcase "the CPU trace $change while the merge runs, mapped: status 3, no output"
	cp "$tmp/cpu.json" "$tmp/c.json"
	rm -f "$tmp/w.fifo" "$tmp/o.json"
	mkfifo "$tmp/w.fifo"
	{
		head -c 100 "$tmp/win.json"
		sleep 1
		if [ "$change" = cut ]; then
			python3 -c 'import os, sys; os.truncate(sys.argv[1], os.path.getsize(sys.argv[1]) // 2)' "$tmp/c.json"
		else
			printf 'x' | dd of="$tmp/c.json" bs=1 seek=200000 conv=notrunc 2>/dev/null
		fi
		tail -c +101 "$tmp/win.json"
	} >"$tmp/w.fifo" &
	rc=0
	CUPTIMERGE_MMAP=1 timeout 60 "$CUPTIMERGE" -q -j 2 --buffer-size 65536 -w "$tmp/w.fifo" -o "$tmp/o.json" \
		"$tmp/c.json" 2>"$tmp/err" || rc=$?
	wait
	[ "$rc" -eq 3 ] || fail "exit $rc, wanted 3: $(cat "$tmp/err")"
	grep -q "c.json: the file changed while it was being read" "$tmp/err" || fail "message: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
	[ ! -e "$tmp/o.json" ] || fail "an output file was left"
done
finish
