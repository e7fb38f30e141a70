#!/bin/sh
# extremes.sh - ids and times at the edges of what the merge keeps: ids in
# [2^63, 2^64) (CUPTI's uint64s) taken as the reference takes them, and the
# runs that the 64-bit tables cannot hold refused with one clear line
# (cuptimerge-window(5), "Ids").  The merge of such ids against the
# reference's output is the golden case f19_uint64 (tests/fixtures/cases.txt).
# Times near 2^127 (F18), and a UTF-8 byte order mark at the start of an
# input (F27; the golden case "bom" merges a pair that has them).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to write the windows"

C=$FIX/cpu.json

# expect NAME STATUS PATTERN CMD...: the case NAME: expect_exit STATUS
# PATTERN CMD (common.sh), and no output on a failure.
expect() {
	tcase "$1"
	shift
	expect_exit "$@"
	[ "$got" -eq 0 ] || [ ! -s "$tmp/out" ] || fail "$*: output written on a failure"
}

# win FILE EVENTS [MEMBERS]: a window with those events (JSON text).
win() {
	printf '{"events": [%s]%s}\n' "$2" "${3:-}" >"$tmp/$1"
}
RT='"kind": "cuda_runtime", "cbid": 211, "start_ns": 1759300079000020000, "end_ns": 1759300079000031337, "process_id": 4242, "thread_id": 5'
K='"kind": "kernel", "context_id": 1, "start_ns": 1759300079000035000, "end_ns": 1759300079000045000, "name": "k"'

# ---------------------------------------------------------------- F19: ids
win ext_high.json "{\"kind\": \"external_correlation\", \"external_kind\": 3, \"external_id\": 9223372036854775813, \"correlation_id\": 1}, {$RT, \"correlation_id\": 1}"
expect 'an external_id of 2^63 + 5 (a CUPTI uint64) is taken' 0 '' $CUPTIMERGE -q -w "$tmp/ext_high.json" "$C"

win ext_max.json "{\"kind\": \"external_correlation\", \"external_kind\": 3, \"external_id\": 18446744073709551615, \"correlation_id\": 18446744073709551615}, {$RT, \"correlation_id\": 18446744073709551615}, {$K, \"device_id\": 18446744073709551615, \"stream_id\": 18446744073709551615, \"correlation_id\": 18446744073709551615}"
expect 'ids of 2^64 - 1 are taken: external, correlation, device and stream' 0 '' \
	$CUPTIMERGE -q -w "$tmp/ext_max.json" "$C"
tcase 'a device and stream of 2^64 - 1 are written as such'
grep -q '"labels":"GPU 18446744073709551615"' "$tmp/out" || fail "no GPU row 2^64 - 1 in the output"
grep -q '"name":"stream 18446744073709551615 "' "$tmp/out" || fail "no stream row 2^64 - 1 in the output"

win ext_2p64.json "{\"kind\": \"external_correlation\", \"external_kind\": 3, \"external_id\": 18446744073709551616, \"correlation_id\": 1}, {$RT, \"correlation_id\": 1}"
expect 'an external_id of 2^64 is refused' 1 \
	'ext_2p64.json:[0-9]+: window: events\[0\]: "external_id" does not fit in 64 bits \(as a uint64 or an int64\)$' \
	$CUPTIMERGE -q -w "$tmp/ext_2p64.json" "$C"

win ext_both.json "{\"kind\": \"external_correlation\", \"external_kind\": 3, \"external_id\": -3, \"correlation_id\": 1}, {\"kind\": \"external_correlation\", \"external_kind\": 3, \"external_id\": 18446744073709551613, \"correlation_id\": 2}, {$RT, \"correlation_id\": 1}"
expect 'External ids both below 0 and from 2^63 up are refused (they share 64-bit keys)' 1 \
	'ext_both.json: window: External ids .* both below 0 and at or above 2\^63: ids are kept in 64 bits' \
	$CUPTIMERGE -q -w "$tmp/ext_both.json" "$C"

# the CPU trace's External ids are of the same kind as the window's
python3 - "$C" "$tmp/cpu_neg.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["traceEvents"][1]["args"]["External id"] = -3
json.dump(c, open(sys.argv[2], "w"))
EOF
expect 'a CPU External id below 0 with window ids from 2^63 up is refused' 1 \
	'ext_high.json: window: External ids .* both below 0 and at or above 2\^63' \
	$CUPTIMERGE -q -w "$tmp/ext_high.json" "$tmp/cpu_neg.json"

