#!/bin/bash
# run.sh - GPU checks of the cuptirec collector and thread recorder (not CI).
#
# Usage: tests/gpu/run.sh BINDIR OUTDIR [bench REPS | kineto | torchrun | window_out]
#
# BINDIR holds what was built elsewhere (the device machine has no package
# mirror): cuptirec, cuptimerge, threads_cuda, bench_launch; lib/ with
# libcuptirec.so and libcuptirec_threads.so; deps/ with the shared libraries
# cuptimerge needs (libyajl.so.2) and a fallback libcupti.so.13.  See
# tests/gpu/README.md for how to fill it.  OUTDIR receives figures.jsonl (one
# JSON line per check), log.txt and a few small artefacts of the torch runs.
# Exits non-zero when any check failed.  "bench REPS" runs only the overhead
# benchmark, REPS rounds; "kineto" only the Kineto-parity comparison (9);
# "torchrun" only the 2-rank torchrun job merged by cuptimerge-batch (10),
# which also needs BINDIR/cuptimerge-batch; "window_out" only where the
# window's -o leads (4: a slow FIFO; 4b-4e: /dev/stdout under >>, a FIFO
# whose reader comes late, one that none opens, --fifo-wait).
set -u
MODE=${3:-all}
REPS=${4:-3}
BIN=$(cd "$1" && pwd)
OUTD=$2
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUTD"
W=$(mktemp -d)
FIG=$OUTD/figures.jsonl
LOG=$OUTD/log.txt
: > "$FIG"
: > "$LOG"
fails=0
export CUPTIREC_LIBDIR=$BIN/lib
export PYTHONUNBUFFERED=1
T="timeout 300"    # the collector must never hang a program

log() { echo "== $*" | tee -a "$LOG"; }
fig() { echo "$1" >> "$FIG"; echo "$1" >> "$LOG"; }
check() {   # check NAME CMD...: run a checker, keep its JSON line, count failures
	local name=$1 out rc
	shift
	out=$("$@" 2>>"$LOG"); rc=$?
	fig "{\"check\": \"$name\", \"ok\": $([ $rc = 0 ] && echo true || echo false), \"figures\": ${out:-null}}"
	[ $rc = 0 ] || fails=$((fails + 1))
}
fail() { fig "{\"check\": \"$1\", \"ok\": false, \"why\": \"$2\"}"; fails=$((fails + 1)); }
pass() { fig "{\"check\": \"$1\", \"ok\": true, \"figures\": $2}"; }

# libcupti: the system's, else torch's wheel (nvidia-cuda-cupti), else ours
CUPTI_DIR=
for d in /usr/local/cuda/lib64 /usr/local/cuda/extras/CUPTI/lib64 \
	$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null | tr ' ' '\n' | sed 's|$|/nvidia/cu13/lib|') \
	"$BIN/deps"; do
	if [ -e "$d/libcupti.so.13" ]; then CUPTI_DIR=$d; break; fi
done
export LD_LIBRARY_PATH=$CUPTI_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
MERGE_ENV="env LD_LIBRARY_PATH=$BIN/deps"
log "machine: $(nvidia-smi -L 2>&1 | head -1); libcupti from $CUPTI_DIR"
python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__)' >> "$LOG" 2>&1

win_of() { ls "$1"_"$2".json* 2>/dev/null | head -1; }   # win_of PREFIX PID

# reap PID SECS: wait for a background FIFO reader, killed after SECS: a
# reader whose window never came waits in its open for good, and the run
# must end all the same (pool_exhaustion hung so before in12's revert)
reap() {
	local end=$((SECONDS + $2))
	while kill -0 "$1" 2>/dev/null && [ $SECONDS -lt $end ]; do
		sleep 0.1
	done
	kill "$1" 2>/dev/null && echo "reader $1 still waiting after $2 s: killed" >> "$LOG"
	wait "$1" 2>/dev/null
}

