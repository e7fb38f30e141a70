#!/bin/bash
# bench/bench.sh -- throughput, peak-memory, scaling and gzip figures for cuptimerge.
#
# Usage: bench/bench.sh [--sizes "200M 1G"] [--huge] [--scaling | --no-scaling]
#                       [--memory-case SIZE] [--refmerge] [--refmerge-large]
#                       [--cuptimerge PATH] [--seed N] [--repeat N] [--no-ref-cache]
#
# One run prints every figure issue 8 (Engine v2) asks for, as ratios measured in the same
# run: the machine is shared and noisy, so a figure is only worth its neighbour measured a
# minute apart by the same script, never a number from another day.
#
# For each size it generates (once; cached in $BENCH_DIR/inputs) a CPU trace of about that
# many bytes plus the matching CUPTI trace window with $SHARED/tools/gen_trace
# (--pretty --devices 2, so the window is ~1.5x the CPU trace, as in issue 2; 2,520,000
# ops per GB of CPU trace: 200M is 504,000 ops), then times with /usr/bin/time -f "%e %M"
# (wall seconds, peak RSS KB):
#   cat / zcat / json_reformat -m on the CPU trace (the floor and the yardstick),
#   cuptimerge to /dev/null, to -o FILE.json.gz, on the gzip CPU trace, and with the CPU
#   trace on a pipe (cat cpu.json | cuptimerge -w win -: the spool path),
#   gzip in -> gzip out: cuptimerge -o out.json.gz cpu.json.gz against the pipeline
#   zcat cpu.json.gz | cuptimerge -w win - | gzip -1 (the whole pipeline timed),
#   with --refmerge: $SHARED/oracle/refmerge on pairs under 1 GB (all pairs with
#   --refmerge-large: the 1 GB pair needs ~11 GB and ~4 min), then tracecmp between
#   refmerge's output and cuptimerge's -o out.json.gz (tracecmp needs ~10x the size of
#   refmerge's output in memory: ~21 GB for the 1 GB pair; skipped when not available).
#   refmerge's output and its timing are cached with the inputs (keyed by the oracle's
#   code) so that re-runs against a new cuptimerge only pay for tracecmp; the table marks
#   a cached figure with its date; --no-ref-cache measures refmerge again.
# On the largest size only:
#   --memory=SIZE (--memory-case, default 16M): the plain merge with a small id-table
#   budget (skipped when the binary has no --memory);
#   scaling: -j N for N = 1 2 4 8 16 ... up to nproc (and nproc itself), the default -j,
#   and the default -j under taskset on the first two allowed CPUs. --scaling is the
#   default when nproc >= 4; otherwise (or with --no-scaling) only -j 1 and -j 2 are run
#   next to the default and the taskset row.
# --huge: a pair 4x the largest size (4x the ops), written gzip-compressed by gen_trace
#   itself (it compresses when a name ends in .gz, so the disk only ever holds the .gz
#   files: ~0.2x the uncompressed pair), merged from the .gz files to /dev/null; its peak
#   RSS against the largest size's plain merge is the flat-memory figure. It is cached too.
# At the end: the figures of issue 8 per size, the scaling table, a "targets" table
# (each target, the measured value, met / not met) and the table of every row.
# MB/s is always bytes of CPU-trace input (uncompressed) per wall second.
# It prints figures and never asserts timings; the exit status is 1 only if a measured
# command failed or tracecmp found a difference (both are reported in full), 2 for a
# usage or setup error. A target "not met" does not change the exit status.
#
# --repeat N runs each cuptimerge/cat/zcat/json_reformat command N times and keeps the
# fastest (with its peak RSS); the cuptimerge binary is copied first, so a rebuild during
# the run does not change what is measured. (The huge merge runs once.)
# Environment: BENCH_DIR (default /tmp/cuptimerge-bench) holds the input cache and the
# temporary work dir (removed on exit unless KEEP=1); SHARED (default: shared/ in the
# checkout if it has one, else ../shared next to it); JSON_REFORMAT (default: the one on
# PATH); TMPDIR for cuptimerge's temporary files is set to the work dir. Nothing is
# written into the checkout and git is optional, so it runs from a read-only copy on
# another machine (the GPU machine): carry the binary (and libyajl.so.2), set SHARED.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

SIZES="200M 1G"
REFMERGE=0
REFMERGE_LARGE=0
HUGE=0
SCALING=auto
MEMCASE=16M
# the build tree's binary: in-tree build, then the usual out-of-tree ones, then PATH
CM=cuptimerge
for c in "$top/src/cuptimerge" "$top/build/src/cuptimerge" "$top/build-dev/src/cuptimerge"; do
	if [ -x "$c" ]; then CM=$c; break; fi
done
SEED=1
REPEAT=1
BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench}
# a checkout with shared/ inside (the device machine's copy), else ../shared beside it
if [ -z "${SHARED:-}" ]; then
	if [ -d "$top/shared/tools" ]; then SHARED=$top/shared; else SHARED=$(cd "$top/.." && pwd)/shared; fi
fi

