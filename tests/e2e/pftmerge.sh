#!/bin/sh
# pftmerge.sh - a merge's .pftrace with the window's events handed to the
# transcoder as batches, not as text (src/mergepft.c): the render's workers
# encode groups of records, the groups cut by the pieces are joined and
# encoded by the transcoder's workers.  Perfetto's trace processor shows for
# each .pftrace what it shows for the JSON of the same run
# (tests/pftrace_check.py) on the oracle example, gen_trace pairs (plain and
# --edge-cases), the real H200 pairs and cuts (--steps, --range), in groups of
# the default size and of a few records (CUPTIMERGE_PFT_GROUP, a testing aid:
# many groups cut by the pieces, joined); the bytes do not depend on -j, the
# read size, --memory or the careful reader; the -v line says the batches
# went that way; a repair's merge and CUPTIMERGE_PFT_TEXT=1 take the text.
# The batches go straight from the render's in-order thread to the
# sequential part (pfinsert.c's direct path) or, with CUPTIMERGE_PFT_DIRECT=0,
# through the transcoder's pool: the same bytes, and a failure on the way
# (the pool's, the output's) stops the run with its one line.
#
# Needs protoc and the trace processor as pftrace.sh does.
. "${srcdir:-.}/tests/e2e/common.sh"
. "${srcdir:-.}/tests/e2e/pfcommon.sh"
[ $have_tp -eq 1 ] || skip_all "no node or trace-processor engine in $TP_DIR"
NOW="--now 1795974776"

# both NAME ARGS...: cuptimerge ARGS into $tmp/NAME.json and, at -j 2 with
# -v, $tmp/NAME.pftrace (and $tmp/NAME.small.pftrace in groups of 3
# records); each .pftrace decodes, took the batches' way (the -v line), and
# Perfetto shows for it what it shows for the JSON.
both() {
	name=$1
	shift
	tcase "$name: the window's events as batches: decodes, Perfetto shows what it shows for the JSON"
	rc=0
	$CUPTIMERGE -q "$@" -o "$tmp/$name.json" 2>"$tmp/err" &&
		$CUPTIMERGE -v -j 2 "$@" -o "$tmp/$name.pftrace" 2>"$tmp/err" &&
		CUPTIMERGE_PFT_GROUP=3 $CUPTIMERGE -v -j 3 "$@" -o "$tmp/$name.small.pftrace" 2>"$tmp/err3" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name: exit $rc: $(cat "$tmp/err" "$tmp/err3")"
		return
	fi
	grep -q "perfetto: .*; batches inserted: [0-9]*, encoded by the writer's threads and handed straight to the sequential part$" "$tmp/err" ||
		fail "$name: -v says: $(grep perfetto: "$tmp/err")"
	# (in groups of 3 records, some batches at least: a cut may keep few)
	n=$(sed -n "s/.*perfetto: .*; batches inserted: \([0-9]*\), encoded by the writer's threads and handed straight to the sequential part$/\1/p" \
		"$tmp/err3")
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "$name, groups of 3: -v says: $(grep perfetto: "$tmp/err3")"
	for f in "$tmp/$name.pftrace" "$tmp/$name.small.pftrace"; do
		protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$f" >/dev/null 2>"$tmp/protoc.err" ||
			fail "$f: protoc: $(head -3 "$tmp/protoc.err")"
		cached python3 "$srcdir/tests/pftrace_check.py" "$tmp/$name.json" "$f" >"$tmp/check" 2>&1 ||
			fail "$f: $(head -12 "$tmp/check")"
	done
}

ex=$shared/oracle/examples
if [ -d "$ex" ]; then
	both example $NOW -w "$ex/window.json" "$ex/cpu.json"
else
	skip "oracle examples" "no $ex"
