#!/bin/sh
# pfflat.sh - the Perfetto transcoder reads a compact element (no space, no
# escape, no container but an object of scalars as a member's value: the
# GPU events the merge renders) straight into its members, and keeps a
# number's value as it reads it (pfparse.c: cm_pf_parse_flat, number()).
# That reading must give the bytes the tree of every element gives
# (CUPTIMERGE_PFT_GENERIC=1, the reading before it): compared with cmp on
# a hand-made compact trace of every kind of event, member and number
# (repeated keys, escapes, nested args, times past 2^43 us, more than 3
# decimals, exponents, integers past 18 digits and past int64), at -j 1 and
# 2, at read sizes 1 to 31 and in batches of a few elements; on the
# refusals (the same line); on every kind of event compacted
# (pftrace_kinds.json); and on merges (the oracle example, a gen_trace
# pair with edge cases, the real H200 pair, the full trace repaired).
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compact a trace"
shared=${SHARED:-$srcdir/../shared}
NOW="--now 1795974776"

# same_both NAME ARGS...: cuptimerge ARGS -o NAME.pftrace at -j 1 and 2,
# read compact and as a tree: the same bytes (and it runs).
same_both() {
	name=$1
	shift
	tcase "$name: the same .pftrace read compact and as a tree, -j 1 and 2"
	for j in 1 2; do
		$CUPTIMERGE -q -j $j "$@" -o "$tmp/$name.flat$j.pftrace" 2>"$tmp/err" ||
			{ fail "-j $j: exit $?: $(head -3 "$tmp/err")"; return; }
		CUPTIMERGE_PFT_GENERIC=1 $CUPTIMERGE -q -j $j "$@" -o "$tmp/$name.tree$j.pftrace" 2>"$tmp/err" ||
			{ fail "-j $j, as a tree: exit $?: $(head -3 "$tmp/err")"; return; }
		cmp -s "$tmp/$name.flat$j.pftrace" "$tmp/$name.tree$j.pftrace" ||
			{ fail "-j $j: other bytes read compact"; return; }
	done
	cmp -s "$tmp/$name.flat1.pftrace" "$tmp/$name.flat2.pftrace" || fail "-j 2: other bytes than -j 1"
}

cat >"$tmp/flat.json" <<'EOF'
{"schemaVersion":1,"traceEvents":[
{"ph":"M","name":"process_name","pid":5,"tid":0,"args":{"name":"python"}},
{"ph":"M","name":"thread_name","pid":5,"tid":1,"args":{"name":"worker"}},
{"ph":"X","cat":"kernel","name":"k","pid":5,"tid":1,"ts":5117756144318.225,"dur":3.681,"args":{"device":1,"context":-2,"stream":7,"correlation":50,"big":12345678901234567890,"i19":1234567890123456789,"i18":-123456789012345678,"neg0":-0,"f":1.5,"e":1e3,"E":-2.5E-3,"d4":12.3456,"z":0.000,"t":true,"fa":false,"nu":null,"s":"str","u":"héllo","a.b":3,"a.c":"x","dup":1,"dup":2}},
{"ph":"s","id":50,"pid":5,"tid":1,"ts":5117756144318.225,"cat":"ac2g","name":"ac2g"},
{"ph":"f","id":50,"pid":5,"tid":1,"ts":5117756144318.226,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"X","name":"first","name":"second","cat":"c","cat":"d","pid":5,"tid":1,"ts":10,"dur":0,"args":{}},
{"ph":"X","name":"esc\"aped","cat":"c","pid":5,"tid":1,"ts":11,"dur":1},
{"ph":"X","name":"nested","cat":"c","pid":5,"tid":1,"ts":12,"dur":1,"args":{"o":{"x":1},"arr":[1,2]}},
{"ph":"X","name":"big ts","cat":"c","pid":5,"tid":2,"ts":9000000000000.5,"dur":8796093022208,"args":{"k":1}},
{"ph":"X","name":"ts int","cat":"c","pid":5,"tid":2,"ts":8796093022207,"dur":1.0001},
{"ph":"X","name":"ts 4 decimals","cat":"c","pid":5,"tid":2,"ts":100.1234,"dur":0.0005},
{"ph":"X","name":"ts exp","cat":"c","pid":5,"tid":2,"ts":1.5e2,"dur":2E0},
{"ph":"X","name":"ts lead","cat":"c","pid":5,"tid":2,"ts":0.001,"dur":0},
{"ph":"X","name":"2 and 1 decimals","cat":"c","pid":5,"tid":2,"ts":100.25,"dur":1.5,"args":{"two":2.25,"one":-0.5}},
{"ph":"X","name":"long digits","cat":"c","pid":5,"tid":2,"ts":1234567890.123456789012,"dur":0.1},
{"ph":"X","name":"19 digits","cat":"c","pid":5,"tid":2,"ts":123456.7890123456789,"dur":0.5},
{"ph":"B","name":"b","pid":5,"tid":3,"ts":20},
{"ph":"E","pid":5,"tid":3,"ts":21},
{"ph":"i","s":"g","name":"glob","pid":5,"tid":3,"ts":22},
{"ph":"i","s":"p","name":"proc","pid":5,"tid":3,"ts":23,"args":{"x":1}},
{"ph":"I","name":"inst","pid":5,"tid":3,"ts":24},
{"ph":"C","name":"ctr","pid":5,"ts":25,"args":{"v":1.5,"w":2}},
{"ph":"X","name":"str ids","cat":"Trace","pid":"Spans","tid":"PyTorch Profiler","ts":26,"dur":1},
{"ph":"X","name":"wide ids","cat":"c","pid":1234567890123456789,"tid":-5,"ts":27,"dur":1},
{"ph":"X","name":"a space","cat":"c","pid":5,"tid":4, "ts":28,"dur":1},
{"ph":"X","cat":"c","name":"","pid":5,"tid":4,"ts":29,"dur":1},
{"ph":"X","cat":"c","pid":5,"tid":4,"ts":30,"dur":1,"unknown":{"a":1},"x":[1]},
{"ph":"X","name":"escaped key","cat":"c","pid":5,"tid":4,"ts":31,"dur":1,"args":{"k\u0041":1}},
{"ph":"X","name":"unknown scalar","cat":"c","pid":5,"tid":4,"ts":32,"dur":1,"zz":"q","args":{"k":-1.5}},
{"ph":"X","name":"uint","cat":"c","pid":5,"tid":4,"ts":33,"dur":1,"args":{"u":18446744073709551615,"n":-9223372036854775808}}
]}
EOF
same_both flat "$tmp/flat.json"

