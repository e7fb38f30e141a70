#!/bin/sh
# pfbe.sh - "B" and "E" events in the .pftrace (-o FILE.pftrace): Perfetto
# shows for them what it shows for the JSON (tests/pftrace_check.py), each
# case a way a trace pairs them that the JSON import pairs its own way.
#
# The JSON import keeps one stack of slices a thread: an "X" slice carries
# its duration, an "E" ends the innermost "B" still open whose name and
# category it matches (a missing one matches any), one that matches none
# is dropped.  The .pftrace's slices are a SLICE_BEGIN and a SLICE_END
# each, and a SLICE_END ends the innermost slice open on its track; so the
# "B" and "E" of a thread go on a track of their own under the thread's,
# apart from the "X" slices (pftrack.c, cm_pf_event_uuid).  On the thread's
# track, with the "X" slices, an "E" cut the "X" open at its time short
# and the end of an "X" ended a "B" open in it.
#
# Three differences remain (cuptimerge(1)), none cheap to match: each
# needs the thread's events in the order of time, which the transcoder,
# streaming in the file's order on threads, does not have.  A "B" left open
# in an "X" is ended at the end of the "X" by the JSON import once any event
# of the thread comes later in time (an "X" written after the "B" in the
# file may be the one around it); an "E" at the time of a later "B" is
# taken first or not as Perfetto's sorter happens to order that run; an
# "f" without "bp":"e" binds to the next slice of its thread by time, which
# may lie anywhere after it in the file, on the "B" track or on a lane.
#
# Needs protoc (Debian: protobuf-compiler); the trace-processor checks also
# node and the engine (see pftrace.sh).
. "${srcdir:-.}/tests/e2e/common.sh"
. "${srcdir:-.}/tests/e2e/pfcommon.sh"

# be NAME EVENTS: a trace of EVENTS (traceEvents' elements, one a line),
# converted both ways (pfcommon.sh's converts).
be() {
	printf '{"traceEvents": [\n%s\n]}\n' "$2" >"$tmp/$1.in.json"
	converts "$1" "$tmp/$1.in.json"
}

# An "E" with no "B" open: the JSON import drops it.  It ended the "X"
# open at its time (the "X" written after it in the file, earlier in time).
be unmatched_e '{"ph": "E", "pid": 1, "tid": 1, "ts": 1},
{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 0, "dur": 10}'