usage() {
	sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--sizes) SIZES=$2; shift 2 ;;
	--sizes=*) SIZES=${1#*=}; shift ;;
	--refmerge) REFMERGE=1; shift ;;
	--refmerge-large) REFMERGE=1; REFMERGE_LARGE=1; shift ;;
	--huge) HUGE=1; shift ;;
	--scaling) SCALING=1; shift ;;
	--no-scaling) SCALING=0; shift ;;
	--memory-case) MEMCASE=$2; shift 2 ;;
	--memory-case=*) MEMCASE=${1#*=}; shift ;;
	--cuptimerge) CM=$2; shift 2 ;;
	--cuptimerge=*) CM=${1#*=}; shift ;;
	--seed) SEED=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--repeat=*) REPEAT=${1#*=}; shift ;;
	--seed=*) SEED=${1#*=}; shift ;;
	--no-ref-cache) REF_CACHE=0; shift ;;
	-h|--help) usage 0 ;;
	*) echo "bench.sh: unknown argument: $1" >&2; usage ;;
	esac
done

GEN="$SHARED/tools/gen_trace"
REF="$SHARED/oracle/refmerge"
CMP="$SHARED/oracle/tracecmp"
REF_CACHE=${REF_CACHE:-1}

die() { echo "bench.sh: $*" >&2; exit 2; }

