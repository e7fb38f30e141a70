#!/bin/sh
# pfgolden.sh - the .pftrace of a few chosen merges, repairs, cuts and
# conversions equals a committed golden file (tests/fixtures/pftrace/), and
# the same bytes come at every read size 1..31 and at -j 1, 3 and the
# default.  pftmerge.sh and pfmembers.sh compare a .pftrace with the JSON, or
# with the members' other way, of the same program: a value wrong in both
# (text and members) passes them.  This script compares with what the
# program wrote when the golden files were made, so it does not.
#
# The golden form: for each case NAME, NAME.txt is the .pftrace decoded by
# protoc (--decode=perfetto.protos.Trace against Perfetto's schema), and
# SHA256SUMS holds the sha256 of its bytes.  Measured on these cases: the
# bytes are 0.5-6 KB each, the decoded text about 7 times that (4-40 KB,
# 264 KB in all, 17 KB gzip'd in the tarball), readable where a change is
# reviewed (the raw bytes would show as "Binary files differ").  The text
# alone is weaker than the bytes: protoc prints a message's fields in the
# order of their numbers, not as they came, and a value the same however
# it was encoded (tried: a packet of timestamp 5 then sequence id 1, the
# two swapped, and the 5 as a 2-byte varint decode to the same text), so
# the bytes are compared too, by their sum, which needs no tool and runs
# everywhere (distcheck included, where ../shared is absent).  The text is compared where protoc and the schema are found as
# tests/e2e/pfcommon.sh finds them (${SHARED:-$srcdir/../shared}/tools/
# perfetto/perfetto_trace.proto), else that case SKIPs and says why; on a
# difference it shows the diff of the two texts, which a sum cannot.
#
# PFGOLDEN_QUICK=1 skips the reruns at other read sizes and -j (mutants.sh
# sets it: they compare a program with itself, 8 s of its 10 here).
#
# `make pfgolden-regen` (sh tests/e2e/pfgolden.sh --regen, with srcdir and
# CUPTIMERGE set) writes the golden files again from the program, on
# purpose, into $srcdir/tests/fixtures/pftrace; make check never does.
# Review the diff of the texts before committing it.
. "${srcdir:-.}/tests/e2e/common.sh"
need sha256sum "to sum the .pftrace's bytes"
shared=${SHARED:-$srcdir/../shared}
proto=$shared/tools/perfetto/perfetto_trace.proto
GOLD=$FIX/pftrace
regen=0
[ "${1-}" = --regen ] && regen=1
nodecode=
command -v protoc >/dev/null 2>&1 || nodecode="no protoc (Debian: protobuf-compiler)"
[ -n "$nodecode" ] || [ -f "$proto" ] || nodecode="no $proto"
if [ $regen -eq 1 ] && [ -n "$nodecode" ]; then
	echo "pfgolden.sh --regen: $nodecode" >&2
	exit 1
fi

# decode IN OUT: the .pftrace IN as protoc's text in OUT.
decode() {
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$1" >"$2" 2>"$tmp/protoc.err"
}

# The cases: NAME ARGS... (paths under $FIX).  One of each kind of run
# whose .pftrace comes another way: a merge (the window's events encoded
# from the render's members), a merge's edge cases, Kineto's args and the
# annotation span, a repair (the text's way, one thread), the cuts, a
# trace converted alone (no -w), and one whose runs of a thread's records
# (pfrecord.h's struct cm_pfrun) meet a "B" left open with flows in it, a
# string tid, an instant and a counter between them (its golden file made
# by the program before the runs).
cases() {
	cat <<EOF
example --trace-name example -w $FIX/window.json $FIX/cpu.json
f19_uint64 --trace-name f19 -w $FIX/f19_uint64_window.json $FIX/f19_uint64_cpu.json
f24_profspan --trace-name f24 --now 1795974776 -w $FIX/f24_profspan_window.json $FIX/f24_profspan_cpu.json
k2 --trace-name k2 -w $FIX/kineto_window.json $FIX/kineto_cpu.json
repair_merge --trace-name threads --range=5117755924000,5117755926000 -t $FIX/thread_map.json -w $FIX/threads_window_nomap.json $FIX/threads_base.json
repair_kinds -t $tmp/nomap.json $FIX/pftrace_kinds.json
repair_overlap -t $tmp/nomap.json $FIX/pftrace_overlap.json
cut_steps2 --steps=2 -w $FIX/cut_window.json $FIX/cut_cpu.json
cut_clip --clip -w $FIX/cut_window.json $FIX/cut_cpu.json
stock_range --range=5232143880000,5232143882000 $FIX/kineto_stock_full.json.gz
kineto_cpu $FIX/kineto_cpu.json
runs $FIX/pftrace_runs.json
EOF
}
printf '{"thread_map_version": 1, "processes": {}}' >"$tmp/nomap.json"