win ua_both.json "{$RT, \"correlation_id\": 1}" ', "user_annotations": {"-1": "a", "9223372036854775808": "b"}'
expect 'user_annotations keys both below 0 and from 2^63 up are refused' 1 \
	'ua_both.json: window: External ids .* both below 0 and at or above 2\^63' \
	$CUPTIMERGE -q -w "$tmp/ua_both.json" "$C"

win dev_both.json "{$K, \"device_id\": -1, \"stream_id\": 7, \"correlation_id\": 1}, {$K, \"device_id\": 9223372036854775808, \"stream_id\": 7, \"correlation_id\": 2}"
expect 'device ids both below 0 and from 2^63 up are refused' 1 \
	'dev_both.json: window: "device_id" values both below 0 and at or above 2\^63' \
	$CUPTIMERGE -q -w "$tmp/dev_both.json" "$C"

win stream_both.json "{$K, \"device_id\": 0, \"stream_id\": -7, \"correlation_id\": 1}, {$K, \"device_id\": 0, \"stream_id\": 9223372036854775808, \"correlation_id\": 2}"
expect 'stream ids both below 0 and from 2^63 up are refused' 1 \
	'stream_both.json: window: "stream_id" values both below 0 and at or above 2\^63' \
	$CUPTIMERGE -q -w "$tmp/stream_both.json" "$C"

win corr_both.json "{$RT, \"correlation_id\": -1}, {$RT, \"correlation_id\": 18446744073709551615}"
expect 'correlation ids both below 0 and from 2^63 up are refused' 1 \
	'corr_both.json: window: "correlation_id" values both below 0 and at or above 2\^63' \
	$CUPTIMERGE -q -w "$tmp/corr_both.json" "$C"

win neg_only.json "{\"kind\": \"external_correlation\", \"external_kind\": 3, \"external_id\": -3, \"correlation_id\": -1}, {$RT, \"correlation_id\": -1}, {$K, \"device_id\": -2, \"stream_id\": -7, \"correlation_id\": -1}"
expect 'negative ids alone are still taken' 0 '' $CUPTIMERGE -q -w "$tmp/neg_only.json" "$C"

# ------------------------------------------------------------- F18: times
# start_ns, end_ns and baseTimeNanoseconds lie within 2^126 ns of 0, so
# that start - base and end - start fit in 128 bits; beyond is refused
printf '{"schemaVersion":1,"baseTimeNanoseconds":1759300074000000000,"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op","pid":42,"tid":42,"ts":1000,"dur":1000000,"args":{"External id":1}}]}\n' >"$tmp/c18.json"
RT42='"kind": "cuda_runtime", "cbid": 211, "process_id": 42, "thread_id": 42, "correlation_id": 1'
win t_min.json "{$RT42, \"start_ns\": -170141183460469231731687303715884105728, \"end_ns\": 1759300074002000000}"
expect 'a start_ns of -2^127 is refused, even with --force' 1 \
	't_min.json:[0-9]+: window: events\[0\]: "start_ns" lies 2\^126 ns or more from 0, beyond the times cuptimerge takes$' \
	$CUPTIMERGE -q --force -w "$tmp/t_min.json" "$tmp/c18.json"
win t_max.json "{$RT42, \"start_ns\": -5, \"end_ns\": 170141183460469231731687303715884105727}"
expect 'an end_ns of 2^127 - 1 is refused, even with --force' 1 \
	't_max.json:[0-9]+: window: events\[0\]: "end_ns" lies 2\^126 ns or more' \
	$CUPTIMERGE -q --force -w "$tmp/t_max.json" "$tmp/c18.json"
win t_lim.json "{$RT42, \"start_ns\": 0, \"end_ns\": 1}, {$K, \"device_id\": 0, \"stream_id\": 7, \"correlation_id\": 1, \"end_ns\": 85070591730234615865843651857942052864}"
expect 'a kernel end_ns of 2^126 is refused' 1 't_lim.json:[0-9]+: window: events\[1\]: "end_ns" lies 2\^126 ns or more' \
	$CUPTIMERGE -q --force -w "$tmp/t_lim.json" "$tmp/c18.json"