if [ "$MODE" = all ]; then
# 1. launcher, plain window: thread ids, joins, C API, thread map
log "threads_cuda under cuptirec"
$T "$BIN/cuptirec" -o "$W/tc_%p.json" -- "$BIN/threads_cuda" 3 0 > "$W/tc.out" 2> "$W/tc.err"
rc=$?; cat "$W/tc.err" >> "$LOG"
pid=$(awk '/^PROC/ {print $2}' "$W/tc.out")
if [ $rc = 0 ] && [ -n "$pid" ]; then check threads_cuda python3 "$HERE/check_window.py" "$(win_of "$W/tc" "$pid")" "$W/tc.out"
else fail threads_cuda "exit $rc"; fi

# 2. gzip window, and the program's exit status passes through; every
# activity (cuda_sync with its device) and the kernels' queued times
log "threads_cuda under cuptirec --gzip -a all --latency-timestamps, exit status 3"
$T "$BIN/cuptirec" --gzip -a all --latency-timestamps -o "$W/tcz_%p.json.gz" -- "$BIN/threads_cuda" 3 3 > "$W/tcz.out" 2> "$W/tcz.err"
rc=$?; cat "$W/tcz.err" >> "$LOG"
pid=$(awk '/^PROC/ {print $2}' "$W/tcz.out")
if [ $rc = 3 ]; then check threads_cuda_gzip python3 "$HERE/check_window.py" "$W/tcz_$pid.json.gz" "$W/tcz.out" --expect-queued
else fail threads_cuda_gzip "exit $rc, expected 3"; fi

# 3. LD_PRELOAD instead of the launcher (the constructor path)
log "threads_cuda with LD_PRELOAD"
LD_PRELOAD=$BIN/lib/libcuptirec.so CUPTIREC_OUTPUT=$W/tp_%p.json $T "$BIN/threads_cuda" 2 > "$W/tp.out" 2> "$W/tp.err"
rc=$?; cat "$W/tp.err" >> "$LOG"
pid=$(awk '/^PROC/ {print $2}' "$W/tp.out")
if [ $rc = 0 ]; then check threads_cuda_preload python3 "$HERE/check_window.py" "$W/tp_$pid.json" "$W/tp.out"
else fail threads_cuda_preload "exit $rc"; fi

fi

if [ "$MODE" = all ] || [ "$MODE" = window_out ]; then
# 4. an exhausted pool: a slow disk (a FIFO drained at ~800 KB/s) and 2
# buffers of 64K; records are dropped and reported, the window stays valid
# and the program is unharmed
log "pool exhaustion: 2 buffers of 64K, slow output"
mkfifo "$W/slow.json"
python3 -c '
import sys, time
src, dst = open(sys.argv[1], "rb"), open(sys.argv[2], "wb")
while True:
    b = src.read(16384)
    if not b:
        break
    dst.write(b)
    time.sleep(0.02)
' "$W/slow.json" "$W/drop.json" &
rdr=$!
$T "$BIN/cuptirec" --buffers 2 --buffer-size 64K -o "$W/slow.json" -- "$BIN/bench_launch" 100000 > "$W/drop.out" 2> "$W/drop.err"
rc=$?; reap $rdr 60; cat "$W/drop.err" >> "$LOG"
out=$(python3 - "$W/drop.json" <<'EOF'
import json, sys
w = json.load(open(sys.argv[1]))
k = sum(1 for e in w["events"] if e["kind"] == "kernel")
print(json.dumps({"dropped_records": w["dropped_records"], "kernels_kept": k,
                  "pool_misses": w["cuptirec"]["pool_misses"]}))
sys.exit(0 if w["dropped_records"] > 0 else 1)
EOF
)
prc=$?
if [ $rc = 0 ] && [ $prc = 0 ] && grep -q "dropped" "$W/drop.err"; then pass pool_exhaustion "$out"
else fail pool_exhaustion "exit $rc, check $prc: $out"; fi

