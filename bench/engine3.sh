#!/bin/bash
# bench/engine3.sh -- every figure of issue 30's targets table (Engine v3), in one run.
#
# Usage: bench/engine3.sh [--size 1G] [--sizes "200M 1G"] [--seed N] [--repeat N]
#                         [--jobs "1 2 4 8 12 16 24"] [--cuptimerge PATH] [--carry DIR]
#                         [--pipe SIZE] [--pipe-limit SECONDS] [--pipe-only] [--base PATH]
#
# For the largest size (the 1 GB pair: gen_trace --pretty --devices 2, 2,520,000 ops a GB,
# generated once into $BENCH_DIR/inputs as bench/bench.sh does, so both scripts share it):
#   -o /dev/null at the default -j, -o out.json (atomic, not synced: the default), > out.json
#   (a shell redirect), -o out.json --sync (durable: write-back started early, fsync before the
#   name), the same with CUPTIMERGE_WRITEBACK=0 (the fsync at the end doing all the writing),
#   -o out.json.gz,
#   the same -o /dev/null and -o out.json under taskset on two CPUs, -j N for each --jobs
#   count (the scaling curve), json_reformat -m on the CPU trace (the yardstick), and dd of
#   the output's size to the output's disk (through the page cache, and with conv=fsync);
#   after the table, the -v lines of one run at the default -j and one at -j 2 (how fast
#   each cutting thread cut, in GB of text a CPU second of its own: the read's limit) and
#   their peak RSS, and bench/cut-bench (the splitter alone) on each input when it is built
#   (or CARRY/cut-bench);
# for each smaller size in --sizes: -o /dev/null under taskset on two CPUs and json_reformat.
# Each row runs --repeat times (default 3), the rows taking turns (round 1 of every row,
# then round 2, ...), so that a noisy minute hits every row alike; the table shows the
# fastest and the median.  Before each timed run the disk is synced (untimed), so that one
# run's dirty pages are not another's cost.
# At the end the targets of issue 30 as ratios of rows of this run: met / not met.
# --base PATH: an older binary (issue 30's "today" was 718cce1) whose default -j -o /dev/null
#   runs in the same rounds, for the target "0.6x today's time in the same run".
# --pipe SIZE (e.g. 10G): also the streaming case zcat | cuptimerge | gzip -1 on a pair of
#   SIZE made gzip'd by gen_trace (cached; generation at about 30k ops/s takes ~14 min for
#   10G, so run it once alone first: it stops at --pipe-limit and says so), each step under
#   timeout --pipe-limit (default 540 s); it reports how far it got (bytes out) and the peak
#   RSS.  --pipe-only: that case alone (no table), e.g. in a call of its own on the GPU machine.
# --carry DIR: run from a folder of binaries on a machine without packages (the 16-core GPU
#   machine; bench/gpu-machine.sh says what goes in it): DIR/cuptimerge, DIR/lib,
#   DIR/json_reformat, DIR/time, DIR/shared/tools/gen_trace, and DIR/cut-bench if wanted.
# Timing is the shell's clock around each command; peak RSS from GNU time where there is
# one.  It never asserts a timing: exit 1 only when a command failed, 2 for usage.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
PIPE_ONLY=0 SIZES="" SIZE=1G SEED=1 REPEAT=3 JOBS="1 2 4 8 12 16 24" CARRY="" PIPE="" PIPE_LIMIT=540
CM="" BASE=""
usage() { sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--size) SIZE=$2; shift 2 ;;
	--sizes) SIZES=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	--cuptimerge) CM=$2; shift 2 ;;
	--base) BASE=$2; shift 2 ;;
	--carry) CARRY=$(cd "$2" && pwd); shift 2 ;;
	--pipe) PIPE=$2; shift 2 ;;
	--pipe-limit) PIPE_LIMIT=$2; shift 2 ;;
	--pipe-only) PIPE_ONLY=1; shift ;;
	-h|--help) usage 0 ;;
	*) echo "engine3.sh: unknown argument: $1" >&2; usage ;;
	esac
done
die() { echo "engine3.sh: $*" >&2; exit 2; }
case $REPEAT in ''|*[!0-9]*|0) die "--repeat needs a count >= 1: $REPEAT" ;; esac
[ -n "$SIZES" ] || SIZES=$SIZE
if [ -n "$CARRY" ]; then
	export LD_LIBRARY_PATH="$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	SHARED=$CARRY/shared JSON_REFORMAT=$CARRY/json_reformat
	[ -x /usr/bin/time ] || [ ! -x "$CARRY/time" ] || install -m 755 "$CARRY/time" /usr/bin/time
	[ -n "$CM" ] || CM=$CARRY/cuptimerge