win t_ovh.json "{$RT42, \"start_ns\": 0, \"end_ns\": 1}, {\"kind\": \"overhead\", \"name\": \"x\", \"start_ns\": 85070591730234615865843651857942052864, \"end_ns\": 1}"
expect 'an overhead start_ns of 2^126 is refused' 1 't_ovh.json:[0-9]+: window: events\[1\]: "start_ns" lies 2\^126 ns or more' \
	$CUPTIMERGE -q --force -w "$tmp/t_ovh.json" "$tmp/c18.json"
sed 's/1759300074000000000/-85070591730234615865843651857942052864/' "$tmp/c18.json" >"$tmp/c18base.json"
win t_ok.json "{$RT42, \"start_ns\": 1759300074001000000, \"end_ns\": 1759300074002000000}"
expect 'a baseTimeNanoseconds of -2^126 is refused, even with --force' 1 \
	'c18base.json: "baseTimeNanoseconds" lies 2\^126 ns or more from 0' \
	$CUPTIMERGE -q --force -w "$tmp/t_ok.json" "$tmp/c18base.json"

# the last times inside the range: the reference's numbers (refmerge's
# output, worked out again by hand: max((-(2^126-1) - base) / 1000.0, 0.0)
# is 0.0, float(2^127 - 2) / 1000.0 and float(2^126 - 2 - base) / 1000.0
# as Python's repr writes them)
win t_edge.json "{$RT42, \"start_ns\": -85070591730234615865843651857942052863, \"end_ns\": 85070591730234615865843651857942052863}, {$K, \"device_id\": 0, \"stream_id\": 7, \"correlation_id\": 1, \"start_ns\": 85070591730234615865843651857942052862, \"end_ns\": 85070591730234615865843651857942052863}"
expect 'times of +-(2^126 - 1) are taken' 0 '' $CUPTIMERGE -q --force -w "$tmp/t_edge.json" "$tmp/c18.json"
tcase 'times of +-(2^126 - 1) give the reference'"'"'s ts and dur'
grep -q '"cuda_runtime","name":"cudaLaunchKernel","pid":42,"tid":42,"ts":0.0,"dur":1.7014118346046924e+35,' "$tmp/out" ||
	fail "the runtime event's ts and dur are not 0.0 and 1.7014118346046924e+35"
grep -q '"kernel","name":"k","pid":0,"tid":7,"ts":8.507059173023462e+34,"dur":0.001,' "$tmp/out" ||
	fail "the kernel's ts and dur are not 8.507059173023462e+34 and 0.001"

# ------------------------------------------- F27: a UTF-8 byte order mark
bom() { printf '\357\273\277'; cat "$1"; }
bom "$FIX/thread_map.json" >"$tmp/bom_map.json"
tcase 'a thread map that starts with a byte order mark repairs as without it'
$CUPTIMERGE -q -t "$FIX/thread_map.json" "$FIX/threads_full.json" >"$tmp/r0.json" || fail "without: exit $?"
$CUPTIMERGE -q -t "$tmp/bom_map.json" "$FIX/threads_full.json" >"$tmp/r1.json" || fail "with: exit $?"
cmp -s "$tmp/r0.json" "$tmp/r1.json" || fail "the repairs differ"
bom "$C" | gzip -c >"$tmp/bom_cpu.json.gz"
tcase 'a gzip CPU trace whose text starts with a byte order mark, read a byte at a time'
$CUPTIMERGE -q --buffer-size 1 --trace-name example -w "$FIX/window.json" "$tmp/bom_cpu.json.gz" >"$tmp/b.json" ||
	fail "exit $?"
$JSONCMP "$FIX/expected.json" "$tmp/b.json" || fail "differs from expected.json"
printf '\357\273\277{"traceEvents": [,]}' >"$tmp/bom_bad.json"
expect 'an offset after a byte order mark counts its three bytes' 1 '^cuptimerge: .*/bom_bad.json:21: invalid JSON' \
	$CUPTIMERGE -w "$FIX/window.json" "$tmp/bom_bad.json"
