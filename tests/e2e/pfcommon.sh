# pfcommon.sh - what the .pftrace scripts (pftrace.sh, pftmerge.sh,
# pffuzz.sh, pfbe.sh) need before their cases, sourced after common.sh: python3 and
# protoc, Perfetto's schema in ../shared/tools/perfetto ($proto; the script
# is skipped without it), and the trace processor (node, tp.mjs and the
# engine in $TP_DIR, exported for tests/pftrace_check.py): have_tp says
# whether it is there, each script decides what its absence skips; same
# NAME JSON PFTRACE is the case that Perfetto shows the same for both;
# converts NAME FILE [ENV...] the cases of one input converted both ways.
need python3 "to compare traces"
need protoc "to decode .pftrace files (Debian: protobuf-compiler)"
shared=${SHARED:-$srcdir/../shared}
proto=$shared/tools/perfetto/perfetto_trace.proto
[ -f "$proto" ] || skip_all "no $proto"
TPJS=$shared/tools/perfetto/tp.mjs
TP_DIR=${TP_DIR:-${HOME:-/nonexistent}/.cache/perfetto-tp}
have_tp=1
command -v node >/dev/null 2>&1 && [ -f "$TP_DIR/trace_processor.wasm" ] && [ -f "$TPJS" ] || have_tp=0
export TP_DIR TPJS

# same NAME JSON PFTRACE: the case "NAME: Perfetto shows what it shows for
# the JSON" (tests/pftrace_check.py), skipped without the trace processor.
same() {
	if [ $have_tp -eq 0 ]; then
		skip "$1: Perfetto shows what it shows for the JSON" "no node or trace-processor engine in $TP_DIR"
		return
	fi
	tcase "$1: Perfetto shows what it shows for the JSON"
	cached python3 "$srcdir/tests/pftrace_check.py" "$2" "$3" >"$tmp/check" 2>&1 ||
		fail "$1: $(head -12 "$tmp/check")"
}

# converts NAME FILE [ENV...]: FILE written as JSON and as .pftrace (the
# latter with ENV, at -j 1 and -j 3: the same bytes), the .pftrace decoded
# by protoc, and Perfetto shows the same for both.
converts() {
	name=$1 in=$2
	shift 2
	tcase "$name: converts"
	rc=0
	$CUPTIMERGE -q -o "$tmp/$name.json" "$in" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] && { env "$@" $CUPTIMERGE -q -o "$tmp/$name.pftrace" "$in" 2>"$tmp/err" || rc=$?; }
	[ $rc -eq 0 ] && { env "$@" $CUPTIMERGE -q -j 3 -o "$tmp/$name.j3.pftrace" "$in" 2>"$tmp/err" || rc=$?; }
	if [ $rc -ne 0 ]; then
		fail "exit $rc: $(head -c 2000 "$tmp/err")"
		return
	fi
	cmp -s "$tmp/$name.pftrace" "$tmp/$name.j3.pftrace" || fail "-j 3 wrote other bytes than -j 1"
	protoc --decode=perfetto.protos.Trace -I"$(dirname "$proto")" "$proto" <"$tmp/$name.pftrace" \
		>"$tmp/decoded" 2>"$tmp/protoc.err" || fail "protoc: $(head -3 "$tmp/protoc.err")"
	same "$name" "$tmp/$name.json" "$tmp/$name.pftrace"
}
