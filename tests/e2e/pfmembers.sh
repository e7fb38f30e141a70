#!/bin/sh
# pfmembers.sh - a merge's .pftrace, whose window events the render hands to
# the encoder with their members (gpu/gpumembers.h, src/mergepft.c): the
# same bytes, exit status and messages as with each element parsed from its
# text (CUPTIMERGE_PFT_REPARSE=1, the way before), each group through the
# transcoder's pool (CUPTIMERGE_PFT_DIRECT=0, the way before the groups went
# straight to the sequential part: pfinsert.c's direct path, whose lanes
# are put a render's piece at a time: the H200 pair's overlapping kernels
# need them placed in the batches' order) and copied on
# the render's sink (CUPTIMERGE_PFT_ADOPT=0, the way before the groups were
# taken whole: pfinsert.c's cm_pft_insert_adopt), and each element's
# members the ones its text parses to (CUPTIMERGE_PFT_MEMBERS_CHECK=1, which
# also says how many were checked: some, or the case proves nothing).  On
# every pair of tests/fixtures/cases.txt and the other fixtures' pairs (the
# real H200 pair, cuts), the oracle example, gen_trace pairs plain and
# --edge-cases, in groups of 1 and 3 records (most groups whole in a piece,
# so encoded with their members) and of the default size, at -j 1 and 2, and
# at read sizes 1 to 31.  Needs nothing but the binary (gen_trace for its
# pairs).
. "${srcdir:-.}/tests/e2e/common.sh"
shared=${SHARED:-$srcdir/../shared}
NOW="--now 1795974776"

# same NAME ARGS...: cuptimerge ARGS -o .pftrace both ways (the environment
# as the caller sets it); the same exit status, messages and bytes, the
# members checked; and the same again as it runs by default, what the
# members hold whole left out of the text (gpu/gpumembers.h's lean mode:
# numbers, flows, X events' heads; the check's reading of the text turns it
# off).  Sets $checked to the elements
# checked.
same() {
	what=$1
	shift
	rc1=0
	rc2=0
	rc3=0
	CUPTIMERGE_PFT_MEMBERS_CHECK=1 $CUPTIMERGE "$@" -o "$tmp/x.pftrace" 2>"$tmp/m.err" || rc1=$?
	[ ! -f "$tmp/x.pftrace" ] || mv "$tmp/x.pftrace" "$tmp/m.pftrace"
	$CUPTIMERGE "$@" -o "$tmp/x.pftrace" 2>"$tmp/l.err" || rc3=$?
	[ ! -f "$tmp/x.pftrace" ] || mv "$tmp/x.pftrace" "$tmp/l.pftrace"
	CUPTIMERGE_PFT_REPARSE=1 CUPTIMERGE_PFT_DIRECT=0 CUPTIMERGE_PFT_ADOPT=0 $CUPTIMERGE "$@" -o "$tmp/x.pftrace" \
		2>"$tmp/p.err" || rc2=$?
	[ ! -f "$tmp/x.pftrace" ] || mv "$tmp/x.pftrace" "$tmp/p.pftrace"
	checked=$(sed -n "s/^cuptimerge: CUPTIMERGE_PFT_MEMBERS_CHECK: \([0-9]*\) elements' members checked.*/\1/p" \
		"$tmp/m.err" | awk '{ n += $1 } END { print n + 0 }')
	grep -v "CUPTIMERGE_PFT_MEMBERS_CHECK: [0-9]* elements' members checked" "$tmp/m.err" >"$tmp/m.msg" || true
	if [ $rc1 -ne $rc2 ] || ! cmp -s "$tmp/m.msg" "$tmp/p.err"; then
		fail "$what: exit $rc1 with members, $rc2 parsed: $(head -3 "$tmp/m.msg") / $(head -3 "$tmp/p.err")"
	elif [ $rc1 -eq 0 ] && ! cmp -s "$tmp/m.pftrace" "$tmp/p.pftrace"; then
		fail "$what: other bytes with the members than parsed"
	elif [ $rc3 -ne $rc2 ] || ! cmp -s "$tmp/l.err" "$tmp/p.err"; then
		fail "$what: exit $rc3 by default (lean), $rc2 parsed: $(head -3 "$tmp/l.err") / $(head -3 "$tmp/p.err")"
	elif [ $rc3 -eq 0 ] && ! cmp -s "$tmp/l.pftrace" "$tmp/p.pftrace"; then
		fail "$what: other bytes by default (the lean mode: what the members hold left out of the text) than parsed"
	fi
}

