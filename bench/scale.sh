#!/bin/bash
# bench/scale.sh -- issue 30's two Scale targets, in one run that stops before its limit:
#   (a) memory: the pair 4x the 1 GB pair (4 GB + 6 GB), merged from .gz, peaks at the 1 GB
#       pair's RSS (both pairs made here, measured in the same run);
#   (b) the 10 GB pipe: a 10 GB CPU trace (about 25 GB of inputs) merged in a streaming pipe
#       `zcat cpu.json.gz | cuptimerge -w win.json.gz - | gzip -1 > out.json.gz`, or how far
#       it got and why.
#
# Usage: bench/scale.sh [--carry DIR] [--cuptimerge PATH] [--tile PATH] [--source SIZE] [--seed N]
#                       [--mem "1G 4G"] [--pipe 10G] [--only mem|pipe] [--direct]
#                       [--parts P] [--limit SECONDS]
#
# Every pair is made from one gen_trace pair of --source SIZE (default 200M: --ops 504000
# --pretty --devices 2, as bench.sh makes it; cached in $BENCH_DIR/inputs) by bench/tile-pair:
# N copies one after another in time as one consistent pair, N the copies that give each
# size of CPU trace (1G: 5, 4G: 20, 10G: 50 of the 200M pair: 9.95 GB).  gen_trace alone (about 24k
# ops/s) would take ~17 minutes for the 10 GB pair; tile-pair writes at memory speed, so the
# gzip -1 that makes the .gz inputs runs as --parts (default nproc) processes at once, each
# compressing its own range of copies (tile-pair --part I/P; gzip members concatenate).
# (a) `cuptimerge -w win.json.gz cpu.json.gz > /dev/null` for each --mem size, and the
#     first size also from the plain files, under GNU time: wall s and peak RSS, and
#     RSS(largest, .gz) / RSS(first, plain), as bench.sh --huge reports it.
# (b) the pipe above on the --pipe pair (--direct: `tile-pair | cuptimerge -w FIFO - | gzip -1`,
#     the tiled text fed straight in, no .gz inputs made), cuptimerge under `timeout` so that
#     it ends, and gzip closes a valid partial file, before the run's limit.  Progress lines
#     every $PROGRESS s (default 30) and at the end: the CPU trace's bytes fed so far (zcat's writes), the output's
#     bytes (gzip's reads), cuptimerge's peak RSS (VmHWM; GNU time's figure when it
#     finished), the disk used in $BENCH_DIR (its spool and temporary files) and the
#     elapsed time.
# --limit SECONDS (default 540): the whole run's limit; each step gets what is left less a
# margin, and a step that cannot fit is skipped with a line that says so.
# --carry DIR: the 16-core GPU machine's folder of binaries (bench/gpu-machine.sh):
#   DIR/cuptimerge, DIR/lib, DIR/time, DIR/tile-pair, DIR/shared/tools/gen_trace.
# Timing is the shell's clock; no figure is asserted.  Exit 1 when a command failed (a
# step stopped by the limit is not a failure), 2 for usage.
set -eu
T0=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
CARRY="" CM="" TILE="" SOURCE=200M SEED=1 MEM="1G 4G" PIPE=10G ONLY="" DIRECT=0 PARTS=$(nproc) LIMIT=540
usage() { sed -n '9,11p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--carry) CARRY=$(cd "$2" && pwd); shift 2 ;;
	--cuptimerge) CM=$2; shift 2 ;;
	--tile) TILE=$2; shift 2 ;;
	--source) SOURCE=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--pipe) PIPE=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--direct) DIRECT=1; shift ;;
	--parts) PARTS=$2; shift 2 ;;
	--limit) LIMIT=$2; shift 2 ;;
	-h|--help) usage 0 ;;
	*) echo "scale.sh: unknown argument: $1" >&2; usage ;;
	esac
done
die() { echo "scale.sh: $*" >&2; exit 2; }
case $ONLY in ''|mem|pipe) ;; *) die "--only mem or pipe: $ONLY" ;; esac
case $LIMIT$PARTS in *[!0-9]*) die "--limit and --parts need numbers" ;; esac
if [ -n "$CARRY" ]; then
	export LD_LIBRARY_PATH="$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	SHARED=$CARRY/shared
	[ -n "$TILE" ] || TILE=$CARRY/tile-pair
	[ -x /usr/bin/time ] || [ ! -x "$CARRY/time" ] || install -m 755 "$CARRY/time" /usr/bin/time
	[ -n "$CM" ] || CM=$CARRY/cuptimerge
