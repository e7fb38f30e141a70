#!/bin/sh
# differential.sh - against the reference merge (../shared/oracle) on inputs made
# by ../shared/tools/gen_trace: many seeds, with and without the edge cases,
# pretty and compact, maps first and last, with and without a base time.
# One TAP case per generated pair; skipped where the shared folder is absent
# (CI without it).  DIFF_SEEDS="1 2" picks the seeds.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to run the reference merge"
shared=${SHARED:-$srcdir/../shared}
[ -x "$shared/oracle/refmerge" ] && [ -x "$shared/tools/gen_trace" ] ||
	skip_all "no $shared/oracle"
seeds=${DIFF_SEEDS:-"1 2 3 4 5 6 7 8 9 10"}
# the case "big", 6000 ops: about 10,000 CPU events with External ids, more
# than one chunk (4096) of the index's read-back (cpu/cpuindex.c); the
# case "huge", 50,000 ops on 2 devices: 83,000 of them, enough for the
# index to be applied on several threads, and 4,400 spans, written in
# several slices (gpu/gpurows.c), also merged with -j 1 and -j 3: the same
# bytes; the case "streams", 8,000 ops with each kernel moved to one of
# three streams by its correlation id, so that an annotation's spans lie on
# several streams (gen_trace keeps them on one), also merged with a block
# of spans an annotation (CUPTIMERGE_SPAN_SLICE=1): the same bytes
for case_seed in $seeds big huge streams; do
	for flags in "" "--edge-cases" "--edge-cases --pretty --maps-first" "--edge-cases --no-base --threads 7 --devices 3"; do
		if [ "$case_seed" = big ]; then
			[ -n "$flags" ] && continue
			seed=11 ops=6000 flags=--pretty
		elif [ "$case_seed" = huge ]; then
			[ -n "$flags" ] && continue
			seed=7 ops=50000 flags="--pretty --devices 2"
		elif [ "$case_seed" = streams ]; then
			[ -n "$flags" ] && continue
			seed=5 ops=8000 flags="--devices 2"
		else
			seed=$case_seed ops=$((case_seed * 53 % 400 + 20))
		fi
		tcase "seed $seed --ops $ops${flags:+ $flags}: equals the reference merge"
		# shellcheck disable=SC2086
		"$shared/tools/gen_trace" --quiet --seed "$seed" --ops $ops $flags "$tmp/c.json" "$tmp/w.json"
		if [ "$case_seed" = streams ]; then
			python3 - "$tmp/w.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
for e in w["events"]:
    if e.get("kind") == "kernel":
        e["stream_id"] = 7 + e["correlation_id"] % 3
json.dump(w, open(sys.argv[1], "w"))
PY
		fi
		now=1795974776
		"$shared/oracle/refmerge" "$tmp/c.json" "$tmp/w.json" "$tmp/ref.json" --trace-name T --now-s $now
		rc=0
		$CUPTIMERGE --trace-name T --now $now -w "$tmp/w.json" "$tmp/c.json" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
		if [ $rc -ne 0 ]; then
			fail "seed $seed $flags: exit $rc: $(cat "$tmp/err")"
			continue
		fi
		if ! "$shared/oracle/tracecmp" "$tmp/ref.json" "$tmp/out.json" >"$tmp/cmp"; then
			fail "seed $seed $flags: $(head -3 "$tmp/cmp")"
			continue
		fi
		case $case_seed in
		huge)
			for j in 1 3; do
				$CUPTIMERGE -j $j --trace-name T --now $now -w "$tmp/w.json" "$tmp/c.json" >"$tmp/out$j.json" ||
					fail "seed $seed -j $j: exit $?"
				cmp -s "$tmp/out.json" "$tmp/out$j.json" || fail "seed $seed: -j $j wrote other bytes"
			done
			;;
		streams)
			grep -q '"stream": *8' "$tmp/out.json" || fail "seed $seed: no kernel moved to stream 8"
			CUPTIMERGE_SPAN_SLICE=1 $CUPTIMERGE --trace-name T --now $now -w "$tmp/w.json" "$tmp/c.json" \
				>"$tmp/out1.json" || fail "seed $seed, a block of spans an annotation: exit $?"
			cmp -s "$tmp/out.json" "$tmp/out1.json" ||
				fail "seed $seed: a block of spans an annotation wrote other bytes"
			;;
		esac
	done
done
finish
