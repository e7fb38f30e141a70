#!/bin/sh
# pfspans.sh - a merge's .pftrace, whose gpu_user_annotation spans (the
# window's annotations', gpu/gpurows.c, and those Kineto draws of the CPU
# trace's, gpu/gpuanns.c) go to the transcoder as batches the render's
# workers encoded (gpu/gpuencspans.c, src/mergepft.c), not as text after
# the window's events (issue 25).  On a pair with the window's spans
# (gen_trace's) and one with the CPU trace's (3,000 annotations, a window
# of version 2, some names with escapes, which go as text to be parsed):
# -v says the spans were inserted (in batches of 300 bytes of text the text
# after is a batch or two where the spans' text is dozens; a span a group,
# CUPTIMERGE_PFT_SPAN_GROUP=1, inserts about a batch more a span); the
# bytes do not depend on -j, the read size, the group size's pieces, the
# way (CUPTIMERGE_PFT_DIRECT=0) or whether the spans' pieces go in the
# window's pool after its pieces (gen's: its window's records are read
# back from their file) or in a pool of their own after it
# (CUPTIMERGE_PFT_SPANS_ALONG=0, as ann's always do); the members the render gives are what the
# text parses to (CUPTIMERGE_PFT_MEMBERS_CHECK=1) and give the bytes of
# each element parsed (CUPTIMERGE_PFT_REPARSE=1); and Perfetto's trace
# processor shows for the .pftrace what it shows for the JSON (where it is
# found, tests/e2e/pfcommon.sh).
. "${srcdir:-.}/tests/e2e/common.sh"
. "${srcdir:-.}/tests/e2e/pfcommon.sh"
NOW="--now 1795974776"

# 3,000 annotations, each holding one call and its kernel (on stream
# 7 + i % 3), every 100th named with a quote (its text has an escape)
python3 - "$tmp/acpu.json" "$tmp/awin.json" <<'EOF'
import json, sys
B, N = 1700000000000000000, 3000
cpu, win = [], []
for i in range(N):
    t = i * 10
    cpu.append({"ph": "X", "cat": "user_annotation", "name": ('q"%d' if i % 100 == 0 else "a%d") % i, "pid": 100,
                "tid": 100, "ts": float(t), "dur": 8.0, "args": {"External id": i + 1}})
    corr = 1000 + i
    win.append({"kind": "cuda_runtime", "cbid": 211, "start_ns": B + (t + 2) * 1000, "end_ns": B + (t + 2) * 1000 + 500,
                "process_id": 100, "thread_id": 100, "correlation_id": corr, "return_value": 0,
                "name": "cudaLaunchKernel"})
    win.append({"kind": "kernel", "device_id": 0, "context_id": 1, "stream_id": 7 + i % 3, "correlation_id": corr,
                "graph_node_id": 0, "graph_id": 0, "start_ns": B + (t + 7) * 1000, "end_ns": B + (t + 8) * 1000,
                "annotation": None, "name": "k"})
json.dump({"schemaVersion": 1, "baseTimeNanoseconds": B, "traceEvents": cpu}, open(sys.argv[1], "w"))
json.dump({"events": win, "window_version": 2}, open(sys.argv[2], "w"))
EOF
pairs="ann"
if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --seed 11 --ops 3000 --devices 2 --quiet "$tmp/gcpu.json" "$tmp/gwin.json"
	pairs="gen ann"
else
	skip "gen_trace's pair" "no $shared/tools/gen_trace"
fi

# ins ERR: the batches inserted, by ERR's -v line
ins() { sed -n "s/.*; batches inserted: \([0-9]*\), encoded by.*/\1/p" "$1"; }

