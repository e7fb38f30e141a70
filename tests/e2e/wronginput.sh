#!/bin/sh
# wronginput.sh - inputs that do not belong together are refused (exit 1,
# "cuptimerge: FILE: ... (use --force to merge anyway)") or warned about, and
# --force merges them anyway.  Hardening issue: "Wrong inputs must not merge
# silently" (each of these used to merge with status 0).  The bad inputs are
# made here from the fixtures.
. "${srcdir:-.}/tests/e2e/common.sh"

W=$FIX/window.json
C=$FIX/cpu.json
FORCE="(use --force to merge anyway)"

# expect STATUS PATTERN CMD...: a case named by the command: expect_exit
# STATUS PATTERN CMD (common.sh).
expect() {
	tcase "exit $1: $(echo "$*" | sed "s|$tmp/||g; s|$FIX/||g; s|$CUPTIMERGE|cuptimerge|")"
	expect_exit "$@"
}

# refused NAME PATTERN ARGS...: refused with status 1, a one-line message that
# matches PATTERN and ends in the --force hint, and no output; then merged
# with --force (status 0, a warning, a trace), and silently with -q --force.
refused() {
	name=$1 pat=$2
	shift 2
	expect 1 "$pat" $CUPTIMERGE "$@"
	grep -qF -- "$FORCE" "$tmp/err" || fail "$name: no --force hint: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "$name: a refused merge wrote output"
	expect 0 "$pat" $CUPTIMERGE --force "$@"
	grep -q traceEvents "$tmp/out" || fail "$name: --force wrote no trace"
	$CUPTIMERGE -q --force "$@" >"$tmp/qout" 2>"$tmp/err" || fail "$name: -q --force: exit $?"
	[ ! -s "$tmp/err" ] || fail "$name: -q --force is not quiet: $(cat "$tmp/err")"
	cmp -s "$tmp/out" "$tmp/qout" || fail "$name: -q changed the output"
}

# jsonedit IN OUT PYTHON: OUT is IN with PYTHON applied to d (the document).
jsonedit() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))' "$1" "$2" "$3"
}

# ---- no false alarms: every fixture pair merges with nothing on stderr
while read -r name cpu win exp opts <&3; do
	case $name in '' | '#'*) continue ;; esac
	tcase "no false alarm: $name"
	# shellcheck disable=SC2086
	$CUPTIMERGE $opts -w "$FIX/$win" "$FIX/$cpu" >"$tmp/ok.json" 2>"$tmp/err" || fail "$name: exit $?"
	[ ! -s "$tmp/err" ] || fail "$name: a warning for a good pair: $(cat "$tmp/err")"
done 3<"$FIX/cases.txt"

# ---- another process's (rank's) CPU trace: no window pid among the trace's
jsonedit "$C" "$tmp/rank1.json" '
for e in d["traceEvents"]:
    if isinstance(e.get("pid"), int): e["pid"] = {4242: 7777, 9999: 8888}.get(e["pid"], e["pid"])'
refused pid "^cuptimerge: $W: the window's API records come from pid 4242, which has no events in the CPU trace \(pids 7777, 8888\)" \
	-w "$W" "$tmp/rank1.json"

# ---- another run: the same pids, an hour apart
jsonedit "$C" "$tmp/earlier.json" 'd["baseTimeNanoseconds"] -= 3600 * 10**9'
refused time "^cuptimerge: $W: the window's events \(ts 3605000001\.000 to 3605000236\.000 us\) and the CPU trace's \(ts 5000000\.000 to 5000209\.500 us\) do not overlap: not the same run\?" \
	-w "$W" "$tmp/earlier.json"
# ...and a trace without baseTimeNanoseconds merged with the wrong --now
refused now "do not overlap.*no baseTimeNanoseconds: is --now right\?" \
	--now 1800000000 -w "$W" "$FIX/cpu_nobase.json"

# ---- partial overlap: a warning, the merge goes on (the trace's profiler
# span, which counts as the trace's (F24), made as short as its operators)
jsonedit "$C" "$tmp/short.json" '
for e in d["traceEvents"]:
    if e.get("ph") == "X": e["ts"], e["dur"] = 5000000.0, 1.0'
expect 0 "^cuptimerge: $W: 13 of 14 window events lie outside the CPU trace's time span \(ts 5000000\.000 to 5000001\.000 us\)" \
	$CUPTIMERGE -w "$W" "$tmp/short.json"
cp "$tmp/out" "$tmp/short.out"
$CUPTIMERGE -q -w "$W" "$tmp/short.json" >"$tmp/qout" 2>"$tmp/err" || fail "partial overlap -q: exit $?"
[ ! -s "$tmp/err" ] || fail "partial overlap: -q is not quiet: $(cat "$tmp/err")"
cmp -s "$tmp/short.out" "$tmp/qout" || fail "partial overlap: -q changed the output"

