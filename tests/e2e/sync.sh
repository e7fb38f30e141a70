#!/bin/sh
# sync.sh - -o FILE is atomic but not synced by default; --sync makes it
# durable (issue 30, target 1; io/output.c says why).  Under strace(1):
# a plain -o calls no fsync, fdatasync, sync_file_range, syncfs or sync, in
# every mode (merge, repair, cut, a trace alone, --split, .gz, .pftrace) and
# either way of naming the file (O_TMPFILE and linkat, or a named temporary
# file and rename); --sync syncs each file and its directory, once each, and
# starts the write-back early on a file of some MiB.  The bytes are the same
# either way; a failed run without --sync still keeps the old file and leaves
# no temporary one; cuptimerge-batch --sync passes --sync on to each merge.
#
# strace, not an LD_PRELOAD shim that counts calls: it sees the system calls
# themselves, from every thread (the write-back and writing threads), however
# they are made, where a shim sees only calls through libc's dynamic symbols
# and, preloaded ahead of the sanitizer builds' runtime, makes ASan refuse to
# start.  .ci/run installs it.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to make a trace of some MiB"
need strace "to see the sync calls"
strace -f -qq -o /dev/null true 2>/dev/null || skip_all "strace cannot trace here (ptrace not permitted)"
BATCH=${CUPTIMERGE_BATCH:-$(dirname "$CUPTIMERGE")/cuptimerge-batch}

# LeakSanitizer cannot run under ptrace (a sanitizer build's program fails
# at exit): the traced runs go without it, the others keep it
NOLEAK="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

W=$FIX/window.json
C=$FIX/cpu.json
SYNCS='fsync|fdatasync|sync_file_range|syncfs|sync'

# a CPU trace of 8 MB: the fixture's and 40,000 operators more, so that
# --sync's write-back (steps of at least 1 MiB) has something to start
python3 - "$C" "$tmp/big.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i in range(40000):
    d["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "aten::add_%d" % (i % 50), "pid": 4242,
                             "tid": 4242, "ts": 5001000 + 2 * i, "dur": 1.0,
                             "args": {"External id": 1000 + i, "Sequence number": i}})
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
# and the same cut short two thirds in: bad data once the output is open
head -c $(($(wc -c <"$tmp/big.json") * 2 / 3)) "$tmp/big.json" >"$tmp/big_trunc.json"
head -c 1400 "$FIX/cut_cpu.json" >"$tmp/cut_trunc.json"

# traced LOG ARGS...: cuptimerge ARGS under strace, the calls that sync or
# name a file logged in LOG; its exit status.
traced() {
	tr_log=$1
	shift
	env "$NOLEAK" strace -f -qq -e trace=fsync,fdatasync,sync_file_range,syncfs,sync,linkat,rename,renameat,renameat2 \
		-o "$tr_log" "$CUPTIMERGE" -q --now 1795974776 "$@" 2>"$tmp/err"
}

# calls PATTERN LOG: how many calls of PATTERN's system calls LOG has (a call
# strace shows in two pieces, "unfinished" and "resumed", counts once).
calls() {
	grep -cE "^[0-9]+ +($1)\(" "$2" || true
}

# modes: NAME|OUTPUT (a %s: --split)|ARGS, each run with -o DIR/OUTPUT
modes="merge|m.json|-w $W $C
merge, gzip|m.json.gz|-w $W $C
merge, .pftrace|m.pftrace|-w $W $C
merge, 8 MB|m.json|-w $W $tmp/big.json
repair|r.json|-t $FIX/thread_map.json $C
cut, a merge|c.json|--steps=2 -w $FIX/cut_window.json $FIX/cut_cpu.json
cut, the trace alone|c.json|--steps=1-2 $FIX/cut_cpu.json
the trace alone, 8 MB|a.json|$tmp/big.json
--split, a merge|s_%s.json|--split=steps -w $FIX/cut_window.json $FIX/cut_cpu.json
--split, gzip, a repair|s_%s.json.gz|--split=steps:2 -t $FIX/cut_window.json $FIX/cut_cpu.json"

