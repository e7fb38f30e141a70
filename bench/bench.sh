#!/bin/bash
# bench/bench.sh -- throughput and peak-memory figures for cuptimerge.
#
# Usage: bench/bench.sh [--sizes "100M 1G"] [--refmerge] [--refmerge-large]
#                       [--cuptimerge PATH] [--seed N] [--repeat N] [--no-ref-cache]
#
# For each size it generates (once; cached in $BENCH_DIR/inputs) a CPU trace of about that
# many bytes plus the matching CUPTI trace window with ../shared/tools/gen_trace
# (--pretty --devices 2, so the window is ~1.5x the CPU trace, as in issue 2), then times
# with /usr/bin/time -f "%e %M" (wall seconds, peak RSS KB):
#   cat / zcat / json_reformat -m on the CPU trace (the floor and the yardstick),
#   cuptimerge to /dev/null, to -o FILE.json.gz, on the gzip CPU trace, and with the CPU
#   trace on a pipe (cat cpu.json | cuptimerge -w win -: the spool path),
#   with --refmerge: ../shared/oracle/refmerge on pairs under 1 GB (all pairs with
#   --refmerge-large: the 1 GB pair needs ~11 GB and ~4 min), then tracecmp between
#   refmerge's output and cuptimerge's -o out.json.gz (tracecmp needs ~10x the size of
#   refmerge's output in memory: ~21 GB for the 1 GB pair; skipped when not available).
#   refmerge's output and its timing are cached with the inputs (keyed by the oracle's
#   code) so that re-runs against a new cuptimerge only pay for tracecmp; the table marks
#   a cached figure with its date; --no-ref-cache measures refmerge again.
# MB/s is always bytes of CPU-trace input (uncompressed) per wall second.
# It prints figures and never asserts timings; the exit status is 1 only if a measured
# command failed or tracecmp found a difference (both are reported in full).
#
# --repeat N runs each cuptimerge/cat/zcat/json_reformat command N times and keeps the
# fastest (with its peak RSS); the cuptimerge binary is copied first, so a rebuild during
# the run does not change what is measured.
# Environment: BENCH_DIR (default /tmp/cuptimerge-bench) holds the input cache and the
# temporary work dir (removed on exit unless KEEP=1); SHARED (default ../shared next to the
# project); TMPDIR for the pipe case's spool is set to the work dir.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

SIZES="100M 1G"
REFMERGE=0
REFMERGE_LARGE=0
CM="$top/src/cuptimerge"
SEED=1
REPEAT=1
BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench}
SHARED=${SHARED:-$(cd "$top/.." && pwd)/shared}

usage() {
	sed -n '4,5p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--sizes) SIZES=$2; shift 2 ;;
	--sizes=*) SIZES=${1#*=}; shift ;;
	--refmerge) REFMERGE=1; shift ;;
	--refmerge-large) REFMERGE=1; REFMERGE_LARGE=1; shift ;;
	--cuptimerge) CM=$2; shift 2 ;;
	--cuptimerge=*) CM=${1#*=}; shift ;;
	--seed) SEED=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
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
if ! command -v json_reformat >/dev/null 2>&1; then
	echo "bench.sh: json_reformat missing; installing yajl-tools" >&2
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y -q yajl-tools >&2 || { apt-get update -q >&2 && apt-get install -y -q yajl-tools >&2; }
	else
		die "json_reformat not found: apt-get install yajl-tools"
	fi
fi

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

echo "# cuptimerge benchmark"
echo "date:       $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine:    $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)," \
	"$(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
echo "kernel:     $(uname -sr)"
echo "cuptimerge: $CM_ORIG ($("$CM" --version 2>/dev/null | head -n 1)," \
	"built $(date -u -r "$CM_ORIG" '+%Y-%m-%d %H:%M UTC'), sha256 $(sha256sum < "$CM" | cut -c 1-12))"
echo "commit:     $(git -C "$top" log -1 --format='%h %s' 2>/dev/null || echo '?')$(git -C "$top" diff --quiet HEAD -- src 2>/dev/null || echo ' (src/ has uncommitted changes)')"
echo "yajl-tools: $(dpkg-query -W -f '${Version}' yajl-tools 2>/dev/null || echo '?'), $(gzip --version | head -n 1)"
echo "inputs:     gen_trace --seed $SEED --pretty --devices 2, cached in $BENCH_DIR/inputs"
echo "timing:     /usr/bin/time -f '%e %M', warm page cache, best of $REPEAT run(s)"
echo "MB/s:       bytes of CPU-trace input (uncompressed) / wall seconds, 1 MB = 10^6 bytes"

for size in $SIZES; do
	bytes_target=$(size_bytes "$size")
	# 2,520,000 ops with --pretty --devices 2 give a 1.00 GB CPU trace (tools/README.md)
	ops=$(awk -v b="$bytes_target" 'BEGIN { printf "%.0f", b * 2520000 / 1e9 }')
	in="$BENCH_DIR/inputs/$size-seed$SEED-ops$ops-dev2-pretty"
	cpu="$in/cpu.json" win="$in/win.json" cpugz="$in/cpu.json.gz"
	echo
	echo "## $size: gen_trace --seed $SEED --ops $ops --pretty --devices 2"
	if [ ! -s "$cpu" ] || [ ! -s "$win" ] || [ ! -s "$cpugz" ]; then
		mkdir -p "$in"
		avail=$(df -Pk "$in" | awk 'NR == 2 { printf "%.0f", $4 * 1024 }')
		need=$(awk -v b="$bytes_target" 'BEGIN { printf "%.0f", b * 6 }')
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
		"gzip CPU trace $(mb "$gb") MB"
	printf '%s\tinputs\t%s\t%s\t%s\n' "$size" "$cb" "$wb" "$gb" > "$WORK/inputs-$size.tsv"
	cat "$cpu" "$win" "$cpugz" > /dev/null  # warm the page cache

	out="$WORK/out-$size.json.gz"
	measure "$size" "cat cpu.json" "$cb" "cat \"\$cpu\" > /dev/null"
	measure "$size" "zcat cpu.json.gz" "$cb" "zcat \"\$cpugz\" > /dev/null"
	measure "$size" "json_reformat -m < cpu.json" "$cb" "json_reformat -m < \"\$cpu\" > /dev/null"
	measure "$size" "(json_reformat -m < win.json)" "$cb" "json_reformat -m < \"\$win\" > /dev/null"
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

# ---- the summary table ----
echo
echo "## Summary"
echo
echo "| size (CPU / window MB) | command | wall s | MB/s of CPU trace | peak RSS MB | speed-up vs refmerge |"
echo "|---|---|---:|---:|---:|---:|"
for size in $SIZES; do
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
if [ "$FAILED" = 1 ]; then
	echo
	echo "SOME COMMANDS FAILED OR DIFFERED (see above)"
	exit 1
fi