# ---- GPU events already in the CPU trace: a full CPU+CUDA Kineto trace
refused full "^cuptimerge: $FIX/threads_full.json: it already holds 92 GPU events \(kernel, gpu_memcpy, gpu_memset\): a full CPU\+CUDA trace\?" \
	-w "$FIX/threads_window.json" "$FIX/threads_full.json"

# ---- an already merged trace merged again
refused merged "^cuptimerge: $FIX/expected.json: already merged \(it holds the GPU rows cuptimerge writes and 5 GPU events\)" \
	-w "$W" "$FIX/expected.json"
# ...also when its window had no kernels, copies or memsets (API rows only)
jsonedit "$W" "$tmp/apionly.json" '
d["events"] = [e for e in d["events"] if e.get("kind") not in ("kernel", "gpu_memcpy", "gpu_memset")]'
$CUPTIMERGE -w "$tmp/apionly.json" "$C" >"$tmp/merged1.json" 2>"$tmp/err" || fail "API-only window: exit $?"
refused merged-api "^cuptimerge: $tmp/merged1.json: already merged \(it holds the GPU rows cuptimerge writes\)" \
	-w "$tmp/apionly.json" "$tmp/merged1.json"

# ---- CUDA API rows in the CPU trace (torch's CPU activity set records them): a warning
jsonedit "$FIX/threads_full.json" "$tmp/cpuapi.json" '
d["traceEvents"] = [e for e in d["traceEvents"]
                    if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "overhead")
                    and e.get("ph") not in ("s", "f")]'
expect 0 "^cuptimerge: $tmp/cpuapi.json: it already holds 141 CUDA API events \(cuda_runtime, cuda_driver\)" \
	$CUPTIMERGE -w "$FIX/threads_window.json" "$tmp/cpuapi.json"

# ---- the shape of the documents: a window as the CPU trace, the two swapped,
# a trace as the window
refused window-as-cpu "^cuptimerge: $W: a trace window \(top-level \"events\", no \"traceEvents\"\), not a Chrome trace" \
	-w "$W" "$W"
expect 1 "^cuptimerge: $C: window: no \"events\" member: this is a Chrome trace \(\"traceEvents\"\), not a trace window: are the window and the CPU trace swapped\?" \
	$CUPTIMERGE -w "$C" "$W"
expect 1 "^cuptimerge: $C: window: no \"events\" member: this is a Chrome trace" $CUPTIMERGE -w "$C" "$C"
jsonedit "$W" "$tmp/both.json" 'd["traceEvents"] = []'
refused both "^cuptimerge: $tmp/both.json: window: it has a \"traceEvents\" member, as a Chrome trace has: not a trace window\?" \
	-w "$tmp/both.json" "$C"

# ---- an option given twice is a usage error (the second used to win silently)
expect 2 "^cuptimerge: option given more than once: -w/--window" $CUPTIMERGE -w "$W" -w "$W" "$C"
expect 2 "^cuptimerge: option given more than once: -w/--window" $CUPTIMERGE --window="$W" -w "$W" "$C"
expect 2 "^cuptimerge: option given more than once: -t/--thread-map" $CUPTIMERGE -t "$W" -t "$W" -w "$W" "$C"
expect 2 "^cuptimerge: option given more than once: -o/--output" $CUPTIMERGE -o "$tmp/a" -o "$tmp/b" -w "$W" "$C"
[ ! -e "$tmp/a" ] && [ ! -e "$tmp/b" ] || fail "-o twice: a file was written"

# ---- other compressors: named, not "invalid JSON"; any read size, any slot
printf '\050\265\057\375\004\000junk' >"$tmp/c.zst"
printf 'BZh91AY&SYjunk' >"$tmp/c.bz2"
printf '\375\067\172\130\132\000junk' >"$tmp/c.xz"
printf '\004\042\115\030junk' >"$tmp/c.lz4"
for z in "zst zstd" "bz2 bzip2" "xz xz" "lz4 lz4"; do
	set -- $z
	msg="$2-compressed input is not supported; decompress it first ($2 -dc)"
	expect 1 "=cuptimerge: $tmp/c.$1: $msg" $CUPTIMERGE -w "$W" "$tmp/c.$1"
	expect 1 "=cuptimerge: $tmp/c.$1: $msg" $CUPTIMERGE --buffer-size 1 -w "$tmp/c.$1" "$C"
	expect 1 "=cuptimerge: <stdin>: $msg" $CUPTIMERGE --buffer-size 2 -w "$W" <"$tmp/c.$1"
	expect 1 "=cuptimerge: $tmp/c.$1: $msg" $CUPTIMERGE -t "$tmp/c.$1" "$C"
done
# a few bytes that only start like one are still JSON errors
printf 'BZ' >"$tmp/short.bz"
expect 1 "invalid JSON|truncated JSON" $CUPTIMERGE -w "$W" "$tmp/short.bz"

# ---- --force is documented
tcase "--help lists --force"
$CUPTIMERGE --help | grep -q -- "--force" || fail "--help lacks --force"
finish