case $CM in */*) ;; *) CM=$(command -v "$CM" || echo "$CM") ;; esac
[ -x "$CM" ] || die "$CM: not executable (run 'make cuptimerge' in $top, or pass --cuptimerge PATH)"
CM=$(cd "$(dirname "$CM")" && pwd)/$(basename "$CM")
[ -x "$GEN" ] || die "$GEN: not found (set SHARED=DIR)"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is needed: apt-get install time"
if [ "$REFMERGE" = 1 ]; then
	[ -x "$REF" ] && [ -x "$CMP" ] || die "$REF / $CMP: not found (set SHARED=DIR)"
	REFKEY=$(cat "$REF" "$SHARED"/oracle/cupti_ref/*.py "$SHARED"/oracle/cupti_ref/*.json 2>/dev/null |
		sha256sum | cut -c 1-12)
fi
case $REPEAT in ''|*[!0-9]*|0) die "--repeat needs a count >= 1: $REPEAT" ;; esac
[ "$SCALING" = auto ] && { [ "$(nproc)" -ge 4 ] && SCALING=1 || SCALING=0; }
# json_reformat is the yardstick; a machine without it and without a network (the GPU
# machine) can carry one: JSON_REFORMAT=PATH. Without it the ratio rows say so.
JR=${JSON_REFORMAT:-$(command -v json_reformat || true)}
if [ -z "$JR" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "bench.sh: json_reformat missing; installing yajl-tools" >&2
	apt-get install -y -q yajl-tools >&2 || { apt-get update -q >&2 && apt-get install -y -q yajl-tools >&2; } || true
	JR=$(command -v json_reformat || true)
fi
[ -n "$JR" ] || echo "bench.sh: warning: json_reformat not found (apt-get install yajl-tools," \
	"or JSON_REFORMAT=PATH): its rows and the throughput ratio are skipped" >&2
# --memory is new: an older binary still gets every other figure
HAS_MEMORY=0
"$CM" --help 2>/dev/null | grep -q -e '--memory' && HAS_MEMORY=1

mkdir -p "$BENCH_DIR/inputs"
WORK=$(mktemp -d "$BENCH_DIR/run.XXXXXX")
export TMPDIR="$WORK"  # the pipe case's spool and any other temporary file of the tools
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then
		echo "KEEP=1: work dir kept: $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# benchmark a snapshot: the build tree's binary may be rebuilt while this runs
CM_ORIG=$CM
cp "$CM" "$WORK/cuptimerge"
CM="$WORK/cuptimerge"

RESULTS="$WORK/results.tsv"  # size, label, wall, rss_kb, cpu_bytes, status
: > "$RESULTS"
FAILED=0

# "100M" -> 100000000, "1G" -> 1000000000, "250K", plain bytes
size_bytes() {
	awk -v s="$1" 'BEGIN {
		n = s + 0; u = toupper(substr(s, length(s)))
		if (u == "K") n *= 1e3; else if (u == "M") n *= 1e6; else if (u == "G") n *= 1e9
		if (n <= 0) exit 1
		printf "%.0f\n", n }' || die "bad size: $1"
}

filesize() { stat -c %s "$1"; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }

# measure SIZE LABEL CPU_BYTES CMD [RUNS]: run CMD (a shell command line, evaluated here,
# redirections included) RUNS (default $REPEAT) times under /usr/bin/time; keep the
# fastest run (and its peak RSS).
# Stderr of the command goes to $WORK/last.err.  Never aborts the script.
measure() {
	local size=$1 label=$2 bytes=$3 cmd=$4 runs=${5:-$REPEAT} i best_w="" best_m="" w m st=0 rc
	for i in $(seq "$runs"); do
		rc=0
		eval "/usr/bin/time -f '%e %M' -o \"\$WORK/time.txt\" $cmd" 2>"$WORK/last.err" || rc=$?
		if [ "$rc" != 0 ]; then
			st=$rc
			break
		fi
		read -r w m < <(tail -n 1 "$WORK/time.txt")
		if [ -z "$best_w" ] || awk -v a="$w" -v b="$best_w" 'BEGIN { exit !(a < b) }'; then
			best_w=$w best_m=$m
		fi
	done
	if [ "$st" != 0 ]; then
		FAILED=1
		printf '  %-52s FAILED: exit %s\n' "$label" "$st"
		printf '    command: %s\n' "$cmd"
		printf '    where CM=%s cpu=%s win=%s cpugz=%s\n' "$CM_ORIG" "$cpu" "$win" "$cpugz"
		sed -n '1,10s/^/    stderr: /p' "$WORK/last.err"
		printf '%s\t%s\t-\t-\t%s\tfail(%s)\n' "$size" "$label" "$bytes" "$st" >> "$RESULTS"
		return 0
	fi
	printf '  %-52s %8.2f s %9s MB/s %9.1f MB RSS\n' "$label" "$best_w" \
		"$(awk -v b="$bytes" -v w="$best_w" 'BEGIN { if (w >= 0.05) printf "%.1f", b / 1e6 / w; else print "-" }')" \
		"$(awk -v m="$best_m" 'BEGIN { print m / 1024 }')"
	printf '%s\t%s\t%s\t%s\t%s\tok\n' "$size" "$label" "$best_w" "$best_m" "$bytes" >> "$RESULTS"
}

# wall or rss (field 3 or 4) of the row SIZE LABEL in $RESULTS; empty when it failed or
# was not run
get() {
	awk -F '\t' -v s="$1" -v l="$2" -v f="$3" '$1 == s && $2 == l && $6 == "ok" { v = $f } END { print v }' "$RESULTS"
}
wall() { get "$1" "$2" 3; }
rss() { get "$1" "$2" 4; }
# A / B to 2 decimals, or empty when either is missing or B is 0
ratio() {
	[ -n "$1" ] && [ -n "$2" ] || return 0
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b }'
}
# KB -> MB to 1 decimal, or empty (never a failed status: it is used in assignments)
kmb() { [ -z "$1" ] || awk -v m="$1" 'BEGIN { printf "%.1f", m / 1024 }'; }
rate() {  # MB/s of BYTES in WALL seconds
	[ -n "$2" ] || return 0
	awk -v b="$1" -v w="$2" 'BEGIN { if (w > 0) printf "%.1f", b / 1e6 / w }'
}
# target NAME VALUE OP LIMIT [NOTE]: one row of the targets table (OP is >= or <=);
# a value that was not measured is "n/a", never "not met"
target() {
	local verdict
	if [ -z "$2" ]; then
		verdict="n/a"
	elif awk -v v="$2" -v o="$3" -v l="$4" 'BEGIN { exit !(o == ">=" ? v >= l : v <= l) }'; then
		verdict="met"
	else
		verdict="NOT MET"
	fi
	printf '%s\t%s\t%s %s\t%s\t%s\n' "$1" "${2:-not measured}" "$3" "$4" "$verdict" "${5:-}" >> "$WORK/targets.tsv"
}
# pair_paths SIZE: the cache dir and files of SIZE's pair (in, cpu, win, cpugz, ops)
pair_paths() {
	bytes_target=$(size_bytes "$1")
	# 2,520,000 ops with --pretty --devices 2 give a 1.00 GB CPU trace (tools/README.md)
	ops=$(awk -v b="$bytes_target" 'BEGIN { printf "%.0f", b * 2520000 / 1e9 }')
	in="$BENCH_DIR/inputs/$1-seed$SEED-ops$ops-dev2-pretty"
	cpu="$in/cpu.json" win="$in/win.json" cpugz="$in/cpu.json.gz"
}
disk_free() { df -Pk "$1" | awk 'NR == 2 { printf "%.0f", $4 * 1024 }'; }
# Bytes of the unlinked files held open by the processes whose command line holds the
# string $1: a merge's temporary files (unlinked at once, so du cannot see them; df saw
# them only once the kernel had allocated their blocks, and read ~0 MB in run AL).
# st_blocks counts the blocks still waiting to be written back.
tmp_in_use() {
	for d in /proc/[0-9]*; do
		tr '\0' ' ' < "$d/cmdline" 2>/dev/null | grep -qF -- "$1" || continue
		find -L "$d/fd" -type f -links 0 -printf '%b\n' 2>/dev/null
	done | awk '{ s += $1 } END { printf "%.0f\n", s * 512 }'
}
disk_used() { du -sb "$1" 2>/dev/null | cut -f 1; }
# the first two CPUs this process may run on ("0-15" -> "0,1"; "3,5-9" -> "3,5")
two_cpus() {
	sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' '\n' |
		awk -F - '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }' | head -n 2 | paste -sd ,
}

: > "$WORK/targets.tsv"
cpu="" win="" cpugz=""
export CM WORK cpu win cpugz  # for the timed pipeline (bash -c)

echo "# cuptimerge benchmark"
echo "date:       $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine:    $(nproc) CPUs (nproc), $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)," \
	"$(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
echo "load avg:   $(cut -d ' ' -f 1-3 /proc/loadavg) (1/5/15 min) at start"
echo "kernel:     $(uname -sr)"
echo "cuptimerge: $CM_ORIG ($("$CM" --version 2>/dev/null | head -n 1)," \
	"built $(date -u -r "$CM_ORIG" '+%Y-%m-%d %H:%M UTC'), sha256 $(sha256sum < "$CM" | cut -c 1-12))"
# the deflate of each gzip level (a binary older than ISA-L's use says nothing: zlib)
echo "deflate:    $("$CM" --version 2>/dev/null | sed -n 's/^gzip //p' | paste -sd ';' - | sed 's/;/; /g')"
# a machine without git, or a copy that is not a checkout: say so rather than guess
if command -v git >/dev/null 2>&1 && git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	echo "commit:     $(git -C "$top" log -1 --format='%h %s' 2>/dev/null | cut -c 1-100)$(git -C "$top" diff --quiet HEAD -- src 2>/dev/null || echo ' (src/ has uncommitted changes)')"
else
	echo "commit:     ? (no git checkout at $top)"
fi
echo "yardsticks: json_reformat ${JR:-(none)} (yajl-tools $(dpkg-query -W -f '${Version}' yajl-tools 2>/dev/null || echo '?')), $(gzip --version | head -n 1)"
echo "inputs:     gen_trace --seed $SEED --pretty --devices 2, cached in $BENCH_DIR/inputs"
echo "timing:     /usr/bin/time -f '%e %M', warm page cache, best of $REPEAT run(s)"
echo "MB/s:       bytes of CPU-trace input (uncompressed) / wall seconds, 1 MB = 10^6 bytes"
echo "options:    sizes \"$SIZES\", huge $HUGE, scaling $SCALING, memory case --memory=$MEMCASE" \
	"$([ "$HAS_MEMORY" = 1 ] || echo '(not in this binary)'), refmerge $REFMERGE"

# the largest size gets the memory, scaling and huge cases
LARGEST="" largest_b=0
for size in $SIZES; do
	b=$(size_bytes "$size")
	if [ "$b" -gt "$largest_b" ]; then LARGEST=$size largest_b=$b; fi
done

for size in $SIZES; do
	pair_paths "$size"
	echo
	echo "## $size: gen_trace --seed $SEED --ops $ops --pretty --devices 2"
	if [ ! -s "$cpu" ] || [ ! -s "$win" ] || [ ! -s "$cpugz" ]; then
		mkdir -p "$in"
		avail=$(disk_free "$in")
		need=$(awk -v b="$bytes_target" 'BEGIN { printf "%.0f", b * 2.7 }')
		if [ "$avail" -lt "$need" ]; then
			echo "bench.sh: warning: $(mb "$avail") MB free under $in; this size wants ~$(mb "$need") MB" >&2
		fi
		echo "  generating (cached for later runs) ..."
		rm -f "$in"/*.part
		/usr/bin/time -f '  gen_trace: %e s, %M KB' "$GEN" --seed "$SEED" --ops "$ops" --pretty \
			--devices 2 --quiet "$in/cpu.json.part" "$in/win.json.part"
		gzip -6 -n -c "$in/cpu.json.part" > "$in/cpu.json.gz.part"
		mv "$in/win.json.part" "$win"
		mv "$in/cpu.json.gz.part" "$cpugz"
		mv "$in/cpu.json.part" "$cpu"
	fi
	cb=$(filesize "$cpu") wb=$(filesize "$win") gb=$(filesize "$cpugz")
	echo "  CPU trace $(mb "$cb") MB ($cb B), window $(mb "$wb") MB ($wb B)," \
		"gzip CPU trace $(mb "$gb") MB; the cache holds $(mb "$(disk_used "$in")") MB for this size"
	printf '%s\tinputs\t%s\t%s\t%s\n' "$size" "$cb" "$wb" "$gb" > "$WORK/inputs-$size.tsv"
	cat "$cpu" "$win" "$cpugz" > /dev/null  # warm the page cache

	out="$WORK/out-$size.json.gz"
	measure "$size" "cat cpu.json" "$cb" "cat \"\$cpu\" > /dev/null"
	measure "$size" "zcat cpu.json.gz" "$cb" "zcat \"\$cpugz\" > /dev/null"
	if [ -n "$JR" ]; then
		measure "$size" "json_reformat -m < cpu.json" "$cb" "\"\$JR\" -m < \"\$cpu\" > /dev/null"
		measure "$size" "(json_reformat -m < win.json)" "$cb" "\"\$JR\" -m < \"\$win\" > /dev/null"
	fi
	measure "$size" "cuptimerge -w win cpu.json > /dev/null" "$cb" \
		"\"\$CM\" --trace-name bench -w \"\$win\" \"\$cpu\" > /dev/null"
	measure "$size" "cuptimerge -w win -o out.json.gz cpu.json" "$cb" \
		"\"\$CM\" --trace-name bench -w \"\$win\" -o \"\$out\" \"\$cpu\""
	if [ -f "$out" ]; then
		echo "    (out.json.gz: $(mb "$(filesize "$out")") MB; merged output uncompressed:" \
			"$(mb "$(zcat "$out" | wc -c)") MB)"
	fi
	measure "$size" "cuptimerge -w win cpu.json.gz > /dev/null" "$cb" \
		"\"\$CM\" --trace-name bench -w \"\$win\" \"\$cpugz\" > /dev/null"
	# the pipe case: cat feeds a pipe; only cuptimerge is timed (it ends after cat does)
	measure "$size" "cat cpu.json | cuptimerge -w win - > /dev/null" "$cb" \
		"\"\$CM\" --trace-name bench -w \"\$win\" - < <(cat \"\$cpu\") > /dev/null"
	# gzip in -> gzip out, against what a user would type without us: the whole pipeline is
	# timed (bash -c under /usr/bin/time), pipefail so that a failing stage is a failure
	measure "$size" "cuptimerge -w win -o out.json.gz cpu.json.gz" "$cb" \
		"\"\$CM\" --trace-name bench -w \"\$win\" -o \"\$WORK/gzgz.json.gz\" \"\$cpugz\""
	measure "$size" "zcat cpu.json.gz | cuptimerge -w win - | gzip -1" "$cb" \
		"bash -c 'set -o pipefail; zcat \"\$cpugz\" | \"\$CM\" --trace-name bench -w \"\$win\" - | gzip -1 > \"\$WORK/pipeline.json.gz\"'"
	rm -f "$WORK/gzgz.json.gz" "$WORK/pipeline.json.gz"

	if [ "$size" = "$LARGEST" ]; then
		# memory for the id tables: what a small budget costs in time (tables go to TMPDIR)
		if [ "$HAS_MEMORY" = 1 ]; then
			measure "$size" "cuptimerge --memory=$MEMCASE -w win cpu.json > /dev/null" "$cb" \
				"\"\$CM\" --trace-name bench --memory=\"\$MEMCASE\" -w \"\$win\" \"\$cpu\" > /dev/null"
		else
			echo "  cuptimerge --memory=$MEMCASE: skipped (this binary has no --memory)"
		fi
		# many cores: the curve, the default, and the same binary held to two CPUs
		if [ "$SCALING" = 1 ]; then
			jobs=$(awk -v n="$(nproc)" 'BEGIN { for (j = 1; j <= n; j *= 2) { printf "%d ", j; l = j }
				if (l != n) printf "%d", n }')
		else
			jobs="1 2"
		fi
		echo "$jobs" > "$WORK/jobs"
		for j in $jobs; do
			measure "$size" "cuptimerge -j $j -w win cpu.json > /dev/null" "$cb" \
				"\"\$CM\" --trace-name bench -j $j -w \"\$win\" \"\$cpu\" > /dev/null"
		done
		# measured again here, next to the taskset row, rather than reusing the row above
		measure "$size" "cuptimerge (default -j) -w win cpu.json > /dev/null" "$cb" \
			"\"\$CM\" --trace-name bench -w \"\$win\" \"\$cpu\" > /dev/null"
		two=$(two_cpus)
		if command -v taskset >/dev/null 2>&1 && [ -n "$two" ]; then
			echo "$two" > "$WORK/two-cpus"
			measure "$size" "taskset -c $two cuptimerge -w win cpu.json > /dev/null" "$cb" \
				"taskset -c \"$two\" \"\$CM\" --trace-name bench -w \"\$win\" \"\$cpu\" > /dev/null"
		else
			echo "  taskset: skipped (no taskset, or no CPU list in /proc/self/status)"
		fi
	fi

	if [ "$REFMERGE" = 1 ]; then
		if [ "$bytes_target" -ge 1000000000 ] && [ "$REFMERGE_LARGE" != 1 ]; then
			echo "  refmerge: skipped for $size (needs ~11 GB and ~4 min per GB; use --refmerge-large)"
			continue
		fi
		# refmerge's output and timing are cached next to the inputs, keyed by the
		# oracle's code: it does not change when cuptimerge does
		ref="$in/ref-$REFKEY.json" reft="$in/ref-$REFKEY.time"
		if [ "$REF_CACHE" = 1 ] && [ -s "$ref" ] && [ -s "$reft" ]; then
			read -r w m d < "$reft"
			label="refmerge cpu.json win ref.json [cached: run of $d]"
			printf '  %-52s %8.2f s %9s MB/s %9.1f MB RSS\n' "$label" "$w" \
				"$(awk -v b="$cb" -v w="$w" 'BEGIN { printf "%.1f", b / 1e6 / w }')" \
				"$(awk -v m="$m" 'BEGIN { print m / 1024 }')"
			printf '%s\t%s\t%s\t%s\t%s\tok\n' "$size" "$label" "$w" "$m" "$cb" >> "$RESULTS"
		else
			memavail=$(awk '/MemAvailable/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
			refneed=$(awk -v b="$cb" 'BEGIN { printf "%.0f", b * 12 }')
			if [ "$memavail" -lt "$refneed" ]; then
				echo "  refmerge: skipped: $(mb "$memavail") MB available, it needs ~$(mb "$refneed") MB"
				continue
			fi
			rm -f "$ref" "$reft" "$ref.part"
			# once only, whatever --repeat says: it is slow
			measure "$size" "refmerge cpu.json win ref.json" "$cb" \
				"\"\$REF\" --trace-name bench \"\$cpu\" \"\$win\" \"\$ref.part\"" 1
			if [ "$(tail -n 1 "$RESULTS" | cut -f 6)" = ok ] && [ -s "$ref.part" ]; then
				mv "$ref.part" "$ref"
				tail -n 1 "$RESULTS" | awk -F '\t' -v d="$(date -u '+%Y-%m-%dT%H:%MZ')" \
					'{ print $3, $4, d }' > "$reft"
			else
				rm -f "$ref.part"
			fi
		fi
		if [ -f "$ref" ] && [ -f "$out" ]; then
			echo "    (ref.json: $(mb "$(filesize "$ref")") MB)"
			# tracecmp holds both documents as Python objects: ~10x the size of ref.json
			memavail=$(awk '/MemAvailable/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
			cmpneed=$(awk -v b="$(filesize "$ref")" 'BEGIN { printf "%.0f", b * 11 }')
			if [ "$memavail" -lt "$cmpneed" ]; then
				echo "  tracecmp ref.json out.json.gz: skipped: $(mb "$memavail") MB available," \
					"it needs ~$(mb "$cmpneed") MB (compare on a larger machine: KEEP=1 keeps both)"
				printf '%s\ttracecmp\tskipped (needs ~%s MB, %s MB available)\n' "$size" \
					"$(mb "$cmpneed")" "$(mb "$memavail")" >> "$WORK/cmp.tsv"
				continue
			fi
			rc=0
			/usr/bin/time -f '%e %M' -o "$WORK/time.txt" "$CMP" "$ref" "$out" \
				> "$WORK/cmp.txt" 2>&1 || rc=$?
			read -r w m < <(tail -n 1 "$WORK/time.txt")
			echo "  tracecmp ref.json out.json.gz: exit $rc ($w s, $(awk -v m="$m" 'BEGIN { printf "%.0f", m / 1024 }') MB RSS)"
			sed -n '1,12s/^/    /p' "$WORK/cmp.txt"
			printf '%s\ttracecmp\t%s\n' "$size" "$(head -n 1 "$WORK/cmp.txt")" >> "$WORK/cmp.tsv"
			[ "$rc" = 0 ] || FAILED=1
		fi
	fi
done

# ---- the huge pair: 4x the largest, kept gzip-compressed on disk ----
HUGE_SIZE=""
if [ "$HUGE" = 1 ] && [ -n "$LARGEST" ]; then
	pair_paths "$LARGEST"
	hops=$((ops * 4))
	HUGE_SIZE="4x$LARGEST"
	hin="$BENCH_DIR/inputs/huge-seed$SEED-ops$hops-dev2-pretty-gz"
	cpugz="$hin/cpu.json.gz" win="$hin/win.json.gz" cpu="(none: gzip only)"
	echo
	echo "## $HUGE_SIZE: gen_trace --seed $SEED --ops $hops --pretty --devices 2, written as .gz"
	# gen_trace compresses as it writes when a name ends in .gz (and renames its .tmp at the
	# end), so the disk never holds the plain pair; named pipes would not work: it writes
	# PATH.tmp, not PATH. Its summary gives the uncompressed sizes for MB/s.
	if [ ! -s "$cpugz" ] || [ ! -s "$win" ] || [ ! -s "$hin/summary.json" ]; then
		mkdir -p "$hin"
		# ~0.09x gzip ratio for the CPU trace and ~0.07x for the window (tools/README.md)
		need=$(awk -v b="$largest_b" 'BEGIN { printf "%.0f", b * 4 * (0.09 + 1.5 * 0.07) * 1.2 }')
		avail=$(disk_free "$hin")
		echo "  the cache needs ~$(mb "$need") MB for this pair ($(mb "$avail") MB free under $BENCH_DIR);" \
			"generating once: about $(awk -v o="$hops" 'BEGIN { printf "%.0f", o / 30000 / 60 + 1 }') min at 30k ops/s"
		[ "$avail" -ge "$need" ] || echo "bench.sh: warning: not enough disk for the huge pair under $hin" >&2
		rm -f "$hin"/*.tmp
		/usr/bin/time -f '  gen_trace: %e s, %M KB' "$GEN" --seed "$SEED" --ops "$hops" --pretty \
			--devices 2 --quiet --summary "$hin/summary.json.part" "$cpugz" "$win" &&
			mv "$hin/summary.json.part" "$hin/summary.json" ||
			{ echo "  gen_trace FAILED for the huge pair"; FAILED=1; }
	fi
	if [ -s "$hin/summary.json" ]; then
		hcb=$(sed -n 's/^ *"cpu_bytes": \([0-9]*\).*/\1/p' "$hin/summary.json")
		hwb=$(sed -n 's/^ *"window_bytes": \([0-9]*\).*/\1/p' "$hin/summary.json")
		echo "  CPU trace $(mb "$hcb") MB, window $(mb "$hwb") MB uncompressed;" \
			"on disk (gzip): $(mb "$(filesize "$cpugz")") + $(mb "$(filesize "$win")") MB;" \
			"the cache holds $(mb "$(disk_used "$hin")") MB for this pair"
		printf '%s\tinputs\t%s\t%s\t%s\n' "$HUGE_SIZE" "$hcb" "$hwb" "$(filesize "$cpugz")" > "$WORK/inputs-$HUGE_SIZE.tsv"
		cat "$cpugz" "$win" > /dev/null
		# TMPDIR's use while it runs: the temporary files it holds, sampled (tmp_in_use)
		( while :; do tmp_in_use "-w $win"; sleep 0.5; done ) > "$WORK/tmp.samples" 2>/dev/null &
		sampler=$!
		measure "$HUGE_SIZE" "cuptimerge -w win.json.gz cpu.json.gz > /dev/null" "$hcb" \
			"\"\$CM\" --trace-name bench -w \"\$win\" \"\$cpugz\" > /dev/null" 1
		kill "$sampler" 2>/dev/null || true
		wait "$sampler" 2>/dev/null || true
		HUGE_TMP=$(sort -n "$WORK/tmp.samples" | tail -n 1)
		echo "    (temporary files: ~$(mb "${HUGE_TMP:-0}") MB at the peak, the unlinked files it held open," \
			"sampled every 0.5 s from /proc)"
	fi