fi
[ -n "$CM" ] || CM=$top/src/cuptimerge
[ -n "$TILE" ] || TILE=$top/bench/tile-pair
[ -x "$CM" ] || die "$CM: not executable (build it, or pass --cuptimerge PATH)"
[ -x "$TILE" ] || die "$TILE: not built (make bench/tile-pair)"
if [ -z "${SHARED:-}" ]; then
	if [ -d "$top/shared/tools" ]; then SHARED=$top/shared; else SHARED=$(cd "$top/.." && pwd)/shared; fi
fi
GEN=$SHARED/tools/gen_trace
GT=""
[ -x /usr/bin/time ] && GT=/usr/bin/time
BENCH_DIR=${BENCH_DIR:-/tmp/cuptimerge-bench}
mkdir -p "$BENCH_DIR/inputs"
WORK=$(mktemp -d "$BENCH_DIR/scale.XXXXXX")
export TMPDIR=$WORK
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
FAILED=0

now() { date +%s; }
left() { echo $((T0 + LIMIT - $(now))); }
elapsed() { echo $(($(now) - T0)); }
size_bytes() {
	awk -v s="$1" 'BEGIN { n = s + 0; u = toupper(substr(s, length(s)))
		if (u == "K") n *= 1e3; else if (u == "M") n *= 1e6; else if (u == "G") n *= 1e9
		if (n <= 0) exit 1; printf "%.0f\n", n }' || die "bad size: $1"
}
gb() { awk -v b="${1:-0}" 'BEGIN { printf "%.2f", b / 1e9 }'; }
mb() { awk -v k="${1:-0}" 'BEGIN { printf "%.1f", k / 1024 }'; }  # KB -> MB
used() { df -B1 --output=used "$WORK" | tail -n 1 | tr -d ' '; }
avail() { df -B1 --output=avail "$WORK" | tail -n 1 | tr -d ' '; }
# step NAME NEED_S: is there time left for NAME (NEED_S seconds, a guess)? else say so
step() {
	[ "$(left)" -gt "$2" ] && return 0
	echo "  $1: skipped, $(left) s left of the --limit $LIMIT (it needs about $2 s)"
	return 1
}

echo "# scale.sh: issue 30's Scale targets, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
	"load $(cut -d ' ' -f 1-3 /proc/loadavg)); $(gb "$(avail)") GB free in $BENCH_DIR; limit $LIMIT s"
echo "binary: $CM ($("$CM" --version | head -n 1)); tile-pair: $TILE"

# ---- the source pair: gen_trace, once (bench.sh's layout and cache) ----
ops=$(awk -v b="$(size_bytes "$SOURCE")" 'BEGIN { printf "%.0f", b * 2520000 / 1e9 }')
SRC=$BENCH_DIR/inputs/$SOURCE-seed$SEED-ops$ops-dev2-pretty
if ! [ -s "$SRC/cpu.json" ] || ! [ -s "$SRC/win.json" ]; then
	[ -x "$GEN" ] || die "$GEN: not found (set SHARED=DIR)"
	mkdir -p "$SRC"
	t=$(now)
	timeout "$(left)" "$GEN" --seed "$SEED" --ops "$ops" --pretty --devices 2 --quiet "$SRC/cpu.part" "$SRC/win.part" ||
		{ echo "gen_trace failed or ran out of time"; exit 1; }
	mv "$SRC/win.part" "$SRC/win.json"
	mv "$SRC/cpu.part" "$SRC/cpu.json"
	echo "source: gen_trace --seed $SEED --ops $ops --pretty --devices 2 in $(($(now) - t)) s"
fi
SC=$(stat -c %s "$SRC/cpu.json") SW=$(stat -c %s "$SRC/win.json")
echo "source pair: CPU trace $SC B, window $SW B ($SRC)"
echo "plan: $("$TILE" --plan "$SRC/cpu.json" "$SRC/win.json")"
# copies SIZE: the copies of the source that make a CPU trace of about SIZE
copies() { awk -v b="$(size_bytes "$1")" -v s="$SC" 'BEGIN { n = int(b / s + 0.5); print n < 1 ? 1 : n }'; }

