#!/bin/sh
# split.sh - --split=steps[:N] inside a merge (-w) and a repair (-t), in the
# same pass (issue 24): each file is, byte for byte, what --steps of its steps
# writes to the same -o name (traceName is the file's name in both); and the
# split of a trace alone by writer threads.
#
# The fixtures are cut.sh's (tests/fixtures/cut_cpu.json, cut_window.json; the
# hand-worked events of each step are in tests/fixtures/cut_*_expected.txt, see
# the top of cut.sh): aten::across (1090-1120) crosses the step 1/2 boundary
# and goes to files 1 and 2; step2_k, launched in step 2 by call 8, runs in
# step 3 and goes to file 2 only; the fwdbwd flow from step 1 to step 3 is in
# no file of --split=steps, and whole in the file 1-3 of --split=steps:3.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to read the outputs"
SUM="python3 $srcdir/tests/cut_summary.py"
CPU=$FIX/cut_cpu.json
WIN=$FIX/cut_window.json
NOW="--now 1795974776"

# run NAME ARGS...: cuptimerge ARGS, which must succeed.
run() {
	name=$1
	shift
	rc=0
	$CUPTIMERGE -q $NOW "$@" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || fail "$name: exit $rc: $(cat "$tmp/err")"
}

# same NAME EXPECTED TRACE: TRACE's events are EXPECTED's (cut_summary.py).
same() {
	$SUM "$3" >"$tmp/got.txt" 2>"$tmp/sum.err" || { fail "$1: cannot read the output: $(tail -1 "$tmp/sum.err")"; return; }
		diff -u "$2" "$tmp/got.txt" >"$tmp/diff" || fail "$1: $(head -20 "$tmp/diff")"
}

# split_vs_steps NAME EXT LABELS -- SPLIT-ARGS -- ARGS...: --split=SPLIT-ARGS
# with ARGS to -o 'o/m_%s.json'EXT in $tmp, then, for each label L of LABELS,
# --steps=L with ARGS to the same name: the same bytes.  The split's files
# are left in $tmp/split.
split_vs_steps() {
	sname=$1 ext=$2 labels=$3 sargs=$4
	shift 4
	rm -rf "$tmp/o" "$tmp/split"
	mkdir "$tmp/o"
	run "$sname" --split="$sargs" "$@" -o "$tmp/o/m_%s.json$ext"
	got=$(cd "$tmp/o" && ls | tr '\n' ' ')
	want=$(for l in $labels; do printf 'm_%s.json%s ' "$l" "$ext"; done)
	[ "$got" = "$want" ] || fail "$sname: files $got, not $want"
	mv "$tmp/o" "$tmp/split"
	steps_same "$sname" "$tmp/split" m_ "$ext" "$labels" "$@"
}

# steps_same NAME DIR PREFIX EXT LABELS ARGS...: for each label L of LABELS,
# --steps=L with ARGS to $tmp/o/PREFIX L .json EXT (a fresh $tmp/o) writes
# the bytes of the split's file of that name in DIR.
steps_same() {
	ssname=$1 sdir=$2 prefix=$3 sext=$4 slabels=$5
	shift 5
	rm -rf "$tmp/o"
	mkdir "$tmp/o"
	for l in $slabels; do
		f=$prefix$l.json$sext
		run "$ssname --steps=$l" --steps="$l" "$@" -o "$tmp/o/$f"
		cmp -s "$sdir/$f" "$tmp/o/$f" ||
			fail "$ssname: file $l differs from --steps=$l: $(cmp "$sdir/$f" "$tmp/o/$f" 2>&1)"
	done
}

tcase "merge, --split=steps: each file --steps of its step, byte for byte; steps 1 and 2 as worked out by hand"
split_vs_steps merge "" "1 2 3" steps -w "$WIN" "$CPU"
same "file 1" "$FIX/cut_steps1_expected.txt" "$tmp/split/m_1.json"
same "file 2" "$FIX/cut_steps2_expected.txt" "$tmp/split/m_2.json"
cp -r "$tmp/split" "$tmp/merge_split"

tcase "merge, --split=steps:3: the flow from step 1 to step 3 whole in the one file, as worked out by hand"
split_vs_steps merge3 "" "1-3" steps:3 -w "$WIN" "$CPU"
same "file 1-3" "$FIX/cut_steps13_expected.txt" "$tmp/split/m_1-3.json"

tcase "merge, --split=steps:2, gzip output (-o .json.gz), -j 1 and -j 4: files 1-2 and 3, each --steps'"
split_vs_steps mergegz .gz "1-2 3" steps:2 -w "$WIN" "$CPU"
split_vs_steps mergegz1 .gz "1-2 3" steps:2 -j 1 -w "$WIN" "$CPU"
split_vs_steps mergegz4 "" "1-2 3" steps:2 -j 4 -w "$WIN" "$CPU"