# 4b. the window on the program's standard output, appended to a log that
# holds a line already: `-o /dev/stdout ... >> log` is the descriptor the
# shell opened with O_APPEND (reopened with O_TRUNC, the log lost its line
# and what the program wrote before the window closed); the window must
# come whole after the line, among the program's own lines, and pass
# check_window.py
log "window to /dev/stdout, appended to a log (>>)"
echo "KEEP a line written before cuptirec" > "$W/so.log"
timeout 120 "$BIN/cuptirec" -o /dev/stdout -- "$BIN/threads_cuda" 3 0 >> "$W/so.log" 2> "$W/so.err"
rc=$?; cat "$W/so.err" >> "$LOG"
out=$(python3 - "$W/so.log" "$W/so_win.json" "$W/so.out" <<'EOF'
import json, re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
first, _, rest = text.partition("\n")
fig = {"log_bytes": len(text), "first_line_kept": first == "KEEP a line written before cuptirec"}
at = rest.find('{"events": [')
win = None
if at >= 0:
    try:
        win, end = json.JSONDecoder().raw_decode(rest, at)
        raw, prog = rest[at:end], rest[:at] + rest[end:]
    except ValueError:
        # threads_cuda flushes its lines while it runs; a window written in
        # pieces (past the sink's 256 KiB) may hold some: take them out
        line = re.compile(r"(?:PROC|THREAD|API|DONE) [^\n]*\n")
        body = rest[at:]
        try:
            raw = line.sub("", body)
            win, end = json.JSONDecoder().raw_decode(raw)
            raw, prog = raw[:end], rest[:at] + "".join(line.findall(body))
            fig["program_lines_inside_window"] = True
        except ValueError as e:
            fig["window_error"] = str(e)[:200]
else:
    fig["window_error"] = "no window in the log"
if win is not None:
    open(sys.argv[2], "w").write(raw + "\n")  # as written, for check_window.py
    open(sys.argv[3], "w").write(prog)
    fig["events"] = len(win["events"])
print(json.dumps(fig))
sys.exit(0 if fig["first_line_kept"] and win is not None else 1)
EOF
)
prc=$?
if [ $rc = 0 ] && [ $prc = 0 ]; then
	fig "{\"check\": \"window_stdout_append_log\", \"ok\": true, \"figures\": $out}"
	check window_stdout_append python3 "$HERE/check_window.py" "$W/so_win.json" "$W/so.out"
else fail window_stdout_append "exit $rc, split $prc: $(echo "${out:-no output}" | tr '"' _)"; fi

# 4c. a FIFO whose reader opens it 2 s after the program starts (one
# started beside it, slower): the window's open waits for it (10 s at most)
log "window to a FIFO whose reader comes 2 s late"
mkfifo "$W/late.fifo"
(sleep 2; exec cat "$W/late.fifo" > "$W/late.json") &
rdr=$!
timeout 120 "$BIN/cuptirec" -o "$W/late.fifo" -- "$BIN/threads_cuda" 3 0 > "$W/late.out" 2> "$W/late.err"
rc=$?; reap $rdr 30; cat "$W/late.err" >> "$LOG"
if [ $rc = 0 ] && [ -s "$W/late.json" ]; then
	check window_fifo_late_reader python3 "$HERE/check_window.py" "$W/late.json" "$W/late.out"
else fail window_fifo_late_reader "exit $rc, $(stat -c %s "$W/late.json" 2>/dev/null || echo no) bytes read"; fi

# 4d. a FIFO that no reader opens: a warning after 10 s and no window; the
# program runs on and exits 0 (the blocking open stopped it for good)
log "window to a FIFO without a reader"
mkfifo "$W/none.fifo"
s0=$SECONDS
timeout 120 "$BIN/cuptirec" -o "$W/none.fifo" -- "$BIN/threads_cuda" 3 0 > "$W/none.out" 2> "$W/none.err"
rc=$?; secs=$((SECONDS - s0)); cat "$W/none.err" >> "$LOG"
if [ $rc = 0 ] && grep -q "without a reader for 10 s" "$W/none.err" && grep -q '^DONE' "$W/none.out"; then
	pass window_fifo_no_reader "{\"seconds\": $secs}"