for notmp in 0 1; do
	export CUPTIMERGE_NO_TMPFILE=$notmp
	while IFS='|' read -r name out args; do
		for j in 1 4; do
			tcase "$name, -j $j, CUPTIMERGE_NO_TMPFILE=$notmp: -o syncs nothing, --sync each file and its directory, the same bytes"
			# both to the same name (the default traceName)
			rm -rf "$tmp/d" "$tmp/o" && mkdir "$tmp/o"
			# shellcheck disable=SC2086 # ARGS are words
			traced "$tmp/log_d" -j $j $args -o "$tmp/o/$out" || fail "default: exit $?: $(cat "$tmp/err")"
			mv "$tmp/o" "$tmp/d" && mkdir "$tmp/o"
			# shellcheck disable=SC2086
			traced "$tmp/log_s" -j $j --sync $args -o "$tmp/o/$out" || fail "--sync: exit $?: $(cat "$tmp/err")"
			rm -rf "$tmp/s" && mv "$tmp/o" "$tmp/s"
			n=$(ls "$tmp/d" | wc -l)
			[ "$n" -ge 1 ] || fail "default: no file"
			[ "$(ls "$tmp/s")" = "$(ls "$tmp/d")" ] || fail "--sync made $(ls "$tmp/s"), the default $(ls "$tmp/d")"
			for p in "$tmp/d"/*; do
				[ -e "$p" ] || continue # none: the pattern is left as it was
				f=${p##*/}
				cmp -s "$p" "$tmp/s/$f" || fail "$f: --sync wrote other bytes"
			done
			got=$(calls "$SYNCS" "$tmp/log_d")
			[ "$got" -eq 0 ] || fail "default: $got sync calls: $(grep -E "$SYNCS" "$tmp/log_d" | head -5)"
			# the trace saw the run: each file was named
			got=$(calls 'linkat|rename|renameat|renameat2' "$tmp/log_d")
			[ "$got" -ge "$n" ] || fail "default: $got naming calls for $n files: strace saw nothing?"
			got=$(calls fsync "$tmp/log_s")
			[ "$got" -eq $((2 * n)) ] || fail "--sync: $got fsync calls for $n files, not $((2 * n)) (each file, its directory)"
			got=$(calls 'fdatasync|syncfs|sync' "$tmp/log_s")
			[ "$got" -eq 0 ] || fail "--sync: $got other sync calls"
			# at -j 1 the writer starts each step itself; from -j 4 a thread does,
			# which a short run may end before it has started one (the fsync then
			# writes it all): not counted there
			case $j$args in
			1*big.json*)
				got=$(calls sync_file_range "$tmp/log_s")
				[ "$got" -ge 2 ] || fail "--sync, 8 MB: $got sync_file_range calls (the early write-back)"
				;;
			esac
		done
	done <<EOF
$modes
EOF
done
unset CUPTIMERGE_NO_TMPFILE

tcase "--sync, standard output a regular file: synced once; a pipe: nothing; the same bytes"
traced "$tmp/log_f" --sync -w "$W" "$C" >"$tmp/stdout.json" || fail "to a file: exit $?: $(cat "$tmp/err")"
grep -qE '^[0-9]+ +fsync\(1\)' "$tmp/log_f" || fail "no fsync(1): $(cat "$tmp/log_f")"
[ "$(calls "$SYNCS" "$tmp/log_f")" -eq 1 ] || fail "other sync calls: $(cat "$tmp/log_f")"
traced "$tmp/log_p" --sync -w "$W" "$C" | cat >"$tmp/pipe.json" || fail "to a pipe: exit $?"
[ "$(calls "$SYNCS" "$tmp/log_p")" -eq 0 ] || fail "a pipe synced: $(cat "$tmp/log_p")"
traced "$tmp/log_n" -w "$W" "$C" >"$tmp/plain.json" || fail "without --sync: exit $?"
[ "$(calls "$SYNCS" "$tmp/log_n")" -eq 0 ] || fail "> FILE without --sync synced: $(cat "$tmp/log_n")"
cmp -s "$tmp/stdout.json" "$tmp/plain.json" && cmp -s "$tmp/pipe.json" "$tmp/plain.json" ||
	fail "--sync to standard output wrote other bytes"

tcase "--sync takes no value"
set +e
$CUPTIMERGE --sync=1 -w "$W" "$C" >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "--sync=1: exit $rc, not 2 (usage)"
grep -q "^cuptimerge: .*--sync" "$tmp/err" || fail "--sync=1: $(cat "$tmp/err")"

