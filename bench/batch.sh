#!/bin/bash
# bench/batch.sh -- cuptimerge-batch at scale (issue 9, "Scale"): many small ranks, and a
# few large ones with -j set to the cores.
#
# Usage: bench/batch.sh [--ranks N] [--ops K] [--no-small] [--big] [--big-ranks M]
#                       [--big-size SIZE] [--repeat N] [--seed N]
#                       [--cuptimerge PATH] [--batch PATH]
#
# Small ranks (default; --no-small skips them): N ranks (default 1024) of K profiled ops
# each (default 300: a ~113 KB CPU trace and a ~177 KB window). Timed, in the same run,
# with /usr/bin/time -f "%e %M" (wall seconds, peak RSS KB):
#   cuptimerge-batch -n (the plan alone: reading every head and window, pairing),
#   cuptimerge-batch with its default -j (the online processors) and with -j 1,
#   the merges alone: the same cuptimerge command lines, read from the batch's plan, in a
#   plain bash loop (sequential) and through xargs -P $(nproc) (sh -c per merge),
# and prints ranks/second and the overhead per rank: (batch - merges alone) / N, -j 1
# against the loop, the default -j against xargs -P nproc.
# --big: M ranks (default 64) of SIZE each (default 100M of CPU trace; the window is ~1.5x
# that), merged with cuptimerge-batch -j $(nproc): total wall time, seconds per rank,
# the largest merge's peak RSS (the joblog's peak_rss_kb column), the %M of time (on Linux
# the largest single process of the tree: the driver or a reaped merge, not their sum),
# and the tree's summed RSS sampled every 0.1 s (driver + running merges).
#
# The ranks are made cheaply, as tests/e2e/batch.sh does: one pair from
# $SHARED/tools/gen_trace (--pretty --devices 2; 2,520,000 ops per GB of CPU trace), then N
# copies: the trace as traces/node{r}_{pid}.1759300079000.pt.trace.json (torch's
# tensorboard_trace_handler() name, so the host comes from the file name) and the window
# with a "source" {"host": "node{r}", "pid", "rank"} appended, as windows/w{r}.json: every
# rank has the same pid, and the host alone pairs them. Cached under $BENCH_DIR (default
# /tmp/cuptimerge-bench/batch); 64 x 100M needs ~16 GB there.
#
# It prints figures and never asserts timings; exit 1 when a measured command failed,
# 2 for a usage or setup error. --repeat N keeps the fastest of N runs of each command.
# Environment: BENCH_DIR, SHARED (default shared/ in the checkout, else ../shared),
# KEEP=1 keeps the work dir (the outputs).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

RANKS=1024
OPS=300
SMALL=1
BIG=0
BIG_RANKS=64
BIG_SIZE=100M
REPEAT=1
SEED=1
CM="" BATCH=""
for c in "$top/src" "$top/build/src" "$top/build-dev/src"; do
	if [ -x "$c/cuptimerge-batch" ] && [ -x "$c/cuptimerge" ]; then
		CM=$c/cuptimerge BATCH=$c/cuptimerge-batch
		break
	fi
done
BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench/batch}
if [ -z "${SHARED:-}" ]; then
	if [ -d "$top/shared/tools" ]; then SHARED=$top/shared; else SHARED=$(cd "$top/.." && pwd)/shared; fi
fi

usage() {
	sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-2}"
}
die() { echo "batch.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--ranks) RANKS=$2; shift 2 ;;
	--ranks=*) RANKS=${1#*=}; shift ;;
	--ops) OPS=$2; shift 2 ;;
	--ops=*) OPS=${1#*=}; shift ;;
	--no-small) SMALL=0; shift ;;
	--big) BIG=1; shift ;;
	--big-ranks) BIG_RANKS=$2; shift 2 ;;
	--big-ranks=*) BIG_RANKS=${1#*=}; shift ;;
	--big-size) BIG_SIZE=$2; shift 2 ;;
	--big-size=*) BIG_SIZE=${1#*=}; shift ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--repeat=*) REPEAT=${1#*=}; shift ;;
	--seed) SEED=$2; shift 2 ;;
	--seed=*) SEED=${1#*=}; shift ;;
	--cuptimerge) CM=$2; shift 2 ;;
	--cuptimerge=*) CM=${1#*=}; shift ;;
	--batch) BATCH=$2; shift 2 ;;
	--batch=*) BATCH=${1#*=}; shift ;;
	-h|--help) usage 0 ;;
	*) echo "batch.sh: unknown argument: $1" >&2; usage ;;
	esac