fi
both real $NOW -w "$FIX/threads_window.json" "$FIX/threads_base.json"
both h200 $NOW -w "$FIX/h200_kwindow.json.gz" "$FIX/h200_kcpu.json.gz"
both cut-steps2 --steps=2 -w "$FIX/cut_window.json" "$FIX/cut_cpu.json"
both cut-range --range=1250,1300 -w "$FIX/cut_window.json" "$FIX/cut_cpu.json"
if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --seed 11 --ops 3000 --devices 2 --quiet "$tmp/gen.cpu" "$tmp/gen.win"
	both gen $NOW -w "$tmp/gen.win" "$tmp/gen.cpu"
	# a group is its records' wherever the blocks cut them: pieces of one
	# block (each finishing the group it ends in, from the blocks after
	# it, and starting where the group before it ends) give the bytes of
	# one piece of all; so do groups of more records than a block holds,
	# which whole pieces go on with
	for span in 3 700 20000; do
		tcase "gen_trace pair in groups of $span: pieces of 1 block, of 2 and of all give the same bytes"
		for per in 1 2 100000; do
			CUPTIMERGE_PFT_GROUP=$span CUPTIMERGE_PFT_PIECE=$per $CUPTIMERGE -j 3 --buffer-size $((per * 4096 + 29)) \
				-w "$tmp/gen.win" "$tmp/gen.cpu" -o "$tmp/p$per.pftrace" 2>"$tmp/err" ||
				fail "groups of $span, pieces of $per: $(cat "$tmp/err")"
		done
		cmp -s "$tmp/p1.pftrace" "$tmp/p100000.pftrace" && cmp -s "$tmp/p2.pftrace" "$tmp/p100000.pftrace" ||
			fail "groups of $span: $(md5sum "$tmp"/p*.pftrace)"
	done
	# Perfetto 55.3 refuses a UTF-16 surrogate-pair escape (perfetto.sh)
	"$shared/tools/gen_trace" --seed 11 --ops 400 --edge-cases --pretty --quiet "$tmp/edge.cpu" "$tmp/edge.win"
	python3 -c 'import sys