# A failed run without fsync is as atomic as one with it: the old file
# stays, no temporary file is left (O_TMPFILE's inode goes with the process;
# the named one is removed), plain, gzip and every file of --split.
for notmp in 0 1; do
	for sync in "" --sync; do
		tcase "a failed run${sync:+ with $sync} (bad data midway), CUPTIMERGE_NO_TMPFILE=$notmp: old files kept, nothing left"
		rm -rf "$tmp/old" && mkdir "$tmp/old"
		for f in o.json o.json.gz s_1.json s_2.json s_3.json; do
			echo "old $f" >"$tmp/old/$f"
		done
		for j in 1 4; do
			for case in "o.json|$tmp/big_trunc.json" "o.json.gz|$tmp/big_trunc.json" \
				"o.json|-w $W $tmp/big_trunc.json" \
				"s_%s.json|--split=steps -w $FIX/cut_window.json $tmp/cut_trunc.json"; do
				out=${case%%|*} args=${case#*|}
				set +e
				# shellcheck disable=SC2086
				CUPTIMERGE_NO_TMPFILE=$notmp $CUPTIMERGE -q -j $j $sync $args -o "$tmp/old/$out" 2>"$tmp/err"
				rc=$?
				set -e
				[ $rc -eq 1 ] || fail "-j $j -o $out $args: exit $rc, not 1: $(cat "$tmp/err")"
			done
		done
		for f in o.json o.json.gz s_1.json s_2.json s_3.json; do
			[ "$(cat "$tmp/old/$f")" = "old $f" ] || fail "$f was replaced"
		done
		[ "$(ls -A "$tmp/old" | wc -l)" -eq 5 ] || fail "left: $(ls -A "$tmp/old")"
	done
done

if [ -x "$BATCH" ]; then
	tcase "cuptimerge-batch --sync: each merge gets --sync and syncs; the joblog's lines too; without it nothing syncs"
	for sync in "" --sync; do
		rm -rf "$tmp/b" && mkdir "$tmp/b"
		printf 'key\ttrace\twindow\toutput\nr0\t%s\t%s\t%s\nr1\t%s\t%s\t%s\n' "$C" "$W" "$tmp/b/out/r0.json" \
			"$C" "$FIX/thread_map.json" "$tmp/b/out/r1.json" >"$tmp/b/m.tsv"
		env "$NOLEAK" strace -f -qq -s 4096 -e trace=fsync,fdatasync,sync_file_range,syncfs,sync,execve -o "$tmp/log_b" \
			"$BATCH" -q $sync -j 1 --cuptimerge="$CUPTIMERGE" -m "$tmp/b/m.tsv" 2>"$tmp/err" ||
			fail "batch $sync: exit $?: $(cat "$tmp/err")"
		[ -s "$tmp/b/out/r0.json" ] && [ -s "$tmp/b/out/r1.json" ] || fail "batch $sync: outputs missing"
		merges=$(grep -cE '^[0-9]+ +execve\(.*"-o", "'"$tmp"'/b/out/r[01].json"' "$tmp/log_b" || true)
		[ "$merges" -eq 2 ] || fail "batch $sync: $merges merges seen, not 2"
		with=$(grep -E '^[0-9]+ +execve\(.*"-o", "'"$tmp"'/b/out/r[01].json"' "$tmp/log_b" | grep -c '"--sync"' || true)
		if [ -z "$sync" ]; then
			[ "$with" -eq 0 ] || fail "batch: --sync given to $with merges"
			[ "$(calls "$SYNCS" "$tmp/log_b")" -eq 0 ] || fail "batch: synced: $(grep -E "$SYNCS" "$tmp/log_b" | head -5)"
		else
			[ "$with" -eq 2 ] || fail "batch --sync: --sync given to $with merges of 2"
			# each merge: its file and directory; the batch: a line each (fdatasync)
			[ "$(calls fsync "$tmp/log_b")" -ge 4 ] || fail "batch --sync: $(calls fsync "$tmp/log_b") fsync calls"
			[ "$(calls fdatasync "$tmp/log_b")" -ge 2 ] || fail "batch --sync: the joblog's lines not synced"
		fi
	done
else
	skip "cuptimerge-batch --sync" "no $BATCH"
fi

finish