fi
[ -n "$LARGEST" ] || exit 2

# ---- the figures of issue 8 ----
echo
echo "## Issue 8 figures (ratios of rows measured above, in this run)"
echo
echo "Throughput, gzip and memory per size:"
echo
echo "| size (CPU / window MB) | cuptimerge s | json_reformat -m s | json_reformat / cuptimerge | MB/s of CPU trace | -o .gz / plain | gz->gz ours / pipeline | peak RSS MB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
PLAIN="cuptimerge -w win cpu.json > /dev/null"
for size in $SIZES; do
	[ -f "$WORK/inputs-$size.tsv" ] || continue
	read -r _ _ cb wb _ < "$WORK/inputs-$size.tsv"
	cw=$(wall "$size" "$PLAIN") jw=$(wall "$size" "json_reformat -m < cpu.json")
	thr=$(ratio "$jw" "$cw") mbs=$(rate "$cb" "$cw")
	gzr=$(ratio "$(wall "$size" "cuptimerge -w win -o out.json.gz cpu.json")" "$cw")
	ggr=$(ratio "$(wall "$size" "cuptimerge -w win -o out.json.gz cpu.json.gz")" \
		"$(wall "$size" "zcat cpu.json.gz | cuptimerge -w win - | gzip -1")")
	r=$(rss "$size" "$PLAIN")
	rmb=$(kmb "$r")
	printf '| %s (%.0f / %.0f) | %s | %s | %s | %s | %s | %s | %s |\n' "$size" \
		"$(awk -v b="$cb" 'BEGIN { print b / 1e6 }')" "$(awk -v b="$wb" 'BEGIN { print b / 1e6 }')" \
		"${cw:--}" "${jw:--}" "${thr:--}" "${mbs:--}" "${gzr:--}" "${ggr:--}" "${rmb:--}"
	target "throughput $size: json_reformat -m / cuptimerge" "$thr" ">=" 1.0
	target "stretch $size: MB/s of CPU trace" "$mbs" ">=" 400
	target "gzip out $size: -o out.json.gz / plain output" "$gzr" "<=" 1.5
	target "gzip in+out $size: ours / zcat|cuptimerge|gzip -1" "$ggr" "<=" 1.0 \
		"ours writes the -o .gz default level (see the deflate line above), the pipeline gzip -1"
