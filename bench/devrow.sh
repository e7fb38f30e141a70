# bench/devrow.sh -- sourced by bench/dev-*.sh (run on the 16-core machine
# from the repo root): the setup of their runs, one(), a row of the table, and timelines().  Sets out (a
# temporary folder, removed at exit, named after NAME, the script's) and prints the CPUs and the
# 1 GB pair's sizes.  Needs $CM (the binary), $T (GNU time), $CPU and $WIN.
out=${TMPDIR:-/tmp}/$1.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
echo "$(nproc) CPUs; $(ls -l "$CPU" "$WIN" | awk '{print $5, $9}' | tr '\n' ' ')"
# one LABEL VERBOSE OUTPUT ENV...: a merge into $out/OUTPUT under the environment ENV; prints
# wall, user and sys s, peak RSS, the output's size and md5 prefix, and with VERBOSE (-v) the
# transcoder's line, the gzip stream's waits (264c2d0 on), and, where the binary has it, its line by phase (pfphase15: the text before
# the inserted batches, the CPU trace's parts where they were inserted (vphase28), the inserted batches, the text after), a phase a line
one() {
	local label=$1 v=$2 o=$3
	shift 3
	env "$@" "$T" -f "%e s wall %U user %S sys %M KB" -o "$out/time" "$CM" $v -o "$out/$o" -w "$WIN" "$CPU" \
		>"$out/stdout" 2>"$out/err"
	rc=$?
	printf '%-36s rc %d  %s' "$label" "$rc" "$(cat "$out/time")"
	[ -f "$out/$o" ] && printf '  size %s md5 %.8s' "$(stat -c %s "$out/$o")" "$(md5sum <"$out/$o")"
	echo
	[ -n "$v" ] && grep -E "perfetto:|^cuptimerge: gzip: the output" "$out/err" | sed 's/^cuptimerge: /    /' | cut -c1-1100
	[ -n "$v" ] && grep -E "perfetto by phase" "$out/err" |
		sed 's/^cuptimerge: [^ ]*: perfetto by phase (s from the first text): /    by phase (s from the first text):\n      /; s/; \(the CPU trace'\''s parts\|the inserted batches\|the text after\): /\n      \1: /g' |
		cut -c1-1100
	rm -f "$out"/o.* "$out/stdout"
}
# ab_rounds N LABEL ENV: N rounds, rows taking turns, of the JSON, the .pftrace as $CM writes it and
# with ENV (LABEL: the row's name, "the way before"), then the same for gzip: an A/B of a testing aid
# in one binary
ab_rounds() {
	local n=$1 label=$2 env=$3 round
	for round in $(seq 1 "$n"); do
		one "-o out.json ($round)" "" o.json
		one "-o out.pftrace ($round)" "" o.pftrace
		one "  $label ($round)" "" o.pftrace "$env"
		one "-o out.json.gz ($round)" "" o.json.gz
		one "-o out.pftrace.gz ($round)" "" o.pftrace.gz
		one "  $label ($round)" "" o.pftrace.gz "$env"
	done
}
# timelines BINARY OUTPUT: the merge's -v time lines ("time:" and "CPU after:") of BINARY's merge
# into $out/OUTPUT (the output removed after)
timelines() {
	echo "== -v time lines, -o $2, $1"
	"$1" -v -o "$out/$2" -w "$WIN" "$CPU" 2>&1 | grep -E "^cuptimerge: (time|CPU after):" | cut -c1-600
	rm -f "$out/$2"
}
# perfrec OUTPUT PERCENT ROWS: perf record's samples (cpu-clock at 999 Hz, no call graphs; the
# user's alone where the kernel's are forbidden) of a merge into $out/OUTPUT, printed by symbol
# (those over PERCENT %, ROWS at most) and by thread; $out/perf.data kept for more reports.
# Needs $P (perf).  1 when perf could not record.
perfrec() {
	local f=$1 ev=cpu-clock
	echo "== perf record, -o $f"
	"$P" record -q -e $ev -F 999 -o "$out/perf.data" -- "$CM" -o "$out/$f" -w "$WIN" "$CPU" 2>"$out/rec.err" || {
		ev=cpu-clock:u
		"$P" record -q -e $ev -F 999 -o "$out/perf.data" -- "$CM" -o "$out/$f" -w "$WIN" "$CPU" 2>"$out/rec.err" ||
			{ echo "perf record failed:"; head -5 "$out/rec.err"; return 1; }
	}
	rm -f "$out/$f"
	echo "(event $ev)"
	"$P" report -i "$out/perf.data" --no-children --sort symbol -g none --percent-limit "$2" --stdio 2>/dev/null |
		grep -v '^#' | grep -v '^$' | head -"$3"
	echo "-- by thread"
	"$P" report -i "$out/perf.data" --no-children --sort pid -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
}