# A "B" never ended, in an "X": open to the end (dur -1) and the "X"
# whole; the end of the "X" ended it, and the "X" was left open.
be open_b_in_x '{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 10},
{"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 2}'

# An "X" begun in a "B" that ends before it: both whole (the "E" ended
# the "X" there, and the end of the "X" the "B").
be x_over_e '{"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 1},
{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 2, "dur": 10},
{"ph": "E", "pid": 1, "tid": 1, "ts": 5}'

# "B"/"E" nested in "X" slices and "X" slices in them, in order, with ties.
be interleaved '{"ph": "X", "name": "x1", "pid": 1, "tid": 1, "ts": 1, "dur": 20},
{"ph": "B", "name": "b1", "pid": 1, "tid": 1, "ts": 2},
{"ph": "X", "name": "x2", "pid": 1, "tid": 1, "ts": 3, "dur": 2},
{"ph": "B", "name": "b2", "pid": 1, "tid": 1, "ts": 4},
{"ph": "E", "pid": 1, "tid": 1, "ts": 4.5},
{"ph": "X", "name": "x3", "pid": 1, "tid": 1, "ts": 6, "dur": 2},
{"ph": "E", "pid": 1, "tid": 1, "ts": 10},
{"ph": "B", "name": "b3", "pid": 1, "tid": 1, "ts": 21},
{"ph": "X", "name": "x4", "pid": 1, "tid": 1, "ts": 22, "dur": 1},
{"ph": "E", "pid": 1, "tid": 1, "ts": 30}'

# An "E" that names a "B" under the innermost ends that one; one whose
# name matches no "B" open is dropped (the innermost stays open).
be e_by_name '{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1},
{"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 2},
{"ph": "E", "name": "a", "pid": 1, "tid": 1, "ts": 3},
{"ph": "B", "name": "c", "cat": "k", "pid": 1, "tid": 2, "ts": 1},
{"ph": "E", "name": "zz", "pid": 1, "tid": 2, "ts": 2},
{"ph": "E", "cat": "other", "pid": 1, "tid": 2, "ts": 3},
{"ph": "X", "name": "x", "pid": 1, "tid": 2, "ts": 4, "dur": 1}'

# An "E" with a category or args but no name: it matches any name, and
# its args join the slice's.  It was named "[No name]" and matched none.
be e_args '{"ph": "B", "name": "a", "cat": "c", "pid": 1, "tid": 1, "ts": 1, "args": {"p": 1}},
{"ph": "E", "cat": "c", "pid": 1, "tid": 1, "ts": 3, "args": {"q": "r"}}'

# A tid under two pids is two threads, each its own "B"/"E" pairs; a tid
# 0 is the pid's main thread, whose "E" ends it.
be tid_reuse '{"ph": "B", "name": "a", "pid": 1, "tid": 7, "ts": 1},
{"ph": "B", "name": "b", "pid": 2, "tid": 7, "ts": 2},
{"ph": "E", "pid": 1, "tid": 7, "ts": 3},
{"ph": "B", "name": "m", "pid": 3, "tid": 0, "ts": 1},
{"ph": "X", "name": "x", "pid": 3, "tid": 3, "ts": 2, "dur": 1},
{"ph": "E", "pid": 3, "tid": 3, "ts": 4},
{"ph": "E", "pid": 2, "tid": 7, "ts": 5}'

# Flows from a "B" (the innermost slice open), from an "X" in a "B", and
# from a "B" in an "X": each binds to that slice, as in the JSON.
be be_flows '{"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1},
{"ph": "s", "id": 1, "name": "f", "cat": "c", "pid": 1, "tid": 1, "ts": 2},
{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 3, "dur": 2},
{"ph": "s", "id": 2, "name": "f", "cat": "c", "pid": 1, "tid": 1, "ts": 4},
{"ph": "E", "pid": 1, "tid": 1, "ts": 6},
{"ph": "X", "name": "y", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
{"ph": "B", "name": "b", "pid": 1, "tid": 1, "ts": 11},
{"ph": "s", "id": 3, "name": "f", "cat": "c", "pid": 1, "tid": 1, "ts": 12},
{"ph": "E", "pid": 1, "tid": 1, "ts": 13},
{"ph": "X", "name": "k", "pid": 1, "tid": 2, "ts": 1, "dur": 30},
{"ph": "f", "id": 1, "name": "f", "cat": "c", "bp": "e", "pid": 1, "tid": 2, "ts": 7},
{"ph": "f", "id": 2, "name": "f", "cat": "c", "bp": "e", "pid": 1, "tid": 2, "ts": 8},
{"ph": "f", "id": 3, "name": "f", "cat": "c", "bp": "e", "pid": 1, "tid": 2, "ts": 14}'

# Many "B"/"E" among "X" slices on a few threads, in batches of a few
# elements (CUPTIMERGE_PFT_BATCH): the same bytes at read sizes 1 to 31
# and -j 1 to 4 (a thread's open "B" slices are counted in the file's
# order, whatever the batch).
python3 -c '
ev = []
for i in range(300):
    t = i % 3 + 1
    ev.append("{\"ph\": \"B\", \"name\": \"b%d\", \"pid\": 1, \"tid\": %d, \"ts\": %d}" % (i, t, 10 * i))
    ev.append("{\"ph\": \"X\", \"name\": \"x%d\", \"pid\": 1, \"tid\": %d, \"ts\": %d, \"dur\": %d}" % (i, t, 10 * i + 1, 3 + i % 7))
    if i % 4:
        ev.append("{\"ph\": \"s\", \"id\": %d, \"name\": \"f\", \"cat\": \"c\", \"pid\": 1, \"tid\": %d, \"ts\": %d}" % (i, t, 10 * i + 2))
    if i % 5:
        ev.append("{\"ph\": \"E\", \"pid\": 1, \"tid\": %d, \"ts\": %d}" % (t, 10 * i + 5))
print("{\"traceEvents\": [\n" + ",\n".join(ev) + "\n]}")' >"$tmp/many.in.json"
CUPTIMERGE_PFT_BATCH=200 $CUPTIMERGE -q -j 1 -o "$tmp/many.pftrace" "$tmp/many.in.json" 2>"$tmp/err" || true
tcase "many B/E: the same bytes at read sizes 1 to 31"
[ -s "$tmp/many.pftrace" ] || fail "no file: $(head -c 500 "$tmp/err")"
for n in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	CUPTIMERGE_BUFSIZE=$n CUPTIMERGE_PFT_BATCH=200 $CUPTIMERGE -q -o "$tmp/rs.pftrace" "$tmp/many.in.json" ||
		fail "read size $n: exit $?"
	cmp -s "$tmp/rs.pftrace" "$tmp/many.pftrace" || { fail "read size $n: other bytes"; break; }
done
tcase "many B/E: the same bytes at -j 1 to 4"
for j in 2 3 4; do
	CUPTIMERGE_PFT_BATCH=200 $CUPTIMERGE -q -j $j -o "$tmp/mj.pftrace" "$tmp/many.in.json" || fail "-j $j: exit $?"
	cmp -s "$tmp/mj.pftrace" "$tmp/many.pftrace" || fail "-j $j: other bytes"
done
$CUPTIMERGE -q -o "$tmp/many.json" "$tmp/many.in.json" || true
same "many B/E" "$tmp/many.json" "$tmp/many.pftrace"

finish