done

for v in RANKS OPS BIG_RANKS REPEAT SEED; do
	case ${!v} in ''|*[!0-9]*) die "--$(echo "$v" | tr 'A-Z_' 'a-z-') needs a number: ${!v}" ;; esac
done
[ "$RANKS" -ge 1 ] && [ "$BIG_RANKS" -ge 1 ] && [ "$REPEAT" -ge 1 ] || die "counts must be >= 1"
GEN="$SHARED/tools/gen_trace"
[ -n "$CM" ] && [ -n "$BATCH" ] || die "no build tree with cuptimerge and cuptimerge-batch: pass --cuptimerge and --batch"
[ -x "$CM" ] || die "$CM: not executable"
[ -x "$BATCH" ] || die "$BATCH: not executable"
[ -x "$GEN" ] || die "$GEN: not found (set SHARED=DIR)"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed: apt-get install time"
command -v python3 >/dev/null || die "python3 is needed to copy the ranks"

size_bytes() {
	awk -v s="$1" 'BEGIN {
		n = s + 0; u = toupper(substr(s, length(s)))
		if (u == "K") n *= 1e3; else if (u == "M") n *= 1e6; else if (u == "G") n *= 1e9
		if (n <= 0) exit 1
		printf "%.0f\n", n }' || die "bad size: $1"
}

NPROC=$(nproc)
mkdir -p "$BENCH_DIR"
WORK=$(mktemp -d "$BENCH_DIR/run.XXXXXX")
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then echo "KEEP=1: work dir kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# measure a snapshot of the binaries: the build tree may be rebuilt meanwhile; the batch
# runs the cuptimerge beside it
mkdir "$WORK/bin"
cp "$CM" "$WORK/bin/cuptimerge"
cp "$BATCH" "$WORK/bin/cuptimerge-batch"
CM_ORIG=$CM BATCH_ORIG=$BATCH
CM=$WORK/bin/cuptimerge BATCH=$WORK/bin/cuptimerge-batch
export TMPDIR=$WORK
FAILED=0

# make_ranks DIR COUNT OPS: DIR/traces and DIR/windows with COUNT ranks copied from one
# gen_trace pair of OPS ops; DIR/.complete once done (a half-made cache is made again)
make_ranks() {
	local d=$1 n=$2 ops=$3 t0
	if [ -e "$d/.complete" ]; then
		echo "ranks: cached in $d"
		return 0
	fi
	rm -rf "$d"
	mkdir -p "$d/base" "$d/traces" "$d/windows"
	t0=$(date +%s.%N)
	"$GEN" --seed "$SEED" --ops "$ops" --pretty --devices 2 --quiet "$d/base/cpu.json" "$d/base/win.json"
	python3 - "$d" "$n" <<'PY'
import os, re, shutil, sys
d, n = sys.argv[1], int(sys.argv[2])
cpu, win = d + "/base/cpu.json", d + "/base/win.json"
with open(win, "rb") as f:
    body = f.read()
# the maps come last: the process id is the thread_resource_map's only key
m = re.search(rb'"thread_resource_map":\s*\{\s*"(\d+)"', body[-1 << 20:])
if not m:
    sys.exit("batch.sh: no pid in the window's thread_resource_map")
pid = int(m.group(1))
body = body.rstrip()
assert body.endswith(b"}")
body = body[:-1].rstrip()
for r in range(n):
    host = "node%04d" % r
    shutil.copyfile(cpu, "%s/traces/%s_%d.1759300079000.pt.trace.json" % (d, host, pid))
    with open("%s/windows/w%04d.json" % (d, r), "wb") as f:
        f.write(body)
        f.write(b',\n"source": {"host": "%s", "pid": %d, "rank": %d, "rank_from": "RANK"}\n}\n'
                % (host.encode(), pid, r))
PY
	rm -rf "$d/base"
	touch "$d/.complete"
	echo "ranks: made $n in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s in $d"
}