printf '\357\273{}' >"$tmp/bom_cut.json"
expect 'a byte order mark cut short is named' 1 'bom_cut.json:2: invalid JSON: a UTF-8 byte order mark cut short' \
	$CUPTIMERGE -w "$FIX/window.json" "$tmp/bom_cut.json"
BATCH=$(dirname "$CUPTIMERGE")/cuptimerge-batch
if [ -x "$BATCH" ]; then
	mkdir "$tmp/bd"
	bom "$C" >"$tmp/bd/gpu01_4242.1759300079000.pt.trace.json"
	bom "$FIX/window_source.json" >"$tmp/bd/w.json"
	tcase 'cuptimerge-batch pairs a trace and a window that start with byte order marks'
	"$BATCH" --no-progress -n "$tmp/bd" >"$tmp/plan" 2>"$tmp/err" || fail "exit $?: $(cat "$tmp/err")"
	grep -q "	$tmp/bd/w.json	.*	merge\$" "$tmp/plan" || fail "not planned: $(cat "$tmp/plan")"
else
	skip 'cuptimerge-batch pairs a trace and a window that start with byte order marks' "no $BATCH"
fi

# ----------------------------------- F28: thread ids beyond 64 bits
# a thread_id may be any integer (its low 32 bits count: the golden case
# f28_bigtid), a thread_resource_map value may not, and the message says why
win tmv.json "{$RT, \"correlation_id\": 1, \"thread_id\": 5}" ', "thread_resource_map": {"4242": {"5": 1180591620717411303424}}'
expect 'a thread_resource_map value of 2^70 is refused as beyond 64 bits' 1 \
	'tmv.json:[0-9]+: window: events\[0\]: thread_resource_map entry for thread_id 5 is not an integer of at most 64 bits$' \
	$CUPTIMERGE -q -w "$tmp/tmv.json" "$C"

# ----------------------------------------- F29: one huge name, not copied
# a kernel name of 600 KB among 3000 small events: its batch of records is
# more than a block and goes to the records file as it lies (gpudigest.c),
# between the blocks before and after it.  The merge is the one with a
# short name, the name put back; by default, at -j 1 with tiny reads, and
# through the careful reader.  (Its peak memory against the name's length:
# bench/longtoken.sh --window, BENCHMARKS.md's F29 section.)
python3 - "$tmp" "$FIX/window.json" <<'EOF'
import json, sys
d, w = sys.argv[1], json.load(open(sys.argv[2]))
evs = []
for i in range(3000):
    if i == 1500:
        evs.append("BIGNAME")
    evs.append({"kind": "kernel", "device_id": i % 2, "stream_id": 7 + i % 3, "context_id": 1, "correlation_id": 0,
                "start_ns": 1759300079000035000 + i * 10, "end_ns": 1759300079000035005 + i * 10, "name": "k%d" % i})
for name, text in (("big", "x" * 600000), ("small", "SHORTNAME")):
    e = {"kind": "kernel", "device_id": 0, "stream_id": 9, "context_id": 1, "correlation_id": 0,
         "start_ns": 1759300079000050000, "end_ns": 1759300079000060000, "name": text}
    w2 = dict(w)
    w2["events"] = w["events"] + [e if x == "BIGNAME" else x for x in evs]
    json.dump(w2, open("%s/name_%s.json" % (d, name), "w"))
EOF
for v in default "-j 1 --buffer-size 7" careful; do
	tcase "a 600 KB kernel name merges as a short one does, in order ($v)"
	opts=$v env=
	[ "$v" = default ] && opts=
	[ "$v" = careful ] && opts= env=CUPTIMERGE_CAREFUL=1
	# shellcheck disable=SC2086 # opts and env are word lists
	env $env $CUPTIMERGE -q $opts --trace-name n -w "$tmp/name_big.json" "$C" >"$tmp/nb.json" || fail "big: exit $?"
	# shellcheck disable=SC2086
	env $env $CUPTIMERGE -q $opts --trace-name n -w "$tmp/name_small.json" "$C" >"$tmp/ns.json" || fail "small: exit $?"
	python3 -c 'import sys; a = open(sys.argv[1]).read().replace("x" * 600000, "SHORTNAME"); sys.exit(a != open(sys.argv[2]).read())' \
		"$tmp/nb.json" "$tmp/ns.json" || fail "the merges differ beyond the name"
done

finish