else fail window_fifo_no_reader "exit $rc after $secs s: $(tr '\n"' ' _' < "$W/none.err" | head -c 300)"; fi

# 4e. --fifo-wait (CUPTIREC_FIFO_WAIT, read by the collector): a FIFO that no
# reader opens, given up after 1 s; a value that is not a number of seconds
# is one warning, and the window is written all the same (rec15; cheap: two
# short runs of threads_cuda, ~1 s of waiting)
log "--fifo-wait 1 on a FIFO without a reader; CUPTIREC_FIFO_WAIT=soon"
mkfifo "$W/none1.fifo"
s0=$SECONDS
timeout 120 "$BIN/cuptirec" --fifo-wait 1 -o "$W/none1.fifo" -- "$BIN/threads_cuda" 3 0 > "$W/none1.out" 2> "$W/none1.err"
rc=$?; secs=$((SECONDS - s0)); cat "$W/none1.err" >> "$LOG"
CUPTIREC_FIFO_WAIT=soon timeout 120 "$BIN/cuptirec" -o "$W/fw_bad.json" -- "$BIN/threads_cuda" 3 0 > "$W/fw_bad.out" 2> "$W/fw_bad.err"
rc2=$?; cat "$W/fw_bad.err" >> "$LOG"
if [ $rc = 0 ] && grep -q "without a reader for 1 s" "$W/none1.err" && grep -q '^DONE' "$W/none1.out" &&
	[ $rc2 = 0 ] && grep -q "CUPTIREC_FIFO_WAIT=soon is not a number of seconds; using 10" "$W/fw_bad.err" &&
	[ -s "$W/fw_bad.json" ]; then
	pass window_fifo_wait_setting "{\"seconds\": $secs}"
else fail window_fifo_wait_setting "exit $rc after $secs s, bad value exit $rc2: $(cat "$W/none1.err" "$W/fw_bad.err" | tr '\n"' ' _' | head -c 300)"; fi
fi

if [ "$MODE" = all ]; then

# 5. --delay / --duration
log "delay 0.2 s, duration 0.2 s"
$T "$BIN/cuptirec" -d 0.2 -t 0.2 -o "$W/dd_%p.json" -- "$BIN/bench_launch" 400000 > "$W/dd.out" 2> "$W/dd.err"
rc=$?; cat "$W/dd.err" >> "$LOG"
out=$(python3 - "$W" <<'EOF'
import glob, json, sys
w = json.load(open(glob.glob(sys.argv[1] + "/dd_*.json")[0]))
ks = [e for e in w["events"] if e["kind"] == "kernel"]
span = (max(e["end_ns"] for e in ks) - min(e["start_ns"] for e in ks)) / 1e9 if ks else 0
print(json.dumps({"kernels": len(ks), "kernel_span_s": round(span, 3)}))
sys.exit(0 if 0 < len(ks) < 402000 and span < 0.3 else 1)
EOF
)
prc=$?
if [ $rc = 0 ] && [ $prc = 0 ]; then pass delay_duration "$out"; else fail delay_duration "exit $rc: $out"; fi

fi