if [ $regen -eq 1 ]; then
	mkdir -p "$GOLD"
	rm -f "$GOLD"/*.txt # (a case no longer listed leaves no file behind)
	: >"$tmp/sums"
	cases >"$tmp/cases"
	while read -r name args <&3; do
		# shellcheck disable=SC2086 # args is a word list
		$CUPTIMERGE -q $args -o "$tmp/$name.pftrace"
		decode "$tmp/$name.pftrace" "$GOLD/$name.txt" || { cat "$tmp/protoc.err" >&2; exit 1; }
		(cd "$tmp" && sha256sum "$name.pftrace") >>"$tmp/sums"
	done 3<"$tmp/cases"
	cp "$tmp/sums" "$GOLD/SHA256SUMS"
	echo "pfgolden.sh: wrote $(wc -l <"$tmp/sums") cases into $GOLD" >&2
fi

rows=0
cases >"$tmp/cases"
while read -r name args <&3; do
	rows=$((rows + 1))
	t_text="$name: decoded by protoc, the text of pftrace/$name.txt"
	t_same="$name: the same bytes at read sizes 1..31 (-j 1 and the default) and -j 3"
	tcase "$name: the bytes summed in pftrace/SHA256SUMS"
	rc=0
	# shellcheck disable=SC2086 # args is a word list
	$CUPTIMERGE -q $args -o "$tmp/$name.pftrace" 2>"$tmp/err" || rc=$?
	if [ $rc -ne 0 ]; then
		fail "exit $rc: $(cat "$tmp/err")"
		skip "$t_text" "no output"
		skip "$t_same" "no output"
		continue
	fi
	want=$(sed -n "s/^\([0-9a-f]*\)  $name\.pftrace\$/\1/p" "$GOLD/SHA256SUMS")
	got=$(sha256sum <"$tmp/$name.pftrace" | cut -d' ' -f1)
	[ -n "$want" ] || fail "no line for $name.pftrace in $GOLD/SHA256SUMS"
	[ -z "$want" ] || [ "$got" = "$want" ] || fail "sha256 $got, the golden one $want"

	if [ -n "$nodecode" ]; then
		skip "$t_text" "$nodecode"
	else
		tcase "$t_text"
		if ! decode "$tmp/$name.pftrace" "$tmp/$name.txt"; then
			fail "protoc: $(head -3 "$tmp/protoc.err")"
		elif ! diff -u "$GOLD/$name.txt" "$tmp/$name.txt" >"$tmp/diff"; then
			fail "differs from $name.txt ($(grep -c '^[-+][^-+]' "$tmp/diff") lines changed; make pfgolden-regen writes it again, on purpose):
$(head -n 40 "$tmp/diff")"
		fi
	fi

	if [ -n "${PFGOLDEN_QUICK-}" ]; then
		skip "$t_same" "PFGOLDEN_QUICK is set (mutants.sh: a program against itself)"
		continue
	fi
	tcase "$t_same"
	bs=1
	while [ $bs -le 31 ]; do
		for j in "-j 1" ""; do
			# read ahead on threads of the inputs' own at sizes 7 and 31 of
			# the default -j (golden.sh reads ahead at every fourth size, the
			# JSON's; at 3 bytes a read, a 115 KB window takes 0.5 s so)
			ra=0
			case "$j:$bs" in :7 | :31) ra=1 ;; esac
			rc=0
			# shellcheck disable=SC2086
			CUPTIMERGE_READAHEAD=$ra $CUPTIMERGE -q --buffer-size $bs $j $args -o "$tmp/bs.pftrace" 2>"$tmp/err" || rc=$?
			if [ $rc -ne 0 ]; then
				fail "--buffer-size $bs $j: exit $rc: $(cat "$tmp/err")"
			elif ! cmp -s "$tmp/bs.pftrace" "$tmp/$name.pftrace"; then
				fail "--buffer-size $bs $j (read-ahead $ra): other bytes"
			fi
		done
		bs=$((bs + 1))
	done
	# shellcheck disable=SC2086
	$CUPTIMERGE -q -j 3 $args -o "$tmp/j3.pftrace" 2>"$tmp/err" || fail "-j 3: exit $?: $(cat "$tmp/err")"
	cmp -s "$tmp/j3.pftrace" "$tmp/$name.pftrace" || fail "-j 3: other bytes"
done 3<"$tmp/cases"

# every golden file is some case's (a case dropped from the list above
# leaves none behind that nothing checks)
tcase "every file of pftrace/ is a case's"
for f in "$GOLD"/*; do
	b=${f##*/}
	[ "$b" = SHA256SUMS ] && continue
	grep -q "^${b%.txt} " "$tmp/cases" || fail "$b is no case's"
done
[ "$(wc -l <"$GOLD/SHA256SUMS")" -eq $rows ] || fail "SHA256SUMS has $(wc -l <"$GOLD/SHA256SUMS") lines for $rows cases"
finish