# tile_gz N DIR: N copies of the source as DIR/cpu.json.gz and DIR/win.json.gz, made by
# min(N, PARTS) x 2 tile-pair | gzip -1 pipes at once, each its range of copies
tile_gz() {
	local n=$1 dir=$2 p=$PARTS i pids=() rc=0 t lim
	[ "$p" -le "$n" ] || p=$n
	mkdir -p "$dir"
	t=$(date +%s.%N) lim=$(( $(left) - 5 ))
	[ "$lim" -gt 0 ] || lim=1
	for i in $(seq "$p"); do
		(set -o pipefail; timeout "$lim" "$TILE" -n "$n" --part "$i/$p" --cpu-out - "$SRC/cpu.json" "$SRC/win.json" |
			gzip -1 > "$dir/c.$i.gz") & pids+=($!)
		(set -o pipefail; timeout "$lim" "$TILE" -n "$n" --part "$i/$p" --window-out - "$SRC/cpu.json" "$SRC/win.json" |
			gzip -1 > "$dir/w.$i.gz") & pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=$?; done
	[ "$rc" = 0 ] || { echo "  tile-pair | gzip: exit $rc$([ "$rc" = 124 ] && echo ", out of time")"; return "$rc"; }
	for i in $(seq "$p"); do cat "$dir/c.$i.gz"; done > "$dir/cpu.json.gz"
	for i in $(seq "$p"); do cat "$dir/w.$i.gz"; done > "$dir/win.json.gz"
	rm -f "$dir"/[cw].*.gz
	echo "  $n copies: $(gb $((SC * n))) + $(gb $((SW * n))) GB of text as $(stat -c %s "$dir/cpu.json.gz") +" \
		"$(stat -c %s "$dir/win.json.gz") B of gzip in $(awk -v a="$t" -v b="$(date +%s.%N)" \
		'BEGIN { printf "%.1f", b - a }') s ($p parts)"
}
# measure LABEL CMD...: CMD under GNU time and the time left; wall s and peak RSS
measure() {
	local label=$1 rc=0
	shift
	if [ -n "$GT" ]; then
		timeout "$(left)" "$GT" -f '%e %M' -o "$WORK/gt" "$@" > /dev/null 2> "$WORK/err" || rc=$?
	else
		timeout "$(left)" "$@" > /dev/null 2> "$WORK/err" || rc=$?
	fi
	if [ "$rc" != 0 ]; then
		echo "  $label: FAILED or stopped by the limit (exit $rc): $(head -c 300 "$WORK/err")"
		[ "$rc" = 124 ] || FAILED=1
		return 1
	fi
	read -r W R < "$WORK/gt" || W="?" R=""
	echo "  $label: $W s, peak RSS $(mb "$R") MB"
}

# ---- (a) the memory target ----
if [ "$ONLY" != pipe ]; then
	echo
	echo "## (a) memory: cuptimerge -w win.json.gz cpu.json.gz > /dev/null, pairs tiled from the source"
	first="" R1="" RL=""
	for s in $MEM; do
		n=$(copies "$s")
		step "$s ($n copies)" 30 || break
		need=$(( (SC + SW) * n / 9 ))
		[ "$(avail)" -gt "$need" ] || { echo "  $s: not enough disk ($(gb "$need") GB needed)"; break; }
		tile_gz "$n" "$WORK/m$s" || { [ $? = 124 ] || FAILED=1; break; }
		if [ -z "$first" ]; then
			first=$s
			if step "$s plain" 20 && [ "$(avail)" -gt $(( (SC + SW) * n * 2 )) ]; then
				"$TILE" -n "$n" --cpu-out "$WORK/p.cpu.json" --window-out "$WORK/p.win.json" "$SRC/cpu.json" "$SRC/win.json"
				cat "$WORK/p.cpu.json" "$WORK/p.win.json" > /dev/null
				measure "$s pair ($n copies), plain files" "$CM" -w "$WORK/p.win.json" "$WORK/p.cpu.json" && R1=$R
				rm -f "$WORK/p.cpu.json" "$WORK/p.win.json"
			fi
		fi
		measure "$s pair ($n copies), from .gz" "$CM" -w "$WORK/m$s/win.json.gz" "$WORK/m$s/cpu.json.gz" && RL=$R
		rm -rf "$WORK/m$s"
	done
	[ -n "$R1" ] && [ -n "$RL" ] && echo "  RSS(${s}, .gz) / RSS($first, plain) = $(awk -v a="$RL" -v b="$R1" \
		'BEGIN { printf "%.2f", a / b }') (target: at most 1.10)"
fi