# measure LABEL CMD: run CMD (a shell command line, evaluated here) $REPEAT times under
# /usr/bin/time, each after "$PRE" (evaluated, untimed); keep the fastest; set W and M
# (wall s, peak RSS KB), and record LABEL in $WORK/results.tsv
PRE=:
measure() {
	local label=$1 cmd=$2 w m rc
	W="" M=""
	for _ in $(seq "$REPEAT"); do
		eval "$PRE"
		rc=0
		eval "/usr/bin/time -f '%e %M' -o \"\$WORK/time.txt\" $cmd" >"$WORK/last.out" 2>"$WORK/last.err" || rc=$?
		if [ "$rc" != 0 ]; then
			FAILED=1
			printf '  %-46s FAILED: exit %s\n    command: %s\n' "$label" "$rc" "$cmd"
			sed -n '1,10s/^/    stderr: /p' "$WORK/last.err"
			W="" M=""
			return 0
		fi
		read -r w m < <(tail -n 1 "$WORK/time.txt")
		if [ -z "$W" ] || awk -v a="$w" -v b="$W" 'BEGIN { exit !(a < b) }'; then W=$w M=$m; fi
	done
	printf '  %-46s %8.2f s %9.1f MB peak RSS\n' "$label" "$W" "$(awk -v m="$M" 'BEGIN { print m / 1024 }')"
	printf '%s\t%s\t%s\n' "$label" "$W" "$M" >>"$WORK/results.tsv"
}
# joblog_stats JOBLOG: "merged max_rss_kb sum_seconds max_seconds" of the ranks that ran
joblog_stats() {
	awk -F '\t' 'NR > 1 && $5 == "0" && $6 > 0 { n++; s += $6; if ($6 > ms) ms = $6; if ($7 > m) m = $7 }
		END { printf "%d %d %.3f %.3f\n", n, m, s, ms }' "$1"
}
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { if (b != 0) printf f, a / b; else print "-" }'; }
kmb() { awk -v m="$1" 'BEGIN { printf "%.1f", m / 1024 }'; }

echo "# cuptimerge-batch benchmark (issue 9)"
echo "date:       $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host:       $(uname -n), $NPROC CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1))"
echo "memory:     $(awk '/^MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo)"
echo "load:       $(cut -d ' ' -f 1-3 /proc/loadavg) (1, 5, 15 min) at the start"
echo "cuptimerge: $CM_ORIG ($("$CM" --version 2>&1 | head -1))"
echo "batch:      $BATCH_ORIG"
if command -v git >/dev/null && git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	echo "commit:     $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- src 2>/dev/null || echo ' (src modified)')"
fi
echo "repeat:     $REPEAT (fastest kept)"
echo