if [ "$MODE" != kineto ] && [ "$MODE" != torchrun ] && [ "$MODE" != window_out ]; then
# 6. overhead: launches/s of an empty kernel, with and without the collector,
# and with parts of it turned off to see where the cost is; and of a 20 us
# kernel (40000 cycles), where the GPU rather than the launch path sets the pace
log "overhead benchmark"
bench() {   # bench NAME [ENV...] -- [cuptirec options]: one run, one line
	local name=$1; shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	case $name in
	plain) r=$($T "$BIN/bench_launch" 200000) ;;
	plain_20us) r=$($T "$BIN/bench_launch" 25000 40000) ;;
	*_20us) r=$(env "${envs[@]}" $T "$BIN/cuptirec" -q "$@" -o "$W/b_%p.json" -- "$BIN/bench_launch" 25000 40000 2>>"$LOG") ;;
	*) r=$(env "${envs[@]}" $T "$BIN/cuptirec" -q "$@" -o "$W/b_%p.json" -- "$BIN/bench_launch" 200000 2>>"$LOG") ;;
	esac
	echo "$name $r" >> "$W/bench.txt"
	rm -f "$W"/b_*.json*
}
for rep in $(seq "$REPS"); do
	bench plain --
	bench default --
	bench gzip -- -z
	bench kernel_runtime -- -a kernel,runtime
	bench kernel_only -- -a kernel
	bench runtime_only -- -a runtime
	bench overhead_only -- -a overhead
	bench default_nocallbacks CUPTIREC_THREAD_CALLBACKS=0 --
	bench kernel_runtime_nocallbacks CUPTIREC_THREAD_CALLBACKS=0 -- -a kernel,runtime
	bench overhead_only_nocallbacks CUPTIREC_THREAD_CALLBACKS=0 -- -a overhead
	bench default_perthreadbuf CUPTIREC_PER_THREAD_BUFFERS=1 --
	bench default_latency -- --latency-timestamps
	bench plain_20us --
	bench default_20us --
done
cat "$W/bench.txt" >> "$LOG"
out=$(python3 - "$W/bench.txt" <<'EOF'
import json, statistics, sys
r = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3:
        r.setdefault(f[0], []).append(float(f[2]))
med = {k: statistics.median(v) for k, v in r.items()}
res = {k: round(v) for k, v in med.items()}
res["spread_pct"] = {k: round(100 * (max(v) - min(v)) / med[k], 1) for k, v in r.items()}
res["reps"] = max(len(v) for v in r.values())
for k in med:
    base = "plain_20us" if k.endswith("_20us") else "plain"
    if k != base:
        res["overhead_pct_" + k] = round(100 * (1 - med[k] / med[base]), 1)
print(json.dumps(res))
EOF
)
pass overhead "$out"
fi

if [ "$MODE" = all ]; then
# 7. torch: workers under torch.profiler (CPU) + cuptirec, merged by cuptimerge
log "torch workload under cuptirec, merged with cuptimerge"
$T "$BIN/cuptirec" -o "$W/tw_%p.json" -- python3 "$HERE/torch_workers.py" "$W/cpu.json" "$W/info.json" cpu > "$W/tw.out" 2> "$W/tw.err"
rc=$?; cat "$W/tw.out" "$W/tw.err" >> "$LOG"
if [ $rc = 0 ]; then
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$W/info.json")
	win=$(win_of "$W/tw" "$pid")
	kineto=$(grep -ci "cupti" "$W/tw.err")
	fig "{\"check\": \"torch_kineto_log\", \"ok\": true, \"figures\": {\"stderr_lines_naming_cupti\": $kineto}}"
	if $MERGE_ENV "$BIN/cuptimerge" -o "$W/merged.json" -w "$win" "$W/cpu.json" 2>>"$LOG"; then
		check torch_merge python3 "$HERE/check_merged.py" "$W/merged.json" "$W/info.json" "$W/cpu.json"
	else fail torch_merge "cuptimerge failed"; fi
	# the same merge as Perfetto's protobuf (issue 25), for the trace
	# processor on the development machine: tests/pftrace_check.py
	# torch_merged.json.gz torch_merged.pftrace (see tests/gpu/README.md)
	if $MERGE_ENV "$BIN/cuptimerge" -o "$OUTD/torch_merged.pftrace" -w "$win" "$W/cpu.json" 2>>"$LOG"; then
		pass torch_merge_pftrace "{\"bytes\": $(stat -c %s "$OUTD/torch_merged.pftrace"), \"json_bytes\": $(stat -c %s "$W/merged.json")}"
		gzip -c "$W/merged.json" > "$OUTD/torch_merged.json.gz"
	else fail torch_merge_pftrace "cuptimerge -o .pftrace failed"; fi
	gzip -c "$win" > "$OUTD/torch_window.json.gz"
	gzip -c "$W/cpu.json" > "$OUTD/torch_cpu.json.gz"
	cp "$W/info.json" "$OUTD/torch_info.json"