done
echo
echo "(MB/s = CPU-trace bytes / the plain merge's wall time; json_reformat reads the CPU trace only.)"

read -r _ _ lcb _ _ < "$WORK/inputs-$LARGEST.tsv"
R1=$(rss "$LARGEST" "$PLAIN")
R1MB=$(kmb "$R1")
target "memory $LARGEST: peak RSS MB, plain merge" "$R1MB" "<=" 64 \
	"$([ "$LARGEST" = 1G ] || echo "the issue's 64 MB is for the 1G pair")"
echo
echo "Memory on the largest size ($LARGEST):"
echo
echo "- plain merge: ${R1MB:-?} MB peak RSS"
if [ "$HAS_MEMORY" = 1 ]; then
	l="cuptimerge --memory=$MEMCASE -w win cpu.json > /dev/null"
	mr=$(rss "$LARGEST" "$l") mw=$(wall "$LARGEST" "$l")
	echo "- --memory=$MEMCASE: $(kmb "$mr") MB" \
		"peak RSS, ${mw:-?} s ($(ratio "$mw" "$(wall "$LARGEST" "$PLAIN")")x the plain merge's time)"
else
	echo "- --memory=$MEMCASE: not measured (this binary has no --memory)"
fi
if [ -n "$HUGE_SIZE" ]; then
	l="cuptimerge -w win.json.gz cpu.json.gz > /dev/null"
	hr=$(rss "$HUGE_SIZE" "$l") hw=$(wall "$HUGE_SIZE" "$l")
	hratio=$(ratio "$hr" "$R1")
	echo "- $HUGE_SIZE pair from .gz: $(kmb "$hr") MB" \
		"peak RSS, ${hw:-?} s ($(rate "${hcb:-0}" "$hw") MB/s of CPU trace); RSS($HUGE_SIZE) / RSS($LARGEST) = ${hratio:-?};" \
		"temporary files ~$(mb "${HUGE_TMP:-0}") MB; input cache $(mb "$(disk_used "$hin")") MB"
	echo "- for comparison, $LARGEST with the gzip CPU trace: $(kmb "$(rss "$LARGEST" "cuptimerge -w win cpu.json.gz > /dev/null")") MB peak RSS"
	target "memory: RSS($HUGE_SIZE, .gz) / RSS($LARGEST, plain)" "$hratio" "<=" 1.10