fi
[ -n "$CM" ] || CM=$top/src/cuptimerge
[ -x "$CM" ] || die "$CM: not executable (build it, or pass --cuptimerge PATH)"
if [ -z "${SHARED:-}" ]; then
	if [ -d "$top/shared/tools" ]; then SHARED=$top/shared; else SHARED=$(cd "$top/.." && pwd)/shared; fi
fi
GEN=$SHARED/tools/gen_trace
[ -x "$GEN" ] || die "$GEN: not found (set SHARED=DIR)"
JR=${JSON_REFORMAT:-$(command -v json_reformat || true)}
[ -x "$JR" ] || { echo "engine3.sh: warning: no json_reformat (yajl-tools): its rows are skipped" >&2; JR=""; }
GT=""
[ -x /usr/bin/time ] && GT=/usr/bin/time
BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench}
mkdir -p "$BENCH_DIR/inputs"
WORK=$(mktemp -d "$BENCH_DIR/engine3.XXXXXX")
export TMPDIR=$WORK
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
cp "$CM" "$WORK/cuptimerge"  # a rebuild meanwhile does not change what is measured
CMB=$WORK/cuptimerge
if [ -n "$BASE" ]; then
	[ -x "$BASE" ] || die "$BASE: not executable"
	cp "$BASE" "$WORK/cuptimerge-base"
fi
CMBASE=$WORK/cuptimerge-base
FAILED=0
# the first two CPUs this shell may use ("0-15" -> 0,1; "3,5-7" -> 3,5)
two=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //' | awk -F, '{ for (i = 1; i <= NF && n < 2; i++) {
	split($i, r, "-"); for (c = r[1]; c <= (r[2] == "" ? r[1] : r[2]) && n < 2; c++) o = o (n++ ? "," : "") c }
	print o }')
[ -n "$two" ] || two=0,1

size_bytes() {
	awk -v s="$1" 'BEGIN { n = s + 0; u = toupper(substr(s, length(s)))
		if (u == "K") n *= 1e3; else if (u == "M") n *= 1e6; else if (u == "G") n *= 1e9
		if (n <= 0) exit 1; printf "%.0f\n", n }' || die "bad size: $1"
}
# pair SIZE [gz]: set cpu, win (and dir) of SIZE's pair, generating it once (bench.sh's layout)
pair() {
	local ops
	ops=$(awk -v b="$(size_bytes "$1")" 'BEGIN { printf "%.0f", b * 2520000 / 1e9 }')
	if [ "${2:-}" = gz ]; then
		dir=$BENCH_DIR/inputs/huge-seed$SEED-ops$ops-dev2-pretty-gz cpu=$dir/cpu.json.gz win=$dir/win.json.gz
	else
		dir=$BENCH_DIR/inputs/$1-seed$SEED-ops$ops-dev2-pretty cpu=$dir/cpu.json win=$dir/win.json
	fi
	[ -s "$cpu" ] && [ -s "$win" ] && return 0
	mkdir -p "$dir"
	echo "  generating $1 (gen_trace --seed $SEED --ops $ops --pretty --devices 2) ..."
	local part=""
	[ "${2:-}" = gz ] && part=.gz
	timeout "${GEN_LIMIT:-100000}" "$GEN" --seed "$SEED" --ops "$ops" --pretty --devices 2 --quiet \
		"$dir/cpu.part$part" "$dir/win.part$part" || { echo "  gen_trace failed or ran out of time"; return 1; }
	mv "$dir/win.part$part" "$win"
	mv "$dir/cpu.part$part" "$cpu"
}