else fail torch_merge "workload exit $rc"; fi

# 8. torch with torch.profiler CPU+CUDA under the thread recorder (issue 4)
log "torch workload (CPU+CUDA profiler) under cuptirec --threads-only"
$T "$BIN/cuptirec" -T -o "$W/thr_%p.json" -- python3 "$HERE/torch_workers.py" "$W/full.json" "$W/info2.json" cpu,cuda > "$W/thr.out" 2> "$W/thr.err"
rc=$?; cat "$W/thr.out" "$W/thr.err" >> "$LOG"
if [ $rc = 0 ]; then
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$W/info2.json")
	check torch_threadmap python3 "$HERE/check_threadmap.py" "$W/thr_$pid.json" "$W/info2.json"
	cp "$W/thr_$pid.json" "$OUTD/torch_threads_map.json"
	cp "$W/info2.json" "$OUTD/torch_info2.json"
	gzip -c "$W/full.json" > "$OUTD/torch_full.json.gz"
	if $MERGE_ENV "$BIN/cuptimerge" --help 2>&1 | grep -q -- '--thread-map\| -t'; then
		if $MERGE_ENV "$BIN/cuptimerge" -t "$W/thr_$pid.json" -o "$W/repaired.json" "$W/full.json" 2>>"$LOG"; then
			check torch_repair python3 "$HERE/check_merged.py" "$W/repaired.json" "$W/info2.json" --original "$W/full.json"
		else fail torch_repair "cuptimerge -t failed"; fi
	else
		log "cuptimerge has no -t yet: repair not run"
	fi
else fail torch_threadmap "workload exit $rc"; fi

fi

if [ "$MODE" = all ] || [ "$MODE" = kineto ]; then
# 9. Kineto parity (issue 10): one workload run twice, under stock
# torch.profiler(CPU, CUDA) and under torch.profiler(CPU) + cuptirec merged by
# cuptimerge; the merged trace must carry what stock Kineto writes (and,
# issue 26, its gpu_user_annotation spans and process/thread metadata)
log "kineto parity: stock torch.profiler(CPU, CUDA) against cuptirec + cuptimerge"
$T python3 "$HERE/kineto_workload.py" "$W/kstock.json" "$W/kstock_info.json" --profile full > "$W/ks.out" 2>&1
rc=$?; cat "$W/ks.out" >> "$LOG"
$T "$BIN/cuptirec" -a all -o "$W/kw_%p.json" -- python3 "$HERE/kineto_workload.py" "$W/kcpu.json" "$W/kcpu_info.json" --profile cpu > "$W/kc.out" 2>&1
rc2=$?; cat "$W/kc.out" >> "$LOG"
if [ $rc = 0 ] && [ $rc2 = 0 ]; then
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$W/kcpu_info.json")
	win=$(win_of "$W/kw" "$pid")
	if $MERGE_ENV "$BIN/cuptimerge" -o "$W/kmerged.json" -w "$win" "$W/kcpu.json" 2>>"$LOG"; then
		check kineto_parity python3 "$HERE/compare_kineto.py" "$W/kstock.json" "$W/kmerged.json" \
			--stock-info "$W/kstock_info.json" --merged-info "$W/kcpu_info.json"
	else fail kineto_parity "cuptimerge failed"; fi
	# issue 24: the same window cut by the merge to the CPU trace's span (--clip),
	# compared whole, without the step filter: the unprofiled warm-up must be gone
	if $MERGE_ENV "$BIN/cuptimerge" --clip -o "$W/kclip.json" -w "$win" "$W/kcpu.json" 2>>"$LOG"; then
		check kineto_clip python3 "$HERE/compare_kineto.py" "$W/kstock.json" "$W/kclip.json" --clipped \
			--cpu-trace "$W/kcpu.json" --stock-info "$W/kstock_info.json" --merged-info "$W/kcpu_info.json"
		gzip -c "$W/kclip.json" > "$OUTD/kclip.json.gz"
	else fail kineto_clip "cuptimerge --clip failed"; fi
	# the comparison itself, on this stock trace: passes a correct copy, fails doctored ones
	check kineto_compare_selftest python3 "$HERE/selftest_compare_kineto.py" "$W/kstock.json" "$W/kstock_info.json"
	for f in kstock.json kcpu.json kmerged.json; do gzip -c "$W/$f" > "$OUTD/$f.gz"; done
	gzip -c "$win" > "$OUTD/kwindow.json.gz"
	cp "$W/kstock_info.json" "$W/kcpu_info.json" "$OUTD/"