else
	echo "- the pair 4x larger: not run (--huge)"
	target "memory: RSS(4x) / RSS(1x)" "" "<=" 1.10 "run with --huge"
fi

echo
echo "Many cores on $LARGEST ($(nproc) CPUs; scaling $([ "$SCALING" = 1 ] && echo 'curve' || echo 'short: -j 1 and -j 2'); CPU-trace MB/s):"
echo
echo "| threads | wall s | speed-up vs -j 1 | MB/s |"
echo "|---|---:|---:|---:|"
j1=$(wall "$LARGEST" "cuptimerge -j 1 -w win cpu.json > /dev/null")
for j in $(cat "$WORK/jobs") default taskset; do
	case $j in
	default) l="cuptimerge (default -j) -w win cpu.json > /dev/null" name="default -j" ;;
	taskset) [ -f "$WORK/two-cpus" ] || continue
		l="taskset -c $(cat "$WORK/two-cpus") cuptimerge -w win cpu.json > /dev/null"
		name="default -j, taskset -c $(cat "$WORK/two-cpus")" ;;
	*) l="cuptimerge -j $j -w win cpu.json > /dev/null" name="-j $j" ;;
	esac
	w=$(wall "$LARGEST" "$l")
	s=$(ratio "$j1" "$w")
	printf '| %s | %s | %s | %s |\n' "$name" "${w:-failed}" "${s:+${s}x}" "$(rate "$lcb" "$w")"