for p in $pairs; do
	# (gen: the window's spans; ann: the CPU trace's)
	if [ $p = gen ]; then
		set -- $NOW -w "$tmp/gwin.json" "$tmp/gcpu.json"
	else
		set -- $NOW -w "$tmp/awin.json" "$tmp/acpu.json"
	fi
	$CUPTIMERGE -q "$@" -o "$tmp/$p.json" || fail "$p: JSON: exit $?"
	spans=$(grep -o '"cat":"gpu_user_annotation"' "$tmp/$p.json" | wc -l)

	tcase "$p: the spans ($spans) inserted as batches: the text after a batch or two of 300 bytes, a span a group a batch each"
	[ "$spans" -ge 200 ] || fail "$p: only $spans spans in the JSON"
	CUPTIMERGE_PFT_BATCH=300 $CUPTIMERGE -v -j 2 "$@" -o "$tmp/v.pftrace" 2>"$tmp/err" || fail "exit $?: $(cat "$tmp/err")"
	after=$(sed -n "s/.*; the text after: [^;]*; \([0-9]*\) batches, .*/\1/p" "$tmp/err")
	[ -n "$after" ] && [ "$after" -le 2 ] || fail "$p: the text after in ${after:-?} batches: $(grep 'by phase' "$tmp/err")"
	n1=$(ins "$tmp/err")
	CUPTIMERGE_PFT_SPAN_GROUP=1 $CUPTIMERGE -v -j 2 "$@" -o "$tmp/v1.pftrace" 2>"$tmp/err" || fail "exit $?"
	n2=$(ins "$tmp/err")
	[ -n "$n1" ] && [ -n "$n2" ] && [ $((n2 - n1)) -ge $((spans / 2)) ] ||
		fail "$p: a span a group inserted ${n2:-?} batches, the default ${n1:-?}, for $spans spans"

	tcase "$p: the same bytes at -j 1 to 4 and 16, read sizes 7 and 4096, through the pool, the spans in a pool of their own, the spans' groups of 3"
	for g in "" 3; do
		CUPTIMERGE_PFT_SPAN_GROUP=$g $CUPTIMERGE -q -j 1 "$@" -o "$tmp/g$g.pftrace" || fail "groups of ${g:-default}: exit $?"
		for how in "-j 2" "-j 3" "-j 4" "-j 16" "--buffer-size 7" "--buffer-size 4096" direct0 along0; do
			if [ "$how" = direct0 ]; then
				CUPTIMERGE_PFT_DIRECT=0 CUPTIMERGE_PFT_SPAN_GROUP=$g $CUPTIMERGE -q -j 3 "$@" -o "$tmp/h.pftrace" ||
					fail "$how: exit $?"
			elif [ "$how" = along0 ]; then
				CUPTIMERGE_PFT_SPANS_ALONG=0 CUPTIMERGE_PFT_SPAN_GROUP=$g $CUPTIMERGE -q -j 3 "$@" \
					-o "$tmp/h.pftrace" || fail "$how: exit $?"
			else
				# shellcheck disable=SC2086
				CUPTIMERGE_PFT_SPAN_GROUP=$g $CUPTIMERGE -q $how "$@" -o "$tmp/h.pftrace" || fail "$how: exit $?"
			fi
			cmp -s "$tmp/h.pftrace" "$tmp/g$g.pftrace" || fail "groups of ${g:-default}, $how: other bytes than -j 1"
		done
	done
	cmp -s "$tmp/g.pftrace" "$tmp/g3.pftrace" && fail "groups of 3 and of the default: the same bytes (not cut so?)"

	tcase "$p: the spans' members are what their text parses to, and give the bytes of each parsed"
	for g in "" 3; do
		CUPTIMERGE_PFT_MEMBERS_CHECK=1 CUPTIMERGE_PFT_SPAN_GROUP=$g $CUPTIMERGE -j 2 "$@" -o "$tmp/m.pftrace" \
			2>"$tmp/err" || fail "groups of ${g:-default}, checked: exit $?: $(head -3 "$tmp/err")"
		checked=$(sed -n "s/^cuptimerge: CUPTIMERGE_PFT_MEMBERS_CHECK: \([0-9]*\) elements' members checked.*/\1/p" \
			"$tmp/err" | awk '{ n += $1 } END { print n + 0 }')
		[ "$checked" -ge "$spans" ] || fail "groups of ${g:-default}: $checked elements checked, fewer than the $spans spans"
		CUPTIMERGE_PFT_REPARSE=1 CUPTIMERGE_PFT_SPAN_GROUP=$g $CUPTIMERGE -j 2 "$@" -o "$tmp/r.pftrace" ||
			fail "groups of ${g:-default}, parsed: exit $?"
		cmp -s "$tmp/m.pftrace" "$tmp/g$g.pftrace" && cmp -s "$tmp/r.pftrace" "$tmp/g$g.pftrace" ||
			fail "groups of ${g:-default}: other bytes with the members checked or parsed"
	done

	protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/g.pftrace" >/dev/null \
		2>"$tmp/protoc.err" || fail "$p: protoc: $(head -3 "$tmp/protoc.err")"
	same "$p" "$tmp/$p.json" "$tmp/g.pftrace"
	same "$p, the spans' groups of 3" "$tmp/$p.json" "$tmp/g3.pftrace"
done
finish