else fail kineto_parity "workload exit $rc (stock), $rc2 (cuptirec)"; fi
fi

if [ "$MODE" = all ] || [ "$MODE" = torchrun ]; then
# 10. a cluster user's job (issue 28): 2 ranks under torchrun, the whole
# launcher under cuptirec -o windows/cuptirec_%h_%p.json.gz (the agent too:
# a window without GPU work), traces exported as rank{R}_{PID}.pt.trace.json
# (not tensorboard_trace_handler's names); one `cuptimerge-batch traces
# windows` must merge both ranks, exit 0, and put every runtime event of each
# on its native tid (check_merged.py per rank)
log "2-rank torchrun under cuptirec, merged by one cuptimerge-batch traces windows"
R=$W/torchrun
mkdir -p "$R/traces" "$R/windows" "$R/info"
(cd "$R" && $T "$BIN/cuptirec" -o 'windows/cuptirec_%h_%p.json.gz' -- \
	python3 -m torch.distributed.run --standalone --nproc-per-node 2 "$HERE/torchrun_rank.py" traces info) \
	> "$R/run.out" 2>&1
rc=$?; cat "$R/run.out" >> "$LOG"
ls -l "$R/traces" "$R/windows" >> "$LOG" 2>&1
if [ $rc = 0 ]; then
	(cd "$R" && $MERGE_ENV "$BIN/cuptimerge-batch" --no-progress traces windows) > "$R/batch.out" 2> "$R/batch.err"
	brc=$?; cat "$R/batch.out" "$R/batch.err" >> "$LOG"
	cp "$R/batch.err" "$OUTD/torchrun_batch.err"
	cp "$R/traces/merged/cuptimerge-batch.tsv" "$OUTD/torchrun_joblog.tsv" 2>/dev/null
	if [ $brc = 0 ] && grep -q '^cuptimerge-batch: 2 merged, 0 skipped, 0 failed' "$R/batch.err"; then
		pass torchrun_batch "{\"summary\": \"$(tail -n 1 "$R/batch.err" | sed 's/"/\\"/g')\"}"
	else
		fail torchrun_batch "cuptimerge-batch exit $brc: $(tr '\n"' ' _' < "$R/batch.err")"
	fi
	for r in 0 1; do
		t=$(ls "$R/traces"/rank${r}_*.pt.trace.json 2>/dev/null | head -1)
		m=$R/traces/merged/$(basename "${t%.pt.trace.json}").merged.json.gz
		if [ -n "$t" ] && [ -s "$m" ]; then
			check torchrun_rank$r python3 "$HERE/check_merged.py" "$m" "$R/info/info_rank$r.json" "$t"
			cp "$m" "$OUTD/torchrun_rank$r.merged.json.gz"
		else
			fail torchrun_rank$r "no merged output for rank $r (trace ${t:-none})"
		fi
	done
else fail torchrun_batch "torchrun exit $rc"; fi
fi

rm -rf "$W"
log "failed checks: $fails"
[ $fails = 0 ]