# ---- (b) the 10 GB pipe ----
# pidrun FILE CMD...: CMD with its pid in FILE (the shell execs it: the same process)
pidrun() { sh -c 'echo $$ > "$0"; exec "$@"' "$@"; }
# io PIDFILE FIELD: a process's rchar or wchar (empty when it is gone)
io() { [ -s "$1" ] && sed -n "s/^$2: //p" "/proc/$(cat "$1")/io" 2>/dev/null || true; }
hwm() { [ -s "$1" ] && sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$(cat "$1")/status" 2>/dev/null || true; }
if [ "$ONLY" != mem ] && [ -n "$PIPE" ]; then
	n=$(copies "$PIPE")
	echo
	if [ "$DIRECT" = 1 ]; then
		echo "## (b) $PIPE: tile-pair -n $n | cuptimerge -w FIFO - | gzip -1 > out.json.gz (no .gz inputs)"
	else
		echo "## (b) $PIPE: zcat cpu.json.gz | cuptimerge -w win.json.gz - | gzip -1 > out.json.gz"
	fi
	echo "  $n copies: $(gb $((SC * n))) GB CPU trace + $(gb $((SW * n))) GB window"
	# the .gz inputs (~1/9), the piped CPU trace's spool and the window's records and events
	# in $TMPDIR (the manual: 2.3 GB for the 1 GB pair), the gzip'd output: about 1.5x the text
	[ "$(avail)" -gt $(( (SC + SW) * n * 3 / 2 )) ] ||
		echo "  warning: $(gb "$(avail)") GB free in $BENCH_DIR, about $(gb $(( (SC + SW) * n * 3 / 2 ))) GB wanted"
	d=$WORK/pipe
	mkdir -p "$d"
	ok=1
	if [ "$DIRECT" = 0 ]; then
		# gzip -1 makes about 100 MB/s of a core here; a step that would not end in time is skipped
		step "making the .gz pair" $(( (SC + SW) * n / PARTS / 100000000 + 5 )) && tile_gz "$n" "$d" || ok=0
	fi
	if [ "$ok" = 1 ] && step "the pipe" 30; then
		lim=$(( $(left) - 10 ))
		base=$(used) peakdisk=0 t=$(now) rc=0
		rm -f "$d"/*.pid
		if [ "$DIRECT" = 1 ]; then
			mkfifo "$d/win.fifo"
			feed() { pidrun "$d/feed.pid" "$TILE" -n "$n" --cpu-out - --window-out "$d/win.fifo" "$SRC/cpu.json" "$SRC/win.json"; }
			winarg=$d/win.fifo
		else
			feed() { pidrun "$d/feed.pid" zcat "$d/cpu.json.gz"; }
			winarg=$d/win.json.gz
		fi
		( set -o pipefail
		  feed | timeout "$lim" ${GT:+"$GT" -f '%e %M' -o "$d/gt"} sh -c 'echo $$ > "$0"; exec "$@"' "$d/cm.pid" \
			"$CM" -v -w "$winarg" - 2> "$d/err" | pidrun "$d/gz.pid" gzip -1 > "$d/out.json.gz" ) &
		ppid=$!
		last=0 fed=0 out=0 peak=0
		while kill -0 "$ppid" 2>/dev/null; do
			sleep 1
			v=$(io "$d/feed.pid" wchar); [ -z "$v" ] || fed=$v
			# the feeder gone while the merge runs: it wrote all (a merge that had
			# stopped reading would have ended the pipe first)
			[ -n "$v" ] || ! [ -s "$d/feed.pid" ] || fed="all"
			v=$(io "$d/gz.pid" rchar); [ -z "$v" ] || out=$v
			v=$(hwm "$d/cm.pid"); [ -z "$v" ] || peak=$v
			u=$(( $(used) - base )); [ "$u" -le "$peakdisk" ] || peakdisk=$u
			if [ $(( $(now) - last )) -ge "${PROGRESS:-30}" ]; then
				last=$(now)
				echo "  $(( last - t )) s: CPU trace fed ${fed/#[0-9]*/$(gb "$fed") GB}, output $(gb "$out") GB," \
					"cuptimerge RSS peak $(mb "$peak") MB, disk +$(gb "$peakdisk") GB"
			fi
		done
		wait "$ppid" || rc=$?
		R=""
		[ -s "$d/gt" ] && read -r _ R < "$d/gt"
		[ -n "$R" ] || R=$peak
		# the samples are a second apart: a finished run was fed all of the CPU trace
		[ "$rc" != 0 ] || fed="all"
		echo "  exit $rc after $(( $(now) - t )) s ($([ "$rc" = 0 ] && echo finished || { [ "$rc" = 124 ] &&
			echo "stopped by the limit" || echo FAILED; })): CPU trace fed ${fed/#[0-9]*/$(gb "$fed") GB} of" \
			"$(gb $((SC * n))) GB, output at least $out B (gzip's reads, last sample;" \
			"$(stat -c %s "$d/out.json.gz") B gzip'd), cuptimerge peak RSS $(mb "$R") MB," \
			"disk used at the peak +$(gb "$peakdisk") GB"
		grep -E "^cuptimerge: (merged|time:)|error|warning" "$d/err" | sed 's/^/  /' || true
		[ "$rc" = 0 ] || [ "$rc" = 124 ] || FAILED=1
		[ "$rc" = 0 ] || [ ! -s "$d/err" ] || tail -n 2 "$d/err" | sed 's/^/  stderr: /'
	fi
	rm -rf "$d"
fi
echo
echo "done in $(elapsed) s of the --limit $LIMIT"
exit "$FAILED"