# split_events_window.json (window version 2): CUDA event 5 recorded in step 1
# (stream 7, call 20), waited on in step 2 (a Stream Wait Event), recorded again
# in step 2 (stream 9, call 23; its cuda_event record lies between step 2's
# records) and synchronized in step 3; event 6's record follows a kernel of
# step 1 and is synchronized in step 1.  Each sync names where its event was
# last recorded before it in window order, whichever file that record's
# call went to.
tcase "merge --split, window version 2: each event sync's wait as worked out by hand, each file --steps', -j 1 and -j 4"
EWIN=$FIX/split_events_window.json
split_vs_steps events "" "1 2 3" steps -w "$EWIN" "$CPU"
split_vs_steps events1 "" "1 2 3" steps -j 1 -w "$EWIN" "$CPU"
split_vs_steps events4 "" "1 2 3" steps -j 4 -w "$EWIN" "$CPU"
python3 - "$tmp/split" >"$tmp/waits" 2>&1 <<'PY' || fail "$(cat "$tmp/waits")"
import json, sys
want = {1: [(27, 8, 26, 6)], 2: [(22, 7, 20, 5)], 3: [(24, 9, 23, 5)]}
for f, w in want.items():
    ev = json.load(open("%s/m_%d.json" % (sys.argv[1], f)))["traceEvents"]
    got = [(a["correlation"], a["wait_on_stream"], a["wait_on_cuda_event_record_corr_id"], a["wait_on_cuda_event_id"])
           for a in (e["args"] for e in ev if e.get("cat") == "cuda_sync")]
    if got != w:
        sys.exit("file %d: syncs (correlation, wait_on_stream, wait_on_cuda_event_record_corr_id, "
                 "wait_on_cuda_event_id) %s, not %s" % (f, got, w))
PY

tcase "merge with -t, --split=steps: each file --steps -t of its step (a repair stage a file)"
split_vs_steps mergerepair "" "1 2 3" steps -t "$WIN" -w "$WIN" "$CPU"

tcase "merge, --split=steps with --trace-name: every file named so, each --steps'"
split_vs_steps named "" "1 2 3" steps --trace-name cut -w "$WIN" "$CPU"

# A repair of a trace alone: threads_full.json (events on pthread_self() rows
# that thread_map.json moves to kernel tids) given two ProfilerStep events,
# so that each file moves its own events and names its own rows.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
t0 = 5117755921325.088
for n, (a, b) in enumerate(((t0, t0 + 7000), (t0 + 7000, t0 + 15400)), 1):
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n, "pid": 470, "tid": 470,
               "ts": a, "dur": b - a, "args": {}})
json.dump(d, open(sys.argv[2], "w"))' "$FIX/threads_full.json" "$tmp/threads_steps.json"
tcase "a repair (-t, no window), --split=steps: each file --steps -t of its step; events moved in both"
split_vs_steps repair "" "1 2" steps -t "$FIX/thread_map.json" "$tmp/threads_steps.json"
for l in 1 2; do
	python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
moved = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("tid") not in (511690432, 352294592)]
left = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("tid") in (511690432, 352294592)]
sys.exit(0 if moved and not left else 1)' "$tmp/split/m_$l.json" || fail "file $l: no API event moved, or one left on a pthread_self() row"
done
cp -r "$tmp/split" "$tmp/repair_split"

tcase "merge and repair --split at read sizes 1 to 31: the same files"
for bs in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	rm -rf "$tmp/o"
	mkdir "$tmp/o"
	CUPTIMERGE_BUFSIZE=$bs run "merge bs $bs" --split=steps -w "$WIN" -o "$tmp/o/m_%s.json" "$CPU"
	for l in 1 2 3; do
		cmp -s "$tmp/merge_split/m_$l.json" "$tmp/o/m_$l.json" || fail "merge, read size $bs: file $l differs"
	done
	rm -rf "$tmp/o"
	mkdir "$tmp/o"
	CUPTIMERGE_BUFSIZE=$bs run "repair bs $bs" --split=steps -t "$FIX/thread_map.json" -o "$tmp/o/m_%s.json" \
		"$tmp/threads_steps.json"
	for l in 1 2; do
		cmp -s "$tmp/repair_split/m_$l.json" "$tmp/o/m_$l.json" || fail "repair, read size $bs: file $l differs"
	done
done

