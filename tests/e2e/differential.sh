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
# the last case, 6000 ops: about 10,000 CPU events with External ids, more
# than one chunk (4096) of the index's read-back (cm_cpuscan_apply_index)
for case_seed in $seeds big; do
	for flags in "" "--edge-cases" "--edge-cases --pretty --maps-first" "--edge-cases --no-base --threads 7 --devices 3"; do
		if [ "$case_seed" = big ]; then
			[ -n "$flags" ] && continue
			seed=11 ops=6000 flags=--pretty
		else
			seed=$case_seed ops=$((case_seed * 53 % 400 + 20))
		fi
		tcase "seed $seed --ops $ops${flags:+ $flags}: equals the reference merge"
		# shellcheck disable=SC2086
		"$shared/tools/gen_trace" --quiet --seed "$seed" --ops $ops $flags "$tmp/c.json" "$tmp/w.json"
		now=1795974776
		"$shared/oracle/refmerge" "$tmp/c.json" "$tmp/w.json" "$tmp/ref.json" --trace-name T --now-s $now
		rc=0
		$CUPTIMERGE --trace-name T --now $now -w "$tmp/w.json" "$tmp/c.json" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
		if [ $rc -ne 0 ]; then
			fail "seed $seed $flags: exit $rc: $(cat "$tmp/err")"
			continue
		fi
		"$shared/oracle/tracecmp" "$tmp/ref.json" "$tmp/out.json" >"$tmp/cmp" ||
			fail "seed $seed $flags: $(head -3 "$tmp/cmp")"
	done
done
finish