tcase "flat: the same bytes at read sizes 1 to 31"
for n in $(sample $(seq 1 31)); do # (a sample: CUPTIMERGE_TEST_SAMPLE)
	CUPTIMERGE_BUFSIZE=$n $CUPTIMERGE -q -o "$tmp/rs.pftrace" "$tmp/flat.json" || fail "read size $n: exit $?"
	cmp -s "$tmp/rs.pftrace" "$tmp/flat.tree1.pftrace" || { fail "read size $n: other bytes"; break; }
done

tcase "flat: the same bytes in batches of a few elements on 1 to 3 threads"
CUPTIMERGE_PFT_BATCH=300 CUPTIMERGE_PFT_GENERIC=1 $CUPTIMERGE -q -j 1 -o "$tmp/bt.pftrace" "$tmp/flat.json" ||
	fail "as a tree: exit $?"
for j in 1 2 3; do
	CUPTIMERGE_PFT_BATCH=300 $CUPTIMERGE -q -j $j -o "$tmp/b$j.pftrace" "$tmp/flat.json" || fail "-j $j: exit $?"
	cmp -s "$tmp/b$j.pftrace" "$tmp/bt.pftrace" || { fail "-j $j: other bytes than as a tree at -j 1"; break; }
done

# pids and tids of every type (cut floats, strings, "", missing, null):
# the kept values give the ids the text gives (pftrace.sh checks the ids
# themselves against Perfetto's JSON import).
tcase "ids: pids and tids of every type, the same bytes read compact and as a tree, -j 1 and 2"
cat >"$tmp/ids.json" <<'EOF'
{"traceEvents":[{"ph":"X","name":"a","cat":"c","pid":1.5,"tid":3.9,"ts":1,"dur":1},{"ph":"X","name":"b","cat":"c","pid":"P","tid":"","ts":2,"dur":1},{"ph":"X","name":"c","cat":"c","pid":2,"ts":3,"dur":1},{"ph":"X","name":"d","cat":"c","pid":-2.5,"tid":0.0,"ts":4,"dur":1},{"ph":"X","name":"e","cat":"c","pid":"P","tid":"P","ts":5,"dur":1},{"ph":"X","name":"f","cat":"c","pid":7,"tid":4294967296.0,"ts":6,"dur":1},{"ph":"X","name":"g","cat":"c","pid":7,"tid":null,"ts":7,"dur":1},{"ph":"X","name":"h","cat":"c","pid":7,"tid":"7","ts":8,"dur":1}]}
EOF
for j in 1 2; do
	$CUPTIMERGE -q -j $j -o "$tmp/ids.pftrace" "$tmp/ids.json" || fail "-j $j: exit $?"
	CUPTIMERGE_PFT_GENERIC=1 $CUPTIMERGE -q -j $j -o "$tmp/idst.pftrace" "$tmp/ids.json" ||
		fail "-j $j as a tree: exit $?"
	cmp -s "$tmp/ids.pftrace" "$tmp/idst.pftrace" || { fail "-j $j: other bytes than as a tree"; break; }
done

