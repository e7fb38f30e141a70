# tploads.sh - sourced by cut.sh and split.sh (after common.sh, with $tmp
# and $srcdir set): the checks of an output the two share, Perfetto's trace
# processor's and a comparison as JSON.

# json_same A B: the two documents are equal as JSON.
json_same() {
	python3 -c 'import gzip, json, sys
def load(p):
    raw = open(p, "rb").read()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
sys.exit(load(sys.argv[1]) != load(sys.argv[2]))' "$1" "$2"
}

# perfetto NAME TRACE [CHECKS]: TRACE loads in Perfetto's trace processor with
# no error or data-loss stats, no unclosed slice (dur -1), a slice per X or
# instant event (CHECKS, default "clean slices": tests/perfetto_check.py's;
# skipped without node and the engine, see perfetto.sh).
shared=${SHARED:-$srcdir/../shared}
TP_DIR=${TP_DIR:-${HOME:-/nonexistent}/.cache/perfetto-tp}
export TP_DIR
perfetto() {
	if ! command -v node >/dev/null 2>&1 || [ ! -f "$shared/tools/perfetto/tp.mjs" ] ||
		[ ! -f "$TP_DIR/trace_processor.wasm" ]; then
		skip "$1: loads in Perfetto" "no node, tp.mjs or engine (TP_DIR)"
		return
	fi
	tcase "$1: loads in Perfetto, no error or data-loss stats, no unclosed slice, a slice an event"
	rc=0
	cached node "$shared/tools/perfetto/tp.mjs" "$2" \
		"select 'stat' as tag, name, idx, severity, value from stats where value > 0 and severity in ('error', 'data_loss')" \
		"select 'baddur' as tag, count(*) from slice where dur < 0" \
		"select 'cat' as tag, category, count(*) from slice group by category" >"$tmp/tp.out" 2>"$tmp/tp.err" || rc=$?
	[ $rc -eq 0 ] || fail "$1: tp.mjs exit $rc: $(tail -3 "$tmp/tp.err")"
	for what in ${3:-clean slices}; do
		python3 "$srcdir/tests/perfetto_check.py" $what "$2" "$tmp/tp.out" >"$tmp/check" 2>&1 ||
			fail "$1: $what: $(head -12 "$tmp/check")"
	done
}