ROWS=() CMDS=()
row() { ROWS+=("$1"); CMDS+=("$2"); }
# run the command line $2 once, timed: the wall seconds go to $WORK/t.<row>
run1() {
	local i=$1 t0 t1 rc=0
	rm -f "$WORK/out.json" "$WORK/out.json.gz" "$WORK/redirect.json"
	sync
	t0=$(date +%s.%N)
	eval "${CMDS[$i]}" > /dev/null 2> "$WORK/err" || rc=$?
	t1=$(date +%s.%N)
	if [ "$rc" != 0 ]; then
		echo "  FAILED (exit $rc): ${ROWS[$i]}: ${CMDS[$i]}"; sed -n '1,5s/^/    /p' "$WORK/err"
		FAILED=1
		return 0
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >> "$WORK/t.$i"
}
# best/median of row I, or empty
best() { [ -s "$WORK/t.$1" ] && sort -n "$WORK/t.$1" | head -n 1 || true; }
median() { [ -s "$WORK/t.$1" ] && sort -n "$WORK/t.$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }' || true; }
find_row() { local i; for i in "${!ROWS[@]}"; do [ "${ROWS[$i]}" = "$1" ] && { best "$i"; return 0; }; done; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b }' || true; }

echo "# engine3.sh: issue 30's figures, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1))," \
	"load $(cut -d ' ' -f 1-3 /proc/loadavg); two CPUs for taskset: $two"
echo "binary:  $CM ($("$CMB" --version | head -n 1)); repeat $REPEAT, rows taking turns"
[ -z "$BASE" ] || echo "base:    $BASE"
[ "$PIPE_ONLY" = 0 ] || [ -n "$PIPE" ] || die "--pipe-only needs --pipe SIZE"
[ "$PIPE_ONLY" = 0 ] || SIZES=""
LARGEST="" lb=0
for s in $SIZES; do b=$(size_bytes "$s"); [ "$b" -gt "$lb" ] && LARGEST=$s lb=$b; done
for s in $SIZES; do
	pair "$s" || { FAILED=1; continue; }
	c="-w '$win' '$cpu'"
	echo "inputs $s: CPU trace $(stat -c %s "$cpu") B, window $(stat -c %s "$win") B ($dir)"
	cat "$cpu" "$win" > /dev/null
	row "$s taskset -o /dev/null" "taskset -c $two \"\$CMB\" -o /dev/null $c"
	[ -z "$JR" ] || row "$s json_reformat -m" "\"\$JR\" -m < '$cpu'"
	[ "$s" = "$LARGEST" ] || continue
	row "$s -o /dev/null" "\"\$CMB\" -o /dev/null $c"
	[ -z "$BASE" ] || row "$s -o /dev/null, base" "\"\$CMBASE\" -o /dev/null $c"
	row "$s -o out.json" "\"\$CMB\" -o \"\$WORK/out.json\" $c"
	row "$s > out.json" "\"\$CMB\" $c > \"\$WORK/redirect.json\""
	row "$s -o out.json --sync" "\"\$CMB\" --sync -o \"\$WORK/out.json\" $c"
	row "$s -o out.json --sync, write-back off" "CUPTIMERGE_WRITEBACK=0 \"\$CMB\" --sync -o \"\$WORK/out.json\" $c"
	row "$s -o out.json.gz" "\"\$CMB\" -o \"\$WORK/out.json.gz\" $c"
	row "$s taskset -o out.json" "taskset -c $two \"\$CMB\" -o \"\$WORK/out.json\" $c"
	for j in $JOBS; do row "$s -j $j" "\"\$CMB\" -j $j -o /dev/null $c"; done
	outb=$("$CMB" -w "$win" -o "$WORK/out.json" "$cpu" && stat -c %s "$WORK/out.json")
	echo "output $s: $outb B"
	mb=$(( (outb + 8388607) / 8388608 ))
	row "$s dd output size (page cache)" "dd if=/dev/zero of=\"\$WORK/out.json\" bs=8M count=$mb 2>/dev/null"
	row "$s dd output size, conv=fsync" "dd if=/dev/zero of=\"\$WORK/out.json\" bs=8M count=$mb conv=fsync 2>/dev/null"
done
for r in $(seq "$REPEAT"); do
	[ "${#ROWS[@]}" -gt 0 ] || break
	for i in "${!ROWS[@]}"; do run1 "$i"; done
	echo "  round $r of $REPEAT done, load $(cut -d ' ' -f 1 /proc/loadavg)"
done
if [ "${#ROWS[@]}" -gt 0 ]; then
echo
printf '| %-40s | %8s | %8s | %s\n' run "best s" "median s" "all s"
for i in "${!ROWS[@]}"; do
	printf '| %-40s | %8s | %8s | %s\n' "${ROWS[$i]}" "$(best "$i")" "$(median "$i")" \
		"$( [ -s "$WORK/t.$i" ] && paste -sd' ' "$WORK/t.$i" || true)"
done

# ---- targets (issue 30), on the best of each row ----
L=$LARGEST
dn=$(find_row "$L -o /dev/null") of=$(find_row "$L -o out.json") rd=$(find_row "$L > out.json")
os=$(find_row "$L -o out.json --sync")
ts=$(find_row "$L taskset -o /dev/null")
echo
echo "| target | measured | limit | verdict |"
verdict() { # NAME VALUE OP LIMIT
	local v="n/a"
	[ -z "$2" ] || { awk -v v="$2" -v o="$3" -v l="$4" 'BEGIN { exit !(o == ">=" ? v >= l : v <= l) }' &&
		v=met || v="NOT MET"; }
	printf '| %s | %s | %s %s | %s |\n' "$1" "${2:-not measured}" "$3" "$4" "$v"
}
verdict "$L: -o out.json / > out.json" "$(ratio "$of" "$rd")" "<=" 1.10
# for information: what durability costs (--sync is opt-in; the target is the default -o's)
echo "| ($L: -o out.json --sync / > out.json, for information) | $(ratio "$os" "$rd") | | |"
verdict "$L: default -j, -o /dev/null (s)" "$dn" "<=" 1.20
[ -z "$BASE" ] || verdict "$L: default -j, -o /dev/null / the base's ($BASE)" \
	"$(ratio "$dn" "$(find_row "$L -o /dev/null, base")")" "<=" 0.60
verdict "$L: taskset two CPUs / default -j" "$(ratio "$ts" "$dn")" ">=" 5.0
for s in $SIZES; do
	verdict "$s, two CPUs: json_reformat -m / merge" \
		"$(ratio "$(find_row "$s json_reformat -m")" "$(find_row "$s taskset -o /dev/null")")" ">=" 1.6
done
prev=""
curve=""
for j in $JOBS; do
	t=$(find_row "$L -j $j")
	curve="$curve -j$j ${t:-?}"
	[ "$j" -le 16 ] && [ -n "$prev" ] && [ -n "$t" ] && awk -v a="$t" -v b="$prev" 'BEGIN { exit !(a >= b) }' &&
		curve="$curve (no gain)"
	[ -z "$t" ] || prev=$t
done
echo "scaling (s):$curve"
# the read's pace: one more default -j run with -v, its cutting threads' rates (GB of text a
# CPU second of the thread that cuts: the read can go no faster) and where the threads' time went
pair "$L" > /dev/null || true  # its cpu and win (cached: made above)
c="-w '$win' '$cpu'"
for j in "" "-j 2"; do
	echo
	echo "-v of $L ${j:-(default -j)}, -o /dev/null (peak RSS from GNU time):"
	eval "${GT:+\"\$GT\" -f 'peak RSS %M KB'} \"\$CMB\" -v $j -o /dev/null $c" 2>&1 |
		grep -E '^cuptimerge: (time|threads|cut):|peak RSS' | sed 's/^/  /' || true
done
# the splitter alone (bench/cut-bench, `make bench/cut-bench`; CARRY/cut-bench on the GPU
# machine): its thread's CPU seconds for each input, the workers doing nothing
CB=${CARRY:+$CARRY/cut-bench}
[ -n "$CB" ] && [ -x "$CB" ] || CB=$top/bench/cut-bench
if [ -x "$CB" ]; then
	echo
	echo "cut-bench, the splitter alone (4 workers that do nothing), 3 runs each:"
	"$CB" --jobs 4 --repeat 3 "$win" "$cpu" | sed 's/^/  /' || FAILED=1
fi
fi

# ---- the streaming pipe (optional) ----
if [ -n "$PIPE" ]; then
	echo
	echo "## $PIPE pair, gzip'd: zcat cpu | cuptimerge -w <(zcat win) - | gzip -1, limit $PIPE_LIMIT s a step"
	if GEN_LIMIT=$PIPE_LIMIT pair "$PIPE" gz; then
		echo "inputs: $(stat -c %s "$cpu") + $(stat -c %s "$win") B gzip'd"
		export WORK CMB GT
		t0=$(date +%s.%N) rc=0
		timeout "$PIPE_LIMIT" bash -c 'set -o pipefail; zcat "$1" | ${GT:+$GT -f "peak RSS %M KB" -o "$WORK/pipe.rss"} \
			"$CMB" -v -w <(zcat "$2") - 2> "$WORK/pipe.err" | gzip -1 > "$WORK/pipe.json.gz"' _ "$cpu" "$win" || rc=$?
		t1=$(date +%s.%N)
		echo "exit $rc after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s" \
			"($([ "$rc" = 124 ] && echo "stopped by the limit" || echo finished));" \
			"$(stat -c %s "$WORK/pipe.json.gz") B of gzip output; $(cat "$WORK/pipe.rss" 2>/dev/null || true)"
		grep -E "time:|error" "$WORK/pipe.err" | sed 's/^/  /' || true
		[ "$rc" = 0 ] || [ "$rc" = 124 ] || FAILED=1
	else
		echo "the pair was not made within the limit: run the same command again (generation starts again from the beginning)"
	fi
fi
exit "$FAILED"