if [ "$SMALL" = 1 ]; then
	D="$BENCH_DIR/small-n$RANKS-ops$OPS-seed$SEED"
	echo "## $RANKS small ranks, $OPS ops each"
	make_ranks "$D" "$RANKS" "$OPS"
	tb=$(stat -c %s "$(ls "$D"/traces/* | head -1)")
	wb=$(stat -c %s "$(ls "$D"/windows/* | head -1)")
	echo "each rank: CPU trace $(div "$tb" 1000 %.1f) KB, window $(div "$wb" 1000 %.1f) KB"
	echo "load:       $(cut -d ' ' -f 1-3 /proc/loadavg) before the timings"
	O=$WORK/out
	# the plan gives the pairs for the merges alone
	"$BATCH" -q -n -O "$O" "$D/traces" "$D/windows" >"$WORK/plan.tsv" || die "the dry run failed: exit $?"
	np=$(awk -F '\t' '$5 == "merge"' "$WORK/plan.tsv" | wc -l)
	[ "$np" = "$RANKS" ] || die "the plan pairs $np of $RANKS ranks: $(grep -v '	merge$' "$WORK/plan.tsv" | head -3)"
	awk -F '\t' '$5 == "merge" { n = $2; sub(/.*\//, "", n); print n; print $3; print $2; print $4 }' \
		"$WORK/plan.tsv" >"$WORK/pairs"
	export CM O
	PRE='rm -rf "$O"'
	measure "batch -n (plan only, no merge)" \
		'"$BATCH" -q -n -O "$O" "$D/traces" "$D/windows" >/dev/null'
	plan_w=$W plan_m=$M
	measure "batch -j 1" '"$BATCH" -q --no-progress -j 1 -O "$O" "$D/traces" "$D/windows"'
	b1_w=$W b1_m=$M
	read -r n1 _ j1_sum _ < <(joblog_stats "$O/cuptimerge-batch.tsv")
	measure "batch (default -j: $NPROC)" '"$BATCH" -q --no-progress -O "$O" "$D/traces" "$D/windows"'
	bj_w=$W bj_m=$M
	read -r _ jj_m _ _ < <(joblog_stats "$O/cuptimerge-batch.tsv")
	mkdir -p "$WORK/keep" && cp "$O"/*.merged.json.gz "$WORK/keep/"
	PRE='rm -rf "$O"; mkdir -p "$O"'
	# shellcheck disable=SC2016
	measure "merges alone: bash loop (sequential)" \
		'bash -c '\''while IFS= read -r n && IFS= read -r w && IFS= read -r t && IFS= read -r o; do
			"$CM" --no-progress --trace-name "$n" -w "$w" -o "$o" "$t" || exit; done'\'' <"$WORK/pairs"'
	s_w=$W
	# shellcheck disable=SC2016
	measure "merges alone: xargs -P $NPROC" \
		'xargs -d "\n" -n 4 -P "$NPROC" sh -c '\''exec "$0" --no-progress --trace-name "$1" -w "$2" -o "$4" "$3"'\'' "$CM" <"$WORK/pairs"'
	x_w=$W
	same=0
	for f in "$WORK"/keep/*.merged.json.gz; do cmp -s "$f" "$O/${f##*/}" && same=$((same + 1)); done
	echo "load:       $(cut -d ' ' -f 1-3 /proc/loadavg) after the timings"
	echo
	echo "### Figures ($RANKS ranks)"
	[ -n "$b1_w" ] && printf '  %-52s %s\n' "ranks/s, batch -j 1:" "$(div "$RANKS" "$b1_w" %.1f)"
	[ -n "$bj_w" ] && printf '  %-52s %s\n' "ranks/s, batch -j $NPROC (default):" "$(div "$RANKS" "$bj_w" %.1f)"
	[ -n "$s_w" ] && printf '  %-52s %s\n' "ranks/s, merges alone, sequential loop:" "$(div "$RANKS" "$s_w" %.1f)"
	[ -n "$x_w" ] && printf '  %-52s %s\n' "ranks/s, merges alone, xargs -P $NPROC:" "$(div "$RANKS" "$x_w" %.1f)"
	[ -n "$b1_w" ] && [ -n "$s_w" ] && printf '  %-52s %s ms\n' "overhead per rank, batch -j 1 - loop:" \
		"$(awk -v a="$b1_w" -v b="$s_w" -v n="$RANKS" 'BEGIN { printf "%.2f", (a - b) * 1000 / n }')"
	[ -n "$bj_w" ] && [ -n "$x_w" ] && printf '  %-52s %s ms\n' "overhead per rank, batch -j $NPROC - xargs -P $NPROC:" \
		"$(awk -v a="$bj_w" -v b="$x_w" -v n="$RANKS" 'BEGIN { printf "%.2f", (a - b) * 1000 / n }')"
	[ -n "$plan_w" ] && printf '  %-52s %s ms (%s s)\n' "planning per rank (batch -n / N):" \
		"$(awk -v a="$plan_w" -v n="$RANKS" 'BEGIN { printf "%.2f", a * 1000 / n }')" "$plan_w"
	[ -n "$b1_w" ] && printf '  %-52s %s s (%s ranks, mean %s ms)\n' "batch -j 1: merges' own seconds (last run's joblog):" \
		"$j1_sum" "$n1" "$(div "$(awk -v s="$j1_sum" 'BEGIN { print s * 1000 }')" "$n1")"
	[ -n "$plan_m" ] && printf '  %-52s %s MB\n' "peak RSS, batch -n (the driver alone):" "$(kmb "$plan_m")"
	[ -n "$bj_m" ] && printf '  %-52s %s MB (-j 1: %s MB)\n' "peak RSS, batch (%M: driver or largest merge):" \
		"$(kmb "$bj_m")" "$(kmb "${b1_m:-0}")"
	[ -n "$bj_w" ] && printf '  %-52s %s MB\n' "peak RSS, largest merge (joblog):" "$(kmb "$jj_m")"
	printf '  %-52s %s/%s\n' "batch outputs byte-identical to xargs' outputs:" "$same" "$RANKS"
	echo