done
if [ -f "$WORK/two-cpus" ]; then
	cores=$(ratio "$(wall "$LARGEST" "taskset -c $(cat "$WORK/two-cpus") cuptimerge -w win cpu.json > /dev/null")" \
		"$(wall "$LARGEST" "cuptimerge (default -j) -w win cpu.json > /dev/null")")
	echo
	echo "taskset on 2 CPUs / all $(nproc) CPUs: ${cores:-?}x"
	if [ "$(nproc)" -le 2 ]; then
		# two CPUs are all there are: the ratio only measures noise
		target "many cores $LARGEST: taskset 2 CPUs / all CPUs" "" ">=" 3 \
			"taskset covers all $(nproc) CPUs here (measured ${cores:-?}x); the target is for 16 cores"
	else
		target "many cores $LARGEST: taskset 2 CPUs / all CPUs" "$cores" ">=" 3 \
			"$([ "$(nproc)" -ge 16 ] || echo "the target is for 16 cores; this machine has $(nproc)")"
	fi
fi

echo
echo "## Targets (issue 8)"
echo
echo "| target | measured | wanted | verdict | note |"
echo "|---|---:|---|---|---|"
awk -F '\t' '{ gsub(/\|/, "\\|"); printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$WORK/targets.tsv"

# ---- the summary table ----
echo
echo "## Summary"
echo
echo "| size (CPU / window MB) | command | wall s | MB/s of CPU trace | peak RSS MB | speed-up vs refmerge |"
echo "|---|---|---:|---:|---:|---:|"
for size in $SIZES $HUGE_SIZE; do
	[ -f "$WORK/inputs-$size.tsv" ] || continue
	read -r _ _ cb wb _ < "$WORK/inputs-$size.tsv"
	refw=$(awk -F '\t' -v s="$size" '$1 == s && $2 ~ /^refmerge/ && $6 == "ok" { print $3 }' "$RESULTS")
	awk -F '\t' -v s="$size" -v cb="$cb" -v wb="$wb" -v refw="$refw" '
	$1 == s {
		cmd = $2; gsub(/\|/, "\\|", cmd)
		sz = sprintf("%s (%.0f / %.0f)", s, cb / 1e6, wb / 1e6)
		if ($6 != "ok") { printf "| %s | `%s` | %s | | | |\n", sz, cmd, $6; next }
		sp = ""
		if (refw != "" && $2 ~ /^refmerge/) sp = "1x"
		else if (refw != "" && $2 ~ /cuptimerge/ && $3 > 0)
			sp = sprintf(refw / $3 < 10 ? "%.1fx" : "%.0fx", refw / $3)
		rate = $3 >= 0.05 ? sprintf("%.1f", $5 / 1e6 / $3) : "(too short)"
		printf "| %s | `%s` | %.2f | %s | %.1f | %s |\n", sz, cmd, $3, rate, $4 / 1024, sp
	}' "$RESULTS"
done
echo
echo "(json_reformat -m < win.json) parses the window once; its MB/s is still per CPU-trace byte."
if [ -f "$WORK/cmp.tsv" ]; then
	echo
	awk -F '\t' '{ printf "tracecmp %s: %s\n", $1, $3 }' "$WORK/cmp.tsv"
fi
echo
echo "input cache: $(mb "$(disk_used "$BENCH_DIR/inputs")") MB in $BENCH_DIR/inputs"
echo "load avg:   $(cut -d ' ' -f 1-3 /proc/loadavg) (1/5/15 min) at the end"
if [ "$FAILED" = 1 ]; then
	echo
	echo "SOME COMMANDS FAILED OR DIFFERED (see above)"
	exit 1
fi
