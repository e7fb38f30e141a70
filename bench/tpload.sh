#!/bin/bash
# bench/tpload.sh TRACE... -- Perfetto's trace processor (v55.3 under Node.js,
# ../shared/tools/perfetto/tp.mjs) loading each TRACE: the seconds of the bytes handed in
# (its tokenizer) and of the end (the sort, then every event parsed into the tables), the whole
# process's wall seconds and peak RSS, and the slices, flows and args it made.  With --strip,
# each .pftrace again without its args and without its flows' packets (bench/pbstrip.py), to
# tell what the load goes on (BENCHMARKS.md "load32").  Prints figures only.
# Needs node and the engine (TP_DIR or $HOME/.cache/perfetto-tp: get-engine.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
shared=${SHARED:-$here/../../shared}
export TP_DIR=${TP_DIR:-$HOME/.cache/perfetto-tp}
strip=0
[ "${1:-}" = --strip ] && { strip=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [--strip] TRACE..." >&2; exit 2; }
command -v node >/dev/null && [ -f "$TP_DIR/trace_processor.wasm" ] ||
	{ echo "tpload.sh: no node or engine in $TP_DIR" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# tp.mjs with a clock around the bytes handed in and one around the end, the file read a chunk
# at a time (tp.mjs reads it whole: Node.js refuses a file over 2 GiB, the 1 GB pair's JSON merge)
sed -e 's|^const bytes = new Uint8Array(readFileSync(tracePath));|import { openSync, readSync, fstatSync } from "node:fs"; const fd = openSync(tracePath, "r"), size = fstatSync(fd).size;|' \
	-e 's|^  for (let o = 0; o < bytes.length; o += CHUNK) await e.parse(bytes.subarray(o, o + CHUNK));|  const T0 = Date.now(); for (let o = 0; o < size; o += CHUNK) { const b = new Uint8Array(Math.min(CHUNK, size - o)); readSync(fd, b, 0, b.length, o); await e.parse(b); } const T1 = Date.now();|' \
	-e 's|^  await e.notifyEof();|  await e.notifyEof(); console.error("TPLOAD " + (T1 - T0) + " " + (Date.now() - T1));|' \
	"$shared/tools/perfetto/tp.mjs" >"$work/tpt.mjs"
[ "$(grep -c 'TPLOAD\|readSync(fd' "$work/tpt.mjs")" = 2 ] || { echo "tpload.sh: tp.mjs changed: no clocks" >&2; exit 1; }
printf '%-28s %8s %8s %8s %8s %9s %9s %8s %9s\n' trace MB "in s" "end s" "wall s" "RSS MB" slices flows args
one() {
	/usr/bin/time -f "%e %M" -o "$work/time" node "$work/tpt.mjs" "$1" "select count(*) from slice" \
		"select count(*) from flow" "select count(*) from args" >"$work/out" 2>"$work/err" || true
	set -- "$1" $(sed -n 's/^TPLOAD //p' "$work/err") $(cat "$work/time") $(sed -n '2p;4p;6p' "$work/out")
	[ $# -eq 8 ] || { echo "$1: no figures ($(tail -1 "$work/err"))"; return; }
	awk -v t="$(basename "$1")" -v b="$(stat -c %s "$1")" -v i="$2" -v e="$3" -v w="$4" -v r="$5" \
		-v sl="$6" -v fl="$7" -v ar="$8" \
		'BEGIN { printf "%-28s %8.1f %8.2f %8.2f %8.2f %9.1f %9s %8s %9s\n", t, b / 1e6, i / 1e3, e / 1e3, w, r / 1024, sl, fl, ar }'
}
for t in "$@"; do
	one "$t"
	case $t in *.pftrace) ;; *) continue ;; esac
	[ $strip = 1 ] || continue
	for m in annot flows; do
		s=$work/$(basename "$t" .pftrace)-no-$m.pftrace
		python3 "$here/pbstrip.py" "$t" "$s" $m
		one "$s"
		rm -f "$s"
	done
done