fi

if [ "$BIG" = 1 ]; then
	bytes=$(size_bytes "$BIG_SIZE")
	ops=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b * 2520000 / 1e9 }')
	D="$BENCH_DIR/big-n$BIG_RANKS-$BIG_SIZE-ops$ops-seed$SEED"
	echo "## $BIG_RANKS ranks of $BIG_SIZE ($ops ops each), -j $NPROC"
	make_ranks "$D" "$BIG_RANKS" "$ops"
	tb=$(stat -c %s "$(ls "$D"/traces/* | head -1)")
	wb=$(stat -c %s "$(ls "$D"/windows/* | head -1)")
	echo "each rank: CPU trace $(div "$tb" 1e6 %.1f) MB, window $(div "$wb" 1e6 %.1f) MB; all: $(du -sh "$D" | cut -f 1)"
	echo "load:       $(cut -d ' ' -f 1-3 /proc/loadavg) before the timing"
	O=$WORK/bigout
	rm -rf "$O"
	# the tree's RSS (driver + its children), sampled every 0.1 s while the batch runs
	/usr/bin/time -f '%e %M' -o "$WORK/time.txt" \
		"$BATCH" -q --no-progress -j "$NPROC" -O "$O" "$D/traces" "$D/windows" 2>"$WORK/last.err" &
	tpid=$!
	peak=0 peak_n=0
	while kill -0 "$tpid" 2>/dev/null; do
		read -r s k < <(awk 'function kids(p,   f, l, a, i, n) {
				f = "/proc/" p "/task/" p "/children"; l = ""
				if ((getline l < f) > 0) { n = split(l, a, " "); for (i = 1; i <= n; i++) { print a[i]; kids(a[i]) } }
				close(f) }
			BEGIN { kids(ARGV[1]); exit }' "$tpid" |
			while read -r p; do sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$p/status" 2>/dev/null; done |
			awk '{ s += $1; n++ } END { print s + 0, n + 0 }')
		if [ "$s" -gt "$peak" ]; then peak=$s peak_n=$k; fi
		sleep 0.1
	done
	rc=0
	wait "$tpid" || rc=$?
	if [ "$rc" != 0 ]; then
		FAILED=1
		echo "  batch -j $NPROC FAILED: exit $rc"
		sed -n '1,10s/^/    stderr: /p' "$WORK/last.err"
	else
		read -r w m < <(tail -n 1 "$WORK/time.txt")
		read -r nb jb_m jb_sum jb_max < <(joblog_stats "$O/cuptimerge-batch.tsv")
		echo "load:       $(cut -d ' ' -f 1-3 /proc/loadavg) after the timing"
		echo
		echo "### Figures ($BIG_RANKS ranks of $BIG_SIZE)"
		printf '  %-52s %s s\n' "total wall time, batch -j $NPROC:" "$w"
		printf '  %-52s %s s\n' "wall time per rank (total / M):" "$(div "$w" "$BIG_RANKS")"
		printf '  %-52s %s s (max %s s; %s merged)\n' "merge seconds per rank (joblog mean):" \
			"$(div "$jb_sum" "$nb")" "$jb_max" "$nb"
		printf '  %-52s %s MB/s\n' "CPU-trace MB per wall second:" \
			"$(awk -v b="$tb" -v n="$BIG_RANKS" -v w="$w" 'BEGIN { printf "%.1f", b * n / 1e6 / w }')"
		printf '  %-52s %s MB\n' "peak RSS, largest merge (joblog):" "$(kmb "$jb_m")"
		printf '  %-52s %s MB\n' "peak RSS, %M (driver or largest merge):" "$(kmb "$m")"
		printf '  %-52s %s MB (%s processes)\n' "peak RSS, whole tree, summed (sampled 0.1 s):" "$(kmb "$peak")" "$peak_n"
		printf '  %-52s %s MB\n' "outputs (merged .json.gz), all ranks:" "$(du -sm "$O" | cut -f 1)"
	fi
	echo
fi
exit "$FAILED"