# pairs NAME ARGS...: same in groups of 1 and 3 records and of the default
# size, at -j 1 and 2; at least one element checked in groups of 1, where
# the pair merged (but for the pairs in $few, whose window has an event at
# most: no group between a piece's first and last).
few=" f12_empty_key f24_profspan "
pairs() {
	name=$1
	shift
	tcase "$name: the same .pftrace with the members as parsed from the text"
	for g in 1 3 default; do
		for j in 1 2; do
			CUPTIMERGE_PFT_GROUP=${g#default} same "$name, groups of $g, -j $j" -q -j $j "$@"
			if [ $g = 1 ] && [ $rc1 -eq 0 ] && [ "$checked" -eq 0 ] && [ "${few#* $name }" = "$few" ]; then
				fail "$name, groups of 1, -j $j: no element given with its members"
			fi
		done
	done
}

# Every pair of the golden cases (cases.txt), with its options.
exec 3<"$FIX/cases.txt"
while read -r name cpu win exp opts <&3; do
	case $name in '#'* | '') continue ;; esac
	[ -f "$FIX/$cpu" ] && [ -f "$FIX/$win" ] || continue
	# shellcheck disable=SC2086
	pairs "$name" $opts -w "$FIX/$win" "$FIX/$cpu"
done
exec 3<&-
pairs h200 $NOW -w "$FIX/h200_kwindow.json.gz" "$FIX/h200_kcpu.json.gz"
pairs kineto-ann $NOW -w "$FIX/kineto_ann_window.json" "$FIX/kineto_ann_cpu.json"
pairs cut-steps2 --steps=2 -w "$FIX/cut_window.json" "$FIX/cut_cpu.json"
pairs cut-range --range=1250,1300 -w "$FIX/cut_window.json" "$FIX/cut_cpu.json"

ex=$shared/oracle/examples
if [ -d "$ex" ]; then
	pairs oracle-example $NOW -w "$ex/window.json" "$ex/cpu.json"
	pairs oracle-edge $NOW -w "$ex/edge_window.json" "$ex/edge_cpu.json"
else
	skip "oracle examples" "no $ex"
fi

if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --seed 11 --ops 3000 --devices 2 --quiet "$tmp/gen.cpu" "$tmp/gen.win"
	pairs gen $NOW -w "$tmp/gen.win" "$tmp/gen.cpu"
	for seed in 11 12 13; do
		"$shared/tools/gen_trace" --seed $seed --ops 400 --edge-cases --pretty --quiet "$tmp/edge.cpu" "$tmp/edge.win"
		pairs "gen-edge seed $seed" $NOW -w "$tmp/edge.win" "$tmp/edge.cpu"
	done
	"$shared/tools/gen_trace" --seed 14 --ops 400 --edge-cases --no-base --maps-first --quiet "$tmp/edge.cpu" "$tmp/edge.win"
	pairs "gen-edge seed 14, no base, maps first" -w "$tmp/edge.win" "$tmp/edge.cpu"
else
	skip "gen_trace pairs" "no $shared/tools/gen_trace"
fi

# The read size: the window's records cut into other blocks.
tcase "the real pair in groups of 5: the same .pftrace with the members as parsed, at read sizes 1 to 31"
for n in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	CUPTIMERGE_BUFSIZE=$n CUPTIMERGE_PFT_GROUP=5 same "read size $n" -q -j 2 $NOW -w "$FIX/threads_window.json" \
		"$FIX/threads_base.json"
	[ "$checked" -gt 0 ] || fail "read size $n: no element given with its members"
done
finish