t = open(sys.argv[1], encoding="utf-8").read().replace(r"\ud83d\ude80", "\U0001F680")
open(sys.argv[1], "w", encoding="utf-8").write(t)' "$tmp/edge.cpu"
	both gen-edge $NOW -w "$tmp/edge.win" "$tmp/edge.cpu"
	lo=$(python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(min(e["ts"] for e in ev if e.get("ph") == "X" and e.get("cat") != "Trace") + 20000)' "$tmp/gen.cpu")
	hi=$(python3 -c 'import sys; print(float(sys.argv[1]) + 30000)' "$lo")
	both gen-range $NOW --range=$lo,$hi -w "$tmp/gen.win" "$tmp/gen.cpu"
	both gen-steps $NOW --steps=3-5 -w "$tmp/gen.win" "$tmp/gen.cpu"

	# The bytes: the same at -j 1 to 4, --memory=1M, the careful reader,
	# pieces of other sizes (CUPTIMERGE_PFT_PIECE, a testing aid), in groups of
	# the default size and of 7 records, on a pair whose window's records
	# take several blocks (so that the pieces cut groups, joined again).
	"$shared/tools/gen_trace" --seed 12 --ops 12000 --devices 2 --quiet "$tmp/big.cpu" "$tmp/big.win"
	for g in default 7; do
		tcase "gen_trace pair of 12,000 ops, groups of $g: the same bytes at -j 1 to 4, --memory=1M, careful, pieces of 1 and 3 blocks"
		CUPTIMERGE_PFT_GROUP=${g#default} $CUPTIMERGE -q -j 1 $NOW -w "$tmp/big.win" -o "$tmp/g1.pftrace" "$tmp/big.cpu" ||
			fail "-j 1: exit $?"
		for how in "-j 2" "-j 3" "-j 4" "--memory=1M" careful piece1 piece3; do
			if [ "$how" = careful ]; then
				CUPTIMERGE_CAREFUL=1 CUPTIMERGE_PFT_GROUP=${g#default} $CUPTIMERGE -q -j 3 $NOW -w "$tmp/big.win" \
					-o "$tmp/g2.pftrace" "$tmp/big.cpu" || fail "$how: exit $?"
			elif [ "$how" != "${how#piece}" ]; then # pieces of other sizes (blocks of records)
				CUPTIMERGE_PFT_PIECE=${how#piece} CUPTIMERGE_PFT_GROUP=${g#default} $CUPTIMERGE -q -j 3 $NOW \
					-w "$tmp/big.win" -o "$tmp/g2.pftrace" "$tmp/big.cpu" || fail "$how: exit $?"
			else
				# shellcheck disable=SC2086
				CUPTIMERGE_PFT_GROUP=${g#default} $CUPTIMERGE -q $how $NOW -w "$tmp/big.win" -o "$tmp/g2.pftrace" \
					"$tmp/big.cpu" || fail "$how: exit $?"
			fi
			cmp -s "$tmp/g1.pftrace" "$tmp/g2.pftrace" || { fail "$how: other bytes than -j 1"; break; }
		done
	done
	# Straight to the sequential part or through the pool
	# (CUPTIMERGE_PFT_DIRECT=0): the same bytes at -j 1, 2, 4 (the
	# sequential part on a thread of its own) and 16: the pair of 12,000
	# ops in groups of the default size (pieces of several groups, from
	# the records' file), plain and gzip; the pair of 3,000 ops (its
	# records one block in memory: one piece) in groups of 7 records and
	# of 1 (a piece's many batches under one number of the lanes,
	# pflaneq.c).  -v says which way they went.
	# direct_same PAIR GROUP OUTPUT...: the check at -j 1, 2, 4 and 16
	direct_same() {
		pair=$1 g=$2
		shift 2
		for j in 1 2 4 16; do
			for d in 1 0; do
				for o in "$@"; do
					CUPTIMERGE_PFT_DIRECT=$d CUPTIMERGE_PFT_GROUP=$g $CUPTIMERGE -v -j $j $NOW \
						-w "$tmp/$pair.win" -o "$tmp/d$d.$o" "$tmp/$pair.cpu" 2>"$tmp/err" ||
						fail "-j $j, $o: exit $?"
				done
				if [ $d = 1 ]; then
					grep -q "batches inserted: [1-9][0-9]*, encoded by the writer's threads and handed straight to the sequential part$" "$tmp/err" ||
						fail "-j $j: not straight: $(grep perfetto: "$tmp/err")"
				else
					grep -q "batches inserted: [1-9][0-9]*, encoded by the writer's threads$" "$tmp/err" ||
						fail "-j $j, CUPTIMERGE_PFT_DIRECT=0: not through the pool: $(grep perfetto: "$tmp/err")"
				fi
			done
			for o in "$@"; do
				cmp -s "$tmp/d1.$o" "$tmp/d0.$o" || fail "-j $j, $o: other bytes straight than through the pool"
				[ $j != 1 ] || cp "$tmp/d1.$o" "$tmp/dj1.$o"
				cmp -s "$tmp/d1.$o" "$tmp/dj1.$o" || fail "-j $j, $o: other bytes than at -j 1"
			done
		done
	}
	tcase "gen_trace pair of 12,000 ops: straight to the sequential part or through the pool, the same bytes at -j 1, 2, 4, 16"
	direct_same big "" pftrace pftrace.gz
	gzip -dc "$tmp/d1.pftrace.gz" | cmp -s - "$tmp/d1.pftrace" || fail "gzip, other bytes"
	for g in 7 1; do
		tcase "gen_trace pair of 3,000 ops, groups of $g: straight to the sequential part or through the pool, the same bytes at -j 1, 2, 4, 16"
		direct_same gen $g pftrace
	done
	# the sequential part's queue (CUPTIMERGE_PFT_SEQ_QUEUE) of 1 batch
	# (each hand-over waits for the one before to be worked through) and
	# of 64 (the lanes' ring sized for it): the same bytes, groups of 7
	# and the render's workers fewer than -j (CUPTIMERGE_RENDER_THREADS)
	tcase "gen_trace pair of 3,000 ops, groups of 7: the sequential part's queue of 1 and of 64 batches, the render on 1 and 3 threads, its pieces few and many ahead, its packets written by 0, 1 and 5 threads, the passer's queue of 1 and 32, the same bytes at -j 4, 16"
	CUPTIMERGE_PFT_GROUP=7 $CUPTIMERGE -j 1 $NOW -w "$tmp/gen.win" -o "$tmp/q1.pftrace" "$tmp/gen.cpu" || fail "-j 1: exit $?"
	for q in 1 64; do
		for j in 4 16; do
			CUPTIMERGE_PFT_SEQ_QUEUE=$q CUPTIMERGE_PFT_GROUP=7 $CUPTIMERGE -j $j $NOW -w "$tmp/gen.win" \
				-o "$tmp/q.pftrace" "$tmp/gen.cpu" 2>"$tmp/err" || fail "queue of $q, -j $j: exit $?: $(cat "$tmp/err")"
			cmp -s "$tmp/q.pftrace" "$tmp/q1.pftrace" || fail "queue of $q, -j $j: other bytes than -j 1's"
		done
	done
	for r in 1 3; do
		CUPTIMERGE_RENDER_THREADS=$r CUPTIMERGE_PFT_GROUP=7 $CUPTIMERGE -j 16 $NOW -w "$tmp/gen.win" \
			-o "$tmp/q.pftrace" "$tmp/gen.cpu" 2>"$tmp/err" || fail "render on $r, -j 16: exit $?: $(cat "$tmp/err")"
		cmp -s "$tmp/q.pftrace" "$tmp/q1.pftrace" || fail "render on $r, -j 16: other bytes than -j 1's"
	done
	# the render's pieces (of 1 block) as few ahead of its in-order thread
	# as its pool allows (CUPTIMERGE_PFT_AHEAD=1: the workers and 4) and
	# as many (2n + 8, the default): the same bytes
	for a in 1 999; do
		CUPTIMERGE_PFT_AHEAD=$a CUPTIMERGE_PFT_PIECE=1 CUPTIMERGE_PFT_GROUP=7 $CUPTIMERGE -j 16 $NOW -w "$tmp/gen.win" \
			-o "$tmp/q.pftrace" "$tmp/gen.cpu" 2>"$tmp/err" || fail "pieces $a ahead, -j 16: exit $?: $(cat "$tmp/err")"
		cmp -s "$tmp/q.pftrace" "$tmp/q1.pftrace" || fail "pieces $a ahead, -j 16: other bytes than -j 1's"
	done
	# the batches' packets written by the passer alone, by 1 writer thread
	# and by 5 (CUPTIMERGE_PFT_WRITERS; 0 by default), in
	# groups of 7 (many small batches, ready out of order): the same bytes;
	# and the passer's queue of 1 and of 32 buffers (CUPTIMERGE_PFT_PASS_QUEUE,
	# 4 by default), with 0 and 5 writers
	for w in 0 1 5; do
		CUPTIMERGE_PFT_WRITERS=$w CUPTIMERGE_PFT_GROUP=7 $CUPTIMERGE -j 4 $NOW -w "$tmp/gen.win" \
			-o "$tmp/q.pftrace" "$tmp/gen.cpu" 2>"$tmp/err" || fail "$w writers, -j 4: exit $?: $(cat "$tmp/err")"
		cmp -s "$tmp/q.pftrace" "$tmp/q1.pftrace" || fail "$w writers, -j 4: other bytes than -j 1's"
	done
	for q in 1 32; do
		for w in 0 5; do
			CUPTIMERGE_PFT_PASS_QUEUE=$q CUPTIMERGE_PFT_WRITERS=$w CUPTIMERGE_PFT_GROUP=7 $CUPTIMERGE -j 4 $NOW \
				-w "$tmp/gen.win" -o "$tmp/q.pftrace" "$tmp/gen.cpu" 2>"$tmp/err" ||
				fail "the passer's queue of $q, $w writers, -j 4: exit $?: $(cat "$tmp/err")"
			cmp -s "$tmp/q.pftrace" "$tmp/q1.pftrace" ||
				fail "the passer's queue of $q, $w writers, -j 4: other bytes than -j 1's"
		done
	done

	# A failure on the direct path stops the run, one line, its status, no
	# file, at -j 1 to 16 (many runs: the threads' timing varies): a
	# refused element at the end of the text before the inserted batches
	# (in batches of 64 KiB of text: many in the pool when the render's
	# in-order thread waits for them before its first; one fails, the wait
	# ends, and the message is the refusal's, not lost to the batches
	# before it dropped unseen); the output that cannot grow (512 KiB of
	# its 1,222 in groups of 7, the text before 284) while the window's
	# batches go to the sequential part (the passer's write error stops
	# its queue).  (The
	# timeouts: a hang is a failure; 300 s, for the ThreadSanitizer build,
	# whose runs are slow.)
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["traceEvents"].append({"ph": "b", "name": "a", "cat": "c", "id": 1, "pid": 1, "tid": 1, "ts": 1})
json.dump(d, open(sys.argv[2], "w"))' "$tmp/gen.cpu" "$tmp/bad.cpu"
	tcase "the direct path: a refusal in the text before the inserted batches is one line, status 1, no file, -j 1 to 16"
	for j in 1 2 3 4 16; do
		for i in 1 2 3 4; do
			rm -f "$tmp/bad.pftrace"
			rc=0
			CUPTIMERGE_PFT_BATCH=65536 CUPTIMERGE_PFT_GROUP=7 timeout 300 $CUPTIMERGE -q -j $j $NOW -w "$tmp/gen.win" \
				-o "$tmp/bad.pftrace" "$tmp/bad.cpu" 2>"$tmp/err" || rc=$?
			if [ $rc -ne 1 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
				! grep -q "^cuptimerge: $tmp/bad.pftrace:[0-9]*: a \"b\" event cannot be written as Perfetto protobuf" "$tmp/err"; then
				fail "-j $j, run $i: exit $rc: $(cat "$tmp/err")"
				break 2
			fi
			[ ! -e "$tmp/bad.pftrace" ] || fail "-j $j, run $i: the file appeared"
		done
	done
	tcase "the direct path: the output that cannot grow is one line, status 3, the old file kept, -j 1 to 16"
	mkdir "$tmp/efbig"
	for j in 1 2 3 4 16; do
		for f in out.pftrace out.pftrace.gz; do
			echo old >"$tmp/efbig/$f"
			z=
			[ "$f" = out.pftrace ] || z=-z0
			for i in 1 2; do
				rc=0
				CUPTIMERGE_PFT_GROUP=7 timeout 300 sh -c 'trap "" XFSZ; ulimit -f 512; exec "$@"' sh \
					$CUPTIMERGE -j $j $z $NOW -w "$tmp/gen.win" -o "$tmp/efbig/$f" "$tmp/gen.cpu" 2>"$tmp/err" || rc=$?
				if [ $rc -ne 3 ] || [ "$(cat "$tmp/err")" != "cuptimerge: $tmp/efbig/$f: write error: File too large" ]; then
					fail "-j $j, $f, run $i: exit $rc: $(cat "$tmp/err")"
					break 3
				fi
				[ "$(cat "$tmp/efbig/$f")" = old ] || fail "-j $j, $f: the old file was not kept"
			done
			rm "$tmp/efbig/$f"
			[ -z "$(ls -A "$tmp/efbig")" ] || fail "-j $j, $f: left $(ls -A "$tmp/efbig")"
		done
	done

	tcase "gen_trace pair of 12,000 ops in groups of 7: the same bytes at read sizes 7, 31, 4096, 65536"
	for n in 7 31 4096 65536; do
		CUPTIMERGE_BUFSIZE=$n CUPTIMERGE_PFT_GROUP=7 $CUPTIMERGE -q -j 2 $NOW -w "$tmp/big.win" -o "$tmp/rs.pftrace" \
			"$tmp/big.cpu" || fail "read size $n: exit $?"
		cmp -s "$tmp/rs.pftrace" "$tmp/g1.pftrace" || { fail "read size $n: other bytes"; break; }
	done
	# The text's way (CUPTIMERGE_PFT_TEXT=1) cuts other batches: other
	# bytes (so the cases above did take the batches' way), no batch inserted.
	tcase "CUPTIMERGE_PFT_TEXT=1: the window's events as text, no batch inserted, other bytes"
	CUPTIMERGE_PFT_TEXT=1 $CUPTIMERGE -v -j 2 $NOW -w "$tmp/gen.win" -o "$tmp/gt.pftrace" "$tmp/gen.cpu" 2>"$tmp/err" ||
		fail "exit $?"
	grep -q "batches inserted: 0, encoded" "$tmp/err" || fail "-v says: $(grep perfetto: "$tmp/err")"
	! cmp -s "$tmp/gen.pftrace" "$tmp/gt.pftrace" || fail "the same bytes as the batches' way"
	cached python3 "$srcdir/tests/pftrace_check.py" "$tmp/gen.json" "$tmp/gt.pftrace" >"$tmp/check" 2>&1 ||
		fail "$(head -12 "$tmp/check")"
else
	skip "gen_trace pairs" "no $shared/tools/gen_trace"
fi

# The read size: the same bytes at read sizes 1 to 31 (the window's records
# cut into other blocks: the groups are the records', not the blocks').
tcase "the real pair in groups of 5: the same bytes at read sizes 1 to 31"
CUPTIMERGE_PFT_GROUP=5 $CUPTIMERGE -q -j 2 $NOW -w "$FIX/threads_window.json" -o "$tmp/rs0.pftrace" \
	"$FIX/threads_base.json" || fail "exit $?"
for n in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	CUPTIMERGE_BUFSIZE=$n CUPTIMERGE_PFT_GROUP=5 $CUPTIMERGE -q -j 2 $NOW -w "$FIX/threads_window.json" \
		-o "$tmp/rs.pftrace" "$FIX/threads_base.json" || fail "read size $n: exit $?"
	cmp -s "$tmp/rs.pftrace" "$tmp/rs0.pftrace" || { fail "read size $n: other bytes"; break; }
done

# gzip: the same protobuf.
tcase "-o FILE.pftrace.gz: the same protobuf as -o FILE.pftrace"
$CUPTIMERGE -q -j 2 $NOW -w "$FIX/threads_window.json" -o "$tmp/z.pftrace.gz" "$FIX/threads_base.json" || fail "exit $?"
gzip -dc "$tmp/z.pftrace.gz" | cmp -s - "$tmp/real.pftrace" || fail "other bytes"

# A repair's merge takes the text's way (its remap renders on one thread).
tcase "a merge with a repair: the window's events as text"
$CUPTIMERGE -v -j 2 $NOW -t "$FIX/thread_map.json" -w "$FIX/threads_window.json" -o "$tmp/rep.pftrace" \
	"$FIX/threads_base.json" 2>"$tmp/err" ||
	fail "exit $?"
grep -q "batches inserted: 0, encoded" "$tmp/err" || fail "-v says: $(grep perfetto: "$tmp/err")"
finish