# the split's CPU events copied in parts on threads (cpu/cpucopypar.c): each
# part decides its events (cm_cpucut_part_keep) and hands each file its
# pieces in order, a file's first without the separator before it; a part
# at every element (CUPTIMERGE_COPY_STRIDE=8), 3 threads; the files of the
# copy on one thread, at small read sizes too
tcase "merge --split, the CPU events copied in parts on 3 threads, a part an element: the same files, plain and .json.gz, at read sizes 1, 7 and the default"
for ext in "" .gz; do
	for sp in steps steps:2; do
		rm -rf "$tmp/one" "$tmp/o"
		mkdir "$tmp/o" # (traceName is the file's name: the same directory)
		CUPTIMERGE_COPY_THREADS=1 run "one thread" --split=$sp -w "$WIN" -o "$tmp/o/m_%s.json$ext" "$CPU"
		mv "$tmp/o" "$tmp/one"
		for bs in 1 7 default; do
			rm -rf "$tmp/o"
			mkdir "$tmp/o"
			rc=0
			CUPTIMERGE_BUFSIZE=${bs#default} CUPTIMERGE_COPY_STRIDE=8 CUPTIMERGE_COPY_THREADS=3 $CUPTIMERGE $NOW -v \
				--split=$sp -w "$WIN" -o "$tmp/o/m_%s.json$ext" "$CPU" 2>"$tmp/err" || rc=$?
			[ $rc -eq 0 ] || fail "--split=$sp$ext, read size $bs: exit $rc: $(cat "$tmp/err")"
			grep -q "copy: the CPU trace's events in [1-9][0-9]* parts on 3 threads" "$tmp/err" ||
				fail "--split=$sp$ext, read size $bs: not in parts: $(grep copy: "$tmp/err")"
			[ "$(cd "$tmp/o" && ls)" = "$(cd "$tmp/one" && ls)" ] || fail "--split=$sp$ext: other files"
			for f in $(cd "$tmp/one" && ls); do
				cmp -s "$tmp/one/$f" "$tmp/o/$f" || fail "--split=$sp$ext, read size $bs: $f differs in parts"
			done
		done
	done
done

. "$srcdir/tests/e2e/tploads.sh"

tcase "merge --split with the careful readers (an event at a time): the same files as JSON"
rm -rf "$tmp/o"
mkdir "$tmp/o"
CUPTIMERGE_CAREFUL=1 run "careful" --split=steps -w "$WIN" -o "$tmp/o/m_%s.json" "$CPU"
for l in 1 2 3; do
	json_same "$tmp/merge_split/m_$l.json" "$tmp/o/m_$l.json" || fail "careful: file $l differs"
done

# A generated pair (gen_trace, 20,000 ops, 1,352 steps): --split=steps:50 of
# the merge, 28 files; three of them against --steps.
shared=${SHARED:-$srcdir/../shared}
if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --seed 3 --ops 20000 --quiet "$tmp/g.cpu" "$tmp/g.win"
	tcase "gen_trace pair, merge --split=steps:50: 28 files; 1-50, 651-700, 1351-1352 each --steps', byte for byte"
	rm -rf "$tmp/o"
	mkdir "$tmp/o"
	run gsplit --split=steps:50 -w "$tmp/g.win" -o "$tmp/o/g_%s.json.gz" "$tmp/g.cpu"
	[ "$(ls "$tmp/o" | wc -l)" -eq 28 ] || fail "$(ls "$tmp/o" | wc -l) files"
	mv "$tmp/o" "$tmp/gsplit"
	steps_same gsteps "$tmp/gsplit" g_ .gz "1-50 651-700 1351-1352" -w "$tmp/g.win" "$tmp/g.cpu"
	tcase "gen_trace pair, merge --split=steps:50 with --memory=1M (the tables in files), -j 1 and -j 8 (groups planned side by side): the same files"
	for how in "" "--memory=1M" "-j 1" "-j 8"; do
		rm -rf "$tmp/gm$how"
		mkdir "$tmp/gm$how"
		# shellcheck disable=SC2086
		run "gm $how" $how --trace-name g --split=steps:50 -w "$tmp/g.win" -o "$tmp/gm$how/g_%s.json" "$tmp/g.cpu"
	done
	for f in $(cd "$tmp/gm" && ls); do
		cmp -s "$tmp/gm/$f" "$tmp/gm--memory=1M/$f" || fail "--memory=1M: $f differs"
		cmp -s "$tmp/gm/$f" "$tmp/gm-j 1/$f" || fail "-j 1: $f differs"
		cmp -s "$tmp/gm/$f" "$tmp/gm-j 8/$f" || fail "-j 8: $f differs"
	done
	# files of many blocks of records each: the render's walk over all the
	# groups' runs hands each file several pieces, in turn
	tcase "gen_trace pair, merge --split=steps:500: 3 files of several pieces each, each --steps', -j 1 and -j 3"
	for how in "-j 1" "-j 3"; do
		rm -rf "$tmp/o"
		mkdir "$tmp/o"
		# shellcheck disable=SC2086
		run "g500 $how" $how --split=steps:500 -w "$tmp/g.win" -o "$tmp/o/g_%s.json" "$tmp/g.cpu"
		[ "$(cd "$tmp/o" && ls | tr '\n' ' ')" = "g_1-500.json g_1001-1352.json g_501-1000.json " ] ||
			fail "$how: files $(cd "$tmp/o" && ls | tr '\n' ' ')"
		mv "$tmp/o" "$tmp/g500"
		mkdir "$tmp/o"
		for l in 1-500 501-1000 1001-1352; do
			# shellcheck disable=SC2086
			run "g500 $how --steps=$l" $how --steps=$l -w "$tmp/g.win" -o "$tmp/o/g_$l.json" "$tmp/g.cpu"
			cmp -s "$tmp/g500/g_$l.json" "$tmp/o/g_$l.json" || fail "$how: file $l differs from --steps=$l"
		done
		rm -rf "$tmp/g500"
	done
	# the files written by writer threads (io/outq.c; CUPTIMERGE_SPLIT_WRITERS,
	# else -j / 4 of them): a stripe of files a thread, each file's bytes in
	# the order they came, the render walking a piece of each stripe in turn
	tcase "gen_trace pair, merge --split=steps:100 by 0, 1, 2, 3 and 14 writer threads, -j 2 and -j 8, plain and .json.gz: the same files"
	for ext in "" .gz; do
		rm -rf "$tmp/w1"
		mkdir "$tmp/w1"
		CUPTIMERGE_SPLIT_WRITERS=0 run "writers 0" -j 1 --trace-name g --split=steps:100 -w "$tmp/g.win" -o "$tmp/w1/g_%s.json$ext" "$tmp/g.cpu"
		for how in "2 -j 2" "1 -j 8" "2 -j 8" "3 -j 8" "14 -j 8"; do
			rm -rf "$tmp/o"
			mkdir "$tmp/o"
			# shellcheck disable=SC2086
			CUPTIMERGE_SPLIT_WRITERS=${how%% *} run "writers $how" ${how#* } --trace-name g --split=steps:100 \
				-w "$tmp/g.win" -o "$tmp/o/g_%s.json$ext" "$tmp/g.cpu"
			[ "$(ls "$tmp/o" | wc -l)" -eq 14 ] || fail "writers $how: $(ls "$tmp/o" | wc -l) files"
			for f in $(cd "$tmp/w1" && ls); do
				cmp -s "$tmp/w1/$f" "$tmp/o/$f" || fail "writers $how$ext: $f differs"
			done
		done
	done
	# (a part every 8 bytes: the 415 events over 32 times that are walked
	# between parts, the cut's notes read on from there: cm_cpucut_seek)
	tcase "gen_trace pair, merge --split=steps:100, the CPU events copied in parts on 3 threads (a part every 8 bytes or 4 KB), by 0 and 2 writer threads, plain and .json.gz: the same files"
	for ext in "" .gz; do
		rm -rf "$tmp/w1"
		mkdir "$tmp/w1"
		CUPTIMERGE_COPY_THREADS=1 run "one thread" -j 4 --trace-name g --split=steps:100 -w "$tmp/g.win" \
			-o "$tmp/w1/g_%s.json$ext" "$tmp/g.cpu"
		for w in "0 8" "2 8" "0 4096" "2 4096"; do
			stride=${w#* } w=${w% *}
			rm -rf "$tmp/o"
			mkdir "$tmp/o"
			rc=0
			CUPTIMERGE_SPLIT_WRITERS=$w CUPTIMERGE_COPY_STRIDE=$stride CUPTIMERGE_COPY_THREADS=3 $CUPTIMERGE $NOW -v -j 4 \
				--trace-name g --split=steps:100 -w "$tmp/g.win" -o "$tmp/o/g_%s.json$ext" "$tmp/g.cpu" 2>"$tmp/err" ||
				rc=$?
			[ $rc -eq 0 ] || fail "writers $w, stride $stride$ext: exit $rc: $(cat "$tmp/err")"
			grep -q "copy: the CPU trace's events in [1-9][0-9]* parts on 3 threads" "$tmp/err" ||
				fail "writers $w, stride $stride$ext: not in parts: $(grep copy: "$tmp/err")"
			[ "$(ls "$tmp/o" | wc -l)" -eq 14 ] || fail "writers $w, stride $stride$ext: $(ls "$tmp/o" | wc -l) files"
			for f in $(cd "$tmp/w1" && ls); do
				cmp -s "$tmp/w1/$f" "$tmp/o/$f" || fail "writers $w, stride $stride$ext: $f differs in parts"
			done
		done
	done
	tcase "gen_trace pair, merge -t --split=steps:100 (each CPU event through its files' repairs) by 0, 2 and 5 writer threads: the same files"
	for w in 0 2 5; do
		rm -rf "$tmp/t$w"
		mkdir "$tmp/t$w"
		CUPTIMERGE_SPLIT_WRITERS=$w run "-t, writers $w" -j 8 --trace-name g -t "$tmp/g.win" --split=steps:100 \
			-w "$tmp/g.win" -o "$tmp/t$w/g_%s.json" "$tmp/g.cpu"
	done
	for f in $(cd "$tmp/t0" && ls); do
		cmp -s "$tmp/t0/$f" "$tmp/t2/$f" || fail "-t, writers 2: $f differs"
		cmp -s "$tmp/t0/$f" "$tmp/t5/$f" || fail "-t, writers 5: $f differs"
	done
	# a writer thread's write error: /dev/full behind one file's name
	if [ -w /dev/full ]; then
		tcase "merge --split by 2 writer threads, a file's name a link to /dev/full: exit 3, one line, no other file left"
		rm -rf "$tmp/o"
		mkdir "$tmp/o"
		ln -s /dev/full "$tmp/o/g_501-1000.json"
		rc=0
		CUPTIMERGE_SPLIT_WRITERS=2 $CUPTIMERGE -q -j 4 --split=steps:500 -w "$tmp/g.win" -o "$tmp/o/g_%s.json" "$tmp/g.cpu" \
			2>"$tmp/err" || rc=$?
		[ $rc -eq 3 ] || fail "exit $rc, not 3: $(cat "$tmp/err")"
		[ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
		grep -q 'g_501-1000.json: write error' "$tmp/err" || fail "not the write error: $(cat "$tmp/err")"
		[ "$(cd "$tmp/o" && ls)" = "g_501-1000.json" ] || fail "files were left: $(ls "$tmp/o")"
	else
		skip "a file's name a link to /dev/full" "no writable /dev/full"
	fi
	# gzip files: each file's blocks written by the compressor thread that
	# finishes them (io/pgzip.c), which keeps a write error for the thread
	# that hands the blocks over to report: /dev/full behind one name, and
	# files that cannot grow (RLIMIT_FSIZE, SIGXFSZ ignored: EFBIG) past
	# 4 MiB, level 0 so that they would; one line, status 3, nothing left
	if [ -w /dev/full ]; then
		tcase "merge --split to .json.gz, a file's name a link to /dev/full, -j 1, 2, 4 and 8 (its blocks written by the compressor threads): exit 3, one line, no other file left"
		for j in 1 2 4 8; do
			rm -rf "$tmp/o"
			mkdir "$tmp/o"
			ln -s /dev/full "$tmp/o/g_501-1000.json.gz"
			expect_exit 3 "^cuptimerge: $tmp/o/g_501-1000.json.gz: write error: No space left on device\$" \
				$CUPTIMERGE -q -j $j --split=steps:500 -w "$tmp/g.win" -o "$tmp/o/g_%s.json.gz" "$tmp/g.cpu"
			[ "$(cd "$tmp/o" && ls)" = "g_501-1000.json.gz" ] || fail "-j $j: files were left: $(ls "$tmp/o")"
		done
		# the error met at the end, in the round that finishes the files
		# before any is named (mergesplit.c): a writing thread a file
		# (CUPTIMERGE_WRITER=1) holds its error to the drain
		tcase "merge --split, a file behind /dev/full whose write error comes at its end (CUPTIMERGE_WRITER=1), plain and .json.gz, -j 1 and 4: exit 3, one line, no other file left"
		for ext in .json .json.gz; do
			for j in 1 4; do
				rm -rf "$tmp/o"
				mkdir "$tmp/o"
				ln -s /dev/full "$tmp/o/g_501-1000$ext"
				expect_exit 3 "^cuptimerge: $tmp/o/g_501-1000$ext: write error: No space left on device\$" \
					env CUPTIMERGE_WRITER=1 $CUPTIMERGE -q -j $j --split=steps:500 -w "$tmp/g.win" \
					-o "$tmp/o/g_%s$ext" "$tmp/g.cpu"
				[ "$(cd "$tmp/o" && ls)" = "g_501-1000$ext" ] || fail "$ext -j $j: files were left: $(ls "$tmp/o")"
			done
		done
	else
		skip "a gzip file's name a link to /dev/full" "no writable /dev/full"
	fi
	tcase "merge --split to .json.gz -z0 whose files cannot grow past 4 MiB, -j 1, 2, 4 and 8: exit 3, one line (File too large), no file left"
	for j in 1 2 4 8; do
		rm -rf "$tmp/o"
		mkdir "$tmp/o"
		expect_exit 3 "^cuptimerge: $tmp/o/g_[0-9-]*\.json\.gz: write error: File too large\$" \
			sh -c 'trap "" XFSZ; ulimit -f 4096; exec "$@"' sh \
			$CUPTIMERGE -q -j $j -z0 --split=steps:500 -w "$tmp/g.win" -o "$tmp/o/g_%s.json.gz" "$tmp/g.cpu"
		[ -z "$(ls -A "$tmp/o")" ] || fail "-j $j: files were left: $(ls -A "$tmp/o")"
	done
	# the most files (62 of the 64 a split allows) on one crew, with
	# --memory=1M: each the plain split's file gzip'd, the same bytes at
	# every -j and whichever thread writes the blocks
	tcase "gen_trace pair, merge --split=steps:22 to .json.gz (62 files) with --memory=1M, -j 1, 3 and 8, blocks written by the compressor threads or the handing one: the same files, each the plain split's gzip'd"
	rm -rf "$tmp/p22"
	mkdir "$tmp/p22"
	run "p22" --memory=1M --trace-name g --split=steps:22 -w "$tmp/g.win" -o "$tmp/p22/g_%s.json" "$tmp/g.cpu"
	[ "$(ls "$tmp/p22" | wc -l)" -eq 62 ] || fail "plain: $(ls "$tmp/p22" | wc -l) files"
	for how in "1 -j 1" "1 -j 3" "1 -j 8" "0 -j 8"; do
		rm -rf "$tmp/z22$how"
		mkdir "$tmp/z22$how"
		# shellcheck disable=SC2086
		CUPTIMERGE_CREW_WRITE=${how%% *} run "z22 $how" ${how#* } --memory=1M --trace-name g --split=steps:22 \
			-w "$tmp/g.win" -o "$tmp/z22$how/g_%s.json.gz" "$tmp/g.cpu"
		[ "$(ls "$tmp/z22$how" | wc -l)" -eq 62 ] || fail "$how: $(ls "$tmp/z22$how" | wc -l) files"
	done
	for f in $(cd "$tmp/p22" && ls); do
		gzip -dc "$tmp/z22""1 -j 1/$f.gz" >"$tmp/d22" || fail "$f.gz: gzip -d failed"
		cmp -s "$tmp/d22" "$tmp/p22/$f" || fail "$f.gz is not $f gzip'd"
		for how in "1 -j 3" "1 -j 8" "0 -j 8"; do
			cmp -s "$tmp/z22""1 -j 1/$f.gz" "$tmp/z22$how/$f.gz" || fail "$how: $f.gz differs"
		done
	done
	rm -rf "$tmp/p22" "$tmp/z22"* "$tmp/d22"
	# the split of a trace alone (no -w, no -t: src/filter.c) by writer
	# threads too: the merged pair alone, whose events after the CPU ones
	# (the window's) and top-level members after traceEvents go to every
	# file after what the writers hold
	tcase "gen_trace pair merged, the merged trace alone --split=steps:100 by 0, 1, 2, 3 and 14 writer threads, -j 2 and -j 8, plain and .json.gz: the same files; 1-100 and 1301-1352 its --steps'"
	run "merged alone" -w "$tmp/g.win" -o "$tmp/gmerged.json" "$tmp/g.cpu"
	for ext in "" .gz; do
		rm -rf "$tmp/a0"
		mkdir "$tmp/a0"
		CUPTIMERGE_SPLIT_WRITERS=0 run "alone, writers 0" -j 1 --split=steps:100 -o "$tmp/a0/a_%s.json$ext" "$tmp/gmerged.json"
		[ "$(ls "$tmp/a0" | wc -l)" -eq 14 ] || fail "alone, writers 0: $(ls "$tmp/a0" | wc -l) files"
		for how in "2 -j 2" "1 -j 8" "2 -j 8" "3 -j 8" "14 -j 8"; do
			rm -rf "$tmp/o"
			mkdir "$tmp/o"
			# shellcheck disable=SC2086
			CUPTIMERGE_SPLIT_WRITERS=${how%% *} run "alone, writers $how" ${how#* } --split=steps:100 \
				-o "$tmp/o/a_%s.json$ext" "$tmp/gmerged.json"
			[ "$(ls "$tmp/o" | wc -l)" -eq 14 ] || fail "alone, writers $how: $(ls "$tmp/o" | wc -l) files"
			for f in $(cd "$tmp/a0" && ls); do
				cmp -s "$tmp/a0/$f" "$tmp/o/$f" || fail "alone, writers $how$ext: $f differs"
			done
		done
	done
	rm -rf "$tmp/o"
	mkdir "$tmp/o"
	for l in 1-100 1301-1352; do
		run "alone --steps=$l" --steps=$l -o "$tmp/o/a_$l.json" "$tmp/gmerged.json"
		zcat -f "$tmp/a0/a_$l.json.gz" | cmp -s - "$tmp/o/a_$l.json" || fail "alone: file $l differs from --steps=$l"
	done
	if [ -w /dev/full ]; then
		tcase "the trace alone --split by 2 writer threads, a file's name a link to /dev/full: exit 3, one line, no other file left"
		rm -rf "$tmp/o"
		mkdir "$tmp/o"
		ln -s /dev/full "$tmp/o/a_501-600.json"
		rc=0
		CUPTIMERGE_SPLIT_WRITERS=2 $CUPTIMERGE -q -j 4 --split=steps:100 -o "$tmp/o/a_%s.json" "$tmp/gmerged.json" \
			2>"$tmp/err" || rc=$?
		[ $rc -eq 3 ] || fail "exit $rc, not 3: $(cat "$tmp/err")"
		[ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
		grep -q 'a_501-600.json: write error' "$tmp/err" || fail "not the write error: $(cat "$tmp/err")"
		[ "$(cd "$tmp/o" && ls)" = "a_501-600.json" ] || fail "files were left: $(ls "$tmp/o")"
	else
		skip "the trace alone, a file's name a link to /dev/full" "no writable /dev/full"
	fi
	# the generated window made version 2, with cuda_event records after
	# some kernels and event syncs after some calls (a fixed seed): the
	# syncs' waits, looked up once as the records are dealt, against
	# --steps of three of the files, whose plans look them up themselves
	tcase "gen_trace pair made window version 2 with CUDA events and event syncs, --split=steps:100: files 1-100, 601-700, 1301-1352 each --steps'"
	python3 - "$tmp/g.win" "$tmp/g2.win" <<'PY' || fail "cannot make the window"
import json, random, sys
random.seed(7)
w = json.load(open(sys.argv[1]))
out = []
for e in w["events"]:
    out.append(e)
    if e.get("kind") == "kernel" and random.random() < 0.2:
        out.append({"kind": "cuda_event", "device_id": e["device_id"], "context_id": e.get("context_id", 1),
                    "stream_id": e["stream_id"], "event_id": random.randint(1, 40),
                    "correlation_id": e["correlation_id"], "device_timestamp_ns": e["end_ns"]})
    if e.get("kind") == "cuda_runtime" and random.random() < 0.1:
        out.append({"kind": "cuda_sync", "sync_type": random.choice([1, 2]), "start_ns": e["start_ns"],
                    "end_ns": e["end_ns"], "correlation_id": e["correlation_id"], "context_id": 1,
                    "stream_id": random.choice([7, 8, 4294967295]), "cuda_event_id": random.randint(1, 40),
                    "return_value": 0, "device_id": 0, "name": "Synchronization"})
w["events"] = out
w["window_version"] = 2
json.dump(w, open(sys.argv[2], "w"))
PY
	rm -rf "$tmp/o"
	mkdir "$tmp/o"
	run g2split --split=steps:100 -w "$tmp/g2.win" -o "$tmp/o/g_%s.json" "$tmp/g.cpu"
	mv "$tmp/o" "$tmp/g2split"
	steps_same g2steps "$tmp/g2split" g_ "" "1-100 601-700 1301-1352" -w "$tmp/g2.win" "$tmp/g.cpu"
	grep -q '"wait_on_cuda_event_record_corr_id":[0-9]' "$tmp/g2split/g_601-700.json" ||
		fail "file 601-700 has no event sync that found its event"
else
	skip "gen_trace pair" "no $shared/tools/gen_trace"
fi

for l in 1 2 3; do
	perfetto "merge --split, file $l" "$tmp/merge_split/m_$l.json"
done
perfetto "repair --split, file 1" "$tmp/repair_split/m_1.json"
[ -f "$tmp/gsplit/g_651-700.json.gz" ] && perfetto "gen_trace merge --split, file 651-700" "$tmp/gsplit/g_651-700.json.gz"

tcase "a file that cannot be written (its name is a directory): exit 3, one line, no file left"
rm -rf "$tmp/o"
mkdir -p "$tmp/o/m_2.json"
rc=0
$CUPTIMERGE -q $NOW --split=steps -w "$WIN" -o "$tmp/o/m_%s.json" "$CPU" 2>"$tmp/err" || rc=$?
[ $rc -eq 3 ] || fail "exit $rc, not 3: $(cat "$tmp/err")"
[ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "not one line: $(cat "$tmp/err")"
[ "$(cd "$tmp/o" && ls)" = "m_2.json" ] || fail "files were left: $(ls "$tmp/o")"

# a file of the split named as an input: the rename at the end replaced
# the input, status 0 (cli11); -o naming an input is refused by main.c
# before anything is read, a split's names are known as the files open
tcase "a file of the split named as the CPU trace or the window: status 2, one line, the input kept, no file left"
for which in cpu win; do
	rm -rf "$tmp/si"
	mkdir "$tmp/si"
	cp "$CPU" "$tmp/si/cpu.json"
	cp "$WIN" "$tmp/si/win.json"
	in=$tmp/si/m_1.json
	if [ $which = cpu ]; then
		mv "$tmp/si/cpu.json" "$in"
		set -- -w "$tmp/si/win.json" "$in"
		what="the CPU trace"
	else
		mv "$tmp/si/win.json" "$in"
		set -- -w "$in" "$tmp/si/cpu.json"
		what="the window"
	fi
	cp "$in" "$tmp/si.orig"
	rc=0
	$CUPTIMERGE -q $NOW --split=steps -o "$tmp/si/m_%s.json" "$@" 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "$which: exit $rc, not 2: $(cat "$tmp/err")"
	[ "$(cat "$tmp/err")" = "cuptimerge: $in: is $what, which the output would replace: write to another file" ] ||
		fail "$which: says: $(cat "$tmp/err")"
	cmp -s "$in" "$tmp/si.orig" || fail "$which: the input was replaced"
	[ "$(ls "$tmp/si" | grep -c '^m_')" -eq 1 ] || fail "$which: files were left: $(ls "$tmp/si")"
done

tcase "a missing directory in -o: exit 3, no file"
rc=0
$CUPTIMERGE -q $NOW --split=steps -t "$WIN" -w "$WIN" -o "$tmp/nodir/m_%s.json" "$CPU" 2>"$tmp/err" || rc=$?
[ $rc -eq 3 ] || fail "exit $rc, not 3: $(cat "$tmp/err")"
[ ! -e "$tmp/nodir" ] || fail "something was made"

tcase "merge --split with a window of another run (an hour later): refused as uncut, status 1, no file"
python3 -c 'import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r"\"(start_ns|end_ns)\": (\d+)", lambda m: "\"%s\": %d" % (m.group(1), int(m.group(2)) + 3600 * 10**9), s)
open(sys.argv[2], "w").write(s)' "$WIN" "$tmp/late.json"
rm -rf "$tmp/o"
mkdir "$tmp/o"
rc=0
$CUPTIMERGE -q $NOW --split=steps -w "$tmp/late.json" -o "$tmp/o/m_%s.json" "$CPU" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "exit $rc, not 1"
grep -q "do not overlap" "$tmp/err" || fail "no 'do not overlap' message: $(cat "$tmp/err")"
[ -z "$(ls "$tmp/o")" ] || fail "files were left: $(ls "$tmp/o")"

tcase "merge --split of a trace without ProfilerStep events: status 1, one line, no file"
rm -rf "$tmp/o"
mkdir "$tmp/o"
rc=0
$CUPTIMERGE -q --split=steps -w "$FIX/kineto_window.json" -o "$tmp/o/x_%s.json" "$FIX/kineto_cpu.json" 2>"$tmp/err" || rc=$?
[ $rc -eq 1 ] || fail "exit $rc, not 1"
grep -q "no ProfilerStep#N events" "$tmp/err" || fail "$(cat "$tmp/err")"
[ -z "$(ls "$tmp/o")" ] || fail "files were left: $(ls "$tmp/o")"

tcase "bad combinations with -w and -t: one line, exit 2"
for args in "--split=steps --steps=1 -w $WIN -o $tmp/x_%s.json $CPU" "--split=steps --range=1,2 -w $WIN -o $tmp/x_%s.json $CPU" \
	"--split=steps --clip -w $WIN -o $tmp/x_%s.json $CPU" "--split=steps -w $WIN -o $tmp/x.json $CPU" \
	"--split=steps -t $WIN -w $WIN $CPU" "--split=steps:0 -w $WIN -o $tmp/x_%s.json $CPU" \
	"--split=steps -t $FIX/thread_map.json -o $tmp/x_%s_%s.json $CPU"; do
	rc=0
	# shellcheck disable=SC2086
	$CUPTIMERGE $args >/dev/null 2>"$tmp/err" || rc=$?
	[ $rc -eq 2 ] || fail "$args: exit $rc, not 2"
	# one line, then the usage errors' pointer to --help
	head -1 "$tmp/err" | grep -q '^cuptimerge: ' && [ "$(grep -vc "^Try 'cuptimerge --help'" "$tmp/err")" -eq 1 ] ||
		fail "$args: not one line: $(cat "$tmp/err")"
done

finish