# What cannot be written, in compact text: the same one line either way.
n=0
while IFS= read -r ev <&3; do
	n=$((n + 1))
	tcase "refusal $n, compact: the same line read compact and as a tree ($ev)"
	printf '{"traceEvents":[%s]}\n' "$ev" >"$tmp/r.json"
	rc=0
	$CUPTIMERGE -q -o "$tmp/r.pftrace" "$tmp/r.json" 2>"$tmp/r.flat" || rc=$?
	[ $rc -eq 1 ] || fail "exit $rc, not 1"
	rc=0
	CUPTIMERGE_PFT_GENERIC=1 $CUPTIMERGE -q -o "$tmp/r.pftrace" "$tmp/r.json" 2>"$tmp/r.tree" || rc=$?
	[ $rc -eq 1 ] || fail "as a tree: exit $rc, not 1"
	cmp -s "$tmp/r.flat" "$tmp/r.tree" || fail "says $(cat "$tmp/r.flat"), as a tree $(cat "$tmp/r.tree")"
	[ "$(wc -l <"$tmp/r.flat")" -eq 1 ] || fail "not one line: $(cat "$tmp/r.flat")"
done 3<<'EOF'
{"ph":"X","name":"n","cat":"c","pid":1,"tid":1,"ts":-1.5,"dur":1}
{"ph":"X","name":"n","cat":"c","pid":1,"tid":1,"ts":-3,"dur":1}
{"ph":"X","name":"n","cat":"c","pid":1,"tid":1,"ts":1,"dur":-0.001}
{"ph":"X","name":"n","cat":"c","pid":1,"tid":1,"ts":1}
{"ph":"X","name":5,"cat":"c","pid":1,"tid":1,"ts":1,"dur":1}
{"ph":"X","name":"n","cat":"c","pid":1,"tid":1,"ts":1,"dur":1,"args":"a"}
{"ph":"X","name":"n","cat":"c","pid":1e400,"tid":1,"ts":1,"dur":1}
{"ph":"XX","name":"n","cat":"c","pid":1,"tid":1,"ts":1,"dur":1}
{"ph":"s","id":1.5,"name":"n","cat":"c","pid":1,"tid":1,"ts":1}
{"ph":"X","name":"n","cat":"c","pid":1,"tid":1,"ts":9300000000000000,"dur":1}
EOF

# An element longer than the batches' 32-bit lengths (4 GiB) is refused
# where the walk finds it, at -j 1 and from -j 2 (an element cut by the
# chunks too: 40-byte batches), with one line; a smaller limit for the
# test (CUPTIMERGE_PFT_ELEM_MAX).  The second element is 127 bytes.
printf '{"traceEvents":[{"ph":"X","name":"a","cat":"c","pid":1,"tid":1,"ts":1,"dur":1},\n{"ph":"X","name":"a long name to pass the limit of one hundred bytes in all ........","cat":"c","pid":1,"tid":1,"ts":2,"dur":1}]}\n' >"$tmp/long.json"
for run in "-j 1" "-j 2" "-j 2 batch"; do
	tcase "an element over the longest taken: refused at the cut, one line ($run)"
	batch=
	case $run in *batch) batch=40 ;; esac
	rm -f "$tmp/long.pftrace"
	expect_exit 1 "=cuptimerge: $tmp/long.pftrace:80: a traceEvents element of 127 bytes cannot be written as Perfetto protobuf (at most 126 bytes)" \
		env CUPTIMERGE_PFT_BATCH=$batch CUPTIMERGE_PFT_ELEM_MAX=126 $CUPTIMERGE ${run% batch} -o "$tmp/long.pftrace" "$tmp/long.json"
	[ ! -e "$tmp/long.pftrace" ] || fail "the file is kept"
	CUPTIMERGE_PFT_BATCH=$batch CUPTIMERGE_PFT_ELEM_MAX=127 $CUPTIMERGE -q ${run% batch} -o "$tmp/long.pftrace" "$tmp/long.json" ||
		fail "at the limit: exit $?"
done

# Every kind of event and arg the format takes (pftrace.sh's), compacted:
# the spaces between tokens taken out, the tokens as they are.
python3 -c 'import re, sys
t = open(sys.argv[1], encoding="utf-8").read()
out = re.sub(r"(\"(?:[^\"\\]|\\.)*\")|\s+", lambda m: m.group(1) or "", t)
open(sys.argv[2], "w", encoding="utf-8").write(out)' "$FIX/pftrace_kinds.json" "$tmp/kinds.json"
echo '{"threads":{}}' >"$tmp/nomap.json"
same_both kinds -t "$tmp/nomap.json" "$tmp/kinds.json"

# Merges: the GPU events rendered compact, the CPU trace's copied.
ex=$shared/oracle/examples
if [ -d "$ex" ]; then
	same_both example $NOW -w "$ex/window.json" "$ex/cpu.json"
else
	skip "oracle example" "no $ex"
fi
if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --seed 11 --ops 400 --edge-cases --quiet "$tmp/edge.cpu" "$tmp/edge.win"
	same_both gen-edge $NOW -w "$tmp/edge.win" "$tmp/edge.cpu"
else
	skip "gen_trace pair" "no $shared/tools/gen_trace"
fi
same_both real $NOW -w "$FIX/threads_window.json" "$FIX/threads_base.json"
same_both repaired -t "$FIX/thread_map.json" "$FIX/threads_full.json"
finish
